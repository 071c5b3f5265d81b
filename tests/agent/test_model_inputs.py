"""Every value a planner (a language model) puts in an action is judged before BSON encoding: on the
driver path (real pymongo over TCP to a scripted server) and in memory alike, a value BSON cannot
carry becomes a refused action with its reason, and the audit goes on to its report.

Before, an integer beyond int64 ended ``run_audit`` with OverflowError, a NUL in a key or a pattern
with InvalidDocument, a lone surrogate reached the driver as UnicodeEncodeError, and a
``value_filter`` written as a bare regex with ``TypeError: 'Regex' object is not a mapping``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from argus.agent.loop import run_audit
from argus.agent.options import AuditOptions
from argus.agent.report import AuditReport
from argus.agent.state import AgentAction
from argus.agent.tools.target import AuditTarget
from argus.daemon.sources import load_jsonl, open_uri
from tests.agent.tools.test_wire_server import ScriptedServer
from tests.conftest import memory_collection
from tests.doubles.planner import ScriptedPlanner

BIG = 99999999999999999999999

# name → (the hostile value, words its refusal holds)
HOSTILE: dict[str, tuple[Any, str]] = {
    "integer beyond int64": (BIG, "beyond the 64-bit integers MongoDB stores"),
    "negative integer beyond int64": (-BIG, "beyond the 64-bit integers MongoDB stores"),
    "$numberLong beyond int64": ({"$numberLong": "99999999999999999999"}, "beyond the 64-bit integers"),
    "NUL in a key": ({"b\x00c": 1}, "not a plain dot-notation path: it holds a NUL character"),
    "NUL in a $regex": ({"$regex": "a\x00b"}, "holds a NUL character, which BSON cannot carry in a pattern"),
    "NUL in a $regularExpression": ({"$regularExpression": {"pattern": "a\x00b", "options": ""}},
                                    "holds a NUL character, which BSON cannot carry in a pattern"),
    "pattern PCRE backtracks on": ({"$regularExpression": {"pattern": "^(\\d|[0-9])+$", "options": ""}},
                                   "alternatives that overlap under a quantifier"),
    "POSIX class": ({"$regularExpression": {"pattern": "^([[:digit:]]|1)+$", "options": ""}},
                    "a POSIX class ([:digit:])"),
    "lone surrogate": ("\ud800", "not valid Unicode"),
    "lone surrogate in a key": ({"\udfff": 1}, "not valid Unicode"),
}


def _slots(value: Any) -> list[AgentAction]:
    """``value`` at every place an action carries a query value."""
    return [AgentAction(action="run_query", action_input={"filter": {"a": value}, "limit": 0}),
            AgentAction(action="run_query", action_input={"filter": {"a": {"$in": [1, value]}}, "limit": 5}),
            AgentAction(action="run_query", action_input={"filter": {"$expr": {"$eq": ["$a", value]}}, "limit": 0}),
            AgentAction(action="get_stats", action_input={"field": "a", "operation": "count", "filter": {"a": value}}),
            AgentAction(action="get_stats", action_input={"field": "a", "operation": "max",
                                                          "value_filter": {"$in": [value]}}),
            AgentAction(action="count_many", action_input={"queries": [{"filter": {"a": value}}]}),
            AgentAction(action="count_many", action_input={"stats": [{"field": "a", "operation": "value_counts",
                                                                      "value_filter": {"$nin": [value]}}]})]


@pytest.fixture(scope="module")
def wire() -> Iterator[ScriptedServer]:
    server = ScriptedServer()
    server.start()
    yield server
    server.close()


Engine = Callable[[], AuditTarget]


@pytest.fixture(params=["driver", "files"])
def engine(request: pytest.FixtureRequest, wire: ScriptedServer, tmp_path: Path) -> Engine:
    if request.param == "driver":
        return lambda: open_uri(wire.server.uri, database="db", collection="items", max_time_ms=2000,
                                connect_timeout_ms=2000)
    data = tmp_path / "items.jsonl"  # the in-process engine behind --file and files: connections
    data.write_text("".join(json.dumps({"a": i, "s": f"s{i}"}) + "\n" for i in range(40)))
    return lambda: load_jsonl(data)


def _audit(target: AuditTarget, steps: list[AgentAction]) -> AuditReport:
    planner = ScriptedPlanner([AgentAction(action="schema_sample"), *steps])
    return run_audit(target, planner, options=AuditOptions(min_field_coverage=0.0, time_budget_s=20.0))


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_value_bson_cannot_carry_is_a_refused_action_and_the_audit_goes_on(engine: Engine, name: str) -> None:
    value, words = HOSTILE[name]
    report = _audit(engine(), _slots(value))

    assert report.outcome == "succeeded" and report.error is None
    refused = report.trace[1:-1]
    assert len(refused) == 7
    for entry in refused:
        assert entry.outcome == "rejected", (entry.action, entry.outcome, entry.observation)
        assert words in (entry.critique or ""), entry.critique


def test_a_value_filter_written_as_a_bare_regex_counts_the_values_it_matches(engine: Engine) -> None:
    report = _audit(engine(), [
        AgentAction(action="get_stats", action_input={"field": "s", "operation": "value_counts",
                                                      "value_filter": {"$regex": "^s1"}}),
        AgentAction(action="count_many", action_input={"stats": [{"field": "s", "operation": "count",
                                                                  "value_filter": {"$regex": "^s1"}},
                                                                 {"field": "s", "operation": "distinct",
                                                                  "value_filter": {"$regularExpression": {
                                                                      "pattern": "^S2", "options": "i"}}}]})])

    assert report.outcome == "succeeded" and report.error is None
    assert [e.outcome for e in report.trace[1:3]] == ["ok", "ok"], [e.critique or e.observation
                                                                    for e in report.trace]


def test_counted_values_of_a_bare_regex_are_the_values_it_matches() -> None:
    from argus.agent.tools.get_stats import get_stats
    from argus.agent.tools.models import GetStatsInput

    collection = memory_collection([{"s": v} for v in ("s1", "s1", "s10", "s2", "x1")], "items", database="db")
    result = get_stats(AuditTarget(collection), GetStatsInput(field="s", operation="value_counts",
                                                              value_filter={"$regex": "^s1"}))
    assert result.value == [{"value": "s1", "count": 2}, {"value": "s10", "count": 1}]


@pytest.mark.parametrize("value_filter", [{"$date": "2024-01-01T00:00:00Z"}, {"$oid": "5f0000000000000000000001"},
                                          {"$ref": "users", "$id": 1}])
def test_a_value_filter_that_is_no_condition_is_refused_naming_the_form(engine: Engine,
                                                                         value_filter: dict[str, Any]) -> None:
    report = _audit(engine(), [AgentAction(action="get_stats", action_input={
        "field": "a", "operation": "count", "value_filter": value_filter})])

    assert report.outcome == "succeeded"
    assert report.trace[1].outcome == "rejected"
    assert "value_filter must be a document of operators on each value" in (report.trace[1].critique or "")


class _Refusing:
    """A collection that answers the sample and then fails every count as a driver or a bug would."""

    def __init__(self, error: Exception) -> None:
        self._inner = memory_collection([{"a": i} for i in range(10)], "items", database="db")
        self._error = error
        self.database, self.name = self._inner.database, self._inner.name

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def count_documents(self, query: Any, **kwargs: Any) -> int:
        raise self._error


@pytest.mark.parametrize(("error", "words"), [
    (__import__("bson").errors.InvalidDocument("Key names must not contain the NULL byte"),
     "count_documents could not send the query: it cannot be encoded as BSON (InvalidDocument)"),
    (OverflowError("MongoDB can only handle up to 8-byte ints"),
     "could not send the query: it cannot be encoded as BSON (OverflowError)"),
    (RuntimeError("a bug"), "run_query failed unexpectedly (RuntimeError); try another query"),
])
def test_whatever_a_read_raises_is_one_failed_step_and_the_audit_goes_on(error: Exception, words: str) -> None:
    report = _audit(AuditTarget(_Refusing(error), in_memory=False),
                    [AgentAction(action="run_query", action_input={"filter": {"a": 1}, "limit": 0}),
                     AgentAction(action="get_stats", action_input={"field": "a", "operation": "max"})])

    assert report.outcome == "succeeded" and report.error is None
    assert report.trace[1].outcome == "error" and words in report.trace[1].observation
    assert report.trace[2].outcome == "ok"
