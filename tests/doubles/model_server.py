"""A real OpenAI-compatible HTTP server in the process, for tests, benchmarks and demos.

It listens on 127.0.0.1 with an ephemeral port, answers ``POST .../chat/completions`` (including
Azure's ``/openai/deployments/NAME/chat/completions?api-version=...``) with scripted replies, and
records every request (path, query, headers, JSON body). Replies are a list played in order, or a
function of the request body. Usage is reported as the offline estimate of the request unless a
reply sets it, so token accounting works end to end.

It also misbehaves on demand, as real endpoints and proxies do: a body that is not JSON
(``raw_reply``), no answer at all (``hang_reply``), one byte at a time (``drip_reply``), a closed
connection (``disconnect_reply``), and it replays recorded exchanges (``transcript_replies``: the
JSON lines of a real server's session, each answered with its recorded status and body).
"""

from __future__ import annotations

import gzip
import json
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from argus.agent.llm.tokens import estimate_messages, estimate_tokens

__all__ = ["LocalChatServer", "RecordedRequest", "Reply", "disconnect_reply", "drip_reply", "error_reply", "hang_reply",
           "raw_reply", "read_transcript", "recorded_reply", "text_reply", "tool_reply", "transcript_replies"]


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    usage: dict[str, Any] | None = None
    payload: dict[str, Any] | None = None  # a whole response body, sent as it is (recorded exchanges)
    raw: bytes | None = None  # a body that is not JSON
    hang: bool = False  # read the request, never answer
    drip_s: float = 0.0  # send the response one byte every drip_s seconds
    disconnect: bool = False  # close the connection without a response


def raw_reply(body: bytes, *, status: int = 200, content_type: str = "text/html") -> Reply:
    """A body that is not JSON, such as a proxy's error page served with status 200."""
    return Reply(status=status, raw=body, headers={"content-type": content_type})


def hang_reply() -> Reply:
    return Reply(hang=True)


def drip_reply(seconds: float, reply: Reply | None = None) -> Reply:
    """``reply`` (by default a valid tool call), one byte every ``seconds``: no single read ever times out."""
    base = reply or tool_reply("conclude", {"summary": "dripped"})
    return Reply(status=base.status, body=base.body, headers=base.headers, usage=base.usage, drip_s=seconds)


def disconnect_reply() -> Reply:
    return Reply(disconnect=True)


def read_transcript(path: Path) -> list[dict[str, Any]]:
    """The exchanges of a JSON-lines transcript (``.jsonl`` or ``.jsonl.gz``): request, status, response."""
    raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    return [json.loads(line) for line in raw.decode().splitlines() if line.strip()]


def recorded_reply(exchange: dict[str, Any]) -> Reply:
    """The recorded answer of one exchange; 599 (the recording proxy saw the connection dropped) drops it."""
    status = int(exchange["status"])
    return disconnect_reply() if status == 599 else Reply(status=status, payload=exchange["response"])


def transcript_replies(path: Path) -> list[Reply]:
    """The recorded answers of a transcript, in order."""
    return [recorded_reply(exchange) for exchange in read_transcript(path)]


def tool_reply(name: str, arguments: dict[str, Any] | str, *, content: str | None = None,
               usage: dict[str, Any] | None = None, delay_s: float = 0.0) -> Reply:
    """An assistant message calling one tool (``arguments`` as a dict, or raw text to send malformed JSON)."""
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    message = {"role": "assistant", "content": content,
               "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": name, "arguments": args}}]}
    return Reply(body={"message": message, "finish_reason": "tool_calls"}, usage=usage, delay_s=delay_s)


def text_reply(content: str, *, usage: dict[str, Any] | None = None, delay_s: float = 0.0) -> Reply:
    return Reply(body={"message": {"role": "assistant", "content": content}, "finish_reason": "stop"},
                 usage=usage, delay_s=delay_s)


def error_reply(status: int, message: str = "scripted error", *, headers: dict[str, str] | None = None,
                delay_s: float = 0.0) -> Reply:
    return Reply(status=status, body={"error": {"message": message, "type": "scripted", "code": status}},
                 headers=headers or {}, delay_s=delay_s)


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", []))

    def prompt_text(self) -> str:
        """Every message's content, joined: what a privacy scan reads."""
        return "\n".join(str(m.get("content") or "") for m in self.messages)


Responder = Callable[[dict[str, Any]], Reply]


class LocalChatServer:
    """``with LocalChatServer(replies) as server: OpenAI(base_url=server.base_url, ...)``."""

    def __init__(self, replies: Sequence[Reply] | Responder, *, default: Reply | None = None) -> None:
        self._replies: Responder
        if callable(replies):
            self._replies = replies
        else:
            queue = list(replies)
            fallback = default

            def play(_body: dict[str, Any]) -> Reply:
                if queue:
                    return queue.pop(0)
                if fallback is not None:
                    return fallback
                return error_reply(500, "the script has no more replies")

            self._replies = play
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        # stop() waits for serve_forever to look at its flag: every 50 ms, not the default 500 ms, since
        # tests and benchmarks start and stop hundreds of these
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="local-chat-server", daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.root}/v1"

    def start(self) -> LocalChatServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> LocalChatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _answer(self, body: dict[str, Any]) -> Reply:
        return self._replies(body)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    body = {"_unparsed": raw.decode("utf-8", "replace")}
                parts = urlsplit(self.path)
                with server._lock:
                    server.requests.append(RecordedRequest(
                        "POST", parts.path, parse_qs(parts.query), {k.lower(): v for k, v in self.headers.items()},
                        body))
                    reply = server._answer(body) if parts.path.endswith("/chat/completions") else \
                        error_reply(404, f"no route {parts.path}")
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.hang:
                    server._stopping.wait()
                    return
                if reply.disconnect:
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                data = reply.raw if reply.raw is not None else json.dumps(_payload(reply, body)).encode()
                headers = {"content-type": "application/json", "content-length": str(len(data)), **reply.headers}
                head = f"HTTP/1.1 {reply.status} {self.responses.get(reply.status, ('',))[0]}\r\n" + "".join(
                    f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
                try:
                    if reply.drip_s:
                        for byte in head.encode() + data:
                            if server._stopping.wait(reply.drip_s):
                                return
                            self.wfile.write(bytes([byte]))
                            self.wfile.flush()
                        return
                    self.wfile.write(head.encode() + data)
                except (BrokenPipeError, ConnectionResetError, OSError):  # the client timed out and left
                    return

        return Handler


def _payload(reply: Reply, request: dict[str, Any]) -> dict[str, Any]:
    if reply.payload is not None:
        return reply.payload
    if reply.status != 200 or reply.body is None or "message" not in reply.body:
        return reply.body or {}
    message = reply.body["message"]
    usage = reply.usage
    if usage is None:
        prompt = estimate_messages(request.get("messages", []), request.get("tools"), request.get("response_format"))
        completion = estimate_tokens(json.dumps(message))
        usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    return {"id": "chatcmpl-local", "object": "chat.completion", "created": 0, "model": request.get("model", ""),
            "choices": [{"index": 0, "message": message, "finish_reason": reply.body.get("finish_reason", "stop")}],
            "usage": usage}
