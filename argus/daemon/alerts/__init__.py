"""Alerts: which events page someone (policy), how each channel wants them (channels), and a
sender that delivers the outbox with retries (sender)."""

from argus.daemon.alerts.models import Alert, AlertKind, dedup_key
from argus.daemon.alerts.policy import AlertPolicy, RoutedAlert

__all__ = ["Alert", "AlertKind", "AlertPolicy", "RoutedAlert", "dedup_key"]
