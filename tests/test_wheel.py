"""`pip install argus-dq` puts one top-level name into site-packages: the built wheel holds only
``argus/...`` and its ``argus_dq-*.dist-info``, and the ``argus`` console script it declares runs from
the installed wheel (not this checkout). Built from a copy of what the Dockerfile copies, so a stale
``build/`` in the checkout cannot hide or add a file."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _build(tmp_path: Path) -> Path:
    if importlib.util.find_spec("wheel") is None:
        pytest.skip("the wheel package is not installed (pip install -e '.[test]')")
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "argus", source / "argus", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    out = tmp_path / "dist"
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(out), str(source)], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    [wheel] = out.glob("argus_dq-*.whl")
    return wheel


@pytest.mark.slow
def test_the_wheel_installs_only_argus_and_its_console_script_runs(tmp_path: Path) -> None:
    wheel = _build(tmp_path)
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names}
    dist_info = [t for t in tops if t.startswith("argus_dq-") and t.endswith(".dist-info")]
    assert tops - set(dist_info) == {"argus"} and len(dist_info) == 1, sorted(tops)
    assert "argus/__init__.py" in names and "argus/daemon/cli/__init__.py" in names

    site = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site),
                           str(wheel)], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert {p.name for p in site.iterdir()} - {"bin"} == {"argus", dist_info[0]}
    run = ("import sys; from importlib.metadata import distribution\n"
           "[ep] = [e for e in distribution('argus-dq').entry_points if e.group == 'console_scripts']\n"
           "print(ep.name, ep.value, distribution('argus-dq')._path, flush=True)\n"
           "main = ep.load(); print(sys.modules['argus'].__file__, flush=True)\n"
           "sys.argv = ['argus', '--help']; main()\n")
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = subprocess.run([sys.executable, "-c", run], capture_output=True, text=True, timeout=120, check=False,
                          cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    first, loaded, help_text = done.stdout.split("\n", 2)
    assert first.startswith(f"argus argus.daemon.cli:main {site}")
    assert loaded == str(site / "argus" / "__init__.py")   # the wheel's code, not this checkout's
    assert "Usage: argus" in help_text and "audit" in help_text
