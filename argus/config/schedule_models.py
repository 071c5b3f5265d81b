"""The keys of ``schedules.yaml`` as pydantic models: connections, triggers, audit settings,
schedules and the file itself, each key with the description the generated reference shows.

A model checks what one key can check alone, and ``ScheduleFile`` what crosses keys (a schedule
naming a connection that exists); ``schedules`` reads the file and turns errors into messages.
"""

from __future__ import annotations

import os
import re
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
    field_validator,
    model_validator,
)

from argus.agent.custom_metrics.models import MetricSpec
from argus.agent.durations import format_duration, parse_duration, shortened
from argus.agent.errors import ArgusError
from argus.agent.failing_bounds import FAILING_DEFAULT, FAILING_MAX
from argus.agent.findings import Severity
from argus.agent.health.models import ExcludedSpan, HealthOptions
from argus.agent.llm.options import LLMOptions, PlannerKind
from argus.agent.options import AuditOptions, PrivacyMode, ScopeOptions
from argus.agent.segments.models import SegmentOptions
from argus.config.alerts import AlertsConfig
from argus.config.cron import parse_cron
from argus.config.settings import check_mongodb_uri

__all__ = ["AuditSettings", "Connection", "CronTrigger", "Defaults", "ExcludeSetting", "HealthSettings",
           "IntervalTrigger", "ReferenceErrors", "Schedule", "ScheduleFile", "ScopeSettings", "Trigger", "given_keys"]


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


class ScheduleFile(_Model):
    version: Literal[1] = Field(1, description="the file format's version")
    connections: dict[str, Connection] = Field(default_factory=dict, description="named databases to audit")
    defaults: Defaults = Field(default_factory=Defaults, description="audit settings of every schedule; a schedule "
                                                                     "overrides any of them")
    schedules: list[Schedule] = Field(default_factory=list, description="what to audit and when; required, "
                                                                        "'schedules: []' for none")
    alerts: AlertsConfig = Field(default_factory=AlertsConfig, description="what is worth a page, and where it "
                                                                           "goes")

    @model_validator(mode="after")
    def _references(self) -> ScheduleFile:
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
            scope = {**given_keys(self.defaults.scope), **given_keys(s.scope)}
            if scope and scope.get("enabled", True) and scope.get("since") is None:
                problems.append((i, "scope", "a scope needs 'since' (how far back the window reaches, e.g. "
                                             "since: 24h), here or in defaults"))
            conn = self.connections.get(s.connection)
            if conn is not None and conn.files is not None and s.collection not in conn.files:
                problems.append((i, "collection", f"connection {s.connection!r} has no file for {s.collection!r} "
                                                  f"(it has: {', '.join(sorted(conn.files))})"))
        if problems:
            raise ReferenceErrors(problems)
        return self


class ReferenceErrors(ValueError):
    def __init__(self, problems: list[tuple[int, str, str]]) -> None:
        super().__init__("; ".join(p[2] for p in problems))
        self.problems = problems


def given_keys(options: LLMOptions | HealthSettings | ScopeSettings | None) -> dict[str, Any]:
    return {} if options is None else options.model_dump(include=options.model_fields_set)
