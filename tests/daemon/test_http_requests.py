"""Requests a real client can send the daemon's HTTP server, answered as such: an HTTP/0.9 request line
got no answer and held its connection (Python waits for headers 0.9 has none of), and //status served
/status (Python folds the slashes)."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from prometheus_client import CollectorRegistry

from argus.daemon.http import HttpServer


@pytest.fixture
def server() -> Iterator[HttpServer]:
    started = HttpServer(("127.0.0.1", 0), registry=CollectorRegistry(), ready=lambda: (True, []),
                         status=lambda: {"schedules": []})
    started.start()
    yield started
    started.stop()


def _exchange(server: HttpServer, request: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", int(server.address[1])), timeout=5) as conn:
        conn.sendall(request)
        received = b""
        while chunk := conn.recv(65536):     # the server closes the connection when it has answered
            received += chunk
    return received


def test_an_http_0_9_request_line_is_answered_and_closed(server: HttpServer) -> None:
    answer = _exchange(server, b"GET /status\r\n")
    assert answer.startswith(b"HTTP/1.0 400 ") and b"HTTP/0.9 is not supported" in answer


def test_a_doubled_slash_is_no_path_of_ours(server: HttpServer) -> None:
    assert _exchange(server, b"GET //status HTTP/1.0\r\n\r\n").startswith(b"HTTP/1.0 404 ")
    assert _exchange(server, b"GET /status HTTP/1.0\r\n\r\n").startswith(b"HTTP/1.0 200 ")
    assert _exchange(server, b"GET /status?x=1 HTTP/1.0\r\n\r\n").startswith(b"HTTP/1.0 200 ")
