"""Fixtures for incident tests: a local receiver, channels pointing at it, and a store with
alerts per incident (the default) on a manual clock."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest

from argus.agent.clock import ManualClock
from argus.config.alerts import AlertsConfig
from argus.daemon.incidents.chores import queue_due
from argus.daemon.metrics import Metrics
from argus.daemon.store import PostgresStore
from argus.daemon.store.incidents import IncidentBook
from tests.daemon.alerts.conftest import Alerting, channels
from tests.daemon.alerts.receiver import Receiver
from tests.daemon.store.reports import T0

HMAC_KEY = "test-hmac-key"


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver().start()
    yield r
    r.stop()


@pytest.fixture(autouse=True)
def _secrets(monkeypatch: pytest.MonkeyPatch, receiver: Receiver) -> None:
    monkeypatch.setenv("TEST_SLACK_URL", f"{receiver.url}/slack/T000/B000/XXXX")
    monkeypatch.setenv("TEST_HOOK_URL", f"{receiver.url}/hook")
    monkeypatch.setenv("TEST_HOOK_KEY", HMAC_KEY)


@dataclass
class Incidents(Alerting):
    """A store with alerts per incident: store runs, queue reminders, deliver."""

    @property
    def book(self) -> IncidentBook:
        return IncidentBook(self.store)

    def queue(self) -> int:
        return queue_due(self.store, self.clock.now(), self.policy)


def incident_config(receiver: Receiver, **over: Any) -> AlertsConfig:
    return AlertsConfig.model_validate({"base_url": "https://argus.example.com/", "min_severity": "low",
                                        "channels": channels(receiver), **over})


@pytest.fixture
def incidents(store: PostgresStore, receiver: Receiver) -> Incidents:
    return Incidents(store, incident_config(receiver), ManualClock(T0 + timedelta(hours=1)), Metrics(),
                     {"orders-hourly": {"team": "shop", "tier": "1"}})
