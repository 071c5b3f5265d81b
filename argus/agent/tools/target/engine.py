"""The adapter for the in-process engine (``argus.agent.engine``, behind ``--file``), or any collection
held in this process.

The engine keeps each read's ``maxTimeMS`` itself and answers as a server does, refusals included
(``OperationFailure``). Any other exception raised inside it is a bug of the engine, not a server's
word: it ends the audit (``EngineFault``) with a log line naming the query's shape, never a quiet
"refused".
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import structlog
from pymongo import errors as mongo_errors

from argus.agent.errors import ArgusError, EngineFault
from argus.agent.tools.compat import operators_in
from argus.agent.tools.sampling import draw_in_memory
from argus.agent.tools.target.base import AuditTarget

__all__ = ["EngineTarget", "engine_faults", "query_shape"]

log = structlog.get_logger("argus.agent.tools.target")


class EngineTarget(AuditTarget, in_memory=True):
    """A collection in Argus's own process: no server to protect or to ask for request charges, samples
    drawn in process, and what the engine raises that no server would is a fault of the engine."""

    def __init__(self, collection: Any, **kwargs: Any) -> None:
        super().__init__(collection, **kwargs)
        self.refusals.learn("getLastRequestStatistics", "")  # no server to ask (an empty note is not shown)

    def _limit_ms(self) -> int:
        """The run's remaining time: no server to protect, so one batched pass over a wide file is not
        cut at ``max_time_ms``."""
        cap = self._time_cap()
        if cap is not None:
            return max(1, cap)
        return self.max_time_ms

    def sample(self, size: int) -> list[Any]:
        """Up to ``size`` documents drawn in process (``$sample`` would shuffle every document), the same
        ones each run while they stay (``sample_seed``)."""
        drawn = self._call("sample", False, lambda _: draw_in_memory(self._collection, size, self._seed,
                                                                      self._scope), query=self._scope)
        self.ledger.records[-1].documents_examined = len(drawn)
        return drawn

    def _faults(self, kind: str, query: Any) -> AbstractContextManager[None]:
        return engine_faults(kind, query)


@contextmanager
def engine_faults(operation: str, query: Any) -> Iterator[None]:
    """In the in-process engine, an exception that is no server's answer (``OperationFailure``,
    ``ExecutionTimeout``: the engine's refusals and time limit) is a bug: ``EngineFault``, logged with
    the query's operators and field paths, never its values. A live server's driver is not judged."""
    try:
        yield
    except (mongo_errors.PyMongoError, ArgusError):
        raise
    except Exception as exc:
        log.error("engine_fault", operation=operation, error=type(exc).__name__, **query_shape(query))
        raise EngineFault(f"internal error in the in-process engine: {operation} raised {type(exc).__name__}; "
                          f"the run is not counted as answered (the log line engine_fault names the query's "
                          f"shape: please report it)") from exc


def query_shape(query: Any) -> dict[str, list[str]]:
    """What a filter or pipeline asks, without a value: its operators and the field names it reads or
    writes (keys only; a value is never walked into, so neither a literal nor a document shows)."""
    fields: set[str] = set()
    stack = [query]
    while stack:
        item = stack.pop()
        if isinstance(item, list | tuple):
            stack.extend(i for i in item if isinstance(i, Mapping) and _operators_only(i))
        elif isinstance(item, Mapping):
            for key, inner in item.items():
                if not isinstance(key, str):
                    continue
                if key.startswith("$"):  # an operator's operand: conditions, clauses, stages, expressions
                    stack.extend(i for i in inner if isinstance(i, Mapping)) if isinstance(inner, list) \
                        else stack.append(inner)
                    continue
                fields.add(key)
                if isinstance(inner, Mapping) and _operators_only(inner):
                    stack.append(inner)  # {field: {$op: ...}}, {output: {$sum: ...}}
                elif isinstance(inner, list) and inner and all(
                        isinstance(i, Mapping) and _operators_only(i) for i in inner):
                    stack.append(inner)  # a $facet's pipelines
    return {"operators": sorted(operators_in(query) if query is not None else ()), "fields": sorted(fields)}


def _operators_only(value: Mapping[str, Any]) -> bool:
    return bool(value) and all(isinstance(k, str) and k.startswith("$") for k in value)


