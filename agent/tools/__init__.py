"""The agent's tools: pure functions from a read-only target and parameters to a result model."""

from agent.tools.get_stats import get_stats
from agent.tools.registry import TOOLS, ActionName, ToolSpec
from agent.tools.run_query import run_query
from agent.tools.schema_sample import schema_sample
from agent.tools.target import AuditTarget
from agent.tools.write_finding import FindingsCollector, write_finding

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
