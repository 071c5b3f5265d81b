"""A client that hangs up before its answer (a probe that timed out) costs the daemon nothing:
no traceback on stderr, and the next request is answered."""

from __future__ import annotations

import threading
import urllib.request

import pytest
from prometheus_client import CollectorRegistry

from argus.daemon.http import HttpServer


def test_a_probe_that_gives_up_before_the_answer_leaves_no_traceback(capfd: pytest.CaptureFixture[str]) -> None:
    gone = threading.Event()

    def slow_ready() -> tuple[bool, list[str]]:
        gone.wait(10)  # answer only once the client has hung up
        return True, []

    server = HttpServer(("127.0.0.1", 0), registry=CollectorRegistry(), ready=slow_ready, status=dict)
    server.start()
    base = f"http://127.0.0.1:{server.address[1]}"
    try:
        with pytest.raises(TimeoutError):
            urllib.request.urlopen(f"{base}/readyz", timeout=0.5)
        gone.set()
        with urllib.request.urlopen(f"{base}/healthz", timeout=10) as resp:
            assert resp.status == 200
    finally:
        server.stop()
    assert "Traceback" not in capfd.readouterr().err
