"""Adaptive confirmation (``confirm: {max_extra_samples: K}``): spend extra samples only
on the cases that look like flips, before calling them regressions or fixes.

A case **looks like a flip** when it is stable on both sides with opposite outcomes
(base N/N passed and head 0/M, or the reverse) — exactly the cases
:func:`gate.policy.flips.classify` would call a regression or a fix. Other cases need
no confirmation: a flaky case stays flaky whatever the extra samples show, and a case
with the same pass rate on both sides did not change.

How many extra head samples: the fewest m (at least 1, at most K minus the extra samples
the case already had) that make the flip significant by a one-sided Fisher exact test
at α = 0.05, base N/N against head 0/(M + m):  1 / C(N + M + m, N) ≤ 0.05. With 3 or
more samples per side that is already true, so the case gets 1 confirming sample; with
1 sample per side (p = 1/2) it takes 18 more, capped at K.

The pipeline runs those samples (numbered after the case's last sample), passes them
to ``build_results(extra_scores=…)`` and compares again: a regression is confirmed when
every extra sample fails too, and turns into noise (flaky) as soon as one passes.
"""

from __future__ import annotations

from math import comb

import numpy as np

from gate.config import Config
from gate.policy.advisor import ALPHA
from gate.policy.flips import FIX, REGRESSION, classify
from gate.results import Results


def extra_needed(n_base: int, n_head: int, *, alpha: float = ALPHA, cap: int) -> int:
    """Fewest extra head samples (≥ 1, ≤ cap) making a total flip significant."""
    if cap <= 0:
        return 0
    m = 1
    while m < cap and 1 / comb(n_base + n_head + m, n_base) > alpha:
        m += 1
    return m


def cases_to_confirm(head: Results, base: Results | None, config: Config | None) -> dict[str, int]:
    """Case id → extra head samples to run, for every apparent flip (dataset order)."""
    cap = config.confirm.max_extra_samples if config is not None else 0
    if (
        cap <= 0
        or base is None
        or (
            base.dataset.sha256 != head.dataset.sha256
            and (
                base.dataset.cases_sha256 is None
                or base.dataset.cases_sha256 != head.dataset.cases_sha256
            )
        )
    ):
        return {}
    base_by_id = {c.id: c for c in base.cases}
    pairs = [(c, base_by_id[c.id]) for c in head.cases if c.id in base_by_id]
    if not pairs:
        return {}
    h_rate = np.array([h.pass_rate for h, _ in pairs])
    b_rate = np.array([b.pass_rate for _, b in pairs])
    kinds = classify(b_rate, h_rate)
    out: dict[str, int] = {}
    for i in np.flatnonzero((kinds == REGRESSION) | (kinds == FIX)):
        h, b = pairs[int(i)]
        room = cap - h.extra_samples
        k = extra_needed(len(b.samples), len(h.samples), cap=room)
        if k > 0:
            out[h.id] = k
    return out
