"""MongoDB Extended JSON at the boundary between planners, reports and pymongo.

Queries cross the planner boundary as JSON (a planner may be an LLM), so every filter an action
carries is relaxed Extended JSON (``{"$date": ...}``, ``{"$oid": ...}``). Tools decode it into
BSON values before the guard and the driver see it; results are encoded back before they leave
a tool. Both directions are lossless for every BSON type pymongo knows, within MongoDB's own
nesting limit: nothing here recurses into a value before its depth is known, so a hostile value
nested 1,000 levels deep is refused (``decode``) or cut with a marker (``encode``, ``bounded``)
instead of raising ``RecursionError``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from bson import json_util
from bson.codec_options import DatetimeConversion
from bson.dbref import DBRef
from bson.errors import BSONError
from bson.json_util import JSONMode, JSONOptions

from argus.agent.errors import QueryRefused

__all__ = ["MAX_NESTING", "NestedTooDeep", "bounded", "canonical_key", "check_wrapper", "decode", "depth_of", "encode",
           "filter_key", "parse_json"]

# MongoDB refuses documents nested deeper than 100 levels; nothing Argus handles needs more.
MAX_NESTING = 100

# DATETIME_AUTO: a date before year 1 or after 9999 stays a DatetimeMS instead of failing the decode.
_RELAXED = JSONOptions(json_mode=JSONMode.RELAXED, tz_aware=True, datetime_conversion=DatetimeConversion.DATETIME_AUTO)


class NestedTooDeep(QueryRefused, ValueError):
    """A value nested past ``MAX_NESTING``: refused like a query (the message says why) and, like every
    other value that cannot be decoded, a ``ValueError``."""


_LEAVES = frozenset({str, int, float, bool, type(None), bytes})  # never containers: skipped without an isinstance


def _children(value: Any) -> list[Any] | None:
    """The values a container holds, or None for a scalar."""
    kind = type(value)
    if kind is dict:
        return list(value.values())
    if kind is list or kind is tuple:
        return value
    if kind in _LEAVES:
        return None
    if isinstance(value, Mapping):
        return list(value.values())
    if isinstance(value, list | tuple):
        return list(value)
    if isinstance(value, DBRef):
        return list(value.as_doc().values())
    return None


def depth_of(value: Any, *, stop_at: int = MAX_NESTING) -> int:
    """Nesting depth of ``value`` (a scalar is 0, ``{"a": 1}`` is 1), counted without recursion.

    Counting stops once ``stop_at`` is exceeded, so a hostile value costs at most its size.
    """
    deepest = 0
    stack: list[tuple[list[Any], int]] = []
    children = _children(value)
    if children is not None:
        stack.append((children, 1))
    while stack:
        items, depth = stack.pop()
        if depth > deepest:
            deepest = depth
            if deepest > stop_at:
                return deepest
        for item in items:
            if type(item) in _LEAVES:
                continue
            inner = _children(item)
            if inner is not None:
                stack.append((inner, depth + 1))
    return deepest


def bounded(value: Any, max_depth: int = MAX_NESTING) -> Any:
    """``value`` with every container nested deeper than ``max_depth`` replaced by a marker string.

    Values within the limit come back unchanged (the same object), so the common case costs one walk.
    """
    if depth_of(value, stop_at=max_depth) <= max_depth:
        return value
    marker = f"<nested deeper than {max_depth} levels>"
    root: list[Any] = [None]
    stack: list[tuple[Any, list[Any] | dict[Any, Any], Any, int]] = [(value, root, 0, 0)]
    while stack:
        item, parent, slot, depth = stack.pop()
        if isinstance(item, DBRef):
            item = item.as_doc()
        if isinstance(item, Mapping | list | tuple) and depth >= max_depth:
            parent[slot] = marker
        elif isinstance(item, Mapping):
            copy: dict[Any, Any] = {}
            parent[slot] = copy
            for key, child in item.items():
                copy[key] = None
                stack.append((child, copy, key, depth + 1))
        elif isinstance(item, list | tuple):
            items: list[Any] = [None] * len(item)
            parent[slot] = items
            stack.extend((child, items, i, depth + 1) for i, child in enumerate(item))
        else:
            parent[slot] = item
    return root[0]


def encode(value: Any) -> Any:
    """Return ``value`` as JSON-safe relaxed Extended JSON (dicts, lists, strings, numbers).

    Parts nested deeper than ``MAX_NESTING`` become a marker string (see ``bounded``).
    """
    return json.loads(json_util.dumps(bounded(value), json_options=_RELAXED))


_INTEGER = re.compile(r"-?[0-9]+")
_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")
_RANGES = {"$numberInt": 32}  # a $numberLong beyond 64 bits is the guard's to name


def check_wrapper(pairs: list[tuple[str, Any]]) -> None:
    """Raise ValueError for an Extended JSON wrapper pymongo reads without checking: a ``$numberInt``
    outside 32 bits (pymongo returns the bare integer), or ``$binary``
    data that is not base64 (pymongo's decoder drops what it cannot read: ``"!!!"`` became ``b''``)."""
    if len(pairs) == 1 and pairs[0][0] in _RANGES:
        key, text = pairs[0]
        bits = _RANGES[key]
        if not isinstance(text, str) or not _INTEGER.fullmatch(text) or \
                not -(2 ** (bits - 1)) <= int(text) < 2 ** (bits - 1):
            raise ValueError(f"{key} out of range")
        return
    keys = dict(pairs)
    binary = keys.get("$binary")
    if binary is None:
        return
    data = binary.get("base64") if isinstance(binary, Mapping) else binary
    if not isinstance(data, str) or not _BASE64.fullmatch(data):
        raise ValueError("$binary data is not base64")


def _checked_hook(pairs: list[tuple[str, Any]]) -> Any:
    check_wrapper(pairs)
    if any(k == "$regex" for k, _ in pairs) and any(k not in ("$regex", "$options") for k, _ in pairs):
        # The query operator beside others (``{"$regex": "^a", "$ne": "ab"}``), not a legacy regex value:
        # pymongo read it as the regex alone and dropped the rest, so a count answered another filter.
        return dict(pairs)
    return json_util.object_pairs_hook(pairs, _RELAXED)


def decode(value: Any) -> Any:
    """Return the BSON values an Extended JSON structure describes (``{"$date": ...}`` → datetime).

    A value nested deeper than ``MAX_NESTING`` levels is refused before anything recurses into it;
    a malformed one (a bad ``$oid``, ``$numberDecimal`` or ``$date``) raises ValueError, as the
    json module's own errors do, so callers that refuse undecodable input catch one kind.
    """
    if depth_of(value) > MAX_NESTING:
        raise NestedTooDeep(f"the query is nested deeper than {MAX_NESTING} levels; Argus refuses it unread",
                            operator="nesting")
    try:
        return json.loads(json.dumps(value), object_pairs_hook=_checked_hook)
    except (BSONError, ArithmeticError, KeyError) as exc:  # an $oid of 2 characters, a $numberDecimal of "abc"
        raise ValueError(f"not valid Extended JSON ({type(exc).__name__})") from exc


# A JSON string (with its escapes) or one bracket: brackets inside strings do not nest.
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def parse_json(text: str) -> Any:
    """``json.loads`` for text from outside (a model's answer): nesting past ``MAX_NESTING`` is refused
    (``NestedTooDeep``) after one linear scan, before the parser recurses into it. Malformed text raises
    ``json.JSONDecodeError``; both are ``ValueError``."""
    depth = 0
    for token in _JSON_TOKEN.finditer(text):
        bracket = token.group()
        if bracket in "[{":
            depth += 1
            if depth > MAX_NESTING:
                raise NestedTooDeep(f"the JSON is nested deeper than {MAX_NESTING} levels", operator="nesting")
        elif bracket in "]}":
            depth -= 1
    return json.loads(text)


def canonical_key(value: Any) -> str:
    """A stable text key for a JSON-safe structure: equal queries give equal keys."""
    return json.dumps(encode(value), sort_keys=True, separators=(",", ":"))


def filter_key(ejson_filter: Any) -> str:
    """Key for an Extended JSON filter that ignores spelling differences (``$date`` formats, key order)."""
    return canonical_key(decode(ejson_filter))
