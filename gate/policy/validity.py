"""Is the run valid at all? The missing case-samples, and the verdict "error".

A case-sample the infrastructure failed (:class:`gate.errors.ErrorClass`) after its
retries is *missing* (:class:`gate.model.MissingSamples`): it says nothing about the agent.
A run decides nothing — its verdict is "error", exit code 4, and the reports say the run
is not valid instead of listing regressions — when

* the missing share is above ``max_missing`` (toolgate.yml; default 0: any missing
  sample), or
* every case-sample (two or more) failed the same way before any tool call — the same
  kind and the same first line once numbers (pids, ports, seconds) are set aside: the
  agent cannot start, its script is missing, its endpoint refuses every request. (A step
  budget overrun or a malformed model output is the model's answer, never this.) Such a
  run would otherwise read as "the agent got worse" on every metric.

A sample that recorded a hard failure (a must-not-call call made, then the endpoint
failed) is never missing: the failure stands, and a missing sample can never hide one.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from gate.errors import ErrorClass, ErrorKind, error_class_of, error_kind_of
from gate.model import MissingSamples, RunInvalid

FIRST_ERRORS = 3
"""How many distinct error lines a :class:`RunInvalid` quotes."""

ERROR_LINES = 12
"""How many lines of the first error a run that failed the same way everywhere quotes."""

_ANSWERS = frozenset({ErrorKind.STEP_BUDGET, ErrorKind.PAYLOAD})
"""Kinds that are the model's answer, however uniform."""

_NUMBER = re.compile(r"\d+(?:\.\d+)?")


@dataclass(frozen=True, slots=True)
class SampleOutcome:
    """What validity needs of one case-sample."""

    case_id: str
    sample: int
    error: str | None
    hard_failure: bool = False
    calls: int = 0
    """Tool calls it recorded (a sample that got as far as a tool call did start)."""


def is_missing(error: str | None, hard_failures: Sequence[object] = ()) -> bool:
    """Whether a case-sample is *missing*: the infrastructure failed it (its error's
    class) and it recorded no hard failure (one that did stands, module docstring)."""
    return not hard_failures and error_class_of(error) is ErrorClass.INFRASTRUCTURE


def first_line(error: str) -> str:
    return error.strip().splitlines()[0] if error.strip() else error


def signature(error: str) -> str:
    """An error's kind and first line with every number replaced: two workers that crash
    the same way (another pid, another duration) have the same signature."""
    return _NUMBER.sub("#", first_line(error))


def missing(outcomes: Iterable[SampleOutcome]) -> MissingSamples:
    """The missing samples among ``outcomes`` (in dataset order, then sample order)."""
    planned = 0
    per_case: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    pairs: set[tuple[str, int]] = set()
    firsts: dict[str, str] = {}
    for o in outcomes:
        planned += 1
        if not is_missing(o.error, (True,) if o.hard_failure else ()):
            continue
        assert o.error is not None
        kind = error_kind_of(o.error)
        per_case[o.case_id] += 1
        reasons[kind.value if kind is not None else "unknown"] += 1
        pairs.add((o.case_id, o.sample))
        if len(firsts) < FIRST_ERRORS:
            firsts.setdefault(signature(o.error), first_line(o.error))
    return MissingSamples(
        planned=planned,
        per_case=dict(per_case),
        samples=frozenset(pairs),
        by_reason=dict(sorted(reasons.items())),
        first_errors=tuple(firsts.values()),
    )


def assess(
    outcomes: Sequence[SampleOutcome], *, max_missing: float = 0.0
) -> tuple[MissingSamples, RunInvalid | None]:
    """The missing samples of a run and, when the run is not valid, why (module
    docstring)."""
    gone = missing(outcomes)
    if gone.count and gone.share > max_missing:
        why = ", ".join(f"{k}: {n}" for k, n in gone.by_reason.items())
        limit = "none may be" if max_missing == 0 else f"at most {max_missing:.1%} may be"
        return gone, RunInvalid(
            reason=(
                f"{gone.count} of {gone.planned} case-sample(s) are missing ({why}): the "
                f"infrastructure failed them after their retries, and {limit}"
            ),
            missing=gone,
            first_errors=gone.first_errors,
        )
    errors = [o.error for o in outcomes]
    if (
        len(errors) >= 2
        and all(e is not None and error_kind_of(e) not in _ANSWERS for e in errors)
        and not any(o.calls for o in outcomes)
    ):
        sigs = {signature(e) for e in errors if e is not None}
        if len(sigs) == 1:
            text = next(e for e in errors if e is not None)
            lines = [ln for ln in text.strip().splitlines() if ln.strip()]
            return gone, RunInvalid(
                reason=(
                    f"every case-sample ({len(errors)}) failed the same way: the agent "
                    "could not run at all"
                ),
                missing=gone,
                # the whole first error: its stderr tail says why the agent cannot start
                first_errors=tuple(lines[:ERROR_LINES]),
            )
    return gone, None
