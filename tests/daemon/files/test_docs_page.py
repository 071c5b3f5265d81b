"""The commands of docs/files.md run as written, from the repository root, as a user copies them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "docs" / "files.md"


def test_every_bash_block_of_the_files_page_runs(tmp_path: Path) -> None:
    blocks = re.findall(r"```bash\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.S)
    assert blocks, "docs/files.md has no bash block to try"
    env = {**os.environ, "TMPDIR": str(tmp_path), "ARGUS_DATA_DIR": str(tmp_path / "data"),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    for block in blocks:
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, (block, done.stderr[-2000:])
        assert "Traceback" not in done.stderr and "internal error" not in done.stderr
        assert "audit of files.orders" in done.stdout and "outcome succeeded" in done.stdout
