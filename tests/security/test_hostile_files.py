"""Files a hostile or careless user hands ``argus audit --file``: each is refused at its line or byte
offset, with what is wrong, within the run's time budget and bounded memory; none loads as something
it is not."""

from __future__ import annotations

import gzip
import struct
from itertools import count
from pathlib import Path

import bson
import pytest
from typer.testing import CliRunner

from argus.agent.errors import DataLoadError
from argus.daemon.cli import app
from argus.daemon.files import load_file
from argus.daemon.files.reader import LoadDeadline

MIB = 1 << 20


def _gzip(path: Path, piece: bytes, times: int, tail: bytes = b"") -> Path:
    with gzip.open(path, "wb", compresslevel=6) as out:
        for _ in range(times):
            out.write(piece)
        out.write(tail)
    return path


def test_a_gzip_bomb_of_one_line_is_refused_at_its_line_before_it_is_read_whole(tmp_path: Path) -> None:
    """100 MB of spaces in one line compress to about 100 KB; the line is refused once it passes the
    document limit, having read a fifth of the file."""
    path = _gzip(tmp_path / "bomb.jsonl.gz", b" " * MIB, 100, b'{"a": 1}\n')
    assert path.stat().st_size < 200_000
    read: list[int] = []
    with pytest.raises(DataLoadError) as caught:
        load_file(path, progress=lambda done, size: read.append(done))
    assert str(caught.value) == (f"{path}:1: the line runs past 17 MiB (of spaces) without ending: past MongoDB's "
                                 "16 MiB document limit")
    assert max(read) < path.stat().st_size / 2


def test_spaces_between_documents_are_forgotten_as_they_are_read(tmp_path: Path) -> None:
    """Many short lines of spaces are no document and no error: they are read through, not kept."""
    path = _gzip(tmp_path / "spaced.jsonl.gz", b" " * 1000 + b"\n", 30_000, b'{"a": 1}\n')
    assert load_file(path).count_documents({}) == 1


def test_loading_stops_at_the_time_budget_with_many_tiny_documents(tmp_path: Path) -> None:
    path = _gzip(tmp_path / "tiny.jsonl.gz", b"{}\n" * 100_000, 20)  # 2 million documents
    ticks = count()
    deadline = LoadDeadline(at=3, budget_s=20, clock=lambda: next(ticks))  # runs out at its third check
    with pytest.raises(DataLoadError, match=r"tiny\.jsonl\.gz: the run's time budget of 20s ran out while loading "
                                            r"the file \(at line \d+\); audit a part of it, or give a longer "
                                            r"--time-budget") as caught:
        load_file(path, deadline=deadline)
    line = int(str(caught.value).split("at line ")[1].split(")")[0])
    assert line < 2_000_000


def test_loading_a_dump_stops_at_the_time_budget(tmp_path: Path) -> None:
    path = tmp_path / "orders.bson"
    path.write_bytes(bson.encode({"a": 1}) * 1000)
    deadline = LoadDeadline(at=0, budget_s=5, clock=lambda: 1.0)
    with pytest.raises(DataLoadError, match=r"orders\.bson: the run's time budget of 5s ran out while loading the "
                                            r"file \(at byte offset 0\)"):
        load_file(path, deadline=deadline)


def test_the_cli_counts_loading_against_the_time_budget(tmp_path: Path) -> None:
    path = _gzip(tmp_path / "tiny.jsonl.gz", b"{}\n" * 1_000_000, 30)  # 30 million documents
    result = CliRunner().invoke(app, ["audit", "--file", str(path), "--time-budget", "0.5", "--no-store"])
    assert result.exit_code == 2
    assert "the run's time budget of 0.5s ran out while loading the file" in result.output


def test_a_json_line_past_the_document_limit_says_so(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    path.write_text('{"a": 1}\n{"a": "' + "x" * (20 * MIB) + '"}\n{"a": 2}\n')
    with pytest.raises(DataLoadError) as caught:
        load_file(path)
    assert str(caught.value) == (f"{path}:2: the document that starts on this line runs past 17 MiB of text without "
                                 "ending: it is past MongoDB's 16 MiB document limit")


def test_a_document_past_16_mib_as_bson_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "wide.jsonl"
    path.write_text('{"a": [' + ",".join(["1"] * (3 * MIB)) + "]}\n")  # 6 MiB of text, 38 MiB of BSON
    with pytest.raises(DataLoadError, match=r"wide\.jsonl:1: the document takes \d+\.\d MiB as BSON, past MongoDB's "
                                            r"16 MiB document limit"):
        load_file(path)


_DOC = bson.encode({"a": 1, "b": "xyz"})  # 23 bytes


@pytest.mark.parametrize(("data", "message"), [
    (struct.pack("<i", 0) + _DOC[4:] + _DOC, "a length of 0 bytes is no BSON document (5 bytes to 16 MiB)"),
    (struct.pack("<i", 26) + _DOC[4:] + _DOC, "its elements end at byte offset 22 (a document of 23 bytes) but its "
                                              "length says 26 bytes: the length is wrong"),
    (struct.pack("<i", 33) + _DOC[4:] + _DOC, "its elements end at byte offset 22 (a document of 23 bytes) but its "
                                              "length says 33 bytes: the length is wrong"),
    (struct.pack("<i", 26) + _DOC[4:], "the file ends 3 bytes before the document does: the dump is cut short"),
    (_DOC[:-1] + _DOC, "its declared length of 23 bytes ends at byte offset 22, which holds 0x17, not the 0x00 that "
                       "ends a BSON document: the length is wrong or the document is damaged"),
], ids=["length 0", "3 more", "10 more", "3 more, alone", "no terminator"])
def test_a_damaged_dump_names_what_is_wrong_at_its_byte_offset(tmp_path: Path, data: bytes, message: str) -> None:
    path = tmp_path / "orders.bson"
    path.write_bytes(data)
    with pytest.raises(DataLoadError) as caught:
        load_file(path)
    assert str(caught.value) == f"{path}: the document at byte offset 0: {message}"


@pytest.mark.parametrize("line", ['{"a": {"$regex": "a\\u0000b", "$options": ""}}',
                                  '{"a": {"$regularExpression": {"pattern": "a\\u0000b", "options": ""}}}'])
def test_a_nul_inside_a_regex_is_named_as_such(tmp_path: Path, line: str) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n' + line + "\n")
    with pytest.raises(DataLoadError) as caught:
        load_file(path)
    assert str(caught.value) == f"{path}:2: a $regex pattern (or its options) holds a NUL character, which BSON " \
                                "cannot store"


@pytest.mark.parametrize(("value", "reason"), [
    ('{"$numberInt": "2147483648"}', "a $numberInt must be an integer written as a string, within 32 bits"),
    ('{"$numberInt": "-2147483649"}', "a $numberInt must be an integer written as a string, within 32 bits"),
    ('{"$numberInt": "12abc"}', "a $numberInt must be an integer written as a string, within 32 bits"),
    ('{"$binary": {"base64": "!!!", "subType": "00"}}', "a $binary must hold base64 data"),
    ('{"$binary": {"base64": "!!!"}}', "a $binary must hold base64 data"),
    ('{"$binary": "!!!", "$type": "00"}', "a $binary must hold base64 data"),
])
def test_invalid_extended_json_is_refused_at_its_line(tmp_path: Path, value: str, reason: str) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": {"$numberInt": "2147483647"}, "b": {"$binary": {"base64": "AAE=", "subType": "00"}}}\n'
                    f'{{"a": {value}}}\n')
    with pytest.raises(DataLoadError) as caught:
        load_file(path)
    assert str(caught.value).startswith(f"{path}:2: not valid Extended JSON: {reason}")


def test_a_schedules_file_load_stops_at_the_runs_time_budget(tmp_path: Path) -> None:
    """The daemon's file connections load through the same reader, within the schedule's budget."""
    from argus.config.schedule_models import Connection
    from argus.daemon.sources import SourceCache

    path = _gzip(tmp_path / "tiny.jsonl.gz", b"{}\n" * 100_000, 5)
    connection = Connection(files={"tiny": path})
    expired = LoadDeadline(at=0, budget_s=300, clock=lambda: 1.0)
    with pytest.raises(DataLoadError, match=r"tiny\.jsonl\.gz: the run's time budget of 300s ran out while loading"):
        SourceCache().target("demo", connection, "files", "tiny", max_time_ms=1000, deadline=expired)
    assert SourceCache().target("demo", connection, "files", "tiny", max_time_ms=1000).count_documents({}) == 500_000
