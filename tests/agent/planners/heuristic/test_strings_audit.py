"""String fields audited end to end: the findings a user sees, with their exact counts."""

from __future__ import annotations

import random
from typing import Any

from argus.agent.clock import ManualClock
from argus.agent.loop import run_audit
from argus.agent.options import AuditOptions
from argus.agent.planners.heuristic import HeuristicPlanner
from argus.agent.report import AuditReport
from tests.agent.planners.heuristic.datasets import NOW


def _audit(make_target, docs: list[dict[str, Any]]) -> AuditReport:  # type: ignore[no-untyped-def]
    return run_audit(make_target(docs), HeuristicPlanner(clock=ManualClock(NOW)), options=AuditOptions(),
                     clock=ManualClock(NOW))


def _found(report: AuditReport) -> set[tuple[str, str, int]]:
    return {(f.field, f.category.value, f.affected_count) for f in report.findings}


def test_clean_strings_that_start_with_a_number_are_quiet(make_target) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(11)
    docs = [{"term": rng.choice(["2024-FA", "2025-SP", "2025-FA"]), "opens": f"{rng.randint(6, 11):02d}:30",
             "street": f"{rng.randint(1, 999)} {rng.choice(['Oak', 'Pine', 'Main', 'Elm'])} St",
             "strength": rng.choice(["5 mg", "10 mg", "500 mg", "850 mg"]),
             "floor": rng.choice(["1st", "2nd", "3rd", "4th"]), "flat": f"{rng.randint(1, 40)}{rng.choice('ABCD')}"}
            for _ in range(400)]
    assert _found(_audit(make_target, docs)) == set()


def test_codes_of_the_wrong_length_are_counted(make_target) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(9)
    docs = [{"zip": f"{rng.randint(1001, 99950):05d}",
             "phone": f"({rng.randint(200, 989)}) {rng.randint(200, 989)}-{rng.randint(0, 9999):04d}"}
            for _ in range(600)]
    for j, i in enumerate(range(1, 41, 2)):  # 20 zips: ten of four digits, ten of zeros; 20 phones a digit short
        docs[i]["zip"] = [docs[i]["zip"][:4], "00000"][j % 2]
        docs[i]["phone"] = docs[i]["phone"][:-1]
    assert _found(_audit(make_target, docs)) == {("zip", "format_violation", 20), ("phone", "format_violation", 20)}


def test_well_formed_placeholder_emails_are_counted(make_target) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(7)
    docs = [{"patient": {"email": f"user{i}.{rng.choice(['ito', 'khan'])}@{rng.choice(['mail.org', 'пример.рф'])}"}}
            for i in range(600)]
    for j, i in enumerate(range(1, 49, 2)):  # 24 placeholders, 6 of them no address at all
        docs[i]["patient"]["email"] = ["test@test.com", "noreply@example.com", "None@None.com", "N/A"][j % 4]
    # each defect once: the well-formed placeholders as placeholders, 'N/A' as no address
    assert _found(_audit(make_target, docs)) == {("patient.email", "empty_value", 18),
                                                 ("patient.email", "format_violation", 6)}


def test_addresses_rewritten_to_a_reserved_domain_are_the_data_not_placeholders(make_target) -> None:  # type: ignore[no-untyped-def]
    docs = [{"email": f"user{i}@example.com"} for i in range(300)]
    assert _found(_audit(make_target, docs)) == set()


def test_placeholders_are_counted_when_the_field_lives_at_a_reserved_domain(make_target) -> None:  # type: ignore[no-untyped-def]
    docs = [{"crew_email": f"crew{i}@airline.example"} for i in range(500)]
    for j, i in enumerate(range(1, 41, 2)):
        docs[i]["crew_email"] = ["test@test.com", "noreply@example.com", "n/a", "none@airline.example"][j % 4]
    assert _found(_audit(make_target, docs)) == {("crew_email", "empty_value", 15),
                                                 ("crew_email", "format_violation", 5)}


def test_a_generator_domain_among_real_ones_is_the_data_not_placeholders(make_target) -> None:  # type: ignore[no-untyped-def]
    """A quarter of the customers at example.com (a generator following RFC 2606, a masked copy):
    distinct people at a reserved domain are the data's convention, not 1,200 placeholders."""
    rng = random.Random(5)
    docs = [{"email": f"user{i}@{rng.choice(['example.com', 'mail.org', 'inbox.io', 'corp.net'])}"} for i in range(800)]
    assert _found(_audit(make_target, docs)) == set()
