"""Errors of incidents.

Hierarchy::

    ArgusError
    └── IncidentError       an incident cannot be changed as asked
        └── StatusRefused   the status change does not apply to the incident's status

Not found incidents are the store's ``NotFound``.
"""

from __future__ import annotations

from argus.agent.errors import ArgusError

__all__ = ["IncidentError", "StatusRefused"]


class IncidentError(ArgusError):
    """An incident cannot be changed as asked."""


class StatusRefused(IncidentError):
    """The status change does not apply to the incident's status (e.g. acknowledging a resolved one)."""
