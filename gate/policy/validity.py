"""Is the run valid at all? The missing case-samples, and the verdict "error".

A case-sample the infrastructure failed (:class:`gate.errors.ErrorClass`) after its
retries is *missing* (:class:`gate.model.MissingSamples`): it says nothing about the agent.
A run decides nothing — its verdict is "error", exit code 4, and the reports say the run
is not valid instead of listing regressions — when

* the missing share is above ``max_missing`` (toolgate.yml; default 0: any missing
  sample), or
* every case-sample (two or more) failed the same way before any tool call (or any
  answer to a conversation's user turn) — the same
  *cause* (:func:`cause`: the last error line of the agent's stderr for a crash, "replies
  without ids" for a protocol error of that kind whatever the reply, else the error's
  kind and first line once numbers — pids, ports, seconds — are set aside): the agent
  cannot start, it cannot speak the protocol, its endpoint refuses every request. (A
  step budget overrun or a malformed model output is the model's answer, never this.)
  Such a run would otherwise read as "the agent got worse" on every metric. Its
  :attr:`~gate.model.RunInvalid.headline` says what happened in the agent's own words
  ("the agent could not start: ModuleNotFoundError: No module named 'openai'"), with a
  :attr:`~gate.model.RunInvalid.hint` where one applies (:func:`hint_for`).

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
    answered: bool = False
    """It answered a user turn of a conversation (it did start, too)."""


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


_EXCEPTION_LINE = re.compile(
    r"^(?:[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning)|Error|Fatal|panic)\b.*",
)
"""A line that names an exception or a fatal error: Python's ``ModuleNotFoundError: …``,
Node's ``Error: Cannot find module …``, Go's ``panic: …``."""

_NO_IDS = re.compile(r"reply without (?:case_id|sample)\b")


def agents_words(error: str) -> str:
    """What the agent itself said about a failure: the last line of its stderr tail that
    names an exception or an error, else the tail's last line, else the error's first line
    (its kind removed)."""
    head, _, detail = error.partition("\n")
    lines = [ln.strip() for ln in detail.splitlines() if ln.strip() and not ln.startswith("---")]
    named = [ln for ln in lines if _EXCEPTION_LINE.match(ln)]
    if named:
        return named[-1]
    if lines:
        return lines[-1]
    return head.split(":", 1)[1].strip() if ":" in head else head.strip()


def cause(error: str) -> str:
    """What makes two failures "the same way" (module docstring)."""
    kind = error_kind_of(error)
    first = first_line(error)
    if kind is ErrorKind.PROTOCOL and _NO_IDS.search(first):
        return "protocol: replies without ids"
    if "\n" in error.strip() and kind in (ErrorKind.CRASH, ErrorKind.START, ErrorKind.TIMEOUT):
        return f"{kind.value}: {_NUMBER.sub('#', agents_words(error))}"
    return signature(error)


def headline_for(error: str, count: int) -> str:
    """The first line of the reports for a run whose every case-sample failed the same way:
    what happened, in the agent's own words."""
    kind = error_kind_of(error)
    first = first_line(error)
    if kind is ErrorKind.PROTOCOL and _NO_IDS.search(first):
        return (
            f"the agent does not speak the protocol: its replies carry no case_id and sample "
            f"(every case-sample, {count})"
        )
    if kind is ErrorKind.PROTOCOL:
        return f"the agent does not speak the protocol: {agents_words(error)}"
    if kind in (ErrorKind.CRASH, ErrorKind.START, ErrorKind.EXCEPTION):
        return f"the agent could not start: {agents_words(error)}"
    if kind is ErrorKind.TIMEOUT:
        return f"the agent never answered: {agents_words(error)}"
    return f"every case-sample ({count}) failed the same way: {first}"


_MODULE = re.compile(
    r"ModuleNotFoundError|ImportError|No module named|Cannot find module|"
    r"cannot import|ERR_MODULE_NOT_FOUND"
)


def hint_for(error: str) -> str | None:
    """What to do about a failure every case-sample shared, where something can be said."""
    kind = error_kind_of(error)
    if kind is ErrorKind.PROTOCOL and _NO_IDS.search(first_line(error)):
        return (
            "Echo the case_id and sample of the start message in every reply, or set "
            "agent.reply_ids: optional."
        )
    if _MODULE.search(error):
        return (
            "The agent's packages are not installed where it runs: in the GitHub Action, "
            "give the input install: requirements.txt (its own environment in the container); "
            "elsewhere, set agent.python to the interpreter of the agent's environment "
            "(for example .venv/bin/python)."
        )
    return None


def missing(outcomes: Iterable[SampleOutcome]) -> MissingSamples:
    """The missing samples among ``outcomes`` (in dataset order, then sample order)."""
    planned = 0
    per_case: Counter[str] = Counter()
    not_run: Counter[str] = Counter()
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
        if kind is ErrorKind.NOT_RUN:
            not_run[o.case_id] += 1
        reasons[kind.value if kind is not None else "unknown"] += 1
        pairs.add((o.case_id, o.sample))
        if len(firsts) < FIRST_ERRORS and kind is not ErrorKind.NOT_RUN:
            firsts.setdefault(signature(o.error), first_line(o.error))
    return MissingSamples(
        planned=planned,
        per_case=dict(per_case),
        samples=frozenset(pairs),
        by_reason=dict(sorted(reasons.items())),
        first_errors=tuple(firsts.values()),
        not_run=dict(not_run),
    )


def assess(
    outcomes: Sequence[SampleOutcome], *, max_missing: float = 0.0
) -> tuple[MissingSamples, RunInvalid | None]:
    """The missing samples of a run and, when the run is not valid, why (module
    docstring)."""
    gone = missing(outcomes)
    missing_invalid: RunInvalid | None = None
    if gone.failed and gone.share > max_missing:
        why = ", ".join(
            f"{k}: {n}" for k, n in gone.by_reason.items() if k != ErrorKind.NOT_RUN.value
        )
        limit = "none may be" if max_missing == 0 else f"at most {max_missing:.1%} may be"
        reason = (
            f"{gone.failed} of {gone.planned} case-sample(s) are missing ({why}): the "
            f"infrastructure failed them, and {limit}"
        )
        missing_invalid = RunInvalid(
            reason=reason, missing=gone, first_errors=gone.first_errors, headline=reason
        )
    errors = [o.error for o in outcomes]
    agents = any(
        (e is not None and error_kind_of(e) is ErrorKind.START) or not is_missing(e) for e in errors
    )
    if missing_invalid is not None and not agents:  # the endpoint, the network, the deadline
        return gone, missing_invalid
    if (
        len(errors) >= 2
        and all(e is not None and error_kind_of(e) not in _ANSWERS for e in errors)
        and not any(o.calls or o.answered for o in outcomes)
    ):
        causes = {cause(e) for e in errors if e is not None}
        if len(causes) == 1:
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
                headline=headline_for(text, len(errors)),
                hint=hint_for(text),
            )
    return gone, missing_invalid
