"""Errors of the run-history store.

Hierarchy::

    ArgusError
    └── StoreError            something went wrong with the history database
        ├── StoreUnavailable  the database cannot be reached (the caller may spool and retry)
        └── NotFound          a run, finding or collection the user named does not exist

psycopg errors are translated here; messages name the host and database, never a password.
"""

from __future__ import annotations

from argus.agent.errors import ArgusError

__all__ = ["NotFound", "StoreError", "StoreUnavailable"]


class StoreError(ArgusError):
    """The history database failed."""


class StoreUnavailable(StoreError):
    """The history database cannot be reached."""


class NotFound(StoreError):
    """A run, finding or collection named by the user does not exist."""
