"""Adaptive confirmation: extra samples only for apparent flips, as many as the exact
test needs (≥ 1, ≤ K), and a regression confirmed or dismissed by them."""

from __future__ import annotations

from gate.policy import confirm
from gate.policy.confirm import extra_needed
from gate.results import Results, stats_of
from tests.policy.helpers import (
    build_results,
    case,
    dataset,
    make_config,
    results_from_table,
    score,
    scores_from_table,
)
from tests.policy.helpers import compare_results as compare


def cases_to_confirm(head: Results, base: Results | None, config) -> dict[str, int]:  # type: ignore[no-untyped-def]
    return confirm.cases_to_confirm(
        stats_of(head), None if base is None else stats_of(base), config
    )


def test_only_apparent_flips_get_extra_samples():
    base = results_from_table({"reg": "PPP", "fix": "FFF", "flaky": "PPP", "same": "PPP"})
    head = results_from_table({"reg": "FFF", "fix": "PPP", "flaky": "PFP", "same": "PPP"})
    plan = cases_to_confirm(head, base, make_config(confirm={"max_extra_samples": 4}))
    assert plan == {"reg": 1, "fix": 1}


def test_extra_samples__as_many_as_the_exact_test_needs_capped_at_k():
    base = results_from_table({"x": "P"})
    head = results_from_table({"x": "F"})
    assert cases_to_confirm(head, base, make_config(confirm={"max_extra_samples": 5})) == {"x": 5}
    assert extra_needed(1, 1, cap=50) == 18  # 1 / (2 + 18) = 0.05
    assert extra_needed(2, 2, cap=50) == 3  # 1 / C(6, 2) = 1/15 is not enough, 1 / C(7, 2) is
    assert extra_needed(3, 3, cap=50) == 1  # already significant: one confirming sample


def test_no_confirmation_without_k_or_baseline():
    base = results_from_table({"x": "P"})
    head = results_from_table({"x": "F"})
    assert cases_to_confirm(head, base, make_config()) == {}
    assert cases_to_confirm(head, None, make_config(confirm={"max_extra_samples": 3})) == {}


def _head_with_extra(extra_pattern: str):
    cases = [case("x", 1), case("y", 2)]
    regular = scores_from_table({"x": "FF", "y": "PP"})
    extra = [score("x", 2 + i, ch == "P") for i, ch in enumerate(extra_pattern)]
    cfg = make_config(samples=2, confirm={"max_extra_samples": 3})
    return build_results(
        dataset=dataset(cases),
        scores=regular,
        config=cfg,
        agent={},
        shard=None,
        timing={},
        extra_scores=extra,
    )


def test_confirmed_regression__every_extra_sample_fails_too():
    base = results_from_table({"x": "PP", "y": "PP"})
    c = compare(base, _head_with_extra("FF"))
    (flip,) = c.flips
    assert flip.kind == "regression" and flip.head_samples == 4 and flip.head_extra_samples == 2
    assert "confirmed with 2 extra sample(s)" in flip.reason


def test_dismissed_regression__one_extra_pass_makes_it_noise():
    base = results_from_table({"x": "PP", "y": "PP"})
    head = _head_with_extra("FP")
    (flip,) = compare(base, head).flips
    assert flip.kind == "noise" and flip.head_pass_rate == 0.25
    assert head.confirm is not None and head.confirm.extra_samples == 2
    # no more confirmation needed: the case is flaky now
    assert cases_to_confirm(head, base, make_config(confirm={"max_extra_samples": 3})) == {}
