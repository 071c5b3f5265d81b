"""``count_many``: many exact counts, examples and field statistics in one pass over the collection.

One ``aggregate`` with a single ``$facet`` stage: each counted filter is a ``[$match, $count]``
branch, so its count uses the query language exactly as ``count_documents`` does (pymongo's
``count_documents`` is itself ``$match`` then a sum): nulls, missing fields and arrays behave the
same, and each filter is on its own a standalone evidence query reproducing its count. Examples
are ``[$match, $limit, $project]`` branches; statistics are the ``get_stats`` pipelines. The
server reads the collection once, whatever the number of branches. A batch of counts alone is
preceded by the ``$or`` of its filters (every count stays exact: a document one filter matches
also matches the ``$or``), so the branches see only the suspect documents. ``$facet`` runs on MongoDB
3.4+, Azure Cosmos DB for MongoDB (RU, 4.2+ API; vCore) and the in-process engine.

A server that refuses the batch costs only the checks it cannot answer, as a careful client would:

- it names the operator it refuses (``Operator '$not' is not currently implemented``): the checks
  using it are set apart and the others batched again; one of them is asked alone, and if the
  server refuses it there too, none of them is asked again (each is *unanswered*), else they are
  asked one by one (``$expr`` inside ``$facet``);
- it refuses ``$not``: a count with one ``$not`` on a field is answered by subtraction
  (``AuditTarget.count_documents``: ``count(Q) - count(Q AND P)``), asked apart from the batch
  once the refusal is known; a statistic filtered with ``$not`` has no such identity and is unanswered;
- it refuses ``$facet`` itself: every check is asked unbatched (``count_documents``, ``find`` for
  examples, each statistic's own pipeline), and so is every later batch of the run;
- it names nothing: the batch is split in halves until the refused checks stand alone, within
  ``ISOLATION_PASSES`` more reads; what is left then is asked one by one;
- the batch times out (error 50, or the server ignored ``maxTimeMS``): the checks are asked one by one.

Each of these says so once in the report's notes (``ServerRefusals``), naming operators and codes only.

Asking one by one stops when the run's time or request units are spent, or after
``TIMEOUTS_IN_A_ROW`` timeouts in a row once they outnumber the answers; a check not answered
comes back with ``error`` set, saying why, and the loop makes the run partial and names it.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

import structlog

from argus.agent.ejson import decode, encode
from argus.agent.errors import QueryRejected, QueryTimeout
from argus.agent.segments.passes import SegmentPass, SegmentTotals
from argus.agent.tools.batch_size import FILL, FIRST_CHUNK
from argus.agent.tools.compat import complement_split, facet_note, named_operators, operators_in, refusal_reason
from argus.agent.tools.count_pipeline import count_many_pipeline, examples_projection
from argus.agent.tools.get_stats import (
    build_pipeline,
    duplicate_branches,
    duplicates_rows,
    stats_result,
    value_condition,
)
from argus.agent.tools.group_stats import group_pipeline, group_results, groupable
from argus.agent.tools.guard_pipeline import check_pipeline
from argus.agent.tools.models import (
    DUPLICATES_CAP,
    CountedQuery,
    CountManyInput,
    CountManyResult,
    CountQuery,
    GetStatsInput,
    StatsResult,
)
from argus.agent.tools.profile_pass import from_profile
from argus.agent.tools.target import AuditTarget

__all__ = ["ISOLATION_PASSES", "TIMEOUTS_IN_A_ROW", "count_many"]

ISOLATION_PASSES = 16   # reads spent, at most, splitting a refused batch whose refusal names nothing
TIMEOUTS_IN_A_ROW = 3   # timeouts in a row (outnumbering the answers) before the rest are not asked
_EVERY_BATCH = frozenset({"$match", "$count", "$limit"})  # stages a refusal may name that every check uses
log = structlog.get_logger(__name__)


def _answered(query: Any, matched: int, check: CountQuery, rows: list[Any]) -> CountedQuery:
    """A count with its examples (``_id`` left out, as asked) and its failing documents, from one read."""
    rows = [encode(d) for d in rows]
    examples = rows[:check.examples] if check.examples_of is not None else []
    if check.failing and check.examples_of != "_id":
        examples = [{k: v for k, v in d.items() if k != "_id"} for d in examples]
    failing = rows[:check.failing] if check.examples_of is not None else []
    return CountedQuery(filter=encode(query), matched_count=matched, documents=examples, failing=failing)


@dataclass
class _Item:
    """One check of the batch: a counted filter or a statistic, with the operators it uses."""

    slot: int
    check: CountQuery | GetStatsInput
    operators: set[str] = field(default_factory=set)


@dataclass
class _Run:
    """The answers so far, and what is left of the isolation budget."""

    target: AuditTarget
    answers: dict[int, CountedQuery | StatsResult] = field(default_factory=dict)
    budget: int = ISOLATION_PASSES
    reads: int = 0
    totals: SegmentTotals | None = None

    @property
    def segments(self) -> SegmentPass | None:
        return self.target.segments

    @property
    def want_totals(self) -> bool:
        """The run's segment totals ride in its first batch that is answered."""
        segments = self.target.segments
        return segments is not None and not segments.totals_counted and self.totals is None


def count_many(target: AuditTarget, params: CountManyInput) -> CountManyResult:
    """Count every filter of ``params.queries`` and compute every ``params.stats`` in one pass,
    degrading as the module docstring says when the server refuses the batch."""
    pipeline, _ = count_many_pipeline(params)
    query_used = json.dumps(encode(pipeline), separators=(",", ":"))[:2000]
    if not pipeline:
        return CountManyResult(collection=target.name, counts=[], stats=[], query_used=query_used)
    items = [_Item(i, q, operators_in(decode(q.filter))) for i, q in enumerate(params.queries)]
    items += [_Item(len(params.queries) + i, s, operators_in(_stat_pipeline(s))) for i, s in enumerate(params.stats)]
    run = _Run(target)
    if target.refusals.refuses("$facet"):
        _one_by_one(run, items)
    else:
        # A server known to refuse $not: its checks are counted by subtraction (two counts each), not sent in the batch.
        apart = [i for i in items if target.refusals.refuses("$not") and _subtractable(i)]
        if apart:
            _one_by_one(run, apart)
        rest = [i for i in items if i not in apart]
        if not target.in_memory and target.segments is None:
            rest = _profiled(run, rest)  # a live server: what one profile of the fields answers, from it
        if not target.in_memory:  # and min/max statistics in one $group, not a $facet branch each
            rest = _grouped(run, rest)
        if rest and target.in_memory:  # Argus's own process: a pass gets the run's remaining time, whatever its size
            _batched(run, rest, first=True)
        elif rest:
            _sized(run, rest)
    answers = [run.answers[item.slot] for item in items]
    counts = [a for a in answers if isinstance(a, CountedQuery)]
    stats = [a for a in answers if isinstance(a, StatsResult)]
    refused = sum(1 for a in answers if a.error is not None)
    if run.reads or refused:
        log.warning("batch_degraded", checks=len(items), unanswered=refused, extra_reads=run.reads)
    return CountManyResult(collection=target.name, counts=counts, stats=stats, query_used=query_used,
                           segment_totals=run.totals)


def _profiled(run: _Run, items: list[_Item]) -> list[_Item]:
    """Answer from a profile of the fields what it answers exactly (``argus.agent.tools.profile_pass``); returns
    the items left for the batch."""
    answers = from_profile(run.target, [(i.slot, i.check) for i in items], one_pass=_one_pass(run, items))
    run.answers.update(answers)
    return [i for i in items if i.slot not in answers]


def _kind(items: list[_Item]) -> str:
    """How a batch is sized (``batch_size``): ``stats`` when it holds a statistic, else ``counts``."""
    return "stats" if any(isinstance(i.check, GetStatsInput) for i in items) else "counts"


def _one_pass(run: _Run, items: list[_Item]) -> bool:
    """Whether ``items`` fit one batched pass on this server, as far as its sizes are known."""
    return run.target.sizing.first_chunk(_kind(items), len(items)) == len(items)


def _grouped(run: _Run, items: list[_Item]) -> list[_Item]:
    """Answer the statistics ``group_stats`` can in one ``$group`` (two or more of them); returns the
    items left for the batch: the others, those over a field holding arrays, and all of them if the server
    refused or timed out the group (the batch then asks them as it would have). When the others fit one
    pass, the group rides in it as one more branch of its ``$facet``: one pass, not two."""
    if run.target.sizing.first_chunk("stats", len(items)) == len(items):
        return items  # the batch fits one pass: a $group beside it would be a pass more, not one less
    grouped = [i for i in items if isinstance(i.check, GetStatsInput) and groupable(i.check)]
    if len(grouped) < 2:
        return items
    stats = [i.check for i in grouped if isinstance(i.check, GetStatsInput)]
    rest = [i for i in items if i not in grouped]
    if rest and run.segments is None and _one_pass(run, rest):
        rows = _riding(run, rest, stats)
        if rows is not None:
            return _group_answered(run, grouped, stats, rows)
    pipeline = group_pipeline(stats)
    check_pipeline(pipeline)
    try:
        rows = run.target.aggregate(pipeline)
    except (QueryRejected, QueryTimeout) as exc:
        run.target.refusals.learn("grouped statistics", f"a $group of min/max statistics was not answered "
                                                        f"({type(exc).__name__}): they were batched as branches")
        return items
    # In slot order: a pass answers its counts before its statistics (``_batched`` pairs them so), and the
    # group's leftover statistics ahead of the counts swapped their answers.
    return sorted(_group_answered(run, grouped, stats, rows) + rest, key=lambda i: i.slot)


def _riding(run: _Run, rest: list[_Item], stats: list[GetStatsInput]) -> list[Any] | None:
    """Ask ``rest`` in one pass with the ``$group`` of ``stats`` as one more branch; the group's rows, or
    None (nothing answered) when the server refused or timed out the pass."""
    part = _params(rest)
    try:
        pipeline, filters = count_many_pipeline(part, group=stats)
        out = _facet_rows(run.target, pipeline)
        done = _answers(run, part, out, pipeline, filters)
    except (QueryRejected, QueryTimeout):
        run.reads += 1
        return None
    answers: list[CountedQuery | StatsResult] = [*done.counts, *done.stats]
    for item, answer in zip(rest, answers, strict=True):
        run.answers[item.slot] = answer
    return out.get("grp") or []


def _group_answered(run: _Run, grouped: list[_Item], stats: list[GetStatsInput], rows: list[Any]) -> list[_Item]:
    """Record the group's answers; returns the grouped items left over (a field holding arrays)."""
    answered, leftover = group_results(stats, run.target.name, rows)
    for n, answer in answered.items():
        run.answers[grouped[n].slot] = answer
    return [grouped[n] for n in leftover]


def _params(items: list[_Item]) -> CountManyInput:
    return CountManyInput(queries=[i.check for i in items if isinstance(i.check, CountQuery)],
                          stats=[i.check for i in items if isinstance(i.check, GetStatsInput)])


def _batched(run: _Run, items: list[_Item], *, first: bool = False) -> None:
    """Ask ``items`` in one batch; on a refusal or a timeout, degrade (see the module docstring)."""
    if not first:
        if run.budget <= 0 or len(items) == 1:
            _one_by_one(run, items)
            return
        run.budget -= 1
        run.reads += 1
    part = _params(items)
    try:
        done = _counted(run, part, *count_many_pipeline(part, run.segments, totals=run.want_totals))
    except QueryTimeout:
        run.target.refusals.learn("batch timeout", "a batched pass reached its time limit: its checks were asked one "
                                                   "at a time")
        _one_by_one(run, items)
        return
    except QueryRejected as exc:
        _refused(run, items, exc)
        return
    answers: list[CountedQuery | StatsResult] = [*done.counts, *done.stats]
    for item, answer in zip(items, answers, strict=True):
        run.answers[item.slot] = answer


def _sized(run: _Run, items: list[_Item]) -> None:
    """Ask ``items`` in chunks a pass answers within the server's time limit (``argus.agent.tools.batch_size``):
    the first chunk times a check, the rest go in as few chunks as fit; a chunk that times out is halved."""
    sizing, limit_ms = run.target.sizing, run.target.max_time_ms
    kind = _kind(items)
    head = items[:sizing.first_chunk(kind, len(items))]
    rest = items[len(head):]
    pending = [head]
    while pending:
        chunk = pending.pop(0)
        t0 = time.perf_counter()
        try:
            done = _counted(run, _params(chunk), *count_many_pipeline(_params(chunk), run.segments,
                                                                      totals=run.want_totals))
        except QueryTimeout:
            if len(chunk) == 1 or run.target.exhausted() is not None:
                _one_by_one(run, chunk)
            else:
                size = sizing.timed_out(kind, len(chunk))
                run.target.refusals.learn(f"batch timeout {kind}", f"a batched pass reached its time limit: later "
                                                                   f"passes of {kind} carry at most {size} checks each")
                half = len(chunk) // 2
                pending[:0] = [chunk[:half], chunk[half:]]
        except QueryRejected as exc:
            _refused(run, chunk, exc)
        else:
            elapsed_ms = (time.perf_counter() - t0) * 1000
            if len(chunk) >= min(FIRST_CHUNK, sizing.known(kind) or FIRST_CHUNK) or elapsed_ms > limit_ms * FILL:
                sizing.learn(kind, len(chunk), elapsed_ms, limit_ms)  # a full chunk, or one too slow for its size
            answers: list[CountedQuery | StatsResult] = [*done.counts, *done.stats]
            for item, answer in zip(chunk, answers, strict=True):
                run.answers[item.slot] = answer
        if not pending and rest:
            pending, rest = sizing.chunks(kind, rest), []
        if pending:
            run.reads += 1


def _refused(run: _Run, items: list[_Item], exc: QueryRejected) -> None:
    named = named_operators(exc)
    # ``$expr is not allowed inside a $facet stage`` names the check's operator first; a refusal of
    # ``$facet`` alone is the stage itself.
    culprits = (named - _EVERY_BATCH - {"$facet"}) & set().union(*(i.operators for i in items))
    if "$facet" in named and not culprits:
        run.target.refusals.learn("$facet", facet_note(exc))
        _one_by_one(run, items)
        return
    code = f" (code {exc.code})" if exc.code is not None else ""
    if culprits:
        using = [i for i in items if i.operators & culprits]
        rest = [i for i in items if not i.operators & culprits]
        if rest:
            _batched(run, rest)
        _probe_then_ask(run, using, culprits, code)
    elif named or len(items) == 1:  # the batch's own stages ($or, $count), or nothing left to split
        stages = ", ".join(sorted(named)) or "a batched pass"
        run.target.refusals.learn(f"batch {stages}", f"the server refused {stages} in a batched pass{code}: its "
                                                     f"checks were asked one at a time")
        _one_by_one(run, items)
    else:
        run.target.refusals.learn("batch split", f"the server refused a batched pass without naming what it refused"
                                                 f"{code}: the batch was split until the refused checks stood alone, "
                                                 f"and those were asked one at a time")
        half = len(items) // 2
        _batched(run, items[:half])
        _batched(run, items[half:])


def _probe_then_ask(run: _Run, items: list[_Item], culprits: set[str], code: str) -> None:
    """Checks using an operator the server named: ask one alone. Refused there too, the server does
    not take the operator at all and none of the others is asked; else ask them one by one."""
    known = {op for op in culprits if run.target.refusals.refuses(_operator(op))}
    if known:
        for item in items:
            run.answers[item.slot] = _unanswered(run.target, item, f"the server refused {', '.join(sorted(known))}")
        return
    first, others = items[0], items[1:]
    run.reads += 1
    try:
        run.answers[first.slot] = _alone(run.target, first)
    except QueryRejected as exc:
        refused = named_operators(exc) & culprits
        run.answers[first.slot] = _unanswered(run.target, first, refusal_reason(exc, first.operators))
        if refused:
            for op in sorted(refused):
                run.target.refusals.learn(_operator(op), f"the server refuses {op}, also in a query of its own: "
                                                         f"the checks written with it were not answered")
            for item in others:
                run.answers[item.slot] = _unanswered(run.target, item, refusal_reason(exc, item.operators))
            return
    except QueryTimeout:
        run.answers[first.slot] = _unanswered(run.target, first, "timed out")
    ops = ", ".join(sorted(culprits))
    run.target.refusals.learn(f"batched {ops}", f"the server refused {ops} inside a batched pass{code}: the checks "
                                                f"written with it were asked one at a time")
    _one_by_one(run, others)


def _one_by_one(run: _Run, items: list[_Item]) -> None:
    """Each check asked on its own, while the run's budgets last, and until timeouts come
    ``TIMEOUTS_IN_A_ROW`` in a row and outnumber the answers (a server too slow for any of them)."""
    timeouts = answered = in_a_row = 0
    for item in items:
        spent = run.target.exhausted()
        known = sorted(op for op in item.operators if run.target.refusals.refuses(_operator(op))
                       and not (op == "$not" and _subtractable(item)))
        if spent is not None:
            run.answers[item.slot] = _unanswered(run.target, item, f"not asked: {spent}")
        elif in_a_row >= TIMEOUTS_IN_A_ROW and timeouts > answered:
            run.answers[item.slot] = _unanswered(run.target, item, f"not asked: {TIMEOUTS_IN_A_ROW} checks in a row "
                                                                   f"reached the time limit")
        elif known:
            run.answers[item.slot] = _unanswered(run.target, item, f"the server refused {', '.join(known)}")
        else:
            run.reads += 1
            try:
                run.answers[item.slot] = _alone(run.target, item)
                answered, in_a_row = answered + 1, 0
            except QueryRejected as exc:
                run.answers[item.slot] = _unanswered(run.target, item, refusal_reason(exc, item.operators))
            except QueryTimeout:
                timeouts, in_a_row = timeouts + 1, in_a_row + 1
                run.answers[item.slot] = _unanswered(run.target, item, "timed out")


def _alone(target: AuditTarget, item: _Item) -> CountedQuery | StatsResult:
    """One check outside the batch: ``count_documents`` (and ``find`` for examples), or the statistic's
    own pipeline (``duplicates`` as its two pipelines when the server refuses its ``$facet``)."""
    check = item.check
    if isinstance(check, CountQuery):
        query = decode(check.filter)
        matched = target.count_documents(query)
        documents: list[Any] = []
        by_subtraction = target.refusals.refuses("$not") and "$not" in item.operators  # no query finds them
        if check.examples_of is not None and matched and not by_subtraction:
            documents = target.find(query, examples_projection(check), max(check.examples, check.failing))
        return _answered(query, matched, check, documents)
    query = decode(check.filter) if check.filter else None
    value_filter = value_condition(check.value_filter)
    pipeline = build_pipeline(check.field, check.operation, query, value_filter, check.limit)
    if check.operation == "duplicates":
        rows = duplicates_rows(target, check.field, query, value_filter, pipeline)
    else:
        rows = target.aggregate(pipeline)
    return stats_result(check, target.name, rows, query, pipeline)


def _subtractable(item: _Item) -> bool:
    """A count whose one ``$not`` a server refusing it still answers by subtraction (``AuditTarget``)."""
    return "$not" in item.operators and isinstance(item.check, CountQuery) \
        and complement_split(decode(item.check.filter)) is not None


def _unanswered(target: AuditTarget, item: _Item, reason: str) -> CountedQuery | StatsResult:
    check = item.check
    if isinstance(check, CountQuery):
        return CountedQuery(filter=check.filter, matched_count=0, error=reason)
    return StatsResult(collection=target.name, field=check.field, operation=check.operation, value=None,
                       error=reason, query_used="")


def _stat_pipeline(stat: GetStatsInput) -> list[dict[str, Any]]:
    return build_pipeline(stat.field, stat.operation, decode(stat.filter) if stat.filter else None,
                          value_condition(stat.value_filter), stat.limit)


def _operator(op: str) -> str:
    """How a refused operator is kept among the run's refusals (apart from the stages with a fallback)."""
    return f"operator {op}"


def _duplicate_totals(target: AuditTarget, stat: GetStatsInput, query: dict[str, Any] | None,
                      top: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A ``duplicates`` statistic's totals: those of its rows when every repeated value came back (at most
    ``DUPLICATES_CAP``), else its totals pipeline asked alone (one more read, for a field with more)."""
    if len(top) <= DUPLICATES_CAP:
        return [{"values": len(top), "documents": sum(int(row["n"]) for row in top)}]
    totals = duplicate_branches(stat.field, query, value_condition(stat.value_filter))[1]
    check_pipeline(totals)
    return target.aggregate(totals)


def _counted(run: _Run, params: CountManyInput, pipeline: list[dict[str, Any]],
             filters: list[Any]) -> CountManyResult:
    return _answers(run, params, _facet_rows(run.target, pipeline), pipeline, filters)


def _facet_rows(target: AuditTarget, pipeline: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """The one document a batch's ``$facet`` answers: its branches' rows by name."""
    rows = target.aggregate(pipeline) if pipeline else []
    return rows[0] if rows else {}


def _answers(run: _Run, params: CountManyInput, out: dict[str, list[Any]], pipeline: list[dict[str, Any]],
             filters: list[Any]) -> CountManyResult:
    """The counts and statistics of ``params`` from the branches' rows ``out``."""
    target, segments = run.target, run.segments
    counts = []
    for i, (query, check) in enumerate(zip(filters, params.queries, strict=True)):
        counted = out.get(f"q{i}") or []
        answered = _answered(query, int(counted[0]["n"]) if counted else 0, check, out.get(f"e{i}") or [])
        if segments is not None and f"g{i}" in out:
            answered.segments = segments.counts(out.get(f"g{i}") or [])
        counts.append(answered)
    if segments is not None and "segt" in out:
        run.totals = segments.count_totals(out["segt"], out.get("sega") or [])
    stats = []
    for i, stat in enumerate(params.stats):
        query = decode(stat.filter) if stat.filter else None
        if stat.operation == "duplicates":
            top = out.get(f"s{i}_0") or []
            rows_for = [{"top": top, "totals": _duplicate_totals(target, stat, query, top)}]
        else:
            rows_for = out.get(f"s{i}_0") or []
        branch = build_pipeline(stat.field, stat.operation, query, value_condition(stat.value_filter), stat.limit)
        stats.append(stats_result(stat, target.name, rows_for, query, branch))
    return CountManyResult(collection=target.name, counts=counts, stats=stats,
                           query_used=json.dumps(encode(pipeline), separators=(",", ":"))[:2000])
