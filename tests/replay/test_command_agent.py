"""The command adapter against real worker subprocesses: the protocol, and every way a
worker can fail costing exactly one case-sample."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

import pytest

from gate.agents.command import ReplyIds
from gate.errors import ConfigError
from gate.replay.command import CommandPoolAgent
from gate.replay.frozen import ReplayBackend
from gate.replay.runner import run_all
from gate.replay.session import AgentFailure, Job, Session
from gate.runsfile import read_runs
from tests.replay.helpers import LOOKUP_THEN_FINAL, FakeDataset, case, config, write_agent

# Behaviour chosen by case id, so one worker pool sees good and bad cases in one run.
MISBEHAVING = """
def answer(msg, send, recv):
    cid = msg["case_id"]
    if cid == "crash":
        sys.stderr.write("Traceback: something broke in the agent\\n")
        sys.stderr.flush()
        sys.exit(3)
    if cid == "hang":
        time.sleep(60)
    if cid == "garbage":
        sys.stdout.write("thinking about it...\\n")
        sys.stdout.flush()
        return
    if cid == "flood":
        sys.stdout.write("x" * (9 * 1024 * 1024))
        sys.stdout.flush()
        time.sleep(60)
    if cid == "agent-error":
        send({"type": "error", "message": "model refused"})
        return
    if cid == "loop":
        while True:
            send({"type": "tool_calls", "calls": [{"name": "lookup_order",
                  "arguments": {"order_id": "ord_1"}}]})
            recv()
    if cid == "bad-args":
        send({"type": "tool_calls", "calls": [{"id": "a", "name": "lookup_order",
              "arguments": "{\\"order_id\\": "}]})
        res = recv()
        send({"type": "final", "content": json.dumps(res["results"])})
        return
    if cid == "unknown-type":
        send({"type": "thoughts", "text": "hmm"})
        return
    send({"type": "tool_calls", "calls": [{"id": "c1", "name": "lookup_order",
          "arguments": {"order_id": "ord_1"}}], "content": "let me check"})
    res = recv()
    send({"type": "final", "content": f"pid={os.getpid()} " + json.dumps(res["results"])})
"""


def _run(tmp_path: Path, ids: list[str], *, body: str = MISBEHAVING, samples: int = 1, **agent):
    argv = write_agent(tmp_path, "agent", body)
    cfg = config(
        tmp_path,
        {
            "kind": "command",
            "command": argv,
            "workers": 2,
            "timeout_s": 2,
            "step_budget": 3,
            **agent,
        },
        concurrency=2,
    )
    ds = FakeDataset([case(i) for i in ids])
    summary = run_all(
        cfg, ds, tmp_path / "out", samples=samples, shard=None, resume=False, progress=False
    )
    runs = {(r.case_id, r.sample): r for _, r in read_runs(tmp_path / "out" / "runs.jsonl")}
    return summary, runs


def test_command__good_agent__turns_results_usage_and_final_recorded(tmp_path: Path) -> None:
    summary, runs = _run(tmp_path, ["a", "b"], body=LOOKUP_THEN_FINAL, samples=2)
    assert summary.written == 4 and summary.errors == 0
    run = runs[("a", 1)]
    assert run.error is None
    assert run.final == "status: shipped"
    (turn,) = run.turns
    assert [(c.id, c.name, c.arguments) for c in turn.calls] == [
        ("c1", "lookup_order", {"order_id": "ord_1"})
    ]
    assert [(r.id, r.content, r.is_error) for r in turn.tool_results] == [
        ("c1", {"status": "shipped"}, False)
    ]
    assert run.usage == {"prompt_tokens": 5, "completion_tokens": 1}
    assert run.latency_ms is not None and run.latency_ms > 0


def test_command__each_failure__costs_one_case_sample_and_the_run_goes_on(tmp_path: Path) -> None:
    ids = ["ok-1", "crash", "ok-2", "hang", "garbage", "ok-3", "flood", "unknown-type", "ok-4"]
    summary, runs = _run(tmp_path, ids)
    assert summary.written == len(ids)
    for ok in ("ok-1", "ok-2", "ok-3", "ok-4"):
        assert runs[(ok, 0)].error is None, runs[(ok, 0)].error
    crash = runs[("crash", 0)].error or ""
    assert crash.startswith("crash: the worker exited with code 3 before answering (step 1)")
    assert "Traceback: something broke in the agent" in crash  # the stderr tail
    assert (runs[("hang", 0)].error or "").startswith(
        "timeout: the agent did not answer within 2s (step 1)"
    )
    assert (runs[("garbage", 0)].error or "").startswith(
        "protocol: stdout line is not JSON (invalid JSON: Expecting value (column 1)): "
        "'thinking about it...\\n'"
    )
    assert "stdout is for protocol messages only; write logs" in (runs[("garbage", 0)].error or "")
    # No pid: identical runs give identical errors, and so identical reports.
    assert all("pid" not in (r.error or "") for r in runs.values())
    assert (runs[("flood", 0)].error or "").startswith(
        "protocol: a stdout line longer than 8388608 bytes"
    )
    assert (runs[("unknown-type", 0)].error or "").startswith(
        "protocol: unknown message type 'thoughts'"
    )
    assert summary.error_kinds == {"crash": 1, "protocol": 3, "timeout": 1}


def test_command__agent_error_message__recorded_and_worker_kept(tmp_path: Path) -> None:
    argv = write_agent(tmp_path, "agent", MISBEHAVING)
    cfg = config(
        tmp_path, {"kind": "command", "command": argv, "workers": 1, "timeout_s": 5}, concurrency=1
    )
    ds = FakeDataset([case("ok-1"), case("agent-error"), case("ok-2")])
    run_all(cfg, ds, tmp_path / "out", samples=1, shard=None, resume=False, progress=False)
    runs = {r.case_id: r for _, r in read_runs(tmp_path / "out" / "runs.jsonl")}
    assert runs["agent-error"].error == "agent_error: model refused"
    pid = [r.final.split()[0] for r in (runs["ok-1"], runs["ok-2"]) if r.final]
    assert len(pid) == 2 and pid[0] == pid[1]  # the same worker served both


def test_command__crash__worker_restarted_with_new_pid(tmp_path: Path) -> None:
    argv = write_agent(tmp_path, "agent", MISBEHAVING)
    cfg = config(
        tmp_path, {"kind": "command", "command": argv, "workers": 1, "timeout_s": 5}, concurrency=1
    )
    ds = FakeDataset([case("ok-1"), case("crash"), case("ok-2")])
    run_all(cfg, ds, tmp_path / "out", samples=1, shard=None, resume=False, progress=False)
    runs = {r.case_id: r for _, r in read_runs(tmp_path / "out" / "runs.jsonl")}
    pids = [(runs[c].final or "").split()[0] for c in ("ok-1", "ok-2")]
    assert pids[0].startswith("pid=") and pids[0] != pids[1]


def test_command__step_budget__over_budget_turn_recorded_and_error(tmp_path: Path) -> None:
    _, runs = _run(tmp_path, ["loop", "ok-1"])
    run = runs[("loop", 0)]
    assert (
        run.error == "step_budget: the agent asked for tool-calling turn 4 with a step budget of 3"
    )
    assert len(run.turns) == 4
    assert [len(t.tool_results) for t in run.turns] == [1, 1, 1, 0]
    assert runs[("ok-1", 0)].error is None


def test_command__invalid_json_arguments__parse_failure_kept_and_error_result(
    tmp_path: Path,
) -> None:
    _, runs = _run(tmp_path, ["bad-args"])
    run = runs[("bad-args", 0)]
    (call,) = run.calls
    assert (call.parse_ok, call.arguments, call.raw_arguments) == (False, None, '{"order_id": ')
    (result,) = run.turns[0].tool_results
    assert result.is_error
    assert result.content == {"error": "the arguments of lookup_order are not a valid JSON object"}


def test_command__unrecorded_call__agent_told_and_run_counts_it(tmp_path: Path) -> None:
    body = """
def answer(msg, send, recv):
    send({"type": "tool_calls", "calls": [{"id": "x", "name": "lookup_order",
          "arguments": {"order_id": "nope"}}]})
    res = recv()
    send({"type": "final", "content": json.dumps(res)})
"""
    summary, runs = _run(tmp_path, ["miss"], body=body)
    final = runs[("miss", 0)].final or ""
    assert '"toolgate_unrecorded": true' in final and '"is_error": true' in final
    assert summary.unrecorded_calls == 1
    assert summary.misses == (
        'case miss: no frozen response for lookup_order({"order_id": "nope"}); '
        'nearest recorded call: lookup_order({"order_id": "ord_1"})',
    )


def test_command__start_message__carries_case_sample_seed_messages_tools(tmp_path: Path) -> None:
    body = """
def answer(msg, send, recv):
    send({"type": "final", "content": json.dumps(msg)})
"""
    _, runs = _run(tmp_path, ["a"], body=body, samples=2)
    start = __import__("json").loads(runs[("a", 1)].final or "{}")
    assert start["type"] == "start" and start["case_id"] == "a" and start["sample"] == 1
    assert isinstance(start["seed"], int)
    assert start["messages"] == [{"role": "user", "content": "where is my order ord_1?"}]
    assert [t["function"]["name"] for t in start["tools"]] == ["lookup_order", "issue_refund"]
    assert start["tools"][0]["type"] == "function"
    seed0 = __import__("json").loads(runs[("a", 0)].final or "{}")["seed"]
    assert seed0 != start["seed"]


def test_command__cannot_start__config_error_names_field(tmp_path: Path) -> None:
    cfg = config(tmp_path, {"kind": "command", "command": ["/nonexistent/agent-binary"]})
    with pytest.raises(ConfigError) as exc:
        run_all(
            cfg,
            FakeDataset([case("a")]),
            tmp_path / "out",
            samples=1,
            shard=None,
            resume=False,
            progress=False,
        )
    (problem,) = exc.value.problems
    assert problem.field == "agent.command"
    assert "cannot start the agent '/nonexistent/agent-binary'" in problem.message


def test_command__output_between_cases__worker_replaced_without_charging_next_case(
    tmp_path: Path,
) -> None:
    body = """
def answer(msg, send, recv):
    send({"type": "final", "content": str(os.getpid())})
    send({"type": "final", "content": "an extra line nobody asked for"})
"""
    argv = write_agent(tmp_path, "agent", body)
    cfg = config(tmp_path, {"kind": "command", "command": argv, "workers": 1, "timeout_s": 5})
    agent = CommandPoolAgent(cfg, cfg.agent)  # type: ignore[arg-type]
    agent.prepare(2)
    try:
        finals = []
        for cid in ("a", "b"):
            job = Job(case(cid), 0, seed=1, step_budget=3, timeout_s=5)
            session = Session(job, ReplayBackend(job.case))
            agent.run(job, session)
            finals.append(session.final)
            time.sleep(0.3)  # the stray line is in the queue before the next case
    finally:
        agent.close()
    assert finals[0] != finals[1] and all(f and f.isdigit() for f in finals)
    assert agent.restarts == 1


def test_command__drain__keeps_a_worker_for_each_job_not_yet_started(tmp_path: Path) -> None:
    body = """
def answer(msg, send, recv):
    send({"type": "final", "content": str(os.getpid())})
"""
    argv = write_agent(tmp_path, "agent", body)
    cfg = config(tmp_path, {"kind": "command", "command": argv, "workers": 2, "timeout_s": 5})
    agent = CommandPoolAgent(cfg, cfg.agent)  # type: ignore[arg-type]
    agent.prepare(2)  # two jobs, two workers
    started = {str(w.proc.pid) for w in agent._all}
    try:

        def run(cid: str) -> str | None:
            job = Job(case(cid), 0, seed=1, step_budget=3, timeout_s=5)
            session = Session(job, ReplayBackend(job.case))
            agent.run(job, session)
            return session.final

        first = run("a")
        # Another runner thread finds no work left while job "b" is taken but not started:
        # one idle worker is retired, the other is kept for "b" (no new process for it).
        agent.drain()
        second = run("b")
        agent.drain()  # every job started: the last idle worker is retired too
    finally:
        agent.close()
    assert {first, second} <= started  # "b" ran on a worker started up front
    assert agent.restarts == 0


def test_command__close__workers_whose_grandchild_holds_stderr__one_grace_period(
    tmp_path: Path,
) -> None:
    # Each worker starts a detached grandchild (its own session: the worker's process-group
    # kill misses it) that keeps the worker's stderr open, so no stderr reader sees EOF.
    pids = tmp_path / "grandchildren"
    body = f"""
import subprocess
_g = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                      start_new_session=True)
with open({str(pids)!r}, "a") as fh:
    fh.write(f"{{_g.pid}}\\n")

def answer(msg, send, recv):
    send({{"type": "final", "content": "ok"}})
"""
    argv = write_agent(tmp_path, "agent", body)
    cfg = config(tmp_path, {"kind": "command", "command": argv, "workers": 4, "timeout_s": 5})
    agent = CommandPoolAgent(cfg, cfg.agent)  # type: ignore[arg-type]
    agent.prepare(4)
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and (
            not pids.exists() or len(pids.read_text().split()) < 4
        ):
            time.sleep(0.05)
        started = time.monotonic()
        agent.close()
        took = time.monotonic() - started
    finally:
        for pid in pids.read_text().split() if pids.exists() else []:
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGKILL)
    assert took < 2.5, f"close took {took:.1f}s: each worker waited for its stderr in turn"


@pytest.mark.parametrize(
    ("choice", "runs_path_python"),
    [("toolgate", False), ("path", True), (None, False)],
)
def test_command__bare_python__agent_python_chooses_toolgates_or_paths_interpreter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, choice: str | None, runs_path_python: bool
) -> None:
    """``agent.python`` decides what a bare ``python`` runs: ToolGate's interpreter (the
    default) or the one on PATH — here a wrapper that marks the environment, then runs
    the real interpreter."""
    import sys

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "python"
    wrapper.write_text(f'#!/bin/sh\nTOOLGATE_TEST_PATH_PYTHON=1 exec {sys.executable} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    body = """
def answer(msg, send, recv):
    send({"type": "final", "content": os.environ.get("TOOLGATE_TEST_PATH_PYTHON", "toolgate")})
"""
    argv = write_agent(tmp_path, "agent", body)
    agent: dict[str, object] = {"kind": "command", "command": ["python", *argv[1:]]}
    if choice is not None:
        agent["python"] = choice
    cfg = config(tmp_path, agent, concurrency=1)
    run_all(
        cfg, FakeDataset([case("a")]), tmp_path / "out", samples=1, shard=None, resume=False,
        progress=False,
    )  # fmt: skip
    ((_, run),) = list(read_runs(tmp_path / "out" / "runs.jsonl"))
    assert run.error is None, run.error
    assert run.final == ("1" if runs_path_python else "toolgate")


# ─── replies name their case-sample ───────────────────────────────────────────

NO_IDS = """
def answer(msg, send, recv):
    send({"type": "tool_calls", "calls": [{"id": "c1", "name": "lookup_order",
          "arguments": {"order_id": "ord_1"}}]}, ids=False)
    res = recv()
    send({"type": "final", "content": "status: " + res["results"][0]["content"]["status"]},
         ids=False)
"""

LATE_LINE_OF_PREVIOUS_CASE = """
def answer(msg, send, recv):
    send({"type": "final", "content": msg["case_id"] + " done"})
    if msg["case_id"] == "a":
        time.sleep(0.5)  # then a late line of case a, once case b has started
        send({"type": "final", "content": "a again"})
"""


def test_command__reply_without_ids__protocol_error_says_to_echo_them(tmp_path: Path) -> None:
    _, runs = _run(tmp_path, ["a", "b"], body=NO_IDS)
    for cid in ("a", "b"):
        error = runs[(cid, 0)].error or ""
        assert error.startswith("protocol: a 'tool_calls' reply without case_id (step 1)"), error
        assert "echo the case_id and sample of the start message in every reply" in error
        assert 'agent.reply_ids: "optional"' in error


def test_command__reply_ids_optional__replies_without_ids_accepted(tmp_path: Path) -> None:
    _, runs = _run(tmp_path, ["a", "b"], body=NO_IDS, reply_ids=ReplyIds.OPTIONAL)
    assert all(r.error is None and r.final == "status: shipped" for r in runs.values())


@pytest.mark.parametrize("mode", ["required", "optional"])
def test_command__late_line_of_previous_case__dropped_never_the_next_cases_outcome(
    tmp_path: Path, mode: str
) -> None:
    """The late line names case a: it is neither case b's answer nor b's failure (a
    protocol error charged to b once made b a likely regression); b is answered as if it
    never came, and the worker, out of step with its cases, is replaced after b."""
    argv = write_agent(tmp_path, "agent", LATE_LINE_OF_PREVIOUS_CASE)
    cfg = config(
        tmp_path,
        {
            "kind": "command",
            "command": argv,
            "workers": 1,
            "timeout_s": 5,
            "reply_ids": ReplyIds(mode),
        },
    )
    agent = CommandPoolAgent(cfg, cfg.agent)  # type: ignore[arg-type]
    agent.prepare(2)
    errors: list[str | None] = []
    finals: list[str | None] = []
    try:
        for cid in ("a", "b"):
            job = Job(case(cid), 0, seed=1, step_budget=3, timeout_s=5)
            session = Session(job, ReplayBackend(job.case))
            try:
                agent.run(job, session)
                errors.append(None)
            except AgentFailure as failure:
                errors.append(str(failure))
            finals.append(session.final)
    finally:
        agent.close()
    assert errors == [None, None], errors
    assert finals == ["a done", "b done"]
    assert agent.restarts == 1


def test_config__reply_ids_unknown_value__located_error(tmp_path: Path) -> None:
    from gate.config import load_config

    path = tmp_path / "toolgate.yml"
    path.write_text(
        "dataset: {path: d.jsonl}\nagent:\n  kind: command\n  command: [x]\n  reply_ids: maybe\n",
        "utf-8",
    )
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    (problem,) = exc.value.problems
    assert (problem.line, problem.field) == (5, "agent.reply_ids"), problem


def test_command__agent_python_names_an_interpreter__a_bare_python_runs_it(
    tmp_path: Path,
) -> None:
    """``agent.python: <path>`` (relative to the config's folder): a bare ``python`` in
    the command is that interpreter — here a fresh virtualenv's."""
    import subprocess
    import sys

    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "env")], check=True
    )
    body = """
def answer(msg, send, recv):
    send({"type": "final", "content": sys.prefix})
"""
    argv = write_agent(tmp_path, "agent", body)
    agent = {"kind": "command", "command": ["python", *argv[1:]], "python": "env/bin/python"}
    cfg = config(tmp_path, agent, concurrency=1)
    run_all(
        cfg, FakeDataset([case("a")]), tmp_path / "out", samples=1, shard=None, resume=False,
        progress=False,
    )  # fmt: skip
    ((_, run),) = list(read_runs(tmp_path / "out" / "runs.jsonl"))
    assert run.error is None, run.error
    assert run.final == str(tmp_path / "env")
