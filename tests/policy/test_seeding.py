"""A base run seeds the histories up to ``min_history``; a case whose hard failure already
fails the gate gets no extra samples; both are said in the run's sentences."""

from __future__ import annotations

import pytest

from gate.policy import engine, history, power
from gate.policy.engine import EngineParams, HeadCase, Sample
from gate.policy.history import CaseRun
from gate.policy.sequential import SequentialParams, seed_plan


def _passing(plan: dict[str, int]) -> dict[str, list[Sample]]:
    return {c: [Sample(True)] * k for c, k in plan.items()}


def test_seed_plan__every_need_in_full_without_a_budget() -> None:
    assert seed_plan([("a", 34), ("b", 0), ("c", 10)], None) == {"a": 34, "c": 10}


def test_seed_plan__a_budget__water_filling_then_one_each_in_order() -> None:
    assert seed_plan([("a", 38), ("b", 38), ("c", 10)], 50) == {"a": 20, "b": 20, "c": 10}
    assert seed_plan([("a", 38), ("b", 38), ("c", 10)], 7) == {"a": 3, "b": 2, "c": 2}
    assert seed_plan([("a", 5)], 0) == {}


def test_base_run__new_cases__brought_up_to_min_history() -> None:
    head = [HeadCase(f"c{i}", "h", (Sample(True), Sample(True))) for i in range(3)]
    ev = engine.evaluate(None, head, _passing, seed=True)
    assert {c: len(s) for c, s in ev.samples.items()} == {"c0": 36, "c1": 36, "c2": 36}
    assert (ev.spend.seed, ev.spend.seeded, ev.spend.total) == (3 * 34, 3, 3 * 36)
    carried = history.extend(None, engine.case_runs(head, ev))
    assert all(h.samples == 36 for h in carried.cases.values())


def test_base_run__history_counts__only_what_it_lacks__within_max_seed() -> None:
    hist = history.extend(
        None,
        [CaseRun("long", "h", 40, 40), CaseRun("short", "h", 10, 10), CaseRun("old", "x", 9, 9)],
    )
    head = [HeadCase(c, "h", (Sample(True), Sample(True))) for c in ("long", "short", "old")]
    ev = engine.evaluate(hist, head, _passing, seed=True)
    # "long" is full; "short" keeps its 10; "old" changed, so its history restarts
    assert ev.spend.per_case == {"short": 24, "old": 34}
    capped = EngineParams(sequential=SequentialParams(max_seed=10))
    ev = engine.evaluate(hist, head, _passing, seed=True, params=capped)
    assert ev.spend.per_case == {"short": 5, "old": 5}


def test_base_run__the_agent_changed__its_history_restarts_so_it_is_seeded_whole() -> None:
    hist = history.extend(None, [CaseRun("a", "h", 36, 36, setup="model-a")])
    same = engine.evaluate(hist, [HeadCase("a", "h", (Sample(True),) * 2, setup="model-a")],
                           _passing, seed=True)  # fmt: skip
    assert same.spend.seed == 0
    moved = engine.evaluate(hist, [HeadCase("a", "h", (Sample(True),) * 2, setup="model-b")],
                            _passing, seed=True)  # fmt: skip
    assert moved.spend.seed == 34
    assert moved.cases["a"].comparability.value == "comparable"  # compared all the same


def test_pull_request__seeds_nothing() -> None:
    head = [HeadCase("a", "h", (Sample(True), Sample(True)))]
    assert engine.evaluate(None, head, _passing).spend.seed == 0


def test_hard_failure__no_extra_samples__what_it_saved_said() -> None:
    hist = history.extend(None, [CaseRun(f"c{i}", "h", 36, 36) for i in range(10)])
    broken = (Sample(False, hard=True), Sample(True))
    head = [HeadCase("c0", "h", broken)] + [
        HeadCase(f"c{i}", "h", (Sample(True), Sample(True))) for i in range(1, 10)
    ]

    def sampler(plan: dict[str, int]) -> dict[str, list[Sample]]:
        assert "c0" not in plan, "a case whose hard failure fails the gate is not sampled"
        return _passing(plan)

    ev = engine.evaluate(hist, head, sampler)
    assert ev.spend.extra == 0 and ev.held_back == {"c0"}
    assert ev.spend.held_back == 1 and ev.spend.saved == 15  # the PR's cap: 1.5 × 10
    d = power.detectability([v.base for v in ev.cases.values() if v.base], params=EngineParams())
    text = power.sentences(ev, d)
    assert (
        "A case that always passed (36 of 36 base samples) and breaks without a hard failure"
        in (text[0])
    )
    assert any("1 case with a hard failure got no extra samples" in s and "15" in s for s in text)
    # without the hard failure the same case is sampled
    head[0] = HeadCase("c0", "h", (Sample(False), Sample(True)))
    assert engine.evaluate(hist, head, _passing).spend.per_case.get("c0", 0) > 0


@pytest.mark.parametrize("base_run", [False, True])
def test_cap__a_pull_request_1_5_per_case__a_base_run_0_5(base_run: bool) -> None:
    hist = history.extend(None, [CaseRun(f"c{i}", "h", 36, 36) for i in range(10)])
    head = [HeadCase(f"c{i}", "h", (Sample(False), Sample(True))) for i in range(10)]
    ev = engine.evaluate(
        hist, head, lambda plan: {c: [Sample(False)] * k for c, k in plan.items()}, seed=base_run
    )
    assert ev.spend.cap == (5 if base_run else 15)
    assert ev.spend.extra <= ev.spend.cap
