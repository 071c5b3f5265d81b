"""Metrics of the user's own: a read-only aggregation per metric, its value(s) per run, and a verdict.

A schedule declares them (``metrics:`` in ``schedules.yaml``, models in ``models``);
``measure.measure_metrics`` runs each pipeline as one read after the audit proper, under the run's
deadline and request unit budget, and ``judge`` weighs each value against a fixed range, warn/fail
thresholds, or a baseline learned from earlier runs by the same engine as collection volume
(``argus.agent.health.baseline.learn``). A breach is a finding of category ``metric_breach``, so it flows
through diff, incidents and alerts like any other. This package's root imports only the models:
``argus.agent.options`` needs them, and the measuring side needs ``argus.agent.options``.
"""

from argus.agent.custom_metrics.models import Bound, MetricPoint, MetricResult, MetricSpec, MetricValue, MetricVerdict

__all__ = ["Bound", "MetricPoint", "MetricResult", "MetricSpec", "MetricValue", "MetricVerdict"]
