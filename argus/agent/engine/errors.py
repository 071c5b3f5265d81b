"""The engine's refusals, shaped as the server's: an ``OperationFailure`` with its code and errmsg.

The target turns either into a refused query, as it does a real server's refusal; ``bad_value``
is the query language's (code 2, BadValue), ``failure`` the aggregation framework's numbered ones.
"""

from __future__ import annotations

from pymongo.errors import OperationFailure

__all__ = ["bad_value", "failure"]

_BAD_VALUE = 2


def bad_value(message: str) -> OperationFailure:
    return OperationFailure(message, _BAD_VALUE, {"ok": 0, "errmsg": message, "code": _BAD_VALUE,
                                                  "codeName": "BadValue"})


def failure(message: str, code: int = _BAD_VALUE) -> OperationFailure:
    return OperationFailure(message, code, {"ok": 0, "errmsg": message, "code": code})
