"""Inputs and results of the agent tools: one pydantic model per concept.

Inputs are what a planner puts in ``AgentAction.action_input``; query documents in them are
relaxed MongoDB Extended JSON (``{"$date": "2034-01-01T00:00:00Z"}``) because a planner may be a
language model. Results hold JSON-safe values (Extended JSON for BSON types).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.json_schema import SkipJsonSchema

from argus.agent.failing_bounds import FAILING_MAX
from argus.agent.segments.models import SegmentTotals
from argus.agent.shapes.models import ShapeCounts, Shapes

__all__ = [
    "RUN_QUERY_HARD_LIMIT",
    "SAMPLE_SIZE_MAX",
    "ArrayStats",
    "ConcludeInput",
    "CountManyInput",
    "CountManyResult",
    "CountQuery",
    "CountedQuery",
    "DateStats",
    "FieldStats",
    "GetStatsInput",
    "LookupInput",
    "LookupResult",
    "NumericStats",
    "RunQueryInput",
    "RunQueryResult",
    "SchemaSampleInput",
    "SchemaSampleResult",
    "StatsOperation",
    "StatsResult",
    "StringStats",
]

SAMPLE_SIZE_DEFAULT = 1000
SAMPLE_SIZE_MAX = 10_000
RUN_QUERY_DEFAULT_LIMIT = 50
RUN_QUERY_HARD_LIMIT = 1000
DISTINCT_CAP = 1000
DUPLICATES_CAP = 5000  # repeated values a duplicates result lists: a finding's evidence names them all
DISTINCT_MAX = 50_000  # the most a distinct or value_counts may be asked to list (a reference check's values)


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid")


# --- schema_sample ---------------------------------------------------------------------------

class SchemaSampleInput(_Input):
    sample_size: int = Field(SAMPLE_SIZE_DEFAULT, ge=1, description="documents to sample (capped at 10,000)")

    @field_validator("sample_size")
    @classmethod
    def _cap(cls, value: int) -> int:
        return min(value, SAMPLE_SIZE_MAX)


class Spread(BaseModel):
    """The middle of a set of values and its width: the median and the median absolute deviation,
    which stray values cannot move far until they are half the set; on a log10 scale too when
    every value is positive (amounts, durations spread by factors)."""

    count: int
    median: float
    mad: float
    quantiles: dict[str, float] = Field(default_factory=dict)
    log_median: float | None = None
    log_mad: float | None = None


class NumericStats(BaseModel):
    count: int
    nan_count: int = 0
    inf_count: int = 0
    min: float | None = None
    max: float | None = None
    mean: float | None = None
    quantiles: dict[str, float] = Field(default_factory=dict)
    negative_count: int = 0
    zero_count: int = 0
    integer_share: float = 0.0
    low_tail: list[tuple[float, int]] = Field(default_factory=list, description="smallest distinct values")
    high_tail: list[tuple[float, int]] = Field(default_factory=list, description="largest distinct values")
    spreads: dict[str, Spread] = Field(default_factory=dict, description="of the finite values ('all'), of those "
                                                                         "at least zero, of those above zero, and of "
                                                                         "the negatives' magnitudes ('negated')")
    log_bins: list[tuple[int, int]] = Field(
        default_factory=list, description="positive finite values per tenth of a decade: (floor(10 * log10(v)), "
                                          "count), ascending; a second cluster 100 times the bulk shows as its own run")


class DateStats(BaseModel):
    count: int
    min: datetime
    max: datetime
    quantiles: dict[str, datetime] = Field(default_factory=dict)
    low_tail: list[tuple[datetime, int]] = Field(default_factory=list)
    high_tail: list[tuple[datetime, int]] = Field(default_factory=list)
    spread: Spread | None = Field(None, description="in seconds since the Unix epoch")


class StringStats(BaseModel):
    count: int
    empty_count: int
    blank_count: int
    placeholder_count: int
    min_length: int
    max_length: int
    mean_length: float
    distinct_count: int
    shapes: list[tuple[str, int]] = Field(description="most common shapes, e.g. ('A+-9+', 812)")
    shape_count: int
    exact_shapes: list[tuple[str, int]] = Field(
        default_factory=list, description="most common shapes with every character kept, e.g. ('(999) 999-9999', 800)")
    formats: dict[str, int] = Field(default_factory=dict, description="values matching each well-known format")
    units: list[tuple[str, int]] = Field(default_factory=list, description="unit text after a leading number")
    unit_count: int = Field(0, description="distinct unit texts")
    top_values: list[tuple[Any, int]] = Field(description="all values when at most 100 distinct, else the top 20")
    value_space: float | None = Field(
        None, description="log10 of the strings the characters seen at each position allow, summed over the "
                          "values' lengths (a 5-digit code drawn at random: 5.0); None for values past 64 characters")


class ArrayStats(BaseModel):
    count: int
    empty_count: int
    min_length: int
    max_length: int


class FieldStats(BaseModel):
    path: str = Field(description="dot notation; arrays of objects are descended (items.qty)")
    types: dict[str, int] = Field(description="BSON $type alias -> number of values")
    present_count: int
    missing_count: int
    null_count: int
    null_rate: float = Field(description="(null + missing) / documents sampled")
    parent_present_count: int = Field(description="documents where the enclosing object exists")
    in_array: bool = False
    queryable: bool = Field(True, description="False for keys with '.' or a leading '$' (no plain filter reaches them)")
    value_count: int
    cardinality: int = Field(description="distinct values, capped at 100")
    cardinality_capped: bool
    distinct_ratio: float = Field(description="distinct / non-null values within the sample")
    sample_values: list[Any] = Field(default_factory=list)
    numeric: NumericStats | None = None
    dates: DateStats | None = None
    strings: StringStats | None = None
    arrays: ArrayStats | None = None

    @property
    def non_null_types(self) -> dict[str, int]:
        return {t: n for t, n in self.types.items() if t != "null"}


class SchemaSampleResult(BaseModel):
    collection: str
    collection_size: int = Field(description="documents in the collection (server's count); in a scoped audit, "
                                             "in its window: the denominator of affected shares")
    total_documents: int | None = Field(None, description="a scoped audit: documents in the whole collection")
    documents_sampled: int
    fields: list[FieldStats]
    truncated_paths: list[str] = Field(default_factory=list, description="paths cut at depth 20")
    paths_dropped: int = Field(0, description="values whose path was not recorded after 2,000 paths")
    unprofiled: list[tuple[str, int]] = Field(
        default_factory=list, description="paths not recorded after 2,000: (parent path, '' for the top level; "
                                          "distinct paths under it)")
    shapes: Shapes | None = Field(None, exclude=True, description="the sample's shapes, with document values "
                                                                   "(never serialized: the report masks them)")

    def not_profiled(self) -> str | None:
        """What the profiler left out, in words for a report's notes, or None when it saw everything."""
        parts = []
        if self.unprofiled:
            total = sum(n for _, n in self.unprofiled)
            where = ", ".join(f"{n:,} under {parent or 'the top level'}" for parent, n in self.unprofiled[:3])
            more = f" and {len(self.unprofiled) - 3} other parents" if len(self.unprofiled) > 3 else ""
            parts.append(f"the sample holds more than 2,000 field paths: at least {total:,} more were not "
                         f"profiled ({where}{more})")
        if self.truncated_paths:
            shown = ", ".join(self.truncated_paths[:3]) + (" …" if len(self.truncated_paths) > 3 else "")
            parts.append(f"{len(self.truncated_paths):,} paths are nested deeper than 20 levels and nothing below "
                         f"that depth was profiled ({shown})")
        return "; ".join(parts) if parts else None

    def field(self, path: str) -> FieldStats | None:
        return next((f for f in self.fields if f.path == path), None)


# --- run_query -------------------------------------------------------------------------------

class RunQueryInput(_Input):
    filter: dict[str, Any] = Field(default_factory=dict, description="MongoDB filter, Extended JSON")
    projection: dict[str, int | bool] | None = None
    limit: int = Field(RUN_QUERY_DEFAULT_LIMIT, ge=0, description="documents to return (0: count only; cap 1000)")

    @field_validator("limit")
    @classmethod
    def _cap(cls, value: int) -> int:
        return min(value, RUN_QUERY_HARD_LIMIT)


class RunQueryResult(BaseModel):
    collection: str
    filter: dict[str, Any]
    documents: list[dict[str, Any]]
    matched_count: int = Field(description="every matching document in the collection (count_documents)")
    returned_count: int
    truncated: bool


# --- get_stats -------------------------------------------------------------------------------

StatsOperation = Literal["count", "min", "max", "avg", "distinct", "value_counts", "duplicates"]


class GetStatsInput(_Input):
    field: str
    operation: StatsOperation
    filter: dict[str, Any] | None = Field(None, description="documents to include, Extended JSON")
    value_filter: dict[str, Any] | None = Field(
        None, description="condition on each value after arrays are flattened, e.g. {'$gt': 100}")
    limit: int | None = Field(None, ge=1, le=DISTINCT_MAX, description="distinct, value_counts: values to list "
                                                                      "(default 1,000)")


class StatsResult(BaseModel):
    collection: str
    field: str
    operation: str
    error: str | None = Field(None, description="the engine refused this statistic alone: value means nothing")
    value: Any = Field(description="number, list of values, or list of {value, count}")
    capped: bool = Field(False, description="distinct/value_counts/duplicates stopped at their limit (1,000 values "
                                            "unless asked for more)")
    totals: dict[str, int] | None = Field(None, description="duplicates: {'values': groups, 'documents': n}")
    filter_used: dict[str, Any] | None = None
    query_used: str = Field(description="the pipeline that was run, as JSON")


# --- count_many ------------------------------------------------------------------------------

COUNT_MANY_MAX = 2000
EXAMPLES_MAX = 20


class CountQuery(_Input):
    filter: dict[str, Any] = Field(description="MongoDB filter, Extended JSON")
    examples_of: str | None = Field(None, description="also return a few values of this field from matching documents")
    examples: int = Field(5, ge=1, le=EXAMPLES_MAX)
    failing: int = Field(0, ge=0, le=FAILING_MAX, description="with examples_of: also the _id of up to this many "
                                                              "matching documents (the same branch, no extra pass)")


class CountManyInput(_Input):
    queries: list[CountQuery] = Field(default_factory=list, max_length=COUNT_MANY_MAX)
    stats: list[GetStatsInput] = Field(default_factory=list, max_length=COUNT_MANY_MAX,
                                       description="per-field statistics (as get_stats), computed in the same pass")


class CountedQuery(BaseModel):
    filter: dict[str, Any]
    matched_count: int = Field(description="exactly count_documents(filter) over the whole collection")
    documents: list[dict[str, Any]] = Field(default_factory=list)
    failing: list[dict[str, Any]] = Field(default_factory=list, description="_id and the examples_of field of the "
                                                                            "first matching documents")
    error: str | None = Field(None, description="the engine refused this filter alone: matched_count means nothing")
    segments: dict[str, int] | None = Field(None, description="the matched documents per segment (label -> count), "
                                                              "when the run has segments and the batch counted it")


class CountManyResult(BaseModel):
    collection: str
    counts: list[CountedQuery]
    stats: list[StatsResult]
    segment_totals: SegmentTotals | None = Field(None, description="documents and nulls per segment, counted in "
                                                                   "this batch's pass (once a run)")
    query_used: str = Field(description="the pipeline that was run, as JSON (cut at 2,000 characters)")


# --- lookup_references ----------------------------------------------------------------------

LOOKUP_BATCH = 1000  # values per $in lookup in the referenced collection


class LookupInput(_Input):
    collection: str = Field(min_length=1, description="the referenced collection, in the audited one's database")
    field: str = Field(description="the referenced field (dot notation)")
    values: list[Any] = Field(max_length=DISTINCT_MAX, description="the distinct values to look up, Extended JSON")


class LookupResult(BaseModel):
    collection: str
    field: str
    checked: int = Field(description="distinct values looked up")
    missing: list[Any] = Field(default_factory=list, description="values no document of the collection holds")
    lookups: int = Field(0, description="$in lookups sent (batches of 1,000 values)")
    indexed: bool | None = Field(None, description="the referenced field leads an index (each lookup reads the "
                                                   "index); None when unknown")
    documents: int = Field(0, description="documents in the referenced collection (its server count)")


# --- conclude --------------------------------------------------------------------------------

class ConcludeInput(_Input):
    summary: str = ""
    # Hidden from a model's tool schema: a planner's own account of what it left unchecked (paths and
    # counts, never document values), which the report lists among its notes.
    notes: SkipJsonSchema[list[Annotated[str, Field(max_length=1000)]]] = Field(default_factory=list, max_length=50)
    # Hidden too: the exact counts the planner's first pass made of the sample's shapes (numbers only).
    shape_counts: SkipJsonSchema[ShapeCounts | None] = None
