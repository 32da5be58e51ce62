"""Frozen tool replay: the seam between the agent under test and its tools.

No real tool ever runs in the gate (docs/agent-protocol.md). Every tool call the agent makes goes
through a :class:`ToolBackend` — ``call(name, args) -> ToolOutcome`` — the way every HTTP
request goes through a transport (STYLE habit 5). Three backends:

* :class:`ReplayBackend` answers from one case's ``tool_responses`` (the gate);
* :class:`RecordingBackend` answers from a fallback backend (usually the user's real tool
  functions, :class:`FunctionBackend`) whatever the replay backend does not know, and keeps
  what it answered, so ``toolgate record`` can freeze it into the dataset;
* :class:`FunctionBackend` calls plain Python functions (tests, record mode).

Which frozen response answers a call is written once in docs/agent-protocol.md ("How a
frozen response is chosen"; a conversation's turns: docs/dataset.md). Here: the matchers
are the expectations' (:func:`gate.scorers.argmatch.args_match`, extra arguments
allowed); the use counts are kept per case-sample, over the whole conversation; arguments
that did not parse (``None``) only match a default response; a miss is kept in
:attr:`ReplayBackend.misses`.
"""

from __future__ import annotations

import difflib
import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from gate.model import Case, FrozenResponse, JsonValue
from gate.runsfile import UNRECORDED_KEY
from gate.scorers.argmatch import args_match
from gate.scorers.context import NormalizerTable


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """What a tool call returned: ``content`` (any JSON value), whether it is an error,
    and whether it is the runner's "no frozen response" error."""

    content: JsonValue
    is_error: bool = False
    unrecorded: bool = False


class ToolBackend(Protocol):
    """Answers one tool call. ``args`` is None when the model's arguments did not parse.
    ``start_turn(k)`` says a conversation's user turn ``k`` (0-based) begins: a backend
    whose answers depend on the turn (the replay backend: a turn's own frozen responses)
    switches to it."""

    def call(self, name: str, args: Mapping[str, Any] | None) -> ToolOutcome: ...

    def start_turn(self, index: int) -> None: ...


def render_call(name: str, args: Mapping[str, Any] | None) -> str:
    """``name({"k": "v"})`` with sorted keys — the canonical form used in messages."""
    if args is None:
        return f"{name}(<arguments that are not a JSON object>)"
    return f"{name}({json.dumps(args, sort_keys=True, ensure_ascii=False)})"


def _render_response(resp: FrozenResponse) -> str:
    if resp.args is None:
        return f"{resp.name}(<any arguments>)"
    return render_call(resp.name, {k: m.to_json() for k, m in resp.args.items()})


class ReplayBackend:
    """Answers a case's tool calls from its frozen ``tool_responses`` (module docstring).

    One instance per case-sample: it counts which responses were used.
    """

    def __init__(self, case: Case, normalizers: NormalizerTable | None = None) -> None:
        self.case = case
        responses = list(case.tool_responses)
        self._tiers: list[tuple[range, ...]] = []
        """Per user turn, the index ranges of ``_responses`` tried in order (its own, the
        case's); one-turn cases have one tier, the case's."""
        base = range(len(responses))
        for turn in case.conversation:
            own = range(len(responses), len(responses) + len(turn.tool_responses))
            responses.extend(turn.tool_responses)
            self._tiers.append((own, base) if own else (base,))
        self._responses = tuple(responses)
        self._tier: tuple[range, ...] = self._tiers[0] if self._tiers else (base,)
        self._used = [0] * len(self._responses)
        self._norms = normalizers or NormalizerTable()
        self._lock = threading.Lock()
        self.misses: list[str] = []
        """One line per unrecorded call: case, tool, canonical arguments, nearest."""

    def start_turn(self, index: int) -> None:
        with self._lock:
            self._tier = self._tiers[index]

    def call(self, name: str, args: Mapping[str, Any] | None) -> ToolOutcome:
        norm = self._norms.get(name, self.case.tool(name))
        with self._lock:
            tier = self._tier
        matching: list[int] = []
        for span in tier:
            matching = [
                i
                for i in span
                if (r := self._responses[i]).name == name
                and r.args is not None
                and args_match(r.args, args, exact=False, norm=norm)
            ]
            if not matching:
                matching = [
                    i for i in span if (r := self._responses[i]).name == name and r.args is None
                ]
            if matching:
                break
        with self._lock:
            if matching:
                pick = next((i for i in matching if self._used[i] == 0), matching[-1])
                self._used[pick] += 1
                resp = self._responses[pick]
                if resp.is_error:
                    return ToolOutcome(resp.error, is_error=True)
                return ToolOutcome(resp.response)
            return self._miss(name, args)

    def _miss(self, name: str, args: Mapping[str, Any] | None) -> ToolOutcome:
        call = render_call(name, args)
        nearest = self.nearest(name, call)
        self.misses.append(
            f"case {self.case.id}: no frozen response for {call}"
            + (f"; nearest recorded call: {nearest}" if nearest else "; the case records none")
        )
        return ToolOutcome(
            {UNRECORDED_KEY: True, "error": f"no frozen response for {call}", "nearest": nearest},
            is_error=True,
            unrecorded=True,
        )

    def nearest(self, name: str, rendered: str) -> str | None:
        """The recorded call most like ``rendered``: same tool first, then by text
        similarity (``difflib`` ratio); ties go to the earlier response."""
        best: tuple[float, str] | None = None
        for resp in self._responses:
            text = _render_response(resp)
            score = difflib.SequenceMatcher(None, rendered, text).ratio()
            score += 1.0 if resp.name == name else 0.0
            if best is None or score > best[0]:
                best = (score, text)
        return best[1] if best else None


@dataclass(frozen=True, slots=True)
class RecordedCall:
    """One call answered by the fallback of a :class:`RecordingBackend`."""

    name: str
    args: Mapping[str, Any] | None
    outcome: ToolOutcome


class FunctionBackend:
    """Calls Python functions: ``functions[name](**args)``, or one ``handler(name, args)``.

    A function may return a :class:`ToolOutcome` (passed through) or any JSON value (a
    success). An exception becomes an error result ``{"error": "<Type>: <message>"}``; an
    unknown tool or unparsed arguments become error results too (an unknown tool's marked
    unrecorded: record mode has nothing to freeze).
    """

    def __init__(
        self,
        functions: Mapping[str, Callable[..., Any]] | None = None,
        handler: Callable[[str, Mapping[str, Any] | None], Any] | None = None,
    ) -> None:
        if (functions is None) == (handler is None):
            raise ValueError("give exactly one of functions= or handler=")
        self._functions = functions
        self._handler = handler

    def call(self, name: str, args: Mapping[str, Any] | None) -> ToolOutcome:
        try:
            if self._handler is not None:
                value = self._handler(name, args)
            else:
                assert self._functions is not None
                fn = self._functions.get(name)
                if fn is None:  # nothing to record
                    return ToolOutcome(
                        {"error": f"{name} is not in the --tools registry"},
                        is_error=True,
                        unrecorded=True,
                    )
                if args is None:
                    return ToolOutcome({"error": "arguments are not a JSON object"}, is_error=True)
                value = fn(**args)
        except Exception as exc:  # a failing tool is a result for the agent, not a crash
            return ToolOutcome({"error": f"{type(exc).__name__}: {exc}"}, is_error=True)
        return value if isinstance(value, ToolOutcome) else ToolOutcome(value)

    def start_turn(self, index: int) -> None:
        return None


class RecordingBackend:
    """Answers from ``replay`` when it knows the call, otherwise from ``fallback`` — once
    per distinct call (same tool, same canonical arguments) — and keeps every fallback
    answer in :attr:`recorded`, in call order."""

    def __init__(self, fallback: ToolBackend, replay: ReplayBackend | None = None) -> None:
        self._fallback = fallback
        self._replay = replay
        self._seen: dict[str, ToolOutcome] = {}
        self.recorded: list[RecordedCall] = []

    def call(self, name: str, args: Mapping[str, Any] | None) -> ToolOutcome:
        if self._replay is not None:
            outcome = self._replay.call(name, args)
            if not outcome.unrecorded:
                return outcome
        key = render_call(name, args)
        if key in self._seen:
            return self._seen[key]
        outcome = self._fallback.call(name, args)
        self._seen[key] = outcome
        self.recorded.append(RecordedCall(name, args, outcome))
        return outcome

    def start_turn(self, index: int) -> None:
        if self._replay is not None:
            self._replay.start_turn(index)
        self._fallback.start_turn(index)
