"""One registry describes each tool once: name, purpose, input and result schema.

Planners, the action gate (input shape) and the LLM tool schemas all read this table.
``TOOLS`` are the tools offered to language models; ``ALL_TOOLS`` adds ``count_many``, the
batched confirmation the rule planner uses, and ``lookup_references``, a contract's reference
check, which the loop and gates accept from any planner but which are kept out of model prompts
(their schemas would cost every request tokens).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

from argus.agent.findings import WriteFindingInput
from argus.agent.tools.models import (
    ConcludeInput,
    CountManyInput,
    CountManyResult,
    GetStatsInput,
    LookupInput,
    LookupResult,
    RunQueryInput,
    RunQueryResult,
    SchemaSampleInput,
    SchemaSampleResult,
    StatsResult,
)

__all__ = ["ALL_TOOLS", "TOOLS", "ActionName", "ToolSpec"]

ActionName = Literal["schema_sample", "run_query", "get_stats", "count_many", "lookup_references", "write_finding",
                     "conclude"]


@dataclass(frozen=True)
class ToolSpec:
    name: ActionName
    purpose: str
    input_model: type[BaseModel]
    result_model: type[BaseModel] | None
    reads_database: bool


TOOLS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in (
        ToolSpec("schema_sample", "Sample documents with $sample and profile every field path: types, "
                 "presence, nulls, cardinality, numeric/date quantiles, string shapes. Must run first.",
                 SchemaSampleInput, SchemaSampleResult, True),
        ToolSpec("run_query", "Bounded find() with the exact matched_count over the whole collection "
                 "(count_documents). Use it to confirm a hypothesis; limit 0 counts only.",
                 RunQueryInput, RunQueryResult, True),
        ToolSpec("get_stats", "Exact statistics of one field computed by the server: count, min, max, "
                 "avg, distinct, value_counts (top 1,000 with counts), duplicates (values seen more than once).",
                 GetStatsInput, StatsResult, True),
        ToolSpec("write_finding", "Commit a confirmed finding. affected_count must equal the matched_count "
                 "of its evidence_query, which must have been run with run_query in this audit.",
                 WriteFindingInput, None, False),
        ToolSpec("conclude", "End the audit once enough fields are covered.", ConcludeInput, None, False),
    )
}

COUNT_MANY = ToolSpec("count_many", "Many exact counts in one pass over the collection: each query's matched_count "
                      "equals run_query's (count_documents) and counts as run evidence; examples_of fetches a few "
                      "values; stats are get_stats operations computed in the same pass.",
                      CountManyInput, CountManyResult, True)

LOOKUP = ToolSpec("lookup_references", "Which of some values exist in a field of another collection of the same "
                  "database ($in lookups in batches, never $lookup): a contract's references rule.",
                  LookupInput, LookupResult, True)

ALL_TOOLS: dict[str, ToolSpec] = {**TOOLS, COUNT_MANY.name: COUNT_MANY, LOOKUP.name: LOOKUP}
