"""Shared by the runner tests: a schedules file over a small orders collection (with a type
mismatch) and a schedule whose file is missing."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from bson import json_util

from argus.config.schedules import ScheduleSet, load_schedules


@pytest.fixture
def schedules(tmp_path: Path) -> ScheduleSet:
    docs = [{"order_no": f"O-{i}", "qty": 1 + i % 5} for i in range(200)]
    for d in docs[:8]:
        d["qty"] = str(d["qty"])
    (tmp_path / "orders.jsonl").write_text("\n".join(json_util.dumps(d) for d in docs))
    (tmp_path / "schedules.yaml").write_text(textwrap.dedent("""\
        connections:
          files: {files: {orders: orders.jsonl, missing: nowhere.jsonl}}
        defaults: {trigger: {every: 1m}}
        schedules:
          - {name: orders, connection: files, database: shop, collection: orders}
          - {name: broken, connection: files, database: shop, collection: missing}
    """))
    return load_schedules(tmp_path / "schedules.yaml")
