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


def rate(count: int, total: int) -> float | None:
    """``count / total``; n/a (None) when there were no calls."""
    return count / total if total else None
