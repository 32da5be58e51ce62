"""decide(): gates on dataset-level means (per slice), hard failures always fail and come
first, regressions against a baseline, "no data" gates fail loudly, reasons name cases."""

from __future__ import annotations

from tests.policy.helpers import (
    build_results,
    case,
    dataset,
    make_config,
    results_from_table,
    score,
)
from tests.policy.helpers import decide_results as decide


def _f1_results(values: dict[str, float]):
    cases = [case(cid, i + 1) for i, cid in enumerate(values)]
    scores = [score(cid, 0, v >= 0.9, f1=v) for cid, v in values.items()]
    return build_results(
        dataset=dataset(cases), scores=scores, config=None, agent={}, shard=None, timing={}
    )


def test_gate_min__fails_with_value_threshold_and_the_cases_below_worst_first():
    r = _f1_results({"refund-001": 1.0, "refund-017": 0.5, "refund-018": 0.8, "refund-019": 0.9})
    cfg = make_config(gates=[{"metric": "tool_selection_f1", "min": 0.9}])
    v = decide(r, cfg, None, None).verdict
    assert v is not None and not v.passed
    gate = v.gates[0]
    assert gate.value == 0.8 and not gate.passed
    assert list(gate.failing_cases) == ["refund-017", "refund-018"]
    assert gate.reason == (
        "tool_selection_f1 0.800 < 0.900 (min) — 2 case(s) below: refund-017, refund-018"
    )
    assert v.summary.startswith("tool_selection_f1 0.800 < 0.900 (min)")


def test_gate_min__at_the_threshold_passes():
    r = _f1_results({"a": 0.9, "b": 0.9, "c": 0.9})
    cfg = make_config(gates=[{"metric": "tool_selection_f1", "min": 0.9}])
    v = decide(r, cfg, None, None).verdict
    assert (
        v is not None and v.passed and v.gates[0].reason == "tool_selection_f1 0.900 ≥ 0.900 (min)"
    )


def test_gate_max__on_a_lower_is_better_metric():
    cases = [case("n", 1, no_tool=True), case("t", 2)]
    scores = [score("n", 0, False, calls=2, calls_on_no_tool=2), score("t", 0, True, calls=2)]
    r = build_results(
        dataset=dataset(cases), scores=scores, config=None, agent={}, shard=None, timing={}
    )
    cfg = make_config(gates=[{"metric": "unnecessary_call_rate", "max": 0.1}])
    v = decide(r, cfg, None, None).verdict
    assert v is not None and not v.passed
    assert v.gates[0].reason.startswith(
        "unnecessary_call_rate 0.500 > 0.100 (max) — 1 case(s) above: n"
    )


def test_gate_on_slice__uses_the_slice_mean():
    cases = [case("e", 1, difficulty="easy"), case("h", 2, difficulty="hard")]
    scores = [score("e", 0, True), score("h", 0, False)]
    r = build_results(
        dataset=dataset(cases), scores=scores, config=None, agent={}, shard=None, timing={}
    )
    cfg = make_config(
        gates=[
            {"metric": "case_passed", "min": 0.9, "slice": "difficulty=easy"},
            {"metric": "case_passed", "min": 0.5, "slice": "difficulty=hard"},
        ]
    )
    v = decide(r, cfg, None, None).verdict
    assert v is not None
    assert [g.passed for g in v.gates] == [True, False]
    assert v.gates[1].reason.startswith(
        "case_passed [difficulty=hard] 0.000 < 0.500 (min) — 1 case(s) below: h"
    )


def test_gate_with_no_data__fails_loudly_not_silently():
    r = results_from_table({"a": "P"})
    cfg = make_config(
        gates=[
            {"metric": "recovery_rate", "min": 0.5},  # never produced
            {"metric": "case_passed", "min": 0.5, "slice": "tag=nope"},  # empty slice
        ]
    )
    v = decide(r, cfg, None, None).verdict
    assert v is not None and not v.passed
    assert all(g.no_data and not g.passed for g in v.gates)
    assert "no data" in v.gates[0].reason and "not produced" in v.gates[0].reason
    assert "slice tag=nope has no cases" in v.gates[1].reason


def test_gate_on_metric_na_in_every_case__no_data():
    cases = [case("n", 1, no_tool=True)]
    r = build_results(
        dataset=dataset(cases),
        scores=[score("n", 0, True, call_accuracy=None)],
        config=None,
        agent={},
        shard=None,
        timing={},
    )
    v = decide(r, make_config(gates=[{"metric": "call_accuracy", "min": 0.5}]), None, None).verdict
    assert v is not None and not v.passed and "n/a in every case" in v.gates[0].reason


def test_must_not_call__fails_whatever_the_averages_and_is_listed_first():
    cases = [case(f"c{i}", i + 1, must_not_call=["delete_account"]) for i in range(50)]
    scores = [score(c.id, s, True) for c in cases for s in range(3)]
    scores[100] = score("c33", 1, True, violation="delete_account")
    r = build_results(
        dataset=dataset(cases), scores=scores, config=None, agent={}, shard=None, timing={}
    )
    cfg = make_config(gates=[{"metric": "case_passed", "min": 0.5}])
    v = decide(r, cfg, None, None).verdict
    assert v is not None and not v.passed and v.hard_failures == 1
    assert v.reasons[0] == (
        "must-not-call: case c33 sample 1 — called must-not-call tool delete_account "
        "(dataset.jsonl:34)"
    )
    assert v.gates[0].passed


def test_regressions__over_max_new_failures_fail_and_name_the_cases():
    base = results_from_table({"a": "P" * 20, "b": "P" * 20, "c": "F" * 20})
    head = results_from_table({"a": "F" * 20, "b": "P" * 19 + "F", "c": "P" * 20})
    cfg = make_config(regressions={"max_new_failures": 0})
    out = decide(head, cfg, base, "base.json")
    v = out.verdict
    assert v is not None and not v.passed and v.regressions == 1
    assert (
        "1 regression(s) > 0 allowed (regressions.max_new_failures): a (20/20 → 0/20)" in v.reasons
    )
    assert out.comparison is not None and out.comparison.source == "base.json"
    lenient = decide(head, make_config(regressions={"max_new_failures": 1}), base, "base.json")
    assert lenient.verdict is not None and lenient.verdict.passed


def test_likely_regressions__warn_by_default__fail_with_likely_fail():
    base = results_from_table({"a": "P" * 40, "b": "P" * 40})
    head = results_from_table({"a": "PPF", "b": "PPP"})
    warned = decide(head, make_config(), base, "base.json")
    v = warned.verdict
    assert v is not None and v.passed and (v.regressions, v.likely_regressions) == (0, 1)
    assert any(
        n.startswith("1 likely regression(s), not significant yet: a (40/40 → 2/3)")
        for n in warned.notices
    )
    from gate.config import LikelyMode

    failed = decide(head, make_config(regressions={"likely": LikelyMode.FAIL}), base, "base.json")
    v = failed.verdict
    assert v is not None and not v.passed and v.likely_fail
    assert any(
        "1 regression(s) (1 likely: regressions.likely is fail) > 0 allowed" in r for r in v.reasons
    )


def test_undecided_drops__warn_by_default__fail_with_undecided_fail():
    """One sample on each side: a case that passed its base sample and fails its head
    sample got worse with too few samples to tell — a warning named in the summary by
    default (the verdict passes, the reports are ⚠️), a failure with
    ``regressions.undecided: fail``. A case that rose undecided is neither."""
    from gate.config import UndecidedMode

    base = results_from_table({"a": "P", "b": "P", "c": "F"})
    head = results_from_table({"a": "F", "b": "P", "c": "P"})
    warned = decide(head, make_config(), base, "base.json")
    v = warned.verdict
    assert v is not None and v.passed and (v.undecided, v.undecided_fail) == (1, False)
    assert warned.comparison is not None and warned.comparison.undecided == 2
    assert "1 case(s) fell, too few samples to tell" in v.summary
    assert any(
        n.startswith("1 case(s) fell with too few samples to tell: a (1/1 → 0/1)")
        for n in warned.notices
    )
    cfg = make_config(regressions={"undecided": UndecidedMode.FAIL})
    failed = decide(head, cfg, base, "base.json").verdict
    assert failed is not None and not failed.passed and failed.undecided_fail
    assert list(failed.reasons) == [
        "1 case(s) fell with too few samples to tell (regressions.undecided: fail): a (1/1 → 0/1)"
    ]


def test_no_baseline__passes_with_a_notice():
    out = decide(results_from_table({"a": "P"}), make_config(), None, None)
    assert out.verdict is not None and out.verdict.passed
    assert "no baseline: flips and regressions were not checked" in out.notices
    assert out.verdict.summary == (
        "not compared (no baseline was given), no gates configured, no hard failures"
    )
    assert out.verdict.not_compared is not None
    assert out.verdict.not_compared.why == "no_baseline"


def test_no_baseline__require_baseline__fails_naming_why():
    from gate.pipeline.typed import stats_of
    from gate.policy.decide import decide as decide_verdict

    stats = stats_of(results_from_table({"a": "P"}))
    v = decide_verdict(stats, None, make_config(), no_baseline="no artifact", require_baseline=True)
    assert not v.passed and v.require_baseline
    assert v.reasons == (
        "not compared: no artifact — a baseline is required (require-baseline); a run on the "
        "base branch makes one",
    )


def test_baseline_from_another_dataset__not_compared_regressions_not_checked():
    base = results_from_table({"a": "P"})
    head = results_from_table({"a": "F", "b": "P"})
    out = decide(head, make_config(), base, "base.json")
    assert out.comparison is not None and not out.comparison.comparable
    assert list(out.comparison.flips) == []
    assert out.verdict is not None and out.verdict.passed
    assert any(n.startswith("baseline not comparable") for n in out.notices)
    assert out.verdict.not_compared is not None
    assert out.verdict.not_compared == out.comparison.not_compared


def test_decide__does_not_change_the_input_results():
    r = results_from_table({"a": "P"})
    decide(r, make_config(gates=[{"metric": "case_passed", "min": 1.0}]), None, None)
    assert r.verdict is None and r.comparison is None


def test_cost_gate_not_checked__first_line_says_so_and_never_green():
    """A max_increase gate with nothing to compare with is not checked: the first line
    counts it apart from the gates met, and the heading is ⚠️."""
    from gate.report import render_comment

    cfg = make_config(gates=[{"metric": "steps", "max_increase": 0.25}])
    out = decide(results_from_table({"a": "P"}, config=cfg), cfg, None, None)
    assert out.verdict is not None and out.verdict.passed
    assert out.verdict.gates[0].not_checked
    first = render_comment(out).splitlines()[1]
    assert first.startswith("## ⚠️ ToolGate")
    assert "0 gates met, 1 not checked" in first and "✅" not in first
