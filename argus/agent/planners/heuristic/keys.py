"""Which fields identify their documents, judged from their values; names only add.

A field is a key candidate whatever it and its collection are called when its sampled values are
identifier-like (an ObjectId, a counter's integers, codes written as one token: ``SO-400123``, a
UUID, a hex digest), present in (nearly) every document, and repeat in the sample no more often
than duplicates in up to a fifth of the documents, plus chance collisions in the values' space,
would make them repeat. A field merely unique in the sample (an email, a phone) is checked too,
with a low cap. Names add: the collection's own key (``trip_id`` in ``trips``) and a field named
as a key are checked at a lower uniqueness. A name that says the field refers to another
collection (``customer_id`` in ``orders``) takes the check away only when the sample agrees.

The whole-collection count decides (``verdict``): documents sharing a value beyond the cap mean
the field is no key; repeated values that chance explains (a 5-digit code drawn at random in
3,000 documents shares about 45 of them) are no defect. The count is a ``$group`` inside
``$facet``, which cannot spill to disk (MongoDB allows a stage 100 MB): a field whose values would
need more than ``GROUP_MEMORY`` is not checked, and the report says so (``group_bytes``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from argus.agent.planners.heuristic.names import NameHints, names_own_key, names_reference
from argus.agent.tools.models import FieldStats

__all__ = ["GROUP_MEMORY", "KeyPlan", "chance_repeats", "group_bytes", "key_plan", "verdict"]

KEY_MIN_VALUES = 50          # fewer sampled values than this say nothing about uniqueness
KEY_PRESENCE = 0.9           # a key from the data is present (and not null) in this share of documents
DUPLICATE_RATE = 0.2         # duplicates up to this share of documents still leave a key a key
UNIQUE_IN_SAMPLE = 0.98      # distinct / values at or above this: unique in the sample but for a chance pair or two
DUPLICATE_MAX_SHARE = 0.05   # a field merely unique in the sample: duplicates this common mean it is no key
DUPLICATE_MAX_SHARE_KEY = 0.5  # an identifier: duplicates stop being a minority here
PAIRS = 2.2                  # ... unless a named key's come in pairs (a retry wrote a record twice)
KEY_UNIQUE_NAMED = 0.6       # a field named as a key is checked when this unique in the sample
KEY_NAMED_MIN_VALUES = 200   # ... judged on at least this many sampled values
DENSE_SPAN = 10              # integers spanning at most this times the documents: a counter's, not a measurement's
CROWDED = 3                  # values from a space at most this times their number: a sequence's, not drawn at random
CONCLUSIVE = 10              # chance repeats a sample must expect before its repeats say whether values are random
GROUP_MEMORY = 80 * 2**20    # bytes one duplicates $group may use: MongoDB's 100 MB stage limit, with a margin
GROUP_ENTRY = 100            # bytes a $group holds per distinct value beside the value itself (key, count, table)
_VALUE_BYTES = {"number": 8, "objectId": 12}


@dataclass(frozen=True)
class KeyPlan:
    """How one field's repeated values are judged over the whole collection."""

    cap: float                # documents sharing a value: above this share of the collection, the field is no key
    paired: bool = False      # ... unless they come in pairs (a named key: an import ran twice)
    chance: float = 0.0       # repeated values chance collisions explain over the whole collection
    merely_unique: bool = False  # unique in the sample, no identifier: malformed values are the format's defect
    identifier: bool = True   # named as a key: its duplicates are a step more severe than an unnamed field's


def _bound(expected: float) -> float:
    """What a count with this expectation stays under but for one time in a few thousand."""
    return expected + 3 * math.sqrt(expected) + 2


CHANCE_ODDS = 1 / 5000       # chance explains a count of repeated values it reaches this often or more


def _chance_bound(expected: float) -> int:
    """The most repeated values chance collisions reach but for one time in ``1 / CHANCE_ODDS``: the
    Poisson tail, exact where a count is small (two repeated values in five thousand emails are
    no chance pair when chance expects a hundredth of one, however few they are)."""
    if expected <= 0:
        return 0
    term = math.exp(-expected)
    if term == 0.0:
        return math.ceil(_bound(expected))  # beyond what the tail's first term can hold: the normal's
    k, below = 0, term
    while 1 - below > CHANCE_ODDS:
        k += 1
        term *= expected / k
        below += term
    return k


def chance_repeats(values: float, log_space: float) -> float:
    """Expected values that repeat an earlier one when ``values`` are drawn at random from
    ``10 ** log_space`` equally likely ones (the sample's ``values - distinct``)."""
    if values <= 0 or log_space >= 300:
        return 0.0
    space = 10 ** log_space
    ratio = values / space
    if ratio < 1e-4:
        return values * ratio / 2
    return values - space * (1 - math.exp(-ratio))


def _families(f: FieldStats) -> dict[str, int]:
    out: dict[str, int] = {}
    for t, n in f.non_null_types.items():
        fam = "number" if t in ("int", "long", "double", "decimal") else t
        out[fam] = out.get(fam, 0) + n
    return out


def _counter(f: FieldStats, size: int | None) -> bool:
    """Integers handed out by a counter span about as many values as the collection has documents
    (more where documents were deleted or the counter is shared), wherever the sample falls; a
    measurement's spread has nothing to do with the document count. Unknown size: assume a counter."""
    if size is None or size <= 0 or f.numeric is None or f.numeric.min is None or f.numeric.max is None:
        return True
    return f.numeric.max - f.numeric.min + 1 <= DENSE_SPAN * size


def _identifier_shaped(f: FieldStats) -> bool:
    """Codes such as ``ORD-100234`` or UUIDs: letters and digits, no spaces, one dominant shape."""
    s = f.strings
    if s is None or not s.shapes or s.count < 20:
        return False
    if s.formats.get("uuid", 0) >= 0.9 * s.count:
        return True
    shape, n = s.shapes[0]
    return n >= 0.9 * s.count and "9" in shape and any(c in shape for c in "Aa") \
        and not any(c in shape for c in " @~…")


def _one_token(f: FieldStats) -> bool:
    """Codes written as one token of one width with digits in them: ``02134``, a hex digest."""
    s = f.strings
    if s is None or s.count < 20 or s.max_length - s.min_length > 0 or s.max_length > 64:
        return False
    with_digits = sum(n for shape, n in s.shapes if "9" in shape)
    return all(" " not in shape and "@" not in shape for shape, _ in s.shapes) and with_digits >= 0.9 * s.count


def _log_space(f: FieldStats, dominant: str) -> float:
    """log10 of the values the field's values are drawn from (infinite when unknown)."""
    if dominant == "number" and f.numeric is not None and f.numeric.min is not None and f.numeric.max is not None:
        return math.log10(max(f.numeric.max - f.numeric.min + 1, 1))
    if dominant == "string" and f.strings is not None and f.strings.value_space is not None:
        return f.strings.value_space
    return math.inf


def key_plan(f: FieldStats, hints: NameHints, *, collection: str = "", size: int | None = None,
             sampled: int | None = None) -> KeyPlan | None:
    """How ``f`` is checked for duplicates, or None when its values say it is no key.

    ``size``: the collection's documents; ``sampled``: how many the sample read (the share of the
    collection the sample's repeats stand for)."""
    families = _families(f)
    values = sum(families.values())
    if values < KEY_MIN_VALUES or (f.numeric is not None and f.numeric.integer_share < 1.0):
        return None
    dominant = max(families, key=lambda k: families[k])
    if dominant not in ("string", "number", "objectId"):
        return None
    share = min(1.0, (sampled or size or values) / size) if size else 1.0
    total = values / share                            # the field's values over the whole collection
    repeats = values * (1 - f.distinct_ratio)         # sampled values that repeat an earlier one
    space = _log_space(f, dominant)
    by_chance = chance_repeats(values, space)         # ... were they drawn at random from that space
    # Chance shows in the sample only when it would make enough repeats there; short of that the
    # space decides: a sequence's values fill about as many as there are documents (a counter, a
    # numbered code), and values drawn at random from so few would collide everywhere, which no key does.
    looks_drawn = by_chance >= CONCLUSIVE and repeats >= by_chance - 3 * math.sqrt(by_chance)
    dense = space <= math.log10(CROWDED * total)
    # Values crowding their space at random (weights in grams) are an attribute: no key collides so.
    crowded = dense and looks_drawn
    if dense:
        by_chance = chance = 0.0
    else:
        drawn = looks_drawn or by_chance < CONCLUSIVE
        chance = chance_repeats(total, space) if drawn else 0.0
        by_chance = by_chance if drawn else 0.0
    counter = dominant == "number" and _counter(f, size)
    coded = dominant == "string" and (_identifier_shaped(f) or _one_token(f))
    identifier = dominant == "objectId" or counter or coded
    present = (f.present_count - f.null_count) / max(f.parent_present_count, 1)
    explained = repeats <= _bound(DUPLICATE_RATE * values * share + by_chance)
    if names_own_key(f.path, collection) and f.distinct_ratio >= KEY_UNIQUE_NAMED:
        return KeyPlan(cap=1.0, chance=chance)
    if hints.key and not names_reference(f.path, collection) and values >= KEY_NAMED_MIN_VALUES \
            and f.distinct_ratio >= KEY_UNIQUE_NAMED:
        return KeyPlan(cap=DUPLICATE_MAX_SHARE_KEY, paired=True, chance=chance)
    if crowded:
        return None
    if identifier and present >= KEY_PRESENCE and explained:
        return KeyPlan(cap=DUPLICATE_MAX_SHARE_KEY, chance=chance, identifier=hints.key)
    if f.distinct_ratio >= UNIQUE_IN_SAMPLE and (dominant != "number" or counter):
        return KeyPlan(cap=DUPLICATE_MAX_SHARE, chance=chance, merely_unique=True, identifier=hints.key)
    return None


def verdict(plan: KeyPlan, *, documents: int, values: int, size: int) -> bool:
    """Do ``values`` repeated values held by ``documents`` documents (of ``size``) make duplicates?"""
    if values == 0 or (plan.chance > 0 and values <= _chance_bound(plan.chance)):
        return False
    paired = plan.paired and documents <= PAIRS * values
    return documents <= plan.cap * size or paired


def group_bytes(f: FieldStats, size: int | None) -> int:
    """Memory a ``$group`` over the field's values needs at most: one entry per document."""
    families = _families(f)
    dominant = max(families, key=lambda k: families[k]) if families else "string"
    width = _VALUE_BYTES.get(dominant, 0)
    if dominant == "string" and f.strings is not None:
        width = int(f.strings.mean_length) + 5
    documents = size if size is not None else f.present_count
    return documents * (width + GROUP_ENTRY)
