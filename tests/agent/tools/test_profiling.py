"""The profiler survives hostile documents and reports paths a filter can use as written."""

from __future__ import annotations

import math
from datetime import UTC, datetime

from bson import Binary, Decimal128, Int64, ObjectId
from hypothesis import given, settings
from hypothesis import strategies as st

from argus.agent.tools.profiling import MAX_DEPTH, MAX_PATHS, bson_type, profile_documents, shape_of
from tests.conftest import memory_collection


def _field(fields, path):  # type: ignore[no-untyped-def]
    return next(f for f in fields if f.path == path)


def test_arrays_of_objects_are_descended_in_dot_notation() -> None:
    docs = [{"items": [{"qty": 1, "sku": "A"}, {"qty": -2}]}, {"items": [{"qty": 3}]}]
    fields, _, _ = profile_documents(docs)
    qty = _field(fields, "items.qty")
    assert qty.in_array and qty.present_count == 2 and qty.value_count == 3
    assert qty.numeric is not None and qty.numeric.negative_count == 1
    coll = memory_collection(docs, "c", database="d")
    assert coll.count_documents({"items.qty": {"$lt": 0}}) == 1  # the reported path works as written


def test_presence_nulls_and_missing_are_counted_per_document() -> None:
    fields, _, _ = profile_documents([{"a": 1}, {"a": None}, {}, {"a": 2}])
    a = _field(fields, "a")
    assert (a.present_count, a.null_count, a.missing_count) == (3, 1, 1)
    assert a.null_rate == 0.5


def test_nested_field_presence_is_relative_to_its_parent() -> None:
    fields, _, _ = profile_documents([{"addr": {"zip": "1"}}, {"addr": {}}, {"other": 1}])
    zip_ = _field(fields, "addr.zip")
    assert zip_.parent_present_count == 2 and zip_.present_count == 1


def test_deep_nesting_stops_at_the_depth_cap() -> None:
    deep: dict = {}
    cur = deep
    for _ in range(60):
        cur["n"] = {}
        cur = cur["n"]
    fields, truncated, _ = profile_documents([{"deep": deep}])
    assert max(f.path.count(".") for f in fields) < MAX_DEPTH
    assert len(truncated) == 1 and truncated[0].startswith("deep.n")


def test_dollar_and_dotted_keys_are_reported_as_unqueryable() -> None:
    fields, _, _ = profile_documents([{"$weird": 1, "a.b": 2, "ok": {"$inner": 3}}])
    assert not _field(fields, "$weird").queryable
    assert not _field(fields, "a.b").queryable
    assert not _field(fields, "ok.$inner").queryable
    assert _field(fields, "ok").queryable


def test_nan_and_infinity_are_counted_not_averaged() -> None:
    fields, _, _ = profile_documents([{"x": 1.0}, {"x": math.nan}, {"x": math.inf}, {"x": 3.0}])
    stats = _field(fields, "x").numeric
    assert stats is not None
    assert (stats.nan_count, stats.inf_count, stats.min, stats.max, stats.mean) == (1, 1, 1.0, 3.0, 2.0)


def test_decimal128_binary_and_int64_are_typed() -> None:
    docs = [{"d": Decimal128("1.5"), "b": Binary(b"\x00" * 5000), "l": Int64(5), "o": ObjectId()},
            {"d": Decimal128("NaN"), "b": b"raw", "l": 2**40, "o": ObjectId()}]
    fields, _, _ = profile_documents(docs)
    assert _field(fields, "d").types == {"decimal": 2}
    assert _field(fields, "d").numeric.nan_count == 1  # type: ignore[union-attr]
    assert _field(fields, "b").types == {"binData": 2}
    assert _field(fields, "b").sample_values[0] == "<binData 5000 bytes>"
    assert _field(fields, "l").types == {"long": 2}
    assert _field(fields, "o").types == {"objectId": 2}


def test_huge_arrays_are_profiled_without_descending_every_element() -> None:
    fields, _, _ = profile_documents([{"arr": list(range(200_000)), "objs": [{"k": i} for i in range(5000)]}])
    assert _field(fields, "arr").arrays.max_length == 200_000  # type: ignore[union-attr]
    assert _field(fields, "objs.k").value_count == 1000


def test_path_explosion_is_capped() -> None:
    fields, _, dropped = profile_documents([{f"k{i}": i for i in range(MAX_PATHS + 50)}])
    assert len(fields) == MAX_PATHS and dropped == 50


def test_cardinality_is_capped_at_100_but_distinct_ratio_is_exact() -> None:
    fields, _, _ = profile_documents([{"x": i % 250} for i in range(1000)])
    x = _field(fields, "x")
    assert (x.cardinality, x.cardinality_capped, x.distinct_ratio) == (100, True, 0.25)
    assert len(x.sample_values) == 5


def test_strings_report_shapes_formats_placeholders_and_units() -> None:
    values = ["zoe.12@mail.org", "ann.71@corp.net", "n/a", "", "  ", "12.0 oz."]
    fields, _, _ = profile_documents([{"s": v} for v in values])
    s = _field(fields, "s").strings
    assert s is not None
    assert (s.empty_count, s.blank_count, s.placeholder_count) == (1, 1, 1)
    assert s.formats["email"] == 2
    assert dict(s.shapes)["a+.9+@a+.a+"] == 2
    assert s.units == [("oz.", 1)]


def test_a_codes_value_space_counts_the_characters_seen_at_each_position() -> None:
    """Codes drawn at random fill every digit everywhere; a counter keeps its leading digits; seven
    words of seven lengths allow seven strings."""
    codes = [{"zip": f"{(i * 7919) % 100_000:05d}", "id": f"E{100_000 + i}", "name": "x" * (i % 7 + 1)}
             for i in range(300)]
    fields, _, _ = profile_documents(codes)
    spaces = {f.path: f.strings.value_space for f in fields if f.strings is not None}
    assert spaces == {"zip": 5.0, "id": round(2 * math.log10(10) + math.log10(3), 3), "name": round(math.log10(7), 3)}


def test_positive_numbers_are_counted_per_tenth_of_a_decade() -> None:
    fields, _, _ = profile_documents([{"r": v} for v in (0.19, 0.2, 0.21, 19.0, -1.0, 0.0)])
    r = _field(fields, "r").numeric
    assert r is not None and r.log_bins == [(-8, 1), (-7, 2), (12, 1)]


def test_dates_report_range_and_tails() -> None:
    docs = [{"t": datetime(2024, 1, d + 1, tzinfo=UTC)} for d in range(20)] + [{"t": datetime(2034, 1, 1)}]
    fields, _, _ = profile_documents(docs)
    d = _field(fields, "t").dates
    assert d is not None and d.max == datetime(2034, 1, 1, tzinfo=UTC)
    assert d.high_tail[0] == (datetime(2034, 1, 1, tzinfo=UTC), 1)


def test_shape_of() -> None:
    assert shape_of("ORD-100234") == "A+-9+"
    assert shape_of("n/a") == "a/a"
    assert shape_of("Zoe 12") == "Aa+ 9+"
    assert shape_of("é") == "~"
    assert shape_of("x" * 100).endswith("…")


def test_bson_type_of_bool_is_not_int() -> None:
    assert bson_type(True) == "bool" and bson_type(1) == "int" and bson_type(2**40) == "long"


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=20)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.dictionaries(st.text(max_size=6), _json_values, max_size=6), max_size=8))
def test_any_document_shape_profiles_without_error(docs: list[dict]) -> None:
    fields, _, _ = profile_documents(docs)
    for f in fields:
        assert f.present_count + f.missing_count == len(docs)
        assert 0.0 <= f.null_rate <= 1.0


def test_mean_of_values_at_the_float_maximum_does_not_overflow() -> None:
    fields, _, _ = profile_documents([{"x": 1.7976931348623157e308}] * 3 + [{"x": -1.7976931348623157e308}])
    stats = fields[0].numeric
    assert stats is not None and stats.mean is not None and math.isfinite(stats.mean)
