"""Every read a real audit sends gets the same answer from the engine and from mongomock.

The heuristic planner audits each shared bench collection, the demo collections and the sweep's
generated collections (with their planted defects) on the new engine, and every read it sent
(``count_many``'s ``$facet`` batches, the statistics pipelines, ``count_documents``, ``find``)
is sent again to both engines over the same documents (the first ``SUBSET`` of each collection, so
mongomock answers in seconds) and must get the same answer: counts equal, statistics equal (floats
to 1e-9), the same example documents. Contracts' shapes are counted filters like these.
"""

from __future__ import annotations

import importlib.util
import json
import math
import random
import sys
from pathlib import Path
from typing import Any

import mongomock
import pytest
from bson import json_util

from argus.agent.engine import MemoryCollection
from argus.agent.loop import run_audit
from argus.agent.options import AuditOptions
from argus.agent.planners.heuristic import HeuristicPlanner
from argus.agent.tools.target import AuditTarget
from argus.daemon.files import load_file

ROOT = Path(__file__).resolve().parents[3]
BENCH = ROOT.parent / "shared" / "bench"
SUBSET = 600


class _Recording:
    """The engine, recording each read (name, arguments) before answering it."""

    def __init__(self, inner: MemoryCollection) -> None:
        self._inner = inner
        self.reads: list[tuple[str, Any]] = []
        self.name, self.database, self.in_process = inner.name, inner.database, True

    def count_documents(self, query: dict[str, Any], **kwargs: Any) -> int:
        self.reads.append(("count", query))
        return self._inner.count_documents(query, **kwargs)

    def aggregate(self, pipeline: list[dict[str, Any]], **kwargs: Any) -> list[Any]:
        self.reads.append(("aggregate", pipeline))
        return self._inner.aggregate(pipeline, **kwargs)

    def find(self, query: dict[str, Any], projection: Any = None) -> Any:
        self.reads.append(("find", (query, projection)))
        return self._inner.find(query, projection)

    def estimated_document_count(self, **kwargs: Any) -> int:
        return self._inner.estimated_document_count(**kwargs)

    def list_indexes(self) -> Any:
        return self._inner.list_indexes()

    def draw_sample(self, size: int, seed: int) -> list[Any]:
        return self._inner.draw_sample(size, seed)


def _sweep_collections() -> list[tuple[str, list[dict[str, Any]]]]:
    spec = importlib.util.spec_from_file_location("argus_bench_sweep", ROOT / "bench" / "sweep.py")
    assert spec is not None and spec.loader is not None
    saved = list(sys.path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = saved
    out = []
    for i, defect in enumerate(module.DEFECTS.values()):
        docs, _ = module._plant(defect, 0.05, 400, seed=i)
        out.append((f"sweep-{defect.domain}-{defect.kind}", docs))
    return out


def _sources(tmp: Path) -> list[tuple[str, MemoryCollection]]:
    files = sorted(BENCH.glob("*.jsonl")) + sorted((ROOT / "deploy" / "demo").glob("*.jsonl"))
    out = [(f"{p.parent.name}/{p.stem}", load_file(p)) for p in files]
    for name, docs in _sweep_collections():
        path = tmp / f"{name}.jsonl"
        path.write_text("".join(json_util.dumps(d) + "\n" for d in docs), encoding="utf-8")
        out.append((name, load_file(path)))
    return out


def _normal(value: Any) -> Any:
    """A comparable form of a read's answer: floats rounded, facet lists and group rows sorted."""
    if isinstance(value, float):
        return "nan" if math.isnan(value) else round(value, 9)
    if isinstance(value, dict):
        return {k: _normal(v) for k, v in value.items()}
    if isinstance(value, list):
        # mongomock answers a $count or a $group of nothing with a row of zeros; MongoDB (and the engine)
        # return no document, which count_many and get_stats read as zero.
        if len(value) == 1 and isinstance(value[0], dict) and value[0].get("_id", None) is None \
                and all(v in (0, None) for k, v in value[0].items() if k != "_id"):
            return []
        items = [_normal(v) for v in value]
        return sorted(items, key=lambda v: json.dumps(v, sort_keys=True, default=str))
    return value


def _answer(coll: Any, kind: str, args: Any) -> Any:
    if kind == "count":
        return coll.count_documents(args)
    if kind == "aggregate":
        return _normal(list(coll.aggregate(args)))
    query, projection = args
    return _normal(list(coll.find(query, projection)))


@pytest.mark.slow
def test_every_read_of_real_audits_is_answered_as_mongomock_answers(tmp_path: Path) -> None:
    if not BENCH.is_dir():
        pytest.skip(f"the shared bench is not at {BENCH}")
    compared = 0
    for name, engine in _sources(tmp_path):
        recording = _Recording(engine)
        report = run_audit(AuditTarget(recording, in_memory=True), HeuristicPlanner(), options=AuditOptions())
        assert report.outcome == "succeeded", (name, report.error, report.notes)
        documents = [d for batch in engine._store.batches() for d in batch]
        subset = random.Random(name).sample(documents, min(SUBSET, len(documents)))
        # mongomock gives a document without _id one on insert, as a server does: both hold the same ids,
        # since an evidence pass reads the _ids of failing documents.
        subset = [d if "_id" in d else {"_id": f"s{i}", **d} for i, d in enumerate(subset)]
        mine = MemoryCollection.of(subset, name=name)
        reference = mongomock.MongoClient()["db"][name.replace("/", "_")]
        if subset:
            reference.insert_many([dict(d) for d in subset])
        for kind, args in recording.reads:
            assert _answer(mine, kind, args) == _answer(reference, kind, args), (name, kind, args)
            facet = args[-1].get("$facet", {}) if kind == "aggregate" else {}
            compared += max(len(facet), 1)
    assert compared > 1000  # reads and $facet branches: counts, examples, statistics
