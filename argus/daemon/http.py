"""The daemon's small HTTP server: /metrics, /healthz, /readyz, /status, /runs/ID and /incidents.

Read-only, except the incident status changes (``argus.daemon.incidents.http``), which exist only when
a bearer token is configured: without one, a POST gets 501 as it always did."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import structlog
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

from argus.agent.secrets import SECRETS
from argus.daemon.incidents.http import BODY_MAX, IncidentApi

__all__ = ["HttpServer", "parse_listen"]

log = structlog.get_logger("argus.http")

REQUEST_TIMEOUT_S = 10.0
BODY_TIMEOUT_S = 2.0  # a POST body (at most BODY_MAX bytes) comes in one go, or it is not coming
LISTEN_BACKLOG = 128  # the standard library's 5 reset connections of a burst of 40 requests


def parse_listen(text: str) -> tuple[str, int]:
    """``"127.0.0.1:9464"`` → (host, port); ``"0.0.0.0:9464"`` or ``":9464"`` listens on every interface."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"--listen {text!r} is not HOST:PORT (e.g. 127.0.0.1:9464)")
    return host.strip("[]") or "0.0.0.0", int(port)


class HttpServer:
    def __init__(self, listen: tuple[str, int], *, registry: CollectorRegistry,
                 ready: Callable[[], tuple[bool, list[str]]], status: Callable[[], dict[str, Any]],
                 run: Callable[[str], dict[str, Any] | None] | None = None,
                 finding: Callable[[str], dict[str, Any] | None] | None = None,
                 incidents: IncidentApi | None = None) -> None:
        class Handler(BaseHTTPRequestHandler):
            server_version = "argus"
            timeout = REQUEST_TIMEOUT_S  # a client that sends nothing (or half a request) is dropped

            def parse_request(self) -> bool:
                if len(getattr(self, "raw_requestline", b"").split()) == 2:  # HTTP/0.9: no headers to wait for
                    self.command, self.requestline = "GET", ""
                    self.request_version, self.close_connection = "HTTP/1.0", True
                    self.send_error(400, "HTTP/0.9 is not supported: send HTTP/1.0 or HTTP/1.1")
                    return False
                return super().parse_request()

            def do_GET(self) -> None:
                path, query = self._target()
                try:
                    if path == "/metrics":
                        self._send(200, generate_latest(registry), CONTENT_TYPE_LATEST)
                    elif path == "/healthz":
                        self._send(200, b"ok\n", "text/plain; charset=utf-8")
                    elif path == "/readyz":
                        ok, reasons = ready()
                        self._json(200 if ok else 503, {"ready": ok, "reasons": reasons})
                    elif path == "/status":
                        self._json(200, status())
                    elif path.startswith("/runs/") and run is not None:
                        found = run(path.removeprefix("/runs/"))
                        self._json(200 if found else 404, found or {"error": "no such run"})
                    elif path.startswith("/findings/") and finding is not None:
                        found = finding(path.removeprefix("/findings/"))
                        self._json(200 if found else 404, found or {"error": "no such finding"})
                    elif incidents is not None and (answer := incidents.get(path, query)) is not None:
                        self._json(*answer)
                    else:
                        self._json(404, {"error": f"no such path {path!r}",
                                         "paths": ["/metrics", "/healthz", "/readyz", "/status", "/runs/RUN_ID",
                                                   "/findings/FINDING_ID",
                                                   "/incidents", "/incidents/ID"]})
                except (BrokenPipeError, ConnectionResetError):  # the client hung up (a probe timed out)
                    log.debug("http_client_gone", path=path)
                except Exception as exc:  # a broken page must not take the server down
                    log.error("http_error", path=path, error=type(exc).__name__)
                    self._json(500, {"error": type(exc).__name__})

            def _target(self) -> tuple[str, str]:
                """The path and query as sent: Python turns //status into /status, which is no path of ours."""
                parts = self.requestline.split()
                path, _, query = (parts[1] if len(parts) > 1 else "").partition("?")
                return path, query

            def _json(self, code: int, body: Any, headers: dict[str, str] | None = None) -> None:
                self._send(code, (json.dumps(body, indent=2, default=str) + "\n").encode(), "application/json",
                           headers)

            def _send(self, code: int, body: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
                body = SECRETS.redact(body.decode()).encode()
                self.send_response(code)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                return  # scrapes every 15 s are not news

        handler: type[BaseHTTPRequestHandler] = Handler
        if incidents is not None and incidents.writable:
            api = incidents

            class WritableHandler(Handler):
                def do_POST(self) -> None:
                    path, _ = self._target()
                    try:
                        refused = self._framing()
                        if refused is not None:
                            self.close_connection = True
                            self._json(*refused)
                            return
                        length = int(self.headers["Content-Length"] or 0)
                        self.connection.settimeout(BODY_TIMEOUT_S)
                        try:
                            body = self.rfile.read(length)
                        except TimeoutError:
                            body = None
                        if body is None or len(body) < length:
                            self.close_connection = True
                            self._json(408 if body is None else 400, {
                                "error": f"the body is shorter than its Content-Length of {length} bytes"})
                            return
                        # header names are case-insensitive (RFC 9110): AUTHORIZATION is Authorization
                        headers = {name.lower(): value for name, value in self.headers.items()}
                        self._json(*api.post(path, headers, body))
                    except (BrokenPipeError, ConnectionResetError):
                        log.debug("http_client_gone", path=path)
                    except Exception as exc:  # never the headers: they hold the token
                        log.error("http_error", path=path, error=type(exc).__name__)
                        self._json(500, {"error": type(exc).__name__})

                def _framing(self) -> tuple[int, dict[str, str]] | None:
                    """A body whose length is not one plain Content-Length is refused, not guessed at: a
                    proxy in front may have framed it otherwise (request smuggling)."""
                    if self.headers.get_all("Transfer-Encoding"):
                        return 411, {"error": "send the body with a Content-Length, not a Transfer-Encoding"}
                    lengths = self.headers.get_all("Content-Length") or []
                    if len(lengths) > 1:
                        return 400, {"error": "send one Content-Length header"}
                    text = lengths[0].strip() if lengths else "0"
                    if not text.isdigit() or not text.isascii():
                        return 400, {"error": "Content-Length is not a number of bytes"}
                    if int(text) > BODY_MAX:
                        return 413, {"error": f"send a Content-Length of at most {BODY_MAX} bytes"}
                    return None

            handler = WritableHandler
        server = type("Server", (ThreadingHTTPServer,), {"request_queue_size": LISTEN_BACKLOG})
        try:
            self._server = server(listen, handler)
        except OSError as exc:
            raise OSError(exc.errno, f"cannot listen on {listen[0]}:{listen[1]}: {exc.strerror} (another process "
                                     f"on that port? choose one with --listen or ARGUS_LISTEN)") from exc
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="argus-http", daemon=True)
        self.address = self._server.server_address

    def start(self) -> None:
        self._thread.start()
        log.info("http_listening", host=str(self.address[0]), port=int(self.address[1]))

    def stop(self) -> None:
        if self._thread.is_alive():  # shutdown() waits for serve_forever, which may never have started
            self._server.shutdown()
        self._server.server_close()
