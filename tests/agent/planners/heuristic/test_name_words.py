"""The words the planner reads in field names, tested on names from public schemas, never on our
benchmarks' fields (issue 31). Each name below is cited to the schema it comes from; a word that
no public schema uses this way has no place in ``names.py``. What a word may do: add a check or
raise a severity (docs/detection.md); the values decide what is found."""

from __future__ import annotations

import pytest

from agent.planners.heuristic.names import hints_for, later_stage, optional

# (field name, where it comes from)
NON_NEGATIVE = [
    ("amount", "Stripe API, PaymentIntent.amount"),
    ("amount_refunded", "Stripe API, Charge.amount_refunded"),
    ("ss_quantity", "TPC-DS, store_sales.ss_quantity"),
    ("ss_sales_price", "TPC-DS, store_sales.ss_sales_price"),
    ("l_quantity", "TPC-H, lineitem.l_quantity"),
    ("stargazers_count", "GitHub REST API, repository.stargazers_count"),
    ("open_issues_count", "GitHub REST API, repository.open_issues_count"),
    ("run_duration_ms", "GitHub REST API, workflow run usage.run_duration_ms"),
    ("duration", "schema.org, Movie.duration"),
    ("numberOfEmployees", "schema.org, Organization.numberOfEmployees"),
    ("size", "GitHub REST API, repository.size"),
    ("age", "UCI Adult (census income) data set, column age"),
]
SIGNED = [
    ("balance", "Stripe API, Customer.balance"),
    ("net", "Stripe API, BalanceTransaction.net"),
    ("latitude", "schema.org, GeoCoordinates.latitude"),
    ("longitude", "schema.org, GeoCoordinates.longitude"),
    ("elevation", "schema.org, GeoCoordinates.elevation"),
]
PAST_EVENTS = [
    ("birthDate", "FHIR R4, Patient.birthDate"),
    ("deceasedDateTime", "FHIR R4, Patient.deceasedDateTime"),
    ("created_at", "GitHub REST API, issue.created_at"),
    ("closed_at", "GitHub REST API, issue.closed_at"),
    ("updated_at", "GitHub REST API, issue.updated_at"),
    ("created", "Stripe API, Charge.created"),
    ("dateCreated", "schema.org, CreativeWork.dateCreated"),
    ("ts", "Slack Web API, message.ts"),
]
PLANNED = [
    ("due_date", "Stripe API, Invoice.due_date"),
    ("due_on", "GitHub REST API, milestone.due_on"),
    ("current_period_end", "Stripe API, Subscription.current_period_end"),
    ("expires", "schema.org, CreativeWork.expires"),
    ("validUntil", "schema.org, Demand.validUntil"),
]
SHARED_CODES = [
    ("postalCode", "schema.org, PostalAddress.postalCode"),
    ("telephone", "schema.org, Person.telephone"),
    ("postal_code", "Stripe API, Address.postal_code"),
]


@pytest.mark.parametrize(("name", "source"), NON_NEGATIVE)
def test_money_counts_and_sizes_are_named_non_negative(name: str, source: str) -> None:
    hints = hints_for(name)
    assert (hints.nonnegative, hints.signed, hints.positive) == (True, False, False), source


@pytest.mark.parametrize(("name", "source"), SIGNED)
def test_balances_and_coordinates_are_named_signed(name: str, source: str) -> None:
    hints = hints_for(name)
    assert (hints.signed, hints.nonnegative) == (True, False), source


@pytest.mark.parametrize(("name", "source"), PAST_EVENTS)
def test_dates_of_events_that_happened_are_named_past(name: str, source: str) -> None:
    hints = hints_for(name)
    assert (hints.past_event, hints.future_event) == (True, False), source


@pytest.mark.parametrize(("name", "source"), PLANNED)
def test_dates_that_may_be_planned_are_named_future(name: str, source: str) -> None:
    hints = hints_for(name)
    assert (hints.future_event, hints.past_event) == (True, False), source


@pytest.mark.parametrize(("name", "source"), SHARED_CODES)
def test_postal_codes_and_phones_are_shared_codes_never_keys(name: str, source: str) -> None:
    hints = hints_for(name)
    assert (hints.shared, hints.key) == (True, False), source


def test_bounds_come_from_names_in_public_schemas() -> None:
    """UCI Adult's ``age``; schema.org GeoCoordinates' ``latitude`` and ``longitude``."""
    assert [hints_for(n).bounds for n in ("age", "latitude", "longitude")] == [(0, 130), (-90, 90), (-180, 180)]


def test_a_later_stage_and_an_optional_contact_are_named_as_in_public_schemas() -> None:
    """GitHub REST API issue.closed_at is empty while the issue is open; schema.org Person.faxNumber
    is a contact many people do not give."""
    assert (later_stage("closed_at"), optional("faxNumber")) == (True, True)


@pytest.mark.parametrize("name", ["fare", "copies", "points", "qty", "visited_at", "signup_date", "price", "duration"])
def test_words_added_for_a_benchmark_field_say_nothing_any_more(name: str) -> None:
    """Added beside benchmarks that plant defects in fields so named (issue 31); the values now
    find those defects, so the words are gone: no sign rule, no past-event rule, zero never
    impossible by name."""
    hints = hints_for(name)
    assert name in ("price", "duration") or (hints.nonnegative, hints.past_event) == (False, False)
    assert hints.positive is False
