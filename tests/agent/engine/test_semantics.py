"""MongoDB's documented answers where the reference engine (mongomock) gives another one.

Each case is one a user would see as a wrong count: the engine follows the server (the MongoDB
manual's query, type-bracketing and comparison-order pages, and the server's own jstests), and
the differential generator leaves these shapes to this file.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

import pytest
from bson import Decimal128, Int64, Regex
from bson.datetime_ms import DatetimeMS

from argus.agent.engine import MemoryCollection
from argus.agent.errors import QueryRejected, QueryTimeout
from argus.agent.tools.target import AuditTarget


def _ids(docs: list[dict[str, Any]], query: dict[str, Any]) -> list[Any]:
    return [d["_id"] for d in MemoryCollection.of(docs).find(query)]


def test_booleans_are_not_numbers() -> None:
    docs = [{"_id": 1, "a": True}, {"_id": 2, "a": 1}, {"_id": 3, "a": False}, {"_id": 4, "a": 0}]
    assert _ids(docs, {"a": 1}) == [2]
    assert _ids(docs, {"a": True}) == [1]
    assert _ids(docs, {"a": {"$in": [0]}}) == [4]
    assert _ids(docs, {"a": {"$gte": 0}}) == [2, 4]


def test_nan_equals_nan_and_is_neither_greater_nor_less() -> None:
    nan = float("nan")
    docs = [{"_id": 1, "a": nan}, {"_id": 2, "a": -1.0}, {"_id": 3, "a": Decimal128("NaN")}]
    assert _ids(docs, {"a": {"$in": [float("nan"), float("inf")]}}) == [1, 3]
    assert _ids(docs, {"a": float("nan")}) == [1, 3]
    assert _ids(docs, {"a": {"$lt": 0}}) == [2]
    assert _ids(docs, {"a": {"$gte": float("nan")}}) == [1, 3]


def test_decimal128_compares_with_every_number() -> None:
    docs = [{"_id": 1, "a": Decimal128("7.5")}, {"_id": 2, "a": 7.5}, {"_id": 3, "a": Decimal128("-0.10")},
            {"_id": 4, "a": Decimal128("sNaN")}]
    assert _ids(docs, {"a": 7.5}) == [1, 2]
    assert _ids(docs, {"a": {"$gt": 5}}) == [1, 2]
    assert _ids(docs, {"a": {"$lt": 0}}) == [3]
    assert _ids(docs, {"a": {"$type": "decimal"}}) == [1, 3, 4]
    assert _ids(docs, {"a": {"$type": "number"}}) == [1, 2, 3, 4]
    assert _ids(docs, {"$expr": {"$eq": ["$a", 7.5]}}) == [1, 2]


def test_size_counts_arrays_only() -> None:
    docs = [{"_id": 1, "a": "x"}, {"_id": 2, "a": {"b": 1}}, {"_id": 3, "a": [5]}, {"_id": 4, "a": {}}]
    assert _ids(docs, {"a": {"$size": 1}}) == [3]
    assert _ids(docs, {"a": {"$size": 0}}) == []


def test_exists_false_through_an_array_needs_every_element_without_the_field() -> None:
    docs = [{"_id": 1, "a": [{"b": 1}, {"c": 2}]}, {"_id": 2, "a": [{"c": 2}]}, {"_id": 3, "a": 5}]
    assert _ids(docs, {"a.b": {"$exists": False}}) == [2, 3]


def test_a_path_through_a_scalar_is_missing() -> None:
    docs = [{"_id": 1, "a": 5}, {"_id": 2, "a": {"b": "x"}}, {"_id": 3, "a": {"b": None}}]
    assert _ids(docs, {"a.b": None}) == [1, 3]
    assert _ids(docs, {"a.b": {"$not": {"$type": "string"}}}) == [1, 3]


def test_null_through_arrays_as_the_servers_jstest_dotted_path_in_null() -> None:
    docs = [{"_id": 1, "a": [{"b": 5}]}, {"_id": 2, "a": [{}]}, {"_id": 3, "a": []}, {"_id": 4, "a": [{}, {"b": 5}]},
            {"_id": 5, "a": [5, {"b": 5}]}]
    assert _ids(docs, {"a.b": {"$in": [None]}}) == [2, 4]


def test_each_operator_of_a_condition_judges_the_whole_path() -> None:
    docs = [{"_id": 1, "items": [{"qty": 1}, {"qty": 10}]}, {"_id": 2, "items": [{"qty": 7}, {"qty": 10}]}]
    assert _ids(docs, {"items.qty": {"$gt": 5, "$ne": 7}}) == [1]


def test_a_numeric_segment_is_a_position_and_a_field_name() -> None:
    docs = [{"_id": 1, "a": [{"0": 1}]}, {"_id": 2, "a": [{"0": 2}]}, {"_id": 3, "a": [1]}, {"_id": 4, "a": [9, 1]}]
    assert _ids(docs, {"a.0": 1}) == [1, 3]
    assert _ids(docs, {"a.0": {"$gt": 8}}) == [4]


def test_mod_truncates_and_keeps_the_dividends_sign() -> None:
    docs = [{"_id": 1, "a": 5}, {"_id": 2, "a": -3}, {"_id": 3, "a": 5.9}, {"_id": 4, "a": "5"}]
    assert _ids(docs, {"a": {"$mod": [4, 1]}}) == [1, 3]
    assert _ids(docs, {"a": {"$mod": [4, -3]}}) == [2]


def test_type_names_the_bson_type() -> None:
    docs = [{"_id": 1, "a": None}, {"_id": 2}, {"_id": 3, "a": Int64(5)}, {"_id": 4, "a": 5},
            {"_id": 5, "a": 2 ** 40}, {"_id": 6, "a": [None]}]
    assert _ids(docs, {"a": {"$type": "null"}}) == [1, 6]
    assert _ids(docs, {"a": {"$type": "long"}}) == [3, 5]
    assert _ids(docs, {"a": {"$type": "int"}}) == [4]
    assert _ids(docs, {"a": {"$type": ["int", "array"]}}) == [4, 6]


def test_regex_options() -> None:
    docs = [{"_id": 1, "s": "Abc"}, {"_id": 2, "s": "x\nabc"}, {"_id": 3, "s": ["q", "abc"]}, {"_id": 4, "s": 5}]
    assert _ids(docs, {"s": {"$regex": "^abc", "$options": "i"}}) == [1, 3]
    assert _ids(docs, {"s": {"$regex": "^abc", "$options": "m"}}) == [2, 3]
    assert _ids(docs, {"s": Regex("x.abc", "s")}) == [2]
    assert _ids(docs, {"s": {"$regex": "a b c # letters", "$options": "x"}}) == [2, 3]


@pytest.mark.parametrize("pattern", [r"(?<=a+)b", r"\u00e9", r"(?a)\w"])
def test_a_regex_pcre2_refuses_is_refused_as_the_server_refuses_it(pattern: str) -> None:
    """The engine's `regex` module takes these; MongoDB's PCRE2 answers error 51091."""
    from pymongo.errors import OperationFailure

    with pytest.raises(OperationFailure, match="Regular expression is invalid: the server's engine") as caught:
        _ids([{"_id": 1, "s": "ab"}], {"s": {"$regex": pattern}})
    assert caught.value.code == 51091


def test_a_regex_end_anchor_reads_as_pcre2_reads_it() -> None:
    """PCRE2's \\Z matches at the end or before a final newline (Python's only at the very end)."""
    docs = [{"_id": 1, "s": "ab"}, {"_id": 2, "s": "ab\n"}, {"_id": 3, "s": "ab\n\n"}, {"_id": 4, "s": "a\\Z"}]
    assert _ids(docs, {"s": {"$regex": "b\\Z"}}) == [1, 2]
    assert _ids(docs, {"s": {"$regex": "a\\\\Z"}}) == [4]  # an escaped backslash, then the letter


def test_dates_compare_by_instant_whatever_their_zone_or_range() -> None:
    docs = [{"_id": 1, "t": datetime(2024, 1, 1, 12)}, {"_id": 2, "t": DatetimeMS(-10 ** 15)},
            {"_id": 3, "t": "2024-01-02"}]
    assert _ids(docs, {"t": {"$gt": datetime(2024, 1, 1, 11, 59, tzinfo=UTC)}}) == [1]
    assert _ids(docs, {"t": {"$lt": datetime(1900, 1, 1, tzinfo=UTC)}}) == [2]
    assert _ids(docs, {"t": {"$type": "date"}}) == [1, 2]


def test_a_date_bound_beyond_years_1_to_9999_compares_with_every_date() -> None:
    """A bound out of datetime's range decodes as DatetimeMS; compiled, it matched no datetime-held date
    (``$gte`` year -146 million counted 1 of 3 dates: BSON dates compare by their milliseconds), nor did an
    in-range DatetimeMS equal one (DocumentDB: 1, 1, 1 for the last three; its gateway cannot decode the first two)."""
    docs = [{"_id": 1, "t": datetime(1960, 1, 1)}, {"_id": 2, "t": datetime(1969, 12, 31, 23, 59, 59, 999000)},
            {"_id": 3, "t": DatetimeMS(2 ** 62)}]
    engine = MemoryCollection.of(docs)
    asked = [{"t": {"$gte": DatetimeMS(-2 ** 62)}}, {"t": {"$lt": DatetimeMS(2 ** 62)}}, {"t": DatetimeMS(-1)},
             {"t": {"$gt": DatetimeMS(-1)}}, {"t": {"$in": [DatetimeMS(-1)]}}]
    assert [engine.count_documents(q) for q in asked] == [3, 2, 1, 1, 1]
    assert _ids(docs, asked[0]) == [1, 2, 3]


def test_an_empty_type_list_is_refused_as_the_server_refuses_it() -> None:
    """``{$type: []}``: DocumentDB (as MongoDB) answers "must match at least one type"; the engine raised a
    TypeError, reported as an internal error."""
    target = AuditTarget(MemoryCollection.of([{"_id": 1, "a": 1}], name="t", database="db"))
    for query in ({"a": {"$type": []}}, {"$or": [{"a": {"$type": []}}, {"a": 1}]}):
        with pytest.raises(QueryRejected, match="at least one type"):
            target.count_documents(query)


def test_cross_field_expressions_as_the_planner_writes_them() -> None:
    docs = [{"_id": 1, "start": datetime(2024, 1, 2), "end": datetime(2024, 1, 1)},
            {"_id": 2, "start": datetime(2024, 1, 1), "end": datetime(2024, 1, 2)},
            {"_id": 3, "total": 10, "qty": 2, "price": 5}, {"_id": 4, "total": 12, "qty": 2, "price": Decimal128("5")}]
    assert _ids(docs, {"start": {"$type": "date"}, "end": {"$type": "date"}, "$expr": {"$lt": ["$end", "$start"]}}) \
        == [1]
    off = {"$gt": [{"$abs": {"$subtract": ["$total", {"$multiply": ["$qty", "$price"]}]}},
                   {"$max": [0.01, {"$multiply": [0.001, {"$abs": "$total"}]}]}]}
    assert _ids(docs, {"total": {"$type": "number"}, "$expr": off}) == [4]


def test_an_operator_the_server_refuses_is_refused() -> None:
    target = AuditTarget(MemoryCollection.of([{"a": 1}]))
    with pytest.raises(QueryRejected, match="unknown operator"):
        target.count_documents({"a": {"$near": [0, 0]}})


def test_a_slow_regex_ends_at_the_time_limit_in_process() -> None:
    """Unbounded, this match takes about 2^40 steps: hours, not the 15 s allowed here on a loaded machine."""
    docs = [{"_id": i, "s": "a" * 40 + "b"} for i in range(3)]
    target = AuditTarget(MemoryCollection.of(docs), max_time_ms=300)
    started = time.monotonic()
    with pytest.raises(QueryTimeout):
        target.count_documents({"s": {"$regex": "^(a|a)+$"}})
    assert time.monotonic() - started < 15


def test_a_huge_unwind_ends_at_the_time_limit() -> None:
    docs = [{"_id": i, "v": list(range(100_000))} for i in range(30)]
    target = AuditTarget(MemoryCollection.of(docs), max_time_ms=200)
    with pytest.raises(QueryTimeout):
        target.aggregate([{"$unwind": "$v"}, {"$group": {"_id": "$v", "n": {"$sum": 1}}}])


def test_a_regex_timeout_is_the_wall_time_left_in_cpu_seconds_on_a_busy_machine() -> None:
    """The ``regex`` module's timeout counts the process's CPU time. A read that has had a quarter of
    a core (a busy machine) gives a pattern a quarter of the wall time left as CPU seconds, so the
    read still ends when its wall-clock limit says; an idle machine gives it all of it."""
    from argus.agent.engine.deadline import Deadline

    wall, cpu = [100.0], [10.0]
    busy = Deadline(2000, clock=lambda: wall[0], cpu_clock=lambda: cpu[0], load=lambda: 0.5)
    assert busy.regex_timeout_s() == pytest.approx(2.0 * 0.5)  # nothing measured yet: the load average's share
    wall[0] += 1.0
    cpu[0] += 0.25
    assert busy.regex_timeout_s() == pytest.approx(1.0 * 0.25)
    wall[0], cpu[0] = 100.0, 10.0
    idle = Deadline(2000, clock=lambda: wall[0], cpu_clock=lambda: cpu[0], load=lambda: 1.0)
    wall[0] += 1.0
    cpu[0] += 1.0
    assert idle.regex_timeout_s() == pytest.approx(1.0)
    assert Deadline(None).regex_timeout_s() is None


def test_a_regex_given_too_few_cpu_seconds_is_searched_again_until_the_wall_clock_limit() -> None:
    """A read whose share of a core is underestimated (here the load average says 5%) gives its
    first search too few CPU seconds (a quarter of a second of the 5 s left); that ends the search,
    never the read: only the wall-clock limit does. Each match takes about half a second of CPU.
    The read's clock is this process's own CPU time, so other processes on the machine neither slow
    its wall clock nor end the read early: a loaded CI machine gave the second match less than the
    5 s it had, and the test failed on the load, not on the retry it checks."""
    import time

    from argus.agent.engine.deadline import Deadline
    from argus.agent.engine.regexes import compile_regex

    deadline = Deadline(5_000, clock=time.process_time, cpu_clock=time.process_time, load=lambda: 0.05)
    search = compile_regex("\\s+[xy]", "", deadline)
    assert search(" " * 10_000 + "!") is False
    assert search(" " * 10_000 + "x") is True
