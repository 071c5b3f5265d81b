"""The health line says where "newest … old" came from (issue 36: 978.9 days from `_id` times, or
5.2 h from the sample, without a word of which, for a collection whose newest document was 1.9 h old)."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from rich.console import Console

from argus.agent.health.models import HealthSnapshot
from argus.daemon.render import print_report
from tests.daemon.store.reports import T0, report


@pytest.mark.parametrize(("source", "words"), [
    ("_id", "newest 1.9h old by _id's ObjectId time"),
    ("created_at", "newest 1.9h old by created_at"),
    ("sample:created_at", "newest 1.9h old by the newest created_at in the sample"),
])
def test_the_health_line_names_where_the_newest_time_came_from(source: str, words: str) -> None:
    health = HealthSnapshot(at=T0, documents=3000, newest_at=T0 - timedelta(minutes=114), freshness_s=114 * 60.0,
                            time_source=source, documents_sampled=1000)
    out = io.StringIO()
    print_report(report([], health=health), Console(file=out, width=250))
    [line] = [line for line in out.getvalue().splitlines() if line.startswith("health ")]
    assert words in line
