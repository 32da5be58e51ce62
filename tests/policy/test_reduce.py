"""build_results: per-case statistics, dataset metrics, pooled rate, slices, rollups,
hard failures, and the input errors that keep a case from silently vanishing."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gate.model import Shard
from gate.policy import stats
from gate.policy.reduce import in_slice
from gate.results import Results, dumps_results, json_schema, read_results, write_results
from tests.policy.helpers import (
    build_results,
    case,
    dataset,
    make_config,
    results_from_table,
    score,
    scores_from_table,
)


def _build(cases, scores, **kw) -> Results:
    return build_results(
        dataset=dataset(cases),
        scores=scores,
        config=kw.pop("config", None),
        agent={"kind": "test"},
        shard=kw.pop("shard", None),
        timing={},
        **kw,
    )


def test_per_case__pass_rate_flaky_and_std_over_samples():
    r = results_from_table({"a": "PPP", "b": "PPF", "c": "FFF"})
    by = {c.id: c for c in r.cases}
    assert [by[x].pass_rate for x in "abc"] == pytest.approx([1.0, 2 / 3, 0.0])
    assert [by[x].flaky for x in "abc"] == [False, True, False]
    assert [by[x].passed for x in "abc"] == [True, False, False]
    # sample std (ddof=1) of 1,1,0
    assert r.case_std(by["b"])["case_passed"] == pytest.approx(math.sqrt(1 / 3))
    assert r.case_std(by["a"])["case_passed"] == 0.0
    assert r.samples == 3


def test_dataset_metric__mean_of_case_means_with_std_over_samples():
    # sample 0: a=1, b=1 → 1.0; sample 1: 1, 1 → 1.0; sample 2: 1, 0 → 0.5
    r = results_from_table({"a": "PPP", "b": "PPF"})
    m = r.metrics["case_passed"]
    assert m.mean == pytest.approx((1 + 2 / 3) / 2)
    assert m.n == 2
    assert m.std == pytest.approx(float(np.std([1.0, 1.0, 0.5], ddof=1)))
    assert m.ci_low is not None and m.ci_high is not None
    assert m.ci_low <= m.mean <= m.ci_high


def test_na_scores__left_out_of_means_not_counted_as_zero():
    cases = [case("t", 1), case("n", 2, no_tool=True)]
    scores = [score("t", 0, True, call_accuracy=1.0), score("n", 0, True, call_accuracy=None)]
    r = _build(cases, scores)
    assert r.metrics["call_accuracy"].mean == 1.0
    assert r.metrics["call_accuracy"].n == 1
    n_case = next(c for c in r.cases if c.id == "n")
    assert r.case_scores(n_case)["call_accuracy"] is None


def test_metric_na_everywhere__mean_is_none_not_nan():
    cases = [case("n", 1, no_tool=True)]
    r = _build(cases, [score("n", 0, True, call_accuracy=None)])
    assert r.metrics["call_accuracy"].mean is None
    assert r.metrics["call_accuracy"].n == 0
    assert b"NaN" not in dumps_results(r)


def test_one_sample__std_is_na_with_an_explicit_notice():
    r = results_from_table({"a": "P", "b": "F"})
    assert r.metrics["case_passed"].std is None
    assert any("samples: 1" in n for n in r.notices)
    assert all(r.case_std(c) == {} for c in r.cases)


def test_unnecessary_call_rate__pooled_ratio_of_sums_not_mean_of_cases():
    cases = [case("n1", 1, no_tool=True), case("n2", 2, no_tool=True), case("t", 3)]
    scores = [
        score("n1", 0, False, calls=1, calls_on_no_tool=1),
        score("n2", 0, True, calls=0, calls_on_no_tool=0),
        score("t", 0, True, calls=9, calls_on_no_tool=0),
    ]
    r = _build(cases, scores)
    # pooled: 1 / 10; a mean of per-case rates would give (1 + 0 + 0) / 3 or 1/2
    assert r.metrics["unnecessary_call_rate"].mean == pytest.approx(0.1)
    assert r.metrics["unnecessary_call_rate"].n == 10
    assert r.slices["no_tool=true"].metrics["unnecessary_call_rate"].mean == 1.0


def test_unnecessary_call_rate__no_calls_at_all_is_zero():
    r = _build([case("n", 1, no_tool=True)], [score("n", 0, True, calls=0)])
    assert r.metrics["unnecessary_call_rate"].mean == 0.0
    assert r.metrics["unnecessary_call_rate"].n == 0


def test_slices__difficulty_tag_no_tool_must_not_call():
    cases = [
        case("e", 1, difficulty="easy", tags=["refunds"]),
        case(
            "h", 2, difficulty="hard", tags=["refunds", "risky"], must_not_call=["delete_account"]
        ),
        case("n", 3, difficulty="hard", no_tool=True),
    ]
    scores = [score("e", 0, True), score("h", 0, False), score("n", 0, True, call_accuracy=None)]
    r = _build(cases, scores)
    assert set(r.slices) == {
        "difficulty=easy",
        "difficulty=hard",
        "tag=refunds",
        "tag=risky",
        "no_tool=true",
        "no_tool=false",
        "must_not_call=true",
        "must_not_call=false",
    }
    assert r.slices["difficulty=hard"].cases == 2
    assert r.slices["difficulty=hard"].pass_rate == 0.5
    assert r.slices["tag=refunds"].metrics["case_passed"].mean == 0.5
    assert r.slices["must_not_call=true"].pass_rate == 0.0
    assert r.slices["no_tool=true"].metrics["call_accuracy"].mean is None


def test_per_tool_confusion_malformed__summed_over_every_sample():
    cases = [case("a", 1), case("b", 2)]
    scores = [
        score(
            "a",
            0,
            True,
            per_tool={"lookup_order": [1, 1, 1]},
            confusion=[["lookup_order", "lookup_order"]],
        ),
        score(
            "a",
            1,
            False,
            per_tool={"lookup_order": [1, 0, 1], "issue_refund": [0, 0, 1]},
            confusion=[["lookup_order", "issue_refund"]],
            malformed={"InvalidJson": 1},
        ),
        score(
            "b", 0, True, per_tool={"lookup_order": [1, 1, 1]}, confusion=[["lookup_order", None]]
        ),
        score(
            "b",
            1,
            True,
            per_tool={"lookup_order": [1, 1, 1]},
            malformed={"InvalidJson": 2, "UnknownName": 1},
        ),
    ]
    r = _build(cases, scores)
    assert r.per_tool["lookup_order"].expected == 4
    assert r.per_tool["lookup_order"].matched == 3
    assert r.per_tool["lookup_order"].recall == 0.75
    assert r.per_tool["issue_refund"].recall is None
    assert r.per_tool["issue_refund"].called == 1
    assert r.confusion == {"lookup_order": {"lookup_order": 1, "issue_refund": 1, "(none)": 1}}
    assert r.malformed == {"InvalidJson": 3, "UnknownName": 1}
    # a tool the agent called counts among the case's tools (drift attribution)
    assert "issue_refund" in next(c for c in r.cases if c.id == "a").tools


def test_hard_failures__listed_with_case_sample_call_and_line_in_dataset_order():
    cases = [case("x", 10, must_not_call=["delete_account"]), case("y", 20)]
    scores = [
        score("y", 0, True),
        score("y", 1, True),
        score("x", 1, False, violation="delete_account"),
        score("x", 0, True),
    ]
    r = _build(cases, scores)
    assert len(r.hard_failures) == 1
    h = r.hard_failures[0]
    assert (h.kind, h.case_id, h.sample, h.line) == ("must_not_call", "x", 1, 10)
    assert h.call["name"] == "delete_account"


def test_usage_totals_and_per_case_means():
    cases = [case("a", 1), case("b", 2)]
    scores = [
        score("a", 0, True, usage={"prompt_tokens": 100}),
        score("b", 0, True, usage={"prompt_tokens": 50}),
    ]
    r = _build(cases, scores)
    assert r.usage == {
        "prompt_tokens": 150,
        "prompt_tokens_per_case": 75.0,
        "prompt_tokens_per_sample": 75.0,
    }


def test_tool_definition_hashes_come_from_the_dataset():
    r = results_from_table({"a": "P"})
    from tests.policy.helpers import TOOLS

    assert r.tools["lookup_order"].hash == TOOLS["lookup_order"].definition_hash()


def test_shard__only_that_shards_cases_are_expected():
    cases = [case(f"c{i}", i + 1) for i in range(20)]
    mine = [c for c in cases if Shard(2, 3).holds(c.id)]
    assert 0 < len(mine) < 20
    r = _build(cases, [score(c.id, 0, True) for c in mine], shard=Shard(2, 3))
    assert [c.id for c in r.cases] == [c.id for c in mine]
    assert r.dataset.total_cases == 20 and r.dataset.cases == len(mine)
    assert r.shard is not None and (r.shard.index, r.shard.count) == (2, 3)


def test_extra_samples__counted_in_pass_rate_marked_and_left_out_of_std():
    cases = [case("a", 1), case("b", 2)]
    regular = scores_from_table({"a": "PP", "b": "FF"})
    extra = [score("b", 2, True), score("b", 3, False)]
    r = _build(
        cases, regular, extra_scores=extra, config=make_config(policy={"max_extra_samples": 2})
    )
    b = next(c for c in r.cases if c.id == "b")
    assert b.pass_rate == 0.25 and b.flaky and b.extra_samples == 2
    assert [s.extra for s in b.samples] == [False, False, True, True]
    assert r.samples == 2
    assert r.confirm is not None and r.confirm.extra_samples == 2 and r.confirm.cases == {"b": 2}
    # std over the two regular sample indices: both give 0.5
    assert r.metrics["case_passed"].std == 0.0


def test_same_inputs_and_seed__identical_bytes():
    table = {f"c{i}": "PPF"[i % 3 :] + "P" * (i % 3) for i in range(30)}
    a = results_from_table(table, config=make_config(samples=3, seed=7))
    b = results_from_table(table, config=make_config(samples=3, seed=7))
    assert dumps_results(a) == dumps_results(b)
    c = results_from_table(table, config=make_config(samples=3, seed=8))
    assert c.metrics["case_passed"].ci_low is not None
    assert dumps_results(a) != dumps_results(c)  # the seed drives the bootstrap


def test_results__round_trip_through_the_file_and_match_the_schema(tmp_path):
    import jsonschema

    r = results_from_table({"a": "PPF", "b": "PPP"})
    write_results(tmp_path / "results.json", r)
    back = read_results(tmp_path / "results.json")
    assert dumps_results(back) == dumps_results(r)
    assert back.model_dump(mode="json") == r.model_dump(mode="json")
    import json

    jsonschema.validate(json.loads((tmp_path / "results.json").read_text()), json_schema())


def test_schema_file__matches_the_models():
    import json
    from pathlib import Path

    import gate

    path = Path(gate.__file__).parent / "schemas" / "results.schema.json"
    assert json.loads(path.read_text()) == json_schema(), (
        "regenerate with: python -m gate.results > gate/schemas/results.schema.json"
    )


def test_bootstrap__seeded_and_covers_the_mean():
    rng = np.random.default_rng(0)
    vals = rng.random((50, 1))
    lo1, hi1 = stats.bootstrap_ratio_ci(vals, np.ones((50, 1)), seed=3, reps=500)
    lo2, hi2 = stats.bootstrap_ratio_ci(vals, np.ones((50, 1)), seed=3, reps=500)
    assert (lo1, hi1) == (lo2, hi2)
    assert lo1[0] < vals.mean() < hi1[0]
    # one case: no interval
    lo, hi = stats.bootstrap_ratio_ci(vals[:1], np.ones((1, 1)), seed=3, reps=100)
    assert np.isnan(lo[0]) and np.isnan(hi[0])


def test_empty_shard__no_cases_gives_explicit_no_data():
    from tests.policy.helpers import decide_results as decide

    cases = [case("a", 1)]
    shard = Shard(1, 2) if not Shard(1, 2).holds("a") else Shard(2, 2)
    r = _build(cases, [], shard=shard)
    assert r.cases == [] and r.metrics["case_passed"].mean is None
    v = decide(r, make_config(gates=[{"metric": "case_passed", "min": 0.5}]), None, None).verdict
    assert v is not None and not v.passed and v.gates[0].no_data


def test_results_file__integer_scores_and_usage_survive_a_round_trip(tmp_path):
    from gate.model import SampleScore, Tallies

    s = SampleScore(
        case_id="a",
        sample=0,
        passed=True,
        scores={"duplicate_calls": 2, "tool_selection_f1": 1.0},
        tallies=Tallies(calls=3, calls_on_no_tool=0),
        usage={"prompt_tokens": 12, "cost_usd": 0.0012},
    )
    r = _build([case("a", 1)], [s])
    write_results(tmp_path / "r.json", r)
    back = read_results(tmp_path / "r.json")
    assert dumps_results(back) == dumps_results(r)
    assert back.sample_scores(back.cases[0].samples[0])["duplicate_calls"] == 2


def test_latency__summarised_under_timing_only():
    from dataclasses import replace

    scores = [replace(score("a", i, True), latency_ms=float(10 * (i + 1))) for i in range(4)]
    r = _build([case("a", 1)], scores)
    assert r.timing["latency_s"] == {
        "samples": 4,
        "mean": 0.025,
        "p50": 0.025,
        "p95": 0.0385,
        "max": 0.04,
        "total": 0.1,
    }
    assert "latency" not in dumps_results(r.cases[0]).decode()


def test_extra_samples__never_move_a_dataset_figure_or_a_threshold_gate():
    """The same head with and without extra samples (five broken cases sampled 18 more
    times each, making unnecessary calls): the same dataset-level metrics, slices and
    pooled rate, and the same outcome and value of every threshold gate and of the
    flakiness guard — extra samples serve the per-case test only."""
    from gate.pipeline.typed import stats_of
    from gate.policy.decide import decide

    cases = [case(f"c{i:02d}", i + 1, tags=("refund",) if i % 3 else ()) for i in range(54)]
    cases += [case(f"n{i}", 60 + i, no_tool=True) for i in range(6)]
    regular = [
        score(c.id, s, passed, calls=0 if c.expected_no_tool else 1)
        for c in cases
        for s in range(2)
        for passed in [not c.id.startswith("c0") or c.id > "c04"]
    ]
    broken = [c.id for c in cases[:5]]
    extra = [
        score(cid, 2 + k, k % 3 == 0, calls=4, calls_on_no_tool=0)
        for cid in broken
        for k in range(18)
    ] + [score("n0", 2 + k, False, calls=3, calls_on_no_tool=3) for k in range(18)]
    config = make_config(
        gates=[
            {"metric": "unnecessary_call_rate", "max": 0.05},
            {"metric": "case_passed", "min": 0.9},
            {"metric": "call_accuracy", "min": 0.8, "slice": "tag=refund"},
        ],
        variance={"max_flaky_share": 0.05},
        policy={"max_extra_samples": 200},
    )
    plain = _build(cases, regular, config=config)
    more = _build(cases, regular, extra_scores=extra, config=config)
    assert more.confirm is not None and more.confirm.extra_samples == 108
    assert plain.metrics == more.metrics and plain.slices == more.slices
    assert more.metrics["unnecessary_call_rate"].n == 54 * 2  # the initial samples' calls
    a, b = decide(stats_of(plain), None, config), decide(stats_of(more), None, config)
    assert [(g.metric, g.slice, g.op, g.value, g.passed) for g in a.gates] == [
        (g.metric, g.slice, g.op, g.value, g.passed) for g in b.gates
    ]
    assert a.variance == b.variance and a.passed == b.passed
    # the per-case figures do show the extra samples
    c00 = next(c for c in more.cases if c.id == "c00")
    assert c00.extra_samples == 18 and c00.flaky and len(c00.samples) == 20


@pytest.mark.parametrize(
    "name, no_tool, member",
    [
        ("no_tool=true", True, True),
        ("no_tool=false", False, True),
        ("no_tool=false", True, False),
        ("no_tool=yes", False, False),  # neither value: no case, as the slice table has none
        ("must_not_call=maybe", False, False),
    ],
)
def test_in_slice__flag_slices__only_true_and_false_name_cases(
    name: str, no_tool: bool, member: bool
) -> None:
    assert (
        in_slice(name, difficulty=None, tags=(), no_tool=no_tool, must_not_call=no_tool) is member
    )
