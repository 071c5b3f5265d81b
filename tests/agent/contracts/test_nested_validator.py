"""Nested rules exported as $jsonSchema (minItems, maxItems, uniqueItems, items, properties,
additionalProperties, required): the schema, evaluated document by document as MongoDB evaluates
it, fails exactly the documents the audit counts, rule by rule and all together."""

from __future__ import annotations

import dataclasses
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import bson
import pytest
from bson import json_util

from argus.agent.contracts.validator import JSON_SCHEMA_KEYWORDS, validator_for
from argus.agent.ejson import encode
from argus.agent.engine.values import group_key
from argus.agent.tools.profiling import bson_type
from argus.config.contracts import load_contract
from tests.agent.contracts.nested_orders import CONTRACT, PLANTED, orders
from tests.conftest import memory_collection

NUMBER = {"int", "long", "double", "decimal"}


def _fails(schema: dict[str, Any], value: Any) -> bool:
    """$jsonSchema's answer for the keywords the export uses (MongoDB: each keyword judges only values of
    its type; required, properties and additionalProperties objects, the *Items keywords arrays)."""
    assert set(schema) <= JSON_SCHEMA_KEYWORDS, schema
    kind = bson_type(value)
    if "bsonType" in schema:
        allowed = {schema["bsonType"]} if isinstance(schema["bsonType"], str) else set(schema["bsonType"])
        if kind not in allowed | (NUMBER if "number" in allowed else set()):
            return True
    if "not" in schema and not _fails(schema["not"], value):
        return True
    if "enum" in schema and value not in schema["enum"]:
        return True
    if kind in NUMBER and (("minimum" in schema and value < schema["minimum"])
                           or ("maximum" in schema and value > schema["maximum"])):
        return True
    if kind == "string" and (("pattern" in schema and not re.search(schema["pattern"], value))
                             or ("maxLength" in schema and len(value) > schema["maxLength"])):
        return True
    if any(_fails(part, value) for part in schema.get("allOf", [])):
        return True
    if kind == "object":
        if any(name not in value for name in schema.get("required", [])):
            return True
        if schema.get("additionalProperties") is False and set(value) - set(schema.get("properties", {})):
            return True
        return any(name in value and _fails(sub, value[name]) for name, sub in schema.get("properties", {}).items())
    if kind == "array":
        if len(value) < schema.get("minItems", 0) or len(value) > schema.get("maxItems", len(value)):
            return True
        if schema.get("uniqueItems") and len({group_key(v) for v in value}) < len(value):
            return True
        return "items" in schema and any(_fails(schema["items"], item) for item in value)
    return False


@pytest.fixture(scope="module")
def contract(tmp_path_factory: pytest.TempPathFactory) -> Any:
    path = tmp_path_factory.mktemp("v") / "nested.yaml"
    path.write_text(CONTRACT)
    return load_contract(path, shown_as="nested.yaml")


def _documents() -> list[dict[str, Any]]:
    """As the server holds them: BSON round-tripped (ints stay ints, floats doubles)."""
    return [bson.decode(bson.encode(d)) for d in orders()]


def test_every_nested_rule_is_exported_with_the_keywords_of_its_shape(contract: Any) -> None:
    exported = validator_for(contract)
    assert exported.left_out == []
    schema = exported.schema["properties"]
    assert (schema["items"]["minItems"], schema["items"]["maxItems"]) == (1, 5)
    assert schema["items"]["items"]["required"] == ["sku", "qty"]
    assert schema["tags"]["uniqueItems"] is True and schema["tags"]["items"]["maxLength"] == 8
    assert schema["shipping"]["additionalProperties"] is False
    assert set(schema["shipping"]["properties"]) == {"street", "city", "zip"}
    command = exported.command("orders")
    assert bson.decode(bson.encode(command)) == command


@pytest.mark.parametrize(("shown", "rule"), sorted(PLANTED))
def test_each_rules_schema_fails_the_documents_the_audit_counts(contract: Any, shown: str, rule: str) -> None:
    (one,) = [r for r in contract.rules if r.id.endswith(f" {shown} {rule}")]
    schema = validator_for(dataclasses.replace(contract, rules=(one,))).schema
    assert sum(_fails(schema, d) for d in _documents()) == PLANTED[(shown, rule)]


def test_the_whole_schema_fails_the_documents_breaking_any_rule(contract: Any) -> None:
    from argus.agent.contracts.compile import rule_filters
    from argus.agent.ejson import decode

    docs = _documents()
    schema = validator_for(contract).schema
    collection = memory_collection(docs, "orders")
    now = datetime(2026, 3, 1, tzinfo=UTC)
    broken = {"$or": [decode(encode(f)) for r in contract.checks for f in rule_filters(r, now)]}
    failing = sum(_fails(schema, d) for d in docs)
    assert failing == collection.count_documents(broken) > max(PLANTED.values())
    assert sum(_fails(schema, d) for d in orders(planted=False)) == 0


def test_the_validator_command_counts_the_same_documents(tmp_path: Path, contract: Any) -> None:
    from typer.testing import CliRunner

    from argus.daemon.cli import app

    docs = _documents()
    (tmp_path / "orders.jsonl").write_text("\n".join(json_util.dumps(d) for d in docs))
    (tmp_path / "nested.yaml").write_text(CONTRACT)
    result = CliRunner().invoke(app, ["contract", "validator", "--file", str(tmp_path / "orders.jsonl"),
                                      "--contract", str(tmp_path / "nested.yaml")])
    assert result.exit_code == 0, result.output
    schema = json_util.loads(result.stdout)["validator"]["$jsonSchema"]
    failing = sum(_fails(schema, d) for d in docs)
    assert f"{failing} of 1,200 documents in files.orders would fail this validator" in result.stderr
