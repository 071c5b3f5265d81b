"""What masking may change: document values only, never operators, learned patterns or Argus's numbers."""

from __future__ import annotations

from typing import Any

import pytest

from argus.agent.privacy import categorical_values, has_masked, mask_query
from argus.agent.tools import schema_sample
from argus.agent.tools.models import SchemaSampleInput
from tests.security.people import people

EMAIL = r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$"


@pytest.mark.parametrize("mode", ["strict", "shapes"])
@pytest.mark.parametrize("query", [
    {"email": {"$type": "string", "$not": {"$regex": EMAIL}}},
    {"email": {"$regex": EMAIL, "$options": "i"}},
    {"email": {"$not": {"$regularExpression": {"pattern": EMAIL, "options": ""}}}},
    {"qty": {"$eq": 0}},
    {"qty": {"$in": [{"$numberDouble": "NaN"}, {"$numberDouble": "Infinity"}, {"$numberDouble": "-Infinity"}]}},
    {"created": {"$eq": {"$date": "1970-01-01T00:00:00Z"}}},
    {"total": {"$lt": -1000, "$gt": 1e9}},
    {"shipped": {"$lt": {"$date": "2001-01-01T00:00:00Z"}}},
    {"$or": [{"a": None}, {"b": {"$exists": False}}, {"c": ""}, {"d": {"$size": 0}}]},
    {"$expr": {"$gt": ["$shipped", "$ordered"]}},
])
def test_what_argus_wrote_itself_is_never_masked(mode: Any, query: dict[str, Any]) -> None:
    assert mask_query(query, mode=mode) == (query, False)


def test_values_compared_for_equality_are_masked_by_kind_in_strict_and_by_shape_in_shapes() -> None:
    query = {"ssn": {"$in": ["123-45-6789", "987-65-4321"]}, "card": 4111111111111111, "name": {"$ne": "Zoe"}}
    assert mask_query(query, mode="strict") == ({"ssn": {"$in": [{"$masked": "string"}] * 2},
                                                 "card": {"$masked": "number"}, "name": {"$ne": {"$masked": "string"}}},
                                                True)
    assert mask_query(query, mode="shapes") == ({"ssn": {"$in": [{"$masked": "shape:9+-9+-9+"}] * 2},
                                                 "card": {"$masked": "16-digit number"},
                                                 "name": {"$ne": {"$masked": "shape:Aa+"}}}, True)
    assert mask_query(query, mode="full") == (query, False)


def test_a_long_list_keeps_five_masked_items_and_a_count_and_masking_twice_is_masking_once() -> None:
    masked, changed = mask_query({"ssn": {"$nin": [f"{i:03d}-12-3456" for i in range(18)]}}, mode="strict")
    assert changed and masked == {"ssn": {"$nin": [{"$masked": "string"}] * 5 + [{"$masked": "13 more"}]}}
    assert mask_query(masked, mode="strict") == (masked, False)
    assert has_masked(masked) and not has_masked({"ssn": {"$exists": True}})


def test_shapes_keeps_a_categorical_vocabulary_and_masks_a_value_outside_it() -> None:
    query = {"status": {"$nin": ["paid", "open"]}, "$or": [{"status": "refundd"}]}
    masked, changed = mask_query(query, mode="shapes", categorical={"status": frozenset({"paid", "open"})})
    assert changed and masked == {"status": {"$nin": ["paid", "open"]}, "$or": [{"status": {"$masked": "shape:a+"}}]}


def test_a_string_in_an_expression_is_a_value_but_a_field_reference_is_not() -> None:
    query = {"$expr": {"$eq": ["$ssn", "123-45-6789"]}}
    assert mask_query(query, mode="strict") == ({"$expr": {"$eq": ["$ssn", {"$masked": "string"}]}}, True)


def _categorical(make_target: Any, docs: list[dict[str, Any]], sample: int = 1000) -> dict[str, frozenset[Any]]:
    return categorical_values(schema_sample(make_target(docs), SchemaSampleInput(sample_size=sample)))


@pytest.mark.parametrize("size", [18, 60])
def test_identifiers_of_a_small_collection_are_no_vocabulary(make_target: Any, size: int) -> None:
    categorical = _categorical(make_target, people(size))
    assert set(categorical) <= {"status"}
    assert not any(v for vocabulary in categorical.values() for v in vocabulary if "4111" in v or "@" in v)


def test_a_small_vocabulary_relative_to_the_sample_is_categorical(make_target: Any) -> None:
    docs = [{"tier": ["bronze", "silver", "gold"][i % 3], "code": f"C{i % 9}"} for i in range(18)]
    categorical = _categorical(make_target, docs)
    assert categorical["tier"] == {"bronze", "silver", "gold"}
    assert "code" not in categorical  # 9 distinct of 18: half the sample, no vocabulary


def test_identifier_like_values_are_never_shown_even_when_they_repeat(make_target: Any) -> None:
    docs = [{"card": ["4111111111111111", "5500005555555559"][i % 2], "desk": ["ops@corp.example", "it"][i % 2]}
            for i in range(40)]
    categorical = _categorical(make_target, docs)
    assert categorical.get("card", frozenset()) == frozenset()
    assert categorical["desk"] == {"it"}
