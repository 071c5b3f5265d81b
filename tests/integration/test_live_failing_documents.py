"""The failing documents on a real server: read by the evidence pass's own ``$facet`` branch (the
same passes and queries with and without them), the very ``_id``s the defects were planted in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from bson import ObjectId, json_util

from tests.integration.audits import audit, load_jsonl

pytestmark = pytest.mark.live


def test_the_failing_ids_come_from_the_evidence_pass_on_a_live_server(tmp_path: Path, live_db: Any, live_uri: str,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    docs: list[dict[str, Any]] = [{"_id": ObjectId(), "sku": f"SK-{i:05d}", "state": ("open", "closed")[i % 2],
                                   "weight": 1.5 + i % 9} for i in range(900)]
    for d in docs[40:46]:
        d["state"] = "lost"
    for d in docs[500:511]:
        d["weight"] = "heavy"
    path = tmp_path / "parcels.jsonl"
    path.write_text("".join(json_util.dumps(d) + "\n" for d in docs))
    load_jsonl(live_db["parcels"], path)
    contract = tmp_path / "parcels.yaml"
    contract.write_text("fields:\n  state: {in: [open, closed]}\n")
    args = ("--uri", live_uri, "--database", live_db.name, "--collection", "parcels", "--contract", str(contract),
            "--privacy", "full")
    _, report = audit(*args)
    failing = {f["field"]: {d["id"]["$oid"] for d in f["failing"]["documents"]} for f in report["findings"]}
    assert failing["state"] == {str(d["_id"]) for d in docs[40:46]}       # declared
    assert failing["weight"] == {str(d["_id"]) for d in docs[500:511]}    # inferred
    monkeypatch.setenv("ARGUS_FAILING_DOCUMENTS", "0")
    _, without = audit(*args)
    cost = ("passes", "queries_sent")
    assert [report["database_cost"][k] for k in cost] == [without["database_cost"][k] for k in cost]
