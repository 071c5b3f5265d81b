"""What runs do to incidents, rule by rule, without a database: the tracker is pure."""

from __future__ import annotations

from datetime import timedelta

from argus.agent.findings import Category
from argus.agent.history import fingerprint
from argus.agent.report import AuditReport
from argus.agent.window import AuditWindow
from argus.config.alerts import IncidentsConfig
from argus.daemon.incidents.models import Incident
from argus.daemon.incidents.tracker import Change, track
from tests.daemon.store.reports import T0, finding, report

CONFIG = IncidentsConfig()


class Book:
    """Incidents kept in memory between runs, numbered as the store numbers them."""

    def __init__(self, config: IncidentsConfig = CONFIG, growth_factor: float = 1.5) -> None:
        self.config, self.growth_factor = config, growth_factor
        self.incidents: list[Incident] = []
        self.held: set[str] = set()

    def run(self, r: AuditReport) -> list[Change]:
        since = r.finished_at - self.config.reopen_within
        mine = [i for i in self.incidents if i.status in ("open", "acknowledged")
                or (i.status == "resolved" and i.resolved_at is not None and i.resolved_at >= since)]
        changes = track(r, mine, config=self.config, growth_factor=self.growth_factor,
                        held=lambda fp, share: fp in self.held)
        for c in changes:
            if c.incident.id == 0:
                c.incident.id = len(self.incidents) + 1
                self.incidents.append(c.incident)
        return changes

    def notices(self, r: AuditReport) -> list[tuple[int, str | None]]:
        return [(c.incident.id, c.notice) for c in self.run(r) if c.notice]


def fp(field: str, category: str) -> str:
    return fingerprint("main", "shop", "orders", field, Category(category))


TOTAL = finding("total", "outlier_value", "high", count=100)
EMAIL = finding("email", "format_violation", "medium", count=40)
ZIP = finding("zip", "null_rate", "medium", count=60)
QTY = finding("qty", "type_mismatch", "high", count=30)


def at(hour: int, findings: list, outcome: str = "succeeded") -> AuditReport:
    return report(findings, minutes=60 * hour, outcome=outcome)


def test_findings_that_start_together_open_one_incident() -> None:
    book = Book()
    changes = book.run(at(0, [TOTAL, EMAIL, ZIP]))
    assert [(c.incident.id, c.notice) for c in changes] == [(1, "incident_opened")]
    incident = changes[0].incident
    assert incident.severity.value == "high" and incident.status == "open"
    assert [(f.field, f.affected_count) for f in incident.findings] == [("total", 100), ("email", 40), ("zip", 60)]
    assert [e.kind for e in changes[0].events] == ["opened"]
    assert changes[0].events[0].notice == "incident_opened"


def test_a_new_finding_joining_an_open_incident_sends_one_update_naming_what_joined() -> None:
    book = Book()
    book.run(at(0, [TOTAL, EMAIL]))
    changes = book.run(at(1, [TOTAL, EMAIL, ZIP, QTY]))
    assert [c.notice for c in changes] == ["incident_updated"]
    assert changes[0].changes == ["zip null_rate joined (medium, 60 documents, 1.20%)",
                                  "qty type_mismatch joined (high, 30 documents, 0.60%)"]
    assert [e.kind for e in changes[0].events] == ["joined", "joined", "updated"]
    assert len(book.incidents) == 1 and len(book.incidents[0].findings) == 4
    assert book.notices(at(2, [TOTAL, EMAIL, ZIP, QTY])) == [], "they joined already: nothing new"


def test_with_notify_joined_off_a_finding_joins_silently() -> None:
    book = Book(IncidentsConfig(notify_joined=False))
    book.run(at(0, [TOTAL, EMAIL]))
    changes = book.run(at(1, [TOTAL, EMAIL, ZIP]))
    assert [c.notice for c in changes] == [None]
    assert [(e.kind, e.detail) for e in changes[0].events] == [
        ("joined", "zip null_rate joined (medium, 60 documents, 1.20%)")]


def test_a_higher_severity_joining_escalates() -> None:
    book = Book()
    book.run(at(0, [EMAIL, ZIP]))
    critical = finding("total", "outlier_value", "critical", count=400)
    changes = book.run(at(1, [EMAIL, ZIP, critical]))
    assert [c.notice for c in changes] == ["incident_escalated"]
    assert changes[0].changes == ["total outlier_value is critical, above the medium the incident was sent at"]
    assert book.incidents[0].severity.value == book.incidents[0].notified_severity.value == "critical"
    assert book.notices(at(2, [EMAIL, ZIP, critical])) == [], "sent at critical already: nothing new"


def test_growth_past_the_factor_since_the_last_notice_escalates_once() -> None:
    book = Book()
    book.run(at(0, [TOTAL]))
    assert book.notices(at(1, [finding("total", "outlier_value", "high", count=140)])) == []  # 1.4x
    grown = book.run(at(2, [finding("total", "outlier_value", "high", count=160)]))          # 1.6x of 100
    assert [c.notice for c in grown] == ["incident_escalated"]
    assert grown[0].changes == ["total outlier_value grew from 2.00% to 3.20% of documents"]
    assert book.notices(at(3, [finding("total", "outlier_value", "high", count=200)])) == [], \
        "measured from the escalation (160): 200 is 1.25x"


def test_an_incident_resolves_after_its_findings_stay_away_for_the_configured_runs() -> None:
    book = Book(IncidentsConfig(resolve_after=2))
    book.run(at(0, [TOTAL, EMAIL]))
    first = book.run(at(1, [EMAIL]))
    assert [(e.kind, e.detail) for e in first[0].events] == [("finding_resolved", "total outlier_value resolved")]
    assert book.notices(at(2, [])) == [], "one clean run of two"
    assert book.notices(at(3, [])) == [(1, "incident_resolved")]
    assert book.incidents[0].status == "resolved"
    assert book.incidents[0].resolved_at == at(3, []).finished_at


def test_a_finding_back_before_the_incident_resolved_restarts_the_count() -> None:
    book = Book(IncidentsConfig(resolve_after=2))
    book.run(at(0, [TOTAL]))
    book.run(at(1, []))
    back = book.run(at(2, [TOTAL]))
    assert [(e.kind, c.notice) for c in back for e in c.events] == [("finding_back", None)]
    assert book.notices(at(3, [])) == []
    assert book.notices(at(4, [])) == [(1, "incident_resolved")]


def test_partial_and_failed_runs_resolve_nothing() -> None:
    book = Book(IncidentsConfig(resolve_after=1))
    book.run(at(0, [TOTAL]))
    assert book.run(at(1, [], outcome="partial")) == []
    assert book.run(at(2, [], outcome="failed")) == []
    assert book.incidents[0].status == "open" and book.incidents[0].findings[0].state == "active"
    assert book.notices(at(3, [])) == [(1, "incident_resolved")]


def test_a_scoped_run_that_no_longer_holds_a_finding_resolves_nothing_until_a_full_audit_does() -> None:
    """A window of recent documents cannot prove an older defect gone (issue 25): only a complete
    audit of the whole collection resolves a finding, as the diff decides."""
    book = Book(IncidentsConfig(resolve_after=1))
    book.run(at(0, [TOTAL]))
    window = AuditWindow(field="_id", since=T0, span_s=86400.0, documents=1000, indexed=True)
    quiet = report([], minutes=60, window=window)
    assert book.run(quiet) == []
    assert book.incidents[0].status == "open" and book.incidents[0].findings[0].state == "active"
    assert book.notices(at(2, [])) == [(1, "incident_resolved")]


def test_a_finding_back_within_the_cool_off_reopens_the_incident() -> None:
    book = Book(IncidentsConfig(resolve_after=1, reopen_within=timedelta(hours=6)))
    book.run(at(0, [TOTAL, EMAIL]))
    book.run(at(1, []))
    assert book.notices(at(5, [EMAIL])) == [(1, "incident_reopened")]
    incident = book.incidents[0]
    assert incident.status == "open" and incident.reopened == 1 and incident.resolved_at is None
    assert [f.state for f in incident.findings] == ["resolved", "active"]
    assert len(book.incidents) == 1


def test_after_the_cool_off_or_for_another_pattern_a_new_incident_opens() -> None:
    book = Book(IncidentsConfig(resolve_after=1, reopen_within=timedelta(hours=6)))
    book.run(at(0, [TOTAL]))
    book.run(at(1, []))
    assert book.notices(at(2, [ZIP])) == [(2, "incident_opened")], "zip was never in incident 1"
    book.run(at(3, []))
    assert book.notices(at(10, [TOTAL])) == [(3, "incident_opened")], "9 h after it resolved: past the cool-off"


def test_grouping_per_category_and_per_pattern() -> None:
    per_category = Book(IncidentsConfig(group_by="category"))
    other_null = finding("phone", "null_rate", "low", count=10)
    changes = per_category.run(at(0, [TOTAL, ZIP, other_null]))
    assert sorted((c.incident.group_key, len(c.incident.findings)) for c in changes) == [
        ("null_rate", 2), ("outlier_value", 1)]
    per_pattern = Book(IncidentsConfig(group_by="pattern"))
    changes = per_pattern.run(at(0, [TOTAL, ZIP, other_null]))
    assert sorted(c.incident.group_key for c in changes) == sorted(
        [fp("total", "outlier_value"), fp("zip", "null_rate"), fp("phone", "null_rate")])


def test_findings_below_the_minimum_severity_join_no_incident() -> None:
    book = Book(IncidentsConfig(min_severity="high"))
    assert book.run(at(0, [EMAIL, ZIP])) == []
    changes = book.run(at(1, [EMAIL, ZIP, TOTAL]))
    assert [f.field for c in changes for f in c.incident.findings] == ["total"]


def test_a_pattern_users_labelled_away_joins_nothing_until_it_grows() -> None:
    book = Book()
    book.held.add(fp("email", "format_violation"))
    changes = book.run(at(0, [TOTAL, EMAIL]))
    assert [f.field for f in changes[0].incident.findings] == ["total"]


def test_a_finding_stays_in_its_incident_when_the_grouping_changes() -> None:
    book = Book()
    book.run(at(0, [TOTAL, ZIP]))
    book.config = IncidentsConfig(group_by="category")
    changes = book.run(at(1, [TOTAL, ZIP, EMAIL]))
    assert sorted((c.incident.id, f.field) for c in changes for f in c.incident.findings) == [
        (1, "total"), (1, "zip"), (2, "email")]


def test_a_closed_incident_takes_no_findings_and_is_not_reopened() -> None:
    book = Book(IncidentsConfig(resolve_after=1))
    book.run(at(0, [TOTAL]))
    book.incidents[0].status = "expected"
    assert book.notices(at(1, [TOTAL])) == [(2, "incident_opened")]


def test_an_acknowledged_incident_takes_findings_and_resolves_by_itself() -> None:
    book = Book(IncidentsConfig(resolve_after=1))
    book.run(at(0, [TOTAL]))
    book.incidents[0].status = "acknowledged"
    assert book.notices(at(1, [TOTAL, ZIP])) == [(1, "incident_updated")], "its owner hears of what joined"
    assert book.incidents[0].status == "acknowledged" and len(book.incidents[0].findings) == 2
    assert book.notices(at(2, [])) == [(1, "incident_resolved")]


def test_a_lesser_finding_growing_does_not_escalate_the_incident() -> None:
    book = Book()
    book.run(at(0, [TOTAL, EMAIL]))                                        # sent at high
    more_emails = finding("email", "format_violation", "medium", count=200)  # 5x, still medium
    assert book.notices(at(1, [TOTAL, more_emails])) == []
    assert book.notices(at(2, [finding("email", "format_violation", "critical", count=600), TOTAL])) == [
        (1, "incident_escalated")], "unless it rises above the incident's severity"


def test_each_reopening_doubles_the_clean_runs_an_incident_needs_to_resolve() -> None:
    book = Book(IncidentsConfig(resolve_after=1))
    book.run(at(0, [TOTAL]))
    assert book.notices(at(1, [])) == [(1, "incident_resolved")]
    assert book.notices(at(2, [TOTAL])) == [(1, "incident_reopened")]
    assert book.notices(at(3, [])) == [], "reopened once: two clean runs now"
    assert book.notices(at(4, [])) == [(1, "incident_resolved")]
    book.run(at(5, [TOTAL]))
    assert [book.notices(at(h, [])) for h in range(6, 10)] == [[], [], [], [(1, "incident_resolved")]]
