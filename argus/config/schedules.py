"""``schedules.yaml``: named connections, defaults, and per-collection audit schedules.

Validated with pydantic; every error names the file, the line and the key, and says what is
expected::

    schedules.yaml:14 schedules[2].trigger.cron: 'every monday' is not a cron expression (five fields,
    e.g. '0 6 * * 1')

Cron expressions follow crontab(5): weekday 0 and 7 are Sunday, 1 is Monday, and when both the
day of month and the day of week are restricted, either one matching fires the schedule.
Connection URIs never appear in the file itself: they come from an environment variable
(``uri_env``) or a file (``uri_file``); a connection may instead list Extended JSON lines files
(``files``), loaded into an in-memory database, so examples run without a server.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    SecretStr,
    Tag,
    ValidationError,
    field_validator,
    model_validator,
)

from argus.agent.contracts.model import Contract
from argus.agent.custom_metrics.models import Bound, MetricSpec
from argus.agent.durations import format_duration, parse_duration, shortened
from argus.agent.errors import ArgusError
from argus.agent.failing_bounds import FAILING_DEFAULT, FAILING_MAX
from argus.agent.findings import Severity
from argus.agent.health.models import ExcludedSpan, HealthOptions
from argus.agent.llm.options import LLMOptions, PlannerKind
from argus.agent.options import AuditOptions, PrivacyMode, ScopeOptions
from argus.agent.secrets import SECRETS
from argus.agent.segments.models import SegmentOptions
from argus.config.alerts import AlertRoute, AlertsConfig, Channel, IncidentsConfig
from argus.config.contracts import ContractError, contract_digest, load_contract, parse_contract
from argus.config.cron import parse_cron
from argus.config.metrics import duplicate_metrics
from argus.config.settings import check_mongodb_uri
from argus.config.yaml_source import (
    MAX_NODES,
    Lines,
    TooManyValues,
    YamlError,
    line_for,
    nearest,
    problem_order,
    read_yaml,
    where,
)

__all__ = [
    "MAX_FILE_BYTES",
    "AuditSettings",
    "Connection",
    "CronTrigger",
    "FileVersion",
    "IntervalTrigger",
    "Schedule",
    "ScheduleError",
    "ScheduleSet",
    "ScopeSettings",
    "file_version",
    "format_duration",
    "load_schedules",
    "parse_duration",
]


class ScheduleError(ArgusError):
    """``schedules.yaml`` is invalid; ``problems`` holds one ``file:line key: message`` per error."""

    def __init__(self, problems: list[str]) -> None:
        problems = [SECRETS.redact(p) for p in problems]  # a problem quotes the file, which may hold a secret
        super().__init__("\n".join(problems))
        self.problems = problems


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CronTrigger(_Model):
    cron: str = Field(description="crontab expression, e.g. '0 6 * * 1' (Mondays at 06:00)")
    timezone: str = Field("UTC", description="IANA time zone the cron expression is read in, e.g. Europe/Berlin; "
                                             "daylight-saving changes fire once")
    jitter: timedelta | None = Field(None, description="delays each firing by a random time up to this much, e.g. "
                                                       "30s")

    @field_validator("cron")
    @classmethod
    def _cron(cls, value: str) -> str:
        parse_cron(value)
        return value

    @field_validator("timezone")
    @classmethod
    def _tz(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"{value!r} is not a time zone (an IANA name such as 'Europe/Berlin' or 'UTC')") \
                from None
        return value

    @field_validator("jitter", mode="before")
    @classmethod
    def _jitter(cls, value: Any) -> Any:
        return None if value is None else parse_duration(value)

    def describe(self) -> str:
        jitter = f" +0\N{EN DASH}{format_duration(self.jitter)}" if self.jitter else ""  # jitter only delays
        return f"cron '{self.cron}' {self.timezone}{jitter}"


class IntervalTrigger(_Model):
    every: timedelta = Field(description="interval, e.g. 30m, 1h, 2s, counted from a fixed origin so every "
                                         "replica sees the same firings")
    jitter: timedelta | None = Field(None, description="delays each firing by a random time up to this much, "
                                                       "shorter than the interval")

    @field_validator("every", "jitter", mode="before")
    @classmethod
    def _durations(cls, value: Any) -> Any:
        return None if value is None else parse_duration(value)

    @model_validator(mode="after")
    def _sane(self) -> IntervalTrigger:
        if self.every <= timedelta(0):
            raise ValueError("every must be longer than zero")
        if self.jitter is not None and self.jitter >= self.every:
            raise ValueError(f"jitter ({self.jitter}) must be shorter than the interval ({self.every})")
        return self

    def describe(self) -> str:
        jitter = f" +0\N{EN DASH}{format_duration(self.jitter)}" if self.jitter else ""  # jitter only delays
        return f"every {format_duration(self.every)}{jitter}"


def _trigger_tag(value: Any) -> str:
    if isinstance(value, dict):
        return "cron" if "cron" in value else "every"
    return "cron" if isinstance(value, CronTrigger) else "every"


Trigger = Annotated[Annotated[CronTrigger, Tag("cron")] | Annotated[IntervalTrigger, Tag("every")],
                    Discriminator(_trigger_tag)]


class ExcludeSetting(_Model):
    """One ``health.exclude`` span: ``{start: 2026-12-24, end: 2026-12-27, reason: holidays}``. A date
    is midnight UTC; a time without a zone is UTC."""

    start: datetime = Field(description="when the span begins")
    end: datetime = Field(description="when it ends (after start)")
    reason: str | None = Field(None, description="why, for whoever reads the schedules (planned maintenance, "
                                                 "holidays)")

    @field_validator("start", "end", mode="before")
    @classmethod
    def _moment(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                value = datetime.fromisoformat(value.strip())
            except ValueError:
                raise ValueError(f"{shortened(value)} is not a date or a time (e.g. 2026-12-24 or "
                                 f"2026-12-24T02:00:00Z)") from None
        if isinstance(value, date) and not isinstance(value, datetime):
            return datetime(value.year, value.month, value.day, tzinfo=UTC)
        if isinstance(value, datetime) and value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value

    @field_validator("start", "end")
    @classmethod
    def _aware(cls, value: datetime) -> datetime:
        return value if value.tzinfo else value.replace(tzinfo=UTC)

    @model_validator(mode="after")
    def _ordered(self) -> ExcludeSetting:
        if self.end <= self.start:
            raise ValueError(f"end ({self.end:%Y-%m-%d %H:%M}) must be after start ({self.start:%Y-%m-%d %H:%M})")
        return self


class HealthSettings(_Model):
    """``health:`` of a schedule or of ``defaults``; a schedule changes only the keys it names."""

    enabled: bool = Field(True, description="measure the collection's health and judge it against earlier runs")
    time_field: str | None = Field(None, description="date field recording when a document arrived "
                                                     "(default: the ObjectId time of _id)")
    cadence: timedelta | None = Field(None, description="new documents are expected at least this often")
    window: int = Field(30, ge=3, le=365, description="earlier runs a baseline is learned from")
    min_history: int = Field(7, ge=3, description="earlier runs before a baseline may raise a finding")
    sensitivity: float = Field(3.0, gt=0, description="robust z-score beyond which a value is anomalous")
    seasonality: Literal["auto", "off"] = Field("auto", description="auto: compare a weekday with the same "
                                                                     "weekday once the window holds three of them")
    field_metrics: bool = Field(False, description="export per-field null shares as metrics")
    backfill: bool = Field(True, description="the first run builds the volume and freshness baselines from the "
                                             "time field's history")
    exclude: list[ExcludeSetting] = Field(default_factory=list, description="spans (planned maintenance, holidays) "
                                                                            "that neither raise anomalies nor enter "
                                                                            "a baseline")

    @field_validator("cadence", mode="before")
    @classmethod
    def _cadence(cls, value: Any) -> Any:
        return None if value is None else parse_duration(value)

    def options(self) -> HealthOptions:
        return HealthOptions(enabled=self.enabled, time_field=self.time_field,
                             cadence_s=self.cadence.total_seconds() if self.cadence else None, window=self.window,
                             min_history=self.min_history, sensitivity=self.sensitivity,
                             seasonality=self.seasonality, field_metrics=self.field_metrics, backfill=self.backfill,
                             exclude=[ExcludedSpan(start=e.start, end=e.end, reason=e.reason) for e in self.exclude])


class ScopeSettings(_Model):
    """``scope:`` of a schedule or of ``defaults``: audit only recent documents; a schedule changes
    only the keys it names. ``full_every`` runs an audit of the whole collection on that cadence."""

    enabled: bool = Field(True, description="false: this schedule audits the whole collection whatever the "
                                            "defaults' scope")
    field: str | None = Field(None, description="date field recording when a document arrived "
                                                "(default: the ObjectId time of _id)")
    since: timedelta | None = Field(None, description="how far back the window reaches, e.g. 24h")
    full_every: timedelta | None = Field(None, description="an unscoped audit at least this often, e.g. 7d")

    @field_validator("since", "full_every", mode="before")
    @classmethod
    def _durations(cls, value: Any) -> Any:
        return None if value is None else parse_duration(value)

    @field_validator("since", "full_every")
    @classmethod
    def _positive(cls, value: timedelta | None) -> timedelta | None:
        if value is not None and value <= timedelta(0):
            raise ValueError("must be longer than zero (e.g. 24h)")
        return value

    @field_validator("field")
    @classmethod
    def _path(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"[^$.\x00][^.\x00]*(\.[^$.\x00][^.\x00]*)*", value):
            raise ValueError(f"{value!r} is not a field path (dot notation, no '$')")
        return value

    def for_run(self, last_full: datetime | None, now: datetime) -> tuple[ScopeOptions | None, str | None]:
        """This run's window (None: the whole collection), and a note saying why a scoped schedule
        audits everything this time."""
        if not self.enabled or self.since is None:
            return None, None
        if self.full_every is not None:
            if last_full is None:
                return None, (f"a full audit (scope.full_every {format_duration(self.full_every)}): no full audit of "
                              f"this collection is stored yet")
            if now - last_full >= self.full_every:
                return None, (f"a full audit (scope.full_every {format_duration(self.full_every)}): the last was "
                              f"{format_duration(now - last_full)} ago")
        return ScopeOptions(field=self.field, since_s=self.since.total_seconds()), None


class AuditSettings(_Model):
    """What an audit does; ``defaults`` sets them for every schedule, a schedule overrides them."""

    planner: PlannerKind = Field("heuristic", description="heuristic (rules, no model), llm or hybrid (rules "
                                                          "first, then the model)")
    llm: LLMOptions | None = Field(None, description="model, endpoint, key, budgets, evaluators; only the keys "
                                                     "given override the ARGUS_LLM_* settings")
    sample_size: int = Field(1000, ge=1, le=10_000, description="documents $sample reads to profile the fields")
    max_iterations: int = Field(200, ge=1, description="planner steps before the run ends partial")
    time_budget: timedelta = Field(timedelta(minutes=5), description="wall-clock budget of one run; every query "
                                                                     "and model call waits at most for what is left")
    max_time_ms: int = Field(10_000, ge=1, description="server time limit (maxTimeMS) of every query")
    ru_budget: float | None = Field(None, gt=0, description="Cosmos DB request units per run (partial past it)")
    fail_on: Severity = Field(Severity.HIGH, description="argus run exits 1 when a finding is at least this severe")
    privacy: PrivacyMode = Field("shapes", description="what Argus writes about document values: strict (none), "
                                                       "shapes or full")
    failing_documents: int = Field(FAILING_DEFAULT, ge=0, le=FAILING_MAX,
                                   description="_ids of failing documents each finding keeps; 0: none")
    enabled: bool = Field(True, description="false: the daemon does not schedule it (argus run still can)")
    run_at_start: bool = Field(False, description="also run once when the daemon starts")
    labels: dict[str, str] = Field(default_factory=dict, description="free labels, matched by alert routes")
    health: HealthSettings | None = Field(None, description="collection health baselines (volume, freshness, "
                                                            "drift); only the keys given override the defaults")
    contract: dict[str, Any] | str | None = Field(None, description="a data contract: a file (relative to the "
                                                                   "schedules file) or the rules inline")
    scope: ScopeSettings | None = Field(None, description="audit only recent documents (field, since), with a full "
                                                          "audit every full_every; only the keys given override")
    metrics: list[MetricSpec] | None = Field(None, description="metrics of your own: each a name, a read-only "
                                             "pipeline and between, warn/fail or anomaly (docs/custom-metrics.md)")
    segments: SegmentOptions | None = Field(None, description="{by: tenant, top: 50}: break findings down, and judge "
                                                              "volume, freshness and null rates, per segment")

    @field_validator("time_budget", mode="before")
    @classmethod
    def _budget(cls, value: Any) -> Any:
        return parse_duration(value)

    def audit_options(self) -> AuditOptions:
        return AuditOptions(sample_size=self.sample_size, max_iterations=self.max_iterations,
                            time_budget_s=self.time_budget.total_seconds(), max_time_ms=self.max_time_ms,
                            privacy=self.privacy, fail_on=self.fail_on, ru_budget=self.ru_budget,
                            failing_documents=self.failing_documents, segments=self.segments,
                            health=(self.health or HealthSettings()).options(), metrics=tuple(self.metrics or ()))


class Connection(_Model):
    uri_env: str | None = Field(None, description="environment variable holding the MongoDB URI")
    uri_file: Path | None = Field(None, description="file holding the MongoDB URI (e.g. a mounted secret)")
    files: dict[str, Path] | None = Field(None, description="collection name -> file: mongoexport JSON or "
                                                          "mongodump BSON (or its folder), gzipped or not")

    @model_validator(mode="after")
    def _one_source(self) -> Connection:
        given = [k for k in ("uri_env", "uri_file", "files") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of uri_env, uri_file or files (a URI is never written inline)")
        return self

    def uri(self, where: str = "") -> SecretStr:
        """The MongoDB URI, read now and checked (raises ArgusError with a clear message when it
        cannot be; a malformed URI is never echoed). ``where`` names the connection in messages."""
        where = f"{where} " if where else ""
        if self.uri_env is not None:
            value = os.environ.get(self.uri_env)
            if not value:
                raise ArgusError(f"{where}environment variable {self.uri_env} is not set")
            return SecretStr(check_mongodb_uri(value, f"{where}uri_env {self.uri_env}"))
        if self.uri_file is not None:
            # The path is not named: where secrets are kept is for the file's readers, not for /status.
            try:
                text = self.uri_file.read_text()
            except OSError as exc:
                raise ArgusError(f"{where}uri_file: cannot read the file it names: {exc.strerror}") from None
            return SecretStr(check_mongodb_uri(text, f"{where}uri_file"))
        raise ArgusError("this connection reads files, not a URI")


class Schedule(_Model):
    name: str = Field(pattern=r"^[A-Za-z0-9_.:-]{1,80}$", description="letters, digits, _ . : -")
    connection: str = Field(description="a name under connections")
    database: str = Field(description="the database to audit (for a files connection: any name, shown in reports)")
    collection: str = Field(description="the collection to audit (for a files connection: one of its files' names)")
    trigger: Trigger | None = Field(None, description="when it runs: {cron: ..., timezone: ...} or {every: ...} "
                                                      "[default: defaults.trigger]")
    planner: PlannerKind | None = None
    llm: LLMOptions | None = None
    sample_size: int | None = Field(None, ge=1, le=10_000)
    max_iterations: int | None = Field(None, ge=1)
    time_budget: timedelta | None = None
    max_time_ms: int | None = Field(None, ge=1)
    ru_budget: float | None = Field(None, gt=0)
    fail_on: Severity | None = None
    privacy: PrivacyMode | None = None
    failing_documents: int | None = Field(None, ge=0, le=FAILING_MAX)
    enabled: bool | None = None
    run_at_start: bool | None = None
    labels: dict[str, str] | None = None
    health: HealthSettings | None = None
    contract: dict[str, Any] | str | None = None
    scope: ScopeSettings | None = None
    metrics: list[MetricSpec] | None = None
    segments: SegmentOptions | None = None

    @field_validator("time_budget", mode="before")
    @classmethod
    def _budget(cls, value: Any) -> Any:
        return None if value is None else parse_duration(value)

    @field_validator("trigger", mode="before")
    @classmethod
    def _trigger_kind(cls, value: Any) -> Any:
        if isinstance(value, dict) and "cron" not in value and "every" not in value:
            raise ValueError("a trigger needs 'cron' (with optional 'timezone') or 'every' (e.g. every: 30m)")
        return value


class Defaults(AuditSettings):
    trigger: Trigger | None = Field(None, description="the trigger of every schedule that names none")


class _File(_Model):
    version: Literal[1] = Field(1, description="the file format's version")
    connections: dict[str, Connection] = Field(default_factory=dict, description="named databases to audit")
    defaults: Defaults = Field(default_factory=Defaults, description="audit settings of every schedule; a schedule "
                                                                     "overrides any of them")
    schedules: list[Schedule] = Field(default_factory=list, description="what to audit and when; required, "
                                                                        "'schedules: []' for none")
    alerts: AlertsConfig = Field(default_factory=AlertsConfig, description="what is worth a page, and where it "
                                                                           "goes")

    @model_validator(mode="after")
    def _references(self) -> _File:
        problems = []
        seen: set[str] = set()
        for i, s in enumerate(self.schedules):
            if s.name in seen:
                problems.append((i, "name", f"schedule name {s.name!r} is used twice"))
            seen.add(s.name)
            if s.connection not in self.connections:
                known = ", ".join(sorted(self.connections)) or "none defined"
                problems.append((i, "connection", f"{s.connection!r} is not a connection (known: {known})"))
            if s.trigger is None and self.defaults.trigger is None:
                problems.append((i, "trigger", "no trigger here and none in defaults"))
            scope = {**_given(self.defaults.scope), **_given(s.scope)}
            if scope and scope.get("enabled", True) and scope.get("since") is None:
                problems.append((i, "scope", "a scope needs 'since' (how far back the window reaches, e.g. "
                                             "since: 24h), here or in defaults"))
            conn = self.connections.get(s.connection)
            if conn is not None and conn.files is not None and s.collection not in conn.files:
                problems.append((i, "collection", f"connection {s.connection!r} has no file for {s.collection!r} "
                                                  f"(it has: {', '.join(sorted(conn.files))})"))
        if problems:
            raise _ReferenceErrors(problems)
        return self


class _ReferenceErrors(ValueError):
    def __init__(self, problems: list[tuple[int, str, str]]) -> None:
        super().__init__("; ".join(p[2] for p in problems))
        self.problems = problems


@dataclass(frozen=True)
class ResolvedSchedule:
    """A schedule with the defaults applied: what the daemon runs."""

    name: str
    connection: str
    database: str
    collection: str
    trigger: Trigger
    settings: AuditSettings
    contract: Contract | None = None

    @property
    def enabled(self) -> bool:
        return self.settings.enabled


@dataclass(frozen=True)
class ScheduleSet:
    path: Path
    connections: dict[str, Connection]
    schedules: dict[str, ResolvedSchedule]
    digest: str
    alerts: AlertsConfig = field(default_factory=AlertsConfig)
    connection_lines: dict[str, int] = field(default_factory=dict)  # name -> line of its definition
    watched: tuple[Path, ...] = ()  # contract files the schedules read: an edit to one is a reload
    version: FileVersion | None = None  # the file's (inode, mtime, size) when it was read

    def connection_where(self, name: str) -> str:
        """``schedules.yaml:12 connections.prod``: where a connection is defined, for messages."""
        line = self.connection_lines.get(name)
        return f"{self.path.name}:{line} connections.{name}" if line else f"{self.path.name} connections.{name}"


def _resolve(file: _File, s: Schedule) -> ResolvedSchedule:
    base = file.defaults.model_dump(exclude={"trigger", "llm", "health", "scope"})
    overrides = s.model_dump(exclude={"name", "connection", "database", "collection", "trigger", "llm", "health",
                                      "scope"}, exclude_none=True)
    llm = {**_given(file.defaults.llm), **_given(s.llm)}  # key by key: a schedule changes only what it names
    health = {**_given(file.defaults.health), **_given(s.health)}
    scope = {**_given(file.defaults.scope), **_given(s.scope)}
    settings = AuditSettings.model_validate({**base, **overrides, "llm": llm or None, "health": health or None,
                                             "scope": scope or None})
    trigger = s.trigger or file.defaults.trigger
    assert trigger is not None  # validated in _File._references
    return ResolvedSchedule(s.name, s.connection, s.database, s.collection, trigger, settings)


def _given(options: LLMOptions | HealthSettings | ScopeSettings | None) -> dict[str, Any]:
    return {} if options is None else options.model_dump(include=options.model_fields_set)


# --- loading with line numbers -----------------------------------------------------------------

def _clean_loc(loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """Drop the union tag pydantic inserts after ``trigger`` (``trigger.cron.cron`` → ``trigger.cron``)."""
    out: list[Any] = []
    for i, part in enumerate(loc):
        if i > 0 and loc[i - 1] == "trigger" and part in ("cron", "every") and i + 1 < len(loc):
            continue
        if isinstance(part, str) and part.startswith("function-"):
            continue
        out.append(part)
    return tuple(out)


def _allowed_keys(loc: tuple[Any, ...]) -> list[str]:
    """Keys allowed where ``loc`` (an unknown key) was found."""
    parent = [p for p in loc[:-1] if not isinstance(p, int)]
    if not parent:
        return ["version", "connections", "defaults", "schedules", "alerts"]
    if parent[-1] == "trigger":
        return ["cron", "timezone", "every", "jitter"]
    if parent[-1] == "llm":
        return list(LLMOptions.model_fields)
    if parent[-1] == "health":
        return list(HealthSettings.model_fields)
    if parent[-1] == "exclude":
        return list(ExcludeSetting.model_fields)
    if parent[-1] == "scope":
        return list(ScopeSettings.model_fields)
    if parent[-1] == "metrics":
        return list(MetricSpec.model_fields)
    if parent[-1] in ("warn", "fail"):
        return list(Bound.model_fields)
    if parent[-1] == "segments":
        return list(SegmentOptions.model_fields)
    if parent[0] == "connections":
        return list(Connection.model_fields)
    if parent[:2] == ["alerts", "channels"]:
        return list(Channel.model_fields)
    if parent[:2] == ["alerts", "routes"]:
        return list(AlertRoute.model_fields)
    if parent[:2] == ["alerts", "incidents"]:
        return list(IncidentsConfig.model_fields)
    if parent == ["alerts"]:
        return list(AlertsConfig.model_fields)
    if parent == ["defaults"]:
        return list(Defaults.model_fields)
    if parent == ["schedules"]:
        return list(Schedule.model_fields)
    return []


def _message(err: Any, loc: tuple[Any, ...]) -> str:
    kind, msg = err["type"], err["msg"]
    if kind == "extra_forbidden":
        allowed = _allowed_keys(loc)
        return "unknown key" + nearest(str(loc[-1]), allowed)
    if kind == "missing":
        return "required key is missing"
    return str(msg).removeprefix("Value error, ")


def load_schedules(path: str | Path) -> ScheduleSet:
    """Parse and validate a schedules file; raise ``ScheduleError`` listing every problem.

    What is returned is what the file held when it was read: a file replaced while it was being
    parsed is read again (a few times, then it is an error), so a slow parse never yields contents
    the disk no longer has."""
    file = Path(path)
    for _ in range(_READ_ATTEMPTS):
        raw, version = _read(file)
        loaded = _load(file, raw, version)
        if file_version(file) == version:
            return loaded
    raise ScheduleError([f"{file}:1: the file changed while it was read, {_READ_ATTEMPTS} times in a row; "
                         "write it in one step (to a temporary file, then rename it over this one)"])


FileVersion = tuple[int, int, int]
MAX_FILE_BYTES = 1024 * 1024  # a thousand schedules take about 100 KB
_READ_ATTEMPTS = 3


def file_version(path: Path) -> FileVersion | None:
    """What tells one state of the file from the next: its inode (an editor's rename-over replaces
    it), modification time and size; None when it cannot be read."""
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def _read(file: Path) -> tuple[bytes, FileVersion]:
    """The file's bytes and the version they are of; a file over ``MAX_FILE_BYTES`` is refused unread."""
    try:
        with file.open("rb") as handle:
            st = os.fstat(handle.fileno())
            raw = b"" if st.st_size > MAX_FILE_BYTES else handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ScheduleError([f"{file}: cannot read: {exc.strerror}"]) from None
    if st.st_size > MAX_FILE_BYTES or len(raw) > MAX_FILE_BYTES:
        raise ScheduleError([f"{file}:1: the file is {max(st.st_size, len(raw)):,} bytes, over the "
                             f"{MAX_FILE_BYTES // 1024 // 1024} MiB a schedules file may hold; refused unread"])
    return raw, (st.st_ino, st.st_mtime_ns, st.st_size)


def _load(file: Path, raw: bytes, version: FileVersion) -> ScheduleSet:
    import hashlib

    try:
        document = read_yaml(file, raw)
    except TooManyValues as exc:
        raise ScheduleError([f"{file}:{exc.line}: the file holds more than {MAX_NODES:,} values (about "
                             f"{MAX_NODES // 14:,} schedules), the most a schedules file may hold; refused"]) from None
    except YamlError as exc:
        raise ScheduleError(exc.problems) from None
    text, data, lines = document.text, document.data, document.lines
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ScheduleError([f"{file}:1: expected a mapping with connections, defaults and schedules"])
    if "schedules" not in data:
        last = max(text.count("\n"), 1)
        raise ScheduleError([f"{file}:{last}: no 'schedules:' key (is the file empty or cut off?); "
                             f"to remove every schedule, write 'schedules: []'"])
    try:
        parsed = _File.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            if isinstance(err.get("ctx", {}).get("error"), _ReferenceErrors):
                for index, key, message in err["ctx"]["error"].problems:
                    loc = ("schedules", index, key)
                    problems.append(f"{file}:{line_for(loc, lines)} {where(loc)}: {message}")
                continue
            loc = _clean_loc(tuple(err["loc"]))
            line = line_for(loc, lines, key=err["type"] == "extra_forbidden")
            problems.append(f"{file}:{line} {where(loc)}: {_message(err, loc)}")
        raise ScheduleError(sorted(set(problems), key=problem_order)) from None
    twice = duplicate_metrics(file, lines, [(("defaults",), parsed.defaults.metrics)] + [
        (("schedules", i), s.metrics) for i, s in enumerate(parsed.schedules)])
    if twice:
        raise ScheduleError(twice)
    base = file.resolve().parent
    connections = {name: _absolute(c, base) for name, c in parsed.connections.items()}
    contracts = _Contracts(file, base, lines)
    schedules = {s.name: replace(_resolve(parsed, s), contract=contracts.of(parsed, i, s))
                 for i, s in enumerate(parsed.schedules)}
    if contracts.problems:
        raise ScheduleError(sorted(set(contracts.problems), key=problem_order))
    alerts = parsed.alerts.model_copy(update={"channels": {
        name: _absolute_secrets(c, base) for name, c in parsed.alerts.channels.items()}})
    digest = hashlib.sha256(text.encode())
    for path in sorted(contracts.files):  # a contract file's edit is an edit of the schedules
        digest.update(contract_digest(path).encode())
    return ScheduleSet(path=file, connections=connections, schedules=schedules, digest=digest.hexdigest(),
                       alerts=alerts, connection_lines={name: lines[("connections", name)] for name in connections
                                                        if ("connections", name) in lines},
                       watched=tuple(sorted(contracts.files)), version=version)


class _Contracts:
    """Each schedule's contract (its own, else the defaults'), read once per file and collection."""

    def __init__(self, file: Path, base: Path, lines: Lines) -> None:
        self.file, self.base, self.lines = file, base, lines
        self.files: set[Path] = set()
        self.problems: list[str] = []
        self._read: dict[tuple[str, str], Contract | None] = {}

    def of(self, parsed: _File, index: int, schedule: Schedule) -> Contract | None:
        raw, loc = (schedule.contract, ("schedules", index, "contract")) if schedule.contract is not None \
            else (parsed.defaults.contract, ("defaults", "contract"))
        if raw is None:
            return None
        key = (str(raw) if isinstance(raw, str) else f"{loc}", schedule.collection)
        if key not in self._read:
            self._read[key] = self._load(raw, loc, schedule.collection)
        return self._read[key]

    def _load(self, raw: dict[str, Any] | str, loc: tuple[Any, ...], collection: str) -> Contract | None:
        try:
            if isinstance(raw, dict):  # its rules are named by their lines in the schedules file
                return parse_contract(raw, file=self.file, lines=self.lines, base=loc, collection=collection,
                                      source=self.file.name)
            path = Path(raw) if Path(raw).is_absolute() else self.base / raw
            self.files.add(path)
            if not path.is_file():
                self.problems.append(f"{self.file}:{line_for(loc, self.lines)} {where(loc)}: no contract file "
                                     f"{raw!r} (relative to {self.file.name})")
                return None
            return load_contract(path, shown_as=raw, collection=collection)
        except ContractError as exc:
            self.problems.extend(exc.problems)
            return None


def _absolute(conn: Connection, base: Path) -> Connection:
    """Relative file paths are relative to the schedules file, wherever the daemon starts."""
    update: dict[str, Any] = {}
    if conn.files is not None:
        update["files"] = {k: (v if v.is_absolute() else base / v) for k, v in conn.files.items()}
    if conn.uri_file is not None and not conn.uri_file.is_absolute():
        update["uri_file"] = base / conn.uri_file
    return conn.model_copy(update=update)


def _absolute_secrets(channel: Channel, base: Path) -> Channel:
    update = {key: base / path for key in ("url_file", "secret_file")
              if (path := getattr(channel, key)) is not None and not path.is_absolute()}
    return channel.model_copy(update=update)
