"""bench/detect.py holds a planted defect the values cannot wholly tell to the count they can, exactly.

``products.price`` plants 12 impossible prices; the values find the 5 at -10 and the 4 at 99,999,
not the 3 at 0.0 (docs/detection.md says why). The script's target there is 9 exactly: met, the
run passes; any other count (here the -10 prices taken out, so 4 are counted) fails it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from bson import json_util

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT.parent / "shared" / "bench"

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not (BENCH / "products.jsonl").is_file(),
                                                   reason="the shared bench is not beside the repository")]


def _detect(bench: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "bench/detect.py", str(bench), "--only", "products"], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)


def _bench(tmp_path: Path, keep: bool = True) -> Path:
    folder = tmp_path / "bench"
    folder.mkdir()
    shutil.copy(BENCH / "score.py", folder)
    shutil.copy(BENCH / "products.truth.json", folder)
    lines = (BENCH / "products.jsonl").read_text().splitlines()
    if not keep:
        lines = [line for line in lines if json_util.loads(line).get("price") != -10.0]
        truth = json.loads((BENCH / "products.truth.json").read_text())
        truth["documents"] = len(lines)
        (folder / "products.truth.json").write_text(json.dumps(truth))
    (folder / "products.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def test_the_count_the_values_can_tell_meets_the_target(tmp_path: Path) -> None:
    done = _detect(_bench(tmp_path))
    assert "products.price: 9 counted, 9 the values can tell of 12 planted (met" in done.stdout, done.stdout
    assert done.returncode == 0, done.stdout + done.stderr


def test_another_count_misses_the_target(tmp_path: Path) -> None:
    done = _detect(_bench(tmp_path, keep=False))
    assert "products.price: 4 counted, 9 the values can tell of 12 planted (NOT met" in done.stdout, done.stdout
    assert done.returncode == 1, done.stdout + done.stderr
