"""Tool errors: malformed calls versus well-formed calls whose execution failed, and
recovery after an error (seed 003: "Split tool-call failures into well-formed call,
execution failed versus malformed call").

docs/scoring.md ("The metrics", "Malformed calls", "Tool errors and recovery") defines
the malformed classes (checked in the order ``InvalidJson``, ``UnknownName``,
``SchemaMismatch``), the rates (n/a when the run made no call) and recovery. A result
marked ``unrecorded`` (no frozen response) is a gap in the dataset, not a tool failure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gate.model import MalformedKind
from gate.scorers.prose import Scored, plural

if TYPE_CHECKING:
    from gate.scorers.facts import Analysis, Call


# ─── the metrics (registered in gate.scorers.registry) ────────────────────────
# The four rates divide by the calls made: n/a when the run made none.

_NO_CALL = (None, "n/a: no call made")


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
    if not an.n_a:
        return _NO_CALL
    return (
        an.parse_failures / an.n_a,
        lambda: f"{an.parse_failures} of {plural(an.n_a, 'call')} sent arguments that are not JSON",
    )


def score_tool_error_rate(an: Analysis) -> Scored:
    """(malformed + failed executions) ÷ calls (n/a without calls)."""
    if not an.n_a:
        return _NO_CALL
    return (
        (an.malformed + an.exec_failed) / an.n_a,
        lambda: (
            f"{an.malformed} malformed, {an.exec_failed} failed to execute"
            f" of {plural(an.n_a, 'call')}"
        ),
    )


def score_malformed_call_rate(an: Analysis) -> Scored:
    """Malformed calls (InvalidJson, UnknownName, SchemaMismatch) ÷ calls."""
    if not an.n_a:
        return _NO_CALL
    v = an.malformed / an.n_a
    if not an.malformed:
        return v, "no malformed call"

    def why() -> str:
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(an.malformed_counts.items()))
        return f"{an.malformed} of {plural(an.n_a, 'call')} malformed ({kinds})"

    return v, why


def score_execution_failure_rate(an: Analysis) -> Scored:
    """Well-formed calls whose result was an error ÷ calls."""
    if not an.n_a:
        return _NO_CALL
    v = an.exec_failed / an.n_a
    return v, lambda: f"{an.exec_failed} of {plural(an.n_a, 'call')} failed in execution"


def score_recovery_rate(an: Analysis) -> Scored:
    """Recovered failures ÷ failures (n/a without failures)."""
    if an.failures == 0:
        return None, "n/a: no tool error to recover from"
    return (
        an.recovered / an.failures,
        lambda: f"recovered after {an.recovered} of {plural(an.failures, 'failed call')}",
    )
