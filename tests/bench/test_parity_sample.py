"""bench/parity.py compares how two engines answer an audit's reads, so both audits draw one sample:
with mongomock's own (unseeded) ``$sample``, a finding that rests on which documents were drawn made
the two differ (products' spec.attr_030 once did) and the run exit 2 for no reading difference.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import mongomock

from argus.agent.engine import MemoryCollection
from argus.agent.tools.target import AuditTarget

ROOT = Path(__file__).resolve().parents[2]


def _parity() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_parity", ROOT / "bench" / "parity.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_mongomock_audit_samples_the_documents_the_engine_samples() -> None:
    docs = [{"_id": i, "v": i % 7} for i in range(3000)]
    engine = MemoryCollection.of(docs, name="items")
    reference = mongomock.MongoClient()["files"]["items"]
    reference.insert_many([dict(d) for d in docs])
    wrapped = _parity().same_sample(reference, engine)
    drawn = [d["_id"] for d in AuditTarget(engine, connection_name="file").sample(200)]
    assert len(drawn) == 200
    assert [d["_id"] for d in AuditTarget(wrapped, connection_name="file", in_memory=True).sample(200)] == drawn
    # every other read is mongomock's own
    assert wrapped.count_documents({"v": 3}) == reference.count_documents({"v": 3}) == 429
