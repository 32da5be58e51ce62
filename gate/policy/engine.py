"""The statistics engine: one run's head samples against the base history, with extra
samples where a case is undecided, to a verdict.

One way through, each stage in its own module:

1. **comparability** (:mod:`gate.policy.history`): each head case is looked up in the
   base history by id and hash; a case with no history for its hash is not comparable;
2. **sequential sampling** (:mod:`gate.policy.sequential`): rounds of extra samples for
   the comparable cases whose test is undecided, under the per-case and per-run caps;
   the samples come from ``sampler`` — the only seam to the outside (the pipeline runs
   the agent; the benchmark draws from known probabilities);
3. **per-case tests** (:mod:`gate.policy.casetest`): e-values, e-BH over the comparable
   cases at α_case, the minimum practical effect, each case's outcome;
4. **suite tests** (:mod:`gate.policy.suite`): the pass rate and every gated metric, on
   the initial samples, at α_suite shared equally between them;
5. **flakiness** (:mod:`gate.policy.flakiness`): head flakier than its history, at
   α_flaky; the optional absolute ceiling.

The verdict blocks when a case regressed, a suite test or the flakiness guard failed.
The three shares of α add up to α, so when nothing changed the probability that the
run blocks is at most α (a union bound over the three parts, each exact).

Pure and deterministic: the same history, samples and parameters give the same
evaluation; randomness lives only in the sampler.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import assert_never

from gate.model import DecidedCase, FlipKind
from gate.policy.casetest import (
    MIN_EFFECT,
    CaseInput,
    CaseOutcome,
    CaseVerdict,
    Counts,
    classify,
    single_bound,
)
from gate.policy.flakiness import FlakinessCase, FlakinessResult, flakiness_test
from gate.policy.history import (
    BaseHistory,
    CaseHistory,
    CaseRun,
    Comparability,
    MetricSums,
    lookup,
)
from gate.policy.sequential import PlanCase, SequentialParams, plan_round, status
from gate.policy.suite import (
    SUITE_MIN_EFFECT,
    Better,
    SuiteTest,
    metric_test,
    pass_rate_test,
)


@dataclass(frozen=True, slots=True)
class EngineParams:
    """The policy's parameters; the defaults are the policy a config without policy keys
    gets."""

    alpha: float = 0.05
    """Per-run false-block rate when nothing changed (an upper bound)."""
    case_share: float = 0.6
    suite_share: float = 0.25
    flaky_share: float = 0.15
    sequential: SequentialParams = field(default_factory=SequentialParams)
    min_effect: float = MIN_EFFECT
    suite_min_effect: float = SUITE_MIN_EFFECT
    flaky_ceiling: float | None = None

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 1:
            raise ValueError("alpha must be in (0, 1)")
        shares = (self.case_share, self.suite_share, self.flaky_share)
        if min(shares) < 0 or abs(sum(shares) - 1.0) > 1e-9:
            raise ValueError("the shares of alpha must be ≥ 0 and add up to 1")

    @property
    def alpha_case(self) -> float:
        return self.alpha * self.case_share

    @property
    def alpha_suite(self) -> float:
        return self.alpha * self.suite_share

    @property
    def alpha_flaky(self) -> float:
        return self.alpha * self.flaky_share


@dataclass(frozen=True, slots=True)
class Sample:
    """One head sample of one case: passed, and the metrics' scores (``None``: n/a)."""

    passed: bool
    metrics: Mapping[str, float | None] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class HeadCase:
    """A head case with its hash and its initial samples (and, for results merged from
    shards, the extra samples each shard's sequential sampling already took: they count
    in the per-case test, valid at any stopping point, not in the suite tests)."""

    case_id: str
    case_hash: str
    samples: tuple[Sample, ...]
    extra: tuple[Sample, ...] = ()


@dataclass(frozen=True, slots=True)
class GatedMetric:
    name: str
    better: Better


Sampler = Callable[[Mapping[str, int]], Mapping[str, Sequence[Sample]]]
"""Runs the planned extra samples: case id → how many; returns case id → that many
samples, in order."""


class BlockReason(enum.StrEnum):
    REGRESSED_CASES = "regressed cases"
    SUITE = "suite-level drop"
    FLAKIER = "flakier than the base history"
    FLAKY_CEILING = "flaky share above the ceiling"


@dataclass(frozen=True, slots=True)
class Spend:
    """Samples the run spent."""

    initial: int
    extra: int
    cap: int
    rounds: int
    per_case: Mapping[str, int]
    """Extra samples per case (cases that got any)."""
    undecided: int
    """Comparable cases the stopping rule would still have sampled."""

    @property
    def total(self) -> int:
        return self.initial + self.extra


@dataclass(frozen=True, slots=True)
class Evaluation:
    blocked: bool
    reasons: tuple[BlockReason, ...]
    cases: tuple[CaseVerdict, ...]
    suite: tuple[SuiteTest, ...]
    flakiness: FlakinessResult
    spend: Spend
    samples: Mapping[str, tuple[Sample, ...]]
    """Every head sample per case, initial first."""

    def outcome(self, case_id: str) -> CaseOutcome:
        for c in self.cases:
            if c.case_id == case_id:
                return c.outcome
        raise KeyError(case_id)


def _counts(samples: Sequence[Sample]) -> Counts:
    return Counts(sum(1 for s in samples if s.passed), len(samples))


def evaluate(
    history: BaseHistory | None,
    head: Sequence[HeadCase],
    sampler: Sampler,
    *,
    params: EngineParams | None = None,
    gated: Sequence[GatedMetric] = (),
) -> Evaluation:
    """The whole engine (module doc)."""
    p = params if params is not None else EngineParams()
    seq = p.sequential
    ids = [c.case_id for c in head]
    if len(set(ids)) != len(ids):
        raise ValueError("head cases must have distinct ids")

    found: dict[str, tuple[Comparability, CaseHistory | None]] = {
        c.case_id: lookup(history, c.case_id, c.case_hash) for c in head
    }
    samples: dict[str, list[Sample]] = {c.case_id: [*c.samples, *c.extra] for c in head}
    comparable = [c.case_id for c in head if found[c.case_id][0] is Comparability.COMPARABLE]
    base: dict[str, Counts] = {}
    for i in comparable:
        h = found[i][1]
        assert h is not None
        base[i] = Counts(h.passes, h.samples)
    m = len(comparable)
    log_bound = single_bound(m, p.alpha_case) if m else 0.0
    cap = seq.cap(m)

    extra: dict[str, int] = {c.case_id: len(c.extra) for c in head if c.extra}
    spent = 0
    rounds = 0
    while m:
        plan = plan_round(
            rounds,
            [PlanCase(i, base[i], _counts(samples[i])) for i in comparable],
            log_bound=log_bound,
            extra_spent=spent,
            cap=cap,
            params=seq,
        )
        if not plan:
            break
        got = sampler(plan)
        for i, k in plan.items():
            new = list(got.get(i, ()))
            if len(new) != k:
                raise ValueError(f"the sampler returned {len(new)} samples for {i!r}, not {k}")
            samples[i].extend(new)
            extra[i] = extra.get(i, 0) + k
            spent += k
        rounds += 1

    still: dict[str, bool] = {
        i: status(base[i], _counts(samples[i]), log_bound=log_bound, params=seq).undecided
        for i in comparable
    }
    verdicts = classify(
        [
            CaseInput(
                c.case_id,
                found[c.case_id][0],
                base.get(c.case_id),
                _counts(samples[c.case_id]),
                extra.get(c.case_id, 0),
                still.get(c.case_id, False),
            )
            for c in head
        ],
        alpha=p.alpha_case,
        min_effect=p.min_effect,
    )

    initial = {c.case_id: c.samples for c in head}
    alpha_each = p.alpha_suite / (1 + len(gated))
    suite = [
        pass_rate_test(
            [(base[i], _counts(initial[i])) for i in comparable],
            alpha=alpha_each,
            min_effect=p.suite_min_effect,
        )
    ]
    for g in gated:
        pairs: list[tuple[MetricSums, Sequence[float | None]]] = []
        for i in comparable:
            h = found[i][1]
            assert h is not None
            pairs.append((h.metric(g.name), [s.metrics.get(g.name) for s in initial[i]]))
        suite.append(
            metric_test(g.name, g.better, pairs, alpha=alpha_each, min_effect=p.suite_min_effect)
        )

    flaky = flakiness_test(
        [
            FlakinessCase(
                c.case_id,
                base.get(c.case_id),
                _counts(initial[c.case_id]),
                _counts(samples[c.case_id]),
            )
            for c in head
        ],
        alpha=p.alpha_flaky,
        ceiling=p.flaky_ceiling,
    )

    reasons: list[BlockReason] = []
    if any(v.outcome is CaseOutcome.REGRESSED for v in verdicts):
        reasons.append(BlockReason.REGRESSED_CASES)
    if any(t.blocked for t in suite):
        reasons.append(BlockReason.SUITE)
    if flaky.flakier:
        reasons.append(BlockReason.FLAKIER)
    if flaky.over_ceiling:
        reasons.append(BlockReason.FLAKY_CEILING)
    return Evaluation(
        blocked=bool(reasons),
        reasons=tuple(reasons),
        cases=tuple(verdicts),
        suite=tuple(suite),
        flakiness=flaky,
        spend=Spend(
            initial=sum(len(c.samples) for c in head),
            extra=spent + sum(len(c.extra) for c in head),
            cap=cap,
            rounds=rounds,
            per_case=dict(extra),
            undecided=sum(still.values()),
        ),
        samples={i: tuple(v) for i, v in samples.items()},
    )


def case_runs(head: Sequence[HeadCase], evaluation: Evaluation) -> list[CaseRun]:
    """What a baseline refresh appends to the history: every sample this run took of each
    case (initial and extra), with the metrics' sums."""
    out: list[CaseRun] = []
    for c in head:
        got = evaluation.samples[c.case_id]
        names = sorted({k for s in got for k in s.metrics})
        out.append(
            CaseRun(
                c.case_id,
                c.case_hash,
                sum(1 for s in got if s.passed),
                len(got),
                {n: MetricSums.of(s.metrics.get(n) for s in got) for n in names},
            )
        )
    return out


def decided_cases(evaluation: Evaluation) -> dict[str, DecidedCase]:
    """The cases the tests found regressed or improved, as the comparison lists them
    (:func:`gate.baseline.diff.compare`'s ``decided``): the flips, and only they."""
    out: dict[str, DecidedCase] = {}
    for v in evaluation.cases:
        match v.outcome:
            case CaseOutcome.REGRESSED:
                kind, p = FlipKind.REGRESSION, v.p_worse
            case CaseOutcome.IMPROVED:
                kind, p = FlipKind.FIX, v.p_better
            case CaseOutcome.UNCHANGED | CaseOutcome.UNDECIDED | CaseOutcome.NOT_COMPARABLE:
                continue
            case _ as unreachable:
                assert_never(unreachable)
        assert v.base is not None
        out[v.case_id] = DecidedCase(
            kind, v.base.passes, v.base.samples, v.head.passes, v.head.samples, p
        )
    return out
