"""Adaptive confirmation (``confirm: {max_extra_samples: K}``): spend extra samples only
on the cases that look like flips, before calling them regressions or fixes.

A case **looks like a flip** when it is stable on both sides with opposite outcomes
(base N/N passed and head 0/M, or the reverse) — exactly the cases
:func:`gate.baseline.diff.flip_kind` would call a regression or a fix. Other cases need
no confirmation: a flaky case stays flaky whatever the extra samples show, and a case
with the same pass rate on both sides did not change.

How many extra head samples: the fewest m (at least 1, at most K minus the extra samples
the case already had) that make the flip significant by a one-sided Fisher exact test
at α = 0.05, base N/N against head 0/(M + m):  1 / C(N + M + m, N) ≤ 0.05. With 3 or
more samples per side that is already true, so the case gets 1 confirming sample; with
1 sample per side (p = 1/2) it takes 18 more, capped at K.

The pipeline runs those samples (numbered after the case's last sample), reduces again
with them marked ``extra`` and compares again: a regression is confirmed when
every extra sample fails too, and turns into noise (flaky) as soon as one passes.
"""

from __future__ import annotations

from math import comb

from gate.baseline.diff import comparable, flip_kind
from gate.config import Config
from gate.model import FlipKind, SuiteStats
from gate.policy.advisor import ALPHA


def extra_needed(n_base: int, n_head: int, *, alpha: float = ALPHA, cap: int) -> int:
    """Fewest extra head samples (≥ 1, ≤ cap) making a total flip significant."""
    if cap <= 0:
        return 0
    m = 1
    while m < cap and 1 / comb(n_base + n_head + m, n_base) > alpha:
        m += 1
    return m


def cases_to_confirm(
    head: SuiteStats, base: SuiteStats | None, config: Config | None
) -> dict[str, int]:
    """Case id → extra head samples to run, for every apparent flip (dataset order)."""
    cap = config.confirm.max_extra_samples if config is not None else 0
    if cap <= 0 or base is None or not comparable(base, head):
        return {}
    base_by_id = {c.id: c for c in base.cases}
    out: dict[str, int] = {}
    for h in head.cases:
        b = base_by_id.get(h.id)
        if b is None or flip_kind(b.pass_rate, h.pass_rate) not in (
            FlipKind.REGRESSION,
            FlipKind.FIX,
        ):
            continue
        room = cap - h.extra_samples
        k = extra_needed(b.samples, h.samples, cap=room)
        if k > 0:
            out[h.id] = k
    return out
