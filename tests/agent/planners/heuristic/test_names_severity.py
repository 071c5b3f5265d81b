"""Field-name hints and severity calibration."""

from __future__ import annotations

import pytest

from argus.agent.findings import Category, Severity
from argus.agent.planners.heuristic.names import hints_for, later_stage, names_own_key, names_reference, optional
from argus.agent.severity import severity_for


@pytest.mark.parametrize(("path", "key"), [("order_id", True), ("orderId", True), ("sku", True),
                                          ("PhoneNumber", False), ("address.zip", False), ("ZipCode", False),
                                          ("email", False), ("invoice_number", True)])
def test_key_names(path: str, key: bool) -> None:
    assert hints_for(path).key is key


def test_range_and_sign_hints() -> None:
    assert hints_for("customer.age").bounds == (0, 130)
    assert hints_for("items.unit_price").nonnegative and not hints_for("items.unit_price").positive
    assert hints_for("balance").signed and not hints_for("balance").nonnegative
    assert hints_for("payload.duration_ms").nonnegative
    assert hints_for("PhoneNumber").identifier


@pytest.mark.parametrize(("category", "share", "expected"), [
    (Category.TYPE_MISMATCH, 0.03, Severity.HIGH),
    (Category.TYPE_MISMATCH, 0.42, Severity.CRITICAL),
    (Category.TYPE_MISMATCH, 0.0005, Severity.MEDIUM),
    (Category.NULL_RATE, 0.04, Severity.MEDIUM),
    (Category.EMPTY_VALUE, 0.01, Severity.LOW),
    (Category.FORMAT_VIOLATION, 1.0, Severity.HIGH),
    (Category.SCHEMA_DRIFT, 0.10, Severity.CRITICAL),
])
def test_severity_follows_category_and_share(category: Category, share: float, expected: Severity) -> None:
    assert severity_for(category, share) == expected


def test_never_critical_below_one_percent() -> None:
    assert severity_for(Category.SCHEMA_DRIFT, 0.15, critical_min_share=0.2) == Severity.HIGH


def test_duplicates_in_a_non_key_field_are_one_step_lower() -> None:
    assert severity_for(Category.DUPLICATE_VALUE, 0.02, identifier=False) == Severity.MEDIUM


@pytest.mark.parametrize("path", ["sr_fee", "num_bedrooms", "children", "numAdults", "odometer",
                                  "order.subtotal", "shipping_fee"])
def test_quantities_that_cannot_be_negative(path: str) -> None:
    assert hints_for(path).nonnegative and not hints_for(path).signed


@pytest.mark.parametrize(("path", "past"), [("last_login", True), ("closed_at", True), ("visited_at", False),
                                                ("processedAt", True), ("ended_on", True), ("birthdate", True),
                                                ("deathDate", True), ("visit_date", False), ("published_at", False),
                                            ("sold_date", True), ("paid_at", True), ("due_date", False),
                                            ("expires_at", False), ("next_visit", False), ("start_date", False)])
def test_dates_of_events_that_have_happened(path: str, past: bool) -> None:
    assert hints_for(path).past_event is past


@pytest.mark.parametrize(("path", "collection", "own"), [
    ("trip_id", "trips", True), ("TripID", "Trips", True), ("booking_ref", "bookings", True),
    ("category_id", "categories", True), ("trip_id", "trips_2025", True), ("customer_id", "orders", False),
    ("id", "trips", False), ("trip_id", "tripsheets", False), ("trip_name", "trips", False)])
def test_a_collections_own_key(path: str, collection: str, own: bool) -> None:
    assert names_own_key(path, collection) is own


_OWN = [("item_id", "order_items"), ("order_item_id", "order_items"), ("trip_id", "archived_trips"),
        ("rxId", "prescriptions"), ("txn_id", "txns"), ("person_id", "people"), ("flight_id", "flights"),
        ("trip_id", "trips_eu_west"), ("trip_id", "trips_duplicate_key_0.02"), ("country_code", "countries")]
_REFERENCES = [("order_id", "order_items"), ("customer_id", "webshop_orders"), ("customerId", "orders"),
               ("patient_id", "admissions"), ("product_sku", "order_items"), ("flight_number", "flights"),
               ("flightNo", "ledger"), ("parent_trip_id", "trips"), ("manager_id", "employees"), ("acct", "ledger"),
               ("promo_code", "trips"), ("trip_id", "trip_history"), ("room_number", "rooms")]
# Keys of the record itself, whatever the collection, and keys in a collection whose name says nothing.
_RECORD_KEYS = [("_id", "orders"), ("id", "trips"), ("sku", "products"), ("ref", "ledger"), ("uuid", "events"),
                ("txn_id", "payments"), ("transaction_id", "ledger"), ("external_id", "orders"),
                ("legacy_id", "users"), ("event_id", "clicks"), ("message_id", "mail_log"),
                ("request_id", "api_calls"), ("line_id", "order_items"), ("customer_id", "export_2025"),
                ("voucher", "bookings")]


@pytest.mark.parametrize(("path", "collection", "own", "reference"), [(*c, True, False) for c in _OWN]
                         + [(*c, False, True) for c in _REFERENCES] + [(*c, False, False) for c in _RECORD_KEYS])
def test_whose_key_a_field_names(path: str, collection: str, own: bool, reference: bool) -> None:
    assert (names_own_key(path, collection), names_reference(path, collection)) == (own, reference)


@pytest.mark.parametrize(("path", "later", "lower"), [
    ("manager_id", False, False), ("notes", False, False), ("middle_name", False, False),
    ("phone", False, True), ("fax", False, True), ("secondary_email", False, True),
    ("vehicle_id", False, False), ("address.zip", False, False), ("email", False, False),
    ("delivered_at", True, False), ("end_date", True, False), ("terminationDate", True, False),
    ("cancelled_on", True, False), ("paid", True, False), ("delivery_address", False, False),
    ("created_at", False, False), ("ts", False, False)])
def test_dates_of_a_later_stage_and_optional_contacts(path: str, later: bool, lower: bool) -> None:
    """A name may say a date waits for a later stage (the planner asks it of dates only) or lower a
    contact detail's severity; it no longer excuses a hierarchy's link, notes or a middle name."""
    assert (later_stage(path), optional(path)) == (later, lower)


@pytest.mark.parametrize(("path", "siblings", "signed"), [
    ("amount", ["direction", "booked_at"], True),                 # a ledger: debits negative
    ("quantity", ["movement_type", "sku"], True),                 # stock going out
    ("lines.qty", ["lines.side", "lines.sku"], True),
    ("amount", ["status", "type", "customer_id"], False),         # an invoice: no direction beside it
    ("lines.qty", ["direction", "lines.sku"], False),             # the direction of another level
    ("fee", ["direction"], False),                                # a fee is no directed amount
])
def test_an_amount_beside_a_direction_is_signed(path: str, siblings: list[str], signed: bool) -> None:
    assert hints_for(path, [path, *siblings]).signed is signed
