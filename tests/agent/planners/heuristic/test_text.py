"""Enum violations and string formats."""

from __future__ import annotations

from agent.planners.heuristic.text import enum_violations, is_variant, string_format
from agent.tools.profiling import profile_documents


def test_currency_variants_and_a_foreign_symbol_are_violations() -> None:
    counts = [("USD", 4789), ("EUR", 2363), ("GBP", 768), ("$", 26), ("EURO", 24), ("USDD", 17), ("usd", 13)]
    assert enum_violations(counts) == {"$": "a different kind of value", "EURO": "spelling", "USDD": "spelling",
                                       "usd": "case or spacing"}


def test_skewed_but_legitimate_categories_are_clean() -> None:
    assert enum_violations([("bronze", 2988), ("silver", 1279), ("gold", 589), ("platinum", 144),
                            ("diamond", 3)]) == {}


def test_codes_differing_in_digits_are_distinct_values() -> None:
    assert enum_violations([("SKU-0062", 80), ("SKU-0063", 4), ("hf-3", 41), ("hf-4", 2)]) == {}


def test_short_codes_one_letter_apart_are_distinct_values() -> None:
    assert enum_violations([("CO", 248), ("CA", 170), ("AZ", 40), ("AR", 20), ("AL", 5)]) == {}


def test_short_typos_among_a_dominant_pair_are_violations() -> None:
    found = enum_violations([("yes", 830), ("no", 143), ("yxs", 11), ("yex", 9), ("xes", 5), ("xo", 2)])
    assert set(found) == {"yxs", "yex", "xes", "xo"}


def test_one_off_misspellings_of_long_values_are_violations() -> None:
    assert is_variant("acuxe care hospixals", "acute care hospitals", once=True) == "spelling"
    assert is_variant("American Dark Wheat Ale", "American Pale Wheat Ale") is None


def test_lower_case_variant_is_a_violation_even_when_common() -> None:
    assert enum_violations([("US", 670), ("BR", 644), ("us", 13), ("br", 8)]) == {
        "us": "case or spacing", "br": "case or spacing"}


def _strings(values):  # type: ignore[no-untyped-def]
    fields, _, _ = profile_documents([{"s": v} for v in values])
    return fields[0].strings


def test_email_format_is_recognised() -> None:
    fmt = string_format(_strings([f"user{i}@mail.org" for i in range(95)] + ["n/a"] * 3 + ["bad"] * 2))
    assert fmt is not None and fmt.kind == "email" and fmt.matched == 95


def test_structured_code_shape_is_a_format() -> None:
    fmt = string_format(_strings([f"ORD-{100000 + i}" for i in range(99)] + ["ORD100100"]))
    assert fmt is not None and fmt.regex == "^[A-Z]+\\-[0-9]+$"


def test_names_have_no_format() -> None:
    assert string_format(_strings([f"Ann Smith{'x' * (i % 5)}" for i in range(100)])) is None


def test_numbers_written_with_units_are_a_violation_format() -> None:
    fmt = string_format(_strings(["12.0 oz"] * 40 + ["16 oz."] * 30 + ["12.0 ounce"] * 30))
    assert fmt is not None and fmt.kind == "number_with_unit" and fmt.violation_matches


def test_street_addresses_are_not_numbers_with_units() -> None:
    streets = [f"{i} {w} street" for i, w in enumerate(["oak", "elm", "main", "pine", "lake", "hill"] * 10)]
    assert string_format(_strings([f"{s} {i}" for i, s in enumerate(streets)])) is None


def test_recombined_words_are_real_values_not_typos() -> None:
    counts = [("Jo Fox", 20), ("Bo Fox", 1), ("Bo Berg", 18), ("Jo Berg", 15)]
    assert enum_violations(counts) == {}


def test_a_typo_introduces_a_word_the_field_never_uses() -> None:
    counts = [("Jo Fox", 20), ("Jo Fxx", 1), ("Bo Berg", 18)]
    assert enum_violations(counts) == {"Jo Fxx": "spelling"}


def test_swapped_and_shuffled_letters_are_misspellings() -> None:
    counts = [("completed", 1252), ("scheduled", 523), ("cancelled", 205), ("compelted", 127), ("compltede", 88),
              ("schdulede", 43), ("cancllede", 9), ("rescheduled", 20), ("rschedulede", 3)]
    assert set(enum_violations(counts)) == {"compelted", "compltede", "schdulede", "cancllede", "rschedulede"}


def test_separator_variants_are_one_value() -> None:
    found = enum_violations([("no_show", 100), ("completed", 900), ("no-show", 6), ("No Show", 2), ("ebook", 50),
                             ("e-book", 4)])
    assert found == {"no-show": "punctuation", "No Show": "punctuation", "e-book": "punctuation"}


def test_real_words_a_few_letters_apart_stay_categories() -> None:
    counts = [("active", 900), ("inactive", 90), ("male", 500), ("female", 480), ("stop", 300), ("spot", 40),
              ("listen", 200), ("silent", 20)]
    assert enum_violations(counts) == {}
