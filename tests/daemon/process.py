"""A real `argus daemon` subprocess for tests: start, read its HTTP pages, signal it."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

ARGUS = str(Path(sys.executable).with_name("argus"))
# The daemon runs this checkout's code even when the environment's editable install points at
# another one (several worktrees sharing one virtual environment).
_CHECKOUT = str(Path(__file__).resolve().parents[2])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class DaemonProcess:
    def __init__(self, schedules: Path | None, env: dict[str, str], log: Path, *, argv: list[str] | None = None,
                 port: int | None = None, cwd: Path | None = None) -> None:
        """``argus daemon --schedules SCHEDULES --listen 127.0.0.1:PORT``, or ``argv`` as given
        (which must then make the daemon listen on ``port``, e.g. through ARGUS_LISTEN)."""
        self.port = port or free_port()
        self.log_path = log
        self._log = log.open("w")
        self.proc = subprocess.Popen(
            argv or [ARGUS, "daemon", "--schedules", str(schedules), "--listen", f"127.0.0.1:{self.port}"],
            env={**os.environ, "ARGUS_LOG_FORMAT": "json", **env,
                 "PYTHONPATH": os.pathsep.join(p for p in (_CHECKOUT, os.environ.get("PYTHONPATH")) if p)},
            cwd=cwd, stdout=self._log, stderr=subprocess.STDOUT)

    def get(self, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=5) as resp:
                return resp.status, resp.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()

    def status(self) -> dict[str, Any]:
        return json.loads(self.get("/status")[1])

    def metric(self, name: str, **labels: str) -> float:
        """Sum of the samples named ``name`` whose labels include ``labels`` (0 when absent)."""
        total = 0.0
        for family in text_string_to_metric_families(self.get("/metrics")[1]):
            for sample in family.samples:
                if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                    total += sample.value
        return total

    def wait_until(self, what: str, predicate: Callable[[], bool], timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"daemon exited ({self.proc.returncode}):\n{self.tail()}"
            try:
                if predicate():
                    return
            except (OSError, ValueError, KeyError):
                pass  # not up yet
            time.sleep(0.2)
        raise AssertionError(f"timed out waiting for {what}\n{self.tail()}")

    def stop(self, timeout: float = 60) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        finally:
            self._log.close()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self._log.close()

    def events(self) -> list[dict[str, Any]]:
        out = []
        for line in self.log_path.read_text().splitlines():
            if line.startswith("{"):
                try:
                    out.append(json.loads(line))
                except ValueError:
                    continue
        return out

    def tail(self, lines: int = 40) -> str:
        return "\n".join(self.log_path.read_text().splitlines()[-lines:])
