"""Every figure of the worked examples in docs/policy.md, section 9, recomputed."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gate.policy import power
from gate.policy.casetest import Counts, log_evalue, log_kt, log_marginal, log_max_likelihood
from gate.policy.engine import EngineParams
from gate.policy.flakiness import FlakinessCase, flakiness_test
from gate.policy.history import MetricSums
from gate.policy.suite import Better, log_lr_case, metric_test, pass_rate_test

P = EngineParams()


def _e(base, head):
    return math.exp(log_evalue(Counts(*base), Counts(*head)))


def test_per_case_example():
    assert 60 / P.alpha_case == pytest.approx(2000)
    assert math.exp(log_kt(100, 0)) == pytest.approx(0.0563, abs=5e-5)
    assert math.exp(log_marginal(Counts(100, 100))) == pytest.approx(0.3366, abs=5e-5)
    assert math.exp(log_marginal(Counts(0, 2))) == pytest.approx(0.2938, abs=5e-5)
    pooled = math.exp(log_max_likelihood(Counts(100, 102)))
    assert pooled == pytest.approx(5.307e-5, rel=1e-3)
    assert _e((100, 100), (0, 2)) == pytest.approx(1863, rel=1e-3)
    assert _e((100, 100), (0, 3)) == pytest.approx(66280, rel=1e-3)
    assert _e((90, 100), (3, 10)) == pytest.approx(51, rel=1e-2)
    assert _e((90, 100), (5, 16)) == pytest.approx(1624, rel=1e-3)
    assert _e((9800, 10000), (930, 1000)) == pytest.approx(3.3e10, rel=2e-2)
    assert _e((100, 100), (2, 2)) == pytest.approx(0.18, abs=5e-3)
    assert _e((100, 100), (1, 2)) == pytest.approx(7.5, abs=0.05)


def test_suite_examples():
    lr = [
        [math.exp(v) for v in log_lr_case(Counts(*b), Counts(*h))]
        for b, h in (((100, 100), (1, 2)), ((95, 100), (1, 2)), ((70, 100), (2, 2)))
    ]
    assert (lr[0][4], lr[0][6]) == (pytest.approx(8.5), pytest.approx(34.0))
    assert lr[1][4] == pytest.approx(4.36, abs=0.01)
    assert lr[2][4] == pytest.approx(0.076, abs=0.001)
    forty = [(Counts(100, 100), Counts(1, 2))] * 40 + [(Counts(100, 100), Counts(2, 2))] * 20
    assert pass_rate_test(forty, alpha=0.0125).blocked
    t = metric_test(
        "tool_selection_f1",
        Better.HIGHER,
        [
            (MetricSums.of([b] * 10), h)
            for b, h in ((0.9, [0.8, 0.85]), (1.0, [0.9, 1.0]), (0.5, [0.5, 0.5]))
        ],
        alpha=0.01,
    )
    assert (t.change, t.se, t.p_value) == (
        pytest.approx(-0.042, abs=5e-4),
        pytest.approx(0.022, abs=5e-4),
        pytest.approx(0.10, abs=5e-3),
    )


def test_flakiness_example():
    cases = [
        FlakinessCase("a", Counts(100, 100), Counts(1, 2), Counts(1, 2)),
        FlakinessCase("b", Counts(0, 100), Counts(1, 2), Counts(1, 2)),
        FlakinessCase("c", Counts(80, 100), Counts(2, 2), Counts(2, 2)),
    ]
    assert 1 / flakiness_test(cases, alpha=0.0075).p_value == pytest.approx(1.80, abs=5e-3)


def test_power_examples():
    assert power.case_detectable_drop(Counts(100, 100), m=60, params=P) == pytest.approx(0.56)
    assert power.case_detection(Counts(100, 100), 0.5, m=60, params=P) == pytest.approx(
        0.75, abs=5e-3
    )
    # the benchmark's 60-case mix, each with 100 base samples at its expected count
    rng = np.random.default_rng(0)
    p = np.concatenate(
        [np.ones(42), rng.uniform(0.9, 0.99, 9), rng.uniform(0.5, 0.9, 6), np.zeros(3)]
    )
    bases = [Counts(round(100 * q), 100) for q in p]
    drop = power.suite_detectable_drop(bases, initial=2, alpha=P.alpha_suite, min_effect=0.02)
    assert drop == pytest.approx(0.08, abs=0.01)
