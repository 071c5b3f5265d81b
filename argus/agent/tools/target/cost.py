"""What each operation cost, counted in the target's ``OperationLedger``: its kind, whether it was a
pass over the collection, its time, and on Cosmos DB its request charge (``getLastRequestStatistics``,
whose first answer also tells whether the server is Cosmos DB at all)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import pymongo
from pymongo import errors as mongo_errors

from argus.agent.tools.accounting import OperationLedger, OperationRecord
from argus.agent.tools.compat import ServerRefusals
from argus.agent.tools.target.translate import NO_SUCH_COMMAND, THROTTLED, first_line

__all__ = ["record_operation", "request_charge"]


def record_operation(ledger: OperationLedger, refusals: ServerRefusals, kind: str, full_pass: bool, t0: float, *,
                     error: str | None, scoped: bool, request_charge: Callable[[], float | None]) -> None:
    """Count one operation started at ``t0`` (``perf_counter``); ``scoped``: read through a window."""
    # A read that timed out visited the collection until it was stopped: still a pass; a refused one did not.
    record = OperationRecord(kind=kind, full_pass=full_pass and error in (None, "QueryTimeout", "NetworkTimeout"),
                             duration_ms=round((time.perf_counter() - t0) * 1000, 3), error=error)
    if record.full_pass and not scoped and ledger.window_documents is not None:
        record.documents_examined = ledger.collection_size  # the unscoped view of a scoped run
    if error is None and not refusals.refuses("getLastRequestStatistics") and ledger.server in ("unknown", "cosmosdb"):
        record.request_charge = request_charge()
    ledger.record(record)


def request_charge(collection: Any, limit_ms: int, ledger: OperationLedger, refusals: ServerRefusals) -> float | None:
    """Cosmos DB's charge for the last operation on this connection; the first answer also tells
    whether the server is Cosmos DB at all (MongoDB does not know the command)."""
    try:
        with pymongo.timeout(max(limit_ms, 1) / 1000):
            reply = collection.database.command("getLastRequestStatistics", read_preference=collection.read_preference)
    except mongo_errors.OperationFailure as exc:
        if exc.code == THROTTLED:  # a throttled probe says nothing about the server
            return None
        if exc.code in NO_SUCH_COMMAND or "no such" in first_line(exc).lower():
            ledger.server = "mongodb"  # MongoDB does not know the command: nothing to count
        else:
            code = f" (code {exc.code})" if exc.code is not None else ""
            refusals.learn("getLastRequestStatistics", (
                f"the server refused getLastRequestStatistics{code}: request units are not counted, so an "
                f"ru_budget cannot be enforced; on Cosmos DB grant the command to Argus's user"))
        return None
    except mongo_errors.PyMongoError:  # unreachable now: the next operation reports it
        return None
    except AttributeError:  # a collection that is no client's (the engine, wrapped): nothing to ask
        refusals.learn("getLastRequestStatistics", "")
        return None
    charge = reply.get("RequestCharge") if isinstance(reply, Mapping) else None
    if not isinstance(charge, int | float):
        ledger.server = "mongodb"
        return None
    ledger.server = "cosmosdb"
    return float(charge)
