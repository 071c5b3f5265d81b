"""Contract files and inline contracts: every rule read with its line, every mistake named at its
file and line with the nearest valid key, ODCS read where it maps."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from argus.config.contracts import ContractError, load_contract
from argus.config.schedules import ScheduleError, load_schedules


def _file(tmp_path: Path, text: str, name: str = "c.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_short_and_long_forms_read_with_their_lines(tmp_path: Path) -> None:
    path = _file(tmp_path, """\
        fields:
          order_id: {required: true, unique: true, type: string}
          shipped_at:
            required: {where: {status: shipped}, severity: critical}
            max: now - 1h
          tags: {in: {values: [a, b], severity: low}}
        documents: {min: 1}
        freshness: {field: created_at, max_age: 24h}
        """)
    contract = load_contract(path, shown_as="c.yaml")
    assert [r.id for r in contract.rules] == [
        "c.yaml:2 order_id required", "c.yaml:2 order_id unique", "c.yaml:2 order_id type",
        "c.yaml:4 shipped_at required", "c.yaml:5 shipped_at max", "c.yaml:6 tags in",
        "c.yaml:7 (collection) documents", "c.yaml:8 (collection) freshness"]
    required = contract.rules[3]
    assert (required.severity, required.where) == ("critical", {"status": "shipped"})
    assert contract.rules[4].expectation() == "max now - 1h"
    assert contract.rules[5].severity == "low"


def test_every_mistake_is_named_at_its_line_with_the_nearest_key(tmp_path: Path) -> None:
    path = _file(tmp_path, """\
        fields:
          order_id: {requird: true, unique: yes, type: strin}
          status: {in: []}
          code: {pattern: '^(a+)+$', format: emial}
          when: {where: {$where: "1"}, required: true}
          total: {min: 10, max: 1}
        documnts: {min: 1}
        """)
    with pytest.raises(ContractError) as caught:
        load_contract(path)
    assert caught.value.problems == [
        f"{path}:2 fields.order_id.requird: unknown rule (did you mean 'required'?)",
        f"{path}:2 fields.order_id.type: 'strin' is not a BSON type (did you mean 'string'?)",
        f"{path}:2 fields.order_id.unique: unique is true or false",
        f"{path}:3 fields.status.in: in is a non-empty list of the allowed values, e.g. [pending, paid]",
        f"{path}:4 fields.code.format: 'emial' is not a format Argus knows (did you mean 'email'?); "
        f"write a pattern for any other",
        f"{path}:4 fields.code.pattern: the pattern is refused: it has nested quantifiers (like (a+)+), which take "
        f"exponential time; write the inner pattern once",
        f"{path}:5 fields.when.where: operator $where is refused in where: it runs JavaScript on the server; "
        f"Argus is read-only",
        f"{path}:6 fields.total.min: min 10 is above max 1",
        f"{path}:7 documnts: unknown key (did you mean 'documents'?)"]


def test_an_odcs_contract_maps_what_it_can_and_notes_the_rest(tmp_path: Path) -> None:
    path = _file(tmp_path, """\
        apiVersion: v3.1.0
        kind: DataContract
        id: orders
        schema:
          - name: orders
            properties:
              - name: order_id
                logicalType: string
                required: true
                unique: true
              - name: total
                logicalType: number
                logicalTypeOptions: {minimum: 0, exclusiveMaximum: 100000}
              - name: status
                enum: [{value: paid}, {value: shipped}]
              - name: customer_id
                relationships: [{to: customers.customer_id}]
              - name: email
                quality:
                  - {metric: nullValues, mustBeLessThan: 5, unit: percent}
                  - {type: sql, query: "SELECT 1"}
            quality:
              - {metric: rowCount, mustBeGreaterThan: 0}
        """)
    contract = load_contract(path, shown_as="orders.odcs.yaml", collection="orders")
    assert [(r.field, r.kind) for r in contract.rules] == [
        ("order_id", "required"), ("order_id", "unique"), ("order_id", "type"), ("total", "type"), ("total", "min"),
        ("status", "in"), ("customer_id", "references"), ("email", "max_null_share"), ("(collection)", "documents")]
    assert contract.rules[-1].value == (1, None)
    assert contract.rules[-2].value == 0.05
    assert contract.notes == ("line 13: total: exclusiveMaximum is not mapped to an Argus rule",
                              "line 21: email: a sql quality rule is not mapped to an Argus rule")


def test_an_inline_contract_is_checked_at_its_line_in_the_schedules_file(tmp_path: Path) -> None:
    path = _file(tmp_path, """\
        connections:
          files: {files: {orders: orders.jsonl}}
        defaults: {trigger: {every: 1h}}
        schedules:
          - name: orders
            connection: files
            database: shop
            collection: orders
            contract:
              fields:
                order_id: {unique: true, typ: string}
        """, "schedules.yaml")
    with pytest.raises(ScheduleError) as caught:
        load_schedules(path)
    assert caught.value.problems == [
        f"{path}:11 schedules[0].contract.fields.order_id.typ: unknown rule (did you mean 'type'?)"]


def test_a_contract_file_in_defaults_applies_to_every_schedule_and_its_edits_change_the_digest(
        tmp_path: Path) -> None:
    contract = _file(tmp_path, "fields:\n  order_id: {unique: true}\n", "orders.contract.yaml")
    path = _file(tmp_path, """\
        connections:
          files: {files: {orders: orders.jsonl}}
        defaults: {trigger: {every: 1h}, contract: orders.contract.yaml}
        schedules:
          - {name: a, connection: files, database: shop, collection: orders}
          - {name: b, connection: files, database: shop, collection: orders, contract: {documents: {min: 1}}}
        """, "schedules.yaml")
    loaded = load_schedules(path)
    a, b = loaded.schedules["a"].contract, loaded.schedules["b"].contract
    assert a is not None and [r.id for r in a.rules] == ["orders.contract.yaml:2 order_id unique"]
    assert b is not None and [r.id for r in b.rules] == ["schedules.yaml:6 (collection) documents"]
    assert loaded.watched == (contract,)
    contract.write_text("fields:\n  order_id: {unique: false}\n")
    assert load_schedules(path).digest != loaded.digest


def test_a_missing_contract_file_is_named_where_the_schedule_names_it(tmp_path: Path) -> None:
    path = _file(tmp_path, """\
        connections:
          files: {files: {orders: orders.jsonl}}
        defaults: {trigger: {every: 1h}}
        schedules:
          - {name: a, connection: files, database: shop, collection: orders, contract: contracts/nope.yaml}
        """, "schedules.yaml")
    with pytest.raises(ScheduleError) as caught:
        load_schedules(path)
    assert caught.value.problems == [f"{path}:5 schedules[0].contract: no contract file 'contracts/nope.yaml' "
                                     f"(relative to schedules.yaml)"]


def test_schedules_check_names_each_schedules_contract_and_refuses_a_broken_one(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from argus.daemon.cli import app

    contract = _file(tmp_path, "fields:\n  order_id: {unique: true, required: true}\n", "orders.contract.yaml")
    path = _file(tmp_path, """\
        connections:
          files: {files: {orders: orders.jsonl}}
        defaults: {trigger: {every: 1h}}
        schedules:
          - {name: orders, connection: files, database: shop, collection: orders, contract: orders.contract.yaml}
        """, "schedules.yaml")
    (tmp_path / "orders.jsonl").write_text('{"order_id": 1}\n')  # check names a connection's missing file too
    done = CliRunner().invoke(app, ["schedules", "check", str(path)])
    assert done.exit_code == 0, done.output
    assert "orders: contract orders.contract.yaml: 2 rules" in done.stdout
    contract.write_text("fields:\n  order_id: {unique: ture}\n")
    done = CliRunner().invoke(app, ["schedules", "check", str(path)])
    assert done.exit_code == 1
    assert f"{contract}:2 fields.order_id.unique: unique is true or false" in done.stderr


def test_a_contract_file_is_bounded_as_the_schedules_file_is(tmp_path: Path) -> None:
    """A contract of more than 20,000 values, or over 1 MiB, is refused with its file and line,
    before it is built: the schedules file's bounds hold for every YAML file Argus reads."""
    from argus.config.contracts import ContractError, load_contract

    many = tmp_path / "many.yaml"
    many.write_text("fields:\n" + "".join(f"  f{i}: {{in: [a, b, c]}}\n" for i in range(6000)))
    with pytest.raises(ContractError) as refused:
        load_contract(many)
    assert f"{many}:" in refused.value.problems[0] and "holds more than 20,000 values" in refused.value.problems[0]
    huge = tmp_path / "huge.yaml"
    huge.write_text("# " + "x" * (1024 * 1024) + "\nfields: {}\n")
    with pytest.raises(ContractError) as refused:
        load_contract(huge)
    assert refused.value.problems == [f"{huge}:1: the contract is over 1 MiB, more than any contract needs; refused"]


PASSWORD = "Hunter2Secret"


@pytest.mark.parametrize("args", [
    # a connection string pasted where the contract's path goes (the path collapses '//' into '/')
    ["audit", "--file", "{orders}", "--contract", f"mongodb+srv://admin:{PASSWORD}@db.example.com/shop"],
    ["schedules", "check", "{schedules}"],
    # a connection string as a where literal and as a declared value, written in the report
    ["audit", "--file", "{orders}", "--contract", "{where}", "--format", "json"],
])
def test_credentials_in_a_contract_or_its_path_are_never_echoed(tmp_path: Path, args: list[str]) -> None:
    from typer.testing import CliRunner

    from argus.daemon.cli import app

    orders = tmp_path / "orders.jsonl"
    orders.write_text("".join(f'{{"_id": {i}, "total": {i - 2}, "note": "x"}}\n' for i in range(20)))
    schedules = _file(tmp_path, f"""\
        connections:
          files: {{files: {{orders: orders.jsonl}}}}
        defaults: {{trigger: {{every: 1h}}}}
        schedules:
          - {{name: a, connection: files, database: shop, collection: orders,
              contract: "mongodb://admin:{PASSWORD}@db.example.com/c.yaml"}}
        """, "schedules.yaml")
    where = _file(tmp_path, f"""\
        fields:
          total: {{min: 0, where: {{note: "mongodb://admin:{PASSWORD}@db.example.com/x"}}}}
          note: {{in: ["postgresql://bob:{PASSWORD}@pg/x"]}}
        """, "where.yaml")
    argv = [a.format(orders=orders, schedules=schedules, where=where) for a in args]
    done = CliRunner().invoke(app, argv)
    assert done.exit_code in (1, 2), done.output
    assert done.exception is None or isinstance(done.exception, SystemExit)
    assert PASSWORD not in done.stdout + done.stderr


@pytest.mark.parametrize("value", ["2030-02-31", "2030-00-10", "!!timestamp 2030-13-01", "!!int 12x", "!!float abc"])
def test_a_value_yaml_cannot_build_is_named_at_its_line(tmp_path: Path, value: str) -> None:
    """A date that does not exist (or a tagged scalar that is no such thing) was 'internal error:
    ValueError: day is out of range for month' from the command line."""
    path = _file(tmp_path, f"fields:\n  total: {{min: 0}}\n  created_at: {{max: {value}}}\n")
    with pytest.raises(ContractError) as caught:
        load_contract(path)
    assert len(caught.value.problems) == 1
    assert caught.value.problems[0].startswith(f"{path}:3: not valid YAML: "), caught.value.problems
    schedules = _file(tmp_path, f"""\
        connections:
          files: {{files: {{orders: orders.jsonl}}}}
        defaults: {{trigger: {{every: 1h}}}}
        schedules:
          - {{name: a, connection: files, database: shop, collection: orders, trigger: {{at: {value}}}}}
        """, "schedules.yaml")
    with pytest.raises(ScheduleError) as refused:
        load_schedules(schedules)
    assert refused.value.problems[0].startswith(f"{schedules}:5: not valid YAML: "), refused.value.problems


@pytest.mark.parametrize(("rule", "said"), [
    ('status: {in: ["a\\ud800b", paid]}', "fields.status.in: "),          # an unpaired surrogate
    ('order_id: {pattern: "^A\\0B"}', "fields.order_id.pattern: "),        # a NUL, which a BSON regex cannot carry
    ('status: {in: ["x", 99999999999999999999999]}', "fields.status.in: "),  # beyond int64
])
def test_a_value_the_guard_would_refuse_on_the_wire_is_refused_at_its_line(tmp_path: Path, rule: str,
                                                                           said: str) -> None:
    """Every filter a rule compiles to is judged by the guard when the file is read, as a where is: an
    in value with an unpaired surrogate ended the audit with 'internal error: PydanticSerializationError',
    a NUL in a pattern left the rule silently unchecked."""
    path = _file(tmp_path, f"fields:\n  total: {{min: 0}}\n  {rule}\n")
    with pytest.raises(ContractError) as caught:
        load_contract(path)
    assert len(caught.value.problems) == 1, caught.value.problems
    assert caught.value.problems[0].startswith(f"{path}:3 {said}"), caught.value.problems


def test_an_odcs_part_of_the_wrong_shape_is_refused_at_its_line_never_dropped(tmp_path: Path) -> None:
    """A string where a list goes was read letter by letter (twelve identical notes for 'customers.id'),
    a mapping where a list or a quality rule goes was dropped without a word."""
    path = _file(tmp_path, """\
        kind: DataContract
        schema:
          - name: orders
            properties:
              - name: order_id
                required: true
              - name: status
                relationships: customers.id
              - name: total
                quality: {metric: nullValues, mustBe: 0}
              - name: email
                logicalTypeOptions: [format, email]
              - name: note
                quality: [nullValues]
            quality: {metric: rowCount, mustBeGreaterThan: 0}
        """)
    with pytest.raises(ContractError) as caught:
        load_contract(path, collection="orders")
    assert caught.value.problems == [
        f"{path}:8 schema[0].properties[1].relationships: relationships is a list, e.g. "
        f"[{{to: customers.customer_id}}]",
        f"{path}:10 schema[0].properties[2].quality: quality is a list, e.g. [{{metric: nullValues, mustBe: 0}}]",
        f"{path}:12 schema[0].properties[3].logicalTypeOptions: logicalTypeOptions is a mapping, e.g. "
        f"{{minimum: 0}}",
        f"{path}:14 schema[0].properties[4].quality[0]: a quality rule is a mapping, e.g. "
        f"{{metric: nullValues, mustBe: 0}}",
        f"{path}:15 schema[0].quality: quality is a list, e.g. [{{metric: nullValues, mustBe: 0}}]",
    ]


def test_a_control_character_in_a_key_is_named_by_its_escape_never_written_raw(tmp_path: Path) -> None:
    """A NUL in a field name is refused, and the message shows it as ``\\x00``: a raw control
    character would cut a log line or drive the terminal the message is printed on."""
    from argus.config.contracts import ContractError, load_contract

    path = tmp_path / "c.yaml"
    path.write_text('fields:\n  "c\\x00d": {required: true}\n')
    with pytest.raises(ContractError) as refused:
        load_contract(path)
    [problem] = refused.value.problems
    assert problem.startswith(f"{path}:2 fields.c\\x00d: not a field path"), problem
    assert "\x00" not in problem
