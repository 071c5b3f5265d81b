"""A contract path in schedules.yaml that names something other than a file: each is refused with
what it is, at the schedule's line, never as a missing file the user can see is there."""

from __future__ import annotations

from pathlib import Path

import pytest

from argus.config.schedules import ScheduleError, load_schedules


def _schedules(tmp_path: Path, contract: str) -> Path:
    path = tmp_path / "schedules.yaml"
    path.write_text("version: 1\nconnections:\n  files: {files: {orders: orders.jsonl}}\nschedules:\n"
                    f"  - {{name: a, connection: files, database: shop, collection: orders, trigger: {{every: 1h}}, "
                    f"contract: {contract}}}\n")
    return path


def _problems(path: Path) -> list[str]:
    with pytest.raises(ScheduleError) as caught:
        load_schedules(path)
    return caught.value.problems


def test_a_contract_path_that_is_a_directory_is_called_one(tmp_path: Path) -> None:
    (tmp_path / "contracts").mkdir()
    path = _schedules(tmp_path, "contracts")
    assert _problems(path) == [f"{path}:5 schedules[0].contract: 'contracts' is a directory, not a contract file "
                               f"(relative to schedules.yaml)"]


def test_a_contract_path_in_a_symlink_loop_says_why_it_cannot_be_read(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").symlink_to(tmp_path / "b.yaml")
    (tmp_path / "b.yaml").symlink_to(tmp_path / "a.yaml")
    path = _schedules(tmp_path, "a.yaml")
    [problem] = _problems(path)
    assert problem == f"{tmp_path / 'a.yaml'}: cannot read the contract: Too many levels of symbolic links"
