"""Expectations written with batches (cases/batches.json): strict compares batch by batch,
the other order modes ignore batching, and ``batching`` scores the grouping of turns."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gate.config import ScoringConfig
from gate.model import OrderMode, ToolCall, Turn
from gate.results import evidence_json
from gate.scorers import ScoringContext, score_sample
from tests.scorers.helpers import case, expected, run
from tests.scorers.test_samples_table import build

TABLE = json.loads((Path(__file__).parent / "cases" / "batches.json").read_text())


@pytest.mark.parametrize("row", TABLE, ids=[r["name"] for r in TABLE])
def test_batches_table(row: dict[str, Any]) -> None:
    c, r = build(row)
    s = score_sample(c, r, ScoringContext.build(ScoringConfig()), full=True)
    assert s.evidence is not None
    evidence = evidence_json(s.evidence)
    want = row["expect"]
    assert s.passed is want["passed"], s.failed_checks
    if "failed_checks" in want:
        assert list(s.failed_checks) == want["failed_checks"]
    for name, value in want["scores"].items():
        assert (
            s.scores[name] == pytest.approx(value) if value is not None else s.scores[name] is None
        ), (
            name,
            s.scores[name],
        )
    for key, value in want.get("evidence", {}).items():
        assert evidence.get(key, []) == value, key
    for name, text in row.get("reasons", {}).items():
        assert s.reasons[name] == text


# ─── properties ───────────────────────────────────────────────────────────────

_NAMES = ("a", "b", "c")


@st.composite
def _batched(draw: st.DrawFn) -> list[list[tuple[str, int]]]:
    """Expected batches of distinct calls (name, id): 1-4 batches of 1-3 calls."""
    n_batches = draw(st.integers(1, 4))
    out: list[list[tuple[str, int]]] = []
    k = 0
    for _ in range(n_batches):
        size = draw(st.integers(1, 3))
        out.append([(draw(st.sampled_from(_NAMES)), k + i) for i in range(size)])
        k += size
    return out


def _score(batches: list[list[tuple[str, int]]], turns: list[list[tuple[str, int]]]):  # type: ignore[no-untyped-def]
    exp = [expected(n, {"i": i}, batch=b) for b, batch in enumerate(batches) for n, i in batch]
    c = case(expect=exp, order=OrderMode.STRICT)
    r = run(*(Turn(calls=tuple(ToolCall(n, {"i": i}) for n, i in t)) for t in turns))
    return score_sample(c, r, ScoringContext.build(ScoringConfig()), full=True)


@settings(max_examples=150, deadline=None)
@given(batches=_batched(), data=st.data())
def test_batching__regrouped_sequence__strict_and_batching_hold_exactly_for_the_expected_turns(
    batches: list[list[tuple[str, int]]], data: st.DataObject
) -> None:
    # The expected calls in their order, cut into turns anywhere (each batch shuffled):
    # strict holds, and batching is 1.0, exactly when the cuts are the batches.
    flat = [c for b in batches for c in b]
    cuts = data.draw(st.lists(st.booleans(), min_size=len(flat) - 1, max_size=len(flat) - 1))
    turns: list[list[tuple[str, int]]] = [[flat[0]]]
    for call, cut in zip(flat[1:], cuts, strict=True):
        if cut:
            turns.append([call])
        else:
            turns[-1].append(call)
    turns = [data.draw(st.permutations(t)) for t in turns]
    same = sorted(map(sorted, turns)) == sorted(map(sorted, batches)) and len(turns) == len(batches)
    s = _score(batches, turns)
    assert (s.scores["trajectory_match"] == 1.0) is same
    assert ("order" not in s.failed_checks) is same
    if len(flat) < 2:
        assert s.scores["batching"] is None
    else:
        assert (s.scores["batching"] == 1.0) is same
        assert s.evidence is not None
        assert (not s.evidence.batching) is same
        assert 0.0 <= (s.scores["batching"] or 0.0) <= 1.0


@settings(max_examples=100, deadline=None)
@given(batches=_batched(), data=st.data())
def test_batching__permuting_a_turn__changes_no_score(
    batches: list[list[tuple[str, int]]], data: st.DataObject
) -> None:
    flat = [c for b in batches for c in b]
    turns = [flat[: len(flat) // 2], flat[len(flat) // 2 :]] if len(flat) > 1 else [flat]
    turns = [t for t in turns if t]
    shuffled = [data.draw(st.permutations(t)) for t in turns]
    assert _score(batches, turns).scores == _score(batches, shuffled).scores


def test_evidence__batched_list__calls_carry_their_batch_and_no_order_is_said_inside_one() -> None:
    """docs/scoring.md: in a list written with batches each expected call of the evidence
    carries its ``batch``; the comment reads it and says no order inside a batch."""
    from gate.report.sentences import sentence_for
    from gate.results import SampleResult

    c = case(
        expect=[expected("a", batch=0), expected("b", batch=0), expected("c", batch=1)],
        order=OrderMode.STRICT,
    )
    s = score_sample(c, run([ToolCall("b", {}), ToolCall("a", {})]), ScoringContext.build())
    assert s.evidence is not None and "order" in s.failed_checks
    ev = evidence_json(s.evidence)
    assert [e.get("batch") for e in ev["expected"]] == [0, 0, 1]
    sample = SampleResult(
        sample=0, passed=False, scores=[], failed_checks=list(s.failed_checks), evidence=ev
    )
    said = "".join(str(part) for part in sentence_for("order", sample))
    assert "came before" not in said, said
