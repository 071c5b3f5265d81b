"""What a file holds, told from its first bytes rather than its name.

``mongoexport`` writes JSON lines, or one JSON array with ``--jsonArray``, either often gzipped;
``mongodump`` writes BSON (``collection.bson``, ``.bson.gz`` with ``--gzip``). ``sniff`` reads the
start of a (decompressed) stream and says which, or why it is none of them: UTF-16 text, bytes that
look like Latin-1, or binary data.
"""

from __future__ import annotations

import enum
import struct
from typing import Final

__all__ = ["GZIP_MAGIC", "Layout", "describe_encoding", "looks_like_bson", "sniff"]

GZIP_MAGIC: Final = b"\x1f\x8b"
_BSON_TYPES = frozenset([*range(0x01, 0x14), 0x7F, 0xFF])
_MAX_BSON = 16 * 1024 * 1024 + 16 * 1024  # the server's document limit, plus its internal slack
_WHITESPACE = b" \t\r\n"


class Layout(enum.Enum):
    JSON_LINES = "JSON lines"
    JSON_ARRAY = "a JSON array"
    BSON = "BSON"


def looks_like_bson(head: bytes) -> bool:
    """A little-endian length no larger than the server's limit, then a known element type (or an
    empty document); JSON text cannot start that way (its fifth byte is printable)."""
    if len(head) < 5:
        return False
    (length,) = struct.unpack_from("<i", head)
    if length < 0 or length > _MAX_BSON:
        return False
    if length == 5 and head[4] == 0:
        return True
    if head[4] not in _BSON_TYPES:
        return False
    # A type byte, then a field name ending in NUL: BSON shape even when the length or the terminator
    # is wrong, which the BSON reader then names at its offset (JSON or UTF-16 text never starts so).
    name_end = head.find(b"\x00", 5, 5 + 1024)
    return name_end > 5 or (name_end == 5 and length >= 5) or length > len(head) or head[length - 1] == 0


def describe_encoding(data: bytes) -> str:
    """What encoding bytes that are not UTF-8 look like, for the error message."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")) or (len(data) > 3 and data[1:4:2] == b"\x00\x00"):
        return "UTF-16 text; convert it to UTF-8 (iconv -f UTF-16 -t UTF-8)"
    if b"\x00" in data[:4096]:
        return "binary data, neither JSON text nor BSON"
    try:
        data.decode("cp1252")
    except UnicodeDecodeError:
        return "text in an unknown 8-bit encoding; convert it to UTF-8"
    return "Latin-1 or Windows-1252 text; convert it to UTF-8 (iconv -f WINDOWS-1252 -t UTF-8)"


def sniff(head: bytes) -> Layout | str:
    """The layout of a stream starting with ``head``, or a sentence saying why it has none."""
    if not head:
        return Layout.JSON_LINES  # empty: no documents
    if looks_like_bson(head):
        return Layout.BSON
    text = head[3:] if head.startswith(b"\xef\xbb\xbf") else head
    first = text.lstrip(_WHITESPACE)[:1]
    if first == b"[":
        return Layout.JSON_ARRAY
    if first == b"{":
        return Layout.JSON_LINES
    if head.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in head[:4096]:
        return describe_encoding(head)
    if not first:
        return Layout.JSON_LINES
    return "neither JSON (it does not start with { or [) nor BSON"
