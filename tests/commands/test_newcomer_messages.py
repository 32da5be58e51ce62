"""The messages a newcomer meets first, through the real command line: each says where it
looked and what to write instead."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gate.cli import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support-agent"


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    dest = tmp_path / "support-agent"
    shutil.copytree(EXAMPLE, dest, ignore=shutil.ignore_patterns("toolgate-out", "__pycache__"))
    monkeypatch.chdir(dest)
    return dest


def test_check__no_config__exit_2_with_validates_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = cli(capsys, "check")
    assert code == 2
    assert err == (
        "toolgate: error: no config file toolgate.yml\n"
        "toolgate: hint: Pass --config FILE, or create one with `toolgate init`.\n"
    )


def test_validate__script_misspelt__names_the_folder_and_the_nearest_file(
    example: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (example / "support").mkdir()
    shutil.move(str(example / "agent.py"), example / "support" / "agent.py")
    config = example / "toolgate.yml"
    config.write_text(config.read_text().replace('"agent.py"', '"support/agnet.py"'))
    code, _, err = cli(capsys, "validate")
    assert code == 2
    assert (
        "toolgate.yml:20: agent.command: python would run 'support/agnet.py', which is not in "
        f"the folder {example.resolve()} (did you mean 'support/agent.py'?)"
    ) in err


def test_validate__tools_file_without_its_at__suggests_the_at_form(
    example: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = (example / "dataset.jsonl").read_text().splitlines()
    case = json.loads(lines[0])
    case["available_tools"] = "tools.json"
    lines[0] = json.dumps(case)
    (example / "dataset.jsonl").write_text("\n".join(lines) + "\n")
    code, _, err = cli(capsys, "validate")
    assert code == 2
    assert (
        'dataset.jsonl:1: available_tools: must be an array of tools or an "@file.json" '
        "reference, not the string 'tools.json' (did you mean '@tools.json'? a file is named "
        "with @)"
    ) in err


def test_validate__expected_tool_not_offered__lists_the_tools_that_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    tool = {"name": "lookup_order", "parameters": {"type": "object", "properties": {}}}
    other = {"name": "send_email", "parameters": {"type": "object", "properties": {}}}
    case = {
        "id": "c1",
        "user_input": "hi",
        "available_tools": [tool, other],
        "expected_tool_calls": [{"name": "refund", "args": {}}],
    }
    (tmp_path / "cases.jsonl").write_text(json.dumps(case) + "\n")
    code, _, err = cli(capsys, "validate", "--dataset", "cases.jsonl")
    assert code == 2
    assert (
        "cases.jsonl:1: expected_tool_calls[0].name: 'refund' is not among available_tools; "
        "available: 'lookup_order', 'send_email'"
    ) in err
