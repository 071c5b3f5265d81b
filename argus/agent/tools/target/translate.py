"""pymongo's errors translated into Argus's at the boundary, and the answers worth waiting out.

A server's refusal becomes ``QueryRejected`` (its code and first line kept), ``maxTimeMS`` reached
``QueryTimeout``, an unreachable or primary-less server ``TargetUnavailable``; Cosmos DB's throttling
(16500, ``RetryAfterMs``) and a primary stepping down are raised as ``Retry`` for the caller to wait
out within the run's time, and a driver that stopped waiting (``NetworkTimeout``) as ``Stalled`` for
the caller to ask the server why.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

from bson.errors import BSONError
from pymongo import errors as mongo_errors

from argus.agent.errors import QueryRejected, QueryTimeout, TargetUnavailable, ToolError

__all__ = ["EXCEEDED_TIME_LIMIT", "NO_SUCH_COMMAND", "THROTTLED", "Retry", "Stalled", "first_line", "retry_after_ms",
           "translated"]

THROTTLED = 16500  # Cosmos DB: TooManyRequests (HTTP 429), the request used more RU than provisioned
EXCEEDED_TIME_LIMIT = 50
_STEPPED_DOWN = (10107, 11602, 13435, 189, 91)  # NotWritablePrimary, InterruptedDueToReplStateChange, ...
NO_SUCH_COMMAND = (59,)  # CommandNotFound: MongoDB itself
_RETRY_AFTER = re.compile(r"RetryAfterMs=(\d+)")
_FALLBACK_RETRY_MS = 100


def retry_after_ms(message: str, attempt: int) -> int:
    """The wait Cosmos DB asks for (``RetryAfterMs=N`` in its message), else exponential backoff."""
    found = _RETRY_AFTER.search(message)
    return int(found.group(1)) if found else _FALLBACK_RETRY_MS * 2 ** attempt


class Stalled(Exception):
    """The driver stopped waiting for an answer (``NetworkTimeout``); ``AuditTarget`` asks why."""


class Retry(Exception):
    """A server answer worth waiting out: Cosmos DB throttling, or a primary stepping down."""

    def __init__(self, final: Exception, give_up: str, *, throttle: bool, message: str = "") -> None:
        super().__init__(give_up)
        self.final, self.give_up, self.throttle, self.message = final, give_up, throttle, message

    def wait_ms(self, attempt: int) -> int:
        return retry_after_ms(self.message, attempt - 1) if self.throttle else _FALLBACK_RETRY_MS * 2 ** attempt


@contextmanager
def translated(operation: str) -> Iterator[None]:
    try:
        yield
    except mongo_errors.ExecutionTimeout as exc:
        if first_line(exc).startswith("operation would exceed time limit"):  # pymongo's own deadline passed
            raise TargetUnavailable(f"{operation} got no answer within its time limit: the server is unreachable, "
                                    f"not answering, or has no primary (pymongo retried until the limit)") from exc
        raise QueryTimeout(f"{operation} reached its server time limit (maxTimeMS, code {EXCEEDED_TIME_LIMIT} "
                           f"ExceededTimeLimit); narrow the query, or on Cosmos DB raise the provisioned throughput: "
                           f"its server-side retries of throttled requests end in this error") from exc
    except mongo_errors.NetworkTimeout as exc:
        raise Stalled(operation) from exc
    except mongo_errors.NotPrimaryError as exc:
        raise Retry(TargetUnavailable(f"{operation} failed: the server stepped down from primary "
                                       f"({type(exc).__name__}) and no primary answered within the time limit; "
                                       f"use readPreference=secondaryPreferred"),
                     "stepped_down", throttle=False) from exc
    except mongo_errors.OperationFailure as exc:
        if exc.code == THROTTLED:
            message = first_line(exc)
            raise Retry(ToolError(f"{operation} was throttled by the server (code {THROTTLED}, TooManyRequests) "
                                   f"until the run's time ran out; raise the provisioned throughput (RU/s) or "
                                   f"schedule the audit when the collection is idle"),
                         "throttled", throttle=True, message=message) from exc
        if exc.code in _STEPPED_DOWN:
            raise Retry(TargetUnavailable(f"{operation} failed: the replica set changed primary (code {exc.code}) "
                                           f"and no member answered within the time limit"),
                         "stepped_down", throttle=False) from exc
        code = f" (code {exc.code})" if exc.code is not None else ""
        raise QueryRejected(f"{operation} was refused by the server{code}: {first_line(exc)}", code=exc.code,
                            server_message=first_line(exc)) from exc
    except (mongo_errors.ConnectionFailure, mongo_errors.ServerSelectionTimeoutError) as exc:
        raise TargetUnavailable(f"{operation} could not reach the database: {type(exc).__name__}") from exc
    except mongo_errors.PyMongoError as exc:
        raise ToolError(f"{operation} failed: {type(exc).__name__}") from exc
    except (BSONError, OverflowError) as exc:  # the guard refuses these first; a driver's word is final
        raise ToolError(f"{operation} could not send the query: it cannot be encoded as BSON "
                        f"({type(exc).__name__})") from exc


def first_line(exc: mongo_errors.OperationFailure) -> str:
    details = exc.details or {}
    message = str(details.get("errmsg") or exc).splitlines()[0]
    return message[:200]
