"""The flip classification: how each comparable case's pass rate moved from its base
history, in one place, for every command and every report (``check``, ``merge``,
``diff``, ``report``, the comment, the console, JUnit, the Action's outputs).

From a case's test against the base history (:class:`gate.model.CaseTest`:
its history's counts, its head counts, the e-values of both directions and whether e-BH
rejected them), with δ the minimum practical effect:

* ``regression`` — significant (e-BH over the run's comparable cases), fell by ≥ δ;
* ``fix`` — significant, rose by ≥ δ;
* ``likely_regression`` — fell by ≥ δ and the evidence points that way (E > 1: the data
  favour a drop over the best "no drop"), not significant yet; and, with any base
  history, a case that broke a hard rule on head (a must-not-call, argument-scope or
  required-step violation) and passes less often than its history: the gate fails on it
  whatever the counts say, and it is never hidden among the noise — against one base
  sample as against thirty-six, the same kind and the same words;
* ``likely_fix`` — the mirror image;
* ``undecided`` — moved by ≥ δ, but no outcome of its samples could have made the test
  significant: even a head that failed every sample (passed every sample, for a rise)
  would not reach the bound (:func:`can_tell`; its power is zero). One sample on each
  side is such a case: "changed — too few samples to tell", never noise or flaky. It
  says what would decide it, in numbers (:func:`what_decides`);
* ``noise`` — any other change of the pass rate: a test could have told and did not,
  or the change is smaller than δ;
* no flip — the same pass rate on both sides, or not comparable (listed apart).

Regressions and fixes count in the verdict; likely ones are listed with the reason in
words they are not significant yet (:func:`because`) and, by ``regressions.likely``,
warn (the default) or fail; undecided drops, by ``regressions.undecided``, likewise.
Because the classification is a function of the counts, the e-values and the run's family
size alone, two results files give the same kinds in ``toolgate diff`` as in the
``check`` that wrote them.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping

from gate.model import MIN_HISTORY, CaseFlip, CaseTest, FlipKind
from gate.policy.casetest import (
    MIN_EFFECT,
    CaseOutcome,
    Counts,
    Direction,
    log_evalue,
    single_bound,
)
from gate.policy.engine import EngineParams, Evaluation
from gate.policy.sequential import can_decide

MOST_SAMPLES = 60
"""Most head samples per case :func:`what_decides` looks at (``policy.max_samples_per_case``
by default)."""


def can_tell(
    base: Counts, samples: int, *, rise: bool, log_bound: float, min_effect: float
) -> bool:
    """Whether some outcome of ``samples`` head samples would make the case's test
    significant in the direction of its change: every sample failing (a drop) or every
    one passing (a rise) — the most extreme outcome there is."""
    if not rise:
        return can_decide(base, most=samples, log_bound=log_bound, min_effect=min_effect)
    if base.samples == 0 or 1.0 - (base.rate or 0.0) < min_effect - 1e-12:
        return False
    return log_evalue(base, Counts(samples, samples), Direction.BETTER) >= log_bound


def what_decides(
    base: Counts,
    head: Counts,
    *,
    rise: bool,
    log_bound: float,
    min_effect: float,
    min_history: int = MIN_HISTORY,
    most: int = MOST_SAMPLES,
) -> str:
    """What would decide an undecided case, in numbers: the head samples that would,
    with the history it has; else a history of ``min_history`` samples (at its base
    rate) and the head samples that would then."""

    def fewest(b: Counts) -> int | None:
        return next(
            (
                n
                for n in range(1, most + 1)
                if can_tell(b, n, rise=rise, log_bound=log_bound, min_effect=min_effect)
            ),
            None,
        )

    have = f"{_n(base.samples, 'base sample')} and {_n(head.samples, 'head sample')}"
    n = fewest(base)
    depth = max(min_history, base.samples + 1)
    rate = base.rate or 0.0
    deep = fewest(Counts(min(depth, math.floor(rate * depth + 0.5)), depth))
    if n is not None and (deep is None or n <= deep):
        return f"{have}: {_n(n, 'head sample')} would decide it"
    if n is not None:
        heads = _n(n, "head sample")
        return f"{have}: {heads} would decide it, or {deep} with a base history of {depth}"
    if deep is not None:
        heads = _n(deep, "head sample")
        return f"{have}: a base history of {depth} samples and {heads} would decide it"
    return f"{have}: no number of samples decides a change from this base rate"


def _n(n: int, word: str) -> str:
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


def flip_kind(
    v: CaseTest,
    *,
    min_effect: float = MIN_EFFECT,
    hard: bool = False,
    log_bound: float = math.inf,
) -> FlipKind | None:
    """The kind of one case's change (module doc); ``None``: no flip. ``hard``: a head
    sample of the case broke a hard rule; ``log_bound``: log(m/α), what a single case's
    e-value must reach (∞: no outcome can, every change of δ or more is undecided)."""
    match v.outcome:
        case CaseOutcome.REGRESSED:
            return FlipKind.REGRESSION
        case CaseOutcome.IMPROVED:
            return FlipKind.FIX
        case CaseOutcome.NOT_COMPARABLE:
            return None
        case CaseOutcome.UNCHANGED | CaseOutcome.UNDECIDED:
            pass
    if v.base is None or not v.head.samples or not v.base.samples:
        return None
    # the same rate on both sides, without division: s_h·n_b against s_b·n_h
    if v.head.passes * v.base.samples == v.base.passes * v.head.samples:
        return None
    change = v.change if v.change is not None else 0.0
    if hard and change < 0:
        return FlipKind.LIKELY_REGRESSION
    if abs(change) >= min_effect - 1e-12 and not can_tell(
        v.base, v.head.samples, rise=change > 0, log_bound=log_bound, min_effect=min_effect
    ):
        return FlipKind.UNDECIDED
    if -change >= min_effect - 1e-12 and (v.log_e_worse or 0.0) > 0.0:
        return FlipKind.LIKELY_REGRESSION
    if change >= min_effect - 1e-12 and (v.log_e_better or 0.0) > 0.0:
        return FlipKind.LIKELY_FIX
    return FlipKind.NOISE


HARD_BECAUSE = "it broke a hard rule, which fails the gate whatever more samples show"
"""Why a case that broke a hard rule is a likely regression, not a significant one: the
same words whatever the depth of its history."""


def because(v: CaseTest, *, min_history: int, held_back: bool, tested: int) -> str:
    """Why a likely regression or fix is not significant yet, in words: the case broke a
    hard rule (``held_back``: it is not sampled further, the gate fails on it), the
    history is shorter than ``min_history``, the sampling cap stopped it, or the evidence
    is short of the threshold for this many cases."""
    assert v.base is not None
    if held_back and (v.change or 0.0) < 0:
        return HARD_BECAUSE
    if v.base.samples < min_history:
        n = v.base.samples
        return f"only {n} base sample{'' if n == 1 else 's'} (the history is short)"
    if v.outcome is CaseOutcome.UNDECIDED:
        return "the sampling cap stopped it"
    p = v.p_worse if (v.change or 0.0) < 0 else v.p_better
    shown = "" if p is None else f" (p = {p:.2g})"
    return f"not significant among the {tested} cases tested{shown}"


def case_flips(
    verdicts: Mapping[str, CaseTest],
    *,
    min_effect: float = MIN_EFFECT,
    min_history: int = 0,
    held_back: Collection[str] = (),
    alpha: float = 0.03,
    most: int = MOST_SAMPLES,
) -> dict[str, CaseFlip]:
    """Case id → its flip, for every comparable case whose pass rate moved (module doc),
    in the order of ``verdicts``; ``held_back``: the cases with a hard failure on head;
    ``alpha``: the level of the per-case tests (``EngineParams.alpha_case``); ``most``:
    the most head samples a case may have (what an undecided case is told would decide
    it)."""
    tested = sum(1 for v in verdicts.values() if v.outcome is not CaseOutcome.NOT_COMPARABLE)
    bound = single_bound(tested, alpha) if tested else math.inf
    out: dict[str, CaseFlip] = {}
    for case_id, v in verdicts.items():
        kind = flip_kind(v, min_effect=min_effect, hard=case_id in held_back, log_bound=bound)
        if kind is None:
            continue
        assert v.base is not None
        p = v.p_better if kind.better else v.p_worse
        if kind in (FlipKind.NOISE, FlipKind.UNDECIDED):
            p = v.p_worse if (v.change or 0.0) < 0 else v.p_better
        why = (
            because(v, min_history=min_history, held_back=case_id in held_back, tested=tested)
            if kind in (FlipKind.LIKELY_REGRESSION, FlipKind.LIKELY_FIX)
            else what_decides(
                v.base,
                v.head,
                rise=(v.change or 0.0) > 0,
                log_bound=bound,
                min_effect=min_effect,
                min_history=min_history or MIN_HISTORY,
                most=most,
            )
            if kind is FlipKind.UNDECIDED
            else None
        )
        out[case_id] = CaseFlip(
            kind, v.base.passes, v.base.samples, v.head.passes, v.head.samples, p, why
        )
    return out


def evaluation_flips(evaluation: Evaluation, params: EngineParams) -> dict[str, CaseFlip]:
    """:func:`case_flips` of an engine evaluation, with its parameters."""
    return case_flips(
        evaluation.cases,
        min_effect=params.min_effect,
        min_history=params.sequential.min_history,
        held_back=evaluation.held_back,
        alpha=params.alpha_case,
        most=params.sequential.max_per_case,
    )
