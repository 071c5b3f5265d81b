"""The ``argus`` command line, one module per group of ``argus --help``. Exit codes are defined, with their
meaning, in ``argus.daemon.exit_codes``."""

from __future__ import annotations

import sys

from rich.console import Console

from argus.agent.secrets import SECRETS
from argus.daemon.alerts.cli import register as register_alert_commands
from argus.daemon.cli import audit, daemon, history, schedules
from argus.daemon.cli.root import (
    ALERTS,
    AUDIT,
    EXIT_ERROR,
    HISTORY,
    STORE_HELP,
    app,
    env_settings,
    fail,
    open_target,
    with_store,
)
from argus.daemon.contracts_cli import register as register_contract_commands
from argus.daemon.custom_metrics_cli import register as register_metric_commands
from argus.daemon.exit_codes import ExitCode
from argus.daemon.findings_cli import register as register_finding_commands
from argus.daemon.incidents.cli import register as register_incident_commands

__all__ = ["app", "main"]

# `argus --help` lists the commands in the order a user meets them: the order they are registered in.
audit.register(app)
history.register(app)
register_alert_commands(app, with_store, fail, panel=ALERTS)
register_contract_commands(app, open_target, fail, env_settings, panel=AUDIT)
register_incident_commands(app, with_store, fail, panel=ALERTS)
register_finding_commands(app, with_store, fail, panel=HISTORY)
register_metric_commands(app, with_store, panel=HISTORY)
schedules.register(app)
daemon.register(app)


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(ExitCode.INTERRUPTED)
    except Exception as exc:  # last resort: one line, no traceback
        Console(stderr=True).print(f"argus: error: internal error: {type(exc).__name__}: {SECRETS.redact(str(exc))}",
                                   markup=False)
        sys.exit(EXIT_ERROR)


app.info.epilog = STORE_HELP
for _command in app.registered_commands:
    if _command.rich_help_panel in (HISTORY, ALERTS):
        _command.epilog = STORE_HELP

