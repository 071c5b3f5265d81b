"""Errors raised while auditing one collection.

Hierarchy::

    ArgusError                    base of everything Argus raises on purpose
    ├── QueryRefused              the read-only guard refused a filter, projection or pipeline
    ├── ToolError                 a tool call failed but the audit can go on (bad query, timeout)
    │   └── QueryTimeout          the server stopped the query at its maxTimeMS
    ├── TargetUnavailable         the database cannot be reached; the audit cannot go on
    ├── EngineFault               the in-process engine raised where a server would have answered
                                  (a bug of Argus's, not a refusal); the audit fails
    ├── DataLoadError             an Extended JSON file could not be read (names file and line)
    └── BudgetExhausted           a run budget other than iterations and time (LLM tokens, USD)
                                  is spent; the run ends as partial

pymongo errors are translated at the tool boundary (``raise ... from exc``) so callers never
handle driver exceptions, and messages never carry document values or credentials.
"""

from __future__ import annotations

__all__ = [
    "ArgusError",
    "BudgetExhausted",
    "DataLoadError",
    "EngineFault",
    "QueryRefused",
    "QueryRejected",
    "QueryTimeout",
    "TargetUnavailable",
    "ToolError",
]


class ArgusError(Exception):
    """Base class for every error Argus raises on purpose."""


class QueryRefused(ArgusError):
    """A query was refused by the read-only guard; the message names the operator."""

    def __init__(self, message: str, *, operator: str | None = None) -> None:
        super().__init__(message)
        self.operator = operator


class ToolError(ArgusError):
    """A tool call failed; the loop records it and the planner moves on."""


class QueryRejected(ToolError):
    """The engine refused an operation as written (an operator, stage or BSON type it does not
    support): sent again unchanged, it would fail again. ``code`` and ``server_message`` are the
    server's own (``None`` and ``""`` when it gave none), for deciding how to degrade."""

    def __init__(self, message: str, *, code: int | None = None, server_message: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.server_message = server_message


class QueryTimeout(ToolError):
    """The server stopped a query when it reached its time limit."""


class TargetUnavailable(ArgusError):
    """The audited database cannot be reached; the run is recorded as failed."""


class EngineFault(ArgusError):
    """An exception raised inside the in-process engine (``argus.agent.engine``): not a refusal a server
    would give, but a bug. Counting on would report a run whose checks the engine never answered,
    so the run is recorded as failed; the message names the operation and the exception's type only."""


class DataLoadError(ArgusError):
    """An Extended JSON lines file could not be loaded."""


class BudgetExhausted(ArgusError):
    """A per-run budget (LLM tokens or US dollars) is spent; the loop ends the run as partial."""
