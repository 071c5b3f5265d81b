"""Contracts a careless or hostile user writes: each is refused at its line when the file is read,
never accepted and then left unchecked, dropped, or read somewhere else."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from argus.agent.pcre import pcre2_problem
from argus.config.contracts import ContractError, load_contract
from tests.security import pcre


def _load(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "c.yaml"
    path.write_text(textwrap.dedent(text))
    with pytest.raises(ContractError) as caught:
        load_contract(path)
    return [p.replace(str(tmp_path) + "/", "") for p in caught.value.problems]


# Patterns Python's parser (and the in-process engine's `regex`) accepts and PCRE2, as MongoDB ships it, refuses.
SERVER_REFUSES = [r"(?<=a+)b", r"(?<!c{1,3})d", r"(?<=(?:ab|c)d)e", r"\U0001F600", r"\u00e9", r"[\u0041]",
                  r"\N{DIGIT ONE}", r"(?a)\w", r"(?u)x"]
BOTH_ACCEPT = [r"(?<=a|bb)b", r"(?<=ab)c", r"a++b", r"(?>a|b)c", r"a\Z", r"\\u", r"(?P<n>a)(?P=n)", r"(?i:a)",
               r"^ORD-[0-9]{4}$"]


@pytest.mark.parametrize("pattern", SERVER_REFUSES)
def test_a_pattern_the_server_would_refuse_is_refused_at_its_line(tmp_path: Path, pattern: str) -> None:
    problems = _load(tmp_path, f"""\
        fields:
          order_id: {{required: true}}
          code: {{pattern: '{pattern}'}}
        """)
    assert len(problems) == 1
    assert problems[0].startswith("c.yaml:3 fields.code.pattern: the pattern is refused: the server's engine (PCRE2) "
                                  "refuses it: ")


@pytest.mark.parametrize("pattern", SERVER_REFUSES + BOTH_ACCEPT)
def test_the_fallback_judges_every_pattern_as_the_real_pcre2_does(pattern: str) -> None:
    if not pcre.available():
        pytest.skip("libpcre2-8 (Debian libpcre2-8-0) is not installed")
    assert (pcre2_problem(pattern) is None) == (pcre2_problem(pattern, native=False) is None)
    assert (pcre2_problem(pattern) is None) == (pattern in BOTH_ACCEPT)


def test_an_open_repeat_read_differently_by_the_two_engines_is_refused(tmp_path: Path) -> None:
    problems = _load(tmp_path, "fields:\n  code: {pattern: 'x{,3}'}\n")
    assert problems == ["c.yaml:2 fields.code.pattern: the pattern is refused: '{,n}' is a repeat to Python but the "
                        "text '{,n}' to PCRE2 (MongoDB): write {0,n} for the repeat, \\{,n} for the text"]


def test_a_field_declared_twice_is_an_error_at_the_second_declaration(tmp_path: Path) -> None:
    problems = _load(tmp_path, """\
        fields:
          order_id: {required: true}
          status: {in: [paid, shipped]}
          order_id: {unique: true}
        """)
    assert problems == ["c.yaml:4 fields.order_id: given twice in one mapping (first at line 2); YAML would keep only "
                        "this one: merge the two or remove one"]


@pytest.mark.parametrize("key", ["~", "null", "? "])
def test_a_null_key_is_an_error_at_its_line_never_a_field_named_none(tmp_path: Path, key: str) -> None:
    problems = _load(tmp_path, f"fields:\n  order_id: {{required: true}}\n  {key}: {{required: true}}\n"
                     if key != "? " else "fields:\n  order_id: {required: true}\n  ? \n  : {required: true}\n")
    assert len(problems) == 1 and problems[0].startswith("c.yaml:3 fields: a key is null")


@pytest.mark.parametrize("target", ["admin.system.users", "otherdb.system.users", "system.users.x", "local.oplog.x",
                                    "config.chunks.ns", "{collection: admin.system.users, field: _id}",
                                    "{collection: local.oplog.rs, field: ts}", "{collection: system.js, field: _id}"])
def test_a_reference_outside_the_audited_database_is_refused_at_load(tmp_path: Path, target: str) -> None:
    problems = _load(tmp_path, f"fields:\n  customer_id: {{references: {target}}}\n")
    assert len(problems) == 1
    assert problems[0].startswith("c.yaml:2 fields.customer_id.references: ")
    assert problems[0].endswith("names a system collection or another database: references stay within the audited "
                                "database (collection.field, e.g. customers.customer_id)")


def test_a_reference_within_the_database_still_loads(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("fields:\n  customer_id: {references: customers.customer.id}\n")
    rule = load_contract(path).rules[0]
    assert (rule.value.collection, rule.value.field) == ("customers", "customer.id")


@pytest.mark.parametrize("value", ['{$numberInt: "2147483648"}', '{$binary: {base64: "!!!", subType: "00"}}'])
def test_an_allowed_value_that_is_invalid_extended_json_is_refused_at_its_line(tmp_path: Path, value: str) -> None:
    problems = _load(tmp_path, f"fields:\n  code: {{in: [1, {value}]}}\n")
    assert problems == ["c.yaml:2 fields.code.in: a value of the list is not valid Extended JSON"]
