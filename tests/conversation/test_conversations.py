"""Conversations on every agent kind: the three-turn refund of ``tests/conversation/``
(a clarifying question, a verification, an action) through real ``toolgate check`` runs —
real agent processes for ``command`` and ``python``, a local OpenAI-compatible server
for ``openai``, the runs file of one of them for ``replay``.

Each test checks what a user would look at: the runs file (each user turn's message on
the first assistant turn after it, each turn's answer), the per-turn scores in
results.json, and what the reports say when a turn breaks.
"""

from __future__ import annotations

import io
import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gate.dataset import load_dataset
from gate.pipeline import CheckOptions, check
from gate.report import render_comment, render_console
from gate.results import Results
from tests.conversation.support import HERE, decide
from tests.servers.openai_server import FakeOpenAIServer, Response, chat_completion, tool_call

ROOT = HERE.parents[1]
AGENTS = HERE / "agents"
TURN3 = "Yes, please refund it."
RULES = (
    "scoring:\n  required_before:\n    - tool: issue_refund\n      preceded_by: [verify_identity]\n"
)


def _project(root: Path, agent: str, *, dataset: str = "dataset.jsonl", extra: str = "") -> Path:
    """A project folder: the conversation dataset, its tools, a pinned config."""
    shutil.copy(HERE / dataset, root / dataset)
    shutil.copy(HERE / "tools.json", root / "tools.json")
    sha = load_dataset(root / dataset).sha256
    config = root / "toolgate.yml"
    config.write_text(
        "name: conversations\n"
        f"dataset: {{path: {dataset}, sha256: {sha}}}\n"
        f"agent: {agent}\n"
        "samples: 2\n"
        "concurrency: 2\n" + RULES + extra
    )
    return config


def _check(config: Path, out: Path, *, resume: bool = False) -> Results:
    got = check(
        CheckOptions(
            config_path=config,
            out=out,
            baseline="none",
            progress=False,
            comment=False,
            resume=resume,
        ),
        {"PATH": "", "TG_KEY": "sk-test"},
        io.StringIO(),
    )
    return got.results


def _runs(out: Path) -> list[dict[str, Any]]:
    lines = (out / "runs.jsonl").read_text().splitlines()
    return sorted((json.loads(line) for line in lines), key=lambda r: r["sample"])


def _command(script: str, *variant: str) -> str:
    argv = [sys.executable, str(AGENTS / script), *variant]
    return "{kind: command, timeout_s: 20, command: " + json.dumps(argv) + "}"


def _python(name: str) -> str:
    return (
        "{kind: python, timeout_s: 20, "
        f'callable: "tests.conversation.agents.callable_agent:{name}", path: ["{ROOT}"]}}'
    )


def _model(variant: str) -> Any:
    """The support agent as a chat model: each request's messages are the conversation
    so far; it answers with the next step."""

    def script(body: Any, _index: int) -> Response:
        step = decide(body["messages"], variant)
        if "calls" in step:
            calls = [tool_call(c["name"], c["arguments"]) for c in step["calls"]]
            return Response(body=chat_completion(tool_calls=calls))
        return Response(body=chat_completion(content=step.get("content")))

    return script


@pytest.fixture
def good_model() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(_model("good")) as server:
        yield server


@pytest.fixture
def forbidden_model() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(_model("forbidden")) as server:
        yield server


def _openai(server: FakeOpenAIServer) -> str:
    return (
        f"{{kind: openai, model: support-1, base_url: '{server.base_url}', api_key_env: TG_KEY, "
        "temperature: 0, timeout_s: 20}"
    )


def _kinds(request: pytest.FixtureRequest, kind: str, variant: str) -> str:
    if kind == "command-stateless":
        return _command("stateless_agent.py", variant)
    if kind == "command-stateful":
        return _command("stateful_agent.py", variant)
    if kind == "python":
        return _python(variant)
    server: FakeOpenAIServer = request.getfixturevalue(f"{variant}_model")
    return _openai(server)


KINDS = ["command-stateless", "command-stateful", "python", "openai"]


def _assert_three_turns_recorded(run: dict[str, Any]) -> None:
    """The runner's record of the good conversation: five assistant turns — the
    question, the verification and its answer, the refund and its answer — each user
    turn's message on its first."""
    turns = run["turns"]
    assert [t.get("user") for t in turns] == [
        "I'd like a refund for order ord_1, please.",
        "Sure, it's ana@example.com",
        None,
        TURN3,
        None,
    ]
    assert [[c["name"] for c in t["calls"]] for t in turns] == [
        [],
        ["verify_identity"],
        [],
        ["issue_refund"],
        [],
    ]
    assert turns[0]["content"].startswith("Happy to help")
    assert turns[1]["tool_results"][0]["content"] == {"verified": True}
    assert run["final"] == turns[-1]["content"] == "Done: the refund is on its way."
    assert run["error"] is None


@pytest.mark.parametrize("kind", KINDS)
def test_three_turn_conversation__every_agent_kind__each_turn_scored_where_it_happened(
    tmp_path: Path, kind: str, request: pytest.FixtureRequest
) -> None:
    out = tmp_path / "out"
    results = _check(_project(tmp_path, _kinds(request, kind, "good")), out)

    runs = _runs(out)
    assert [r["sample"] for r in runs] == [0, 1]
    for run in runs:
        _assert_three_turns_recorded(run)
    assert results.verdict is not None and results.verdict.passed
    (case,) = results.cases
    assert case.passed and case.pass_rate == 1.0
    names = results.metric_names
    for s in case.samples:
        assert s.turns_passed == 3 and s.first_failing_turn is None
        assert s.turns is not None
        assert [t.called for t in s.turns] == [[], ["verify_identity"], ["issue_refund"]]
        assert [t.user for t in s.turns][2] == TURN3
        first = dict(zip(names, s.turns[0].scores, strict=True))
        assert first["no_tool_respected"] == 1.0  # turn 1: the clarifying question
        assert first["call_accuracy"] is None  # n/a: the turn expects no call
        second = dict(zip(names, s.turns[1].scores, strict=True))
        assert second["call_accuracy"] == 1.0 and second["no_tool_respected"] is None
        whole = dict(zip(names, s.scores, strict=True))
        assert whole["call_accuracy"] == 1.0  # the mean of turns 2 and 3
        assert whole["case_passed"] == 1.0
    assert not results.hard_failures  # the refund in turn 3 follows turn 2's verification
    assert results.per_tool["issue_refund"].recall == 1.0
    assert results.pass_hat and results.pass_hat[-1] == 1.0  # pass^k at k = its samples


@pytest.mark.parametrize("kind", ["command-stateless", "python", "openai"])
def test_must_not_call_in_turn_2__ends_the_conversation_and_fails_the_case(
    tmp_path: Path, kind: str, request: pytest.FixtureRequest
) -> None:
    out = tmp_path / "out"
    results = _check(_project(tmp_path, _kinds(request, kind, "forbidden")), out)

    for run in _runs(out):
        users = [t.get("user") for t in run["turns"] if t.get("user")]
        assert users == ["I'd like a refund for order ord_1, please.", "Sure, it's ana@example.com"]
        assert "turn 2 of 3 called delete_account" in run["meta"]["conversation_ended"]
        assert run["error"] is None  # ended by the runner, not an agent failure
    assert results.verdict is not None and not results.verdict.passed
    (case,) = results.cases
    assert not case.passed
    for s in case.samples:
        assert s.first_failing_turn == 2 and s.turns_passed == 1
        assert s.turns is not None
        assert [t.ran for t in s.turns] == [True, True, False]
        assert "must_not_call" in s.turns[1].failed_checks
        assert s.turns[2].failed_checks == ["turn_reached"]
    assert {h.kind for h in results.hard_failures} == {"must_not_call"}
    assert all(h.message.startswith("turn 2 of 3 (the user: “Sure") for h in results.hard_failures)
    console = render_console(results)
    assert "delete_account()  turn 2 of 3 (the user: “Sure, it's ana@example.com”)" in console
    comment = render_comment(results)
    assert "turn 2 of 3 \\(the user: “Sure, it's ana@\u200bexample.com”\\)" in comment


def test_stateful_agent__must_not_call_in_turn_2__never_gets_turn_3(tmp_path: Path) -> None:
    log = tmp_path / "messages.jsonl"
    config = _project(
        tmp_path,
        "{kind: command, timeout_s: 20, env: {TG_LOG: '"
        + str(log)
        + "'}, command: "
        + json.dumps([sys.executable, str(AGENTS / "stateful_agent.py"), "log"])
        + "}",
    )
    results = _check(config, tmp_path / "out")
    assert results.cases[0].passed
    got = [json.loads(line) for line in log.read_text().splitlines()]
    users = [m for m in got if m["type"] == "user"]
    # each user message carries the whole conversation so far, this turn last
    for m in users:
        assert m["messages"][-1] == {"role": "user", "content": m["content"]}
        assert m["messages"][0]["content"] == "I'd like a refund for order ord_1, please."
    turn3 = [m for m in users if m["content"] == TURN3]
    assert len(turn3) == 2
    assert [x["role"] for x in turn3[0]["messages"]] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]

    log.unlink()
    forbidden = _project(
        tmp_path,
        "{kind: command, timeout_s: 20, env: {TG_LOG: '"
        + str(log)
        + "'}, command: "
        + json.dumps([sys.executable, str(AGENTS / "stateless_agent.py"), "forbidden"])
        + "}",
    )
    results = _check(forbidden, tmp_path / "out2")
    assert results.cases[0].samples[0].first_failing_turn == 2


def test_agent_crash_in_turn_2__turn_1_passes_and_the_case_fails_at_turn_2(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    results = _check(_project(tmp_path, _command("stateful_agent.py", "crash2")), out)
    for run in _runs(out):
        assert run["error"].startswith("crash:")
        assert run["turns"][-1] == {
            "calls": [],
            "content": None,
            "tool_results": [],
            "user": "Sure, it's ana@example.com",
        }
    (case,) = results.cases
    for s in case.samples:
        assert s.first_failing_turn == 2
        assert s.turns is not None and s.turns[0].passed
        assert "agent_error" in s.turns[1].failed_checks
        assert not s.turns[2].ran
    console = render_console(results)
    assert "turn 2 of 3 (the user: “Sure, it's ana@example.com”)" in console


def test_verification_after_the_refund__required_before_fails_in_turn_1(tmp_path: Path) -> None:
    results = _check(_project(tmp_path, _command("stateless_agent.py", "eager")), tmp_path / "o")
    assert {h.kind for h in results.hard_failures} == {"required_before"}
    assert all(h.message.startswith("turn 1 of 3") for h in results.hard_failures)
    assert results.cases[0].samples[0].first_failing_turn == 1


def test_step_budget__counts_per_user_turn(tmp_path: Path) -> None:
    # one tool-calling turn per user turn fits a budget of 1 in each
    agent = _command("stateless_agent.py").replace("timeout_s: 20", "timeout_s: 20, step_budget: 1")
    results = _check(_project(tmp_path, agent), tmp_path / "out")
    assert results.cases[0].passed


def test_csv_and_jsonl__the_same_scores(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    agent = _command("stateless_agent.py", "wrong_email")
    jsonl = _check(_project(tmp_path / "a", agent), tmp_path / "a" / "out")
    csv = _check(_project(tmp_path / "b", agent, dataset="dataset.csv"), tmp_path / "b" / "out")
    for x, y in zip(jsonl.cases[0].samples, csv.cases[0].samples, strict=True):
        assert x.scores == y.scores
        assert x.turns == y.turns
        assert x.evidence == y.evidence
    assert jsonl.cases[0].samples[0].first_failing_turn == 2
    assert jsonl.cases[0].hash == csv.cases[0].hash


def test_replay__the_runs_of_a_conversation__scored_the_same(tmp_path: Path) -> None:
    first = _check(_project(tmp_path, _command("stateless_agent.py")), tmp_path / "out")
    runs = tmp_path / "recorded.jsonl"
    shutil.copy(tmp_path / "out" / "runs.jsonl", runs)
    replayed = _check(
        _project(tmp_path, "{kind: replay, runs: recorded.jsonl}"), tmp_path / "replayed"
    )
    assert [s.turns for s in replayed.cases[0].samples] == [s.turns for s in first.cases[0].samples]
    assert replayed.cases[0].passed


def test_replay__a_run_that_stops_after_turn_1__fails_at_turn_2(tmp_path: Path) -> None:
    _check(_project(tmp_path, _command("stateless_agent.py")), tmp_path / "out")
    cut = []
    for run in _runs(tmp_path / "out"):
        run["turns"] = run["turns"][:1]
        run["final"] = run["turns"][0]["content"]
        cut.append(json.dumps(run))
    (tmp_path / "cut.jsonl").write_text("\n".join(cut) + "\n")
    results = _check(_project(tmp_path, "{kind: replay, runs: cut.jsonl}"), tmp_path / "r")
    s = results.cases[0].samples[0]
    assert s.first_failing_turn == 2 and s.turns_passed == 1
    assert s.failed_checks == ["turn_reached"]
    assert "turn 2 of 3" in s.reasons["turn_reached"]


def test_resume__keeps_whole_conversations(tmp_path: Path) -> None:
    config = _project(tmp_path, _command("stateless_agent.py"))
    out = tmp_path / "out"
    _check(config, out)
    lines = (out / "runs.jsonl").read_text().splitlines()
    kept = lines[0]
    # a kill in the middle of writing the second conversation: half a line is left
    (out / "runs.jsonl").write_text(kept + "\n" + lines[1][: len(lines[1]) // 2])
    results = _check(config, out, resume=True)
    after = (out / "runs.jsonl").read_text().splitlines()
    assert after[0] == kept and len(after) == 2
    for line in after:
        _assert_three_turns_recorded(json.loads(line))
    assert results.cases[0].passed
