"""A provider-neutral conversation, and how it becomes a run and a dataset case.

The transcript and trace importers parse their input into :class:`Conversation` (messages
before the turn under test, the turn's user input, the assistant turns after it, the tools
the model saw); this module turns that into

* a :class:`gate.model.Run` (docs/agent-protocol.md) — each assistant message after the last user
  message is a turn, its calls a parallel batch, the tool results that follow attached to
  it; the last turn's text is ``final`` when it made no call;
* a dataset row (docs/dataset.md) — the calls become expectations (``order: strict`` when they
  span several turns, ``unordered`` for one batch), the tool results become frozen
  responses keyed by the call's name and arguments, the earlier messages become
  ``message_history`` in the OpenAI chat shape (system prompts left out unless asked:
  the agent under test brings its own).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gate import jsonio
from gate.errors import FieldError
from gate.model import Run, ToolCall, ToolResult, Turn


@dataclass(frozen=True, slots=True)
class ToolMessage:
    """One tool result as a conversation carried it."""

    call_id: str | None
    content: Any
    is_error: bool = False
    name: str | None = None


@dataclass(frozen=True, slots=True)
class Message:
    """One message, provider-neutral. ``role`` is system / user / assistant / tool."""

    role: str
    text: str | None = None
    calls: tuple[ToolCall, ...] = ()
    results: tuple[ToolMessage, ...] = ()


@dataclass(slots=True)
class Conversation:
    """A recorded exchange: what the model was sent and what it answered."""

    messages: list[Message]
    tools: list[dict[str, Any]] = field(default_factory=list)
    """OpenAI-shaped tool specs the model saw (``{"type": "function", "function": {...}}``)."""
    usage: Mapping[str, int] | None = None
    latency_ms: float | None = None
    error: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)


def split(conv: Conversation) -> tuple[list[Message], Message | None, list[Message]]:
    """(history, the last user message, the messages after it). A conversation without any
    user message has no user turn (``None``): everything is "after"."""
    last_user = None
    for i, m in enumerate(conv.messages):
        if m.role == "user":
            last_user = i
    if last_user is None:
        return [], None, list(conv.messages)
    return (
        conv.messages[:last_user],
        conv.messages[last_user],
        conv.messages[last_user + 1 :],
    )


def turns_of(after: Sequence[Message]) -> list[Turn]:
    """Assistant messages → turns; the tool results that follow one attach to it."""
    turns: list[Turn] = []
    calls: tuple[ToolCall, ...] = ()
    results: list[ToolResult] = []
    content: str | None = None
    open_turn = False
    for m in after:
        if m.role == "assistant":
            if open_turn:
                turns.append(Turn(calls=calls, tool_results=tuple(results), content=content))
            calls, results, content, open_turn = m.calls, [], m.text, True
        elif m.role == "tool":
            results.extend(
                ToolResult(id=r.call_id, content=r.content, is_error=r.is_error) for r in m.results
            )
            if not open_turn:
                # Tool results with no assistant turn before them (a trace that starts
                # mid-loop): keep them on an empty turn rather than drop them.
                open_turn = True
    if open_turn:
        turns.append(Turn(calls=calls, tool_results=tuple(results), content=content))
    return turns


def to_run(conv: Conversation, case_id: str, sample: int) -> Run:
    """The run this conversation records (see the module docstring)."""
    _, _, after = split(conv)
    turns = turns_of(after)
    final = None
    if turns and not turns[-1].calls:
        final = turns[-1].content
    return Run(
        case_id=case_id,
        sample=sample,
        turns=tuple(turns),
        final=final,
        error=conv.error,
        latency_ms=conv.latency_ms,
        usage=dict(conv.usage) if conv.usage else None,
        meta=dict(conv.meta) or None,
    )


def _content_value(content: Any) -> Any:
    """A tool result as a frozen response: JSON text is decoded (objects and arrays) so
    the dataset stays readable; anything else is kept as it came."""
    if isinstance(content, str):
        try:
            value = jsonio.loads_strict(content)
        except jsonio.JsonInputError:
            return content
        if isinstance(value, dict | list):
            return value
    return content


def _args_expectation(args: Mapping[str, Any]) -> dict[str, Any]:
    # A recorded object value whose keys look like matcher syntax ("$in", ...) would be
    # read as a matcher; `$in` with the one value keeps it literal.
    out: dict[str, Any] = {}
    for k, v in args.items():
        if isinstance(v, dict) and any(isinstance(key, str) and key.startswith("$") for key in v):
            out[k] = {"$in": [v]}
        else:
            out[k] = v
    return out


def openai_history(messages: Sequence[Message], *, keep_system: bool) -> list[dict[str, Any]]:
    """Messages → OpenAI chat messages (the dataset's ``message_history`` shape)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "system":
            if keep_system:
                out.append({"role": "system", "content": m.text or ""})
        elif m.role == "user":
            out.append({"role": "user", "content": m.text or ""})
        elif m.role == "assistant":
            msg: dict[str, Any] = {"role": "assistant", "content": m.text}
            if m.calls:
                msg["tool_calls"] = [
                    {
                        "id": c.id or f"call_{i}",
                        "type": "function",
                        "function": {
                            "name": c.name,
                            "arguments": c.raw_arguments
                            if c.raw_arguments is not None
                            else jsonio.canonical(c.arguments or {}),
                        },
                    }
                    for i, c in enumerate(m.calls)
                ]
            out.append(msg)
        elif m.role == "tool":
            for r in m.results:
                content = r.content if isinstance(r.content, str) else jsonio.canonical(r.content)
                out.append({"role": "tool", "tool_call_id": r.call_id or "", "content": content})
    return out


def to_case(
    conv: Conversation,
    case_id: str,
    *,
    source_trace_id: str | None,
    tags: Sequence[str],
    keep_system: bool = False,
) -> dict[str, Any]:
    """The regression case this conversation makes (see the module docstring).

    Raises :class:`FieldError` when the conversation has no user message.
    """
    history, user, after = split(conv)
    if user is None:
        raise FieldError("messages", "no user message: a case needs the user turn under test")
    turns = turns_of(after)
    expected: list[dict[str, Any]] = []
    notes: list[str] = []
    responses: list[dict[str, Any]] = []
    batches = 0
    for t in turns:
        if t.calls:
            batches += 1
        by_id = {c.id: c for c in t.calls if c.id is not None}
        for c in t.calls:
            if not c.parse_ok or c.arguments is None:
                notes.append(f"the recorded call to {c.name} had undecodable arguments; left out")
                continue
            expected.append({"name": c.name, "args": _args_expectation(c.arguments)})
        for i, r in enumerate(t.tool_results):
            call = by_id.get(r.id) if r.id is not None else None
            if call is None and r.id is None and i < len(t.calls):
                call = t.calls[i]  # providers without call ids answer in call order
            if call is None or call.arguments is None:
                continue
            entry: dict[str, Any] = {"name": call.name, "args": _args_expectation(call.arguments)}
            if r.is_error:
                entry["error"] = _content_value(r.content)
            else:
                entry["response"] = _content_value(r.content)
            responses.append(entry)
    case: dict[str, Any] = {
        "id": case_id,
        "user_input": user.text or "",
        "message_history": openai_history(history, keep_system=keep_system),
        "available_tools": list(conv.tools),
        "expected_tool_calls": expected,
        "expected_no_tool": not expected and not notes,
        "order": "strict" if batches > 1 else "unordered",
        "tags": list(tags),
    }
    if responses:
        case["tool_responses"] = responses
    if source_trace_id:
        case["source_trace_id"] = source_trace_id
    if notes:
        case["notes"] = "; ".join(notes)
    return case
