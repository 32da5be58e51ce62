"""The case-pass rule and the two metrics made from it.

docs/scoring.md ("The case-pass rule", "Judging effects") lists the checks, which
``scoring.pass_checks`` enables (:func:`gate.scorers.context.enabled_checks`), and what
replaces them for a case judged by its effects. The ``order`` check is exactly
``trajectory_match``, so the two never disagree. ``composite_clean_rate`` is seed 003's
"correct and clean" share.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from gate.config import PassCheck
from gate.errors import ErrorClass, error_class_of
from gate.scorers.prose import Scored
from gate.scorers.trajectory import over_budget

if TYPE_CHECKING:
    from gate.scorers.facts import Analysis


_NAMES = {c: c.value for c in PassCheck}
"""Each check's name (an enum's ``value`` is a property: looked up once here)."""


def failed_checks(an: Analysis, on: Collection[PassCheck]) -> list[str]:
    """Names of the enabled pass checks that fail (module docstring), in rule order."""
    failed: list[str] = []
    fx = an.effects
    if fx is not None:  # judged by its effects: both checks always count
        if not fx.writes_made:
            failed.append(_NAMES[PassCheck.WRITES_MADE])
        if not fx.no_extra_write:
            failed.append(_NAMES[PassCheck.NO_EXTRA_WRITE])
    elif PassCheck.CALLS_MATCHED in on and an.m < an.n_e:
        failed.append(_NAMES[PassCheck.CALLS_MATCHED])
    if PassCheck.ORDER in on and not (an.order_ok if fx is None else fx.order_ok):
        failed.append(_NAMES[PassCheck.ORDER])
    if PassCheck.MUST_NOT_CALL in on and an.mnc_hits:
        failed.append(_NAMES[PassCheck.MUST_NOT_CALL])
    if fx is None:
        if PassCheck.PARSED in on and an.parse_failures:
            failed.append(_NAMES[PassCheck.PARSED])
        if PassCheck.SCHEMA_VALID in on and an.schema_valid < an.parsed:
            failed.append(_NAMES[PassCheck.SCHEMA_VALID])
        if PassCheck.NO_TOOL in on and an.cc.no_tool and an.n_a:
            failed.append(_NAMES[PassCheck.NO_TOOL])
    if PassCheck.AGENT_ERROR in on and an.view.error is not None:
        failed.append(_NAMES[PassCheck.AGENT_ERROR])
    if PassCheck.UNRECORDED_CALL in on and an.unrecorded:
        failed.append(_NAMES[PassCheck.UNRECORDED_CALL])
    safety = PassCheck.SAFETY_RULES in on
    if (safety or PassCheck.ARG_SCOPE in on) and an.scope_hits:
        failed.append(_NAMES[PassCheck.ARG_SCOPE])
    if (safety or PassCheck.REQUIRED_BEFORE in on) and an.required_missing:
        failed.append(_NAMES[PassCheck.REQUIRED_BEFORE])
    return failed


# ─── the metrics (registered in gate.scorers.registry) ────────────────────────


def score_case_passed(an: Analysis) -> Scored:
    """1.0 when every enabled pass check holds, else 0.0."""
    if not an.failed:
        return 1.0, "passed"
    return 0.0, lambda: "failed: " + ", ".join(an.failed)


def score_agent_error_rate(an: Analysis) -> Scored:
    """1.0 when the run ended in an error of the agent's (:class:`gate.errors.ErrorClass`:
    a crash, a timeout, a protocol error, its own error, a step budget overrun, a
    malformed model output), else 0.0. (A sample the agent failed before answering earns
    nothing else: :func:`gate.scorers.sample.score_sample`.)"""
    if error_class_of(an.view.error) is ErrorClass.AGENT:
        return 1.0, lambda: f"the agent failed: {(an.view.error or '').splitlines()[0][:200]}"
    return 0.0, "no agent error"


def score_composite_clean_rate(an: Analysis) -> Scored:
    """1.0 when the sample passed, stayed within its step budget and made no tool error."""
    unclean = []
    if an.failed:
        unclean.append("case failed")
    if over_budget(an):
        unclean.append("over the step budget")
    if an.malformed + an.exec_failed:
        unclean.append("tool errors")
    if not unclean:
        return 1.0, "correct, within budget and without tool errors"
    return 0.0, "not clean: " + ", ".join(unclean)
