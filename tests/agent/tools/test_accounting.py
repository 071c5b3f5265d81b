"""Which reads are passes over the collection: what the report's database cost counts."""

from __future__ import annotations

from typing import Any

import pytest
from bson import ObjectId

from argus.agent.tools.accounting import is_selective, pipeline_is_pass

SINCE = ObjectId("65f000000000000000000000")


@pytest.mark.parametrize(("query", "selective"), [
    ({"_id": 7}, True),
    ({"_id": {"$in": [1, 2]}}, True),
    ({"_id": {"$gte": SINCE}}, True),                 # documents inserted since the last run: an index range
    ({"_id": {"$gt": SINCE, "$lt": SINCE}}, True),
    ({"_id": {"$ne": 7}}, False),
    ({"_id": {"$gte": SINCE}, "status": "x"}, False),
    ({"status": "x"}, False),
    ({}, False),
])
def test_only_id_lookups_and_ranges_are_not_passes(query: dict[str, Any], selective: bool) -> None:
    assert is_selective(query) is selective
    assert pipeline_is_pass([{"$match": query}, {"$count": "n"}]) is not selective
