"""One case-sample in flight: what the agent is given, and what it has done so far.

Every interactive agent adapter (``command``, ``python``, ``openai``) drives a
:class:`Session`: it hands the agent the :class:`Job` (messages, tools, seed, budget), and
passes each assistant turn's calls to :meth:`Session.answer`, which records the turn and
answers every call through the frozen-tool backend. An adapter that fails raises
:class:`AgentFailure`; the runner then records what the session holds so far with the
error — a failed case-sample is scored as a failure, never dropped.

**Step budget.** The budget counts assistant turns that make tool calls. The turn that
would exceed it is still recorded (its calls, without results), so the scorers can see the
overrun, and the case-sample ends with a ``step_budget`` error. A final answer after the
last allowed turn is fine.

**Error kinds.** ``Run.error`` starts with one word naming the class of failure, then a
colon: ``timeout``, ``crash``, ``protocol``, ``agent_error``, ``step_budget``, ``http``,
``payload``, ``deadline``, ``exception``, ``not_in_replay``, ``not_attempted``, ``start``
(:class:`gate.errors.ErrorKind`; its class, agent or infrastructure, is
:class:`gate.errors.ErrorClass`).
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from gate.adapters.interface import add_usage

# Re-exported: the agent adapters' failure and its kinds (defined with every other error).
from gate.errors import AgentFailure as AgentFailure
from gate.errors import ErrorKind as ErrorKind
from gate.model import Case, JsonValue, Run, ToolCall, ToolResult, Turn
from gate.replay.frozen import ToolBackend


def job_seed(seed: int, case_id: str, sample: int) -> int:
    """The seed handed to the agent for one case-sample: the first 4 bytes of
    ``sha256("{seed}\\0{case_id}\\0{sample}")`` as an unsigned integer — stable across
    runs, machines and shards, different for every case-sample."""
    digest = hashlib.sha256(f"{seed}\0{case_id}\0{sample}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def openai_tools(case: Case) -> list[dict[str, Any]]:
    """The case's tools as OpenAI chat ``tools`` entries."""
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": dict(t.parameters) if t.parameters else {"type": "object"},
            },
        }
        for t in case.available_tools
    ]


def case_messages(case: Case) -> list[dict[str, Any]]:
    """The conversation the agent is given: the case's history, then the user turn."""
    return [*(dict(m) for m in case.message_history), {"role": "user", "content": case.user_input}]


@dataclass(frozen=True, slots=True)
class Job:
    """One case-sample to run."""

    case: Case
    sample: int
    seed: int
    step_budget: int
    timeout_s: float
    deadline: float | None = None
    """``time.monotonic()`` after which nothing may run (the global deadline)."""

    @property
    def messages(self) -> list[dict[str, Any]]:
        return case_messages(self.case)

    @property
    def tools(self) -> list[dict[str, Any]]:
        return openai_tools(self.case)

    def step_timeout(self) -> float:
        """Seconds the next agent step may take: the per-call timeout, cut short by the
        global deadline. Raises a ``deadline`` failure when none is left."""
        if self.deadline is None:
            return self.timeout_s
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise AgentFailure(ErrorKind.DEADLINE, "the global deadline passed during the case")
        return min(self.timeout_s, left)


@dataclass
class Session:
    """What one case-sample has done so far (see the module docstring)."""

    job: Job
    backend: ToolBackend
    turns: list[Turn] = field(default_factory=list)
    final: str | None = None
    usage: dict[str, int] = field(default_factory=dict)
    meta: dict[str, JsonValue] = field(default_factory=dict)
    unrecorded: int = 0
    closed: bool = False
    failure: AgentFailure | None = None
    """Set when :meth:`answer` refused a turn, in case the agent swallowed the exception."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add_usage(self, usage: Mapping[str, Any] | None) -> None:
        if isinstance(usage, Mapping):
            add_usage(
                self.usage,
                {
                    k: v
                    for k, v in usage.items()
                    if isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool)
                },
            )

    def answer(self, calls: Sequence[ToolCall], content: str | None = None) -> list[ToolResult]:
        """Record one assistant turn and answer its calls from the frozen responses.

        Calls without an id get ``call_<turn>_<index>``. Arguments that did not parse are
        answered with an error result (there is nothing to look up). Raises a
        ``step_budget`` :class:`AgentFailure` — after recording the turn — when this turn
        exceeds the budget.
        """
        with self._lock:
            if self.closed:
                raise AgentFailure(ErrorKind.TIMEOUT, "the case-sample already ended")
            n = len(self.turns)
            ided = [c if c.id else replace(c, id=f"call_{n}_{i}") for i, c in enumerate(calls)]
            if n >= self.job.step_budget:
                self.turns.append(Turn(calls=tuple(ided), content=content))
                self.failure = AgentFailure(
                    ErrorKind.STEP_BUDGET,
                    f"the agent asked for tool-calling turn {n + 1} "
                    f"with a step budget of {self.job.step_budget}",
                )
                raise self.failure
            results: list[ToolResult] = []
            for call in ided:
                if not call.parse_ok:
                    results.append(
                        ToolResult(
                            call.id,
                            {"error": f"the arguments of {call.name} are not a valid JSON object"},
                            is_error=True,
                        )
                    )
                    continue
                outcome = self.backend.call(call.name, call.arguments)
                self.unrecorded += outcome.unrecorded
                results.append(
                    ToolResult(call.id, outcome.content, outcome.is_error, outcome.unrecorded)
                )
            self.turns.append(Turn(calls=tuple(ided), tool_results=tuple(results), content=content))
            return results

    def close(self) -> None:
        """No more turns (an abandoned agent thread can no longer add any)."""
        with self._lock:
            self.closed = True

    def to_run(self, *, error: str | None = None, latency_ms: float | None = None) -> Run:
        with self._lock:
            self.closed = True
            return Run(
                case_id=self.job.case.id,
                sample=self.job.sample,
                turns=tuple(self.turns),
                final=self.final,
                error=error,
                latency_ms=latency_ms,
                usage=dict(self.usage) or None,
                meta=dict(self.meta) or None,
            )
