"""The agent's tools: pure functions from a read-only target and parameters to a result model."""

from argus.agent.tools.get_stats import get_stats
from argus.agent.tools.registry import TOOLS, ActionName, ToolSpec
from argus.agent.tools.run_query import run_query
from argus.agent.tools.schema_sample import schema_sample
from argus.agent.tools.target import AuditTarget
from argus.agent.tools.write_finding import FindingsCollector, write_finding

__all__ = [
    "TOOLS",
    "ActionName",
    "AuditTarget",
    "FindingsCollector",
    "ToolSpec",
    "get_stats",
    "run_query",
    "schema_sample",
    "write_finding",
]
