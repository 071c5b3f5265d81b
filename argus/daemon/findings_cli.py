"""``argus finding show ID [--documents] [--evidence]``: one stored finding, the documents that
break it (read at audit time, as the run's privacy mode kept them) and its evidence query as a
mongosh command."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any

import typer

from argus.agent.findings import Finding
from argus.agent.privacy import has_masked
from argus.agent.report import AuditReport
from argus.daemon.cli_output import FormatOption, OutputFormat, emit, stdout_console
from argus.daemon.findings_view import finding_view, mongosh_find
from argus.daemon.store import PostgresStore

__all__ = ["register"]

WithStore = Callable[[Callable[[PostgresStore], Any]], Any]
def _located(st: PostgresStore, finding_id: str) -> tuple[AuditReport, Finding]:
    run_id, fid = st.find_finding(finding_id)
    report = st.get_report(run_id)
    return report, next(f for f in report.findings if f.id == fid)


def register(app: typer.Typer, with_store: WithStore, fail: Callable[[str], typer.Exit], *,
             panel: str | None = None) -> None:
    finding_app = typer.Typer(no_args_is_help=True, help="One stored finding: its failing documents and its "
                                                         "evidence query.")
    app.add_typer(finding_app, name="finding", rich_help_panel=panel)

    @finding_app.command("show")
    def show(finding_id: Annotated[str, typer.Argument(metavar="ID", help="the finding's id or a unique prefix, as "
                                                                          "`argus show RUN_ID` prints it")],
             documents: Annotated[bool, typer.Option("--documents", help="list the failing documents' _ids (and "
                                                                         "values, as the privacy mode allows)")]
             = False,
             evidence: Annotated[bool, typer.Option("--evidence", help="print the evidence query as a mongosh "
                                                                       "command")] = False,
             output: FormatOption = OutputFormat.table) -> None:
        """Show a stored finding; --documents lists the documents that break it, read at audit time."""
        if len(finding_id.strip()) < 4:
            raise fail("give at least 4 characters of the finding's id")
        report, finding = with_store(lambda st: _located(st, finding_id))
        if output == OutputFormat.json:
            emit(json.dumps(finding_view(report, finding), indent=2, ensure_ascii=False))
            return
        console = stdout_console()

        def say(text: str) -> None:
            console.print(text, markup=False, highlight=False, soft_wrap=True)

        if not documents and not evidence:
            say(f"finding {finding.id} of run {report.run_id} ({report.database}.{report.collection}, "
                f"{report.finished_at:%Y-%m-%d %H:%M} UTC, privacy {report.options.privacy})")
            say(f"{finding.severity.value} {finding.category.value} on {finding.field}: "
                f"{finding.affected_count:,} documents ({finding.affected_pct:.2%})")
            say(finding.description)
            if finding.rule:
                say(f"declared rule: {finding.rule}")
            say(f"failing documents: `argus finding show {str(finding.id)[:8]} --documents`; evidence query: "
                f"`argus finding show {str(finding.id)[:8]} --evidence`")
        if evidence:
            _print_evidence(say, report, finding)
        if documents:
            _print_documents(say, report, finding)

    def _print_evidence(say: Callable[[str], None], report: AuditReport, finding: Finding) -> None:
        say(mongosh_find(report.database, report.collection, finding.evidence_query))
        if finding.window is not None:
            say(f"# counted among the documents of the run's window ({finding.window.describe()}): add that "
                f"condition to see the same documents")
        if has_masked(finding.evidence_query):
            say(f"# values marked $masked were left out by the run's privacy mode ({report.options.privacy}): "
                f"this query does not select what it did; an audit with --privacy full keeps them")
            ids = [d.id for d in (finding.failing.documents if finding.failing else [])]
            if ids and all(isinstance(i, dict) for i in ids):  # ObjectIds or UUIDs, kept as they were
                say("# the failing documents read at audit time:")
                say(mongosh_find(report.database, report.collection, {"_id": {"$in": ids}}))

    def _print_documents(say: Callable[[str], None], report: AuditReport, finding: Finding) -> None:
        failing = finding.failing
        if failing is None:
            say(f"no failing documents were stored for this finding of {finding.affected_count:,} documents: its "
                f"evidence was not read with examples, or the run kept none (failing_documents: 0, or a run "
                f"before Argus kept them)")
            return
        shown = len(failing.documents)
        say(f"{shown} of {finding.affected_count:,} failing documents ({finding.field} {finding.category.value}), "
            f"read with the evidence query at {report.finished_at:%Y-%m-%d %H:%M} UTC; privacy "
            f"{report.options.privacy}")
        if failing.withheld:
            say(f"withheld: {failing.withheld} ({failing.read} read)")
        for d in failing.documents:
            values = ", ".join(json.dumps(v, ensure_ascii=False) for v in d.values) or "(no value)"
            key = "(none: the document has no _id)" if d.id is None else json.dumps(d.id, ensure_ascii=False)
            say(f"  _id {key}  {finding.field}: {values}")
