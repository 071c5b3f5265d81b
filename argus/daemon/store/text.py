"""Text PostgreSQL can keep: a NUL character (U+0000) becomes U+FFFD on its way in.

PostgreSQL refuses NUL in ``text`` and ``jsonb`` columns, and a report can hold one where nothing
Argus controls put it: a model's answer echoed in a critique (``{"a\\u0000b": 1}``), a key of a
file's document, an error quoting either. Refusing the whole report would lose the run, so every
string a store connection sends (parameters and JSON documents alike) is cleaned here, once, by
dumpers registered on each connection of the pool.
"""

from __future__ import annotations

import json
import re
from typing import Any

from psycopg import Connection
from psycopg.types.json import set_json_dumps
from psycopg.types.string import StrBinaryDumper, StrDumperUnknown

__all__ = ["REPLACEMENT", "keep_text_storable"]

REPLACEMENT = "\ufffd"
# \u0000 in JSON text, not preceded by an escaping backslash (an even run of backslashes before it)
_JSON_NUL = re.compile(r"(?<!\\)((?:\\\\)*)\\u0000")


class _Text(StrDumperUnknown):
    def dump(self, obj: str) -> Any:
        return super().dump(obj.replace("\x00", REPLACEMENT))


class _BinaryText(StrBinaryDumper):
    def dump(self, obj: str) -> Any:
        return super().dump(obj.replace("\x00", REPLACEMENT))


def _json(obj: Any) -> str:
    return _JSON_NUL.sub(lambda m: m.group(1) + "\\ufffd", json.dumps(obj))


def keep_text_storable(conn: Connection[Any]) -> None:
    """Register the cleaning dumpers on ``conn`` (a pool's ``configure`` callback)."""
    conn.adapters.register_dumper(str, _Text)
    conn.adapters.register_dumper(str, _BinaryText)
    set_json_dumps(_json, context=conn)
