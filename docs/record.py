"""Run one benchmark command once and keep what it printed, for docs/generate.py to publish:

    python docs/record.py python bench/filespeed.py            # writes docs/bench-runs/filespeed.json
    python docs/record.py --as sweep-second python bench/sweep.py --set second

The record holds the command as typed, the date, the commit (and whether the work tree had
uncommitted changes), the machine's cores, the load average at the start and at the end, the wall
time, the exit code, everything the command printed on stdout and the tail of its stderr. The
figures in docs/benchmarks.md are rendered from these records, never typed: a figure is published
only as the command printed it, with the run it came from.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "docs" / "bench-runs"

__all__ = ["RUNS", "main"]


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--as", dest="name", help="the record's name (default: the script's name, e.g. filespeed)")
    parser.add_argument("--dir", type=Path, default=RUNS, help="where records go (default docs/bench-runs)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command, e.g. python bench/filespeed.py")
    args = parser.parse_args(argv)
    command = [part for part in args.command if part != "--"]
    if not command:
        parser.error("give the command to run, e.g. python docs/record.py python bench/store.py")
    script = next((part for part in command if part.endswith(".py")), command[0])
    name = args.name or Path(script).stem
    argv_run = [sys.executable if part in ("python", "python3") else part for part in command]
    record = {"command": " ".join(command), "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
              "commit": _git("rev-parse", "--short=10", "HEAD"),
              # The records and the page they render are not code: a run between two records is not dirty.
              "uncommitted_changes": bool(_git("status", "--porcelain", "--untracked-files=no", "--", ".",
                                               ":!docs/bench-runs", ":!docs/benchmarks.md")),
              "cores": os.cpu_count(), "load_start": _load()}
    started = time.perf_counter()
    out: list[str] = []
    with subprocess.Popen(argv_run, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        for line in proc.stdout:  # shown as it comes: a long run says where it is
            sys.stdout.write(line)
            sys.stdout.flush()
            out.append(line)
        err = proc.stderr.read()
    record |= {"load_end": _load(), "seconds": round(time.perf_counter() - started, 1), "exit_code": proc.returncode,
               "stdout": "".join(out), "stderr_tail": err[-2000:]}
    sys.stderr.write(err)
    args.dir.mkdir(parents=True, exist_ok=True)
    path = args.dir / f"{name}.json"
    path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"recorded {path} (exit {proc.returncode}); publish with: python docs/generate.py",
          file=sys.stderr)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
