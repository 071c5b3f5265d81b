"""What a field's name says about its values: identifiers, signed quantities, known ranges.

Names only ever narrow what the statistics already suspect (a range check applies only when the
sample's bulk already sits inside the range), so an unusual naming convention costs recall,
never precision.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["NameHints", "hints_for", "names_own_key", "words_of"]

_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def _words(path: str) -> list[str]:
    leaf = path.rsplit(".", 1)[-1]
    return [w.lower() for w in _WORDS.findall(leaf.replace("-", "_"))]


def words_of(path: str) -> list[str]:
    """The lower-case words of a field's last name segment (``checkOut`` → ``check``, ``out``)."""
    return _words(path)


_ID_WORDS = {"id", "ids", "uuid", "guid", "key", "code", "number", "num", "no", "nr", "sku", "ref", "index",
             "idx", "zip", "zipcode", "postcode", "phone", "isbn", "ean", "upc", "iban", "hash", "token"}
_SIGNED_WORDS = {"balance", "delta", "diff", "difference", "change", "offset", "adjustment", "lat", "latitude",
                 "lon", "lng", "longitude", "temp", "temperature", "celsius", "fahrenheit", "profit", "loss",
                 "net", "margin", "variance", "pnl", "gain", "correction", "elevation", "altitude", "z",
                 # a difference from a reference: a delay is negative for an early departure, days until an
                 # arrival once it has passed, a movement or transfer by its direction
                 "delay", "lateness", "until", "remaining", "left", "movement", "movements", "flow", "adjusted",
                 "adjustments", "deviation", "error", "residual", "surplus", "deficit", "shortfall", "skew",
                 "drift", "lag", "slack", "trend", "yield", "growth"}
# Sibling fields that give the sign of an amount or a quantity beside them ...
_DIRECTION_WORDS = {"direction", "dir", "side", "sign", "debit", "credit", "drcr", "flow", "movement", "inout",
                    "entry", "posting"}
# ... and the amounts and quantities they give it to.
_DIRECTED_WORDS = {"amount", "amt", "value", "qty", "quantity", "units", "total", "sum", "importe", "monto",
                   "montant", "betrag", "menge", "cantidad", "quantite"}
_NONNEG_WORDS = {"qty", "quantity", "count", "age", "price", "cost", "amount", "total", "duration", "ms",
                 "seconds", "secs", "minutes", "size", "length", "weight", "height", "width", "depth",
                 "stock", "points", "score", "rating", "views", "clicks", "pages", "items", "units",
                 "fare", "fee", "fees", "salary", "wage", "revenue", "payment", "paid", "spend", "spent", "tax",
                 "subtotal", "volume", "distance", "mass", "kg", "km", "miles", "pieces", "copies", "visits",
                 "attempts", "retries", "nights", "guests", "seats", "passengers", "bytes", "downloads",
                 # money that is never below zero
                 "charge", "charges", "rent", "income", "earnings", "budget", "bill", "deposit", "donation",
                 "tuition", "wages", "bonus", "commission", "discount", "shipping", "premium",
                 # things counted
                 "adults", "children", "kids", "rooms", "beds", "bedrooms", "bathrooms", "floors", "employees",
                 "members", "followers", "likes", "shares", "comments", "orders", "purchases", "sessions",
                 "steps", "calls", "hours", "days", "weeks", "years", "tickets", "boxes", "packages", "bags",
                 "lines", "words", "files", "users", "players", "students", "patients", "doses", "refills",
                 "mileage", "odometer", "calories", "population", "capacity", "inventory",
                 # the same words in the languages field names are most often written in (es, fr, de, pt, it)
                 # and common abbreviations: money and counts are named this way as often as in English
                 "amt", "precio", "importe", "monto", "montant", "prix", "betrag", "preis", "menge",
                 "cantidad", "quantite", "quantidade", "preco", "prezzo", "importo", "quantita",
                 "anzahl", "plazas", "pax", "kosten", "costo", "coste", "cout", "gehalt", "salario",
                 "salaire", "gewicht", "peso", "poids", "edad", "alter"}
# ... and where zero is no value either: nothing is sold for a price of 0, nothing recorded lasts 0.
_POSITIVE_WORDS = {"price", "duration", "precio", "prix", "preis", "preco", "prezzo"}
# Dates of things that have already happened: a value after the audit's ``now`` is impossible.
# Not here: ``published`` and ``visit`` (a CMS schedules posts ahead, a clinic books visits ahead:
# both hold future dates as a normal state); ``visited`` and ``posted`` are past.
_PAST_WORDS = {"birth", "born", "dob", "birthday", "birthdate", "created", "creation", "shipped", "shipment",
               "ship", "ordered", "order", "placed", "paid", "purchased", "purchase", "delivered", "registered",
               "registration", "signup", "signed", "joined", "hired", "admitted", "admission", "discharged",
               "logged", "login", "updated", "modified", "occurred", "received", "submitted", "completed",
               "closed", "opened", "inserted", "recorded", "observed", "visited", "seen", "sent", "posted",
               "issued", "died", "death", "deceased", "enrolled", "ingested", "captured",
               "last", "hire", "sold", "sale", "payment", "transaction", "returned", "refunded",
               "cancelled", "canceled", "booked", "measured", "collected", "reported", "detected", "uploaded",
               "approved", "rejected", "resolved", "arrived", "checked", "timestamp", "ts",
               # more verbs in the past tense: the event has happened when it is written down
               "departed", "landed", "played", "added", "deleted", "removed", "archived", "finished", "ended",
               "started", "launched", "imported", "exported", "scanned", "printed", "verified",
               "confirmed", "accepted", "declined", "failed", "succeeded", "processed", "settled", "charged",
               "refreshed", "synced", "migrated", "graduated", "married", "founded", "established",
               # birth, death and creation in the languages field names are most often written in
               "nacimiento", "nacimento", "nascimento", "geburt", "geburtsdatum", "geburtstag", "naissance",
               "nascita", "fallecimiento", "defuncion", "deces", "sterbedatum", "creado", "creacion",
               "erstellt", "erstelldatum", "registro"}
# ... and of things planned: a future value is their point.
_FUTURE_WORDS = {"due", "expires", "expiry", "expiration", "expire", "expiring", "scheduled", "deadline", "until",
                 "next", "planned", "eta", "renewal", "renews", "renew", "valid", "estimated", "appointment",
                 "start", "starts", "end", "ends", "upcoming", "target", "forecast", "promised", "reminder",
                 # dates that are planned as often as recorded: a post scheduled for publishing, a booked
                 # visit, an arrival or a delivery still to come, an event or a release on the calendar
                 "publish", "published", "publication", "publicacion", "visit", "visits", "arrival", "departure",
                 "delivery", "checkin", "checkout", "release", "effective", "launch", "meeting"}

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
              "iban", "hash", "token"}
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
    positive = any(w in _POSITIVE_WORDS for w in words) and not signed
    nonnegative = not signed and (positive or any(w in _NONNEG_WORDS for w in words))
    shared = any(w in _NOT_KEY_WORDS for w in words)
    key = last in _KEY_WORDS and not shared
    future_event = any(w in _FUTURE_WORDS for w in words)
    past_event = any(w in _PAST_WORDS for w in words) and not future_event
    return NameHints(identifier=identifier, key=key, signed=signed, nonnegative=nonnegative, positive=positive,
                     bounds=bounds, past_event=past_event, future_event=future_event, shared=shared,
                     format=_FORMAT_WORDS.get(last))


def names_own_key(path: str, collection: str) -> bool:
    """``trip_id`` in ``trips`` (or ``trips_2025``), ``booking_ref`` in ``bookings``: the name says
    the field identifies this collection's own documents, so no share of duplicates makes it a reference."""
    words = _words(path)
    if len(words) < 2 or not hints_for(path).key:
        return False
    entity = "".join(words[:-1])
    names = {entity, entity + "s", entity + "es", entity[:-1] + "ies"}
    # the collection's name, or one word of it (``trips_2025``, ``archived_trips``)
    of_collection = {collection.lower(), *re.findall(r"[a-z]+", collection.lower())}
    return not names.isdisjoint(of_collection)
