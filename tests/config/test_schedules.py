"""schedules.yaml: what it accepts, how defaults apply, and errors that name file, line and key."""

from __future__ import annotations

import textwrap
from datetime import timedelta
from pathlib import Path

import pytest

from argus.agent.errors import ArgusError
from argus.config.cron import parse_cron
from argus.config.schedule_models import CronTrigger, IntervalTrigger
from argus.config.schedules import ScheduleError, load_schedules, parse_duration

ROOT = Path(__file__).resolve().parents[2]
GOOD = """\
connections:
  demo:
    files: {orders: data/orders.jsonl}
  prod:
    uri_env: ARGUS_TEST_URI
defaults:
  sample_size: 500
  time_budget: 2m
  trigger: {every: 1h}
  labels: {team: data}
schedules:
  - name: orders
    connection: demo
    database: shop
    collection: orders
    run_at_start: true
  - name: prod-orders
    connection: prod
    database: shop
    collection: orders
    trigger: {cron: "30 6 * * 1-5", timezone: Europe/Berlin, jitter: 2m}
    sample_size: 2000
    labels: {team: shop, pager: yes}
"""


def _write(tmp_path: Path, text: str, name: str = "schedules.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def _problems(tmp_path: Path, text: str) -> list[str]:
    with pytest.raises(ScheduleError) as info:
        load_schedules(_write(tmp_path, text))
    return [p.replace(str(tmp_path) + "/", "") for p in info.value.problems]


def test_the_repository_example_is_valid() -> None:
    loaded = load_schedules(ROOT / "schedules.yaml")
    assert set(loaded.schedules) == {"demo-orders", "demo-customers"}
    assert all(s.settings.run_at_start for s in loaded.schedules.values())
    assert loaded.connections["demo"].files is not None
    assert all(p.is_file() for p in loaded.connections["demo"].files.values())


def test_defaults_apply_and_schedules_override(tmp_path: Path) -> None:
    loaded = load_schedules(_write(tmp_path, GOOD))
    orders, prod = loaded.schedules["orders"], loaded.schedules["prod-orders"]
    assert (orders.settings.sample_size, prod.settings.sample_size) == (500, 2000)
    assert orders.settings.time_budget == prod.settings.time_budget == timedelta(minutes=2)
    assert orders.trigger == IntervalTrigger(every=timedelta(hours=1))
    assert isinstance(prod.trigger, CronTrigger) and prod.trigger.jitter == timedelta(minutes=2)
    assert (orders.settings.labels, prod.settings.labels) == ({"team": "data"}, {"team": "shop", "pager": "yes"})
    assert orders.settings.audit_options().sample_size == 500


def test_file_paths_are_relative_to_the_schedules_file(tmp_path: Path) -> None:
    loaded = load_schedules(_write(tmp_path, GOOD))
    assert loaded.connections["demo"].files == {"orders": tmp_path / "data/orders.jsonl"}


def test_uri_comes_from_the_environment_when_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    conn = load_schedules(_write(tmp_path, GOOD)).connections["prod"]
    monkeypatch.delenv("ARGUS_TEST_URI", raising=False)
    with pytest.raises(ArgusError, match="environment variable ARGUS_TEST_URI is not set"):
        conn.uri()
    monkeypatch.setenv("ARGUS_TEST_URI", "mongodb://u:p@h/db")
    assert conn.uri().get_secret_value() == "mongodb://u:p@h/db"


def test_bad_cron_names_file_line_and_key(tmp_path: Path) -> None:
    text = GOOD.replace('"30 6 * * 1-5"', '"every monday"')
    assert _problems(tmp_path, text) == [
        "schedules.yaml:21 schedules[1].trigger.cron: 'every monday' is not a cron expression "
        "(five fields, e.g. '0 6 * * 1')"]


@pytest.mark.parametrize(("change", "problem"), [
    (("collection: orders\n    run_at_start", "colection: orders\n    run_at_start"),
     "schedules.yaml:15 schedules[0].colection: unknown key (did you mean 'collection'?)"),
    (("connection: demo", "connection: nope"),
     "schedules.yaml:13 schedules[0].connection: 'nope' is not a connection (known: demo, prod)"),
    (("sample_size: 500", "sample_size: 50000"),
     "schedules.yaml:7 defaults.sample_size: Input should be less than or equal to 10000"),
    (("timezone: Europe/Berlin", "timezone: Mars/Olympus"),
     "schedules.yaml:21 schedules[1].trigger.timezone: 'Mars/Olympus' is not a time zone (an IANA name such "
     "as 'Europe/Berlin' or 'UTC')"),
    (("time_budget: 2m", "time_budget: forever"),
     "schedules.yaml:8 defaults.time_budget: 'forever' is not a duration (e.g. 30s, 5m, 1h30m)"),
    (("uri_env: ARGUS_TEST_URI", "uri: mongodb://inline"),
     "schedules.yaml:5 connections.prod.uri: unknown key (did you mean 'uri_env'?)"),
    (("name: prod-orders", "name: orders"),
     "schedules.yaml:17 schedules[1].name: schedule name 'orders' is used twice"),
    (("{every: 1h}", "{every: 1h, jitter: 2h}"),
     "schedules.yaml:9 defaults.trigger.every: jitter (2:00:00) must be shorter than the interval (1:00:00)"),
])
def test_errors_say_where_and_what(tmp_path: Path, change: tuple[str, str], problem: str) -> None:
    assert problem in _problems(tmp_path, GOOD.replace(*change))


def test_yes_and_no_stay_strings(tmp_path: Path) -> None:
    loaded = load_schedules(_write(tmp_path, GOOD.replace("pager: yes", "pager: yes, country: NO")))
    assert loaded.schedules["prod-orders"].settings.labels == {"team": "shop", "pager": "yes", "country": "NO"}


def test_missing_required_key(tmp_path: Path) -> None:
    text = GOOD.replace("    database: shop\n    collection: orders\n    run_at_start",
                        "    collection: orders\n    run_at_start")
    assert "schedules.yaml:12 schedules[0].database: required key is missing" in _problems(tmp_path, text)


def test_yaml_syntax_error_names_the_line(tmp_path: Path) -> None:
    problems = _problems(tmp_path, GOOD.replace("labels: {team: data}", "labels: {team: data"))
    # line 10 holds the '{' never closed; the parser gives up on line 11, which the message named before
    assert problems == ["schedules.yaml:10: not valid YAML: the '{' opened here is never closed (or an item in "
                        "it lacks a ',' before line 11)"]


def test_a_schedule_without_any_trigger(tmp_path: Path) -> None:
    text = GOOD.replace("  trigger: {every: 1h}\n", "")
    assert "schedules.yaml:11 schedules[0].trigger: no trigger here and none in defaults" in _problems(tmp_path, text)


def test_a_connection_needs_exactly_one_source(tmp_path: Path) -> None:
    text = GOOD.replace("    uri_env: ARGUS_TEST_URI", "    uri_env: A\n    uri_file: /run/secret")
    assert ("schedules.yaml:5 connections.prod: give exactly one of uri_env, uri_file or files (a URI is never "
            "written inline)") in _problems(tmp_path, text)


@pytest.mark.parametrize(("text", "seconds"), [("90", 90), ("90s", 90), ("30m", 1800), ("1h30m", 5400),
                                               ("2d", 172800), ("500ms", 0.5), (45, 45)])
def test_durations(text: str | int, seconds: float) -> None:
    assert parse_duration(text).total_seconds() == seconds


@pytest.mark.parametrize(("cron", "weekdays"), [
    ("0 6 * * 1", "mon"), ("0 6 * * 0", "sun"), ("0 6 * * 7", "sun"), ("0 6 * * 1-5", "mon,tue,wed,thu,fri"),
    ("0 6 * * */2", "sun,tue,thu,sat"), ("0 6 * * sat,sun", "sun,sat"), ("0 6 * * 5-7", "sun,fri,sat"),
    ("0 6 * * *", None),
])
def test_cron_weekdays_follow_crontab(cron: str, weekdays: str | None) -> None:
    assert parse_cron(cron).day_of_week == weekdays


def test_cron_day_of_month_or_weekday() -> None:
    assert parse_cron("0 0 1 * 1").day_or_weekday and not parse_cron("0 0 1 * *").day_or_weekday


def test_cron_macros() -> None:
    assert parse_cron("@daily") == parse_cron("0 0 * * *")


def test_health_settings_merge_key_by_key_from_defaults(tmp_path: Path) -> None:
    text = GOOD.replace("  labels: {team: data}\n", "  labels: {team: data}\n  health: {window: 14, sensitivity: 4}\n")
    text = text.replace("    sample_size: 2000\n", "    sample_size: 2000\n    health: {time_field: created_at, "
                                                   "cadence: 15m}\n")
    loaded = load_schedules(_write(tmp_path, text))
    orders = loaded.schedules["orders"].settings.audit_options().health
    prod = loaded.schedules["prod-orders"].settings.audit_options().health
    assert (orders.window, orders.sensitivity, orders.time_field, orders.cadence_s) == (14, 4.0, None, None)
    assert (prod.window, prod.sensitivity, prod.time_field, prod.cadence_s) == (14, 4.0, "created_at", 900.0)


def test_a_health_typo_names_its_line_and_key(tmp_path: Path) -> None:
    text = GOOD.replace("  labels: {team: data}\n", "  labels: {team: data}\n  health: {min_histroy: 3}\n")
    assert "schedules.yaml:11 defaults.health.min_histroy: unknown key (did you mean 'min_history'?)" in \
        _problems(tmp_path, text)


def test_an_ru_budget_in_defaults_reaches_every_audit_and_a_schedule_overrides_it(tmp_path: Path) -> None:
    text = GOOD.replace("  sample_size: 500\n", "  sample_size: 500\n  ru_budget: 5000\n", 1)
    text = text.replace("    sample_size: 2000\n", "    sample_size: 2000\n    ru_budget: 250.5\n")
    loaded = load_schedules(_write(tmp_path, text))
    assert loaded.schedules["orders"].settings.audit_options().ru_budget == 5000
    assert loaded.schedules["prod-orders"].settings.audit_options().ru_budget == 250.5


def test_an_ru_budget_must_be_positive(tmp_path: Path) -> None:
    problems = _problems(tmp_path, GOOD.replace("  sample_size: 500\n", "  sample_size: 500\n  ru_budget: 0\n", 1))
    assert len(problems) == 1 and "defaults.ru_budget" in problems[0]


def _many(count: int) -> str:
    return "connections: {demo: {files: {orders: data/orders.jsonl}}}\nschedules:\n" + "".join(
        f"  - {{name: s{i}, connection: demo, database: shop, collection: orders, trigger: {{every: 1h}}}}\n"
        for i in range(count))


def test_a_file_over_the_size_limit_is_refused_unread_naming_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "schedules.yaml"
    with path.open("wb") as out:
        out.truncate(60 * 1024 * 1024)  # 60 MB of NULs: read, they would be refused as control characters
    with pytest.raises(ScheduleError) as info:
        load_schedules(path)
    assert info.value.problems == [f"{path}:1: the file is 62,914,560 bytes, over the 1 MiB a schedules file may "
                                   "hold; refused unread"]


def test_too_many_values_are_refused_where_the_limit_is_passed_not_after_reading_them_all(tmp_path: Path) -> None:
    with pytest.raises(ScheduleError) as info:
        load_schedules(_write(tmp_path, _many(10_000)))
    [problem] = info.value.problems
    line = int(problem.split(":")[1].split()[0])
    assert "holds more than 20,000 values (about 1,428 schedules), the most a schedules file may hold" in problem
    assert line < 3_000  # composing stopped there; the file has 10,002 lines


def test_a_thousand_schedules_load(tmp_path: Path) -> None:
    assert len(load_schedules(_write(tmp_path, _many(1_000))).schedules) == 1_000


def test_a_file_replaced_while_it_is_parsed_is_read_again_never_applied_stale(tmp_path: Path) -> None:
    import threading
    import time

    path = _write(tmp_path, _many(1_300))        # a second or more to parse
    replaced = threading.Event()

    def replace() -> None:
        time.sleep(0.05)
        fresh = tmp_path / "fresh.yaml"
        fresh.write_text(_many(2))
        fresh.replace(path)
        replaced.set()

    editor = threading.Thread(target=replace)
    editor.start()
    loaded = load_schedules(path)
    editor.join()
    assert replaced.is_set() and sorted(loaded.schedules) == ["s0", "s1"]


def test_an_unreadable_secret_file_is_named_by_its_key_never_by_its_path(tmp_path: Path) -> None:
    from argus.agent.llm.options import LLMOptions
    from argus.config.alerts import Channel
    from argus.config.schedule_models import Connection

    hidden = tmp_path / "vault" / "mongodb-uri"
    messages = []
    for read in (lambda: Connection(uri_file=hidden).uri("schedules.yaml:4 connections.prod"),
                 lambda: Channel(type="webhook", url_file=hidden).resolve_url(),
                 lambda: Channel(type="webhook", url_env="HOOK", secret_file=hidden).resolve_secret(),
                 lambda: LLMOptions(model="m", api_key_file=hidden).api_key()):
        with pytest.raises(ArgusError) as info:
            read()
        messages.append(str(info.value))
    assert all("vault" not in m for m in messages), messages
    assert messages[0] == "schedules.yaml:4 connections.prod uri_file: cannot read the file it names: No such file " \
                          "or directory"
