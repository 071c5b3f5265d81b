"""What a field's name says about its values: identifiers, signed quantities, known ranges.

A name may add a check or raise a severity; it is never the only reason a field goes unchecked
(issue 20). A rule a name adds applies only where the sample agrees (a range only when the bulk
already sits inside it), so an unusual naming convention costs neither precision nor, since the
values decide what is checked, the checks the statistics ask for.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["NameHints", "hints_for", "later_stage", "names_own_key", "names_reference", "optional", "words_of"]

_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def _words(path: str) -> list[str]:
    leaf = path.rsplit(".", 1)[-1]
    return [w.lower() for w in _WORDS.findall(leaf.replace("-", "_"))]


def words_of(path: str) -> list[str]:
    """The lower-case words of a field's last name segment (``checkOut`` → ``check``, ``out``)."""
    return _words(path)


_ID_WORDS = {"id", "ids", "uuid", "guid", "key", "code", "number", "num", "no", "nr", "sku", "ref", "index",
             "idx", "zip", "zipcode", "postcode", "phone", "isbn", "ean", "upc", "iban", "hash", "token"}
# Frozen (issue 31): no word joins a list because a benchmark's field carries it. Each word of the
# sign, non-negative, past and planned lists is tested on a field name from a public schema
# (tests/agent/planners/heuristic/test_name_words.py); the words no public schema's name was found
# for (translations, units, most verbs in the past tense) went: the values decide those fields.
_SIGNED_WORDS = {"balance", "net", "offset", "lat", "lon", "lng", "latitude", "longitude", "elevation", "temp",
                 "temperature", "profit", "delay"}
# Sibling fields that give the sign of an amount or a quantity beside them ...
_DIRECTION_WORDS = {"direction", "dir", "side", "sign", "debit", "credit", "drcr", "flow", "movement", "inout",
                    "entry", "posting"}
# ... and the amounts and quantities they give it to.
_DIRECTED_WORDS = {"amount", "amt", "value", "qty", "quantity", "units", "total", "sum", "importe", "monto",
                   "montant", "betrag", "menge", "cantidad", "quantite"}
_NONNEG_WORDS = {"quantity", "count", "age", "price", "cost", "amount", "total", "duration", "ms", "seconds", "minutes",
                 "size", "length", "weight", "height", "width", "depth", "stock", "score", "rating", "views", "clicks",
                 "pages", "items", "fee", "salary", "revenue", "paid", "spend", "tax", "subtotal", "volume", "distance",
                 "seats", "downloads", "budget", "discount", "adults", "children", "rooms", "beds", "bedrooms",
                 "bathrooms", "employees", "members", "followers", "comments", "purchases", "sessions", "steps",
                 "hours", "days", "files", "users", "calories", "population", "capacity", "inventory", "amt", "orders",
                 "bytes", "mileage", "odometer", "shipping"}
# Dates of things that have already happened: a value after the audit's ``now`` is impossible.
# Not here: ``published`` and ``visit`` (a CMS schedules posts ahead, a clinic books visits ahead:
# both hold future dates as a normal state).
_PAST_WORDS = {"birth", "birthday", "birthdate", "created", "ship", "order", "paid", "login", "last", "updated",
               "modified", "submitted", "completed", "closed", "recorded", "issued", "death", "deceased", "sold",
               "returned", "cancelled", "canceled", "collected", "timestamp", "ts", "ended", "started", "processed"}
# ... and of things planned: a future value is their point.
_FUTURE_WORDS = {"due", "expires", "until", "valid", "next", "start", "end", "published", "arrival", "departure",
                 "checkin", "checkout", "release", "effective", "scheduled", "deadline"}

# A share of a whole, in percent (the non-English spellings too); only as the name's last word:
# ``percent_change`` is a growth, which may pass 100.
_PERCENT_WORDS = {"percent", "pct", "percentage", "porcentaje", "porcentagem", "percentuale", "pourcentage",
                  "prozent", "anteil", "procent"}
# ... and quantities that are read as a percentage of full wherever they appear in the name
# (``battery_level``, ``relative_humidity``); the range applies only when the bulk lies inside it,
# so a battery in millivolts keeps no bound.
_SHARE_OF_FULL_WORDS = {"humidity", "battery", "batt", "soc"}

_FORMAT_WORDS = {"email": "email", "mail": "email", "e-mail": "email", "uuid": "uuid", "guid": "uuid"}
_KEY_WORDS = {"id", "ids", "uuid", "guid", "key", "sku", "number", "num", "no", "nr", "ref", "isbn", "ean", "upc",
              "iban", "hash", "token", "identifier"}
_NUMBER_WORDS = {"number", "num", "no", "nr"}
_NOT_KEY_WORDS = {"phone", "zip", "zipcode", "postcode", "postal", "fax", "mobile", "tel", "telephone"}


@dataclass(frozen=True)
class NameHints:
    identifier: bool                     # names a code of some kind: its magnitude means nothing
    key: bool                            # names this document's own identifier: it should be unique
    signed: bool
    nonnegative: bool
    positive: bool                       # zero is impossible too (prices)
    bounds: tuple[float, float] | None   # hard range the values must lie in
    past_event: bool = False             # a date of something that has happened: never in the future
    future_event: bool = False           # a date that may be planned: the future is normal for it
    shared: bool = False                 # a code documents may share (a phone, a zip code): never a key
    format: str | None = None            # a well-known format the name promises ("email", "uuid")


def _directed(path: str, siblings: Iterable[str]) -> bool:
    """A field beside ``path`` (in the same document or subdocument) names a direction: a ledger's
    ``direction`` (debit, credit), a stock ``movement_type`` (in, out). Its amounts and quantities
    are written with the direction's sign, at whatever share the debits or the outbound take."""
    parent = path.rpartition(".")[0]
    return any(other != path and other.rpartition(".")[0] == parent
               and not _DIRECTION_WORDS.isdisjoint(_words(other)) for other in siblings)


def hints_for(path: str, siblings: Iterable[str] = ()) -> NameHints:
    """What ``path``'s name says; ``siblings``: the paths of the collection's other fields."""
    words = _words(path)
    last = words[-1] if words else ""
    identifier = last in _ID_WORDS or (len(words) == 1 and last in {"id", "_id"})
    signed = any(w in _SIGNED_WORDS for w in words) or (
        any(w in _DIRECTED_WORDS for w in words) and _directed(path, siblings))
    bounds: tuple[float, float] | None = None
    if last == "age":
        bounds = (0, 130)
    elif last in _PERCENT_WORDS or (not signed and any(w in _SHARE_OF_FULL_WORDS for w in words)):
        bounds = (0, 100)
    elif last in {"lat", "latitude"}:
        bounds = (-90, 90)
    elif last in {"lon", "lng", "longitude"}:
        bounds = (-180, 180)
    elif last == "month":
        bounds = (1, 12)
    elif last == "hour":
        bounds = (0, 23)
    # No name says zero is impossible: a price of 0 is a free offer (Stripe's Price allows
    # unit_amount 0), a duration of 0 an instant; zeros far below the bulk are the values' to judge.
    positive = False
    nonnegative = not signed and any(w in _NONNEG_WORDS for w in words)
    shared = any(w in _NOT_KEY_WORDS for w in words)
    key = last in _KEY_WORDS and not shared
    future_event = any(w in _FUTURE_WORDS for w in words)
    past_event = any(w in _PAST_WORDS for w in words) and not future_event
    return NameHints(identifier=identifier, key=key, signed=signed, nonnegative=nonnegative, positive=positive,
                     bounds=bounds, past_event=past_event, future_event=future_event, shared=shared,
                     format=_FORMAT_WORDS.get(last))


# --- whose key a field names ------------------------------------------------------------------
# ``customer_id`` in ``orders`` names a customer: each customer has a few orders, so its values
# repeat by design, and in a large population those repeats look like chance pairs. Only the
# collection's own key (``order_id`` in ``orders``) or a key of the record as such (``id``,
# ``txn_id``, ``external_id``) is expected to be unique.

# Abbreviations written for entity nouns, in field and collection names alike: ``rxId`` is the own
# key of ``prescriptions``, ``txn_id`` of ``txns``; ``acct`` in a ledger names an account.
_ABBREVIATIONS = {"rx": "prescription", "txn": "transaction", "tx": "transaction", "trx": "transaction",
                  "acct": "account", "acc": "account", "cust": "customer", "emp": "employee", "inv": "invoice",
                  "ord": "order", "prod": "product", "appt": "appointment", "msg": "message", "req": "request",
                  "doc": "document", "org": "organization", "dept": "department", "usr": "user", "evt": "event",
                  "pmt": "payment", "pymt": "payment", "rec": "record"}
_IRREGULAR = {"people": "person", "children": "child", "men": "man", "women": "woman", "staff": "employee"}
# Words of a collection's name that say which copy or which part of the data it is, not what a
# document is: ``trips_2025``, ``archived_trips`` and ``trips_backup`` hold trips. (Not ``history``
# nor ``log``: ``trip_history`` holds several versions of a trip, ``trip_logs`` several lines.)
_QUALIFIERS = {"archive", "archived", "archives", "backup", "bak", "old", "new", "copy", "tmp", "temp", "staging",
               "stage", "raw", "clean", "cleaned", "prod", "production", "test", "dev", "live", "current", "latest",
               "v", "all", "export", "exports", "import", "imported", "migrated", "legacy", "deleted", "active",
               "data", "records", "docs", "documents", "collection", "table", "dump", "snapshot", "daily", "monthly",
               "weekly", "yearly", "hourly", "final", "main", "primary"}
# Entity words that name the record itself or its identity elsewhere, not another collection's
# document: a transaction, event, message or request id identifies the document that records it
# (``txn_id`` in ``payments``), as do its ids in other systems (``external_id``, ``legacy_id``)
# and the numbers handed out once per record (``serial_no``, ``tracking_number``).
_RECORD_WORDS = {"record", "row", "entry", "line", "document", "object", "obj", "event", "message", "request",
                 "transaction", "external", "ext", "internal", "source", "src", "legacy", "original", "orig",
                 "unique", "primary", "public", "global", "system", "natural", "business", "surrogate", "serial",
                 "tracking", "confirmation", "reference", "idempotency", "dedup", "dedupe", "receipt"}
# Modifiers that make the collection's own key a link between its documents: ``parent_trip_id``
# in ``trips`` names another trip, shared by all its children.
_SELF_REFERENCE = {"parent", "child", "root", "previous", "prev", "next", "prior", "related", "linked", "original",
                   "orig", "source", "src", "master", "return", "outbound", "inbound", "connecting", "merged",
                   "replaced", "superseded", "predecessor", "successor", "upstream", "downstream", "target",
                   "referred", "referring", "referrer"}
# Things whose *number* labels a recurring service or a place within something larger, so that
# documents of that very kind share it: flight LH400 flies every day, room 101 is in every hotel,
# page 3 in every book. (Their ``_id`` is another matter: ``flight_id`` names one operated flight.
# Catalogue numbers such as ``part_number`` are left out: unique in ``parts``, a reference elsewhere.)
_DESIGNATORS = {"flight", "train", "room", "seat", "gate", "platform", "table", "house", "street", "floor",
                "apartment", "suite", "version", "page", "jersey", "lane", "bay", "slot", "locker", "desk", "berth",
                "cabin", "stand", "track", "terminal", "aisle", "shelf", "line", "step", "stop", "week", "period"}
# Parties and things a record involves: a field named by one alone (``customer``, ``acct``) holds
# that thing's identifier, shared by all its records.
_PARTIES = {"account", "customer", "client", "user", "member", "patient", "employee", "manager", "owner", "vendor",
            "supplier", "merchant", "seller", "buyer", "driver", "vehicle", "device", "sensor", "store", "shop",
            "product", "order", "invoice", "student", "teacher", "doctor", "physician", "provider", "tenant",
            "partner", "company", "organization", "carrier", "airline", "author", "assignee", "reporter",
            "project", "team", "warehouse", "branch", "agent", "department"}


def _singular(word: str) -> str:
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes", "zes", "uses")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 3:
        return word[:-1]
    return word


def _noun(word: str) -> str:
    one = _singular(word)
    return _singular(_ABBREVIATIONS.get(word) or _ABBREVIATIONS.get(one) or one)  # txns -> txn -> transaction


def _collection_entity(collection: str) -> str | None:
    """What a collection's name says its documents are: its last plural word (``order_items`` →
    item, ``trips_eu_west`` → trip, ``archived_trips`` → trip), else its last word (``ledger``),
    qualifiers and digits left out; None when it says nothing (``data``, ``export_2025``)."""
    words = [w.lower() for w in _WORDS.findall(collection.replace("-", "_"))]
    words = [w for w in words if not w.isdigit() and w not in _QUALIFIERS]
    if not words:
        return None
    plural = [w for w in words if _singular(w) != w]
    return _noun((plural or words)[-1])


def _entity(path: str) -> tuple[list[str], str] | None:
    """The entity words of a key-named field and its key word: ``(["customer"], "id")`` for
    ``customerId``; None for a field not named as a key. A code counts here (not as a key of its
    own): ``promo_code`` names a promotion that many trips share, ``country_code`` in ``countries``
    is the collection's own key."""
    words = _words(path)
    if not words or words[-1] not in _KEY_WORDS | {"code"} or hints_for(path).shared:
        return None
    return [_noun(w) for w in words[:-1]], words[-1]


def _designates(entity: list[str], key_word: str) -> bool:
    return key_word in _NUMBER_WORDS and bool(entity) and entity[-1] in _DESIGNATORS


def names_own_key(path: str, collection: str) -> bool:
    """``trip_id`` in ``trips`` (or ``trips_2025``), ``booking_ref`` in ``bookings``, ``item_id`` in
    ``order_items``: the name says the field identifies this collection's own documents, so no share
    of duplicates makes it a reference. The entity must be what the collection's name says its
    documents are (its last word, or all of it): ``order_id`` in ``order_items`` is the parent order."""
    named = _entity(path)
    noun = _collection_entity(collection)
    if named is None or not named[0] or noun is None:
        return False
    entity, key_word = named
    if _designates(entity, key_word) or any(w in _SELF_REFERENCE for w in entity[:-1]):
        return False
    return entity[-1] == noun or _singular("".join(entity)) == _noun(collection.lower())


def names_reference(path: str, collection: str) -> bool:
    """The field holds another document's identifier, which its documents share by design:
    ``customer_id`` in ``orders``, ``order_id`` in ``order_items``, ``parent_trip_id`` in ``trips``,
    a ``flight_number`` (flown every day), a bare ``acct`` in a ledger. Never the record's own key
    (``id``, ``sku``, ``ref``, ``txn_id``, ``external_id``, ``trip_id`` in ``trips``)."""
    named = _entity(path)
    if named is not None and _designates(*named):
        return True
    noun = _collection_entity(collection)
    if noun is None:
        return False  # the collection's name says nothing: whose key it is cannot be told
    if named is None:
        words = _words(path)
        return len(words) == 1 and _noun(words[0]) in _PARTIES and _noun(words[0]) != noun
    entity, _ = named
    if not entity or names_own_key(path, collection):
        return False
    return not all(w in _RECORD_WORDS for w in entity)


# --- dates a document may lack until they happen (null_rate) --------------------------------
# A later stage of a record's life is empty until it happens: an order not yet delivered, a
# subscription still running, a ticket still open, an employee still employed. Only a date can
# wait for its event: a flag named ``paid`` holds true or false from the start.
_LATER_STAGE = {"delivered", "closed", "end", "ended", "ending", "finished", "completed", "resolved", "cancelled",
                "canceled", "cancellation", "terminated", "termination", "returned", "refunded", "refund", "paid",
                "archived", "deleted", "expired", "approved", "rejected", "churned", "unsubscribed", "answered",
                "settled", "fulfilled", "dispatched", "discharged", "discharge", "deceased", "died", "death",
                "graduated", "exited", "exit", "left", "until"}
# Ways to reach someone that many people do not give, and a second address or contact beside
# the first: missing ones are worth knowing, not paging for.
_CONTACT = {"phone", "mobile", "cell", "tel", "telephone", "fax", "website", "homepage", "twitter", "linkedin",
            "facebook", "instagram"}
_SECONDARY = {"secondary", "alternate", "alternative", "alt", "other", "second", "backup", "emergency"}
_REACH = {"email", "mail", "address", "contact"}


def later_stage(path: str) -> bool:
    """The name of a date says a later stage of a record's life (``delivered_at``, ``end_date``,
    ``cancelled_on``): documents may lack it until that stage comes. The planner asks this of date
    fields only, and lets it excuse a steady share of documents without one, never a jump."""
    return any(w in _LATER_STAGE for w in _words(path))


def optional(path: str) -> bool:
    """A contact detail or a second address that records may lack (``phone``, ``fax``,
    ``secondary_email``): its missing share is reported one severity step lower."""
    words = set(_words(path))
    return bool(words & _CONTACT) or bool(words & _SECONDARY and words & _REACH)
