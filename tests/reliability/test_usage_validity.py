"""Token usage is checked where it enters, and an invalid one is a recorded fact, never a
crash and never a figure (:mod:`gate.model.usage`).

Each test runs ``toolgate check`` as a real process, with a real ``command`` agent
(``agents/script_agent.py``), a real OpenAI-compatible endpoint on 127.0.0.1
(``tests/servers/openai_server.py``) or a runs file replayed. An invalid usage —
a count out of range (alone, or summed over the turns), negative, fractional, not
finite, or a ``total_tokens`` that is not the sum of the other two — leaves the sample
without token figures, is written to runs.jsonl and results.json (``usage_error``), and
is shown in the console and the comment; a cost gate counts that sample as one without
usage (:mod:`tests.policy.test_missing_usage`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.reliability.helpers import assert_clean_exit, case, project, toolgate
from tests.reliability.test_recorded_depth import scripted
from tests.servers.openai_server import FakeOpenAIServer, Response, chat_completion, tool_call

CALL = {"id": "x", "name": "lookup_order", "arguments": {"order_id": "ord_10482"}}


def two_turns(first: Any, second: Any) -> list[Any]:
    return [
        {"type": "tool_calls", "calls": [CALL], "usage": first},
        {"type": "final", "content": "done", "usage": second},
    ]


def check(root: Path, extra: str = "") -> Any:
    if extra:
        config = root / "toolgate.yml"
        config.write_text(config.read_text() + extra)
    return toolgate(
        "check", "--config", "toolgate.yml", "--out", "out", "--baseline", "none", cwd=root
    )


def recorded(root: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The run's line and its sample's results.json record."""
    (run,) = [json.loads(x) for x in (root / "out" / "runs.jsonl").read_text().splitlines()]
    results = json.loads((root / "out" / "results.json").read_text())
    (sample,) = results["cases"][0]["samples"]
    return run, sample


@pytest.mark.parametrize(
    ("first", "second", "says"),
    [
        # two turns of 2**62 once overflowed 64 bits when the run line was written
        ({"prompt_tokens": 2**62}, {"prompt_tokens": 2**62}, "prompt_tokens = 4,611,686,"),
        ({"prompt_tokens": 2**63 - 1, "completion_tokens": 2**63 - 1}, {}, "is above"),
        # each turn within the bound, their sum not
        (
            {"prompt_tokens": 700_000_000_000},
            {"prompt_tokens": 700_000_000_000},
            "prompt_tokens summed over the sample's reports (1,400,000,000,000) is above",
        ),
        (
            {"prompt_tokens": -12_600, "completion_tokens": -10},
            {},
            "prompt_tokens = -12,600 is negative",
        ),
        ({"prompt_tokens": 12.5}, {}, "prompt_tokens = 12.5 is not a whole number of tokens"),
        (
            {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 500},
            {},
            "total_tokens = 500 is not prompt_tokens + completion_tokens (100 + 10 = 110)",
        ),
        # consistent turn by turn, not once summed (the second turn leaves out its total)
        (
            {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
            {"prompt_tokens": 50},
            "total_tokens = 110 is not prompt_tokens + completion_tokens (150 + 10 = 160) "
            "summed over the sample's reports",
        ),
    ],
    ids=["2x2^62", "max-int64", "sum-over-turns", "negative", "fraction", "total", "split"],
)
def test_command_agent__invalid_usage__recorded_and_reported_never_a_crash(
    tmp_path: Path, first: Any, second: Any, says: str
) -> None:
    scripted(tmp_path, two_turns(first, second))
    proc = check(tmp_path)
    assert_clean_exit(proc, 0)
    run, sample = recorded(tmp_path)
    assert run["usage"] is None and says in run["usage_error"], run
    assert "usage" not in sample and sample["usage_error"] == run["usage_error"]
    assert "Invalid token usage on 1 sample, left out of the token figures" in proc.stdout
    assert says in proc.stdout
    comment = (tmp_path / "out" / "comment.md").read_text()
    assert "⚠️ Invalid token usage on 1 sample" in comment
    assert "prompt_tokens" not in [ln.split()[0] for ln in proc.stdout.splitlines() if ln.strip()]


def test_command_agent__valid_usage_over_turns__summed(tmp_path: Path) -> None:
    scripted(
        tmp_path,
        two_turns(
            {"prompt_tokens": 100, "completion_tokens": 10.0, "total_tokens": 110, "cost_usd": 0.5},
            {"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55},
        ),
    )
    proc = check(tmp_path)
    assert_clean_exit(proc, 0)
    run, sample = recorded(tmp_path)
    want = {"prompt_tokens": 150, "completion_tokens": 15, "total_tokens": 165, "cost_usd": 0.5}
    assert run["usage"] == sample["usage"] == want
    assert "usage_error" not in run and "invalid token usage" not in proc.stdout


@pytest.mark.parametrize(
    ("usage_text", "says"),
    [
        ('{"prompt_tokens": 4611686018427387904, "completion_tokens": 1}', "is above"),
        ('{"prompt_tokens": 1e300, "completion_tokens": 1}', "prompt_tokens = 1e+300 is above"),
        ('{"prompt_tokens": -5, "completion_tokens": 1}', "prompt_tokens = -5 is negative"),
    ],
    ids=["2^62-twice", "float-1e300", "negative"],
)
def test_openai_endpoint__invalid_usage__recorded_never_a_crash(
    tmp_path: Path, usage_text: str, says: str
) -> None:
    def body(message: dict[str, Any]) -> bytes:
        text = json.dumps(chat_completion(**message, usage={"prompt_tokens": 777}))
        return text.replace('{"prompt_tokens": 777}', usage_text).encode()

    first = body({"tool_calls": [tool_call("lookup_order", {"order_id": "ord_10482"})]})
    second = body({"content": "done"})
    assert usage_text.encode() in first
    with FakeOpenAIServer([Response(body=first), Response(body=second)]) as srv:
        agent = (
            "  kind: openai\n"
            "  model: fake-model\n"
            f"  base_url: {srv.base_url}\n"
            "  api_key_env: TOOLGATE_TEST_KEY\n"
            "  timeout_s: 20\n"
        )
        project(tmp_path, [case(id="c1")], agent, samples=1)
        proc = toolgate(
            "check", "--config", "toolgate.yml", "--out", "out", "--baseline", "none",
            cwd=tmp_path, env={"TOOLGATE_TEST_KEY": "sk-test"},
        )  # fmt: skip
    assert_clean_exit(proc, 0)
    run, sample = recorded(tmp_path)
    assert run["usage"] is None and says in run["usage_error"]
    assert sample["usage_error"] == run["usage_error"]


def test_replayed_runs_file__invalid_usage__recorded_and_written_back(tmp_path: Path) -> None:
    """A runs file from elsewhere is checked as an agent's reports are: a negative count
    is the sample's invalid usage, not an input error; a recorded ``usage_error`` reads
    back as it was written."""
    agent = "  kind: replay\n  runs: given.jsonl\n"
    project(tmp_path, [case(id="c1"), case(id="c2")], agent, samples=1)
    line = {
        "sample": 0,
        "turns": [{"calls": [{"name": "lookup_order", "arguments": {"order_id": "ord_10482"}}]}],
        "final": "done",
    }
    (tmp_path / "given.jsonl").write_text(
        json.dumps({**line, "case_id": "c1", "usage": {"prompt_tokens": -3}})
        + "\n"
        + json.dumps({**line, "case_id": "c2", "usage": None, "usage_error": "recorded elsewhere"})
        + "\n"
    )
    proc = check(tmp_path)
    assert_clean_exit(proc, 0)
    runs = [json.loads(x) for x in (tmp_path / "out" / "runs.jsonl").read_text().splitlines()]
    errors = {r["case_id"]: r.get("usage_error") for r in runs}
    assert errors == {"c1": "prompt_tokens = -3 is negative", "c2": "recorded elsewhere"}
    assert "Invalid token usage on 2 samples, left out of the token figures" in proc.stdout


def test_replayed_runs_file__usage_not_an_object__input_error(tmp_path: Path) -> None:
    agent = "  kind: replay\n  runs: given.jsonl\n"
    project(tmp_path, [case(id="c1")], agent, samples=1)
    (tmp_path / "given.jsonl").write_text(
        json.dumps({"case_id": "c1", "sample": 0, "turns": [], "usage": {"prompt_tokens": "9"}})
        + "\n"
    )
    proc = check(tmp_path)
    assert_clean_exit(proc, 2)
    assert "given.jsonl:1: usage: must be an object of token counts (numbers)" in proc.stderr
