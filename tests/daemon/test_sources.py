"""Loading Extended JSON files and keeping credentials out of messages."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.errors import DataLoadError
from daemon.sources import load_jsonl, redact_uri


def test_extended_json_types_are_loaded_as_bson(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text('{"_id": {"$oid": "6dabc219645a10772a88fafa"}, "ts": {"$date": "2025-07-21T12:16:14Z"},'
                    ' "n": {"$numberLong": "5"}, "d": {"$numberDecimal": "1.5"}}\n\n')
    target = load_jsonl(path)
    assert (target.name, target.count_documents({"ts": {"$type": "date"}})) == ("events", 1)


def test_a_line_that_is_not_an_object_is_named(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n[1, 2]\n')
    with pytest.raises(DataLoadError, match=r"x\.jsonl:2: expected a JSON object, found list"):
        load_jsonl(path)


def test_duplicate_ids_are_reported_with_their_line_range(tmp_path: Path) -> None:
    path = tmp_path / "dup.jsonl"
    path.write_text('{"_id": 1}\n{"_id": 1}\n')
    with pytest.raises(DataLoadError, match=r"dup\.jsonl: a document in lines 1-2 cannot be stored"):
        load_jsonl(path)


@pytest.mark.parametrize(("uri", "shown"), [
    ("mongodb://app:s3cret@h1,h2/db?replicaSet=rs", "mongodb://app:***@h1,h2/db?replicaSet=rs"),
    ("mongodb+srv://u:p%40ss@cluster.example.net", "mongodb+srv://u:***@cluster.example.net"),
    ("mongodb://h:27017", "mongodb://h:27017"),
    ("mongodb://onlyuser@h", "mongodb://onlyuser@h"),
])
def test_redact_uri(uri: str, shown: str) -> None:
    assert redact_uri(uri) == shown
