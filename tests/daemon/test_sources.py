"""Loading Extended JSON files and keeping credentials out of messages."""

from __future__ import annotations

from pathlib import Path

import pytest

from argus.agent.errors import ArgusError, DataLoadError
from argus.daemon.sources import load_jsonl, open_uri


def test_extended_json_types_are_loaded_as_bson(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text('{"_id": {"$oid": "6dabc219645a10772a88fafa"}, "ts": {"$date": "2025-07-21T12:16:14Z"},'
                    ' "n": {"$numberLong": "5"}, "d": {"$numberDecimal": "1.5"}}\n\n')
    target = load_jsonl(path)
    assert (target.name, target.count_documents({"ts": {"$type": "date"}})) == ("events", 1)


def test_decimals_load_as_numbers_the_in_memory_engine_can_compare(tmp_path: Path) -> None:
    """Range checks on a Decimal128 price were refused by the in-memory engine, so a negative
    price in a file went unreported."""
    path = tmp_path / "prices.jsonl"
    path.write_text('{"price": {"$numberDecimal": "-1.50"}, "lines": [{"net": {"$numberDecimal": "2.25"}}]}\n'
                    '{"price": {"$numberDecimal": "19.99"}}\n')
    target = load_jsonl(path)
    assert target.count_documents({"price": {"$lt": 0}}) == 1
    assert target.count_documents({"lines.net": {"$gt": 2}}) == 1


def test_a_decimal_that_is_no_number_is_named_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "prices.jsonl"
    path.write_text('{"price": {"$numberDecimal": "1.5"}}\n{"price": {"$numberDecimal": "abc"}}\n')
    with pytest.raises(DataLoadError, match=r"prices\.jsonl:2: not valid Extended JSON"):
        load_jsonl(path)


def test_a_line_that_is_not_an_object_is_named(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n[1, 2]\n')
    with pytest.raises(DataLoadError, match=r"x\.jsonl:2: expected a JSON object, found list"):
        load_jsonl(path)


def test_duplicate_ids_are_reported_with_the_line_of_the_second(tmp_path: Path) -> None:
    path = tmp_path / "dup.jsonl"
    path.write_text('{"_id": 1}\n{"_id": 2}\n{"_id": 1.0}\n')
    with pytest.raises(DataLoadError, match=r"dup\.jsonl:3: a second document with the same _id"):
        load_jsonl(path)


@pytest.mark.parametrize(("uri", "password", "reason"), [
    ("mongodb:/argus:S3cretA@host/db", "S3cretA", "the scheme must be mongodb:// or mongodb+srv://"),
    ("argus:S3cretB@host/db", "S3cretB", "the scheme must be mongodb:// or mongodb+srv://"),
    ("MONGODB://argus:S3cretC@host/db", "S3cretC", "the scheme must be mongodb:// or mongodb+srv://"),
    ("mongodb://argus:S3c/retD@host/db", "S3c/retD", "the database name is invalid"),
    ("mongodb://argus:S3c@retE@host/db", "S3c@retE", "must be percent-escaped"),
    ("mongodb://argus:S3cretF@host/db?authMechanismProperties=AWS_SESSION_TOKEN:T0kenF&bogus=1", "T0kenF",
     "an option in its query string is unknown or has an invalid value (not shown)"),
])
def test_a_malformed_uri_is_refused_naming_its_source_never_echoed(uri: str, password: str, reason: str) -> None:
    with pytest.raises(ArgusError) as caught:
        open_uri(uri, database="db", collection="c", source="ARGUS_MONGODB_URI")
    message = str(caught.value)
    assert message.startswith("ARGUS_MONGODB_URI is not a valid MongoDB URI: ")
    assert reason in message
    assert password not in message and "host/db" not in message
