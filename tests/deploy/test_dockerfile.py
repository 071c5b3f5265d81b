"""The Dockerfile, checked without Docker: it parses, copies files that exist and reach the build
context, runs as a non-root user, probes /healthz, and its entrypoint starts a working daemon."""

from __future__ import annotations

import glob
import re
import shutil
import subprocess
import sys
from pathlib import Path, PurePosixPath

import pytest

from tests.ci_skips import in_ci
from tests.daemon.process import ARGUS, DaemonProcess, free_port
from tests.deploy.dockerfile import Dockerfile, dockerignore_excludes, parse_dockerfile

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def dockerfile() -> Dockerfile:
    return parse_dockerfile((ROOT / "Dockerfile").read_text())


def test_the_dockerfile_parses_into_a_build_and_a_slim_python_311_runtime(dockerfile: Dockerfile) -> None:
    assert dockerfile.directives.get("syntax", "").startswith("docker/dockerfile")
    assert len(dockerfile.stages) == 2
    assert dockerfile.stages[0].name == "build"
    for stage in dockerfile.stages:
        assert re.fullmatch(r"python:3\.11(\.\d+)?-slim(-\w+)?", stage.base), stage.base


def test_the_reader_rejects_what_docker_rejects() -> None:
    with pytest.raises(ValueError, match="line 2: unknown instruction 'RUNN'"):
        parse_dockerfile("FROM python:3.11-slim\nRUNN echo hi\n")
    with pytest.raises(ValueError, match="only ARG may come before"):
        parse_dockerfile("USER 1000\nFROM python:3.11-slim\n")
    with pytest.raises(ValueError, match="not JSON"):
        parse_dockerfile('FROM python:3.11-slim\nCMD ["argus", "daemon"\n')


def test_every_copied_file_exists_and_is_in_the_build_context(dockerfile: Dockerfile) -> None:
    ignore = (ROOT / ".dockerignore").read_text()
    for stage in dockerfile.stages:
        workdir = stage.last("WORKDIR")
        for ins in stage.all("COPY") + stage.all("ADD"):
            flags, rest = ins.flags()
            if "from" in flags:
                assert dockerfile.stage(flags["from"]) is not None, f"line {ins.line}: no stage {flags['from']!r}"
                continue
            for source in rest.split()[:-1]:
                assert glob.glob(source, root_dir=ROOT), f"line {ins.line}: {source!r} is not in the repository"
            kept = [f for f, _ in ins.copies(ROOT, workdir.args if workdir else "/")
                    if not dockerignore_excludes(ignore, f)]
            assert kept, f"line {ins.line}: .dockerignore keeps {rest!r} out of the build context"


def test_the_dockerignore_reader_follows_last_match_wins() -> None:
    rules = "deploy\n!deploy/demo\n**/__pycache__\n"
    assert dockerignore_excludes(rules, "deploy/README.md")
    assert not dockerignore_excludes(rules, "deploy/demo/orders.jsonl")
    assert dockerignore_excludes(rules, "argus/agent/tools/__pycache__/guard.cpython-311.pyc")
    assert not dockerignore_excludes(rules, "argus/agent/tools/guard.py")


def test_the_runtime_image_has_no_build_tools(dockerfile: Dockerfile) -> None:
    runs = " ".join(ins.args for ins in dockerfile.final.all("RUN"))
    for tool in ("apt-get install", "gcc", "build-essential", "pip install", "pip wheel"):
        assert tool not in runs
    assert "uninstall" in runs and "pip" in runs                     # the base image's pip goes too
    copied = [ins.flags()[0].get("from") for ins in dockerfile.final.all("COPY")]
    assert "build" in copied                                       # the environment, built elsewhere


def test_it_runs_as_a_numeric_non_root_user_who_owns_the_data_directory(dockerfile: Dockerfile) -> None:
    user = dockerfile.final.last("USER")
    assert user is not None
    uid = user.args.split(":")[0]
    assert uid.isdigit() and int(uid) != 0                         # numeric: runAsNonRoot can verify it
    data_dir = dockerfile.final.env(dockerfile.global_args)["ARGUS_DATA_DIR"]
    runs = " ".join(ins.args for ins in dockerfile.final.all("RUN"))
    name = re.search(rf"useradd [^&]*--uid {uid} [^&]* (\w+)\s", runs)
    assert name, f"no useradd for uid {uid}"
    assert re.search(rf"install -d -o {name[1]} [^&]*{re.escape(data_dir)}", runs)
    assert user.line > max(ins.line for ins in dockerfile.final.all("RUN"))   # nothing runs as root after it


def test_the_healthcheck_asks_healthz_without_curl(dockerfile: Dockerfile) -> None:
    health = dockerfile.final.last("HEALTHCHECK")
    assert health is not None
    command = health.healthcheck_command()
    assert command == ["python", "-m", "argus.daemon.healthcheck"]           # asks /healthz where the daemon listens
    assert "curl" not in health.args and "wget" not in health.args
    assert {"interval", "timeout", "start-period", "retries"} <= health.flags()[0].keys()


def _image_command(dockerfile: Dockerfile) -> list[str]:
    entrypoint, cmd = dockerfile.final.last("ENTRYPOINT"), dockerfile.final.last("CMD")
    assert entrypoint is not None
    return (entrypoint.exec_form() or []) + ((cmd.exec_form() or []) if cmd else [])


def test_the_working_directory_mirrors_the_repository(dockerfile: Dockerfile) -> None:
    """So the entrypoint can be run from the repository root exactly as in the image."""
    workdir = dockerfile.final.last("WORKDIR")
    assert workdir is not None
    copied = [pair for ins in dockerfile.final.all("COPY") if "from" not in ins.flags()[0]
              for pair in ins.copies(ROOT, workdir.args)]
    assert {"schedules.yaml", "deploy/demo/orders.jsonl", "deploy/demo/customers.jsonl"} <= {f for f, _ in copied}
    for source, landed in copied:
        assert landed == PurePosixPath(workdir.args, source), f"{source} lands at {landed}"


def test_pid_1_is_an_init_that_passes_sigterm_on(dockerfile: Dockerfile) -> None:
    """An init as PID 1 (Debian's tini, copied from the build stage) forwards the stop signal to the
    daemon and reaps the children its in-memory queries fork; the runtime itself installs nothing."""
    assert _image_command(dockerfile)[:4] == ["/usr/bin/tini", "--", "argus", "daemon"]
    stop = dockerfile.final.last("STOPSIGNAL")
    assert stop is not None and stop.args == "SIGTERM"
    installs = " ".join(ins.args for ins in dockerfile.stages[0].all("RUN"))
    assert "apt-get install" in installs and " tini" in installs
    assert any(ins.flags()[0].get("from") == "build" and ins.args.split()[-2:] == ["/usr/bin/tini-static",
                                                                                   "/usr/bin/tini"]
               for ins in dockerfile.final.all("COPY"))


def test_the_entrypoint_starts_a_daemon_that_audits_the_bundled_schedules(dockerfile: Dockerfile,
                                                                           tmp_path: Path) -> None:
    command = _image_command(dockerfile)
    init, daemon_command = command[:2], command[2:]
    assert daemon_command[:2] == ["argus", "daemon"]
    env = {k: v for k, v in dockerfile.final.env(dockerfile.global_args).items() if k != "PATH"}
    port = free_port()
    # `docker run argus --listen ...`: CMD says where to listen, ARGUS_LISTEN (the image's) says otherwise
    env.update(ARGUS_LISTEN=f"127.0.0.1:{free_port()}", ARGUS_DATA_DIR=str(tmp_path / "data"), ARGUS_DATABASE_URL="")
    health = dockerfile.final.last("HEALTHCHECK")
    assert health is not None
    probe = [sys.executable, *(health.healthcheck_command() or [])[1:]]
    tini = shutil.which("tini")  # Debian's package, as in the image, where the machine has it
    if tini is None and in_ci():  # elsewhere the daemon runs without its PID 1; in CI that hides a missing tini
        pytest.fail("CI=true but tini is not installed (Debian: apt-get install tini; .ci/install-tools does it)",
                    pytrace=False)
    argv = [*([tini, init[1]] if tini else []), ARGUS, *daemon_command[1:], "--listen", f"127.0.0.1:{port}"]
    daemon = DaemonProcess(None, env, tmp_path / "daemon.log", argv=argv, port=port, cwd=ROOT)
    try:
        daemon.wait_until("/healthz", lambda: daemon.get("/healthz") == (200, "ok\n"), timeout=90)
        assert subprocess.run(probe, env=env, timeout=30).returncode == 0
        daemon.wait_until("a demo audit stored in the embedded database", lambda: daemon.metric(
            "argus_audit_runs_total", outcome="succeeded") >= 1 and daemon.get("/readyz")[0] == 200, timeout=120)
        assert {s["name"] for s in daemon.status()["schedules"]} == {"demo-orders", "demo-customers"}
    finally:
        code = daemon.stop()
    assert code == 0, daemon.tail()
    assert subprocess.run(probe, env=env, timeout=30, capture_output=True).returncode != 0   # and it can fail
