"""The README stays short and leads to every page; the site builds strictly, and a page left out of
the navigation, or a link to an anchor that is not there, fails the build."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.pages import DOCS, ROOT, nav_pages

README = ROOT / "README.md"
_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def test_the_readme_is_short() -> None:
    lines = len(README.read_text().splitlines())
    assert lines <= 200, f"README.md has {lines} lines: move sections into docs/ and link them"


def test_the_readme_links_to_every_page_of_the_site() -> None:
    linked = {(ROOT / target).resolve() for target in _LINK.findall(README.read_text()) if "://" not in target}
    missing = [str(p.relative_to(ROOT)) for p in nav_pages() if p.resolve() not in linked]
    assert not missing, f"README.md does not link to {missing}"


@pytest.mark.parametrize("page", [README, *sorted(DOCS.rglob("*.md")), ROOT / "deploy" / "README.md"],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_lead_to_files_that_exist(page: Path) -> None:
    """On GitHub as on the site: a link to a file names one that exists (MkDocs checks pages and
    anchors inside docs/; this covers the README and links that leave docs/)."""
    broken = [t for t in _LINK.findall(page.read_text())
              if "://" not in t and not t.startswith("mailto:") and not (page.parent / t).exists()]
    assert not broken, f"{page.relative_to(ROOT)} links to missing files: {broken}"


def _mkdocs(config_dir: Path, site: Path) -> subprocess.CompletedProcess[str]:
    if shutil.which("mkdocs") is None and not _importable("mkdocs"):
        pytest.skip("mkdocs is not installed (pip install -e '.[docs]'); .ci/run builds the site")
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
                          cwd=config_dir, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})


def _importable(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    result = _mkdocs(ROOT, tmp_path / "site")
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "site" / "reference" / "schedules-yaml" / "index.html").is_file()


def _copy_of_the_docs(tmp_path: Path) -> Path:
    copy = tmp_path / "repo"
    shutil.copytree(DOCS, copy / "docs", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "mkdocs.yml", copy / "mkdocs.yml")
    return copy


def test_a_page_missing_from_the_navigation_fails_the_build(tmp_path: Path) -> None:
    copy = _copy_of_the_docs(tmp_path)
    (copy / "docs" / "contracts.md").write_text("# Contracts\n")
    result = _mkdocs(copy, tmp_path / "site")
    assert result.returncode != 0
    assert "contracts.md" in result.stderr and "not included in the \"nav\"" in result.stderr


def test_a_link_to_a_missing_anchor_fails_the_build(tmp_path: Path) -> None:
    copy = _copy_of_the_docs(tmp_path)
    index = copy / "docs" / "index.md"
    index.write_text(index.read_text() + "\nSee [the loop](audits.md#no-such-heading).\n")
    result = _mkdocs(copy, tmp_path / "site")
    assert result.returncode != 0
    assert "no-such-heading" in result.stderr
