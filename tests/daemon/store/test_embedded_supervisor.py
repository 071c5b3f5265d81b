"""The embedded PostgreSQL a daemon started is started again when it dies."""

from __future__ import annotations

import time
from pathlib import Path

import psycopg
import pytest

from argus.daemon.store.embedded import EmbeddedSupervisor, start_embedded
from tests.faults.scenarios import kill_postmaster


@pytest.mark.slow
def test_a_killed_server_is_started_again_and_answers(tmp_path: Path) -> None:
    db = start_embedded(tmp_path)
    restarts: list[int] = []
    supervisor = EmbeddedSupervisor(db, on_restart=lambda: restarts.append(1))
    try:
        assert supervisor.check() and supervisor.describe() is None
        kill_postmaster(db.pgdata)
        deadline = time.monotonic() + 60
        while supervisor.alive():                                   # SIGKILL lands a moment later
            assert time.monotonic() < deadline
            time.sleep(0.05)
        while not supervisor.check():
            assert supervisor.describe() == \
                f"embedded PostgreSQL stopped; restarting it (attempt {supervisor.attempts})"
            assert time.monotonic() < deadline, supervisor.last_error
            time.sleep(min(2.0 ** supervisor.attempts, 4))
        assert restarts == [1] and supervisor.up and supervisor.describe() is None
        with psycopg.connect(db.uri) as conn:                       # the same address as before
            assert conn.execute("select 1").fetchone() == (1,)
    finally:
        db.server.cleanup()
