"""`argus schedules check` warns of an alert channel whose URL or key cannot be read now (an unset
environment variable, an unreadable file), naming the channel and the variable, never a value
(issue 36: it said 'valid' and the first alert failed)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from argus.daemon.cli import app

runner = CliRunner()
SECRET = "https://hooks.example.test/T000/B000/abcdefsecret"


def _schedules(tmp_path: Path) -> Path:
    (tmp_path / "orders.jsonl").write_text('{"a": 1}\n')
    path = tmp_path / "schedules.yaml"
    path.write_text(
        "version: 1\nconnections:\n  demo:\n    files: {orders: orders.jsonl}\nschedules:\n"
        "  - {name: s, connection: demo, database: shop, collection: orders, trigger: {every: 1h}}\n"
        "alerts:\n  channels:\n    ops: {type: slack, url_env: TEST_SLACK_URL}\n"
        "    hook: {type: webhook, url_env: TEST_HOOK_URL, secret_env: TEST_HOOK_KEY}\n")
    return path


def test_an_unset_channel_variable_is_warned_of_by_name(tmp_path: Path) -> None:
    result = runner.invoke(app, ["schedules", "check", str(_schedules(tmp_path))],
                           env={"TEST_SLACK_URL": SECRET, "TEST_HOOK_URL": "", "TEST_HOOK_KEY": "k3y-v4lue"})
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.output.splitlines() if line.startswith("warning:")]
    assert warnings == ["warning: alerts.channels.hook: environment variable TEST_HOOK_URL (the URL) is not set; "
                        "alerts to it will fail until it is"]
    assert SECRET not in result.output and "k3y-v4lue" not in result.output


def test_channels_whose_secrets_are_set_raise_no_warning(tmp_path: Path) -> None:
    result = runner.invoke(app, ["schedules", "check", str(_schedules(tmp_path))],
                           env={"TEST_SLACK_URL": SECRET, "TEST_HOOK_URL": SECRET + "2", "TEST_HOOK_KEY": "k3y"})
    assert result.exit_code == 0, result.output
    assert "warning" not in result.output and SECRET not in result.output
