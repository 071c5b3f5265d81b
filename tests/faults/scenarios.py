"""Building blocks of the fault tests and of bench/faults.py: collections that make an audit slow
or costly, schedules files around them, and what the history database holds afterwards."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import psycopg
import yaml
from bson import json_util

__all__ = ["BAD_SCHEDULES", "kill_postmaster", "slow_collection", "stored_runs", "write_schedules"]


def slow_collection(directory: Path, name: str = "orders", documents: int = 8000) -> Path:
    """An orders collection big enough that auditing it in memory takes seconds (a type mismatch
    and a missing field included, so the audit has findings to commit)."""
    path = directory / f"{name}.jsonl"
    with path.open("w") as out:
        for i in range(documents):
            doc: dict[str, Any] = {"order_no": f"O-{i:06d}", "qty": 1 + i % 9, "status": ["new", "paid", "sent"][i % 3],
                                   "email": f"buyer{i}@example.org", "total": round(3.5 * (i % 40), 2)}
            if i % 97 == 0:
                doc["qty"] = str(doc["qty"])
            if i % 211 == 0:
                del doc["email"]
            out.write(json_util.dumps(doc) + "\n")
    return path


def write_schedules(path: Path, files: dict[str, Path], *, every: str = "1d", run_at_start: bool = True,
                    extra: dict[str, Any] | None = None, **settings: Any) -> dict[str, Any]:
    """One schedule per file (named after it), written atomically; returns the data written."""
    data: dict[str, Any] = {
        "connections": {"files": {"files": {name: str(p) for name, p in files.items()}}},
        "defaults": {"trigger": {"every": every}, "run_at_start": run_at_start, **settings},
        "schedules": [{"name": name, "connection": "files", "database": "shop", "collection": name}
                      for name in files],
        **(extra or {}),
    }
    tmp = path.with_suffix(".tmp")
    tmp.write_text(yaml.safe_dump(data, sort_keys=False))
    tmp.replace(path)
    return data


def stored_runs(dsn: str) -> list[dict[str, Any]]:
    """The runs stored in ``dsn`` (none before the daemon created its tables)."""
    with psycopg.connect(dsn) as conn:
        if conn.execute("select to_regclass('runs')").fetchone() == (None,):
            return []
        cur = conn.execute("select id, schedule, outcome, termination_reason, error, duration_s from runs "
                           "order by started_at")
        names = [c.name for c in cur.description or []]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def kill_postmaster(pgdata: Path) -> int:
    """SIGKILL the embedded server's postmaster; returns its pid."""
    pid = int((pgdata / "postmaster.pid").read_text().splitlines()[0])
    os.kill(pid, signal.SIGKILL)
    return pid


def _nested(levels: int) -> str:
    return "x: " + "[" * levels + "]" * levels + "\n"


def _alias_bomb() -> str:
    lines = ["a0: &a0 [" + ", ".join(["lol"] * 9) + "]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 8)]
    return "\n".join(lines) + "\nschedules: []\n"


# name → how a good file is broken (from its bytes to the bad bytes written)
BAD_SCHEDULES: dict[str, Any] = {
    "non-UTF-8 byte": lambda good: good.replace(b"shop", b"sh\xffop", 1),
    "control character": lambda good: good.replace(b"shop", b"sh\x01op", 1),
    "UTF-16 file": lambda good: good.decode().encode("utf-16"),
    "5,000-level nesting": lambda good: good + _nested(5000).encode(),
    "huge interval": lambda good: good.replace(b"every: 1d", b"every: 99999999999999999999999999999s", 1),
    "alias bomb": lambda good: _alias_bomb().encode(),
    "empty file": lambda good: b"",
    "truncated file": lambda good: good[: good.index(b"schedules:")],
    "no schedules key": lambda good: good.replace(b"schedules:", b"schedule:", 1),
    "60 MB file": lambda good: good + b"# padding\n" * 6_000_000,
    "10,000 schedules (900 KB)": lambda good: good + b"".join(
        b"- {name: s%d, connection: files, database: shop, collection: orders}\n" % i for i in range(10_000)),
}
