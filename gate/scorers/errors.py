"""Tool errors: malformed calls versus well-formed calls whose execution failed, and
recovery after an error (seed 003: "Split tool-call failures into well-formed call,
execution failed versus malformed call. The first is an infrastructure bug. The second is
a model or prompt bug").

A call is **malformed** in one of the classes seed 004 names, checked in this order:

* ``InvalidJson`` — its arguments did not decode to a JSON object (``parse_ok: false``);
* ``UnknownName`` — it names a tool the case did not offer;
* ``SchemaMismatch`` — its arguments break the tool's JSON Schema.

A well-formed call **failed in execution** when its tool result is an error
(``is_error: true``) — except the runner's "no frozen response" error (a result with
``unrecorded: true``), which is a gap in the dataset, not a tool failure: it is reported
apart (``unrecorded`` evidence, the ``unrecorded_call`` check).

With |A| the number of calls (all rates n/a when the run made no call):

* ``malformed_call_rate = malformed / |A|``;
* ``execution_failure_rate = failed executions / |A|``;
* ``tool_error_rate = (malformed + failed executions) / |A|``;
* ``parse_failure_rate = InvalidJson / |A|`` (its own score: never a wrong-tool miss);
* ``schema_validity`` = share of *parsed* calls that name a known tool and validate
  (n/a when no call parsed).

**Recovery** (T-Eval's "review"; seed 003 "Error recovery"): after a call fails (malformed
or failed execution) in turn t, the agent *recovered* when its next turn retries the same
tool with changed arguments or calls another tool, or when the run ends with a final answer
and no agent error (hand back to the user). Repeating the identical failing call, or the
run ending in an agent error, is not a recovery. ``recovery_rate`` = recovered failures ÷
failures (n/a without failures). Fabricating a result and carrying on cannot be told apart
from a legitimate tool switch by code: that question is for the judge's ``error_handling``
rubric.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gate.model import MalformedKind
from gate.scorers.prose import Scored, plural

if TYPE_CHECKING:
    from gate.scorers.facts import Analysis, Call


def rate(count: int, total: int) -> float | None:
    """``count / total``; n/a (None) when there were no calls."""
    return count / total if total else None


# ─── the metrics (registered in gate.scorers.registry) ────────────────────────


def malformed_detail(c: Call) -> str:
    """Why a malformed call is malformed, in one line."""
    if c.malformed is MalformedKind.INVALID_JSON:
        raw = c.call.raw_arguments
        return "arguments are not a JSON object" + (f": {raw[:120]!r}" if raw else "")
    if c.malformed is MalformedKind.UNKNOWN_NAME:
        return f"{c.name!r} is not a tool this case offers"
    return c.schema_error or ""


def score_schema_validity(an: Analysis) -> Scored:
    """Valid parsed calls ÷ parsed calls (unknown tool = invalid); n/a without one."""
    if an.parsed == 0:
        return None, "n/a: no call with parsed arguments"

    def why() -> str:
        tail = ""
        if an.parsed > an.schema_valid:
            first = next(c for c in an.calls if c.parse_ok and c.malformed is not None)
            tail = f"; e.g. {first.name}: {malformed_detail(first)}"
        return f"{an.schema_valid} of {an.parsed} parsed calls valid{tail}"

    return an.schema_valid / an.parsed, why


def score_parse_failure_rate(an: Analysis) -> Scored:
    """Calls whose arguments did not parse ÷ calls (n/a without calls)."""
    v = rate(an.parse_failures, an.n_a)
    if v is None:
        return None, "n/a: no call made"
    return (
        v,
        lambda: f"{an.parse_failures} of {plural(an.n_a, 'call')} sent arguments that are not JSON",
    )


def score_tool_error_rate(an: Analysis) -> Scored:
    """(malformed + failed executions) ÷ calls (n/a without calls)."""
    v = rate(an.malformed + an.exec_failed, an.n_a)
    if v is None:
        return None, "n/a: no call made"
    return (
        v,
        lambda: (
            f"{an.malformed} malformed, {an.exec_failed} failed to execute"
            f" of {plural(an.n_a, 'call')}"
        ),
    )


def score_malformed_call_rate(an: Analysis) -> Scored:
    """Malformed calls (InvalidJson, UnknownName, SchemaMismatch) ÷ calls."""
    v = rate(an.malformed, an.n_a)
    if v is None:
        return None, "n/a: no call made"
    if not an.malformed:
        return v, "no malformed call"

    def why() -> str:
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(an.malformed_counts.items()))
        return f"{an.malformed} of {plural(an.n_a, 'call')} malformed ({kinds})"

    return v, why


def score_execution_failure_rate(an: Analysis) -> Scored:
    """Well-formed calls whose result was an error ÷ calls."""
    v = rate(an.exec_failed, an.n_a)
    if v is None:
        return None, "n/a: no call made"
    return v, lambda: f"{an.exec_failed} of {plural(an.n_a, 'call')} failed in execution"


def score_recovery_rate(an: Analysis) -> Scored:
    """Recovered failures ÷ failures (n/a without failures)."""
    if an.failures == 0:
        return None, "n/a: no tool error to recover from"
    return (
        an.recovered / an.failures,
        lambda: f"recovered after {an.recovered} of {plural(an.failures, 'failed call')}",
    )
