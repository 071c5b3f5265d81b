"""The query time limit, enforced on the client for engines that ignore ``maxTimeMS``.

MongoDB and Cosmos DB stop a query at its ``maxTimeMS``; the in-memory engine (mongomock, behind
files connections and the demo) ignores it, so a catastrophic regex or an ``$unwind`` over a huge
array would run past the audit's budget. For such an engine the call runs in a forked copy of
this process, killed at the limit: a thread would not do, since a regex holds the interpreter
lock until it returns. The child also arms ``SIGALRM`` at the limit, so it dies on time even if
this process is killed first. Engines that honour ``maxTimeMS`` are called directly.
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import os
import pickle
import select
import signal
import time
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

from agent.errors import QueryTimeout, ToolError

__all__ = ["honours_max_time", "within"]

T = TypeVar("T")

_SLACK_S = 0.25  # forking and copying the answer back, on top of the query's own limit
_PR_SET_PDEATHSIG = 1


def honours_max_time(collection: Any) -> bool:
    """False for the in-memory engine, which accepts ``maxTimeMS`` and ignores it."""
    return not type(collection).__module__.startswith("mongomock")


def within(collection: Any, limit_ms: int, call: Callable[[], T], *, operation: str) -> T:
    """``call()``, ended with ``QueryTimeout`` after ``limit_ms`` if the engine would not end it."""
    if honours_max_time(collection) or not hasattr(os, "fork"):
        return call()
    return _in_child(call, limit_ms / 1000, operation)


def _in_child(call: Callable[[], T], limit_s: float, operation: str) -> T:
    read_end, write_end = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # forking with threads: the child only queries
        pid = os.fork()
    if pid == 0:  # the child: answer through the pipe, never return into the caller's code
        os.close(read_end)
        _die_with_parent(math.ceil(limit_s + _SLACK_S))
        try:
            payload = pickle.dumps((True, call()))
        except BaseException as exc:  # every failure goes back to the parent
            payload = _pickled_error(exc)
        with contextlib.suppress(OSError), os.fdopen(write_end, "wb") as out:
            out.write(payload)
        os._exit(0)
    os.close(write_end)
    try:
        data = _read_until(read_end, time.monotonic() + limit_s + _SLACK_S)
    finally:
        os.close(read_end)
        _reap(pid, kill=True)
    if data is None:
        raise QueryTimeout(f"{operation} ran past its time limit ({limit_s * 1000:.0f} ms) in the in-memory engine, "
                           f"which cannot stop a query itself; narrow the query")
    if not data:
        raise ToolError(f"{operation} failed in the database engine: the query process ended without an answer")
    ok, value = pickle.loads(data)
    if ok:
        return value
    raise value


def _die_with_parent(seconds: int) -> None:
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    signal.alarm(max(seconds, 1))
    with contextlib.suppress(Exception):  # Linux: die with the parent too
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _pickled_error(exc: BaseException) -> bytes:
    try:
        return pickle.dumps((False, exc))
    except Exception:  # an exception that cannot cross the pipe is named instead
        return pickle.dumps((False, ToolError(f"the query failed in the database engine: {type(exc).__name__}")))


def _read_until(fd: int, deadline: float) -> bytes | None:
    """Everything the child writes, or None when it has not finished by ``deadline``."""
    chunks: list[bytes] = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            return None
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _reap(pid: int, *, kill: bool) -> None:
    if kill:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)
