"""Delivers the outbox: due alerts are leased, sent over ``httpx``, and marked delivered or
rescheduled with exponential backoff. State lives in the database, so retries survive restarts;
every retry carries the alert's dedup key. Errors are recorded by kind and status code only:
URLs are secrets and never reach a log or a stored error.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta

import httpx
import structlog

from argus.agent.clock import Clock, SystemClock
from argus.agent.errors import ArgusError
from argus.config.alerts import AlertsConfig
from argus.daemon.alerts.channels import build_request
from argus.daemon.metrics import Metrics
from argus.daemon.store.errors import StoreError
from argus.daemon.store.outbox import AlertOutbox, OutboxRow

__all__ = ["AlertSender", "backoff"]

log = structlog.get_logger("argus.alerts")


def backoff(attempts: int, *, base_s: float, max_s: float) -> float:
    """Seconds before attempt ``attempts + 1``: base, 2 base, 4 base, ... capped at ``max_s``."""
    return float(min(base_s * (2 ** min(attempts, 30)), max_s))


class AlertSender:
    def __init__(self, *, outbox: AlertOutbox, config: Callable[[], AlertsConfig], client: httpx.Client,
                 metrics: Metrics | None = None, clock: Clock | None = None, retry_base_s: float = 5.0,
                 retry_max_s: float = 600.0, wake: threading.Event | None = None) -> None:
        self.outbox = outbox
        self.config = config
        self.client = client
        self.metrics = metrics
        self.clock = clock or SystemClock()
        self.retry_base_s = retry_base_s
        self.retry_max_s = retry_max_s
        self.wake = wake if wake is not None else threading.Event()

    def deliver_due(self) -> int:
        """One pass over the due alerts; returns how many were delivered."""
        delivered = 0
        for row in self.outbox.lease_due(self.clock.now()):
            delivered += self._deliver(row)
        if self.metrics is not None:
            self.metrics.alerts_pending.set(self.outbox.pending())
        return delivered

    def _deliver(self, row: OutboxRow) -> int:
        bound = log.bind(channel=row.channel, kind=row.alert.kind, dedup_key=row.alert.dedup_key,
                         attempt=row.attempts + 1)
        channel = self.config().channels.get(row.channel)
        if channel is None:
            self.outbox.dropped(row.id, f"channel {row.channel!r} is no longer configured")
            bound.warning("alert_dropped", reason="channel_removed")
            return 0
        try:
            request = build_request(channel, row.alert, url=channel.resolve_url().get_secret_value(),
                                    secret=channel.resolve_secret(), now=self.clock.now())
            request.extensions["timeout"] = httpx.Timeout(channel.timeout_s).as_dict()
            response = self.client.send(request)
            error = None if response.is_success else f"HTTP {response.status_code}"
        except ArgusError as exc:
            error = str(exc)  # names the variable or file, never the secret
        except httpx.TimeoutException:
            error = "timed out"
        except httpx.HTTPError as exc:
            error = f"{type(exc).__name__}"
        if error is None:
            self.outbox.delivered(row.id, self.clock.now())
            if self.metrics is not None:
                self.metrics.alerts_delivered.labels(row.channel).inc()
            bound.info("alert_delivered")
            return 1
        delay = backoff(row.attempts, base_s=self.retry_base_s, max_s=self.retry_max_s)
        self.outbox.failed(row.id, error, self.clock.now() + timedelta(seconds=delay))
        if self.metrics is not None:
            self.metrics.alerts_failed.labels(row.channel).inc()
        bound.warning("alert_delivery_failed", error=error, retry_in_s=delay)
        return 0

    def run(self, stop: threading.Event, *, poll_s: float = 2.0) -> None:
        """Deliver until ``stop`` is set; ``wake`` (set when a run is stored) starts a pass early.
        A database outage is logged and retried: it never ends the loop."""
        while not stop.is_set():
            try:
                self.deliver_due()
            except StoreError as exc:
                log.warning("alert_outbox_unavailable", error=str(exc))
            except Exception as exc:  # a bug must not end delivery for the life of the process
                log.error("alert_sender_error", error=type(exc).__name__)
            self.wake.wait(poll_s)
            self.wake.clear()
