"""`.ci/install-tools` installs each Debian package whose commands are missing: a machine with promtool
but no amtool skipped the alertmanager package before, and one amtool test skipped. Run as CI runs it,
with `apt-get` a stub that records what it was asked to install."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(tmp_path: Path, present: list[str]) -> list[str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "tee", "chmod", "rm", "env", "id", "cat", "printf"):
        found = shutil.which(tool)
        if found:
            (bin_dir / tool).symlink_to(found)
    for command in present:
        (bin_dir / command).write_text("#!/bin/sh\nexit 0\n")
        (bin_dir / command).chmod(0o755)
    log = tmp_path / "apt.log"
    (bin_dir / "apt-get").write_text(f'#!/bin/sh\necho "$@" >> {log}\n')
    (bin_dir / "apt-get").chmod(0o755)
    (bin_dir / "sudo").write_text('#!/bin/sh\n[ "$1" = "-n" ] && shift\nexec "$@"\n')
    (bin_dir / "sudo").chmod(0o755)
    env = {"PATH": str(bin_dir), "POLICY_RC_D": str(tmp_path / "policy-rc.d"), "HOME": str(tmp_path)}
    done = subprocess.run([str(bin_dir / "bash"), str(ROOT / ".ci/install-tools")], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "policy-rc.d").exists()   # the services' start was forbidden, then allowed again
    return log.read_text().splitlines() if log.exists() else []


@pytest.mark.skipif(os.name != "posix", reason="a POSIX shell script")
def test_amtool_is_installed_even_when_promtool_is_there(tmp_path: Path) -> None:
    asked = _run(tmp_path, ["promtool", "prometheus", "tini"])
    assert asked == ["update -qq", "install -y -qq --no-install-recommends prometheus-alertmanager"]


@pytest.mark.skipif(os.name != "posix", reason="a POSIX shell script")
def test_nothing_is_installed_when_every_tool_is_there(tmp_path: Path) -> None:
    assert _run(tmp_path, ["promtool", "prometheus", "amtool", "prometheus-alertmanager", "tini"]) == []
