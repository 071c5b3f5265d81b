"""Documents kept as BSON, in batches, and decoded one batch at a time for each read.

BSON is about a fifth of the memory the same documents take as Python objects, and decoding it is
C code (a few microseconds a document), so a read decodes a batch, runs it through the query and
lets it go: a pass over a million documents holds one batch of Python objects at a time. Each read
gets documents of its own, so no read can change what another sees. Dates decode as naive UTC
datetimes, and those outside years 1-9999 as ``DatetimeMS``, exactly as ``AuditTarget`` reads a
live server.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator
from typing import Any

import bson
from bson.codec_options import CodecOptions, DatetimeConversion

__all__ = ["BATCH_DOCUMENTS", "CODEC", "DocumentStore"]

BATCH_DOCUMENTS = 1024
_BATCH_BYTES = 1 << 20
CODEC: CodecOptions[dict[str, Any]] = CodecOptions(datetime_conversion=DatetimeConversion.DATETIME_AUTO)


class DocumentStore:
    """An append-only sequence of BSON documents, in insertion order."""

    def __init__(self) -> None:
        self._sealed: list[tuple[bytes, array[int]]] = []
        self._open = bytearray()
        self._offsets: array[int] = array("Q", [0])
        self._count = 0
        self.nbytes = 0

    @classmethod
    def of(cls, documents: Iterable[Any]) -> DocumentStore:
        store = cls()
        for doc in documents:
            store.append(bson.encode(doc, codec_options=CODEC))
        store.seal()
        return store

    def append(self, encoded: bytes) -> None:
        """One document, already BSON-encoded (as ``bson.encode`` or a ``.bson`` file gives it)."""
        self._open += encoded
        self._offsets.append(len(self._open))
        self._count += 1
        self.nbytes += len(encoded)
        if len(self._offsets) > BATCH_DOCUMENTS or len(self._open) >= _BATCH_BYTES:
            self._seal()

    def seal(self) -> None:
        """Close the batch being filled (loading is over: reads then share immutable batches)."""
        self._seal()

    def _seal(self) -> None:
        if len(self._offsets) > 1:
            self._sealed.append((bytes(self._open), self._offsets))
            self._open = bytearray()
            self._offsets = array("Q", [0])

    def __len__(self) -> int:
        return self._count

    def _chunks(self) -> Iterator[tuple[bytes, array[int]]]:
        yield from self._sealed
        if len(self._offsets) > 1:
            yield bytes(self._open), self._offsets

    def batches(self) -> Iterator[list[dict[str, Any]]]:
        """Every document, decoded afresh, a batch at a time."""
        for data, _ in self._chunks():
            yield bson.decode_all(data, CODEC)

    def documents(self, positions: Iterable[int]) -> list[dict[str, Any]]:
        """The documents at ``positions`` (insertion order numbers), decoded, in the order asked."""
        chunks = list(self._chunks())
        starts = [0]
        for _, offsets in chunks:
            starts.append(starts[-1] + len(offsets) - 1)
        out = []
        for position in positions:
            chunk = _bisect(starts, position)
            data, offsets = chunks[chunk]
            i = position - starts[chunk]
            out.append(bson.decode(data[offsets[i]:offsets[i + 1]], CODEC))
        return out


def _bisect(starts: list[int], position: int) -> int:
    lo, hi = 0, len(starts) - 1
    while lo < hi - 1:
        mid = (lo + hi) // 2
        if starts[mid] <= position:
            lo = mid
        else:
            hi = mid
    return lo
