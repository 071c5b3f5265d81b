"""Reports for people: a rich table on the terminal, and a progress line while a run goes."""

from __future__ import annotations

import json
from collections.abc import Sequence
from uuid import UUID

import structlog
from rich.console import Console
from rich.markup import escape
from rich.status import Status
from rich.table import Table

from argus.agent.contracts.model import ContractReport
from argus.agent.custom_metrics.models import MetricResult
from argus.agent.health.models import HealthSnapshot, age_text
from argus.agent.history import DiffEntry, RunDiff
from argus.agent.report import AuditReport, TraceEntry
from argus.agent.shapes.text import shape_lines
from argus.agent.state import AgentState
from argus.daemon.store import RunSummary

__all__ = ["ProgressDisplay", "StepLog", "print_diff", "print_metrics", "print_report", "print_runs"]

log = structlog.get_logger("argus.audit")

_STYLE = {"critical": "bold red", "high": "red", "medium": "yellow", "low": "cyan"}


def _change(entry: DiffEntry | None) -> str:
    if entry is None:
        return ""
    text: str = entry.status if entry.status != "suppressed" else "suppressed by a label"
    if entry.new_persistent:
        text += " [bold magenta]new persistent[/]"
    return text


def _diff_line(diff: RunDiff) -> str:
    counts = diff.counts()
    parts = [f"{n} {status}" for status, n in counts.items() if n]
    if diff.unseen:
        parts.append(f"{diff.unseen} not found this time (not called resolved)")
    if diff.previous_run_id is None:
        return "first stored run of this collection"
    suffix = "" if diff.complete else " (scoped run: only a full audit calls a finding resolved)" if diff.scoped \
        else " (partial run: nothing called resolved)"
    return f"since run {diff.previous_run_id}: {', '.join(parts) or 'no findings either time'}{suffix}"


def _source(time_source: str | None) -> str:
    """Where the newest time came from: ObjectId times record inserts, not the data's own dates."""
    if time_source is None:
        return ""
    if time_source == "_id":
        return " by _id's ObjectId time"
    if time_source.startswith("sample:"):
        return f" by the newest {time_source.removeprefix('sample:')} in the sample"
    return f" by {time_source}"


def _health_line(health: HealthSnapshot) -> str:
    parts = [f"{health.documents:,} documents"]
    if health.inserts is not None:
        parts.append(f"{health.inserts:,} inserted since the last run")
    if health.freshness_s is not None:
        usual = f" (usually up to {age_text(health.usual_age_s)})" if health.usual_age_s is not None else ""
        parts.append(f"newest {age_text(health.freshness_s)} old{_source(health.time_source)}{usual}")
    return " · ".join(parts)



def _evidence(query: object) -> str:
    """The evidence query as one line of JSON, to copy into mongosh (masked as the run's privacy mode says)."""
    return json.dumps(query, separators=(", ", ": "), ensure_ascii=False, default=str)


def print_report(report: AuditReport, console: Console, *, finding_ids: bool = False) -> None:
    where = f"{report.database}.{report.collection}"
    console.print(f"[bold]Argus audit of {where}[/bold]  run {report.run_id}")
    console.print(f"outcome {report.outcome} ({report.termination_reason}) · {report.iterations} iterations · "
                  f"{report.duration_s:.1f}s · sampled {report.documents_sampled:,} of {report.collection_size:,} "
                  f"documents · {report.fields_investigated}/{report.fields_total} fields checked · "
                  f"planner {report.planner}" + (f" ({report.model})" if report.model else ""))
    if report.llm is not None:
        usage = report.token_usage
        console.print(f"llm {usage.input_tokens:,} input + {usage.output_tokens:,} output tokens "
                      f"({usage.cached_tokens:,} cached) · ${report.cost_usd:.4f}", highlight=False)
    if report.window is not None:
        w = report.window
        index = {True: "an index leads with it", False: "no index leads with it", None: "indexes unknown"}[w.indexed]
        console.print(f"window {w.describe()} · {w.documents:,} documents · {index} (shares are of the window)",
                      highlight=False)
    if report.health is not None:
        console.print(f"health {_health_line(report.health)}", highlight=False)
    for line in shape_lines(report.shapes):
        console.print(line, highlight=False, markup=False)
    cost = report.database_cost
    ru = f" · {cost.request_units:,.1f} RU" if cost.request_units is not None else ""
    throttled = f" · {cost.throttled} throttled" if cost.throttled else ""
    metric_reads = f" ({cost.metric_reads} for metrics)" if cost.metric_reads else ""
    console.print(f"database {cost.queries_sent} queries{metric_reads} · {cost.passes} passes over the collection · "
                  f"{cost.documents_examined:,} documents examined{ru}{throttled}", highlight=False)
    if report.diff is not None:
        console.print(f"changes {_diff_line(report.diff)}", highlight=False)
    if report.error:
        console.print(f"[red]error:[/red] {report.error}")
    for note in report.notes:
        console.print(f"[yellow]note:[/yellow] {note}")
    if report.contract is not None:
        _print_contract(report.contract, console)
    if report.metrics:
        print_metrics(report.metrics, console)
    if report.outcome == "failed":
        console.print("[red]The audit failed: the findings below are what it found before.[/red]" if report.findings
                      else "[red]No findings: the audit failed before it could check the collection.[/red]")
    elif report.documents_sampled == 0 and report.collection_size == 0:
        console.print("[yellow]0 documents: the collection is empty, nothing was audited.[/yellow] "
                      "(A contract's `documents: {min: 1}` makes a gate fail on it.)", highlight=False)
    elif not report.findings:
        console.print("[green]No findings.[/green]")
    if report.findings:
        entries = {e.finding_id: e for e in report.diff.entries} if report.diff else {}
        table = Table(show_lines=False, header_style="bold")
        columns = ["severity", "category", "field", "affected", "share"]
        columns += ["change"] if report.diff else []
        columns += ["id"] if finding_ids else []
        columns += ["pattern"] if report.diff else []  # the fingerprint `argus mute --fingerprint` takes
        for column in [*columns, "description"]:
            short = column in ("id", "pattern")
            table.add_column(column, overflow="fold", no_wrap=short, min_width={"id": 8, "pattern": 12}.get(column))
        order = sorted(report.findings, key=lambda f: (-f.severity.rank, -f.affected_count, f.field))
        for f in order:
            row = [f"[{_STYLE[f.severity.value]}]{f.severity.value}[/]", f.category.value, f.field,
                   f"{f.affected_count:,}", f"{f.affected_pct:.2%}"]
            row += [_change(entries.get(f.id))] if report.diff else []
            row += [str(f.id)[:8]] if finding_ids else []
            row += [entries[f.id].fingerprint[:12] if f.id in entries else ""] if report.diff else []
            table.add_row(*row, escape(f.description))  # a description may quote [brackets]
        console.print(table)
        for f in order:  # one line each, never wrapped: to copy into mongosh whole
            console.print(f"evidence {f.field} {f.category.value}: {_evidence(f.evidence_query)}", markup=False,
                          highlight=False, soft_wrap=True)
        for f in order:  # "157 documents; 150 of them tenant=acme"
            if f.segments is not None and f.segments.counts:
                console.print(f"segments {f.field} {f.category.value}: {f.segments.line(f.affected_count)}",
                              markup=False, highlight=False, soft_wrap=True)
    if report.diff is not None:
        for e in report.diff.by_status("resolved"):
            was = e.previous_severity.value if e.previous_severity else "?"
            console.print(f"resolved: {e.category.value} on {e.field} (was {was} at "
                          f"{(e.previous_affected_pct or 0):.2%})", highlight=False)
        for e in report.diff.by_status("suppressed"):
            console.print(f"suppressed by a label: {e.category.value} on {e.field} (labelled a false positive; "
                          f"no longer reported unless its share grows)", highlight=False, markup=False)
    if report.dismissed_findings:
        console.print(f"{len(report.dismissed_findings)} candidate finding(s) dismissed by the finding gate.")


_RESULT_STYLE = {"passed": "green", "warned": "yellow", "failed": "red", "unchecked": "yellow", "unmatched": "yellow"}


def _print_contract(contract: ContractReport, console: Console) -> None:
    """``contract contracts/sales.yaml: 14 rules, 13 passed, 1 failed`` and each rule with its result."""
    console.print(f"contract {contract.source}: {contract.summary()}", highlight=False, markup=False)
    for warning in contract.warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(warning)}")
    if not contract.rules:
        return
    table = Table(header_style="bold")
    for column in ("result", "field", "rule", "documents", "line", "detail"):
        table.add_column(column, overflow="fold")
    for r in contract.rules:
        table.add_row(f"[{_RESULT_STYLE[r.result]}]{r.result}[/]", escape(r.field), escape(r.expect),
                      "" if r.count is None else f"{r.count:,}", str(r.line), escape(r.detail))
    console.print(table)


_VERDICT_STYLE = {"fail": "red", "anomaly": "red", "error": "red", "warn": "yellow", "no_value": "yellow",
                  "ok": "green", "learning": "cyan", "excluded": "cyan"}


def print_metrics(metrics: Sequence[MetricResult], console: Console) -> None:
    """``metrics 2 read, 1 breached`` and each value (per segment) with its verdict and what was expected."""
    breached = sum(1 for m in metrics if m.verdict in ("warn", "anomaly", "fail"))
    console.print(f"metrics {len(metrics)} read (one read each), {breached} breached", highlight=False)
    table = Table(header_style="bold")
    for column in ("verdict", "metric", "segment", "value", "expected"):
        table.add_column(column, overflow="fold")
    for m in metrics:
        if m.error is not None:
            table.add_row("[red]error[/]", escape(m.name), "", "", escape(m.error))
        for v in m.values:
            segment = "" if v.segment is None else f"{v.group} ({v.segment})" if v.group else v.segment
            value = "" if v.value is None else f"{v.value:.6g}"
            z = f" · z {v.z:+.1f}" if v.z is not None else ""
            table.add_row(f"[{_VERDICT_STYLE[v.verdict]}]{v.verdict}[/]", escape(m.name), escape(segment), value,
                          escape((v.expected or "") + z))
    console.print(table)


class StepLog:
    """An ``AuditObserver`` that logs every iteration (``--verbose``): the action, the gate's
    verdict and the outcome, with the trace's value-free observation; never the action's input,
    which may hold query literals."""

    def on_step(self, state: AgentState, entry: TraceEntry) -> None:
        log.info("audit_step", iteration=entry.iteration, action=entry.action, verdict=entry.verdict,
                 outcome=entry.outcome, observation=entry.observation[:200], findings=len(state.findings),
                 duration_ms=round(entry.duration_ms, 1))


class ProgressDisplay:
    """An ``AuditObserver`` that keeps one status line current on stderr (and passes each step
    on to ``steps``, when given)."""

    def __init__(self, console: Console, label: str, steps: StepLog | None = None) -> None:
        self._status: Status = console.status(f"auditing {label}")
        self._label = label
        self._steps = steps

    def __enter__(self) -> ProgressDisplay:
        self._status.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._status.stop()

    def on_step(self, state: AgentState, entry: TraceEntry) -> None:
        self._status.update(f"auditing {self._label} · iteration {state.iteration}/{state.iteration_budget} · "
                            f"{entry.action} · {len(state.findings)} findings")
        if self._steps is not None:
            self._steps.on_step(state, entry)


def print_runs(runs: Sequence[RunSummary], console: Console) -> None:
    if not runs:
        console.print("No stored runs.")
        return
    table = Table(header_style="bold")
    for column in ("run", "started"):
        table.add_column(column, no_wrap=True, min_width=8 if column == "run" else 19)
    for column in ("collection", "outcome", "findings", "new", "resolved", "duration", "planner"):
        table.add_column(column, overflow="fold")
    for r in runs:
        outcome = r.outcome if r.outcome != "failed" else "[red]failed[/]"
        table.add_row(str(r.id)[:8], r.started_at.strftime("%Y-%m-%d %H:%M:%S"),
                      f"{r.connection}/{r.database}.{r.collection}", outcome, str(r.findings), str(r.new),
                      str(r.resolved), f"{r.duration_s:.1f}s", r.planner)
    console.print(table)


def print_diff(older: UUID, newer: UUID, diff: RunDiff, console: Console) -> None:
    console.print(f"run {newer} compared with run {older}")
    if not diff.entries:
        console.print("No findings in either run.")
        return
    table = Table(header_style="bold")
    for column in ("change", "severity", "category", "field", "affected share", "before"):
        table.add_column(column, overflow="fold")
    order = {"new": 0, "regressed": 1, "resolved": 2, "suppressed": 3, "improved": 4, "persisting": 5}
    for e in sorted(diff.entries, key=lambda e: (order[e.status], e.field)):
        before = "" if e.previous_affected_pct is None else \
            f"{e.previous_severity.value if e.previous_severity else ''} {e.previous_affected_pct:.2%}"
        table.add_row(_change(e), e.severity.value, e.category.value, e.field, f"{e.affected_pct:.2%}", before)
    console.print(table)
