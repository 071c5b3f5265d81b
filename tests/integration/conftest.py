"""The real server for ``live`` tests: DocumentDB (the engine under Cosmos DB for MongoDB vCore).

Where the server comes from, in order: ``ARGUS_TEST_MONGODB_URI`` (``.ci/run`` starts one with
``../shared/ddb/start.sh`` and exports it); else, when ``../shared/ddb`` is beside the repository, a
server this session starts itself and stops at the end (so a developer's plain ``pytest`` runs
them); else the tests skip, saying why. With ``CI=true`` nothing skips: a missing server or a
missing ``../shared`` is a failure naming what is missing, so CI never passes by skipping.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymongo
import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
DDB = SHARED / "ddb"
BENCH = SHARED / "bench"
URI_VARIABLE = "ARGUS_TEST_MONGODB_URI"


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def missing(reason: str) -> None:
    """Skip locally; fail in CI, where a skipped live test would hide that nothing was tested."""
    if in_ci():
        pytest.fail(f"CI=true but {reason}", pytrace=False)
    pytest.skip(reason)


def _start_own() -> tuple[str, Path] | None:
    """Start a server for this session (one per xdist worker: each its own port and directory)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    port = 27400 + int(re.sub(r"\D", "", worker) or 0) + (os.getpid() % 200) * 4
    directory = Path(f"/tmp/argus-ddb-test-{os.getpid()}")
    env = {**os.environ, "PYTHON": sys.executable}
    done = subprocess.run(["bash", str(DDB / "start.sh"), str(directory), str(port)], env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines or not lines[-1].startswith("mongodb://"):
        return None
    return lines[-1], directory


@pytest.fixture(scope="session")
def live_uri(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A mongodb:// URI of a running DocumentDB server (see the module's docstring for where from)."""
    uri = os.environ.get(URI_VARIABLE)
    if uri:
        yield uri
        return
    if not (DDB / "start.sh").is_file():
        missing(f"{URI_VARIABLE} is unset and {DDB}/start.sh is absent: no MongoDB-compatible server to test against")
    started = _start_own()
    if started is None:
        missing(f"{URI_VARIABLE} is unset and {DDB}/start.sh could not start a server (needs root, PostgreSQL 15)")
        return
    uri, directory = started
    try:
        yield uri
    finally:
        subprocess.run(["bash", str(DDB / "stop.sh"), str(directory)], capture_output=True, check=False, timeout=120)
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(scope="session")
def live_client(live_uri: str) -> Iterator[pymongo.MongoClient[dict[str, Any]]]:
    client: pymongo.MongoClient[dict[str, Any]] = pymongo.MongoClient(live_uri, serverSelectionTimeoutMS=5000)
    try:
        client.admin.command("ping")
    except pymongo.errors.PyMongoError as exc:
        missing(f"the server at {live_uri} does not answer ping: {exc}")
    yield client
    client.close()


@pytest.fixture(scope="module")
def live_db(live_client: pymongo.MongoClient[dict[str, Any]], request: pytest.FixtureRequest) -> Iterator[Any]:
    """A database of its own per test module (xdist workers never share one), dropped after."""
    stem = request.module.__name__.rsplit(".", 1)[-1].removeprefix("test_")[:20]
    name = f"t_{stem}_{uuid.uuid4().hex[:8]}"
    database = live_client[name]
    yield database
    for collection in database.list_collection_names():
        database.drop_collection(collection)


@pytest.fixture(scope="session")
def bench_dir() -> Path:
    if not BENCH.is_dir() or not any(BENCH.glob("*.jsonl")):
        missing(f"the shared bench collections are absent ({BENCH}/*.jsonl)")
    return BENCH
