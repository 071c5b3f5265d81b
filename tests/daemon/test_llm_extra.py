"""The model client is the ``llm`` extra: without the ``openai`` package, a planner that asks a model stops
with exit 2 (a configuration error) and an error naming ``pip install 'argus-dq[llm]'``, from the CLI, from
``argus run`` and when the daemon starts; the default planner runs as before. The package's absence is
real to the process: ``sys.modules['openai'] = None`` makes every ``import openai`` fail."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from argus.daemon.exit_codes import ExitCode

ROOT = Path(__file__).resolve().parents[2]
ORDERS = ROOT / "deploy/demo/orders.jsonl"
INSTALL = "pip install 'argus-dq[llm]'"
_WITHOUT_OPENAI = ("import sys; sys.modules['openai'] = None; sys.argv = ['argus', *sys.argv[1:]]; "
                   "from argus.daemon.cli import main; main()")


def _argus(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", _WITHOUT_OPENAI, *args], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, check=False, env=_env(tmp_path))


def _env(tmp_path: Path) -> dict[str, str]:
    import os

    return {**os.environ, "ARGUS_DATA_DIR": str(tmp_path / "data"), "COLUMNS": "200"}


def _schedules(tmp_path: Path, planner: str) -> Path:
    path = tmp_path / "schedules.yaml"
    path.write_text(textwrap.dedent(f"""\
        connections:
          demo: {{files: {{orders: "{ORDERS}"}}}}
        schedules:
          - {{name: nightly, connection: demo, database: shop, collection: orders, trigger: {{every: 1h}},
              planner: {planner}, llm: {{model: m, base_url: "http://127.0.0.1:9/v1"}}}}
        """))
    return path


@pytest.mark.parametrize("planner", ["llm", "hybrid"])
def test_audit_with_a_model_planner_names_the_extra(tmp_path: Path, planner: str) -> None:
    done = _argus(tmp_path, "audit", "--file", str(ORDERS), "--planner", planner, "--model", "m",
                  "--base-url", "http://127.0.0.1:9/v1", "--no-store")
    assert done.returncode == ExitCode.ERROR, done.stdout + done.stderr
    assert f"planner {planner!r} needs the LLM client, which is not installed: {INSTALL}" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_default_planner_needs_no_model_client(tmp_path: Path) -> None:
    done = _argus(tmp_path, "audit", "--file", str(ORDERS), "--no-store", "--fail-on", "none")
    assert done.returncode == ExitCode.OK, done.stderr[-2000:]
    assert "LLM client" not in done.stdout + done.stderr


def test_run_of_a_schedule_with_a_model_planner_names_the_extra(tmp_path: Path) -> None:
    done = _argus(tmp_path, "run", "nightly", "--schedules", str(_schedules(tmp_path, "llm")))
    assert done.returncode == ExitCode.ERROR, done.stdout + done.stderr
    assert f"schedule nightly uses a planner that needs the LLM client, which is not installed: {INSTALL}" \
        in done.stderr


def test_the_daemon_does_not_start_with_a_model_planner_and_no_client(tmp_path: Path) -> None:
    done = _argus(tmp_path, "daemon", "--schedules", str(_schedules(tmp_path, "hybrid")), "--listen", "127.0.0.1:0")
    assert done.returncode == ExitCode.ERROR, done.stdout + done.stderr
    assert f"cannot start: schedule nightly uses a planner that needs the LLM client, which is not installed: " \
           f"{INSTALL}" in done.stderr
