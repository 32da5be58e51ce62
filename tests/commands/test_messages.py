"""Messages a new user meets first: each names the file, the line and what to do."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from gate.cli import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support-agent"


@pytest.fixture
def example(tmp_path: Path) -> Path:
    dest = tmp_path / "ex"
    shutil.copytree(EXAMPLE, dest, ignore=shutil.ignore_patterns("toolgate-out", "__pycache__"))
    return dest


def _err(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().err


def test_pin__short_hash_pasted__asks_for_the_full_sha256_and_toolgate_pin(
    example: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = example / "toolgate.yml"
    text = config.read_text()
    config.write_text(re.sub(r"sha256: [0-9a-f]{64}", "sha256: 3629eacf43e4", text))
    code, err = _err(capsys, "validate", "--config", str(config))
    assert code == 2
    assert "dataset.sha256: must be the dataset's full sha256 (64 lowercase hex digits)" in err
    assert "short hash" in err and "`toolgate pin`" in err
    assert "String should match pattern" not in err


def test_pin__edited_pin__says_pin_and_dataset_disagree(
    example: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = example / "toolgate.yml"
    config.write_text(re.sub(r"sha256: [0-9a-f]{64}", "sha256: " + "ab" * 32, config.read_text()))
    code, err = _err(capsys, "validate", "--config", str(config))
    assert code == 2 and "the pin and the dataset disagree" in err
    assert "if the pin was edited, restore it" in err


@pytest.mark.parametrize("command", ["validate", "check"])
def test_dataset_path__typo__config_line_and_did_you_mean(
    example: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    config = example / "toolgate.yml"
    text = config.read_text()
    config.write_text(text.replace("path: dataset.jsonl", "path: datset.jsonl"))
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "path: dataset.jsonl" in t)
    argv = [command, "--config", str(config)]
    if command == "check":
        argv += ["--out", str(example / "out")]
    code, err = _err(capsys, *argv)
    assert code == 2
    assert f"toolgate.yml:{line}: dataset.path: no such file" in err
    assert "(did you mean 'dataset.jsonl'?)" in err


def test_report__given_a_runs_file__says_it_needs_results_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs.jsonl"
    runs.write_text('{"case_id": "a", "sample": 0, "turns": []}\n{"case_id": "b"}\n')
    code, err = _err(capsys, "report", str(runs))
    assert code == 2
    assert "this is a runs file" in err and "not a results.json" in err
    assert "invalid JSON" not in err


def test_score__given_results_json_as_runs__says_it_needs_a_runs_file(
    example: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = example / "results.json"
    results.write_text('{\n  "schema_version": 2,\n  "cases": []\n}\n')
    argv = ["score", "--config", str(example / "toolgate.yml"), "--runs", str(results)]
    code, err = _err(capsys, *argv, "--out", str(example / "out"))
    assert code == 2
    assert "(a results.json?), not a runs file" in err and "one run per line" in err


def test_dataset__case_wrapped_over_lines__says_one_case_per_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "cases.jsonl"
    data.write_text('{"id": "a", "user_input": "x",\n "expected_tool_calls": []}\n')
    code, err = _err(capsys, "validate", "--dataset", str(data))
    assert code == 2
    assert "cases.jsonl:1: " in err and "one case per line" in err


def test_docs__minimal_case__is_one_valid_jsonl_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "dataset.md").read_text()
    block = doc.split("A minimal case", 1)[1].split("```json\n", 1)[1].split("```", 1)[0]
    assert block.count("\n") == 1, "one line"
    (tmp_path / "tools.json").write_text((EXAMPLE / "tools.json").read_text())
    (tmp_path / "cases.jsonl").write_text(block)
    code, err = _err(capsys, "validate", "--dataset", str(tmp_path / "cases.jsonl"))
    assert code == 0, err


def test_dataset__missing_tools_file__said_once_with_the_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(EXAMPLE / "dataset.jsonl", tmp_path / "cases.jsonl")
    code, err = _err(capsys, "validate", "--dataset", str(tmp_path / "cases.jsonl"))
    assert code == 2
    lines = [x for x in err.splitlines() if "'@tools.json': no such file" in x]
    assert len(lines) == 1, err
    assert re.search(
        r"cases\.jsonl:1: .*\(and \d+ more cases reference it, lines 2–\d+\)", lines[0]
    )
