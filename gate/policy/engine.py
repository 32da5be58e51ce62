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
   the initial samples, at α_suite shared equally between them; a cost metric (tokens,
   steps, calls, money) by the cost test (:mod:`gate.policy.cost`), each case's head
   samples against the values its history recorded;
5. **flakiness** (:mod:`gate.policy.flakiness`): head flakier than its history, at
   α_flaky; the optional absolute ceiling.

The verdict blocks when a case regressed, a suite test or the flakiness guard failed.
The three shares of α add up to α, so when nothing changed the probability that the
run blocks is at most α (a union bound over the three parts, each exact).

Pure and deterministic: the same history, samples and parameters give the same
evaluation; randomness lives only in the sampler.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from gate.model import CaseTest, FlakinessInfo
from gate.policy.casetest import (
    MIN_EFFECT,
    CaseInput,
    CaseOutcome,
    Counts,
    classify,
    single_bound,
)
from gate.policy.flakiness import FlakinessCase, flakiness_test
from gate.policy.history import (
    BaseHistory,
    CaseHistory,
    CaseRun,
    Comparability,
    MetricSums,
    lookup,
)
from gate.policy.sequential import (
    CaseStatus,
    PlanCase,
    SequentialParams,
    can_decide,
    plan_round,
    seed_plan,
    status,
)
from gate.policy.suite import (
    SUITE_MIN_EFFECT,
    Better,
    Method,
    SuiteTest,
    cost_suite_test,
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
    hard: bool = False
    """The sample broke a hard rule (a must-not-call, argument-scope or required-step
    violation): the gate fails on it whatever the other samples show."""


@dataclass(frozen=True, slots=True)
class HeadCase:
    """A head case with its hash and its initial samples (and, for results merged from
    shards, the extra samples each shard's sequential sampling already took: they count
    in the per-case test, valid at any stopping point, not in the suite tests)."""

    case_id: str
    case_hash: str
    samples: tuple[Sample, ...]
    extra: tuple[Sample, ...] = ()
    setup: str | None = None
    """The setup the case ran under (:func:`gate.policy.history.setup_hash`)."""
    legacy_setup: str | None = None
    """The same setup hashed the previous release's way (a history it recorded)."""

    def run(self) -> CaseRun:
        """This case as a history run without counts (what its setups match)."""
        return CaseRun(
            self.case_id, self.case_hash, 0, 0, setup=self.setup, legacy_setup=self.legacy_setup
        )


@dataclass(frozen=True, slots=True)
class GatedMetric:
    """A metric the suite test watches.

    ``gated`` false: a cost metric only reported (the Cost group), never blocking and not
    counted in the split of ``alpha_suite``. ``max_increase``: a relative gate on a cost
    metric — the test never blocks by itself; the decision compares its relative change
    with the bound (``gate.policy.decide``). ``cases``: the case ids of its ``slice``
    (``None``: every case)."""

    name: str
    better: Better
    gated: bool = True
    max_increase: float | None = None
    slice: str | None = None
    cases: frozenset[str] | None = None
    cost: bool = False
    """A cost metric (tokens, steps, calls, money): tested by the cost test, and its
    sample values kept in the history."""


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
    """Extra samples per case (cases that got any), seeding included."""
    undecided: int
    """Comparable cases the stopping rule would still have sampled."""
    seed: int = 0
    """Samples a base run spent bringing histories up to ``min_history``."""
    seeded: int = 0
    """Cases those samples went to."""
    held_back: int = 0
    """Undecided cases that got no extra samples because a hard failure of theirs
    already fails the gate."""
    undecidable: int = 0
    """Undecided cases that got no extra samples because none could decide them: even a
    total failure would not be significant against their short history
    (:func:`gate.policy.sequential.can_decide`)."""
    saved: int = 0
    """Extra samples those cases could have taken under the caps (an upper bound of what
    holding them back saved)."""
    needed: int = 0
    """Comparable cases the stopping rule wanted to sample after their first samples:
    the cases this run's cap was shared by."""
    sampled: int = 0
    """Cases that got extra samples from sequential sampling (seeding apart)."""

    @property
    def total(self) -> int:
        return self.initial + self.extra + self.seed


@dataclass(frozen=True, slots=True)
class Evaluation:
    blocked: bool
    reasons: tuple[BlockReason, ...]
    cases: Mapping[str, CaseTest]
    """Case id → its test, in the order of the head's cases."""
    suite: tuple[SuiteTest, ...]
    flakiness: FlakinessInfo
    spend: Spend
    samples: Mapping[str, tuple[Sample, ...]]
    """Every head sample per case, initial first."""
    held_back: frozenset[str] = frozenset()
    """Cases that got no extra samples because a hard failure of theirs fails the gate."""
    undecidable: frozenset[str] = frozenset()
    """Undecided cases that got no extra samples because none could decide them (their
    history is too short: :func:`gate.policy.sequential.can_decide`)."""

    def cost_test(self, metric: str, slice_: str | None = None) -> SuiteTest | None:
        """The cost test of a cost metric (on the slice of a gate that names one)."""
        return next(
            (
                t
                for t in self.suite
                if t.name == metric and t.slice == slice_ and t.method is Method.STRATIFIED
            ),
            None,
        )

    def outcome(self, case_id: str) -> CaseOutcome:
        return self.cases[case_id].outcome


def kept(history: BaseHistory | None, case: HeadCase) -> int:
    """Base samples of the case's history that this run's counts will join: none when
    the case changed or the run's setup differs from the history's (it restarts)."""
    prior = history.cases.get(case.case_id) if history is not None else None
    if prior is None or prior.case_hash != case.case_hash:
        return 0
    if not case.run().same_setup(prior.setup):
        return 0
    return prior.samples


def seeding_of(
    history: BaseHistory | None, head: Sequence[HeadCase], seq: SequentialParams
) -> dict[str, int]:
    """A base run's seeding plan: what each case's history lacks of ``min_history``,
    counting the samples this run took already, within ``max_seed``."""
    if not seq.min_history:
        return {}
    need = [
        (c.case_id, seq.min_history - kept(history, c) - len(c.samples) - len(c.extra))
        for c in head
    ]
    return seed_plan(need, seq.max_seed)


def _counts(samples: Sequence[Sample]) -> Counts:
    return Counts(sum(1 for s in samples if s.passed), len(samples))


def evaluate(
    history: BaseHistory | None,
    head: Sequence[HeadCase],
    sampler: Sampler,
    *,
    params: EngineParams | None = None,
    gated: Sequence[GatedMetric] = (),
    seed: bool = False,
) -> Evaluation:
    """The whole engine (module doc). ``seed``: a base run, which first brings every
    case's history up to ``min_history`` samples (:func:`gate.policy.sequential.seed_plan`)."""
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
    cap = seq.cap(m, base_run=seed)

    extra: dict[str, int] = {c.case_id: len(c.extra) for c in head if c.extra}

    def take(plan: Mapping[str, int]) -> int:
        got = sampler(plan)
        for i, k in plan.items():
            new = list(got.get(i, ()))
            if len(new) != k:
                raise ValueError(f"the sampler returned {len(new)} samples for {i!r}, not {k}")
            samples[i].extend(new)
            extra[i] = extra.get(i, 0) + k
        return sum(plan.values())

    seeding = seeding_of(history, head, seq) if seed else {}
    seeded = take(seeding) if seeding else 0

    # A case whose sample broke a hard rule fails the gate whatever more samples show:
    # it gets no extra samples (its test runs on the samples it has); nor does a case
    # that no number of them could decide (its history is too short).
    held: set[str] = {i for i in comparable if any(x.hard for x in samples[i])}
    most = {i: min(seq.max_per_case, len(samples[i]) + cap) for i in comparable}
    futile: set[str] = {
        i
        for i in comparable
        if not can_decide(base[i], most=most[i], log_bound=log_bound, min_effect=p.min_effect)
    }
    needed = sum(
        1
        for i in comparable
        if i not in held
        and i not in futile
        and status(base[i], _counts(samples[i]), log_bound=log_bound, params=seq)
        is CaseStatus.SAMPLING
    )
    spent = 0
    rounds = 0
    sampled: set[str] = {c.case_id for c in head if c.extra}
    while m:
        held |= {i for i in comparable if any(x.hard for x in samples[i])}
        plan = plan_round(
            rounds,
            [
                PlanCase(i, base[i], _counts(samples[i]))
                for i in comparable
                if i not in held and i not in futile
            ],
            log_bound=log_bound,
            extra_spent=spent,
            cap=cap,
            params=seq,
        )
        if not plan:
            break
        spent += take(plan)
        sampled.update(plan)
        rounds += 1

    still: dict[str, bool] = {
        i: status(base[i], _counts(samples[i]), log_bound=log_bound, params=seq).undecided
        for i in comparable
    }
    held |= {i for i in comparable if any(x.hard for x in samples[i])}
    held_undecided = [i for i in comparable if i in held and still[i]]
    futile_undecided = [i for i in comparable if i in futile and i not in held and still[i]]
    saved = min(
        max(0, cap - spent),
        sum(max(0, seq.max_per_case - len(samples[i])) for i in held_undecided),
    )
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
    alpha_each = p.alpha_suite / (1 + sum(1 for g in gated if g.gated))
    suite = [
        pass_rate_test(
            [(base[i], _counts(initial[i])) for i in comparable],
            alpha=alpha_each,
            min_effect=p.suite_min_effect,
        )
    ]
    for g in gated:
        scope = [i for i in comparable if g.cases is None or i in g.cases]
        if g.cost:
            t = cost_suite_test(
                g.name,
                [
                    (i, _history(found, i).values(g.name), _values(initial[i], g.name))
                    for i in scope
                ],
                alpha=alpha_each,
            )
        else:
            pairs = [
                (_history(found, i).metric(g.name), [s.metrics.get(g.name) for s in initial[i]])
                for i in scope
            ]
            t = metric_test(
                g.name, g.better, pairs, alpha=alpha_each, min_effect=p.suite_min_effect
            )
        if not g.gated or g.max_increase is not None:
            t = dataclasses.replace(t, blocked=False, reported=not g.gated)
        suite.append(dataclasses.replace(t, slice=g.slice, max_increase=g.max_increase))

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
    if any(v.outcome is CaseOutcome.REGRESSED for v in verdicts.values()):
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
        cases=verdicts,
        suite=tuple(suite),
        flakiness=flaky,
        spend=Spend(
            initial=sum(len(c.samples) for c in head),
            extra=spent + sum(len(c.extra) for c in head),
            cap=cap,
            rounds=rounds,
            per_case=dict(extra),
            undecided=sum(still.values()),
            seed=seeded,
            seeded=len(seeding),
            held_back=len(held_undecided),
            undecidable=len(futile_undecided),
            saved=saved,
            needed=needed,
            sampled=len(sampled),
        ),
        samples={i: tuple(v) for i, v in samples.items()},
        held_back=frozenset(held),
        undecidable=frozenset(futile_undecided),
    )


def _history(
    found: Mapping[str, tuple[Comparability, CaseHistory | None]], case_id: str
) -> CaseHistory:
    h = found[case_id][1]
    assert h is not None, f"{case_id} is comparable: it has a history"
    return h


def _values(samples: Sequence[Sample], name: str) -> tuple[float, ...]:
    """The samples' values of a metric, n/a left out."""
    return tuple(v for s in samples if (v := s.metrics.get(name)) is not None)


def case_runs(
    head: Sequence[HeadCase], evaluation: Evaluation, gated: Sequence[GatedMetric] = ()
) -> list[CaseRun]:
    """What a baseline refresh appends to the history: every sample this run took of each
    case (initial and extra), with the metrics' sums and the cost metrics' values."""
    costs = {g.name for g in gated if g.cost}
    out: list[CaseRun] = []
    for c in head:
        got = evaluation.samples[c.case_id]
        names = sorted({k for s in got for k in s.metrics})
        sums = {n: MetricSums.of(s.metrics.get(n) for s in got) for n in names}
        values = {n: _values(got, n) for n in names if n in costs}
        out.append(
            CaseRun(
                c.case_id,
                c.case_hash,
                sum(1 for s in got if s.passed),
                len(got),
                {n: v for n, v in sums.items() if v.n},  # a metric n/a throughout: nothing
                c.setup,
                {n: v for n, v in values.items() if v},
                c.legacy_setup,
            )
        )
    return out
