"""The real server: DocumentDB (the engine under Azure Cosmos DB for MongoDB vCore) behind a wire gateway.

`.ci/run` starts it from `../shared/ddb/start.sh` and exports its address as ``ARGUS_TEST_MONGODB_URI``;
a developer does the same with ``bash .ci/ddb start`` (docs/development.md). Without the variable these
tests skip and say why, except under ``CI=true``, where a missing server fails them: a test that does not
run in CI is a test that does not exist. Each test module reads and writes a database of its own, so
pytest-xdist workers never share one; the test's own setup writes its documents there with pymongo,
and Argus then only reads.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymongo
import pytest
from pymongo.database import Database

URI_VARIABLE = "ARGUS_TEST_MONGODB_URI"
SHARED_BENCH = Path(__file__).resolve().parents[2].parent / "shared" / "bench"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.live)


def missing(what: str) -> None:
    """Skip with ``what`` locally; under ``CI=true`` fail, naming it."""
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"CI=true but {what}: CI must run the live tests", pytrace=False)
    pytest.skip(what)


@pytest.fixture(scope="session")
def live_uri() -> str:
    uri = os.environ.get(URI_VARIABLE)
    if not uri:
        missing(f"{URI_VARIABLE} is not set (start a server with `bash .ci/ddb start`)")
    assert uri is not None
    try:
        pymongo.MongoClient(uri, serverSelectionTimeoutMS=5000).admin.command("ping")
    except pymongo.errors.PyMongoError as exc:
        missing(f"the server at {URI_VARIABLE} does not answer ping ({type(exc).__name__})")
    return uri


@pytest.fixture(scope="module")
def live_db(live_uri: str) -> Iterator[Database[Any]]:
    """A database of this module's own on the real server, dropped afterwards."""
    client: pymongo.MongoClient[Any] = pymongo.MongoClient(live_uri)
    name = f"argus_it_{uuid.uuid4().hex[:10]}"
    yield client[name]
    for collection in client[name].list_collection_names():
        client[name].drop_collection(collection)
    client.close()


def shared_bench() -> list[Path]:
    """The shared bench's collections; missing outside this workplace (skip), never in CI (fail)."""
    return sorted(SHARED_BENCH.glob("*.jsonl"))
