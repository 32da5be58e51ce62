"""Conversations through the ``mcp`` adapter: a real agent process on the official MCP
Python SDK answers each user turn with a line on stdout and reads the next from stdin.

The case is ``tests/conversation``'s ``refund-3-turns`` (turn 1: a clarifying question, no
call; turn 2: ``verify_identity``; turn 3: ``issue_refund``), run by ``toolgate check``
(runs.jsonl and results.json) or by the runner alone (runs.jsonl).
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from gate import cli
from gate.dataset import load_dataset
from gate.model import Run, Turn
from gate.results import read_results
from gate.runsfile import iter_runs
from tests.conversation.support import ASK_EMAIL, REFUNDED, VERIFIED
from tests.mcp.helpers import AGENTS, error_kind, run_mcp, script_agent, sdk_agent

CONVERSATION = Path(__file__).resolve().parents[1] / "conversation"
AGENT = AGENTS / "conversation_agent.py"
CASE_ID = "refund-3-turns"
USERS = [
    "I'd like a refund for order ord_1, please.",
    "Sure, it's ana@example.com",
    "Yes, please refund it.",
]


def agent(variant: str = "good", mode: str = "keep", transport: str = "http") -> list[str]:
    return [sys.executable, str(AGENT), transport, variant, mode]


def project(tmp_path: Path, command: list[str], **agent_cfg: Any) -> Path:
    """The conversation case, pinned, with an ``mcp`` agent: the config's path."""
    for name in ("dataset.jsonl", "tools.json"):
        shutil.copy(CONVERSATION / name, tmp_path / name)
    sha = load_dataset(tmp_path / "dataset.jsonl").sha256
    agent = {"kind": "mcp", "command": command, "timeout_s": 60, **agent_cfg}
    lines = [
        f"dataset:\n  path: dataset.jsonl\n  sha256: {sha}\n",
        "samples: 1\npolicy:\n  max_extra_samples: 0\n",
        "agent:\n" + "".join(f"  {k}: {json.dumps(v)}\n" for k, v in agent.items()),
        "scoring:\n  required_before:\n"
        "    - {tool: issue_refund, preceded_by: [verify_identity]}\n",
    ]
    path = tmp_path / "toolgate.yml"
    path.write_text("".join(lines), encoding="utf-8")
    return path


def check(
    tmp_path: Path, command: list[str], **agent_cfg: Any
) -> tuple[Run, dict[str, Any], dict[str, Any]]:
    """``toolgate check`` of the conversation: its one run, its one results.json sample,
    and the whole results.json."""
    config = project(tmp_path, command, **agent_cfg)
    out = tmp_path / "out"
    code = cli.main(
        ["check", "--config", str(config), "--out", str(out), "--baseline", "none",
         "--no-progress"]
    )  # fmt: skip
    assert code in (0, 1), code  # passed or failed: never a run that decided nothing
    (run,) = [r for _, r in iter_runs(out / "runs.jsonl")]
    read_results(out / "results.json")  # valid against its model
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    (case,) = [c for c in results["cases"] if c["id"] == CASE_ID]
    (sample,) = case["samples"]
    assert isinstance(sample, dict)
    return run, sample, results


def run_only(tmp_path: Path, command: list[str], **agent_cfg: Any) -> Run:
    """The runner alone (no scoring): the conversation's one run."""
    from gate.config import load_config
    from gate.replay.runner import run_all

    cfg = load_config(project(tmp_path, command, **agent_cfg))
    summary = run_all(
        cfg,
        load_dataset(tmp_path / "dataset.jsonl"),
        tmp_path / "out",
        samples=1,
        shard=None,
        resume=False,
        progress=False,
    )
    (run,) = [r for _, r in iter_runs(summary.runs_path)]
    return run


def users(run: Run) -> list[str]:
    return [t.user for t in run.turns if t.user is not None]


def shape(run: Run) -> list[tuple[str | None, list[str], str | None]]:
    """Each recorded turn: the user message it starts with, its calls, its content."""
    return [(t.user, [c.name for c in t.calls], t.content) for t in run.turns]


def test_conversation__good_agent__every_turn_answered_scored_and_passed(tmp_path: Path) -> None:
    run, sample, results = check(tmp_path, agent("good"))
    assert run.error is None, run.error
    assert shape(run) == [
        (USERS[0], [], ASK_EMAIL),
        (USERS[1], ["verify_identity"], None),
        (None, [], VERIFIED),
        (USERS[2], ["issue_refund"], None),
        (None, [], REFUNDED),
    ]
    assert run.turns[1].calls[0].arguments == {"email": "ana@example.com"}
    assert run.turns[1].tool_results[0].content == {"verified": True}  # the turn's own
    assert run.final == REFUNDED
    assert run.meta is not None
    assert run.meta["mcp"] == {"exit_code": 0, "connections": 1, "connections_per_turn": [1, 0, 0]}
    assert sample["passed"] is True
    assert sample["turns_passed"] == 3 and sample["first_failing_turn"] is None
    assert [t["passed"] for t in sample["turns"]] == [True, True, True]
    names = results["metric_names"]
    assert all(len(t["scores"]) == len(names) for t in sample["turns"])
    assert [t["scores"][names.index("call_accuracy")] for t in sample["turns"]][1:] == [1.0, 1.0]
    assert results["hard_failures"] == []


def test_conversation__must_not_call_in_turn_2__ends_there_agent_gets_eof(
    tmp_path: Path,
) -> None:
    run, sample, results = check(tmp_path, agent("forbidden"))
    # not an agent error: ToolGate ended the conversation and the agent exited at EOF
    assert run.error is None, run.error
    assert users(run) == USERS[:2]  # turn 3 was never sent
    assert [c.name for c in run.calls] == ["delete_account"]
    assert run.meta is not None and run.meta["mcp"]["exit_code"] == 0
    assert "delete_account" in str(run.meta["conversation_ended"])
    assert sample["passed"] is False
    assert sample["first_failing_turn"] == 2 and sample["turns_passed"] == 1
    assert "must_not_call" in sample["failed_checks"]
    assert [t.get("ran", True) for t in sample["turns"]] == [True, True, False]
    assert [(h["kind"], h["call"]["name"]) for h in results["hard_failures"]] == [
        ("must_not_call", "delete_account")
    ]


@pytest.mark.parametrize(("status", "kind"), [(0, "protocol"), (3, "crash")])
def test_conversation__agent_exits_after_turn_1__error_and_fails_at_turn_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, status: int, kind: str
) -> None:
    monkeypatch.setenv("TOOLGATE_TEST_EXIT", str(status))
    run, sample, _ = check(tmp_path, agent("good", "exit_after_1"))
    assert error_kind(run) == kind, run.error
    assert "after answering 1 of 3 user turns" in (run.error or "")
    assert f"exited with code {status}" in (run.error or "")
    assert shape(run) == [(USERS[0], [], ASK_EMAIL), (USERS[1], [], None)]
    assert sample["passed"] is False and sample["first_failing_turn"] == 2
    assert [t["passed"] for t in sample["turns"]] == [True, False, False]


def test_conversation__not_json_line__protocol_error_calls_so_far_kept(tmp_path: Path) -> None:
    run = run_only(tmp_path, agent("good", "not_json"))
    assert error_kind(run) == "protocol", run.error
    assert "stdout line is not JSON" in (run.error or "")
    assert VERIFIED in (run.error or "")  # the line, shown
    assert shape(run) == [(USERS[0], [], ASK_EMAIL), (USERS[1], ["verify_identity"], None)]


def test_conversation__two_answer_lines_for_one_turn__protocol_error(tmp_path: Path) -> None:
    run = run_only(tmp_path, agent("good", "two_lines"))
    assert error_kind(run) == "protocol", run.error
    assert "second line after answering user turn 1" in (run.error or "")
    assert shape(run)[0] == (USERS[0], [], ASK_EMAIL)


def test_conversation__reconnects_every_turn__max_connections_counts_per_turn(
    tmp_path: Path,
) -> None:
    run = run_only(tmp_path, agent("good", "reconnect"))
    assert run.error is None, run.error
    assert users(run) == USERS
    assert run.meta is not None
    assert run.meta["mcp"]["connections"] == 3
    assert run.meta["mcp"]["connections_per_turn"] == [1, 1, 1]


def test_conversation__connection_kept_and_one_more_in_turn_2__one_new_in_that_turn(
    tmp_path: Path,
) -> None:
    run = run_only(tmp_path, agent("good", "twice"))
    assert run.error is None, run.error
    assert run.meta is not None and run.meta["mcp"]["connections_per_turn"] == [1, 1, 0]


def test_conversation__two_new_connections_in_one_turn__protocol_error_names_the_turn(
    tmp_path: Path,
) -> None:
    run = run_only(tmp_path, agent("good", "thrice"))
    assert error_kind(run) == "protocol", run.error
    assert "MCP connection 2 in user turn 2" in (run.error or "")
    assert "max_connections: 1" in (run.error or "")
    assert [c.name for c in run.calls] == []  # refused before the turn's call


def test_conversation__stdio_transport__kept_across_turns(tmp_path: Path) -> None:
    run = run_only(tmp_path, agent("good", "keep", transport="stdio"))
    assert run.error is None, run.error
    assert [c.name for c in run.calls] == ["verify_identity", "issue_refund"]
    assert run.final == REFUNDED


# Plain programs (no MCP client: its import alone takes seconds, longer than these
# tests' timeout_s): they answer each user turn they read without calling any tool.
ANSWER_THEN = """
import json, sys, time
def say(text):
    sys.stdout.write(json.dumps({"type": "final", "content": text}) + "\\n")
    sys.stdout.flush()
say("turn 1")
for turn, line in enumerate(sys.stdin, start=2):
    if %(hang)s and turn == 2:
        time.sleep(600)
    say(f"turn {turn}")
time.sleep(600)  # at end of file: never exits
"""


@pytest.mark.parametrize(
    ("hang", "says"),
    [
        (True, "no tool call, answer or exit within 1.5s (step 2, user turn 2 of 3)"),
        (False, "did not exit within 1.5s of the end of the conversation"),
    ],
)
def test_conversation__agent_stalls__bounded_timeout_answers_kept(
    tmp_path: Path, hang: bool, says: str
) -> None:
    t0 = time.monotonic()
    run = run_only(tmp_path, script_agent(tmp_path, ANSWER_THEN % {"hang": hang}), timeout_s=1.5)
    assert time.monotonic() - t0 < 20
    assert error_kind(run) == "timeout", run.error
    assert says in (run.error or "")
    assert run.turns[0] == Turn(content="turn 1", user=USERS[0])
    assert len(users(run)) == (2 if hang else 3)


def test_conversation__case_file__says_conversation_and_turns_one_turn_case_unchanged(
    tmp_path: Path,
) -> None:
    # a conversation agent checks "conversation": true and "turns" itself (it exits 1
    # otherwise: see the good-agent test); a one-turn case's document is as it was
    (run,) = run_mcp(tmp_path, sdk_agent("http", "case"))
    assert run.error is None
    assert sorted(json.loads(run.final or "{}")) == [
        "case_id",
        "message_history",
        "sample",
        "seed",
        "user_input",
    ]
    assert run.meta is not None and run.meta["mcp"] == {"exit_code": 0, "connections": 1}


def test_docs_example__mcp_conversation_agent__serves_both_kinds_of_case(tmp_path: Path) -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "agents"
    command = ["python", str(example / "mcp_conversation_agent.py")]
    run = run_only(tmp_path, command)
    assert run.error is None, run.error
    assert users(run) == USERS
    assert [c.arguments for c in run.calls] == [{"query": u} for u in USERS]
    assert [t.content for t in run.turns if not t.calls] == [
        'the tool said: {"verified":false}'
    ] * 3
    assert run.meta is not None and run.meta["mcp"]["connections_per_turn"] == [1, 0, 0]
    (tmp_path / "one").mkdir()
    (one,) = run_mcp(tmp_path / "one", command)  # a one-turn case: stdout is the answer
    assert one.error is None, one.error
    assert one.final == 'the tool said: {"status":"unknown order"}'


def test_docs_example__shown_in_agent_protocol_md__is_the_example_file() -> None:
    root = Path(__file__).resolve().parents[2]
    doc = (root / "docs" / "agent-protocol.md").read_text(encoding="utf-8")
    after = doc.index("[`examples/agents/mcp_conversation_agent.py`]")
    start = doc.index("```python\n", after) + len("```python\n")
    shown = doc[start : doc.index("```\n", start)]
    source = (root / "examples" / "agents" / "mcp_conversation_agent.py").read_text("utf-8")
    code = source[source.index('"""\n', 3) + 4 :].lstrip("\n")  # without its docstring
    assert shown == code
