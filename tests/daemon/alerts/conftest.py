"""Fixtures for alert tests: a receiver, channels pointing at it, a sender on a manual clock."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import httpx
import pytest

from argus.agent.clock import ManualClock
from argus.config.alerts import AlertsConfig
from argus.daemon.alerts.policy import AlertPolicy
from argus.daemon.alerts.sender import AlertSender
from argus.daemon.metrics import Metrics
from argus.daemon.record import record_report
from argus.daemon.store import PostgresStore
from argus.daemon.store.outbox import AlertOutbox
from tests.daemon.alerts.receiver import Receiver
from tests.daemon.store.reports import T0

HMAC_KEY = "test-hmac-key"
SCHEDULE = "orders-hourly"


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver().start()
    yield r
    r.stop()


def channels(receiver: Receiver) -> dict[str, Any]:
    return {"slack": {"type": "slack", "url_env": "TEST_SLACK_URL"},
            "hook": {"type": "webhook", "url_env": "TEST_HOOK_URL", "secret_env": "TEST_HOOK_KEY"},
            "am": {"type": "alertmanager", "url": f"{receiver.url}/am"}}


@pytest.fixture(autouse=True)
def _secrets(monkeypatch: pytest.MonkeyPatch, receiver: Receiver) -> None:
    monkeypatch.setenv("TEST_SLACK_URL", f"{receiver.url}/slack/T000/B000/XXXX")
    monkeypatch.setenv("TEST_HOOK_URL", f"{receiver.url}/hook")
    monkeypatch.setenv("TEST_HOOK_KEY", HMAC_KEY)


@dataclass
class Alerting:
    """One store with alerts configured: store runs, deliver, look at the outbox."""

    store: PostgresStore
    config: AlertsConfig
    clock: ManualClock
    metrics: Metrics
    labels: dict[str, dict[str, str]]

    @property
    def policy(self) -> AlertPolicy:
        return AlertPolicy(self.config, self.labels)

    @property
    def outbox(self) -> AlertOutbox:
        return AlertOutbox(self.store)

    def save(self, report: Any) -> Any:
        return record_report(self.store, report.model_copy(update={"schedule": report.schedule or SCHEDULE}),
                                      alerts=self.policy, now=self.clock.now())

    def sender(self, client: httpx.Client | None = None) -> AlertSender:
        return AlertSender(outbox=self.outbox, config=lambda: self.config, client=client or httpx.Client(),
                           metrics=self.metrics, clock=self.clock, retry_base_s=5, retry_max_s=60)

    def deliver(self) -> int:
        return self.sender().deliver_due()

    def later(self, seconds: float) -> None:
        self.clock.advance(seconds)


@pytest.fixture
def alerting(store: PostgresStore, receiver: Receiver) -> Alerting:
    """Alerts per finding, as before incidents (``per: finding``); tests/daemon/incidents use the default."""
    config = AlertsConfig.model_validate({"base_url": "https://argus.example.com/", "per": "finding",
                                          "channels": channels(receiver)})
    return Alerting(store, config, ManualClock(T0 + timedelta(hours=1)), Metrics(),
                    {SCHEDULE: {"team": "shop", "tier": "1"}})
