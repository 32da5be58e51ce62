"""Synthetic datasets and sample scores for the policy and baseline tests.

``FakeDataset`` has the attributes ``build_results`` reads from ``gate.dataset.Dataset``
(``display``, ``path``, ``sha256``, ``cases``, ``tools``); the cases and scores are real
model objects, built here from compact descriptions so that tests read as tables.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gate.config import Config
from gate.model import (
    Case,
    Difficulty,
    Evidence,
    ExpectedCall,
    HardFailure,
    HardFailureKind,
    SampleScore,
    SourceRef,
    Tallies,
    ToolCall,
    ToolSpec,
    ToolTally,
)
from gate.results import Results

TOOLS = {
    "lookup_order": ToolSpec("lookup_order", "Look up an order.", {"type": "object"}),
    "issue_refund": ToolSpec("issue_refund", "Refund an order.", {"type": "object"}),
    "delete_account": ToolSpec("delete_account", "Delete the account.", {"type": "object"}),
}


@dataclass(frozen=True)
class FakeDataset:
    display: str
    path: Path
    sha256: str
    cases: tuple[Case, ...]
    tools: Mapping[str, ToolSpec] = field(default_factory=lambda: dict(TOOLS))
    cases_sha256: str | None = None


def case(
    cid: str,
    line: int,
    *,
    expect: Sequence[str] = ("lookup_order",),
    no_tool: bool = False,
    must_not_call: Sequence[str] = (),
    difficulty: str | None = "easy",
    tags: Sequence[str] = (),
) -> Case:
    return Case(
        id=cid,
        user_input=f"question {cid}",
        source=SourceRef("dataset.jsonl", line),
        expected_tool_calls=() if no_tool else tuple(ExpectedCall(n) for n in expect),
        expected_no_tool=no_tool,
        must_not_call=tuple(must_not_call),
        difficulty=None if difficulty is None else Difficulty(difficulty),
        tags=tuple(tags),
    )


def dataset(
    cases: Sequence[Case],
    *,
    sha: str | None = None,
    tools: Mapping[str, ToolSpec] | None = None,
    cases_sha256: str | None = None,
) -> FakeDataset:
    digest = sha or hashlib.sha256("".join(c.id for c in cases).encode()).hexdigest()
    return FakeDataset(
        display="dataset.jsonl",
        path=Path("/nonexistent/dataset.jsonl"),
        sha256=digest,
        cases=tuple(cases),
        tools=dict(TOOLS if tools is None else tools),
        cases_sha256=cases_sha256,
    )


def score(
    cid: str,
    sample: int,
    passed: bool,
    *,
    f1: float | None = None,
    call_accuracy: float | str | None = "auto",
    calls: int = 1,
    calls_on_no_tool: int = 0,
    per_tool: Mapping[str, list[int]] | None = None,
    confusion: Sequence[Sequence[str | None]] = (),
    malformed: Mapping[str, int] | None = None,
    violation: str | None = None,
    usage: Mapping[str, int] | None = None,
    failed_checks: Sequence[str] | None = None,
) -> SampleScore:
    value = 1.0 if passed else 0.0
    scores: dict[str, float | None] = {
        "tool_selection_f1": value if f1 is None else f1,
        "call_accuracy": value if call_accuracy == "auto" else call_accuracy,  # type: ignore[dict-item]
        "case_passed": value,
    }
    tallies = Tallies(
        calls=calls,
        calls_on_no_tool=calls_on_no_tool,
        per_tool={n: ToolTally(*t) for n, t in (per_tool or {}).items()},
        confusion=tuple((e, a) for e, a in confusion),  # type: ignore[misc]
        malformed=dict(malformed or {}),
    )
    hard: tuple[HardFailure, ...] = ()
    if violation:
        hard = (
            HardFailure(
                HardFailureKind.MUST_NOT_CALL,
                cid,
                sample,
                ToolCall(violation, {}),
                f"called must-not-call tool {violation}",
            ),
        )
    checks = failed_checks if failed_checks is not None else (() if passed else ("calls_matched",))
    return SampleScore(
        case_id=cid,
        sample=sample,
        passed=passed,
        scores=scores,
        failed_checks=tuple(checks),
        evidence=Evidence(
            expected=(ExpectedCall("lookup_order"),),
            actual=(),
            alternative=0,
            matched=(),
            summary="",
        ),
        tallies=tallies,
        hard_failures=hard,
        usage=usage,
    )


def scores_from_table(table: Mapping[str, str]) -> list[SampleScore]:
    """``{"c1": "PPF"}``: case c1 passed samples 0 and 1, failed sample 2."""
    return [
        score(cid, i, ch == "P") for cid, pattern in table.items() for i, ch in enumerate(pattern)
    ]


def results_from_table(
    table: Mapping[str, str],
    *,
    config: Config | None = None,
    ds: FakeDataset | None = None,
    seed_cases: Sequence[Case] | None = None,
) -> Results:
    cases = seed_cases or [case(cid, i + 1) for i, cid in enumerate(table)]
    return build_results(
        dataset=ds or dataset(cases),
        scores=scores_from_table(table),
        config=config,
        agent={"kind": "test"},
        shard=None,
        timing={},
    )


def make_config(**policy: Any) -> Config:
    """A valid config with the given policy sections (``gates``, ``variance``, …)."""
    data: dict[str, Any] = {
        "dataset": {"path": "dataset.jsonl"},
        "agent": {"kind": "replay", "runs": "runs.jsonl"},
        **policy,
    }
    return Config.model_validate(data)


def build_results(
    *,
    dataset: Any,
    scores: Sequence[SampleScore],
    config: Config | None,
    agent: Mapping[str, Any],
    shard: Any,
    timing: Mapping[str, Any],
    extra_scores: Sequence[SampleScore] = (),
) -> Results:
    """The results (no verdict) of sample scores in memory, through the score stage's
    reduction (``gate.pipeline.score.scores_to_scored``)."""
    from gate.pipeline.score import scores_to_scored

    return scores_to_scored(
        dataset=dataset,
        scores=scores,
        config=config,
        agent=agent,
        shard=shard,
        extra_scores=extra_scores,
        timing=timing,
    ).results


def compare_results(base: Results, head: Results, *, source: str = "baseline") -> Any:
    """The comparison of two results (the tests against the base history on ``head``'s
    samples, as ``toolgate diff`` makes it), as results.json holds it."""
    from gate.pipeline.sequential import recorded_comparison

    return recorded_comparison(base, head, source=source)


def decide_results(
    results: Results, config: Config | None, base: Results | None, source: str | None
) -> Results:
    """Compare with ``base`` (if any), decide, and put both into the results — what
    ``toolgate check`` does after scoring."""
    from gate.pipeline.sequential import comparison_of, recorded_tests
    from gate.pipeline.typed import stats_of
    from gate.policy.decide import decide
    from gate.results import decided

    stats = stats_of(results)
    if base is None:
        return decided(results, decide(stats, None, config), None)
    tests = recorded_tests([results], base, config)
    comparison = comparison_of(
        stats_of(base), stats, tests.evaluation, tests.params, source=source or "baseline"
    )
    return decided(results, decide(stats, comparison, config, tests.evaluation), comparison)


def quiet_check(
    config: Path,
    out: Path,
    baseline: Path | None = None,
    *,
    env: Mapping[str, str] | None = None,
    **options: Any,
) -> Any:
    """``toolgate check`` in process, no progress and no comment, against ``baseline``
    (``None``: none); ``options`` go to :class:`gate.pipeline.CheckOptions`."""
    import io

    from gate.pipeline import CheckOptions, check

    return check(
        CheckOptions(
            config_path=config,
            out=out,
            baseline=str(baseline) if baseline else "none",
            progress=False,
            comment=False,
            **options,
        ),
        dict(env) if env is not None else {"PATH": ""},
        io.StringIO(),
    )
