"""The ``alerts:`` section of ``schedules.yaml``: channels, routes and what is worth a page.

```yaml
alerts:
  base_url: https://argus.example.com   # links to runs and incidents in alert texts (optional)
  per: incident                         # or finding: one alert per new finding, as before incidents
  min_severity: critical                # incidents (or new findings) at or above this alert
  new_persistent: true                  # a pattern seen in a second run for the first time
  failed_runs: 3                        # this many failed runs in a row (0: never)
  channels:
    ops-slack: {type: slack, url_env: ARGUS_SLACK_WEBHOOK_URL}
    hook:      {type: webhook, url_file: /run/secrets/hook-url, secret_env: ARGUS_HOOK_SECRET}
    am:        {type: alertmanager, url: http://alertmanager:9093}
  routes:                               # omitted: every alert to every channel
    - match: {team: crm}                # schedule labels that must all be equal
      channels: [ops-slack]
      min_severity: high
  incidents:                            # see docs/incidents.md
    group_by: collection                # collection, category or pattern
    resolve_after: 2                    # runs in which every finding of an incident stayed away
    reopen_within: 24h                  # a finding back this soon after resolution reopens its incident
    remind_after: 24h                   # an incident left open (not acknowledged) this long is sent again
    min_severity: low                   # findings below this join no incident
```

Webhook URLs are secrets: Slack and webhook channels take them from the environment or a file,
read at send time, never from this file and never logged.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

from argus.agent.durations import parse_duration
from argus.agent.errors import ArgusError
from argus.agent.findings import Severity
from argus.agent.secrets import SECRETS

__all__ = ["AlertRoute", "AlertUnit", "AlertsConfig", "Channel", "ChannelType", "Grouping", "IncidentsConfig"]

ChannelType = Literal["slack", "webhook", "alertmanager"]
AlertUnit = Literal["incident", "finding"]
Grouping = Literal["collection", "category", "pattern"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Channel(_Model):
    type: ChannelType = Field(description="slack (an incoming webhook), webhook (a signed JSON POST) or "
                                          "alertmanager (its v2 API)")
    url: str | None = Field(None, description="only for alertmanager: its base URL, which is no secret")
    url_env: str | None = Field(None, description="environment variable holding the URL")
    url_file: Path | None = Field(None, description="file holding the URL (e.g. a mounted secret)")
    secret_env: str | None = Field(None, description="webhook: environment variable with the HMAC key")
    secret_file: Path | None = Field(None, description="webhook: file with the HMAC key")
    timeout_s: float = Field(10.0, gt=0, le=120, description="seconds for one delivery attempt")
    ends_after_s: float = Field(86_400.0, gt=0, description="alertmanager: endsAt is startsAt plus this")

    @model_validator(mode="after")
    def _one_url(self) -> Channel:
        given = [k for k in ("url", "url_env", "url_file") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of url_env, url_file" + (" or url" if self.type == "alertmanager"
                                                                         else ""))
        if self.url is not None and self.type != "alertmanager":
            raise ValueError(f"a {self.type} URL is a secret: give url_env or url_file, not url")
        if (self.secret_env or self.secret_file) and self.type != "webhook":
            raise ValueError("secret_env and secret_file sign webhook payloads; other channels take none")
        if self.secret_env and self.secret_file:
            raise ValueError("give secret_env or secret_file, not both")
        return self

    def resolve_url(self) -> SecretStr:
        """The URL, read now (a rotated secret file is picked up); raises ``ArgusError``."""
        return _read(self.url, self.url_env, self.url_file, "URL", "url_file")

    def resolve_secret(self) -> bytes | None:
        if self.secret_env is None and self.secret_file is None:
            return None
        return _read(None, self.secret_env, self.secret_file, "HMAC key", "secret_file").get_secret_value().encode()


def _read(inline: str | None, env: str | None, file: Path | None, what: str, key: str) -> SecretStr:
    if inline is not None:
        return SecretStr(inline)
    if env is not None:
        value = os.environ.get(env, "").strip()
        if not value:
            raise ArgusError(f"environment variable {env} (the {what}) is not set")
        SECRETS.register(value)
        return SecretStr(value)
    assert file is not None
    try:  # the path is not named: where secrets are kept is for the schedules file's readers
        value = file.read_text().strip()
    except OSError as exc:
        raise ArgusError(f"cannot read the {what} from the file {key} names: {exc.strerror}") from None
    if not value:
        raise ArgusError(f"the file {key} names (the {what}) is empty")
    SECRETS.register(value)
    return SecretStr(value)


class AlertRoute(_Model):
    match: dict[str, str] = Field(default_factory=dict, description="schedule labels that must all be equal")
    channels: list[str] = Field(min_length=1, description="names under alerts.channels")
    min_severity: Severity | None = Field(None, description="default: alerts.min_severity")
    new_persistent: bool | None = Field(None, description="default: alerts.new_persistent")
    failed_runs: bool = Field(True, description="send failed-run alerts here (when alerts.failed_runs > 0)")

    def matches(self, labels: dict[str, str]) -> bool:
        return all(labels.get(k) == v for k, v in self.match.items())


def _duration(value: Any) -> timedelta:
    return parse_duration(value)


class IncidentsConfig(_Model):
    """``alerts.incidents``: how findings are grouped into incidents and when an incident ends."""

    group_by: Grouping = Field("collection", description="findings of one collection share an incident; "
                                                         "category: one per category; pattern: one per pattern")
    resolve_after: int = Field(2, ge=1, le=1000, description="complete runs in which every finding of an "
                                                             "incident stayed resolved before it resolves")
    reopen_within: timedelta = Field(timedelta(hours=24), description="a finding back this soon after its "
                                                                      "incident resolved reopens it")
    remind_after: timedelta | None = Field(timedelta(hours=24), description="an incident still open (not "
                                                                             "acknowledged) this long is sent "
                                                                             "again, and again after as long; "
                                                                             "null: never")
    min_severity: Severity = Field(Severity.LOW, description="findings below this join no incident")
    notify_joined: bool = Field(True, description="a finding new to an open incident sends an update (those of "
                                                  "one run together, at most one per run); false: it joins "
                                                  "silently and only `argus incident show` lists it")

    @field_validator("reopen_within", "remind_after", mode="before")
    @classmethod
    def _durations(cls, value: Any) -> Any:
        return None if value is None else _duration(value)

    @field_validator("remind_after")
    @classmethod
    def _positive(cls, value: timedelta | None) -> timedelta | None:
        if value is not None and value.total_seconds() < 60:
            raise ValueError("remind at most once a minute (e.g. 4h), or null for never")
        return value


class AlertsConfig(_Model):
    base_url: str | None = Field(None, description="Argus' external URL; alerts link to {base_url}/runs/{id} "
                                                   "and {base_url}/incidents/{id}")
    per: AlertUnit = Field("incident", description="incident: one notification when an incident opens, "
                                                   "escalates, reopens, resolves or waits unacknowledged; finding: "
                                                   "one per new finding and new persistent pattern")
    min_severity: Severity = Field(Severity.CRITICAL, description="incidents at or above this alert (per: "
                                                                  "finding: new findings)")
    new_persistent: bool = Field(True, description="per: finding: alert when a pattern is seen in a second run "
                                                   "for the first time")
    failed_runs: int = Field(0, ge=0, description="alert when this many runs of a schedule in a row failed")
    channels: dict[str, Channel] = Field(default_factory=dict, description="named destinations")
    routes: list[AlertRoute] | None = Field(None, description="omitted: every alert goes to every channel")
    incidents: IncidentsConfig = Field(default_factory=IncidentsConfig, description="how findings are grouped "
                                                                                 "into incidents and when one ends "
                                                                                 "(docs/incidents.md)")

    @model_validator(mode="after")
    def _known_channels(self) -> AlertsConfig:
        for route in self.routes or []:
            unknown = [c for c in route.channels if c not in self.channels]
            if unknown:
                known = ", ".join(sorted(self.channels)) or "none defined"
                raise ValueError(f"route names unknown channel {unknown[0]!r} (known: {known})")
        return self

    def effective_routes(self) -> list[AlertRoute]:
        if self.routes is not None:
            return self.routes
        return [AlertRoute(channels=sorted(self.channels))] if self.channels else []
