"""The sample-size advisor's rules."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gate.policy.advisor import advise, dataset_min_drop, per_case_min_drop, samples_for_total_drop


@pytest.mark.parametrize(
    ("n", "drop"),
    [(1, None), (2, None), (3, 1.0), (4, 1.0), (5, 0.8), (10, 0.4)],
)
def test_per_case__smallest_significant_drop_by_fisher_exact(n, drop):
    got = per_case_min_drop(n)
    assert got == (None if drop is None else pytest.approx(drop))


def test_samples_for_a_total_drop_is_three():
    assert samples_for_total_drop() == 3


def test_dataset__two_sample_z_rule_at_the_observed_within_case_spread():
    rates = np.array([1.0] * 90 + [2 / 3] * 10)
    mdd, within = dataset_min_drop(3, rates)
    var_w = 10 * (2 / 3) * (1 / 3) * 3 / 2 / 100
    expected = (1.959963984540054 + 0.8416212335729143) * math.sqrt(2 * var_w / 300)
    assert mdd == pytest.approx(expected)
    assert within == pytest.approx(math.sqrt(var_w))


def test_dataset__no_spread_floors_at_one_sample_of_one_case():
    mdd, within = dataset_min_drop(5, np.ones(40))
    assert mdd == pytest.approx(1 / 200) and within == 0.0


def test_one_sample__explicitly_unknown():
    a = advise(samples=1, case_pass_rates=np.ones(10))
    assert a.dataset_min_detectable_drop is None and a.per_case_min_detectable_drop is None
    assert "fewer than 3 samples" in a.summary and "at least 2 samples" in a.summary
