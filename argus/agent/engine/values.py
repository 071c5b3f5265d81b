"""BSON values as MongoDB orders, compares and groups them.

MongoDB compares values of different types by a canonical type order (MinKey, null, numbers,
strings, objects, arrays, binary data, ObjectId, booleans, dates, timestamps, regular
expressions, MaxKey); numbers of every width compare by value (``1 == 1.0 ==
Decimal128("1")``), NaN sorts above null and below every other number and equals only NaN, and
booleans are never numbers. ``sort_key`` turns a decoded value into a Python key with exactly that order,
``group_key`` into a hashable key with MongoDB's equality (what ``$group`` and ``$addToSet``
use). ``MISSING`` stands for an absent field (it sorts below null in expressions).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, Final

from bson import Binary, Code, Decimal128, Int64, MaxKey, MinKey, ObjectId, Regex, Timestamp
from bson.datetime_ms import DatetimeMS
from bson.dbref import DBRef

__all__ = [
    "MISSING",
    "NUMBER_TYPES",
    "TYPE_NAMES",
    "bson_type",
    "date_ms",
    "group_key",
    "is_nan",
    "is_number",
    "number_value",
    "rank",
    "sort_key",
    "truthy",
    "type_code",
]


class _Missing:
    """An absent field: not null, and below null in MongoDB's expression order."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Final = _Missing()

NUMBER_TYPES = (int, float, Decimal128)
_EPOCH = datetime(1970, 1, 1)
_EPOCH_AWARE = datetime(1970, 1, 1, tzinfo=UTC)
_INT32 = range(-(2 ** 31), 2 ** 31)

# Canonical ranks (bsontypes.h canonicalizeBSONType), spaced as the server spaces them.
_MINKEY, _MISSING, _NULL, _NUMBER, _STRING, _OBJECT, _ARRAY, _BINARY, _OID, _BOOL, _DATE, _TIMESTAMP, _REGEX, \
    _CODE, _MAXKEY = -1, 0, 5, 10, 15, 20, 25, 30, 35, 40, 45, 47, 50, 60, 127
_NAN_KEY = (_NUMBER, 0, 0)  # NaN: a number (above null and missing), below every other number, equal only to NaN


def is_number(value: Any) -> bool:
    return isinstance(value, NUMBER_TYPES) and not isinstance(value, bool)


def number_value(value: Any) -> int | float | Decimal:
    """A number as a Python value that compares exactly with the others (Decimal128 → Decimal; a
    decimal NaN, signaling or quiet, → float NaN, which compares without raising)."""
    if isinstance(value, Decimal128):
        number = value.to_decimal()
        return float("nan") if number.is_nan() else number
    return value


def is_nan(value: Any) -> bool:
    if isinstance(value, float):
        return value != value
    if isinstance(value, Decimal128):
        return value.to_decimal().is_nan()
    if isinstance(value, Decimal):
        return value.is_nan()
    return False


def truthy(value: Any) -> bool:
    """MongoDB's truth in expressions: false, null, missing and zero are false; all else is true."""
    if value is None or value is MISSING or value is False:
        return False
    if is_number(value):
        return bool(number_value(value)) or is_nan(value)
    return True


def date_ms(value: datetime | DatetimeMS) -> int:
    """Milliseconds since the epoch, as BSON stores a date (naive datetimes are UTC)."""
    if isinstance(value, DatetimeMS):
        return int(value)
    delta = value - (_EPOCH_AWARE if value.tzinfo is not None else _EPOCH)
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def rank(value: Any) -> int:
    """The canonical type rank of a decoded BSON value (``MISSING`` lowest)."""
    if value is None:
        return _NULL
    if value is MISSING:
        return _MISSING
    if isinstance(value, bool):
        return _BOOL
    if isinstance(value, NUMBER_TYPES):
        return _NUMBER
    if isinstance(value, str):
        return _CODE if isinstance(value, Code) else _STRING
    if isinstance(value, Mapping | DBRef):
        return _OBJECT
    if isinstance(value, list | tuple):
        return _ARRAY
    if isinstance(value, bytes | uuid.UUID):
        return _BINARY
    if isinstance(value, ObjectId):
        return _OID
    if isinstance(value, datetime | DatetimeMS):
        return _DATE
    if isinstance(value, Timestamp):
        return _TIMESTAMP
    if isinstance(value, Regex | re.Pattern):
        return _REGEX
    if isinstance(value, MinKey):
        return _MINKEY
    if isinstance(value, MaxKey):
        return _MAXKEY
    raise TypeError(f"no BSON type for a Python {type(value).__name__}")


def _binary(value: bytes | uuid.UUID) -> tuple[int, int, bytes]:
    if isinstance(value, uuid.UUID):
        return (16, 4, value.bytes)
    subtype = value.subtype if isinstance(value, Binary) else 0
    return (len(value), subtype, bytes(value))


def sort_key(value: Any) -> tuple[Any, ...]:
    """A key whose Python order is MongoDB's order of BSON values (``$sort``, ``$min``, ``$max``,
    expression comparisons). Documents compare field by field (type, name, value), arrays element by
    element, then by length."""
    r = rank(value)
    if r == _NUMBER:
        number = number_value(value)
        if number != number:  # NaN, float or decimal (sNaN included)
            return _NAN_KEY
        return (r, 1, number)
    if r == _STRING:
        return (r, value)
    if r == _OBJECT:
        doc = value.as_doc() if isinstance(value, DBRef) else value
        return (r, tuple((rank(v), k, sort_key(v)) for k, v in doc.items()))
    if r == _ARRAY:
        return (r, tuple(sort_key(v) for v in value))
    if r == _DATE:
        return (r, date_ms(value))
    if r == _OID:
        return (r, value.binary)
    if r == _BOOL:
        return (r, bool(value))
    if r == _BINARY:
        return (r, _binary(value))
    if r == _TIMESTAMP:
        return (r, value.time, value.inc)
    if r == _REGEX:
        return (r, str(value.pattern), str(value.flags))
    if r == _CODE:
        return (r, str(value))
    return (r,)


def group_key(value: Any) -> Any:
    """A hashable key equal for values MongoDB's ``$group`` puts together: numbers of any width by
    value (NaN with NaN), strings by their code points, documents and arrays element by element."""
    r = rank(value)
    if r == _NUMBER:
        number = number_value(value)
        if number != number:
            return (_NUMBER, "nan")
        return (_NUMBER, number)  # Python hashes equal numbers of every width alike
    if r in (_STRING, _BOOL):
        return (r, value)
    if r in (_NULL, _MISSING):
        return (_NULL,)
    if r == _OBJECT:
        doc = value.as_doc() if isinstance(value, DBRef) else value
        return (r, tuple((k, group_key(v)) for k, v in doc.items()))
    if r == _ARRAY:
        return (r, tuple(group_key(v) for v in value))
    return sort_key(value)


_TYPE_CODES = {
    "double": 1, "string": 2, "object": 3, "array": 4, "binData": 5, "undefined": 6, "objectId": 7, "bool": 8,
    "date": 9, "null": 10, "regex": 11, "dbPointer": 12, "javascript": 13, "symbol": 14,
    "javascriptWithScope": 15, "int": 16, "timestamp": 17, "long": 18, "decimal": 19, "minKey": -1, "maxKey": 127,
}
TYPE_NAMES = {code: name for name, code in _TYPE_CODES.items()}


def bson_type(value: Any) -> str:
    """MongoDB's type name of a decoded value (what ``$type`` tests and the ``$type`` expression returns)."""
    if value is None:
        return "null"
    if value is MISSING:
        return "missing"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, Int64):
        return "long"
    if isinstance(value, int):
        return "int" if value in _INT32 else "long"
    if isinstance(value, float):
        return "double"
    if isinstance(value, Decimal128 | Decimal):
        return "decimal"
    if isinstance(value, Code):
        return "javascriptWithScope" if value.scope is not None else "javascript"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping | DBRef):
        return "object"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, bytes | uuid.UUID):
        return "binData"
    if isinstance(value, ObjectId):
        return "objectId"
    if isinstance(value, datetime | DatetimeMS):
        return "date"
    if isinstance(value, Timestamp):
        return "timestamp"
    if isinstance(value, Regex | re.Pattern):
        return "regex"
    if isinstance(value, MinKey):
        return "minKey"
    if isinstance(value, MaxKey):
        return "maxKey"
    raise TypeError(f"no BSON type for a Python {type(value).__name__}")


def type_code(name: Any) -> str | None:
    """The type name a ``$type`` argument asks for (a name, a number, or ``"number"``), or None."""
    if isinstance(name, str):
        return name if name in _TYPE_CODES or name == "number" else None
    if is_number(name) and not is_nan(name):
        numeric = number_value(name)
        if numeric == int(numeric):
            return TYPE_NAMES.get(int(numeric))
    return None
