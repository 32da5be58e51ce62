"""The cost test (gate.policy.cost): each case's head samples against the samples its
history recorded, the noise being how much a case's own samples vary.

* an agent whose every sample now costs exactly 1.5× is beyond noise on six cases of two
  samples, against a history of 1, 2 or 36 samples per case, however different the
  cases' sizes; its typical case rose exactly 50 %;
* unchanged samples are no evidence; a looping sample (3×) in one case is not beyond noise;
* on unchanged pull requests with noisy samples and outliers the test's one-sided p falls
  under alpha about alpha of the time (a permutation test; the normal law approximates it);
* the typical case is what every case shares, not what one case did;
* "what would decide it": more head samples when the shift would then be beyond noise.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from gate.policy.cost import CostCase, cost_test, samples_to_decide

SIZES = (40.0, 60.0, 90.0, 120.0, 400.0, 250.0)


def _cases(base: int, head: int, factor: float) -> list[CostCase]:
    return [
        CostCase(f"c{i}", [size] * base, [size * factor] * head) for i, size in enumerate(SIZES)
    ]


@pytest.mark.parametrize("history", [1, 2, 36])
def test_every_sample_costs_one_and_a_half_times__beyond_noise_on_six_cases_of_two(
    history: int,
) -> None:
    got = cost_test(_cases(history, 2, 1.5))
    assert got.cases == 6
    assert got.base_mean == pytest.approx(sum(SIZES) / 6)
    assert got.head_mean == pytest.approx(1.5 * sum(SIZES) / 6)
    # one base sample per case: each case's base is lowest in 1 of its 3 orderings, so no
    # permutation test can go below 3**-6 = 0.0014; the suite's alpha is 0.00625
    assert got.p_rise <= (0.003 if history == 1 else 0.001) and got.evidence.p_fall > 0.99
    assert got.evidence.typical_p_rise < 0.001
    assert got.evidence.typical == pytest.approx(0.5)
    assert got.evidence.drivers == ("c4", "c5", "c3")


def test_nothing_changed_and_nothing_varies__no_evidence_either_way() -> None:
    got = cost_test(_cases(36, 2, 1.0))
    assert got.change == 0.0 and got.p_rise == 1.0 and got.evidence.p_fall == 1.0
    assert got.evidence.typical is None and got.evidence.z == 0.0


def test_a_case_without_a_value_on_one_side__left_out() -> None:
    got = cost_test([CostCase("a", [1.0, 1.1], []), CostCase("b", [], [2.0]), *_cases(2, 2, 1.0)])
    assert got.cases == 6
    assert cost_test([CostCase("a", [1.0], [])]).cases == 0


def test_zero_calls_on_every_sample__no_error_and_no_change() -> None:
    got = cost_test([CostCase("notool", [0.0] * 36, [0.0, 0.0])])
    assert got.p_rise == 1.0 and got.evidence.typical is None
    rose = cost_test([CostCase(f"c{i}", [0.0] * 36, [1.0, 1.0]) for i in range(6)])
    assert rose.p_rise < 0.001 and rose.evidence.typical is not None


def _noisy(
    rng: np.random.Generator, cases: int, base: int, head: int, factor: float = 1.0
) -> list[CostCase]:
    """The benchmark's world: cases of different sizes, 5–35 % noise per sample, one
    sample in 40 an outlier costing three times as much."""
    mean = rng.lognormal(math.log(3000), math.log(1.8), size=cases)
    spread = rng.uniform(0.05, 0.35, size=cases)

    def draw(k: int, scale: float) -> np.ndarray:
        noise = rng.lognormal(0.0, spread[:, None], size=(cases, k))
        out = rng.random((cases, k)) < 1 / 40
        return np.round(mean[:, None] * scale * noise * np.where(out, 3.0, 1.0))

    b, h = draw(base, 1.0), draw(head, factor)
    return [CostCase(f"c{i}", b[i].tolist(), h[i].tolist()) for i in range(cases)]


@pytest.mark.parametrize(("cases", "base"), [(6, 36), (12, 2), (60, 36)])
def test_unchanged_noisy_samples__a_rise_called_about_alpha_of_the_time(
    cases: int, base: int
) -> None:
    rng = np.random.default_rng([7, cases, base])
    runs = 800
    p = [cost_test(_noisy(rng, cases, base, 2)).p_rise for _ in range(runs)]
    assert sum(x <= 0.05 for x in p) / runs <= 0.065
    assert sum(x <= 0.00625 for x in p) / runs <= 0.0125


def test_one_looping_sample_in_one_case__not_beyond_noise() -> None:
    cases = _noisy(np.random.default_rng(3), 6, 36, 2)
    looped = [CostCase(c.case_id, c.base, list(c.head)) for c in cases]
    looped[4] = CostCase("c4", cases[4].base, [cases[4].head[0] * 3.0, cases[4].head[1]])
    assert cost_test(looped).p_rise > 0.00625


def test_every_case_30_percent__typical_near_30_one_case_of_30__typical_near_0() -> None:
    rng = np.random.default_rng(8)
    every = cost_test(_noisy(rng, 12, 36, 3, 1.3))
    assert every.evidence.typical == pytest.approx(0.3, abs=0.06)
    assert every.evidence.typical_p_rise < 1e-4 and every.p_rise < 0.005
    one = _noisy(rng, 30, 36, 3)
    low = min(range(30), key=lambda i: np.std(np.log(one[i].base)))  # the most precise case
    one[low] = CostCase(one[low].case_id, one[low].base, [v * 1.3 for v in one[low].head])
    got = cost_test(one)
    assert got.evidence.typical is not None and abs(got.evidence.typical) < 0.06


def test_samples_to_decide__more_samples_when_they_would_decide_else_none() -> None:
    rng = np.random.default_rng(21)
    ev = cost_test(_noisy(rng, 6, 36, 2, 1.12)).evidence
    assert ev.z > 0
    need = samples_to_decide(ev, 1e-6, 60)
    assert need is None or need > ev.head_samples
    assert samples_to_decide(ev, 0.49, 60) == ev.head_samples + 1 or ev.z > 0.03
    fell = cost_test(_noisy(rng, 6, 36, 2, 0.7)).evidence
    assert samples_to_decide(fell, 0.01, 60) is None
    # the base history's own noise bounds what head samples can do
    short = cost_test(_noisy(np.random.default_rng(2), 6, 1, 2, 1.1)).evidence
    assert samples_to_decide(short, 1e-9, 60) is None
