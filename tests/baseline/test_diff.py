"""compare(): the exact flip rule, new/removed cases, metric deltas, comparability and
tool-definition drift."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gate.model import ToolSpec
from tests.policy.helpers import TOOLS, case, dataset, results_from_table
from tests.policy.helpers import compare_results as compare


@pytest.mark.parametrize(
    ("base", "head", "kind"),
    [
        ("P" * 40, "FF", "regression"),  # a long history: two failures are significant
        ("P" * 20, "F" * 20, "regression"),
        # no outcome of so few samples could be significant: undecided, never noise
        ("PPP", "FFF", "undecided"),
        ("PP", "FF", "undecided"),
        ("FFF", "PPP", "undecided"),
        ("PPP", "PPF", "undecided"),
        ("PPF", "FFF", "undecided"),
        ("PFF", "PPF", "undecided"),
        ("P", "F", "undecided"),  # one sample each cannot tell
        ("P" * 40, "P" * 35 + "F" * 5, "likely_regression"),  # fell 12.5 points, E > 1
        ("P" * 40, "PPF", "likely_regression"),  # the test could tell, the evidence points
        ("P" * 20, "PPF", "noise"),  # one unlucky run: the test could tell, and did not
        ("F" * 40, "FFP", "noise"),
        ("PPP", "PPP", None),
        ("FFF", "FFF", None),
        ("PFP", "PPF", None),  # same pass rate: not a flip
    ],
)
def test_flip_kind__the_one_classification(base, head, kind):
    c = compare(results_from_table({"x": base}), results_from_table({"x": head}))
    assert c.comparable
    assert [f.kind for f in c.flips] == ([kind] if kind else [])


def test_likely_regression__says_why_it_is_not_significant_yet():
    c = compare(results_from_table({"x": "P" * 40}), results_from_table({"x": "P" * 35 + "F" * 5}))
    (flip,) = c.flips
    assert flip.because == "not significant among the 1 cases tested (p = 0.91)"
    assert flip.reason.startswith("passed 40/40 in the base history, 35/40 on head: likely")
    assert (c.regressions, c.likely_regressions, c.undecided) == (0, 1, 0)


def test_undecided__too_few_samples_to_tell__says_what_would_decide_it():
    """3 base samples and 3 head samples that all fail: no outcome of 3 samples could
    be significant against so short a history (the single-case bound 1/0.03), so the case
    is undecided — with the head samples that would decide it — never noise."""
    c = compare(results_from_table({"x": "PPP"}), results_from_table({"x": "FFF"}))
    (flip,) = c.flips
    assert flip.kind == "undecided"
    assert flip.because == (
        "3 base samples and 3 head samples: 7 head samples would decide it, or 2 with a base "
        "history of 36"
    )
    assert flip.reason.startswith(
        "passed 3/3 in the base history, 0/3 on head: changed, too few samples to tell"
    )
    assert (c.regressions, c.likely_regressions, c.undecided, c.noise) == (0, 0, 1, 0)
    one = compare(results_from_table({"x": "P"}), results_from_table({"x": "F"})).flips[0]
    assert one.because == (
        "1 base sample and 1 head sample: a base history of 36 samples and 2 head samples "
        "would decide it"
    )


def test_one_unlucky_run_is_noise_but_a_consistent_drop_over_a_long_history_a_regression():
    base = results_from_table({"unlucky": "P" * 20, "broken": "P" * 20, "steady": "P" * 20})
    head = results_from_table({"unlucky": "PPF", "broken": "FFF", "steady": "PPP"})
    c = compare(base, head)
    assert (c.regressions, c.likely_regressions, c.fixes, c.noise) == (1, 0, 0, 1)
    reg, noise = c.flips
    assert (reg.case_id, reg.kind, reg.base_pass_rate, reg.head_pass_rate) == (
        "broken",
        "regression",
        1.0,
        0.0,
    )
    assert reg.reason.startswith("passed 20/20 in the base history, 0/3 on head: regressed (p = ")
    assert reg.reason.endswith("; failed checks: calls_matched")
    assert (noise.case_id, noise.kind) == ("unlucky", "noise")
    assert noise.head_pass_rate == pytest.approx(2 / 3)
    assert "within noise" in noise.reason


def test_flips__ordered_regressions_fixes_noise_new_removed():
    # Same dataset hash but different case sets (e.g. results filtered to some cases).
    base_cases = [case(x, i + 1) for i, x in enumerate(["a", "b", "c", "gone"])]
    head_cases = [case(x, i + 1) for i, x in enumerate(["a", "b", "c", "fresh"])]
    half = "P" * 10 + "F" * 10
    base = results_from_table(
        {"a": "P" * 20, "b": "F" * 20, "c": half, "gone": "P" * 20},
        ds=dataset(base_cases, sha="s" * 64),
    )
    head = results_from_table(
        {"a": "F" * 20, "b": "P" * 20, "c": "P" * 11 + "F" * 9, "fresh": "P" * 20},
        ds=dataset(head_cases, sha="s" * 64),
    )
    kinds = [(f.case_id, f.kind) for f in compare(base, head).flips]
    assert kinds == [
        ("a", "regression"),
        ("b", "fix"),
        ("c", "noise"),
        ("fresh", "new"),
        ("gone", "removed"),
    ]


def test_identical_base_and_head__no_flips_and_zero_deltas():
    r = results_from_table({"a": "PPF", "b": "FFF", "c": "PPP"})
    c = compare(r, r)
    assert list(c.flips) == [] and (c.regressions, c.fixes, c.noise) == (0, 0, 0)
    assert all(d.delta in (0.0, None) for d in c.metrics.values())


def test_metric_deltas__head_minus_base():
    c = compare(results_from_table({"a": "P", "b": "P"}), results_from_table({"a": "P", "b": "F"}))
    d = c.metrics["case_passed"]
    assert (d.base, d.head, d.delta) == (1.0, 0.5, -0.5)


def test_slice_deltas__per_slice_head_minus_base_for_slice_gates():
    cases = [case("a", 1, difficulty="hard"), case("b", 2, difficulty="hard"), case("c", 3)]
    base = results_from_table({"a": "P", "b": "P", "c": "P"}, seed_cases=cases)
    head = results_from_table({"a": "F", "b": "P", "c": "P"}, seed_cases=cases)
    c = compare(base, head)
    hard = c.slice_metrics["difficulty=hard"]["case_passed"]
    assert (hard.base, hard.head, hard.delta) == (1.0, 0.5, -0.5)
    easy = c.slice_metrics["difficulty=easy"]["case_passed"]
    assert (easy.base, easy.head, easy.delta) == (1.0, 1.0, 0.0)


def test_different_dataset_without_case_hashes__not_comparable_and_nothing_compared():
    cases = [case("a", 1)]
    base = results_from_table({"a": "P"}, ds=dataset(cases, sha="a" * 64))
    head = results_from_table({"a": "F"}, ds=dataset(cases, sha="b" * 64))
    c = compare(base, head)
    assert not c.comparable
    assert list(c.flips) == [] and c.metrics == {}
    assert c.note is not None and "aaaaaaaaaaaa" in c.note and "nothing was compared" in c.note


def test_only_tool_definitions_changed__compared_with_drift_and_attributed_flips():
    cases = [
        case("uses-lookup", 1, expect=["lookup_order"]),
        case("uses-refund", 2, expect=["issue_refund"]),
    ]
    changed = dict(TOOLS)
    changed["lookup_order"] = ToolSpec(
        "lookup_order", "Look up an order by its id (ord_…).", {"type": "object"}
    )
    del changed["delete_account"]
    base = results_from_table(
        {"uses-lookup": "P" * 20, "uses-refund": "P" * 20},
        ds=dataset(cases, sha="a" * 64, cases_sha256="c" * 64),
    )
    head = results_from_table(
        {"uses-lookup": "F" * 20, "uses-refund": "P" * 20},
        ds=dataset(cases, sha="b" * 64, cases_sha256="c" * 64, tools=changed),
    )
    c = compare(base, head)
    assert c.comparable and c.note is not None and "tool definitions" in c.note
    drift = {d.tool: d for d in c.tool_drift}
    assert set(drift) == {"lookup_order", "delete_account"}
    assert drift["delete_account"].change == "removed"
    lookup = drift["lookup_order"]
    assert lookup.change == "changed" and list(lookup.flipped_cases) == ["uses-lookup"]
    assert any(line.startswith("-") and "Look up an order." in line for line in lookup.diff)
    assert any(line.startswith("+") and "by its id" in line for line in lookup.diff)
    (flip,) = c.flips
    assert flip.case_id == "uses-lookup" and list(flip.drifted_tools) == ["lookup_order"]


def test_tool_drift__listed_even_when_not_comparable():
    cases = [case("a", 1)]
    changed = {**TOOLS, "new_tool": ToolSpec("new_tool", "New.", {})}
    base = results_from_table({"a": "P"}, ds=dataset(cases, sha="a" * 64))
    head = results_from_table({"a": "P"}, ds=dataset(cases, sha="b" * 64, tools=changed))
    c = compare(base, head)
    assert not c.comparable and [(d.tool, d.change) for d in c.tool_drift] == [
        ("new_tool", "added")
    ]


def test_rule_text__names_every_kind():
    c = compare(results_from_table({"a": "P"}), results_from_table({"a": "P"}))
    for words in ("regression", "likely regression", "fix", "noise", "not comparable"):
        assert words in c.rule


def test_shard_head_against_a_full_baseline__other_shards_cases_are_not_removed():
    from gate.model import Shard
    from tests.policy.helpers import build_results, scores_from_table

    cases = [case(f"c{i}", i + 1) for i in range(12)]
    ds = dataset(cases)
    base = results_from_table({c.id: "P" * 20 for c in cases}, ds=ds)
    mine = [c.id for c in cases if Shard(1, 2).holds(c.id)]
    head = build_results(
        dataset=ds,
        scores=scores_from_table({cid: "FFF" for cid in mine}),
        config=None,
        agent={},
        shard=Shard(1, 2),
        timing={},
    )
    c = compare(base, head)
    assert sorted(f.case_id for f in c.flips) == sorted(mine)
    assert {f.kind for f in c.flips} == {"regression"}


@settings(max_examples=80, deadline=None)
@given(n_base=st.integers(1, 40), n_head=st.integers(1, 12), data=st.data())
def test_property__a_flip_moved_by_the_minimum_effect_and_only_a_significant_one_counts(
    n_base, n_head, data
):
    """Whatever the counts: a regression or likely regression fell by at least the
    minimum effect (0.1), a case whose rate did not move is no flip, and only a
    significant regression counts in ``regressions``."""
    bp = data.draw(st.integers(0, n_base))
    hp = data.draw(st.integers(0, n_head))
    base = "P" * bp + "F" * (n_base - bp)
    head = "P" * hp + "F" * (n_head - hp)
    c = compare(results_from_table({"x": base}), results_from_table({"x": head}))
    change = hp / n_head - bp / n_base
    if hp * n_base == bp * n_head:
        assert list(c.flips) == []
        return
    (flip,) = c.flips
    if flip.kind in ("regression", "likely_regression"):
        assert -change >= 0.1 - 1e-9
    if flip.kind in ("fix", "likely_fix"):
        assert change >= 0.1 - 1e-9
    assert c.regressions == (flip.kind == "regression")
    assert c.likely_regressions == (flip.kind == "likely_regression")
