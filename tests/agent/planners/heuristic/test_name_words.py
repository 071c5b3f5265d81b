"""The words the planner reads in field names, tested on names from public schemas, never on our
benchmarks' fields (issue 31). Each name below is cited to the schema it comes from; a word that
no public schema uses this way has no place in ``names.py``. What a word may do: add a check or
raise a severity (docs/detection.md); the values decide what is found."""

from __future__ import annotations

import pytest

from argus.agent.planners.heuristic import names
from argus.agent.planners.heuristic.names import hints_for, later_stage, optional, words_of

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


# Every word of the four lists that decide a range, with a public schema's field name that holds it
# (word: (field name, where it comes from)). A word without one has no place in names.py.
NON_NEGATIVE_WORDS = {
    "quantity": ("quantity", "Stripe API, InvoiceItem.quantity"),
    "count": ("stargazers_count", "GitHub REST API, repository.stargazers_count"),
    "age": ("age", "UCI Adult (census income) data set, column age"),
    "price": ("ss_sales_price", "TPC-DS, store_sales.ss_sales_price"),
    "cost": ("ss_wholesale_cost", "TPC-DS, store_sales.ss_wholesale_cost"),
    "amount": ("amount", "Stripe API, PaymentIntent.amount"),
    "total": ("total", "Stripe API, Invoice.total"),
    "duration": ("duration", "schema.org, Movie.duration"),
    "ms": ("run_duration_ms", "GitHub REST API, workflow run usage.run_duration_ms"),
    "seconds": ("terminationGracePeriodSeconds", "Kubernetes API, PodSpec.terminationGracePeriodSeconds"),
    "minutes": ("timeout_minutes", "GitHub Actions workflow syntax, jobs.<job_id>.timeout-minutes"),
    "size": ("size", "GitHub REST API, repository.size"),
    "length": ("content_length", "HTTP (RFC 9110), the Content-Length header field"),
    "weight": ("weight", "schema.org, Product.weight"),
    "height": ("height", "schema.org, Product.height"),
    "width": ("width", "schema.org, Product.width"),
    "depth": ("depth", "schema.org, Product.depth"),
    "stock": ("stock_quantity", "WooCommerce REST API, product.stock_quantity"),
    "score": ("score", "Stack Exchange API, question.score"),
    "rating": ("ratingValue", "schema.org, Rating.ratingValue"),
    "views": ("views", "Wikimedia REST API, pageviews per-article item.views"),
    "clicks": ("clicks", "Google Search Console API, searchanalytics row.clicks"),
    "pages": ("numberOfPages", "schema.org, Book.numberOfPages"),
    "items": ("numberOfItems", "schema.org, ItemList.numberOfItems"),
    "fee": ("sr_fee", "TPC-DS, store_returns.sr_fee"),
    "salary": ("baseSalary", "schema.org, JobPosting.baseSalary"),
    "revenue": ("totalRevenue", "Google Analytics 4 Data API, metric totalRevenue"),
    "paid": ("amount_paid", "Stripe API, Invoice.amount_paid"),
    "spend": ("spend", "Meta Marketing API, Ads Insights spend"),
    "tax": ("l_tax", "TPC-H, lineitem.l_tax"),
    "subtotal": ("subtotal", "Stripe API, Invoice.subtotal"),
    "volume": ("tweet_volume", "Twitter API v1.1, trends/place tweet_volume"),
    "distance": ("distance", "Strava API, activity.distance"),
    "seats": ("filled_seats", "GitHub REST API, organization.plan.filled_seats"),
    "downloads": ("downloads", "npm registry downloads API, point.downloads"),
    "budget": ("daily_budget", "Meta Marketing API, campaign.daily_budget"),
    "discount": ("l_discount", "TPC-H, lineitem.l_discount"),
    "adults": ("numAdults", "schema.org, LodgingReservation.numAdults"),
    "children": ("numChildren", "schema.org, LodgingReservation.numChildren"),
    "rooms": ("numberOfRooms", "schema.org, Accommodation.numberOfRooms"),
    "beds": ("numberOfBeds", "schema.org, BedDetails.numberOfBeds"),
    "bedrooms": ("numberOfBedrooms", "schema.org, Accommodation.numberOfBedrooms"),
    "bathrooms": ("numberOfBathroomsTotal", "schema.org, Accommodation.numberOfBathroomsTotal"),
    "employees": ("numberOfEmployees", "schema.org, Organization.numberOfEmployees"),
    "members": ("num_members", "Slack Web API, conversation.num_members"),
    "followers": ("followers", "GitHub REST API, user.followers"),
    "comments": ("comments", "GitHub REST API, issue.comments"),
    "purchases": ("ecommercePurchases", "Google Analytics 4 Data API, metric ecommercePurchases"),
    "sessions": ("sessions", "Google Analytics 4 Data API, metric sessions"),
    "steps": ("steps", "Fitbit Web API, activity summary.steps"),
    "hours": ("hours_per_week", "UCI Adult (census income) data set, column hours-per-week"),
    "days": ("trial_period_days", "Stripe API, Plan.trial_period_days"),
    "files": ("changed_files", "GitHub REST API, pull request.changed_files"),
    "users": ("activeUsers", "Google Analytics 4 Data API, metric activeUsers"),
    "calories": ("calories", "schema.org, NutritionInformation.calories"),
    "population": ("population", "GeoNames, geoname table column population"),
    "capacity": ("maximumAttendeeCapacity", "schema.org, Place.maximumAttendeeCapacity"),
    "inventory": ("inventory_quantity", "Shopify Admin REST API, product variant.inventory_quantity"),
    "amt": ("ss_coupon_amt", "TPC-DS, store_sales.ss_coupon_amt"),
    "orders": ("orders_count", "Shopify Admin REST API, customer.orders_count"),
    "bytes": ("node_network_receive_bytes_total", "Prometheus node_exporter, metric node_network_receive_bytes_total"),
    "mileage": ("mileageFromOdometer", "schema.org, Vehicle.mileageFromOdometer"),
    "odometer": ("mileageFromOdometer", "schema.org, Vehicle.mileageFromOdometer"),
    "shipping": ("shippingRate", "schema.org, OfferShippingDetails.shippingRate"),
}
SIGNED_WORDS = {
    "balance": ("balance", "Stripe API, Customer.balance"),
    "net": ("net", "Stripe API, BalanceTransaction.net"),
    "offset": ("utc_offset", "Twitter API v1.1, user.utc_offset"),
    "lat": ("lat", "OpenStreetMap Nominatim API, place.lat"),
    "lon": ("lon", "OpenStreetMap Nominatim API, place.lon"),
    "lng": ("lng", "Google Maps Geocoding API, geometry.location.lng"),
    "latitude": ("latitude", "schema.org, GeoCoordinates.latitude"),
    "longitude": ("longitude", "schema.org, GeoCoordinates.longitude"),
    "elevation": ("elevation", "schema.org, GeoCoordinates.elevation"),
    "temp": ("temp", "OpenWeatherMap current weather API, main.temp"),
    "temperature": ("temperature_2m", "Open-Meteo forecast API, hourly temperature_2m"),
    "profit": ("ss_net_profit", "TPC-DS, store_sales.ss_net_profit"),
    "delay": ("DepDelay", "US BTS airline on-time performance data, DepDelay (negative for an early departure)"),
}
PAST_WORDS = {
    "birth": ("birthDate", "FHIR R4, Patient.birthDate"),
    "birthday": ("birthday", "Facebook Graph API, User.birthday"),
    "birthdate": ("birthdate", "OpenID Connect Core, standard claim birthdate"),
    "created": ("created_at", "GitHub REST API, issue.created_at"),
    "ship": ("ws_ship_date_sk", "TPC-DS, web_sales.ws_ship_date_sk"),
    "order": ("orderDate", "schema.org, Order.orderDate"),
    "paid": ("paid_at", "Stripe API, Invoice.status_transitions.paid_at"),
    "login": ("last_login", "Django, auth User.last_login"),
    "last": ("last_login", "Django, auth User.last_login"),
    "updated": ("updated_at", "GitHub REST API, issue.updated_at"),
    "modified": ("dateModified", "schema.org, CreativeWork.dateModified"),
    "submitted": ("submitted_at", "GitHub REST API, pull request review.submitted_at"),
    "completed": ("completed_at", "GitHub REST API, check run.completed_at"),
    "closed": ("closed_at", "GitHub REST API, issue.closed_at"),
    "recorded": ("recorded", "FHIR R4, Provenance.recorded"),
    "issued": ("issued", "FHIR R4, Observation.issued"),
    "death": ("deathDate", "schema.org, Person.deathDate"),
    "deceased": ("deceasedDateTime", "FHIR R4, Patient.deceasedDateTime"),
    "sold": ("ss_sold_date_sk", "TPC-DS, store_sales.ss_sold_date_sk"),
    "returned": ("sr_returned_date_sk", "TPC-DS, store_returns.sr_returned_date_sk"),
    "cancelled": ("cancelled_at", "Shopify Admin REST API, order.cancelled_at"),
    "canceled": ("canceled_at", "Stripe API, Subscription.canceled_at"),
    "collected": ("collectedDateTime", "FHIR R4, Specimen.collection.collectedDateTime"),
    "timestamp": ("timestamp", "Wikimedia REST API, pageviews per-article item.timestamp"),
    "ts": ("ts", "Slack Web API, message.ts"),
    "ended": ("ended_at", "Stripe API, Subscription.ended_at"),
    "started": ("started_at", "GitHub REST API, check run.started_at"),
    "processed": ("processed_at", "Shopify Admin REST API, order.processed_at"),
}
PLANNED_WORDS = {
    "due": ("due_date", "Stripe API, Invoice.due_date"),
    "expires": ("expires", "schema.org, CreativeWork.expires"),
    "until": ("validUntil", "schema.org, Demand.validUntil"),
    "valid": ("validUntil", "schema.org, Demand.validUntil"),
    "next": ("next_payment_attempt", "Stripe API, Invoice.next_payment_attempt"),
    "start": ("startDate", "schema.org, Event.startDate"),
    "end": ("current_period_end", "Stripe API, Subscription.current_period_end"),
    "published": ("datePublished", "schema.org, CreativeWork.datePublished"),
    "arrival": ("arrivalTime", "schema.org, Flight.arrivalTime"),
    "departure": ("departureTime", "schema.org, Flight.departureTime"),
    "checkin": ("checkinTime", "schema.org, LodgingReservation.checkinTime"),
    "checkout": ("checkoutTime", "schema.org, LodgingReservation.checkoutTime"),
    "release": ("releaseDate", "schema.org, Product.releaseDate"),
    "effective": ("effectiveDateTime", "FHIR R4, Observation.effectiveDateTime"),
    "scheduled": ("scheduledPaymentDate", "schema.org, Invoice.scheduledPaymentDate"),
    "deadline": ("applicationDeadline", "schema.org, EducationalOccupationalProgram.applicationDeadline"),
}

_LISTS = [(NON_NEGATIVE_WORDS, names._NONNEG_WORDS, "nonnegative"), (SIGNED_WORDS, names._SIGNED_WORDS, "signed"),
          (PAST_WORDS, names._PAST_WORDS, "past_event"), (PLANNED_WORDS, names._FUTURE_WORDS, "future_event")]


@pytest.mark.parametrize(("cited", "words", "hint"), _LISTS, ids=[hint for _, _, hint in _LISTS])
def test_every_word_of_a_list_is_cited_from_a_public_schema(
        cited: dict[str, tuple[str, str]], words: set[str], hint: str) -> None:
    assert sorted(words - set(cited)) == [], f"words of the {hint} list no public schema's field name was found for"


@pytest.mark.parametrize(("word", "name", "source", "hint"), [
    (word, name, source, hint) for cited, _, hint in _LISTS for word, (name, source) in cited.items()])
def test_a_public_schemas_field_name_takes_the_hint_of_its_word(word: str, name: str, source: str, hint: str) -> None:
    assert word in words_of(name), source
    assert getattr(hints_for(name), hint) is True, f"{name} ({source})"
