"""Running ``argus audit`` as a user does, on a file and on the live server, and what to compare."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from bson import json_util

__all__ = ["audit", "finding_keys", "load_jsonl"]


def load_jsonl(collection: Any, path: Path) -> int:
    """The test's own setup: mongoexport lines inserted with its own pymongo client, not Argus."""
    documents = [json_util.loads(line) for line in path.read_text().splitlines() if line.strip()]
    collection.insert_many(documents, ordered=False)
    return len(documents)


def audit(*args: str, timeout: float = 240) -> tuple[int, dict[str, Any]]:
    """``argus audit ... --format json --no-store``: its exit code and its report."""
    done = subprocess.run([sys.executable, "-m", "argus.daemon.cli", "audit", *args, "--format", "json", "--no-store"],
                          capture_output=True, text=True, timeout=timeout, check=False)
    assert done.stdout.strip(), f"no report (exit {done.returncode}): {done.stderr[-2000:]}"
    return done.returncode, json.loads(done.stdout)


def finding_keys(report: dict[str, Any]) -> list[tuple[str, str, int]]:
    """What a user compares between two reports: each finding's field, category and count."""
    return sorted((f["field"], f["category"], f["affected_count"]) for f in report["findings"])
