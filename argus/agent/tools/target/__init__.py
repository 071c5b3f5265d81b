"""The audited collection, as tools see it (``AuditTarget``): its read interface (``reads``), the two
adapters (``server`` for a live server through pymongo, ``engine`` for the in-process engine), the
translation of pymongo's errors (``translate``) and the accounting of what each read cost (``cost``).
``AuditTarget(collection)`` picks the adapter the collection needs."""

from argus.agent.tools.target.base import DEFAULT_MAX_TIME_MS, AuditTarget
from argus.agent.tools.target.engine import EngineTarget, query_shape
from argus.agent.tools.target.reads import CollectionReads
from argus.agent.tools.target.server import ServerTarget
from argus.agent.tools.target.translate import retry_after_ms

__all__ = ["DEFAULT_MAX_TIME_MS", "AuditTarget", "CollectionReads", "EngineTarget", "ServerTarget", "query_shape",
           "retry_after_ms"]
