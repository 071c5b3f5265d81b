"""Reports for people: a rich table on the terminal, and a progress line while a run goes."""

from __future__ import annotations

from rich.console import Console
from rich.status import Status
from rich.table import Table

from agent.report import AuditReport, TraceEntry
from agent.state import AgentState

__all__ = ["ProgressDisplay", "print_report"]

_STYLE = {"critical": "bold red", "high": "red", "medium": "yellow", "low": "cyan"}


def print_report(report: AuditReport, console: Console) -> None:
    where = f"{report.database}.{report.collection}"
    console.print(f"[bold]Argus audit of {where}[/bold]  run {report.run_id}")
    console.print(f"outcome {report.outcome} ({report.termination_reason}) · {report.iterations} iterations · "
                  f"{report.duration_s:.1f}s · sampled {report.documents_sampled:,} of {report.collection_size:,} "
                  f"documents · {report.fields_investigated}/{report.fields_total} fields checked · "
                  f"planner {report.planner}")
    if report.error:
        console.print(f"[red]error:[/red] {report.error}")
    for note in report.notes:
        console.print(f"[yellow]note:[/yellow] {note}")
    if not report.findings:
        console.print("[green]No findings.[/green]")
    else:
        table = Table(show_lines=False, header_style="bold")
        for column in ("severity", "category", "field", "affected", "share", "description"):
            table.add_column(column, overflow="fold")
        order = sorted(report.findings, key=lambda f: (-f.severity.rank, -f.affected_count, f.field))
        for f in order:
            table.add_row(f"[{_STYLE[f.severity.value]}]{f.severity.value}[/]", f.category.value, f.field,
                          f"{f.affected_count:,}", f"{f.affected_pct:.2%}", f.description)
        console.print(table)
    if report.dismissed_findings:
        console.print(f"{len(report.dismissed_findings)} candidate finding(s) dismissed by the finding gate.")


class ProgressDisplay:
    """An ``AuditObserver`` that keeps one status line current on stderr."""

    def __init__(self, console: Console, label: str) -> None:
        self._status: Status = console.status(f"auditing {label}")
        self._label = label

    def __enter__(self) -> ProgressDisplay:
        self._status.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._status.stop()

    def on_step(self, state: AgentState, entry: TraceEntry) -> None:
        self._status.update(f"auditing {self._label} · iteration {state.iteration}/{state.iteration_budget} · "
                            f"{entry.action} · {len(state.findings)} findings")
