"""The flip classification: how each comparable case's pass rate moved from its base
history, in one place, for every command and every report (``check``, ``merge``,
``diff``, ``report``, the comment, the console, JUnit, the Action's outputs).

From a case's test against the base history (:class:`gate.policy.casetest.CaseVerdict`:
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
* ``noise`` — any other change of the pass rate (within noise, or significant but
  below δ);
* no flip — the same pass rate on both sides, or not comparable (listed apart).

Regressions and fixes count in the verdict; likely ones are listed with the reason in
words they are not significant yet (:func:`because`) and, by ``regressions.likely``,
warn (the default) or fail. Because the classification is a function of the counts, the
e-values and the run's family size alone, two results files give the same kinds in
``toolgate diff`` as in the ``check`` that wrote them.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from gate.model import CaseFlip, FlipKind
from gate.policy.casetest import MIN_EFFECT, CaseOutcome, CaseVerdict
from gate.policy.engine import EngineParams, Evaluation


def flip_kind(
    v: CaseVerdict, *, min_effect: float = MIN_EFFECT, hard: bool = False
) -> FlipKind | None:
    """The kind of one case's change (module doc); ``None``: no flip. ``hard``: a head
    sample of the case broke a hard rule."""
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
    if -change >= min_effect - 1e-12 and (v.log_e_worse or 0.0) > 0.0:
        return FlipKind.LIKELY_REGRESSION
    if change >= min_effect - 1e-12 and (v.log_e_better or 0.0) > 0.0:
        return FlipKind.LIKELY_FIX
    return FlipKind.NOISE


HARD_BECAUSE = "it broke a hard rule, which fails the gate whatever more samples show"
"""Why a case that broke a hard rule is a likely regression, not a significant one: the
same words whatever the depth of its history."""


def because(v: CaseVerdict, *, min_history: int, held_back: bool, tested: int) -> str:
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
    verdicts: Sequence[CaseVerdict],
    *,
    min_effect: float = MIN_EFFECT,
    min_history: int = 0,
    held_back: Collection[str] = (),
) -> dict[str, CaseFlip]:
    """Case id → its flip, for every comparable case whose pass rate moved (module doc),
    in the order of ``verdicts``; ``held_back``: the cases with a hard failure on head."""
    tested = sum(1 for v in verdicts if v.outcome is not CaseOutcome.NOT_COMPARABLE)
    out: dict[str, CaseFlip] = {}
    for v in verdicts:
        kind = flip_kind(v, min_effect=min_effect, hard=v.case_id in held_back)
        if kind is None:
            continue
        assert v.base is not None
        p = v.p_better if kind.better else v.p_worse
        if kind is FlipKind.NOISE:
            p = v.p_worse if (v.change or 0.0) < 0 else v.p_better
        why = (
            because(v, min_history=min_history, held_back=v.case_id in held_back, tested=tested)
            if kind in (FlipKind.LIKELY_REGRESSION, FlipKind.LIKELY_FIX)
            else None
        )
        out[v.case_id] = CaseFlip(
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
    )
