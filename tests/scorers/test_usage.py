"""What a sample cost (``gate.scorers.usage``) on hand-built runs: the tokens as reported
(n/a when not, never 0), prices per model, calls and assistant turns counted per turn (and
summed over a conversation's turns), what an errored or a missing sample keeps, and the
same figures from the score stage's memo of identical runs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from gate.dataset import load_dataset
from gate.model import Case, ExpectedCall, Run, SourceRef, ToolCall, ToolSpec, Turn, UserTurn
from gate.pipeline._scorepool import SerialExecutor
from gate.pipeline.score import score_runs
from gate.runsfile import RunsIndex
from gate.scorers import ScoringContext, score_sample
from gate.scorers.pricing import Price, Pricing
from gate.scorers.usage import usage_values

PING = ToolSpec("ping", "Ping.", {"type": "object", "properties": {"n": {"type": "integer"}}})
CASE = Case(
    id="c",
    user_input="ping 1 and 2",
    source=SourceRef("dataset.jsonl", 1),
    available_tools=(PING,),
    expected_tool_calls=(ExpectedCall("ping"), ExpectedCall("ping")),
)
PRICES = Pricing(
    {
        "gpt-4o": Price(2.5, 10.0),
        "gpt-4o-mini*": Price(0.15, 0.6),
        "default": Price(1.0, 2.0),
    },
    model="gpt-4o",
)


def _ctx(pricing: Pricing | None = PRICES) -> ScoringContext:
    return ScoringContext.build(None, None, {"ping": PING}, pricing=pricing)


def _run(
    *, usage: dict[str, int] | None = None, meta: dict[str, object] | None = None, **kw: object
) -> Run:
    turns = (
        Turn(calls=(ToolCall("ping", {"n": 1}, id="a"), ToolCall("ping", {"n": 2}, id="b"))),
        Turn(calls=(ToolCall("ping", {"n": 3}, id="c"),)),
    )
    fields: dict[str, object] = {"case_id": "c", "sample": 0, "turns": turns, "final": "done"}
    fields.update(kw)
    return Run(usage=usage, meta=meta, **fields)  # type: ignore[arg-type]


def test_usage_missing__every_token_metric_na_never_zero() -> None:
    s = score_sample(CASE, _run(usage=None), _ctx())
    for name in ("prompt_tokens", "completion_tokens", "total_tokens", "cost"):
        assert s.scores[name] is None, name
    partial = score_sample(CASE, _run(usage={"prompt_tokens": 100}), _ctx())
    assert partial.scores["prompt_tokens"] == 100.0
    assert partial.scores["completion_tokens"] is None
    assert partial.scores["total_tokens"] is None and partial.scores["cost"] is None


def test_calls_and_steps__counted_per_turn() -> None:
    s = score_sample(CASE, _run(), _ctx())
    assert s.scores["tool_calls"] == 3.0  # a batch of two, then one
    assert s.scores["steps"] == 3.0  # two tool-calling turns and the answer
    unanswered = score_sample(CASE, _run(final=None), _ctx())
    assert unanswered.scores["steps"] == 2.0
    nothing = score_sample(CASE, _run(turns=(), final="no call needed"), _ctx())
    assert (nothing.scores["tool_calls"], nothing.scores["steps"]) == (0.0, 1.0)


def test_total_tokens__reported_else_the_sum() -> None:
    summed = score_sample(CASE, _run(usage={"prompt_tokens": 90, "completion_tokens": 10}), _ctx())
    assert summed.scores["total_tokens"] == 100.0
    given = {"prompt_tokens": 90, "completion_tokens": 10, "total_tokens": 120}
    assert score_sample(CASE, _run(usage=given), _ctx()).scores["total_tokens"] == 120.0


@pytest.mark.parametrize(
    ("meta", "price"),
    [
        (None, (2.5, 10.0)),  # the agent's configured model
        ({"request": {"model": "gpt-4o-mini-2024-07-18"}}, (0.15, 0.6)),  # a glob
        ({"request": {"model": "claude-x"}}, (1.0, 2.0)),  # unknown: default
    ],
)
def test_cost__the_price_of_the_samples_model(
    meta: dict[str, object] | None, price: tuple[float, float]
) -> None:
    usage = {"prompt_tokens": 2_000_000, "completion_tokens": 500_000}
    s = score_sample(CASE, _run(usage=usage, meta=meta), _ctx())
    assert s.scores["cost"] == pytest.approx(2 * price[0] + 0.5 * price[1])


def test_cost__without_pricing_or_a_matching_price__na() -> None:
    usage = {"prompt_tokens": 10, "completion_tokens": 5}
    assert score_sample(CASE, _run(usage=usage), _ctx(None)).scores["cost"] is None
    only_exact = Pricing({"gpt-4o": Price(1, 1)}, model=None)
    assert usage_values(usage, only_exact.price_of_run(None))[3] is None


def test_errored_sample__no_usage_metrics_its_tokens_stay_in_the_totals() -> None:
    usage = {"prompt_tokens": 50, "completion_tokens": 5}
    crashed = score_sample(CASE, _run(usage=usage, error="crash: exit 1", final=None), _ctx())
    assert crashed.scores["call_accuracy"] is None  # earns nothing
    # a crash does not make a sample cheaper: its cost metrics are n/a, not 0 or partial
    assert crashed.scores["tool_calls"] is None and crashed.scores["total_tokens"] is None
    assert crashed.usage == usage  # the run's totals still count what it reported
    missing = score_sample(CASE, _run(usage=usage, error="http: 503", final=None), _ctx())
    assert missing.scores["tool_calls"] is None and missing.scores["total_tokens"] is None


def test_conversation__calls_and_steps_summed_over_turns_tokens_the_whole_runs() -> None:
    conv = Case(
        id="conv",
        user_input="hi",
        source=SourceRef("dataset.jsonl", 1),
        available_tools=(PING,),
        conversation=(
            UserTurn("ping 1", (ExpectedCall("ping"),)),
            UserTurn("thanks", ()),
            UserTurn("ping 2 and 3", (ExpectedCall("ping"), ExpectedCall("ping"))),
        ),
    )
    run = Run(
        case_id="conv",
        sample=0,
        turns=(
            Turn(calls=(ToolCall("ping", {"n": 1}, id="a"),), user="ping 1"),
            Turn(content="pinged"),
            Turn(content="you're welcome", user="thanks"),
            Turn(
                calls=(ToolCall("ping", {"n": 2}, id="b"), ToolCall("ping", {"n": 3}, id="c")),
                user="ping 2 and 3",
            ),
            Turn(content="both pinged"),
        ),
        final="both pinged",
        usage={"prompt_tokens": 300, "completion_tokens": 30},
    )
    s = score_sample(conv, run, _ctx())
    assert s.passed
    assert s.scores["tool_calls"] == 3.0  # 1 + 0 + 2
    assert s.scores["steps"] == 5.0  # 2 + 1 + 2
    assert s.scores["total_tokens"] == 330.0
    assert [t.scores["tool_calls"] for t in s.turns] == [1.0, 0.0, 2.0]
    assert all(t.scores["total_tokens"] is None for t in s.turns)  # not split by turn


def test_score_stage__identical_runs_keep_their_own_usage(tmp_path: Path) -> None:
    """The memo scores a repeated view once; each sample's usage metrics are still its
    own, in the table and in its record."""
    row = {
        "id": "c",
        "user_input": "ping",
        "available_tools": [{"name": "ping", "parameters": {"type": "object"}}],
        "expected_tool_calls": [{"name": "ping"}],
    }
    (tmp_path / "dataset.jsonl").write_text(json.dumps(row) + "\n")
    runs = [
        {
            "case_id": "c",
            "sample": s,
            "turns": [{"calls": [{"name": "ping", "arguments": {}}]}],
            "final": "ok",
            **({"usage": {"prompt_tokens": 100 * (s + 1), "completion_tokens": 1}} if s else {}),
        }
        for s in range(3)
    ]
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    ds = load_dataset(tmp_path / "dataset.jsonl")
    with RunsIndex(tmp_path / "runs.jsonl", display="runs.jsonl") as index:
        scored = score_runs(
            dataset=ds, runs=index, config=None, shard=None, executor=SerialExecutor()
        )
    (rows,) = scored.batches
    col = rows.names.index("prompt_tokens")
    got = rows.values[:, col].tolist()
    assert np.isnan(got[0]) and got[1:] == [200.0, 300.0]
    from gate.policy.table import assemble

    records = scored.records.bind(assemble(scored.metas, scored.batches))
    texts = [json.loads(r) for r in records.of_case(0)]
    records.close()
    at = list(rows.names).index("total_tokens")
    assert [t["scores"][at] for t in sorted(texts, key=lambda t: t["sample"])] == [
        None,
        201.0,
        301.0,
    ]
