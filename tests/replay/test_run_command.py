"""`toolgate run` as a user runs it: a real process, a real pinned dataset, a real agent."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from gate.dataset import load_dataset
from gate.runsfile import read_runs
from tests.replay.helpers import LOOKUP_THEN_FINAL, write_agent

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "lookup_order",
            "description": "Look up an order.",
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
        },
    }
]


def _project(tmp_path: Path, n_cases: int = 4, *, pin: bool = True) -> Path:
    lines = [
        {
            "id": f"case-{i}",
            "user_input": f"where is ord_1? ({i})",
            "available_tools": TOOLS,
            "expected_tool_calls": [{"name": "lookup_order", "args": {"order_id": "ord_1"}}],
            "tool_responses": [
                {
                    "name": "lookup_order",
                    "args": {"order_id": "ord_1"},
                    "response": {"status": "shipped"},
                }
            ],
        }
        for i in range(n_cases)
    ]
    (tmp_path / "dataset.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    argv = write_agent(tmp_path, "agent", LOOKUP_THEN_FINAL)
    sha = load_dataset(tmp_path / "dataset.jsonl").sha256
    cfg = tmp_path / "toolgate.yml"
    cfg.write_text(
        "dataset:\n  path: dataset.jsonl\n"
        + (f"  sha256: {sha}\n" if pin else "")
        + f"agent:\n  kind: command\n  command: {json.dumps(argv)}\n  workers: 2\n"
        + "samples: 2\nconcurrency: 2\n"
    )
    return cfg


def _toolgate(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gate", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_run_command__pinned_dataset__one_record_per_case_sample(tmp_path: Path) -> None:
    cfg = _project(tmp_path)
    proc = _toolgate("run", "--config", str(cfg), "--out", "out", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    keys = sorted((r.case_id, r.sample) for _, r in read_runs(tmp_path / "out" / "runs.jsonl"))
    assert keys == [(f"case-{i}", s) for i in range(4) for s in range(2)]
    assert proc.stdout.startswith("wrote 8 run(s) to out/runs.jsonl in ")
    assert "toolgate run: 8/8 case-samples · 0 failed" in proc.stderr  # final progress line


def test_run_command__samples_shard_resume__flags_honoured(tmp_path: Path) -> None:
    cfg = _project(tmp_path, n_cases=8)
    first = _toolgate(
        "run",
        "--config",
        str(cfg),
        "--out",
        "out",
        "--samples",
        "1",
        "--shard",
        "1/2",
        cwd=tmp_path,
    )
    assert first.returncode == 0, first.stderr
    n1 = len(read_runs(tmp_path / "out" / "runs.jsonl"))
    again = _toolgate(
        "run", "--config", str(cfg), "--out", "out", "--samples", "1", "--resume", cwd=tmp_path
    )
    assert again.returncode == 0, again.stderr
    assert f"({n1} already recorded, skipped)" in again.stdout
    assert len(read_runs(tmp_path / "out" / "runs.jsonl")) == 8


def test_run_command__unpinned_dataset__exit_2_says_how_to_pin(tmp_path: Path) -> None:
    cfg = _project(tmp_path, pin=False)
    proc = _toolgate("run", "--config", str(cfg), "--out", "out", cwd=tmp_path)
    assert proc.returncode == 2
    assert "toolgate pin --config" in proc.stderr
    assert not (tmp_path / "out" / "runs.jsonl").exists()


def test_run_command__bad_shard__exit_2(tmp_path: Path) -> None:
    cfg = _project(tmp_path)
    proc = _toolgate("run", "--config", str(cfg), "--shard", "3/2", cwd=tmp_path)
    assert proc.returncode == 2 and "--shard must be i/n" in proc.stderr


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support-agent"


def test_run_command__support_agent_example__one_record_per_case_sample(tmp_path: Path) -> None:
    proc = _toolgate(
        "run", "--config", str(EXAMPLE / "toolgate.yml"), "--out", str(tmp_path), cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    dataset = load_dataset(EXAMPLE / "dataset.jsonl")
    runs = [r for _, r in read_runs(tmp_path / "runs.jsonl")]
    keys = sorted((r.case_id, r.sample) for r in runs)
    assert keys == sorted((c.id, s) for c in dataset.cases for s in range(3))
    assert all(r.error is None for r in runs), [r.error for r in runs if r.error][:3]
    assert sum(len(r.calls) for r in runs) > len(runs) // 2  # the agent really calls tools
