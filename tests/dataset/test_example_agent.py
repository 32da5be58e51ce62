"""The example agent, driven over the real JSON-lines protocol (tests/dataset/agent_driver.py).

The good build should pass ~85-95 % of the example cases and fail the few it is built
to fail; the regressed build fails the refunds (no verification) and deletes accounts it
should only close; the flaky build fails some cases on some samples, deterministically.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gate.dataset import Dataset, load_dataset
from tests.dataset.agent_driver import AGENT, AgentProcess, Outcome

EXAMPLE = AGENT.parent
GOOD_AGENT_MISSES = {
    "refund-large-amount",  # "$1,299.00" read as 1
    "refund-broken-item",  # "broken" not recognised as damaged
    "address-change-uk",  # "United Kingdom" where the schema wants "GB"
    "notool-arrived-fine",  # looks up an order mentioned in passing
    "history-close-after-expired-code",  # trusts a verification that failed
}


@pytest.fixture(scope="module")
def dataset() -> Dataset:
    return load_dataset(EXAMPLE / "dataset.jsonl")


def run_all(
    dataset: Dataset, *args: str, samples: int = 1, seed: int = 0, env: dict[str, str] | None = None
) -> list[Outcome]:
    agent = AgentProcess(*args, env=env)
    try:
        return [
            agent.run_case(c, sample=s, seed=seed) for s in range(samples) for c in dataset.cases
        ]
    finally:
        assert agent.close() == 0


def test_agent__good__passes_most_cases_and_misses_the_planted_ones(dataset: Dataset) -> None:
    outcomes = run_all(dataset)
    rate = sum(o.passed for o in outcomes) / len(outcomes)
    assert 0.85 <= rate <= 0.95
    assert {o.case_id for o in outcomes if not o.passed} == GOOD_AGENT_MISSES
    assert all(o.error is None for o in outcomes)


def test_agent__good__parallel_and_multi_turn_shapes(dataset: Dataset) -> None:
    by_id = {o.case_id: o for o in run_all(dataset)}
    assert [len(t) for t in by_id["parallel-three-orders"].turns] == [3]
    assert [[c["name"] for c in t] for t in by_id["refund-not-received"].turns] == [
        ["verify_identity"],
        ["check_refund_eligibility"],
        ["issue_refund"],
    ]
    assert by_id["notool-greeting"].turns == [] and by_id["notool-greeting"].final


def test_agent__regressed__refunds_before_verifying_and_deletes_accounts(dataset: Dataset) -> None:
    outcomes = {o.case_id: o for o in run_all(dataset, "--variant", "regressed")}
    refunds = [
        c
        for c in dataset.cases
        # (the conversations run through the gate: tests/test_example_goldens.py)
        if not c.conversation
        and [e.name for e in c.expected_tool_calls][:1] == ["verify_identity"]
        and any(e.name == "issue_refund" for e in c.expected_tool_calls)
    ]
    assert len(refunds) >= 5
    for case in refunds:
        names = [c["name"] for c in outcomes[case.id].calls]
        # the refund first: any verification comes after it (too late to count)
        refund = names.index("issue_refund")
        assert "verify_identity" not in names[:refund], (case.id, names)
        assert not outcomes[case.id].passed, case.id
    for case_id in ("account-close", "account-deactivate-reason"):
        assert "delete_account" in [c["name"] for c in outcomes[case_id].calls]
        assert outcomes[case_id].why == "must-not-call delete_account"
    rate = sum(o.passed for o in outcomes.values()) / len(outcomes)
    assert rate < 0.85


def test_agent__variant_from_environment__same_as_flag(dataset: Dataset) -> None:
    env = {**os.environ, "SUPPORT_AGENT_VARIANT": "regressed"}
    by_env = [(o.case_id, o.passed, o.turns) for o in run_all(dataset, env=env)]
    by_flag = [(o.case_id, o.passed, o.turns) for o in run_all(dataset, "--variant", "regressed")]
    assert by_env == by_flag


def test_agent__flaky__fails_some_samples_deterministically(dataset: Dataset) -> None:
    first = run_all(dataset, "--variant", "flaky", samples=3, seed=7)
    again = run_all(dataset, "--variant", "flaky", samples=3, seed=7)
    assert [(o.case_id, o.passed, o.turns) for o in first] == [
        (o.case_id, o.passed, o.turns) for o in again
    ]
    per_case: dict[str, list[bool]] = {}
    for o in first:
        per_case.setdefault(o.case_id, []).append(o.passed)
    flaky = {cid for cid, passes in per_case.items() if 0 < sum(passes) < 3}
    assert 3 <= len(flaky) <= 20
    for cid, passes in per_case.items():
        if cid not in GOOD_AGENT_MISSES:
            assert sum(passes) >= 2, cid  # one bad sample in three at most
    expected = {
        c.id for c in dataset.cases if int(hashlib.sha256(c.id.encode()).hexdigest(), 16) % 8 == 0
    }
    assert flaky <= expected


def test_agent__stdlib_only__runs_isolated(dataset: Dataset) -> None:
    agent = AgentProcess(python_flags=["-I", "-S"])
    try:
        assert agent.run_case(dataset.case("status-basic")).passed
    finally:
        agent.close()


def test_agent__garbage_line__error_reply_and_worker_survives(dataset: Dataset) -> None:
    proc = subprocess.run(
        [sys.executable, str(AGENT)],
        input='not json\n{"type": "tool_results", "results": []}\n'
        + json.dumps(
            {
                "type": "start",
                "case_id": "x",
                "sample": 0,
                "seed": 0,
                "messages": [{"role": "user", "content": "Hi!"}],
                "tools": [],
            }
        )
        + "\n",
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    replies = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["type"] for r in replies] == ["error", "error", "final"]


def test_agent__usage__reported_on_every_reply(dataset: Dataset) -> None:
    agent = AgentProcess()
    try:
        case = dataset.case("status-basic")
        reply = agent.send(
            {
                "type": "start",
                "case_id": case.id,
                "sample": 0,
                "seed": 0,
                "messages": [{"role": "user", "content": case.user_input}],
                "tools": [],
            }
        )
        assert reply["type"] == "final"  # no tools offered: it must not call one
        assert reply["usage"]["prompt_tokens"] > 0
    finally:
        agent.close()


def test_agent__example_configs__point_at_the_agent() -> None:
    from gate.agents.command import CommandAgent
    from gate.config import load_config

    good = load_config(EXAMPLE / "toolgate.yml").agent
    regressed = load_config(EXAMPLE / "toolgate.regressed.yml").agent
    flaky = load_config(EXAMPLE / "toolgate.flaky.yml").agent
    assert (
        isinstance(good, CommandAgent)
        and isinstance(regressed, CommandAgent)
        and isinstance(flaky, CommandAgent)
    )
    assert good.command == ["python", "agent.py"]
    assert regressed.command == ["python", "agent.py", "--variant", "regressed"]
    assert flaky.env == {"SUPPORT_AGENT_VARIANT": "flaky"}
    assert Path(EXAMPLE / "agent.py").is_file()
