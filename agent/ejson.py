"""MongoDB Extended JSON at the boundary between planners, reports and pymongo.

Queries cross the planner boundary as JSON (a planner may be an LLM), so every filter an action
carries is relaxed Extended JSON (``{"$date": ...}``, ``{"$oid": ...}``). Tools decode it into
BSON values before the guard and the driver see it; results are encoded back before they leave
a tool. Both directions are lossless for every BSON type pymongo knows.
"""

from __future__ import annotations

import json
from typing import Any

from bson import json_util
from bson.json_util import JSONMode, JSONOptions

__all__ = ["canonical_key", "decode", "encode", "filter_key"]

_RELAXED = JSONOptions(json_mode=JSONMode.RELAXED, tz_aware=True)


def encode(value: Any) -> Any:
    """Return ``value`` as JSON-safe relaxed Extended JSON (dicts, lists, strings, numbers)."""
    return json.loads(json_util.dumps(value, json_options=_RELAXED))


def decode(value: Any) -> Any:
    """Return the BSON values an Extended JSON structure describes (``{"$date": ...}`` → datetime)."""
    return json_util.loads(json.dumps(value), json_options=_RELAXED)


def canonical_key(value: Any) -> str:
    """A stable text key for a JSON-safe structure: equal queries give equal keys."""
    return json.dumps(encode(value), sort_keys=True, separators=(",", ":"))


def filter_key(ejson_filter: Any) -> str:
    """Key for an Extended JSON filter that ignores spelling differences (``$date`` formats, key order)."""
    return canonical_key(decode(ejson_filter))
