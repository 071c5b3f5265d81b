"""Every layout people export in loads, whatever its name says; bad bytes are named with their place."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import bson
import pytest
from bson import Decimal128, ObjectId

from argus.agent.errors import DataLoadError
from argus.daemon.files import load_file

DOCS = [
    {"_id": ObjectId("65a1b2c3d4e5f60718293a4b"), "qty": 3, "price": Decimal128("9.99"), "tags": ["a", "b"]},
    {"_id": ObjectId("65a1b2c3d4e5f60718293a4c"), "qty": -1, "price": Decimal128("-0.50"), "tags": []},
    {"_id": ObjectId("65a1b2c3d4e5f60718293a4d"), "qty": None, "item": {"sku": "X1"}},
]
LINES = "\n".join(bson.json_util.dumps(d) for d in DOCS) + "\n"


def _counts(path: Path, **kwargs: Any) -> tuple[str, int, int, int]:
    coll = load_file(path, **kwargs)
    return coll.name, coll.count_documents({}), coll.count_documents({"qty": {"$lt": 0}}), \
        coll.count_documents({"price": {"$lt": 0}})


def test_json_lines(tmp_path: Path) -> None:
    (tmp_path / "orders.jsonl").write_text(LINES)
    assert _counts(tmp_path / "orders.jsonl") == ("orders", 3, 1, 1)


def test_a_gzipped_json_array_export(tmp_path: Path) -> None:
    """mongoexport --jsonArray, gzipped, pretty-printed across lines."""
    body = "[\n" + ",\n".join(json.dumps(json.loads(bson.json_util.dumps(d)), indent=2) for d in DOCS) + "\n]\n"
    path = tmp_path / "orders.json.gz"
    path.write_bytes(gzip.compress(body.encode()))
    assert _counts(path) == ("orders", 3, 1, 1)


def test_the_content_decides_not_the_name(tmp_path: Path) -> None:
    """A gzipped file named .jsonl, and BSON named .json, load as what they are."""
    (tmp_path / "a.jsonl").write_bytes(gzip.compress(LINES.encode()))
    (tmp_path / "b.json").write_bytes(b"".join(bson.encode(d) for d in DOCS))
    assert _counts(tmp_path / "a.jsonl") == ("a", 3, 1, 1)
    assert _counts(tmp_path / "b.json") == ("b", 3, 1, 1)


def test_an_empty_json_array_and_an_empty_file_hold_no_documents(tmp_path: Path) -> None:
    (tmp_path / "e.json").write_text("[ ]\n")
    (tmp_path / "f.jsonl").write_text("")
    assert _counts(tmp_path / "e.json") == ("e", 0, 0, 0)
    assert _counts(tmp_path / "f.jsonl") == ("f", 0, 0, 0)


def _dump(folder: Path, name: str, *, gz: bool) -> Path:
    data = b"".join(bson.encode(d) for d in DOCS)
    meta = {"options": {}, "indexes": [{"v": 2, "key": {"_id": 1}, "name": "_id_"},
                                       {"v": 2, "key": {"qty": -1}, "name": "qty_-1"}],
            "uuid": "0b5d", "collectionName": name, "type": "collection"}
    folder.mkdir(parents=True, exist_ok=True)
    suffix = ".gz" if gz else ""
    (folder / f"{name}.bson{suffix}").write_bytes(gzip.compress(data) if gz else data)
    raw = json.dumps(meta).encode()
    (folder / f"{name}.metadata.json{suffix}").write_bytes(gzip.compress(raw) if gz else raw)
    return folder


@pytest.mark.parametrize("gz", [False, True], ids=["bson", "bson.gz"])
def test_a_mongodump_folder_names_the_collection_and_its_indexes(tmp_path: Path, gz: bool) -> None:
    folder = _dump(tmp_path / "dump" / "shop", "orders", gz=gz)
    coll = load_file(folder)
    assert (coll.name, coll.database.name, coll.count_documents({"qty": {"$lt": 0}})) == ("orders", "shop", 1)
    assert [next(iter(i["key"])) for i in coll.list_indexes()] == ["_id", "qty"]


def test_a_dump_with_several_collections_needs_one_named(tmp_path: Path) -> None:
    folder = _dump(_dump(tmp_path / "shop", "orders", gz=False), "customers", gz=True)
    with pytest.raises(DataLoadError, match=r"holds several collections \(customers, orders\); name one with "
                                            r"--collection"):
        load_file(folder)
    assert load_file(folder, collection="customers").count_documents({}) == 3
    with pytest.raises(DataLoadError, match="has no collection 'nope'; it holds customers, orders"):
        load_file(folder, collection="nope")


def test_documents_without_id_get_none(tmp_path: Path) -> None:
    """No made-up ObjectId holding the load's time: a re-run would count them as inserted since."""
    (tmp_path / "x.jsonl").write_text('{"a": 1}\n{"a": 2}\n')
    coll = load_file(tmp_path / "x.jsonl")
    assert coll.count_documents({"_id": {"$exists": True}}) == 0


@pytest.mark.parametrize(("content", "message"), [
    (b'{"a": 1}\n{"a": 2,, "b": 3}\n', r"x\.jsonl:2:9: not valid JSON: Expecting property name enclosed in "
                                       r"double quotes"),
    (b'{"a": 1}\n{"a": "caf\xe9"}\n', r"x\.jsonl:2:11: not UTF-8 \(byte 0xE9\); the file looks like Latin-1 or "
                                      r"Windows-1252 text"),
    ('{"a": 1}\n'.encode("utf-16"), r"x\.jsonl: cannot be read: the content is UTF-16 text"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00", r"x\.jsonl: cannot be read: the content is binary data"),
    (b'{"_id": 1, "t": {"$date": "yesterday"}}\n', r"x\.jsonl:1: not valid Extended JSON: a \$date must be an "
                                                   r"ISO-8601 date"),
    (b'{"_id": {"$oid": "12"}}\n', r"x\.jsonl:1: not valid Extended JSON: an \$oid must be 24 hexadecimal"),
    (b'{"p": {"$numberDecimal": "abc"}}\n', r"x\.jsonl:1: not valid Extended JSON: a \$numberDecimal must be"),
    (b'{"n": 99999999999999999999999}\n', r"x\.jsonl:1: an integer does not fit in 64 bits"),
    (b'[{"a": 1} {"a": 2}]', r"x\.jsonl:1:11: not valid JSON: expected , or \] after a document of the array"),
    (b'[{"a": 1}, 5]', r"x\.jsonl:1: expected a JSON object, found int"),
    (b'{"a": 1}\n[1]\n', r"x\.jsonl:2: expected a JSON object, found list"),
    (b'{"a' + b'[' * 300 + b']' * 300 + b'}', r"x\.jsonl:1(:\d+)?: .*nested deeper than 100 levels|not valid JSON"),
    (b"just words", r"x\.jsonl: cannot be read: the content is neither JSON"),
])
def test_bad_bytes_name_the_place_and_the_reason(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(content)
    with pytest.raises(DataLoadError, match=message) as caught:
        load_file(path)
    assert "yesterday" not in str(caught.value)  # reasons never quote the file's values


def test_a_gzip_file_cut_short_is_named(tmp_path: Path) -> None:
    data = gzip.compress(LINES.encode() * 200)
    path = tmp_path / "x.jsonl.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(DataLoadError, match=r"x\.jsonl\.gz: the gzip data is damaged or cut short"):
        load_file(path)


def test_bson_cut_short_or_corrupt_names_the_byte_offset(tmp_path: Path) -> None:
    data = b"".join(bson.encode(d) for d in DOCS)
    first = len(bson.encode(DOCS[0]))
    (tmp_path / "cut.bson").write_bytes(data[:-7])
    with pytest.raises(DataLoadError, match=r"cut\.bson: the document at byte offset \d+: the file ends 7 bytes "
                                            r"before the document does"):
        load_file(tmp_path / "cut.bson")
    corrupt = bytearray(data)
    corrupt[first + 4] = 0x42  # an element type no BSON has
    (tmp_path / "bad.bson").write_bytes(bytes(corrupt))
    with pytest.raises(DataLoadError, match=rf"bad\.bson: the document at byte offset {first}: not a valid BSON"):
        load_file(tmp_path / "bad.bson")


def test_a_signaling_nan_decimal_loads_and_is_counted_as_a_number(tmp_path: Path) -> None:
    """It ended the whole audit: 'cannot convert signaling NaN to float'."""
    (tmp_path / "q.jsonl").write_text('{"_id": 99, "qty": {"$numberDecimal": "sNaN"}}\n'
                                      '{"_id": 100, "qty": {"$numberDecimal": "-sNaN"}}\n{"_id": 101, "qty": 2}\n')
    coll = load_file(tmp_path / "q.jsonl")
    assert coll.count_documents({"qty": {"$type": "number"}}) == 3
    assert coll.count_documents({"qty": {"$in": [float("nan")]}}) == 2


def test_a_file_larger_than_the_memory_budget_is_refused_at_once(tmp_path: Path) -> None:
    (tmp_path / "big.jsonl").write_text('{"a": "some text", "n": 12345}\n' * 20_000)
    with pytest.raises(DataLoadError, match=r"big\.jsonl: its documents need more than 0\.1 MB of memory \(stopped "
                                            r"at .*big\.jsonl:\d+\), more than this machine can spare"):
        load_file(tmp_path / "big.jsonl", max_bytes=50_000)
