"""The incidents HTTP API against a hostile or careless client, over a real socket (issue 36):
malformed bodies are 400 (never 500), a body whose framing is ambiguous is refused rather than
guessed at, header names are case-insensitive, and a burst of requests is neither reset nor
answered with another request's change."""

from __future__ import annotations

import json
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from argus.daemon.record import record_report
from argus.daemon.store import PostgresStore
from argus.daemon.store.incidents import IncidentBook
from tests.daemon.incidents.test_http import TOKEN, opened, serve  # noqa: F401 (fixtures)
from tests.daemon.store.reports import finding, report


def _raw(port: int, request: bytes, timeout: float = 30) -> tuple[int, dict[str, Any], float]:
    """Sends ``request`` as is; returns the status, the JSON body and the seconds the answer took."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(request)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
            head, sep, body = data.partition(b"\r\n\r\n")
            lengths = [line.split(b":")[1] for line in head.split(b"\r\n")
                       if line.lower().startswith(b"content-length")]
            if sep and lengths and len(body) >= int(lengths[0]):
                break
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body or b"{}"), time.monotonic() - started


def _post(path: str, body: bytes, *headers: str) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: x", f"Authorization: Bearer {TOKEN}", *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


@pytest.fixture
def port(serve: Any) -> int:  # noqa: F811
    return httpx.URL(str(serve(incident_token=TOKEN).base_url)).port or 0


def test_a_deeply_nested_body_is_400(port: int) -> None:
    body = b"[" * 8000
    code, answer, _ = _raw(port, _post("/incidents/1/ack", body, f"Content-Length: {len(body)}"))
    assert code == 400 and "not JSON" in answer["error"]


def test_a_lone_surrogate_in_the_note_is_400(port: int, opened: PostgresStore) -> None:  # noqa: F811
    body = b'{"note": "\\ud800"}'
    code, answer, _ = _raw(port, _post("/incidents/1/ack", body, f"Content-Length: {len(body)}"))
    assert code == 400 and "Unicode" in answer["error"]
    assert IncidentBook(opened).get(1).status == "open"


def test_a_body_shorter_than_its_length_is_refused_promptly(port: int, opened: PostgresStore) -> None:  # noqa: F811
    code, answer, took = _raw(port, _post("/incidents/1/ack", b'{"owner": "a"}', "Content-Length: 50"))
    assert code == 408 and "shorter than its Content-Length of 50" in answer["error"]
    assert took < 8, "refused before the connection's own 10 s timeout"
    assert IncidentBook(opened).get(1).status == "open"


@pytest.mark.parametrize(("headers", "expected"), [
    (("Content-Length: 2", "Content-Length: 50"), 400),
    (("Transfer-Encoding: chunked",), 411),
    (("Transfer-Encoding: chunked", "Content-Length: 2"), 411),
])
def test_an_ambiguous_body_length_is_refused_and_nothing_is_applied(port: int, opened: PostgresStore,  # noqa: F811
                                                                   headers: tuple[str, ...], expected: int) -> None:
    body = b'{"owner": "alice", "note": "on it"}'
    chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
    code, _, _ = _raw(port, _post("/incidents/1/ack", chunked if "chunked" in headers[0] else b"{}", *headers))
    assert code == expected
    assert IncidentBook(opened).get(1).status == "open"


def test_header_names_are_case_insensitive(port: int, opened: PostgresStore) -> None:  # noqa: F811
    body = b'{"owner": "alice"}'
    request = _post("/incidents/1/ack", body, f"Content-Length: {len(body)}").replace(
        b"Authorization:", b"AUTHORIZATION:")
    code, answer, _ = _raw(port, request)
    assert code == 200 and answer["status"] == "acknowledged" and answer["owner"] == "alice"


def test_forty_simultaneous_posts_each_get_their_own_answer(port: int, opened: PostgresStore) -> None:  # noqa: F811
    for n in range(3, 12):  # more incidents, so that requests on different ones overlap
        record_report(opened, report([finding("f", "null_rate", "medium")], collection=f"c{n}"))
    ids = [i.id for i in IncidentBook(opened).list()]
    actions = ["ack", "resolve", "expected", "false-positive"]

    def one(n: int) -> tuple[str, int, dict[str, Any]]:
        action = actions[n % len(actions)]
        body = json.dumps({"note": f"request {n}"}).encode()
        code, answer, _ = _raw(port, _post(f"/incidents/{ids[n % len(ids)]}/{action}", body,
                                           f"Content-Length: {len(body)}"))
        return action, code, answer

    with ThreadPoolExecutor(40) as pool:
        answers = list(pool.map(one, range(40)))  # a reset connection raises here
    status = {"ack": "acknowledged", "resolve": "resolved", "expected": "expected",
              "false-positive": "false_positive"}
    for n, (action, code, answer) in enumerate(answers):
        assert code in (200, 409), (n, code, answer)
        if code == 200:
            assert answer["status"] == status[action] and answer["note"] == f"request {n}", (n, action, answer)
