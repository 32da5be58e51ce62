"""What a run could detect: the exact per-case calculation against the engine itself."""

from __future__ import annotations

import numpy as np
import pytest

from gate.policy import engine, history, power
from gate.policy.casetest import CaseOutcome, Counts
from gate.policy.engine import EngineParams, HeadCase, Sample
from gate.policy.history import CaseRun

P = EngineParams()


def test_case_detection__matches_the_engine_run_many_times():
    # one case, so the per-run cap (one extra sample per case) must not bind: the exact
    # calculation assumes it does not
    uncapped = EngineParams(sequential=engine.SequentialParams(max_extra=1000))
    base, rate, runs = Counts(30, 30), 0.5, 1500
    rng = np.random.default_rng(3)
    hist = history.extend(None, [CaseRun("a", "h", 30, 30)])
    hits = 0
    for _ in range(runs):
        head = [HeadCase("a", "h", tuple(Sample(bool(rng.random() < rate)) for _ in range(2)))]

        def sampler(plan):
            return {
                c: [Sample(bool(rng.random() < rate)) for _ in range(k)] for c, k in plan.items()
            }

        ev = engine.evaluate(hist, head, sampler, params=uncapped)
        hits += ev.outcome("a") is CaseOutcome.REGRESSED
    exact = power.case_detection(base, rate, m=1, params=uncapped)
    se = (exact * (1 - exact) / runs) ** 0.5
    assert abs(hits / runs - exact) < 4 * se


def test_case_detection__always_failing_head__caught_unchanged_head__not():
    assert power.case_detection(Counts(100, 100), 0.0, m=60, params=P) == pytest.approx(1.0)
    assert power.case_detection(Counts(100, 100), 1.0, m=60, params=P) == 0.0


def test_case_detectable_drop__short_history__none():
    assert power.case_detectable_drop(Counts(2, 2), m=60, params=P) is None
    assert power.case_detectable_drop(Counts(100, 100), m=60, params=P) == pytest.approx(0.56)


def test_suite_detectable_drop__reproducible_and_shrinks_with_cases():
    few = [Counts(100, 100)] * 10 + [Counts(80, 100)] * 5
    many = few * 6
    a = power.suite_detectable_drop(few, initial=2, alpha=0.0125, min_effect=0.02)
    assert a == power.suite_detectable_drop(few, initial=2, alpha=0.0125, min_effect=0.02)
    b = power.suite_detectable_drop(many, initial=2, alpha=0.0125, min_effect=0.02)
    assert a is not None and b is not None and b < a


def test_sentences__say_what_was_spent_and_what_stayed_undecided():
    hist = history.extend(None, [CaseRun(f"c{i}", "h", 100, 100) for i in range(20)])
    head = [HeadCase(f"c{i}", "h", (Sample(True), Sample(i != 0))) for i in range(20)]
    ev = engine.evaluate(
        hist,
        head,
        lambda plan: {c: [Sample(True)] * k for c, k in plan.items()},
        params=EngineParams(sequential=engine.SequentialParams(max_extra=1)),
    )
    d = power.detectability([Counts(100, 100)] * 20, params=P)
    text = power.sentences(ev, d)
    assert text[0].startswith(
        "A case that always passed (100 of 100 base samples) is caught in this run with 100 % "
        "when it now always fails"
    )
    assert any("This run spent 41 samples: 40 on the 20 cases, 1 extra" in s for s in text)
    assert any("stayed undecided" in s and "c0" in s for s in text)


def _simulate(
    m: int, depth: int, broken: int, rate: float, runs: int, seed: int
) -> tuple[float, float]:
    """``runs`` seeded runs of the engine: m cases that always passed ``depth`` base
    samples, the first ``broken`` of them now passing at ``rate``. Returns the mean of
    what each run's report states for such a case (its own detection figure, for the
    histories, the cap as its cases shared it and the regressions it found) and the share
    of broken cases the runs caught."""
    from gate.pipeline.sequential import detection_of
    from gate.policy.casetest import CaseOutcome

    rng = np.random.default_rng(seed)
    hist = history.extend(None, [CaseRun(f"c{i}", "h", depth, depth) for i in range(m)])
    truth = {f"c{i}": rate if i < broken else 1.0 for i in range(m)}

    def draw(cid: str, k: int) -> list[Sample]:
        return [Sample(bool(x < truth[cid])) for x in rng.random(k)]

    stated: dict[tuple[int, int], float] = {}
    said, caught = [], []
    for _ in range(runs):
        head = [HeadCase(c, "h", tuple(draw(c, 2))) for c in truth]
        ev = engine.evaluate(hist, head, lambda plan: {c: draw(c, k) for c, k in plan.items()})
        regressed = [c for c in truth if ev.outcome(c) is CaseOutcome.REGRESSED]
        key = (ev.spend.needed, len(regressed))
        if key not in stated:
            d = detection_of(ev, EngineParams(), 0)
            got = d.stable_half if rate == 0.5 else d.stable_broken
            assert got is not None
            stated[key] = got
        said.append(stated[key])
        caught.append(sum(1 for c in regressed if truth[c] < 1.0) / broken)
    return float(np.mean(said)), float(np.mean(caught))


@pytest.mark.parametrize(
    ("m", "depth", "broken", "rate"),
    [
        (20, 36, 1, 0.5),  # one case alone: the single-case threshold, the whole cap
        (20, 12, 4, 0.5),  # four beside each other share the cap
        (20, 8, 10, 0.0),  # ten broken together: e-BH's threshold falls with them
    ],
)
def test_detection__stated_probability__matches_the_catches_of_seeded_runs(
    m: int, depth: int, broken: int, rate: float
) -> None:
    """What the report says a run could catch is what such runs catch: never a
    probability the same run's outcome contradicts (a seeded simulation, 150 runs)."""
    said, caught = _simulate(m, depth, broken, rate, runs=150, seed=depth)
    assert abs(said - caught) <= 0.08, (said, caught)
