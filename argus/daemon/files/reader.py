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
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import bson
from bson import json_util
from bson.codec_options import DatetimeConversion
from bson.errors import BSONError
from bson.json_util import JSONOptions

from argus.agent.ejson import MAX_NESTING, check_wrapper, depth_of
from argus.agent.engine.store import CODEC
from argus.agent.errors import DataLoadError
from argus.daemon.files.detect import GZIP_MAGIC, Layout, describe_encoding, sniff

__all__ = ["MAX_DOCUMENT", "LoadDeadline", "Progress", "open_stream", "read_documents"]

# Canonical-or-relaxed input as mongoexport writes it; dates outside years 1-9999 stay DatetimeMS.
_FILE_JSON = JSONOptions(datetime_conversion=DatetimeConversion.DATETIME_AUTO)
_CHUNK = 1 << 20
MAX_DOCUMENT = 16 * (1 << 20)  # MongoDB's document limit (BSON bytes)
_MAX_PENDING = MAX_DOCUMENT + _CHUNK  # text of a document not ended by then is past the limit, not refilled
_SPACE = re.compile(r"[ \t\r\n]*")
Progress = Callable[[int], None]  # bytes of the file read so far

_VALUE_REASONS = {
    "$oid": "an $oid must be 24 hexadecimal characters",
    "$date": 'a $date must be an ISO-8601 date ("2024-05-01T12:00:00Z"), or milliseconds since 1970',
    "$numberDecimal": "a $numberDecimal must be a decimal number written as a string",
    "$numberLong": "a $numberLong must be an integer written as a string, within 64 bits",
    "$numberInt": "a $numberInt must be an integer written as a string, within 32 bits",
    "$numberDouble": "a $numberDouble must be a number written as a string",
    "$binary": "a $binary must hold base64 data (A-Z, a-z, 0-9, + and /, padded with =) and a subtype",
    "$uuid": "a $uuid must be 32 hexadecimal digits, hyphens allowed",
    "$regularExpression": "a $regularExpression must hold a pattern and options",
    "$timestamp": "a $timestamp must hold t and i as integers",
}


@dataclass(frozen=True)
class LoadDeadline:
    """When reading a file must stop: loading counts against the run's time budget, so a gzip bomb or a
    file of a hundred million tiny documents ends at the budget, not hours later. ``clock`` is
    injected (tests pass one that has already run out)."""

    at: float
    budget_s: float
    clock: Callable[[], float] = time.monotonic

    @classmethod
    def after(cls, budget_s: float, clock: Callable[[], float] = time.monotonic) -> LoadDeadline:
        return cls(at=clock() + budget_s, budget_s=budget_s, clock=clock)

    def check(self, path: Path, where: str) -> None:
        if self.clock() >= self.at:
            raise DataLoadError(f"{path}: the run's time budget of {self.budget_s:g}s ran out while loading the file "
                                f"({where}); audit a part of it, or give a longer --time-budget")


class _BadValue(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _hook(pairs: list[tuple[str, Any]]) -> Any:
    try:
        check_wrapper(pairs)
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


def read_documents(path: Path, progress: Progress | None = None, *,
                   deadline: LoadDeadline | None = None) -> Iterator[tuple[str, dict[str, Any], bytes]]:
    """Every document of ``path``: its place (for messages), the decoded document and its BSON. Past
    ``deadline`` the read stops with a ``DataLoadError`` (checked at every chunk of text and every
    document of BSON)."""
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
                yield from _bson_documents(stream, path, deadline)
            else:
                yield from _json_documents(stream, path, head, array=layout is Layout.JSON_ARRAY, deadline=deadline)
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

    def __init__(self, stream: IO[bytes], path: Path, head: bytes, deadline: LoadDeadline | None) -> None:
        self._stream, self._path, self._head, self._deadline = stream, path, head, deadline
        self._decoder = codecs.getincrementaldecoder("utf-8")()
        self.path = path
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
        if self._deadline is not None:
            self._deadline.check(self._path, f"at line {self.line + self.buf.count(chr(10))}")
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


def _json_documents(stream: IO[bytes], path: Path, head: bytes, *, array: bool,
                    deadline: LoadDeadline | None) -> Iterator[tuple[str, dict[str, Any], bytes]]:
    text = _Text(stream, path, head, deadline)
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
        except _TooLong:
            raise DataLoadError(f"{path}:{line}: the document that starts on this line runs past "
                                f"{_MAX_PENDING // (1 << 20)} MiB of text without ending: it is past MongoDB's 16 MiB "
                                "document limit") from None
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


class _TooLong(Exception):
    pass


def _decode_one(text: _Text, pos: int) -> tuple[Any, int]:
    """The document starting at ``pos``, reading more text while it is cut short; a document whose
    text has not ended within ``_MAX_PENDING`` characters raises ``_TooLong``, unread further."""
    while True:
        try:
            return _DECODER.raw_decode(text.buf, pos)
        except json.JSONDecodeError as exc:
            if len(text.buf) - pos > _MAX_PENDING:
                if exc.msg.startswith("Unterminated string") or exc.pos >= len(text.buf) - 16:
                    raise _TooLong() from None  # the text ran out, not a wrong character
                raise
            if text.eof or not text.more():
                raise


def _skip(text: _Text, pos: int) -> int:
    """The position of the next non-space character; space read through is forgotten as it is read
    (a gzip of 2 GiB of spaces is never held whole), and a line of spaces past the document limit
    is refused at its line."""
    while True:
        pos = _SPACE.match(text.buf, pos).end()  # type: ignore[union-attr]
        if pos < len(text.buf):
            return pos
        line, column = text.place(pos)
        if column > _MAX_PENDING:
            raise DataLoadError(f"{text.path}:{line}: the line runs past {_MAX_PENDING // (1 << 20)} MiB (of "
                                "spaces) without ending: past MongoDB's 16 MiB document limit")
        if pos:
            text.drop(pos)
            pos = 0
        if not text.more():
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
        data = bson.encode(doc, codec_options=CODEC)
    except OverflowError:
        raise DataLoadError(f"{place}: an integer does not fit in 64 bits, MongoDB's largest integer") from None
    except bson.errors.InvalidDocument as exc:
        raise DataLoadError(f"{place}: {_unstorable(str(exc))}") from None
    except (RecursionError, ValueError, TypeError) as exc:
        raise DataLoadError(f"{place}: it cannot be stored as BSON ({type(exc).__name__})") from None
    if len(data) > MAX_DOCUMENT:
        raise DataLoadError(f"{place}: the document takes {len(data) / (1 << 20):,.1f} MiB as BSON, past MongoDB's "
                            "16 MiB document limit")
    return data


def _unstorable(message: str) -> str:
    """What pymongo's InvalidDocument says, in words that name the part (never its value)."""
    lowered = message.lower()
    if "regex" in lowered and ("null" in lowered or "nul" in lowered):
        return "a $regex pattern (or its options) holds a NUL character, which BSON cannot store"
    if "key" in lowered and ("null" in lowered or "nul" in lowered):
        return "a field name holds a NUL character"
    return "it cannot be stored as BSON (InvalidDocument)"


# --- BSON ----------------------------------------------------------------------------------------------

def _bson_documents(stream: IO[bytes], path: Path,
                    deadline: LoadDeadline | None) -> Iterator[tuple[str, dict[str, Any], bytes]]:
    offset = 0
    while True:
        if deadline is not None:
            deadline.check(path, f"at byte offset {offset}")
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
        if data[-1] != 0:
            raise DataLoadError(f"{place}: its declared length of {size} bytes ends at byte offset "
                                f"{offset + size - 1}, which holds 0x{data[-1]:02X}, not the 0x00 that ends a BSON "
                                f"document: the length is wrong or the document is damaged")
        try:
            doc = bson.decode(data, CODEC)
        except (BSONError, ValueError, OverflowError, RecursionError) as exc:
            fits = _content_length(data)
            if fits is not None:
                raise DataLoadError(f"{place}: its elements end at byte offset {offset + fits - 1} (a document of "
                                    f"{fits} bytes) but its length says {size} bytes: the length is wrong") from None
            raise DataLoadError(f"{place}: not a valid BSON document ({_bson_reason(exc)})") from None
        if depth_of(doc) > MAX_NESTING:
            raise DataLoadError(f"{place}: the document is nested deeper than {MAX_NESTING} levels, MongoDB's limit")
        yield place, doc, data
        offset += size


def _content_length(data: bytes, tries: int = 1000) -> int | None:
    """The length at which ``data``'s elements make a valid document, when its declared length is
    wrong (a dump written by a broken tool): the first terminator that closes a readable document."""
    for end in range(5, len(data)):
        if data[end - 1] != 0:
            continue
        tries -= 1
        if tries < 0:
            return None
        try:
            bson.decode(struct.pack("<i", end) + data[4:end], CODEC)
        except (BSONError, ValueError, OverflowError, RecursionError):
            continue
        return end
    return None


def _bson_reason(exc: BaseException) -> str:
    """pymongo's reason for an unreadable document, when it names the structure (never a value)."""
    text = str(exc)
    known = ("bad eoo", "invalid object length", "invalid object size", "objsize too large", "invalid length",
             "bad string length", "invalid string length", "no c-string terminator", "not a valid type")
    for phrase in known:
        if phrase in text.lower():
            return f"{type(exc).__name__}: {phrase}"
    return type(exc).__name__


def _read_exactly(stream: IO[bytes], n: int) -> bytes:
    parts = []
    while n > 0:
        data = stream.read(n)
        if not data:
            break
        parts.append(data)
        n -= len(data)
    return b"".join(parts)
