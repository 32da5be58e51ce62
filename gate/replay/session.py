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

**Error kinds.** ``Run.error`` starts with the :class:`gate.errors.ErrorKind` of the
failure, then a colon (its class, agent or infrastructure: :class:`gate.errors.ErrorClass`).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

# Re-exported: the agent adapters' failure and its kinds (defined with every other error).
from gate.errors import AgentFailure as AgentFailure
from gate.errors import ErrorKind as ErrorKind
from gate.model import Case, JsonValue, Run, ToolCall, ToolResult, Turn
from gate.model.usage import UsageSum
from gate.replay.frozen import ToolBackend

MAX_BATCH_CALLS = 128
"""Most tool calls one assistant turn may carry (a parallel batch): a turn with more is
recorded with its first :data:`MAX_BATCH_CALLS` calls and ends the case-sample with a
``step_budget`` error, as a turn past the step budget does."""


def within_budget(run: Run, step_budget: int) -> Run:
    """A run recorded elsewhere (``replay``) held to what a live agent may record here
    (module docstring): its tool-calling turns up to the one past ``step_budget`` (per
    user turn, in a conversation), each at most :data:`MAX_BATCH_CALLS` calls; beyond
    that it ends, with a ``step_budget`` error (unless it has an error of its own)."""
    kept: list[Turn] = []
    steps = 0
    why: str | None = None
    for i, turn in enumerate(run.turns, start=1):
        if turn.user is not None:
            steps = 0
        if turn.calls:
            steps += 1
            if len(turn.calls) > MAX_BATCH_CALLS:
                kept.append(
                    replace(
                        turn,
                        calls=turn.calls[:MAX_BATCH_CALLS],
                        tool_results=turn.tool_results[:MAX_BATCH_CALLS],
                    )
                )
                why = (
                    f"step_budget: turn {i} carries {len(turn.calls):,} tool calls; a turn "
                    f"carries at most {MAX_BATCH_CALLS}"
                )
                break
            if steps > step_budget:
                kept.append(turn)  # the turn past the budget is recorded, as live
                why = (
                    f"step_budget: the agent asked for tool-calling turn {steps} with a step "
                    f"budget of {step_budget}"
                )
                break
        kept.append(turn)
    if why is None:
        return run
    return replace(run, turns=tuple(kept), error=run.error or why)


def job_seed(seed: int, case_id: str, sample: int) -> int:
    """The seed handed to the agent for one case-sample: the first 4 bytes of
    ``sha256("{seed}\\0{case_id}\\0{sample}")`` as an unsigned integer — stable across
    runs, machines and shards, different for every case-sample."""
    digest = hashlib.sha256(f"{seed}\0{case_id}\0{sample}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def tool_messages(results: Sequence[ToolResult]) -> list[dict[str, Any]]:
    """Tool results as the ``tool`` messages that follow their assistant message (a
    content that is not a string as its JSON text)."""
    return [
        {
            "role": "tool",
            "tool_call_id": r.id,
            "content": r.content
            if isinstance(r.content, str)
            else json.dumps(r.content, ensure_ascii=False, sort_keys=True),
        }
        for r in results
    ]


def assistant_message(turn: Turn) -> dict[str, Any]:
    """The assistant message to send back in the history, rebuilt from the recorded turn
    (so ids assigned by the runner and the model's raw argument text are kept)."""
    return {
        "role": "assistant",
        "content": turn.content,
        "tool_calls": [
            {
                "id": c.id,
                "type": "function",
                "function": {
                    "name": c.name,
                    "arguments": c.raw_arguments
                    if c.raw_arguments is not None
                    else json.dumps(c.arguments, ensure_ascii=False),
                },
            }
            for c in turn.calls
        ],
    }


def conversation_messages(case: Case, turns: Sequence[Turn]) -> list[dict[str, Any]]:
    """The conversation so far in the OpenAI chat shape: the case's history, then each
    user turn that started (its message, the agent's tool-calling messages with their
    tool results, its answer). A new user turn starts at an assistant turn carrying
    :attr:`~gate.model.Turn.user`; a turn with neither calls nor content (a user turn the
    agent never answered) adds its user message only."""
    out: list[dict[str, Any]] = [dict(m) for m in case.message_history]
    for t in turns:
        if t.user is not None:
            out.append({"role": "user", "content": t.user})
        if t.calls:
            out.append(assistant_message(t))
            out.extend(tool_messages(t.tool_results))
        elif t.content is not None:
            out.append({"role": "assistant", "content": t.content})
    return out


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
        """The conversation the agent is given: the case's history, then the user turn."""
        case = self.case
        return [
            *(dict(m) for m in case.message_history),
            {"role": "user", "content": case.user_input},
        ]

    @property
    def tools(self) -> list[dict[str, Any]]:
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
            for t in self.case.available_tools
        ]

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
    usage: UsageSum = field(default_factory=UsageSum)
    """The usage the agent reported, summed and checked (:mod:`gate.model.usage`)."""
    meta: dict[str, JsonValue] = field(default_factory=dict)
    unrecorded: int = 0
    closed: bool = False
    failure: AgentFailure | None = None
    """Set when :meth:`answer` refused a turn, in case the agent swallowed the exception."""
    user_turn: int = 0
    """The scripted user turn being answered (0-based; always 0 for a one-turn case)."""
    ended_by: str | None = None
    """Why a conversation stopped before its last user turn (a must-not-call tool)."""
    _steps: int = 0
    _pending_user: str | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        if self.job.case.conversation:
            self._pending_user = self.job.case.conversation[0].user

    @property
    def conversation(self) -> bool:
        return bool(self.job.case.conversation)

    def messages(self) -> list[dict[str, Any]]:
        """What the agent is given now: the case's messages for a one-turn case or a
        conversation's first turn, else the conversation so far (this user turn's
        message included: last, when the agent has not answered anything of it yet)."""
        with self._lock:
            if not self.user_turn:
                return self.job.messages
            out = conversation_messages(self.job.case, self.turns)
            if self._pending_user is not None:  # no assistant turn of this user turn yet
                out.append({"role": "user", "content": self._pending_user})
        return out

    def next_user(self, answer: str | None) -> str | None:
        """The agent answered the current user turn with ``answer`` (its final message):
        record it, and return the next scripted user message — or ``None`` when there is
        none: a one-turn case, the conversation's last turn, or a turn in which the agent
        called a tool that must never be called (the conversation ends there; the turns
        not reached fail the case). ``final`` is always the latest answer."""
        with self._lock:
            if self.closed:
                raise AgentFailure(ErrorKind.TIMEOUT, "the case-sample already ended")
            self.final = answer
            case = self.job.case
            if not case.conversation:
                return None
            self.turns.append(Turn(content=answer, user=self._pending_user))
            self._pending_user = None
            forbidden = self._forbidden_called()
            if forbidden is not None:
                self.ended_by = (
                    f"turn {self.user_turn + 1} of {len(case.conversation)} called "
                    f"{forbidden}, which must never be called"
                )
                return None
            if self.user_turn + 1 >= len(case.conversation):
                return None
            self.user_turn += 1
            self._steps = 0
            nxt = case.conversation[self.user_turn].user
            self._pending_user = nxt
            self.backend.start_turn(self.user_turn)
            return nxt

    def _forbidden_called(self) -> str | None:
        """A must-not-call tool the current user turn called (the case's or the turn's)."""
        case = self.job.case
        names = {*case.must_not_call, *case.conversation[self.user_turn].must_not_call}
        for t in reversed(self.turns):
            for c in t.calls:
                if c.name in names:
                    return c.name
            if t.user is not None:
                break
        return None

    def add_usage(self, usage: Any) -> None:
        """One usage report of the agent (a reply's, a response's): summed and checked
        (:class:`gate.model.usage.UsageSum`: a bad one makes the sample's usage invalid)."""
        with self._lock:
            self.usage.add(usage)

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
            user, self._pending_user = self._pending_user, None
            steps = self._steps
            self._steps += 1
            over: str | None = None
            if len(ided) > MAX_BATCH_CALLS:
                over = (
                    f"the agent sent {len(ided):,} tool calls in one turn; a turn carries at "
                    f"most {MAX_BATCH_CALLS}"
                )
            elif steps >= self.job.step_budget:
                where = f" in user turn {self.user_turn + 1}" if self.job.case.conversation else ""
                over = (
                    f"the agent asked for tool-calling turn {steps + 1}{where} "
                    f"with a step budget of {self.job.step_budget}"
                )
            if over is not None:  # the turn is recorded (its calls without results)
                self.turns.append(
                    Turn(calls=tuple(ided[:MAX_BATCH_CALLS]), content=content, user=user)
                )
                self.failure = AgentFailure(ErrorKind.STEP_BUDGET, over)
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
            self.turns.append(
                Turn(calls=tuple(ided), tool_results=tuple(results), content=content, user=user)
            )
            return results

    def to_run(self, *, error: str | None = None, latency_ms: float | None = None) -> Run:
        with self._lock:
            self.closed = True
            turns = list(self.turns)
            if self._pending_user is not None and self.user_turn and error is not None:
                # a later user turn was sent and the agent failed before any message of
                # its own: the empty turn says which user turn the failure belongs to
                turns.append(Turn(user=self._pending_user))
            return Run(
                case_id=self.job.case.id,
                sample=self.job.sample,
                turns=tuple(turns),
                final=self.final,
                error=error,
                latency_ms=latency_ms,
                usage=self.usage.result(),
                meta=(
                    {**self.meta, "conversation_ended": self.ended_by}
                    if self.ended_by
                    else dict(self.meta)
                )
                or None,
            )
