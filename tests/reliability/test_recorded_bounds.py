"""A sample records what a live agent may record, whoever produced it: the step budget
bounds the tool-calling turns and :data:`gate.replay.session.MAX_BATCH_CALLS` the calls of
one turn, for a live agent and for a replayed runs file alike; the runs file's reader
keeps at most :data:`gate.runsfile.MAX_RUN_CALLS` calls of a line, so a line of a million
calls costs what the kept ones cost (``/usr/bin/time -v`` on one: 177 s and 5.2 GB before,
11 s and 0.8 GB after; the figures are in the commit that bounded it).

``toolgate check`` runs as a real process, with a ``replay`` agent over a real file and a
real ``command`` agent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gate.replay.session import MAX_BATCH_CALLS
from gate.runsfile import MAX_RUN_CALLS
from tests.reliability.helpers import assert_clean_exit, case, project, toolgate
from tests.reliability.test_recorded_depth import scripted

CALL = {"name": "lookup_order", "arguments": {"order_id": "ord_10482"}}


def replay(tmp_path: Path, runs: list[dict[str, Any]], step_budget: int = 10) -> list[Any]:
    project(
        tmp_path,
        [case(id="c1")],
        f"  kind: replay\n  runs: given.jsonl\n  step_budget: {step_budget}\n",
        samples=1,
    )
    (tmp_path / "given.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    proc = toolgate(
        "check", "--config", "toolgate.yml", "--out", "out", "--baseline", "none", cwd=tmp_path
    )
    assert_clean_exit(proc, 0)
    return [json.loads(x) for x in (tmp_path / "out" / "runs.jsonl").read_text().splitlines()]


def test_replay__a_line_past_the_readers_bound__kept_up_to_it_and_failed(tmp_path: Path) -> None:
    run = {"case_id": "c1", "sample": 0, "turns": [{"calls": [CALL] * (MAX_RUN_CALLS + 5000)}]}
    (got,) = replay(tmp_path, [run])
    assert got["error"] == (
        f"step_budget: the run records {MAX_RUN_CALLS + 5000:,} tool calls; a sample records "
        f"at most {MAX_RUN_CALLS:,} (the first are kept)"
    )
    assert got["error_class"] == "agent"
    (turn,) = got["turns"]
    assert len(turn["calls"]) == MAX_BATCH_CALLS  # and one turn carries at most this many


def test_replay__a_turn_past_the_batch_bound__kept_up_to_it_and_failed(tmp_path: Path) -> None:
    run = {"case_id": "c1", "sample": 0, "turns": [{"calls": [CALL] * (MAX_BATCH_CALLS + 1)}]}
    (got,) = replay(tmp_path, [run])
    assert got["error"] == (
        f"step_budget: turn 1 carries {MAX_BATCH_CALLS + 1} tool calls; a turn carries at most "
        f"{MAX_BATCH_CALLS}"
    )
    assert len(got["turns"][0]["calls"]) == MAX_BATCH_CALLS


def test_replay__turns_past_the_step_budget__the_one_past_it_kept_and_failed(
    tmp_path: Path,
) -> None:
    run = {"case_id": "c1", "sample": 0, "turns": [{"calls": [CALL]} for _ in range(7)]}
    (got,) = replay(tmp_path, [run], step_budget=3)
    assert got["error"] == (
        "step_budget: the agent asked for tool-calling turn 4 with a step budget of 3"
    )
    assert len(got["turns"]) == 4


def test_replay__within_the_budget__as_recorded(tmp_path: Path) -> None:
    run = {"case_id": "c1", "sample": 0, "turns": [{"calls": [CALL]} for _ in range(3)]}
    (got,) = replay(tmp_path, [run], step_budget=3)
    assert got["error"] is None and len(got["turns"]) == 3


def test_command_agent__a_turn_past_the_batch_bound__recorded_up_to_it_and_failed(
    tmp_path: Path,
) -> None:
    calls = [{**CALL, "id": f"c{i}"} for i in range(MAX_BATCH_CALLS + 72)]
    scripted(tmp_path, [{"type": "tool_calls", "calls": calls}, {"type": "final", "content": "x"}])
    proc = toolgate(
        "check", "--config", "toolgate.yml", "--out", "out", "--baseline", "none", cwd=tmp_path
    )
    assert_clean_exit(proc, 0)
    (got,) = [json.loads(x) for x in (tmp_path / "out" / "runs.jsonl").read_text().splitlines()]
    assert got["error"].startswith(
        f"step_budget: the agent sent {MAX_BATCH_CALLS + 72} tool calls in one turn; a turn "
        f"carries at most {MAX_BATCH_CALLS}"
    )
    assert len(got["turns"][0]["calls"]) == MAX_BATCH_CALLS
