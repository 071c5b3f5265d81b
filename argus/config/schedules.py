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
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from argus.agent.contracts.model import Contract
from argus.agent.custom_metrics.models import Bound, MetricSpec
from argus.agent.durations import format_duration, parse_duration
from argus.agent.errors import ArgusError
from argus.agent.llm.options import LLMOptions
from argus.agent.secrets import SECRETS
from argus.agent.segments.models import SegmentOptions
from argus.config.alerts import AlertRoute, AlertsConfig, Channel, IncidentsConfig
from argus.config.contracts import ContractError, contract_digest, load_contract, parse_contract
from argus.config.metrics import duplicate_metrics
from argus.config.schedule_models import (
    AuditSettings,
    Connection,
    Defaults,
    ExcludeSetting,
    HealthSettings,
    ReferenceErrors,
    Schedule,
    ScheduleFile,
    ScopeSettings,
    Trigger,
    given_keys,
)
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
    "FileVersion",
    "ResolvedSchedule",
    "ScheduleError",
    "ScheduleSet",
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


def _resolve(file: ScheduleFile, s: Schedule) -> ResolvedSchedule:
    base = file.defaults.model_dump(exclude={"trigger", "llm", "health", "scope"})
    overrides = s.model_dump(exclude={"name", "connection", "database", "collection", "trigger", "llm", "health",
                                      "scope"}, exclude_none=True)
    llm = {**given_keys(file.defaults.llm), **given_keys(s.llm)}  # key by key: a schedule changes only what it names
    health = {**given_keys(file.defaults.health), **given_keys(s.health)}
    scope = {**given_keys(file.defaults.scope), **given_keys(s.scope)}
    settings = AuditSettings.model_validate({**base, **overrides, "llm": llm or None, "health": health or None,
                                             "scope": scope or None})
    trigger = s.trigger or file.defaults.trigger
    assert trigger is not None  # validated in ScheduleFile._references
    return ResolvedSchedule(s.name, s.connection, s.database, s.collection, trigger, settings)


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
        parsed = ScheduleFile.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            if isinstance(err.get("ctx", {}).get("error"), ReferenceErrors):
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

    def of(self, parsed: ScheduleFile, index: int, schedule: Schedule) -> Contract | None:
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
            if not path.exists() and not path.is_symlink():
                self.problems.append(f"{self.file}:{line_for(loc, self.lines)} {where(loc)}: no contract file "
                                     f"{raw!r} (relative to {self.file.name})")
                return None
            if path.is_dir():
                self.problems.append(f"{self.file}:{line_for(loc, self.lines)} {where(loc)}: {raw!r} is a "
                                     f"directory, not a contract file (relative to {self.file.name})")
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
