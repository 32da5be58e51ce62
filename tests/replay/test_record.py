"""`toolgate record`: real tools run once per distinct call; responses frozen into a
copy of the dataset; never in CI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gate.dataset import load_dataset
from gate.errors import UsageError
from gate.replay.record import record
from tests.replay import agents_py

HERE = Path(__file__).parent

ROWS = [
    {
        "id": "r1",
        "user_input": "status of ord_1 and ord_2, and refund ord_2",
        "available_tools": [
            {
                "name": "lookup_order",
                "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
            },
            {
                "name": "issue_refund",
                "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
            },
        ],
        "expected_tool_calls": [{"name": "lookup_order", "args": {"order_id": "ord_1"}}],
        "tool_responses": [
            {
                "name": "lookup_order",
                "args": {"order_id": "ord_1"},
                "response": {"status": "frozen"},
            }
        ],
    },
]


def _project(tmp_path: Path) -> Path:
    ds = tmp_path / "dataset.jsonl"
    ds.write_text(json.dumps(ROWS[0]) + "\n\n")
    cfg = tmp_path / "toolgate.yml"
    cfg.write_text(
        "dataset:\n  path: dataset.jsonl\nagent:\n  kind: python\n"
        f"  callable: agents_py:recording_agent\n  path: [{json.dumps(str(HERE))}]\n"
    )
    return cfg


def test_record__new_calls_run_once_and_are_appended_known_ones_replayed(tmp_path: Path) -> None:
    from gate.config import load_config

    cfg_path = _project(tmp_path)
    config = load_config(cfg_path)
    dataset = load_dataset(tmp_path / "dataset.jsonl")
    agents_py.REAL_CALLS.clear()
    summary = record(
        config, dataset.cases, tmp_path / "dataset.jsonl", tmp_path / "recorded.jsonl",
        agents_py.REGISTRY, environ={},
    )  # fmt: skip
    assert agents_py.REAL_CALLS == [("lookup_order", "ord_2"), ("issue_refund", "ord_2")]
    assert (summary.recorded, summary.tool_errors, summary.agent_errors) == (2, 1, ())
    lines = (tmp_path / "recorded.jsonl").read_text().split("\n")
    assert lines[1:] == ["", ""]  # the blank line and the final newline are kept
    row = json.loads(lines[0])
    assert row["tool_responses"] == [
        {"name": "lookup_order", "args": {"order_id": "ord_1"}, "response": {"status": "frozen"}},
        {"name": "lookup_order", "args": {"order_id": "ord_2"},
         "response": {"order_id": "ord_2", "status": "delivered"}},
        {"name": "issue_refund", "args": {"order_id": "ord_2"},
         "error": {"error": "RuntimeError: payments API returned 503"}},
    ]  # fmt: skip
    assert list(row) == list(ROWS[0])  # key order kept: a reviewable diff
    # the copy is a valid dataset whose frozen responses now answer every call
    assert len(load_dataset(tmp_path / "recorded.jsonl").cases[0].tool_responses) == 3


def test_record__ci_true__refuses(tmp_path: Path) -> None:
    from gate.config import load_config

    config = load_config(_project(tmp_path))
    with pytest.raises(UsageError, match="local use only"):
        record(
            config, (), tmp_path / "dataset.jsonl", tmp_path / "o.jsonl", {}, environ={"CI": "true"}
        )


def test_record_command__ci_true__exit_2_and_no_tool_runs(tmp_path: Path) -> None:
    cfg = _project(tmp_path)
    env = {**os.environ, "CI": "true"}
    proc = subprocess.run(
        [sys.executable, "-m", "gate", "record", "--config", str(cfg), "--tools",
         "agents_py:REGISTRY", "--out", str(tmp_path / "o.jsonl")],
        capture_output=True, text=True, env=env, cwd=HERE, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "refuses to run when CI=true" in proc.stderr
    assert not (tmp_path / "o.jsonl").exists()


def test_record_command__local__writes_copy(tmp_path: Path) -> None:
    cfg = _project(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    proc = subprocess.run(
        [sys.executable, "-m", "gate", "record", "--config", str(cfg), "--tools",
         "agents_py:REGISTRY", "--out", str(tmp_path / "o.jsonl")],
        capture_output=True, text=True, env=env, cwd=HERE, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("recorded 2 response(s) (1 error(s)) for 1 case(s) into ")
    assert len(load_dataset(tmp_path / "o.jsonl").cases[0].tool_responses) == 3
