"""Each reply answers the turn it was sent, and a late line of an earlier case never
changes another case's outcome; a conversation has at most 100 user turns.

``toolgate check`` runs as a real process with a real ``command`` agent
(``tests/reliability/agents/script_agent.py``): every message ToolGate sends names its
user turn (``turn``); a reply that names another turn, or an answer sent before its user
turn was, is a protocol error of that case; a line naming an earlier case-sample of the
worker is dropped — the case running is answered as if it never came (it was once charged
to it, which made it a likely regression).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from gate.dataset.validate import MAX_CONVERSATION_TURNS
from tests.reliability.helpers import TOOLS, assert_clean_exit, case, project, toolgate
from tests.reliability.test_recorded_depth import SCRIPT_AGENT

CALL = {"id": "x", "name": "lookup_order", "arguments": {"order_id": "ord_10482"}}
LOOKUP = {"name": "lookup_order", "args": {"order_id": "ord_10482"}}


def conversation(cid: str, turns: int = 2) -> dict[str, Any]:
    row: dict[str, Any] = {"id": cid, "available_tools": TOOLS, "must_not_call": ["delete_account"]}
    row["conversation"] = [
        {
            "user": f"turn {k}: where is order ord_10482?",
            "expected_tool_calls": [LOOKUP],
            "tool_responses": [{"name": "lookup_order", "response": {"status": "shipped"}}],
        }
        for k in range(1, turns + 1)
    ]
    return row


def run(
    root: Path,
    rows: list[dict[str, Any]],
    replies: list[Any],
    *,
    out: str = "out",
    baseline: str = "none",
    samples: int = 1,
) -> Any:
    script = root / f"{out}.script.json"
    script.write_text(json.dumps({"replies": replies}))
    agent = (
        "  kind: command\n"
        f"  command: {json.dumps([sys.executable, str(SCRIPT_AGENT)])}\n"
        "  workers: 1\n"
        "  timeout_s: 20\n"
        f"  env: {json.dumps({'SCRIPT': str(script)})}\n"
    )
    project(root, rows, agent, samples=samples, extra="")
    config = root / "toolgate.yml"
    config.write_text(config.read_text().replace("concurrency: 4", "concurrency: 1"))
    return toolgate(
        "check", "--config", "toolgate.yml", "--out", out, "--baseline", baseline, cwd=root
    )


def runs(root: Path, out: str = "out") -> dict[str, dict[str, Any]]:
    lines = (root / out / "runs.jsonl").read_text().splitlines()
    return {r["case_id"]: r for r in map(json.loads, lines)}


def test_conversation__every_turn_answered_in_order__passes(tmp_path: Path) -> None:
    proc = run(
        tmp_path,
        [conversation("conv")],
        [{"type": "tool_calls", "calls": [CALL]}, {"type": "final", "content": "shipped"}],
    )
    assert_clean_exit(proc, 0)
    assert runs(tmp_path)["conv"]["error"] is None


def test_conversation__answer_sent_before_its_user_turn__protocol_error(tmp_path: Path) -> None:
    """Two answers in one write, before ToolGate sent the second user turn: the second
    was once taken as turn 2's answer."""
    ids = {"case_id": "conv", "sample": 0}
    two = json.dumps({**ids, "type": "final", "content": "first"}) + "\n"
    two += json.dumps({**ids, "type": "final", "content": "ahead"})
    proc = run(tmp_path, [conversation("conv")], [two])
    assert_clean_exit(proc, 0)
    error = runs(tmp_path)["conv"]["error"]
    assert error.startswith(
        "protocol: the agent sent another line after its answer to user turn 1, before it "
        "was sent user turn 2: an answer to a user turn not yet sent"
    ), error


@pytest.mark.parametrize(("said", "words"), [(2, "not yet sent"), (0, "an earlier user turn")])
def test_conversation__reply_names_another_turn__protocol_error(
    tmp_path: Path, said: int, words: str
) -> None:
    proc = run(
        tmp_path,
        [conversation("conv")],
        [{"type": "final", "content": "x", "turn": said}],
    )
    assert_clean_exit(proc, 0)
    error = runs(tmp_path)["conv"]["error"]
    assert error.startswith(f"protocol: a 'final' reply for turn {said} while running turn 1"), (
        error
    )
    assert words in error


def test_late_line_of_an_earlier_case__the_next_case_and_the_verdict_unchanged(
    tmp_path: Path,
) -> None:
    """The base's agent answers once; the head's the same, then — 0.3 s after its answer
    — once more with the same case's ids, while the worker runs the next case. Once
    charged to that case (a protocol error, a likely regression against the base), it is
    now dropped: every case passes on both sides, and the verdicts agree."""
    rows = [case(id="a", expected_tool_calls=[LOOKUP]), case(id="b", expected_tool_calls=[LOOKUP])]
    answer = [{"type": "tool_calls", "calls": [CALL]}, {"type": "final", "content": "shipped"}]
    base = run(tmp_path, rows, answer, out="base", samples=2)
    assert_clean_exit(base, 0)
    late = [*answer, {"sleep": 0.3}, {"type": "final", "content": "stale"}]
    head = run(tmp_path, rows, late, out="head", baseline="base/results.json", samples=2)
    assert_clean_exit(head, 0)
    got = runs(tmp_path, "head")
    assert all(r["error"] is None and r["final"] == "shipped" for r in got.values()), got
    results = json.loads((tmp_path / "head" / "results.json").read_text())
    kinds = {f["case_id"]: f["kind"] for f in results["comparison"]["flips"]}
    assert "likely_regression" not in kinds.values() and "regression" not in kinds.values()
    assert all(c["passed"] for c in results["cases"])


def test_dataset__conversation_past_the_turn_bound__located_input_error(tmp_path: Path) -> None:
    rows = [conversation("long", MAX_CONVERSATION_TURNS + 1), conversation("ok", 3)]
    proc = validate(tmp_path, rows)
    assert_clean_exit(proc, 2)
    assert (
        f"dataset.jsonl:1: conversation: has {MAX_CONVERSATION_TURNS + 1} user turns; a case "
        f"has at most {MAX_CONVERSATION_TURNS}"
    ) in proc.stderr


def test_dataset__conversation_at_the_turn_bound__accepted(tmp_path: Path) -> None:
    proc = validate(tmp_path, [conversation("long", MAX_CONVERSATION_TURNS)])
    assert "conversation" not in proc.stderr and "Traceback" not in proc.stderr
    assert "dataset is not pinned" in proc.stderr  # it read the whole file, then this


def validate(root: Path, rows: list[dict[str, Any]]) -> Any:
    (root / "dataset.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (root / "none.jsonl").write_text("")
    (root / "toolgate.yml").write_text(
        "name: turns\ndataset:\n  path: dataset.jsonl\nagent:\n  kind: replay\n  runs: none.jsonl\n"
    )
    return toolgate("validate", "--config", "toolgate.yml", "--no-agent", cwd=root)
