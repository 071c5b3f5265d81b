"""Every code block of the README and of docs/ is run or validated, as a new user on a fresh clone
would meet it: embedded defaults, no MongoDB, no language model, a fresh data directory.

How blocks are handled (docs/development.md says the same for whoever writes a page):

- ```` ```bash ````: commands, run top to bottom through the README and then the site's pages in
  the order of mkdocs.yml's nav. Lines ending in ``\\`` are joined, ``# ...`` comments dropped,
  ``&&`` chains split into steps. A command already run on an earlier page is not run again.
- Steps that cannot run here are skipped, each with its reason (see ``_SKIPS``): setting up the
  environment this test already runs in, the test suite itself, a real MongoDB, a language model,
  Docker, benchmarks (``tests/bench`` runs each with ``--quick``), syntax summaries with
  placeholders (``...``, ``PATH.jsonl``), and tools this machine lacks (``promtool``, ``mkdocs``).
- A block is skipped whole when the line before its fence is ``<!-- docs-test: skip REASON -->``.
- ``[optional]`` parts are left out; ``RUN_ID`` and ``FINDING_ID`` become the last stored run
  (as ``argus audit --store`` prints it) and one of its findings.
- ``argus daemon`` runs until it is ready, then gets SIGINT and must exit 0.
- Every other step must exit 0, or 1 for ``argus audit``/``argus run`` (findings at or above
  ``--fail-on``, as documented), and never print a traceback or "internal error".
- ```` ```yaml ````: parsed; a schedules file (its top-level keys are schedules.yaml's) is loaded
  by ``load_schedules``, a block without ``schedules:`` given ``schedules: []``.
- ```` ```json ````: parsed; ``<!-- docs-test: alert -->`` also validates it as an alert payload,
  ``<!-- docs-test: incident-notice -->`` as an incident's notice.
- ``<!-- docs-test: mongodb-uri -->``: checked as a MongoDB connection string.
- Blocks inside a generated part are checked by tests/docs/test_generated.py; any other block
  must be one of the above, or the test names it.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from argus.config.schedule_models import ScheduleFile
from argus.config.schedules import ScheduleError, load_schedules
from argus.config.settings import check_mongodb_uri
from argus.daemon.alerts.models import Alert
from argus.daemon.incidents.models import Incident, IncidentNotice
from argus.daemon.store.embedded import EmbeddedDatabase, start_embedded
from tests.daemon.process import free_port
from tests.docs.pages import ROOT, Block, blocks, reading_order, where

_SCHEDULES_KEYS = set(ScheduleFile.model_fields)  # the top-level keys of a schedules file
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
    (re.compile(r"^python3? docs/generate\.py"), "rewrites the docs: tests/docs/test_generated.py checks them"),
    (re.compile(r"(^|\s)\.\.\.(\s|$)|\bPATH\b|\bNAME\b|\bURL\b"), "a syntax summary with placeholders"),
]
_TOOLS = {"promtool": "needs promtool (Prometheus), which is not installed here",
          "mkdocs": "needs the docs extra (pip install -e '.[docs]'), which is not installed here"}


@dataclass
class Step:
    page: Path
    line: int
    command: str
    skip: str | None = None

    @property
    def where(self) -> str:
        return where(self.page, self.line)


def steps_of(block: Block) -> list[Step]:
    joined: list[tuple[int, str]] = []
    for offset, raw in enumerate(block.body.splitlines(), start=1):
        if joined and joined[-1][1].endswith("\\"):
            joined[-1] = (joined[-1][0], joined[-1][1][:-1].rstrip() + " " + raw.strip())
        else:
            joined.append((block.line + offset, raw.strip()))
    steps = []
    for number, command in joined:
        command = _strip_comment(command)
        if not command:
            continue
        for part in command.split("&&"):
            step = Step(block.page, number, part.strip())
            step.skip = f"marked: {block.reason}" if block.mark == "skip" else _skip_reason(step.command)
            steps.append(step)
    return steps


def readme_steps(text: str, page: Path = ROOT / "README.md") -> list[Step]:
    """The steps of every bash block of ``text`` (a page's contents)."""
    return [step for block in blocks(page, text) if block.lang == "bash" for step in steps_of(block)]


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
    tool = command.split()[0] if command.split() else ""
    if tool in _TOOLS and shutil.which(tool) is None:
        return _TOOLS[tool]
    return None


class NewUser:
    def __init__(self, tmp: Path) -> None:
        self.port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("ARGUS_")}
        self.env = {**env, "ARGUS_DATA_DIR": str(tmp / "data"), "ARGUS_LISTEN": f"127.0.0.1:{self.port}",
                    "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}", "COLUMNS": "200",
                    "NO_MKDOCS_2_WARNING": "1"}
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


# --- every block is accounted for ---------------------------------------------------------------

def _all_blocks() -> list[Block]:
    return [block for page in reading_order() for block in blocks(page)]


def test_the_extraction_sees_every_bash_block_and_skips_with_reasons() -> None:
    text = (ROOT / "README.md").read_text()
    steps = readme_steps(text)
    assert len({s.line for s in steps}) >= text.count("```bash")
    assert any(s.command == "argus daemon" and s.skip is None for s in steps)
    assert readme_steps("<!-- docs-test: skip needs a cluster -->\n```bash\nkubectl apply -k x\n```\n")[0].skip \
        == "marked: needs a cluster"
    assert readme_steps("```bash\nargus show RUN_ID \\\n  --format json  # comment\n```\n")[0].command == \
        "argus show RUN_ID --format json"
    assert readme_steps("- item\n\n  ```bash\n  argus runs\n  ```\n")[0].command == "argus runs"


def test_every_page_of_the_docs_is_read_and_exists() -> None:
    pages = reading_order()
    missing = [str(p.relative_to(ROOT)) for p in pages if not p.is_file()]
    assert not missing, f"mkdocs.yml's nav names pages that do not exist: {missing}"
    on_disk = {p for p in (ROOT / "docs").rglob("*.md")}
    assert on_disk <= set(pages), f"pages missing from mkdocs.yml's nav: {sorted(map(str, on_disk - set(pages)))}"


def test_every_code_block_is_run_or_validated() -> None:
    handled = {"bash", "yaml", "json"}
    unknown = [f"{b.where} ```{b.lang}" for b in _all_blocks()
               if not b.generated and b.lang not in handled and b.mark not in ("skip", "mongodb-uri")]
    assert not unknown, ("blocks the tests neither run nor validate (mark them, see docs/development.md): "
                         + ", ".join(unknown))
    unexplained = [b.where for b in _all_blocks() if b.mark == "skip" and not b.reason]
    assert not unexplained, f"skipped blocks without a reason: {unexplained}"


def _yaml_blocks() -> list[Block]:
    return [b for b in _all_blocks() if b.lang == "yaml" and b.mark != "skip" and not b.generated]


@pytest.mark.parametrize("block", _yaml_blocks(), ids=lambda b: b.where)
def test_yaml_blocks_parse_and_schedules_files_load(block: Block, tmp_path: Path) -> None:
    data = yaml.safe_load(block.body)
    assert data is not None, f"{block.where}: an empty YAML block"
    if isinstance(data, dict) and set(data) <= _SCHEDULES_KEYS:
        text = block.body if "schedules" in data else block.body + "\nschedules: []\n"
        path = tmp_path / "schedules.yaml"
        path.write_text(text)
        try:
            load_schedules(path)
        except ScheduleError as exc:
            pytest.fail(f"{block.where}: the example is no valid schedules file:\n" + "\n".join(exc.problems))


def _json_blocks() -> list[Block]:
    return [b for b in _all_blocks() if b.lang == "json" and b.mark != "skip" and not b.generated]


@pytest.mark.parametrize("block", _json_blocks(), ids=lambda b: b.where)
def test_json_blocks_parse_and_alert_payloads_are_alerts(block: Block) -> None:
    data = json.loads(block.body)
    if block.mark == "alert":
        assert set(data) == set(Alert.model_fields), f"{block.where}: the payload's keys differ from an alert's"
        Alert.model_validate(data)
    if block.mark == "incident-notice":
        assert set(data) == set(IncidentNotice.model_fields), f"{block.where}: the keys differ from a notice's"
        assert set(data["incident"]) == set(Incident.model_fields), f"{block.where}: the incident's keys differ"
        IncidentNotice.model_validate(data)


@pytest.mark.parametrize("block", [b for b in _all_blocks() if b.mark == "mongodb-uri"], ids=lambda b: b.where)
def test_connection_strings_in_the_docs_are_valid(block: Block) -> None:
    check_mongodb_uri(block.body.strip(), block.where)


# --- a new user follows every command -----------------------------------------------------------

@pytest.mark.slow
def test_a_new_user_can_follow_every_command_of_the_docs(tmp_path: Path) -> None:
    user = NewUser(tmp_path)
    try:
        ran, skipped = _follow(user)
    finally:
        if user.held is not None:
            user.held.server.cleanup()
    print("\n".join(["ran:", *ran, "skipped:", *skipped]))
    assert any(c.startswith("argus daemon") for c in ran) and any(c.startswith("argus label") for c in ran)


def _follow(user: NewUser) -> tuple[list[str], list[str]]:
    ran, skipped = [], []
    done: dict[str, str] = {}  # command -> where it ran first
    for page in reading_order():
        for block in blocks(page):
            if block.lang != "bash" or block.generated:
                continue
            for step in steps_of(block):
                first = done.get(step.command)
                if step.skip or (first is not None and not first.startswith(str(page.relative_to(ROOT)) + ":")):
                    skipped.append(f"{step.where} `{step.command}`: {step.skip or 'ran already at ' + str(first)}")
                    continue
                done.setdefault(step.command, step.where)
                ran.append(_run(user, step))
    return ran, skipped


def _run(user: NewUser, step: Step) -> str:
    command = user.substitute(step.command)
    if shlex.split(command)[:2] == ["argus", "daemon"]:
        user.daemon(command)
        return command
    t0 = time.monotonic()
    result = user.shell(command)
    print(f"{time.monotonic() - t0:.1f}s {command}")
    words = shlex.split(command)
    allowed = {0, 1} if words[0] == "argus" and words[1] in ("audit", "run") else {0}
    place = f"{step.where} `{command}`"
    assert result.returncode in allowed, f"{place} exited {result.returncode}:\n{result.stderr[-2000:]}"
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, place
    stored = re.search(r"stored as run ([0-9a-f]{8})", result.stdout + result.stderr)
    user.run_id = stored.group(1) if stored else user.run_id
    return command
