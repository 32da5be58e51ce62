"""Policy invariants, property-based (hypothesis):

* raising a ``min`` threshold never turns a failing gate into a passing one;
* adding a must-not-call violation always fails the gate;
* identical base and head produce no flips;
* identical inputs and seed produce identical results (bytes, ``timing`` aside).
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gate.results import dumps_results
from tests.policy.helpers import build_results, case, dataset, make_config, score
from tests.policy.helpers import compare_results as compare
from tests.policy.helpers import decide_results as decide

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# A run: per case, a list of (passed, f1) samples; every case has the same sample count.
runs = st.integers(min_value=1, max_value=4).flatmap(
    lambda n: st.lists(
        st.lists(
            st.tuples(st.booleans(), st.sampled_from([0.0, 0.25, 0.5, 2 / 3, 1.0])),
            min_size=n,
            max_size=n,
        ),
        min_size=1,
        max_size=8,
    )
)


def _results(run, *, violation_at=None, seed=0, config=None):
    cases = [
        case(f"c{i}", i + 1, difficulty=("easy", "hard")[i % 2], tags=["t"] if i % 3 else [])
        for i in range(len(run))
    ]
    scores = [
        score(
            f"c{i}",
            s,
            passed,
            f1=f1,
            violation="delete_account" if violation_at == (i, s) else None,
        )
        for i, samples in enumerate(run)
        for s, (passed, f1) in enumerate(samples)
    ]
    return build_results(
        dataset=dataset(cases),
        scores=scores,
        config=config or make_config(seed=seed),
        agent={"kind": "test"},
        shard=None,
        timing={"wall_s": 1.0},
    )


def _gate_config(metric, threshold, slice_=None):
    gate = {"metric": metric, "min": threshold}
    if slice_:
        gate["slice"] = slice_
    return make_config(gates=[gate])


@SETTINGS
@given(
    run=runs,
    metric=st.sampled_from(["tool_selection_f1", "case_passed", "call_accuracy"]),
    slice_=st.sampled_from([None, "difficulty=easy", "tag=t"]),
    low=st.floats(0, 1),
    raise_by=st.floats(0, 1),
)
def test_raising_a_min_never_turns_fail_into_pass(run, metric, slice_, low, raise_by):
    r = _results(run)
    high = min(1.0, low + raise_by)
    at_low = decide(r, _gate_config(metric, low, slice_), None, None).verdict
    at_high = decide(r, _gate_config(metric, high, slice_), None, None).verdict
    assert at_low is not None and at_high is not None
    if not at_low.passed:
        assert not at_high.passed


@SETTINGS
@given(run=runs, data=st.data(), threshold=st.floats(0, 1))
def test_adding_a_must_not_call_violation_always_fails(run, data, threshold):
    i = data.draw(st.integers(0, len(run) - 1))
    s = data.draw(st.integers(0, len(run[0]) - 1))
    cfg = _gate_config("case_passed", threshold)
    v = decide(_results(run, violation_at=(i, s)), cfg, None, None).verdict
    assert v is not None and not v.passed and v.hard_failures == 1
    assert v.reasons[0].startswith(f"must-not-call: case c{i} sample {s}")


@SETTINGS
@given(run=runs)
def test_identical_base_and_head_produce_no_flips(run):
    r = _results(run)
    c = compare(r, _results(run))
    assert c.comparable and list(c.flips) == []
    out = decide(r, make_config(), _results(run), "base")
    assert out.verdict is not None and out.verdict.regressions == 0


@SETTINGS
@given(run=runs, seed=st.integers(0, 2**32 - 1))
def test_identical_inputs_and_seed_give_identical_results(run, seed):
    cfg = make_config(seed=seed, gates=[{"metric": "tool_selection_f1", "min": 0.5}])
    a = decide(_results(run, config=cfg), cfg, _results(run), "base")
    b = decide(_results(run, config=cfg), cfg, _results(run), "base")
    assert dumps_results(a) == dumps_results(b)
