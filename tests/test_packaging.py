"""pyproject.toml names only what exists: a package-data pattern matching no file (argus/daemon/demo/*.jsonl,
a folder that never was) ships nothing and misleads whoever reads it."""

from __future__ import annotations

import glob
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_data_pattern_matches_a_file() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    package_data = project.get("tool", {}).get("setuptools", {}).get("package-data", {})
    for package, patterns in package_data.items():
        for pattern in patterns:
            assert glob.glob(pattern, root_dir=ROOT / package.replace(".", "/")), f"{package}: {pattern}"
