"""The validator export: a collMod command MongoDB accepts, whose $jsonSchema fails exactly the
documents the audit finds breaking the exported rules."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import bson
from typer.testing import CliRunner

from argus.agent.contracts.validator import JSON_SCHEMA_KEYWORDS, validator_for
from argus.agent.tools.profiling import bson_type
from argus.config.contracts import load_contract
from argus.daemon.cli import app
from tests.conftest import memory_collection

NUMBER = {"int", "long", "double", "decimal"}
CONTRACT = """\
fields:
  order_id: {required: true, type: string, pattern: '^ORD-[0-9]+$'}
  status: {in: [paid, shipped]}
  total: {type: number, min: 0, max: 10000}
  customer.email: {required: true, format: email, max_length: 40}
  items.qty: {type: int, min: 1}
  customer_id: {unique: true}
"""


def _docs() -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for i in range(300):
        docs.append({"order_id": f"ORD-{i}", "status": ["paid", "shipped"][i % 2], "total": float(i),
                     "customer": {"email": f"u{i}@mail.org"}, "items": [{"qty": 1 + i % 3}, {"qty": 2}],
                     "customer_id": f"C{i}"})
    docs[0]["order_id"] = 17                       # type (and pattern: not a string, so not counted there)
    docs[1]["order_id"] = "X-1"                    # pattern
    del docs[2]["order_id"]                        # required
    docs[3]["status"] = "Paid"                     # in
    docs[4]["status"] = None                       # a null is not outside the set (required decides nulls)
    docs[5]["total"] = -1.0                        # min
    docs[6]["total"] = "12"                        # type; not a number, so not below min
    del docs[7]["customer"]                        # customer.email required: the enclosing object is missing
    docs[8]["customer"]["email"] = "n/a"           # format
    docs[9]["customer"]["email"] = "a" * 40 + "@x.org"  # max_length
    docs[10]["items"][1]["qty"] = 0                # min in one element of an array of objects
    docs[11]["items"][0]["qty"] = 2.5              # type in one element
    docs[12]["total"] = 20000                      # max
    docs[13]["customer_id"] = "C14"                # unique: not in a validator
    return docs


def _fails(schema: dict[str, Any], value: Any) -> bool:
    """MongoDB's $jsonSchema semantics for the keywords the export uses, evaluated in Python."""
    for key in schema:
        assert key in JSON_SCHEMA_KEYWORDS, key
    kind = bson_type(value)
    types = schema.get("bsonType")
    if types is not None:
        allowed = {types} if isinstance(types, str) else set(types)
        if "number" in allowed:
            allowed |= NUMBER
        if kind not in allowed:
            return True
    if "not" in schema and not _fails(schema["not"], value):
        return True
    if "enum" in schema and value not in schema["enum"]:
        return True
    if kind in NUMBER:
        if "minimum" in schema and value < schema["minimum"]:
            return True
        if "maximum" in schema and value > schema["maximum"]:
            return True
    if kind == "string":
        if "pattern" in schema and not re.search(schema["pattern"], value):
            return True
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            return True
    if any(_fails(part, value) for part in schema.get("allOf", [])):
        return True
    if kind == "object":
        if any(name not in value for name in schema.get("required", [])):
            return True
        for name, sub in schema.get("properties", {}).items():
            if name in value and _fails(sub, value[name]):
                return True
    if kind == "array" and "items" in schema:
        return any(_fails(schema["items"], item) for item in value)
    return False


def test_the_collmod_command_encodes_and_uses_only_keywords_mongodb_accepts(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(CONTRACT)
    exported = validator_for(load_contract(path), arrays=frozenset({"items"}))
    command = exported.command("orders")
    assert bson.decode(bson.encode(command)) == command
    assert command["validationAction"] == "warn"
    assert [r.kind for r in exported.exported] == ["required", "type", "pattern", "in", "type", "min", "max",
                                                   "required", "format", "max_length", "type", "min"]
    assert exported.left_out == [f"{path}:7 customer_id unique: uniqueness is an index, not a validator: "
                                 "createIndex({\"customer_id\": 1}, {unique: true}) (it fails while duplicates exist)"]
    _fails(command["validator"]["$jsonSchema"], {})  # walks every keyword


def test_would_fail_counts_exactly_the_documents_the_schema_fails_and_the_audit_finds(tmp_path: Path) -> None:
    from bson import json_util

    docs = _docs()
    (tmp_path / "orders.jsonl").write_text("\n".join(json_util.dumps(d) for d in docs))
    (tmp_path / "c.yaml").write_text(CONTRACT)
    runner = CliRunner()
    result = runner.invoke(app, ["contract", "validator", "--file", str(tmp_path / "orders.jsonl"), "--contract",
                                 str(tmp_path / "c.yaml")])
    assert result.exit_code == 0, result.output
    command = json_util.loads(result.stdout)
    schema = command["validator"]["$jsonSchema"]
    failing = sum(_fails(schema, json_util.loads(json_util.dumps(d))) for d in docs)
    assert failing == 12  # every planted document but the null status and the shared customer id
    assert f"{failing} of 300 documents in files.orders would fail this validator" in result.stderr

    audit = runner.invoke(app, ["audit", "--file", str(tmp_path / "orders.jsonl"), "--contract",
                                str(tmp_path / "c.yaml"), "--format", "json", "--privacy", "full", "--no-store"])
    report = json_util.loads(audit.stdout)

    coll: Any = memory_collection(docs, "orders", database="t")
    evidence = [f["evidence_query"] for f in report["findings"] if f["rule"] and "unique" not in f["rule"]]
    assert coll.count_documents({"$or": evidence}) == failing
