"""Pinning: the mismatch message, and ``pin_config`` keeping every other byte (golden).

Golden files: ``golden/pin/<name>.before.yml`` is pinned to :data:`SHA` (with the version
in :data:`VERSIONS`, if any) and must equal ``<name>.after.yml`` byte for byte. Regenerate
after an intended change with ``TOOLGATE_REGEN_GOLDEN=1 pytest tests/dataset/test_pin.py``
and review the diff.
"""

from __future__ import annotations

import difflib
import json
import os
import shutil
from pathlib import Path

import pytest

from gate.config import load_config
from gate.dataset import load_dataset
from gate.dataset.pin import check_pin, pin_config, repin_command
from gate.errors import ConfigError, PinMismatchError
from gate.yamlio import load_yaml
from tests.dataset.helpers import row, write_jsonl

GOLDEN = Path(__file__).parent / "golden" / "pin"
SHA = "0123456789abcdef" * 4
VERSIONS = {
    "commented": "2026.04",
    "missing": None,
    "crlf": "1.10",
    "flow": "v2",
    "empty": None,
    "quoted": "7",
    "noeol": "1",
}


@pytest.mark.parametrize("name", sorted(VERSIONS))
def test_pin_config__golden__only_the_pin_changes(tmp_path: Path, name: str) -> None:
    before = GOLDEN / f"{name}.before.yml"
    after = GOLDEN / f"{name}.after.yml"
    work = tmp_path / "toolgate.yml"
    shutil.copy(before, work)
    result = pin_config(work, SHA, VERSIONS[name])
    produced = work.read_bytes()
    if os.environ.get("TOOLGATE_REGEN_GOLDEN"):
        after.write_bytes(produced)
    assert produced == after.read_bytes()
    assert result.changed and result.new_sha256 == SHA
    # Every changed line is a pin line: nothing else moved.
    old_lines = before.read_bytes().decode().splitlines()
    new_lines = produced.decode().splitlines()
    for line in difflib.unified_diff(old_lines, new_lines, n=0):
        if line.startswith(("+", "-")) and not line.startswith(("+++", "---")):
            assert "sha256" in line or "version" in line, line
    doc = load_yaml(work)
    assert doc.data["dataset"]["sha256"] == SHA
    if VERSIONS[name] is not None:
        assert doc.data["dataset"]["version"] == VERSIONS[name]


def test_pin_config__already_pinned__nothing_written(tmp_path: Path) -> None:
    work = tmp_path / "toolgate.yml"
    shutil.copy(GOLDEN / "quoted.before.yml", work)
    pin_config(work, SHA)
    stamp = work.stat().st_mtime_ns
    result = pin_config(work, SHA)
    assert not result.changed and work.stat().st_mtime_ns == stamp


def test_pin_config__not_a_digest__refused(tmp_path: Path) -> None:
    work = tmp_path / "toolgate.yml"
    shutil.copy(GOLDEN / "quoted.before.yml", work)
    with pytest.raises(ValueError):
        pin_config(work, "abc")


def test_pin_config__no_dataset_mapping__config_error(tmp_path: Path) -> None:
    work = tmp_path / "toolgate.yml"
    work.write_text("agent: {kind: replay, runs: r}\n")
    with pytest.raises(ConfigError) as err:
        pin_config(work, SHA)
    assert "dataset" in str(err.value)


def _project(tmp_path: Path, sha: str | None) -> tuple[Path, Path]:
    dataset = write_jsonl(tmp_path / "cases.jsonl", [row()])
    (tmp_path / "runs.jsonl").write_text("")
    pin = f"  sha256: {sha}\n" if sha else ""
    config = tmp_path / "toolgate.yml"
    config.write_text(
        f"dataset:\n  path: cases.jsonl\n{pin}agent: {{kind: replay, runs: runs.jsonl}}\n"
    )
    return config, dataset


def test_check_pin__matching__passes(tmp_path: Path) -> None:
    config, dataset = _project(tmp_path, None)
    ds = load_dataset(dataset)
    pin_config(config, ds.sha256)
    check_pin(load_config(config), ds)


def test_check_pin__mismatch__names_both_hashes_and_the_command(tmp_path: Path) -> None:
    config, dataset = _project(tmp_path, "f" * 64)
    ds = load_dataset(dataset)
    with pytest.raises(PinMismatchError) as err:
        check_pin(load_config(config), ds, config_display="ci/toolgate.yml")
    [problem] = err.value.problems
    assert (problem.file, problem.line, problem.field) == ("ci/toolgate.yml", 3, "dataset.sha256")
    assert "f" * 64 in problem.message and ds.sha256 in problem.message
    assert f"`{repin_command('ci/toolgate.yml')}`" in problem.message
    assert repin_command("ci/toolgate.yml") == "toolgate pin --config ci/toolgate.yml"


def test_check_pin__unpinned__says_how_to_pin(tmp_path: Path) -> None:
    config, dataset = _project(tmp_path, None)
    with pytest.raises(PinMismatchError) as err:
        check_pin(load_config(config), load_dataset(dataset), config_display="toolgate.yml")
    assert "not pinned" in str(err.value) and "toolgate pin --config toolgate.yml" in str(err.value)


def test_check_pin__after_dataset_edit__mismatch(tmp_path: Path) -> None:
    config, dataset = _project(tmp_path, None)
    pin_config(config, load_dataset(dataset).sha256)
    write_jsonl(dataset, [row(user_input=json.dumps("changed"))])
    with pytest.raises(PinMismatchError):
        check_pin(load_config(config), load_dataset(dataset))
