"""A NUL character (U+0000) in a report is kept as U+FFFD: PostgreSQL refuses NUL in text and jsonb
columns, and a report holding one was never stored (a model's answer {"sku": {"a\\u0000b": 1}} is
echoed in the trace's critique; a file's key may hold one). The daemon lost the run."""

from __future__ import annotations

from typing import Any

from argus.agent.findings import Finding
from argus.daemon.record import record_report
from tests.daemon.store.reports import finding, report


def test_a_report_holding_nul_characters_is_stored_with_them_replaced(store: Any) -> None:
    odd = finding("a\x00b").model_copy(update={"description": "bad\x00desc", "evidence_query": {"a\x00b": "\x00"},
                                               "sample_values": ["v\x00"]})
    saved = report([odd], outcome="failed", dismissed=[(finding("qty"), "refused: key 'a\x00b' holds a NUL character")])
    saved = saved.model_copy(update={"error": "the model sent {'a\x00b': 1}"})
    record_report(store, saved)
    back = store.get_report(saved.run_id)
    [kept] = back.findings
    assert isinstance(kept, Finding)
    assert (kept.field, kept.description, kept.evidence_query, kept.sample_values) == (
        "a\ufffdb", "bad\ufffddesc", {"a\ufffdb": "\ufffd"}, ["v\ufffd"])
    assert back.error == "the model sent {'a\ufffdb': 1}"
    assert back.dismissed_findings[0].critique == "refused: key 'a\ufffdb' holds a NUL character"
    assert [r.id for r in store.list_runs()] == [saved.run_id]
