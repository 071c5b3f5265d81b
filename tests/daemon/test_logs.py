"""Library loggers go through Argus's handler and redaction, never Python's last-resort handler."""

from __future__ import annotations

import logging

import pytest
import structlog

from argus.agent.secrets import SECRETS
from argus.daemon.logs import configure_logging


@pytest.fixture(autouse=True)
def _restore_root() -> object:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def test_a_library_warning_is_rendered_by_argus_with_secrets_masked(capsys: pytest.CaptureFixture[str]) -> None:
    SECRETS.register_connection_string("postgres:/argus:Pool-Secret-77@db.internal/argus")
    configure_logging("INFO", "json")
    logging.getLogger("psycopg.pool").warning("error connecting in 'pool-1': missing '=' after "
                                              "'postgres:/argus:Pool-Secret-77@db.internal/argus'")
    err = capsys.readouterr().err
    assert '"logger": "psycopg.pool"' in err and '"level": "warning"' in err
    assert "Pool-Secret-77" not in err and "***" in err


def test_library_info_lines_are_not_logged_and_argus_events_are_masked(capsys: pytest.CaptureFixture[str]) -> None:
    SECRETS.register("Event-Secret-88")
    configure_logging("INFO", "console")
    logging.getLogger("httpx").info("HTTP Request: POST https://hooks.example/Event-Secret-88")
    structlog.get_logger("argus.test").info("alert_failed", error="echoed Event-Secret-88")
    err = capsys.readouterr().err
    assert "HTTP Request" not in err
    assert "alert_failed" in err and "Event-Secret-88" not in err
