"""`toolgate run` as a user runs it: a real process, a real pinned dataset, a real agent."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

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


def _project(
    tmp_path: Path,
    n_cases: int = 4,
    *,
    pin: bool = True,
    body: str = LOOKUP_THEN_FINAL,
    samples: int = 2,
) -> Path:
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
    argv = write_agent(tmp_path, "agent", body)
    sha = load_dataset(tmp_path / "dataset.jsonl").sha256
    cfg = tmp_path / "toolgate.yml"
    cfg.write_text(
        "dataset:\n  path: dataset.jsonl\n"
        + (f"  sha256: {sha}\n" if pin else "")
        + f"agent:\n  kind: command\n  command: {json.dumps(argv)}\n  workers: 2\n"
        + f"samples: {samples}\nconcurrency: 2\n"
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


SLOW = """
def answer(msg, send, recv):
    time.sleep(0.05)
    send({"type": "final", "content": "ok " + msg["case_id"]})
"""


def _default_sigint() -> None:
    """A shell that starts a job in the background makes it ignore SIGINT, and a child
    inherits that: give the gate the default disposition a terminal's Ctrl-C meets."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["SIGKILL", "SIGINT"])
def test_run_command__interrupted_then_resumed__nothing_lost_nothing_twice(
    tmp_path: Path, sig: signal.Signals
) -> None:
    cfg = _project(tmp_path, n_cases=40, body=SLOW, samples=1)
    proc = subprocess.Popen(
        [sys.executable, "-m", "gate", "run", "--config", str(cfg), "--out", "out",
         "--no-progress"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=_default_sigint,
    )  # fmt: skip
    runs_file = tmp_path / "out" / "runs.jsonl"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and (
        not runs_file.exists() or runs_file.read_bytes().count(b"\n") < 5
    ):
        time.sleep(0.05)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == (130 if sig == signal.SIGINT else -signal.SIGKILL), err
    before = runs_file.read_bytes()
    kept = [line for line in before.split(b"\n")[:-1]]  # complete lines survive the interruption
    assert 5 <= len(kept) < 40
    again = _toolgate("run", "--config", str(cfg), "--out", "out", "--resume", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    after = runs_file.read_bytes()
    assert after.startswith(b"\n".join(kept) + b"\n")  # recorded lines untouched
    keys = [(r.case_id, r.sample) for _, r in read_runs(runs_file)]
    assert sorted(keys) == [(f"case-{i}", 0) for i in sorted(range(40), key=lambda i: f"case-{i}")]
