"""`.ci/install-tools` installs each Debian package whose commands (or library) are missing, and fails CI
when it cannot: a machine with promtool but no amtool skipped the alertmanager package before, and one
amtool test skipped; libpcre2-8-0 was never installed, so the real-PCRE2 test never ran in CI. Run as CI
runs it, with `apt-get` a stub that records what it was asked to install."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = ["promtool", "prometheus", "amtool", "prometheus-alertmanager", "tini", "libpcre2-8"]


def _run(tmp_path: Path, present: list[str], *, apt_fails: bool = False) -> tuple[subprocess.CompletedProcess[str],
                                                                                      list[str]]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "tee", "chmod", "rm", "env", "id", "cat", "printf", "grep", "echo"):
        found = shutil.which(tool)
        if found:
            (bin_dir / tool).symlink_to(found)
    for command in present:
        if command != "libpcre2-8":
            (bin_dir / command).write_text("#!/bin/sh\nexit 0\n")
            (bin_dir / command).chmod(0o755)
    pcre = "\tlibpcre2-8.so.0 (libc6,x86-64) => /lib/libpcre2-8.so.0" if "libpcre2-8" in present else ""
    (bin_dir / "ldconfig").write_text(f"#!/bin/sh\necho '{pcre}'\n")
    (bin_dir / "ldconfig").chmod(0o755)
    log = tmp_path / "apt.log"
    (bin_dir / "apt-get").write_text(f'#!/bin/sh\necho "$@" >> {log}\nexit {1 if apt_fails else 0}\n')
    (bin_dir / "apt-get").chmod(0o755)
    (bin_dir / "sudo").write_text('#!/bin/sh\n[ "$1" = "-n" ] && shift\nexec "$@"\n')
    (bin_dir / "sudo").chmod(0o755)
    env = {"PATH": str(bin_dir), "POLICY_RC_D": str(tmp_path / "policy-rc.d"), "HOME": str(tmp_path)}
    done = subprocess.run([str(bin_dir / "bash"), str(ROOT / ".ci/install-tools")], env=env, capture_output=True,
                          text=True, timeout=60)
    assert not (tmp_path / "policy-rc.d").exists()   # the services' start was forbidden, then allowed again
    return done, log.read_text().splitlines() if log.exists() else []


@pytest.mark.skipif(os.name != "posix", reason="a POSIX shell script")
def test_amtool_is_installed_even_when_promtool_is_there(tmp_path: Path) -> None:
    done, asked = _run(tmp_path, [t for t in EVERYTHING if t != "amtool"])
    assert asked == ["update -qq", "install -y -qq --no-install-recommends prometheus-alertmanager"]
    # the stub installs nothing, so amtool is still missing afterwards: CI stops here, naming it
    assert done.returncode == 1 and "prometheus-alertmanager is still missing" in done.stderr


@pytest.mark.skipif(os.name != "posix", reason="a POSIX shell script")
def test_pcre2_is_installed_when_the_library_is_missing(tmp_path: Path) -> None:
    _, asked = _run(tmp_path, [t for t in EVERYTHING if t != "libpcre2-8"])
    assert asked == ["update -qq", "install -y -qq --no-install-recommends libpcre2-8-0"]


@pytest.mark.skipif(os.name != "posix", reason="a POSIX shell script")
def test_a_failed_install_fails_ci_naming_the_packages(tmp_path: Path) -> None:
    done, _ = _run(tmp_path, ["tini"], apt_fails=True)
    assert done.returncode == 1
    assert "installing prometheus prometheus-alertmanager libpcre2-8-0 with apt-get failed" in done.stderr


@pytest.mark.skipif(os.name != "posix", reason="a POSIX shell script")
def test_nothing_is_installed_when_every_tool_is_there(tmp_path: Path) -> None:
    done, asked = _run(tmp_path, EVERYTHING)
    assert done.returncode == 0 and asked == []
