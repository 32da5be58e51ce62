"""Sequential sampling: extra head samples only where a case's test is undecided, under a
per-case and a per-run cap (docs/policy.md, section 9.3, gives the states, the futility
rule, the rounds and the caps, with a worked example).

A case's state (:func:`status`) is regressed (its e-value,
:func:`gate.policy.casetest.log_evalue`, reached m/α), settled (the futility rule:
``futility_effect`` δ_f, ``futility_ratio`` B), at limit (``max_per_case``) or sampling.
:func:`can_decide` spends samples only where a total failure could be decided with them.

Why this is valid however often it is checked: every case's e-value is an e-process
(Ville's inequality holds at any stopping time), so looking after every round, stopping
a case for futility, or being stopped by a cap can only make rejections rarer. The
futility rule and the order of service use the data freely for the same reason; they
decide cost and power, never the false-block rate.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass

from gate.model import MIN_HISTORY
from gate.policy.casetest import Counts, Direction, log_evalue

BATCHES = (2, 2, 4, 4, 8, 8, 8, 8, 8, 8)
"""Extra samples per sampling case, round by round (they add up to 60)."""
EXTRA_PER_CASE = 1.5
"""A pull request's default cap on extra samples, per comparable case."""
BASE_EXTRA_PER_CASE = 0.5
"""A base run's default cap on extra samples, per comparable case."""


@dataclass(frozen=True, slots=True)
class SequentialParams:
    """The sampling plan (module doc)."""

    initial: int = 2
    batches: tuple[int, ...] = BATCHES
    max_per_case: int = 60
    max_extra: int | None = None
    """Extra samples per run; ``None``: :data:`EXTRA_PER_CASE` per comparable case on a
    pull request, :data:`BASE_EXTRA_PER_CASE` on a base run."""
    futility_effect: float = 0.4
    futility_ratio: float = 1.5
    min_history: int = MIN_HISTORY
    """Base samples per case a history needs to catch the changes the policy is built
    for; a base run (:func:`seed_plan`) brings every case up to it."""
    max_seed: int | None = None
    """Most samples one base run spends on seeding; ``None``: as many as the histories
    need."""

    def __post_init__(self) -> None:
        if self.initial < 1:
            raise ValueError("initial samples must be ≥ 1")
        if any(b < 1 for b in self.batches):
            raise ValueError("every batch must be ≥ 1 sample")
        if self.max_per_case < self.initial:
            raise ValueError("max_per_case must be ≥ initial")
        if self.max_extra is not None and self.max_extra < 0:
            raise ValueError("max_extra must be ≥ 0")
        if not 0 < self.futility_effect < 1 or self.futility_ratio < 1:
            raise ValueError("futility_effect must be in (0, 1) and futility_ratio ≥ 1")
        if self.min_history < 0 or (self.max_seed is not None and self.max_seed < 0):
            raise ValueError("min_history and max_seed must be ≥ 0")

    def cap(self, comparable: int, *, base_run: bool = False) -> int:
        """Extra samples this run may spend."""
        if self.max_extra is not None:
            return self.max_extra
        return math.floor(comparable * (BASE_EXTRA_PER_CASE if base_run else EXTRA_PER_CASE))


class CaseStatus(enum.StrEnum):
    REGRESSED = "regressed"
    SETTLED = "settled"
    AT_LIMIT = "at_limit"
    SAMPLING = "sampling"

    @property
    def undecided(self) -> bool:
        """The stopping rule would still sample the case."""
        return self in (CaseStatus.SAMPLING, CaseStatus.AT_LIMIT)


def log_futility(base: Counts, head: Counts, effect: float) -> float:
    """log Λ of the futility rule (module doc); +inf when the base rate is below ``effect``."""
    pb = (base.passes + 0.5) / (base.samples + 1)
    q = pb - effect
    if q <= 0:
        return math.inf
    return head.passes * math.log(pb / q) + head.failures * math.log((1 - pb) / (1 - q))


def can_decide(base: Counts, *, most: int, log_bound: float, min_effect: float) -> bool:
    """Whether the case's test could decide it with ``most`` head samples in all (module
    doc): a head that failed every one of them would be regressed — its e-value at
    ``log_bound`` and its drop at least ``min_effect``."""
    if base.samples == 0 or (base.rate or 0.0) < min_effect - 1e-12:
        return False
    return log_evalue(base, Counts(0, most), Direction.WORSE) >= log_bound


def status(base: Counts, head: Counts, *, log_bound: float, params: SequentialParams) -> CaseStatus:
    """The state of one comparable case; ``log_bound`` is log(m/α)."""
    if log_evalue(base, head, Direction.WORSE) >= log_bound:
        return CaseStatus.REGRESSED
    if log_futility(base, head, params.futility_effect) >= math.log(params.futility_ratio):
        return CaseStatus.SETTLED
    if head.samples >= params.max_per_case:
        return CaseStatus.AT_LIMIT
    return CaseStatus.SAMPLING


@dataclass(frozen=True, slots=True)
class PlanCase:
    """One comparable case as the planner sees it."""

    case_id: str
    base: Counts
    head: Counts


def plan_round(
    round_: int,
    cases: Sequence[PlanCase],
    *,
    log_bound: float,
    extra_spent: int,
    cap: int,
    params: SequentialParams,
) -> dict[str, int]:
    """Case id → extra samples for this round (empty: sampling is over). Only cases in
    the sampling state are planned, most suspicious first, within both caps."""
    if round_ >= len(params.batches):
        return {}
    batch = params.batches[round_]
    ranked: list[tuple[float, int, PlanCase]] = []
    for i, c in enumerate(cases):
        if status(c.base, c.head, log_bound=log_bound, params=params) is CaseStatus.SAMPLING:
            ranked.append((-log_evalue(c.base, c.head, Direction.WORSE), i, c))
    ranked.sort(key=lambda t: (t[0], t[1]))
    left = cap - extra_spent
    out: dict[str, int] = {}
    for _, _, c in ranked:
        if left <= 0:
            break
        k = min(batch, params.max_per_case - c.head.samples, left)
        out[c.case_id] = k
        left -= k
    return out


def seed_plan(need: Sequence[tuple[str, int]], budget: int | None) -> dict[str, int]:
    """A base run's seeding: case id → samples, from each case's need (the samples its
    history lacks to reach ``min_history``), in order. Within ``budget`` every case gets
    the same number (water-filling: a case that needs less gets what it needs), the
    remainder one each in order; ``None``: every need in full."""
    wanted = [(cid, n) for cid, n in need if n > 0]
    if budget is None or sum(n for _, n in wanted) <= budget:
        return dict(wanted)
    left = budget
    level = 0
    open_ = sorted(n for _, n in wanted)
    i = 0
    # raise the level until the next step would not fit
    while i < len(open_):
        step = open_[i] - level
        count = len(open_) - i
        if step * count > left:
            level += left // count
            left -= (left // count) * count
            break
        left -= step * count
        level = open_[i]
        while i < len(open_) and open_[i] == level:
            i += 1
    out: dict[str, int] = {}
    for cid, n in wanted:
        k = min(n, level)
        if k < n and left > 0:
            k += 1
            left -= 1
        if k:
            out[cid] = k
    return out
