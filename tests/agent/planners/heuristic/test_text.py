"""Enum violations and string formats."""

from __future__ import annotations

import re

import pytest

from argus.agent.planners.heuristic.text import enum_violations, is_variant, string_format
from argus.agent.tools.formats import MADE_UP_EMAIL, PLACEHOLDER_EMAIL
from argus.agent.tools.profiling import profile_documents
from argus.agent.tools.regex_cost import regex_problem


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


# --- numbers written with units --------------------------------------------------------------------

def _unit_format(values):  # type: ignore[no-untyped-def]
    fmt = string_format(_strings(values))
    return fmt.kind if fmt is not None and fmt.violation_matches else None


@pytest.mark.parametrize("values", [
    [f"{h:02d}:{m}" for h in range(8, 20) for m in ("00", "15", "30", "45")],            # opening times
    ["718-7", "2823-3", "1925-7", "2345-7", "2160-0"] * 10,                              # LOINC codes
    ["2024-FA", "2025-SP", "2025-FA"] * 10,                                              # academic terms
    [f"{m:02d}/{y}" for m in range(1, 13) for y in (26, 27, 28)],                         # card expiry
    ["2-1", "0-0", "3-2", "1-1"] * 10,                                                   # scores
    [f"{i} {s} St" for i, s in enumerate(["Oak", "Pine", "Main", "Elm"] * 12, 1)],       # streets
    ["5 mg", "10 mg", "500 mg", "850 mg"] * 10,                                          # one unit, one spelling
    ["500 ml", "1 l", "2 l", "330 ml"] * 10,                                             # two units, each one way
    ["1st", "2nd", "3rd", "4th", "5th"] * 10,                                            # floors
    [f"{i}{c}" for i in range(1, 13) for c in "ABCD"],                                   # flats
    [f"674{i % 10}a1b2c3d4e5f6a7b8c9d0{i:03x}" for i in range(60)],                       # hex ids, one burst
])
def test_text_after_a_number_that_is_not_a_unit_spelled_two_ways_is_no_defect(values) -> None:  # type: ignore[no-untyped-def]
    assert _unit_format(values) is None


def test_one_unit_spelled_several_ways_is_a_defect() -> None:
    values = ["12.0 oz."] * 58 + ["12.0 oz"] * 39 + ["12.0 ounce"] * 36 + ["12.0 OZ."] * 10 + ["16.0 oz. Alum"] * 9
    fmt = string_format(_strings(values))
    assert fmt is not None and fmt.violation_matches and fmt.matched == len(values)


def test_case_alone_makes_a_unit_inconsistent() -> None:
    assert _unit_format(["500 mg"] * 40 + ["500 MG"] * 10) == "number_with_unit"


def test_numbers_mixed_with_and_without_their_unit_are_a_defect() -> None:
    fmt = string_format(_strings(["72 kg"] * 30 + ["72"] * 70))
    assert fmt is not None and fmt.violation_matches and fmt.matched == 30


# --- code shapes ----------------------------------------------------------------------------------

def _zips() -> list[str]:
    return [f"{1001 + 97 * i:05d}" for i in range(970)]


def test_a_code_shorter_than_its_field_breaks_the_exact_shape() -> None:
    fmt = string_format(_strings(_zips() + ["1234"] * 15 + ["00000"] * 15), code=True)
    assert fmt is not None and fmt.kind == "shape 99999"
    rx = re.compile(fmt.regex)
    assert rx.match("02134") and not rx.match("1234") and not rx.match("00000")


def test_a_phone_one_digit_short_breaks_the_exact_shape() -> None:
    phones = [f"({200 + i % 700}) {300 + i % 600}-{i:04d}" for i in range(980)] + ["(555) 555-555"] * 20
    fmt = string_format(_strings(phones), code=True)
    assert fmt is not None and fmt.kind == "shape (999) 999-9999" and not re.match(fmt.regex, "(555) 555-555")


def test_phones_in_several_national_formats_keep_the_lenient_shape() -> None:
    phones = [f"+{c} ({200 + i % 700}) {300 + i % 600}-{i:04d}" for i in range(250) for c in (1, 33, 44, 49)]
    fmt = string_format(_strings(phones), code=True)
    assert fmt is not None and fmt.kind == "shape +9+ +(9+) +9+-9+"
    assert all(re.match(fmt.regex, p) for p in phones)


def test_codes_people_make_up_learn_no_shape_from_a_bare_majority() -> None:
    coupons = ["WELCOME10", "SPRING20", "VIP5", "FREESHIP"] * 10
    assert string_format(_strings(coupons), code=True, path="cart.coupon_code") is None
    assert string_format(_strings(coupons), code=True, path="sku_code") is not None


def test_hex_ids_made_in_one_burst_learn_no_shape() -> None:
    ids = [f"674{i % 7}a1b2c3d4e5f6a7b8{i:03x}" for i in range(60)]
    assert string_format(_strings(ids), code=True, path="cart_id") is None


# --- emails ---------------------------------------------------------------------------------------

def test_internationalised_addresses_are_emails() -> None:
    values = [f"ivan{i}@пример.рф" for i in range(30)] + [f"a{i}@xn--e1afmkfd.xn--p1ai" for i in range(30)]
    fmt = string_format(_strings(values + [f"u{i}@mail.org" for i in range(40)]))
    assert fmt is not None and fmt.kind == "email" and fmt.matched == 100


@pytest.mark.parametrize(("address", "placeholder"), [
    ("test@test.com", True), ("noreply@example.com", True), ("none@none.com", True), ("Jo@Example.ORG", True),
    ("jo@mail.example.net", True), ("jo@shop.test", True), ("none@gmail.com", True), ("NoEmail@web.de", True),
    ("test@gmail.com", False), ("noreply@shop.de", False), ("jo@examples.com", False), ("jo@test.company.com", False),
    ("nonexistent@web.de", False),
])
def test_placeholder_addresses(address: str, placeholder: bool) -> None:
    assert bool(re.match(PLACEHOLDER_EMAIL, address, re.IGNORECASE)) is placeholder
    assert regex_problem(PLACEHOLDER_EMAIL, re.IGNORECASE) is None


@pytest.mark.parametrize(("address", "made_up"), [
    ("test@test.com", True), ("noreply@example.com", True), ("NONE@airline.example", True), ("n0@none.com", True),
    ("crew7@airline.example", False), ("user17@example.com", False), ("test@gmail.com", False),
])
def test_made_up_addresses_where_the_field_lives_at_a_reserved_domain(address: str, made_up: bool) -> None:
    assert bool(re.match(MADE_UP_EMAIL, address, re.IGNORECASE)) is made_up
    assert regex_problem(MADE_UP_EMAIL, re.IGNORECASE) is None


# --- rare but real categories ---------------------------------------------------------------------

def test_clothing_sizes_one_letter_apart_are_categories() -> None:
    assert enum_violations([("M", 900), ("L", 880), ("S", 450), ("XL", 440), ("XXL", 180), ("XS", 120)]) == {}


def test_recurring_names_one_letter_apart_are_other_names() -> None:
    cities = [("Berlin", 1050), ("Hamburg", 900), ("München", 600), ("Köln", 300), ("Homburg", 30)]
    assert enum_violations(cities, path="address.city") == {}
    assert enum_violations([("Müller", 400), ("Meier", 300), ("Meyer", 40), ("Hoffmann", 200), ("Hofmann", 30)],
                           path="lastName") == {}


def test_a_one_off_misspelt_name_is_still_a_typo() -> None:
    cities = [("birmingham", 120), ("sheffield", 80), ("birminghxm", 1), ("sheffxeld", 2)]
    assert enum_violations(cities, path="City") == {"birminghxm": "spelling", "sheffxeld": "spelling"}


def test_a_recurring_misspelling_of_a_status_is_still_a_typo() -> None:
    assert enum_violations([("completed", 900), ("scheduled", 500), ("compelted", 30)], path="status") == {
        "compelted": "spelling"}


def test_a_locale_with_its_script_is_the_same_kind_as_a_language() -> None:
    assert enum_violations([("de", 2400), ("en", 450), ("fr", 138), ("zh-Hant", 12)]) == {}
    assert enum_violations([("de", 2400), ("en", 450), ("fr", 138), ("12", 12), ("#", 9)]) == {
        "12": "a different kind of value", "#": "a different kind of value"}


def test_a_code_with_inserted_dots_is_still_a_different_kind() -> None:
    counts = [("USD", 4789), ("EUR", 2363), ("GBP", 768), ("U.S.D", 20), ("pt-BR", 9)]
    assert enum_violations(counts) == {"U.S.D": "a different kind of value"}


def test_a_counter_written_as_text_may_grow_a_digit() -> None:
    fmt = string_format(_strings([str(100_000 + 37 * i) for i in range(970)] + ["1000123"] * 30), code=True)
    assert fmt is not None and re.match(fmt.regex, "1000123") and not re.match(fmt.regex, "99999")


def test_an_order_number_may_grow_a_digit() -> None:
    numbers = [f"ORD-{10_000 + 91 * i}" for i in range(970)] + [f"ORD-{100_000 + i}" for i in range(30)]
    fmt = string_format(_strings(numbers), code=True)
    assert fmt is not None and all(re.match(fmt.regex, n) for n in numbers) and not re.match(fmt.regex, "ORD-1234")


def test_a_code_written_longer_at_its_end_is_a_variant() -> None:
    counts = [("US", 2400), ("CA", 450), ("MX", 150), ("USA", 25), ("EUR", 300), ("Euro", 20)]
    assert enum_violations(counts) == {"USA": "spelling", "Euro": "spelling"}
