"""The one decoder every file read goes through: documents out, or an error naming file, place and reason.

``read_documents(path)`` opens the file, unzips it when its bytes say gzip, tells JSON text from
BSON by content (``detect``) and yields ``(place, document)`` one at a time, streaming: a place is
``file:line`` for JSON (lines, one array, or pretty-printed objects one after another) and
``file: the document at byte offset N`` for BSON. Every failure is a ``DataLoadError`` that says
what is wrong without quoting the file's values (the message reaches logs and stored runs): a JSON
syntax error with the parser's reason and column, an Extended JSON value that is malformed (a bad
``$date``, ``$oid`` or ``$numberDecimal``), text that is not UTF-8 with the encoding it looks like,
a BSON document cut short or unreadable.
"""

from __future__ import annotations

import codecs
import gzip
import json
import re
import struct
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import bson
from bson import json_util
from bson.codec_options import DatetimeConversion
from bson.errors import BSONError
from bson.json_util import JSONOptions

from agent.ejson import MAX_NESTING, depth_of
from agent.engine.store import CODEC
from agent.errors import DataLoadError
from daemon.files.detect import GZIP_MAGIC, Layout, describe_encoding, sniff

__all__ = ["Progress", "open_stream", "read_documents"]

# Canonical-or-relaxed input as mongoexport writes it; dates outside years 1-9999 stay DatetimeMS.
_FILE_JSON = JSONOptions(datetime_conversion=DatetimeConversion.DATETIME_AUTO)
_CHUNK = 1 << 20
_MAX_PENDING = 17 * (1 << 20)  # a document larger than the server's 16 MiB limit is an error, not a refill
_SPACE = re.compile(r"[ \t\r\n]*")
Progress = Callable[[int], None]  # bytes of the file read so far

_VALUE_REASONS = {
    "$oid": "an $oid must be 24 hexadecimal characters",
    "$date": 'a $date must be an ISO-8601 date ("2024-05-01T12:00:00Z"), or milliseconds since 1970',
    "$numberDecimal": "a $numberDecimal must be a decimal number written as a string",
    "$numberLong": "a $numberLong must be an integer written as a string, within 64 bits",
    "$numberInt": "a $numberInt must be an integer written as a string, within 32 bits",
    "$numberDouble": "a $numberDouble must be a number written as a string",
    "$binary": "a $binary must hold base64 data and a subtype",
    "$uuid": "a $uuid must be 32 hexadecimal digits, hyphens allowed",
    "$regularExpression": "a $regularExpression must hold a pattern and options",
    "$timestamp": "a $timestamp must hold t and i as integers",
}


class _BadValue(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _hook(pairs: list[tuple[str, Any]]) -> Any:
    try:
        return json_util.object_pairs_hook(pairs, _FILE_JSON)
    except (ValueError, TypeError, KeyError, BSONError, ArithmeticError, OverflowError) as exc:
        key = next((k for k, _ in pairs if k.startswith("$")), "")
        reason = _VALUE_REASONS.get(key) or (f"a {key} value is malformed ({type(exc).__name__})" if key else
                                             f"a value is malformed ({type(exc).__name__})")
        raise _BadValue(reason) from None


_DECODER = json.JSONDecoder(object_pairs_hook=_hook)


def open_stream(path: Path, progress: Progress | None = None) -> tuple[IO[bytes], bool]:
    """The file's bytes, unzipped when they start as gzip does; and whether they were."""
    raw = _Counting(path.open("rb"), progress)
    if raw.peek(2) == GZIP_MAGIC:
        return gzip.GzipFile(fileobj=raw, mode="rb"), True  # type: ignore[call-overload]
    return raw, False  # type: ignore[return-value]


class _Counting:
    """A binary file that reports how far it has been read (for progress on compressed files too)."""

    def __init__(self, handle: IO[bytes], progress: Progress | None) -> None:
        self._handle, self._progress, self.position = handle, progress, 0
        self._peeked = b""

    def peek(self, n: int) -> bytes:
        if len(self._peeked) < n:
            self._peeked += self._handle.read(n - len(self._peeked))
        return self._peeked[:n]

    def read(self, n: int = -1) -> bytes:
        head, self._peeked = (self._peeked, b"") if n < 0 or n >= len(self._peeked) else \
            (self._peeked[:n], self._peeked[n:])
        more = b"" if n >= 0 and len(head) >= n else self._handle.read(-1 if n < 0 else n - len(head))
        data = head + more
        self.position += len(data)
        if self._progress is not None and data:
            self._progress(self.position)
        return data

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        self._handle.close()

    def __enter__(self) -> _Counting:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_documents(path: Path, progress: Progress | None = None) -> Iterator[tuple[str, dict[str, Any], bytes]]:
    """Every document of ``path``: its place (for messages), the decoded document and its BSON."""
    try:
        stream, zipped = open_stream(path, progress)
    except OSError as exc:
        raise DataLoadError(f"{path}: {exc.strerror or exc}") from None
    with stream:
        try:
            head = _peek(stream)
        except (OSError, EOFError, zlib.error) as exc:
            raise DataLoadError(f"{path}: not a readable gzip file ({_gzip_reason(exc)})") from None
        layout = sniff(head)
        label = f"{path} (gzip)" if zipped else str(path)
        if isinstance(layout, str):
            raise DataLoadError(f"{label}: cannot be read: the content is {layout}")
        try:
            if layout is Layout.BSON:
                yield from _bson_documents(stream, path)
            else:
                yield from _json_documents(stream, path, head, array=layout is Layout.JSON_ARRAY)
        except (OSError, EOFError, zlib.error) as exc:
            if not zipped:
                raise DataLoadError(f"{path}: could not be read: {exc}") from None
            raise DataLoadError(f"{path}: the gzip data is damaged or cut short ({_gzip_reason(exc)})") from None


def _gzip_reason(exc: BaseException) -> str:
    if isinstance(exc, EOFError):
        return "it ends before the end of its data"
    return str(exc).split(":")[0] or type(exc).__name__


def _peek(stream: Any) -> bytes:
    peek = getattr(stream, "peek", None)
    head = peek(4096) if callable(peek) else b""
    return bytes(head[:4096])


# --- JSON --------------------------------------------------------------------------------------------

class _Text:
    """UTF-8 text read a chunk at a time, with the line and column of any position in it."""

    def __init__(self, stream: IO[bytes], path: Path, head: bytes) -> None:
        self._stream, self._path, self._head = stream, path, head
        self._decoder = codecs.getincrementaldecoder("utf-8")()
        self.buf = ""
        self.eof = False
        self.line = 1          # the line of buf[0]
        self.column = 0        # the column of buf[0] within it
        self._bytes_lines = 1  # lines in the bytes read so far (for encoding errors)
        self._first = True
        self._seen = (0, 0)    # (position in buf, newlines before it): lines are counted once

    def more(self) -> bool:
        """Read the next chunk into ``buf``; False at the end of the file."""
        if self.eof:
            return False
        data = self._stream.read(_CHUNK)
        if self._first:
            self._first = False
            if data.startswith(b"\xef\xbb\xbf"):
                data = data[3:]
        try:
            text = self._decoder.decode(data, final=not data)
        except UnicodeDecodeError as exc:
            line = self._bytes_lines + data[:exc.start].count(b"\n")
            column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
            raise DataLoadError(f"{self._path}:{line}:{column}: not UTF-8 (byte 0x{data[exc.start]:02X}); the file "
                                f"looks like {describe_encoding(data[max(exc.start - 2048, 0):exc.start + 2048])}"
                                ) from None
        self._bytes_lines += data.count(b"\n")
        if "\x00" in text:
            line = self.line + self.buf.count("\n") + text[:text.index("\x00")].count("\n")
            raise DataLoadError(f"{self._path}:{line}: holds NUL bytes: the content is "
                                f"{describe_encoding(self._head)}")
        self.buf += text
        if not data:
            self.eof = True
        return bool(data)

    def place(self, pos: int) -> tuple[int, int]:
        """Line and column (1-based) of ``buf[pos]``."""
        seen, counted = self._seen
        if pos >= seen:
            newlines = counted + self.buf.count("\n", seen, pos)
            self._seen = (pos, newlines)
        else:
            newlines = self.buf.count("\n", 0, pos)
        if newlines:
            return self.line + newlines, pos - self.buf.rfind("\n", 0, pos)
        return self.line, self.column + pos + 1

    def drop(self, pos: int) -> None:
        """Forget ``buf[:pos]`` (already decoded)."""
        line, column = self.place(pos)
        self.line, self.column = line, column - 1
        self.buf = self.buf[pos:]
        self._seen = (0, 0)


def _json_documents(stream: IO[bytes], path: Path, head: bytes, *,
                    array: bool) -> Iterator[tuple[str, dict[str, Any], bytes]]:
    text = _Text(stream, path, head)
    text.more()
    pos = _skip(text, 0)
    if array:
        pos += 1  # the opening [
        pos = _skip(text, pos)
        if pos < len(text.buf) and text.buf[pos] == "]":
            _expect_end(text, _skip(text, pos + 1), path)
            return
    while pos < len(text.buf):
        line, _ = text.place(pos)
        try:
            doc, end = _decode_one(text, pos)
        except _BadValue as exc:
            raise DataLoadError(f"{path}:{line}: not valid Extended JSON: {exc.reason}") from None
        except json.JSONDecodeError as exc:
            at_line, at_column = text.place(exc.pos)
            if text.buf[exc.pos:].strip() == "" and text.eof:
                raise DataLoadError(f"{path}:{line}: not valid JSON: the file ends inside the document that starts "
                                    "on this line") from None
            if at_line != line:
                raise DataLoadError(f"{path}:{line}: not valid JSON: {exc.msg} (line {at_line}, column {at_column}, "
                                    "in the document that starts on this line)") from None
            raise DataLoadError(f"{path}:{at_line}:{at_column}: not valid JSON: {exc.msg}") from None
        except RecursionError:
            raise DataLoadError(f"{path}:{line}: the document is nested deeper than {MAX_NESTING} levels, "
                                "MongoDB's limit") from None
        place = f"{path}:{line}"
        if not isinstance(doc, dict):
            raise DataLoadError(f"{place}: expected a JSON object, found {type(doc).__name__}")
        yield place, doc, encode_document(doc, place, text.buf, pos, end)
        pos = _skip(text, end)
        if array:
            if pos < len(text.buf) and text.buf[pos] == ",":
                pos = _skip(text, pos + 1)
            elif pos < len(text.buf) and text.buf[pos] == "]":
                _expect_end(text, _skip(text, pos + 1), path)
                return
            else:
                at_line, at_column = text.place(pos)
                found = "the end of the file" if pos >= len(text.buf) else repr(text.buf[pos])
                raise DataLoadError(f"{path}:{at_line}:{at_column}: not valid JSON: expected , or ] after a document "
                                    f"of the array, found {found}")
        if pos > _CHUNK:
            text.drop(pos)
            pos = 0


def _decode_one(text: _Text, pos: int) -> tuple[Any, int]:
    while True:
        try:
            return _DECODER.raw_decode(text.buf, pos)
        except json.JSONDecodeError:
            if text.eof or len(text.buf) - pos > _MAX_PENDING or not text.more():
                return _DECODER.raw_decode(text.buf, pos)


def _skip(text: _Text, pos: int) -> int:
    while True:
        pos = _SPACE.match(text.buf, pos).end()  # type: ignore[union-attr]
        if pos < len(text.buf) or not text.more():
            return pos


def _expect_end(text: _Text, pos: int, path: Path) -> None:
    if pos < len(text.buf):
        line, column = text.place(pos)
        raise DataLoadError(f"{path}:{line}:{column}: not valid JSON: text after the closing ] of the array")


def encode_document(doc: dict[str, Any], place: str, raw: str = "", start: int = 0, end: int = 0) -> bytes:
    """``doc`` as BSON, or an error naming ``place`` and what the server would refuse in it."""
    if raw and raw.count("{", start, end) + raw.count("[", start, end) > MAX_NESTING \
            and depth_of(doc) > MAX_NESTING:
        raise DataLoadError(f"{place}: the document is nested deeper than {MAX_NESTING} levels, MongoDB's limit")
    try:
        return bson.encode(doc, codec_options=CODEC)
    except OverflowError:
        raise DataLoadError(f"{place}: an integer does not fit in 64 bits, MongoDB's largest integer") from None
    except bson.errors.InvalidDocument as exc:
        reason = "a field name holds a NUL character" if "NUL" in str(exc) or "null" in str(exc).lower() \
            else f"it cannot be stored as BSON ({type(exc).__name__})"
        raise DataLoadError(f"{place}: {reason}") from None
    except (RecursionError, ValueError, TypeError) as exc:
        raise DataLoadError(f"{place}: it cannot be stored as BSON ({type(exc).__name__})") from None


# --- BSON ----------------------------------------------------------------------------------------------

def _bson_documents(stream: IO[bytes], path: Path) -> Iterator[tuple[str, dict[str, Any], bytes]]:
    offset = 0
    while True:
        size_bytes = _read_exactly(stream, 4)
        if not size_bytes:
            return
        place = f"{path}: the document at byte offset {offset}"
        if len(size_bytes) < 4:
            raise DataLoadError(f"{place}: the file ends inside the document's length: the dump is cut short")
        (size,) = struct.unpack("<i", size_bytes)
        if size < 5 or size > 16 * 1024 * 1024 + 16 * 1024:
            raise DataLoadError(f"{place}: a length of {size} bytes is no BSON document (5 bytes to 16 MiB)")
        body = _read_exactly(stream, size - 4)
        if len(body) < size - 4:
            raise DataLoadError(f"{place}: the file ends {size - 4 - len(body)} bytes before the document does: "
                                "the dump is cut short")
        data = size_bytes + body
        try:
            doc = bson.decode(data, CODEC)
        except (BSONError, ValueError, OverflowError, RecursionError) as exc:
            raise DataLoadError(f"{place}: not a valid BSON document ({type(exc).__name__})") from None
        if depth_of(doc) > MAX_NESTING:
            raise DataLoadError(f"{place}: the document is nested deeper than {MAX_NESTING} levels, MongoDB's limit")
        yield place, doc, data
        offset += size


def _read_exactly(stream: IO[bytes], n: int) -> bytes:
    parts = []
    while n > 0:
        data = stream.read(n)
        if not data:
            break
        parts.append(data)
        n -= len(data)
    return b"".join(parts)
