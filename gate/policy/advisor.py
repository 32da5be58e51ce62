"""The sample-size advisor: what a run with N samples per case can reliably detect
(docs/policy.md, section 6).

* **one case** — the smallest drop from N/N a one-sided Fisher exact test (α = 0.05)
  calls significant: p = C(N + k, N) / C(2N, N) for k head passes; ``None`` when not
  even a total drop is (N ≤ 2).
* **the dataset pass rate** — the minimum detectable drop of a two-sided z-test at
  α = 0.05 with power 0.8 over the within-case variance (both sides run the same cases),
  never less than 1/(C · N); needs N ≥ 2.
"""

from __future__ import annotations

import math

import numpy as np

from gate.model import Advice
from gate.policy import stats

ALPHA = 0.05
POWER = 0.8


def per_case_min_drop(samples: int, *, alpha: float = ALPHA) -> float | None:
    """Smallest significant drop of one case's pass rate from N/N (see module doc)."""
    best: int | None = None
    for k in range(samples - 1, -1, -1):
        if stats.fisher_one_sided_all_pass(samples, samples, k) <= alpha:
            best = k
            break
    return None if best is None else (samples - best) / samples


def samples_for_total_drop(*, alpha: float = ALPHA) -> int:
    """Fewest samples per side for which one case's 1.0 → 0.0 is significant."""
    n = 1
    while stats.fisher_one_sided_all_pass(n, n, 0) > alpha:  # base all pass, head all fail
        n += 1
    return n


def dataset_min_drop(
    samples: int, case_pass_rates: stats.Floats
) -> tuple[float | None, float | None]:
    """(minimum detectable drop of the dataset pass rate, within-case std) — see module doc."""
    c = int(case_pass_rates.shape[0])
    if samples < 2 or c == 0:
        return None, None
    p = case_pass_rates
    var_w = float(np.mean(p * (1.0 - p) * samples / (samples - 1)))
    z = stats.Z_ALPHA_TWO_SIDED_05 + stats.Z_POWER_80
    mdd = z * math.sqrt(2.0 * var_w / (c * samples))
    return max(mdd, 1.0 / (c * samples)), math.sqrt(var_w)


def advise(*, samples: int, case_pass_rates: stats.Floats) -> Advice:
    """The advisor figures and a one-paragraph summary for the report."""
    cases = int(case_pass_rates.shape[0])
    per_case = per_case_min_drop(samples) if samples else None
    need = samples_for_total_drop()
    mdd, within = dataset_min_drop(samples, case_pass_rates)
    parts = [
        f"{samples} sample(s) per case: a case counts as a regression only when it passed "
        f"every base sample and fails every head sample."
    ]
    if per_case is None:
        parts.append(
            f"One case's flip is not statistically significant with fewer than {need} samples "
            f"per side (one-sided Fisher exact test, α={ALPHA}); a longer base history "
            "(each base run adds to it) or more samples."
        )
    else:
        parts.append(
            f"The smallest drop of one case's pass rate that is significant (one-sided Fisher "
            f"exact test, α={ALPHA}) is {per_case:.2f}."
        )
    if mdd is None:
        parts.append(
            "The detectable drop of the dataset pass rate needs at least 2 samples per case "
            "to measure the within-case spread."
        )
    else:
        parts.append(
            f"Over {cases} cases the dataset pass rate would show a drop of {mdd:.3f} or more "
            f"(two-sided z-test, α={ALPHA}, power {POWER}, at the observed within-case std "
            f"{within:.3f})."
        )
    return Advice(
        samples=samples,
        cases=cases,
        per_case_min_detectable_drop=per_case,
        per_case_samples_for_total_drop=need,
        dataset_min_detectable_drop=None if mdd is None else round(mdd, 6),
        within_case_std=None if within is None else round(within, 6),
        rule=(
            "one case: one-sided Fisher exact test, base N/N vs head k/N, α=0.05; dataset: "
            "MDD = (z0.975 + z0.8)·sqrt(2·σw²/(cases·N)), σw² the mean unbiased within-case "
            "variance of pass/fail, floored at 1/(cases·N)"
        ),
        summary=" ".join(parts),
    )
