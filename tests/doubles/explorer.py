"""A scripted model that explores a collection with every tool: the driver of privacy scans and
prompt-size benchmarks. Given the collection's field paths, it answers each planner turn with the next step
of a fixed tour of eight, each on the next field: exact value counts, a query returning whole
documents, duplicates, a malformed answer, distinct values, an unsupported finding, the maximum and
a query with an invalid regex, so every digest and the critique, dismissal and error-hint paths
reach the prompts; then queries touching every field (so the run gate accepts) and it concludes.
Evaluator requests (a JSON verdict) are answered PASS. Deterministic.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tests.doubles.model_server import Reply, text_reply, tool_reply

__all__ = ["Explorer"]

_TOUR = ("value_counts", "documents", "duplicates", "malformed", "distinct", "unsupported_finding", "max",
         "bad_regex")


class Explorer:
    """A responder for ``LocalChatServer``: ``LocalChatServer(Explorer(paths, steps=40))``."""

    def __init__(self, fields: Sequence[str], *, steps: int = 40) -> None:
        self.fields = [f for f in fields if f != "_id"] or ["_id"]
        self.steps = steps
        self.turn = 0

    def _step(self, i: int) -> Reply:
        field = self.fields[i % len(self.fields)]
        step = _TOUR[i % len(_TOUR)]
        if step == "malformed":
            return text_reply("I think the next step is probably a query on the email field.")
        if step == "bad_regex":
            return tool_reply("run_query", {"filter": {field: {"$regex": "("}}, "limit": 0})
        if step == "unsupported_finding":
            return tool_reply("write_finding", {
                "field": field, "category": "null_rate", "severity": "low", "description": "unsupported claim",
                "evidence_query": {field: None}, "affected_count": 1, "affected_pct": 0.0})
        if step == "documents":
            return tool_reply("run_query", {"filter": {field: {"$exists": True}}, "limit": 20})
        return tool_reply("get_stats", {"field": field, "operation": step})

    def __call__(self, body: dict[str, Any]) -> Reply:
        if body.get("response_format", {}).get("json_schema", {}).get("name") == "verdict":
            return text_reply(json.dumps({"verdict": "PASS", "critique": ""}))
        i = self.turn
        self.turn += 1
        if i >= self.steps:
            chunk = self.fields[(i - self.steps) * 50:(i - self.steps + 1) * 50]
            if chunk:
                return tool_reply("run_query", {"filter": {"$or": [{f: {"$exists": True}} for f in chunk]}, "limit": 0})
            return tool_reply("conclude", {"summary": "tour finished"})
        return self._step(i)
