"""The README's commands, run top to bottom as a new user on a fresh clone would: embedded
defaults, no MongoDB, no language model, a fresh data directory.

How commands are found (kept simple so sections added later are picked up, not broken):

- Only fenced ```` ```bash ```` blocks are commands (```` ```yaml ````/```` ```json ```` are file contents).
  Lines ending in ``\\`` are joined, ``# ...`` comments dropped, ``&&`` chains split into steps.
- A block is skipped whole when the line before its fence is ``<!-- readme-test: skip REASON -->``.
- Steps that cannot run offline are skipped, each with its reason (see ``_SKIPS``): setting up
  the environment this test already runs in, the test suite itself, a real MongoDB, a language
  model, Docker, benchmarks (``tests/bench`` runs each with ``--quick``), and syntax summaries
  with placeholders (``...``, ``PATH.jsonl``).
- ``[optional]`` parts are left out; ``RUN_ID`` and ``FINDING_ID`` become the last stored run
  (as ``argus audit --store`` prints it) and one of its findings.
- ``argus daemon`` runs until it is ready, then gets SIGINT and must exit 0.
- Every other step must exit 0, or 1 for ``argus audit``/``argus run`` (findings at or above
  ``--fail-on``, as documented), and never print a traceback or "internal error".
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from daemon.store.embedded import EmbeddedDatabase, start_embedded
from tests.daemon.process import free_port

ROOT = Path(__file__).resolve().parents[1]
SKIP_MARK = re.compile(r"<!--\s*readme-test:\s*skip\b(?P<reason>.*?)-->")
_SKIPS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"^(python3? -m venv|\. \S+/activate|source |pip install)"),
     "sets up the environment this test already runs in (and needs the network)"),
    (re.compile(r"-m pytest"), "the test suite itself"),
    (re.compile(r"--uri\b|MONGODB_URI"), "needs a real MongoDB"),
    (re.compile(r"--planner (llm|hybrid)|OPENAI_API_KEY|AZURE_OPENAI|ARGUS_LLM_|\bollama\b|\bvllm\b"
                r"|^llama-server\b|llama_cpp\.server"),
     "needs a language model"),
    (re.compile(r"^(docker|kubectl)\b"), "needs Docker or Kubernetes"),
    (re.compile(r"^python3? bench/"), "a benchmark: tests/bench runs each bench script with --quick"),
    (re.compile(r"(^|\s)\.\.\.(\s|$)|\bPATH\b|\bNAME\b|\bURL\b"), "a syntax summary with placeholders"),
]


@dataclass
class Step:
    line: int
    command: str
    skip: str | None = None


def readme_steps(text: str) -> list[Step]:
    steps: list[Step] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip() != "```bash":
            i += 1
            continue
        mark = SKIP_MARK.search(lines[i - 1]) if i else None
        i += 1
        body: list[tuple[int, str]] = []
        while lines[i].strip() != "```":
            body.append((i + 1, lines[i]))
            i += 1
        joined: list[tuple[int, str]] = []
        for number, raw in body:
            if joined and joined[-1][1].endswith("\\"):
                joined[-1] = (joined[-1][0], joined[-1][1][:-1].rstrip() + " " + raw.strip())
            else:
                joined.append((number, raw.strip()))
        for number, command in joined:
            command = _strip_comment(command)
            if not command:
                continue
            for part in command.split("&&"):
                step = Step(number, part.strip())
                step.skip = f"marked: {mark['reason'].strip()}" if mark else _skip_reason(step.command)
                steps.append(step)
    return steps


def _strip_comment(command: str) -> str:
    out, quote = [], None
    for i, ch in enumerate(command):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or command[i - 1].isspace()):
            break
        out.append(ch)
    return "".join(out).strip()


def _skip_reason(command: str) -> str | None:
    for pattern, reason in _SKIPS:
        if pattern.search(command):
            return reason
    return None


class NewUser:
    def __init__(self, tmp: Path) -> None:
        self.port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("ARGUS_")}
        self.env = {**env, "ARGUS_DATA_DIR": str(tmp / "data"), "ARGUS_LISTEN": f"127.0.0.1:{self.port}",
                    "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}", "COLUMNS": "200"}
        self.run_id: str | None = None
        self.data_dir = tmp / "data"
        self.held: EmbeddedDatabase | None = None

    def substitute(self, command: str) -> str:
        command = re.sub(r"\s*\[[^\]]*\]", "", command)
        if "RUN_ID" in command or "FINDING_ID" in command:
            assert self.run_id, "RUN_ID before any stored run"
            command = command.replace("FINDING_ID", self._finding_id()).replace("RUN_ID", self.run_id)
        return command

    def _finding_id(self) -> str:
        shown = self.shell(f"argus show {self.run_id} --format json")
        return str(json.loads(shown.stdout)["findings"][0]["id"])[:8]

    def shell(self, command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-c", command], cwd=ROOT, env=self.env, capture_output=True, text=True,
                              timeout=300)

    def daemon(self, command: str) -> None:
        proc = subprocess.Popen(["bash", "-c", f"exec {command}"], cwd=ROOT, env=self.env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 120
            while not self._ready():
                assert proc.poll() is None, f"`{command}` exited {proc.returncode}: {proc.communicate()[1][-2000:]}"
                assert time.monotonic() < deadline, f"`{command}` did not become ready"
                time.sleep(0.5)
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=90)
        assert proc.returncode == 0, f"`{command}` after SIGINT exited {proc.returncode}: {err[-2000:]}"
        assert "Traceback" not in err and "internal error" not in err
        # The daemon created the embedded database, as for a new user. Holding it open keeps the
        # server up between the commands that follow (each would otherwise start and stop it).
        self.held = self.held or start_embedded(self.data_dir)

    def _ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/readyz", timeout=2) as resp:
                return bool(resp.status == 200)
        except OSError:
            return False


def test_the_extraction_sees_every_bash_block_and_skips_with_reasons() -> None:
    text = (ROOT / "README.md").read_text()
    steps = readme_steps(text)
    assert len({s.line for s in steps}) >= text.count("```bash")
    assert any(s.command == "argus daemon" and s.skip is None for s in steps)
    assert readme_steps("<!-- readme-test: skip needs a cluster -->\n```bash\nkubectl apply -k x\n```\n")[0].skip \
        == "marked: needs a cluster"
    assert readme_steps("```bash\nargus show RUN_ID \\\n  --format json  # comment\n```\n")[0].command == \
        "argus show RUN_ID --format json"


@pytest.mark.slow
def test_a_new_user_can_follow_every_readme_command(tmp_path: Path) -> None:
    user = NewUser(tmp_path)
    try:
        ran, skipped = _follow(user)
    finally:
        if user.held is not None:
            user.held.server.cleanup()
    print("\n".join(["ran:", *ran, "skipped:", *skipped]))
    assert "argus daemon" in ran and any(c.startswith("argus label") for c in ran)


def _follow(user: NewUser) -> tuple[list[str], list[str]]:
    ran, skipped = [], []
    for step in readme_steps((ROOT / "README.md").read_text()):
        if step.skip:
            skipped.append(f"README.md:{step.line} `{step.command}`: {step.skip}")
            continue
        command = user.substitute(step.command)
        if shlex.split(command)[:2] == ["argus", "daemon"]:
            user.daemon(command)
            ran.append(command)
            continue
        t0 = time.monotonic()
        result = user.shell(command)
        print(f"{time.monotonic() - t0:.1f}s {command}")
        allowed = {0, 1} if shlex.split(command)[1] in ("audit", "run") else {0}
        where = f"README.md:{step.line} `{command}`"
        assert result.returncode in allowed, f"{where} exited {result.returncode}:\n{result.stderr[-2000:]}"
        assert "Traceback" not in result.stderr and "internal error" not in result.stderr, where
        stored = re.search(r"stored as run ([0-9a-f]{8})", result.stdout + result.stderr)
        user.run_id = stored.group(1) if stored else user.run_id
        ran.append(command)
    return ran, skipped
