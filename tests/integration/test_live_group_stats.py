"""Fence statistics grouped in one ``$group`` on the real engine answer as each statistic's own pipeline
does there: DocumentDB's ``$min`` takes null as its least value (MongoDB's ignores it), so a value a
fence leaves out must not be null."""

from __future__ import annotations

from typing import Any

import pytest

from argus.agent.tools import get_stats
from argus.agent.tools.count_many import count_many
from argus.agent.tools.models import CountManyInput
from argus.daemon.sources import open_uri
from tests.agent.tools.test_group_stats import _products, _stats

pytestmark = pytest.mark.live


def test_grouped_fences_answer_as_each_statistic_alone_on_the_server(live_db: Any, live_uri: str) -> None:
    live_db["products_like"].insert_many(_products())
    target = open_uri(live_uri, database=live_db.name, collection="products_like", max_time_ms=30_000,
                      connect_timeout_ms=5000)
    specs = _stats()

    grouped = count_many(target, CountManyInput(stats=specs)).stats
    assert target.cost().passes == 2  # the fences in one $group, the rest in one $facet
    alone = [get_stats(target, spec) for spec in specs]

    assert [(s.field, s.value) for s in grouped] == [(s.field, s.value) for s in alone]
