"""A provider-neutral conversation, and how it becomes a run and a dataset case.

The transcript importer parses its input into :class:`Conversation` (every message the
model was sent and what it answered, the tools it saw); this module turns that into a
:class:`gate.model.Run` (docs/agent-protocol.md) and a dataset row (docs/dataset.md). The
trace importer (:mod:`gate.interop.otel`) builds its cases from the same parts
(:func:`expectations`, :func:`conversation_turns`, :func:`marked_turns`).

docs/interop.md ("Transcripts") gives the rules in full: user turns, one-turn and
conversation cases, which response each turn freezes, and what is refused. A conversation
is refused (:class:`FieldError` naming the message) where a provider would have refused
the request, or where a tool result could not be frozen for any call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from gate import jsonio
from gate.errors import FieldError
from gate.model import Run, ToolCall, ToolResult, Turn
from gate.model.usage import usage_of


@dataclass(frozen=True, slots=True)
class ToolMessage:
    """One tool result as a conversation carried it."""

    call_id: str | None
    content: Any
    is_error: bool = False
    name: str | None = None


@dataclass(frozen=True, slots=True)
class Message:
    """One message, provider-neutral. ``role`` is system / user / assistant / tool;
    ``where`` the field it was read from (``request.messages[3]``, ``response``)."""

    role: str
    text: str | None = None
    calls: tuple[ToolCall, ...] = ()
    results: tuple[ToolMessage, ...] = ()
    where: str | None = None


@dataclass(slots=True)
class Conversation:
    """A recorded exchange: what the model was sent and what it answered."""

    messages: list[Message]
    tools: list[dict[str, Any]] = field(default_factory=list)
    """OpenAI-shaped tool specs the model saw (``{"type": "function", "function": {...}}``)."""
    usage: Mapping[str, int | float] | None = None
    latency_ms: float | None = None
    error: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Imported:
    """What one file of conversations or traces gave: runs (samples numbered per case id)
    and, when asked, dataset cases (one per case id, from its first record)."""

    runs: list[Run]
    cases: list[dict[str, Any]]
    source: str
    """What the runs were read from: the transcript format, ``otel`` or ``langfuse``."""


@dataclass(frozen=True, slots=True)
class UserTurn:
    """One user turn of a conversation: what the user said, where, and the assistant and
    tool messages that answered it."""

    user: str
    where: str | None
    messages: tuple[Message, ...]
    joined: int = 1
    """How many user messages (with no answer between them) make its text."""


@dataclass(frozen=True, slots=True)
class UserTurns:
    """A conversation cut into its user turns (docs/interop.md)."""

    before: tuple[Message, ...]
    """The messages before the first user message."""
    turns: tuple[UserTurn, ...]
    system_later: int = 0
    """System messages after the first user message (a conversation case has no place
    for them)."""


def split(conv: Conversation) -> tuple[list[Message], Message | None, list[Message]]:
    """(history, the last user message, the messages after it). A conversation without any
    user message has no user turn (``None``): everything is "after"."""
    users = [i for i, m in enumerate(conv.messages) if m.role == "user"]
    if not users:
        return [], None, list(conv.messages)
    last_user = users[-1]
    return conv.messages[:last_user], conv.messages[last_user], conv.messages[last_user + 1 :]


def user_turns(conv: Conversation) -> UserTurns:
    """The conversation's user turns (docs/interop.md), unchecked."""
    first = next((i for i, m in enumerate(conv.messages) if m.role == "user"), None)
    if first is None:
        return UserTurns(tuple(conv.messages), ())
    turns: list[tuple[list[str], str | None, list[Message], int]] = []
    system_later = 0
    for m in conv.messages[first:]:
        if m.role == "user":
            if turns and not turns[-1][2]:  # no answer yet: the same user turn
                texts, where, msgs, joined = turns[-1]
                turns[-1] = ([*texts, m.text or ""], where, msgs, joined + 1)
            else:
                turns.append(([m.text or ""], m.where, [], 1))
        elif m.role == "system":
            system_later += 1
        else:
            turns[-1][2].append(m)
    return UserTurns(
        tuple(conv.messages[:first]),
        tuple(
            UserTurn("\n\n".join(t for t in texts if t.strip()), where, tuple(msgs), joined)
            for texts, where, msgs, joined in turns
        ),
        system_later,
    )


def check_conversation(cut: UserTurns) -> None:
    """Refuse what a conversation case cannot hold (docs/interop.md): raises
    :class:`FieldError` naming the message."""
    _check_results(cut.before)
    for k, t in enumerate(cut.turns):
        if not t.user.strip():
            raise FieldError(
                t.where or "",
                f"user turn {k + 1} has no text: a turn of a conversation is what the user "
                "says (--last-turn imports the last user turn alone)",
            )
        _check_results(t.messages)
        if not any(m.role == "assistant" for m in t.messages):
            # only the last turn can be so: user messages in a row are one turn
            raise FieldError(
                t.where or "",
                f"the last user message (turn {k + 1}) has no assistant answer: give the "
                "response, or leave the message out",
            )


def _check_results(messages: Sequence[Message]) -> None:
    """Every tool result answers a call of the assistant message before it (by id, or in
    call order when the provider gives no ids) — the results that frozen responses are
    made of."""
    calls: tuple[ToolCall, ...] | None = None
    answered = 0
    for m in messages:
        if m.role == "assistant":
            calls, answered = m.calls, 0
        elif m.role == "tool":
            for i, r in enumerate(m.results, start=answered):
                if calls is None:
                    ok = False
                elif r.call_id is not None:
                    ok = any(c.id == r.call_id for c in calls)
                else:
                    ok = i < len(calls)
                if not ok:
                    what = f"call {r.call_id!r}" if r.call_id is not None else "a call"
                    raise FieldError(
                        m.where or "",
                        f"a tool result for {what} that the assistant message before it did "
                        "not make: a tool result must follow the call it answers",
                    )
            answered += len(m.results)


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


def marked_turns(groups: Sequence[tuple[str, Sequence[Turn]]]) -> list[Turn]:
    """The turns of a conversation run: each user turn's assistant turns, the first of
    them carrying the user's message (:attr:`gate.model.Turn.user`)."""
    out: list[Turn] = []
    for user, turns in groups:
        for i, t in enumerate(turns):
            out.append(replace(t, user=user) if i == 0 else t)
    return out


def to_run(conv: Conversation, case_id: str, sample: int, *, last_turn: bool = False) -> Run:
    """The run this conversation records (docs/interop.md). Raises
    :class:`FieldError` for a conversation that cannot be one (:func:`check_conversation`)."""
    cut = user_turns(conv)
    if last_turn or len(cut.turns) <= 1:
        _, _, after = split(conv)
        turns = turns_of(after)
    else:
        check_conversation(cut)
        turns = marked_turns([(t.user, turns_of(t.messages)) for t in cut.turns])
    return Run(
        case_id=case_id,
        sample=sample,
        turns=tuple(turns),
        final=turns[-1].content if turns and not turns[-1].calls else None,
        error=conv.error,
        latency_ms=conv.latency_ms,
        usage=usage_of(dict(conv.usage)) if conv.usage else None,
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


@dataclass(slots=True)
class Expectations:
    """What one user turn's assistant turns make: its expected calls, the notes on calls
    left out, its tool results as frozen responses (each with the key of its call: name
    and canonical arguments), and how many turns made calls."""

    expected: list[dict[str, Any]]
    notes: list[str]
    responses: list[tuple[str, dict[str, Any]]]
    batches: int

    @property
    def order(self) -> str:
        return "strict" if self.batches > 1 else "unordered"


def expectations(turns: Sequence[Turn]) -> Expectations:
    """One user turn's expectations and frozen responses (docs/interop.md)."""
    expected: list[dict[str, Any]] = []
    notes: list[str] = []
    responses: list[tuple[str, dict[str, Any]]] = []
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
            responses.append((f"{call.name}{jsonio.canonical(call.arguments)}", entry))
    return Expectations(expected, notes, responses, batches)


def conversation_turns(
    groups: Sequence[tuple[str, Sequence[Turn]]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[str]]:
    """The ``conversation`` column of a case made of these user turns (each its user
    message and its assistant turns), the case's ``tool_responses``, and notes on calls
    left out (docs/interop.md)."""
    rows: list[dict[str, Any]] = []
    case_responses: list[dict[str, Any]] = []
    notes: list[str] = []
    first: dict[str, list[dict[str, Any]]] = {}
    """Each call's responses in the case's list."""
    used: dict[str, int] = {}
    """How many of them replay has handed out by the end of the turn so far."""
    for k, (user, turns) in enumerate(groups):
        ex = expectations(turns)
        notes += [f"turn {k + 1}: {n}" for n in ex.notes]
        row: dict[str, Any] = {"user": user, "expected_tool_calls": ex.expected}
        if ex.expected:
            row["order"] = ex.order
        elif ex.notes:
            # calls were made but none could be kept: not a turn that expects none (the
            # loader asks for a review, as for a one-turn case)
            row["expected_no_tool"] = False
        got: dict[str, list[dict[str, Any]]] = {}
        for key, entry in ex.responses:
            got.setdefault(key, []).append(entry)
        own: list[dict[str, Any]] = []
        for key, seq in got.items():
            base = first.get(key)
            if base is None:
                first[key] = _trimmed(seq)
                case_responses += first[key]
                used[key] = len(seq)
                continue
            # What replay would answer from the case's responses: each in order, then
            # the last one again.
            n = used[key]
            would = [base[min(n + i, len(base) - 1)] for i in range(len(seq))]
            if would == seq:
                used[key] = n + len(seq)
            else:
                own += _trimmed(seq)
        if own:
            row["tool_responses"] = own
        rows.append(row)
    return rows, case_responses, notes


def _trimmed(seq: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A call's responses without the repeats at the end (replay repeats the last one)."""
    out = list(seq)
    while len(out) > 1 and out[-1] == out[-2]:
        out.pop()
    return out


def to_case(
    conv: Conversation,
    case_id: str,
    *,
    source_trace_id: str | None,
    tags: Sequence[str],
    keep_system: bool = False,
    last_turn: bool = False,
) -> dict[str, Any]:
    """The regression case this conversation makes (docs/interop.md).

    Raises :class:`FieldError` when the conversation has no user message, or is one that
    a conversation case cannot hold (:func:`check_conversation`).
    """
    cut = user_turns(conv)
    if not last_turn and len(cut.turns) > 1:
        check_conversation(cut)
        groups = [(t.user, turns_of(t.messages)) for t in cut.turns]
        rows, responses, notes = conversation_turns(groups)
        notes += [
            f"turn {k + 1} joins {t.joined} user messages that had no answer between them"
            for k, t in enumerate(cut.turns)
            if t.joined > 1
        ]
        if keep_system and cut.system_later:
            notes.append(
                f"{cut.system_later} system message(s) after the first user message left out "
                "(a conversation's turns are user messages)"
            )
        return conversation_case(
            case_id,
            rows,
            responses,
            history=openai_history(cut.before, keep_system=keep_system),
            tools=conv.tools,
            tags=tags,
            source_trace_id=source_trace_id,
            notes=notes,
        )
    history, user, after = split(conv)
    if user is None:
        raise FieldError(
            "request.messages", "no user message: a case needs the user turn under test"
        )
    return one_turn_case(
        case_id,
        user.text or "",
        turns_of(after),
        history=openai_history(history, keep_system=keep_system),
        tools=conv.tools,
        tags=tags,
        source_trace_id=source_trace_id,
    )


def one_turn_case(
    case_id: str,
    user_input: str,
    turns: Sequence[Turn],
    *,
    history: list[dict[str, Any]],
    tools: Sequence[Mapping[str, Any]],
    tags: Sequence[str],
    source_trace_id: str | None,
    notes: Sequence[str] = (),
) -> dict[str, Any]:
    """The row of a one-turn case: ``turns`` are what the agent did after ``user_input``."""
    ex = expectations(turns)
    case: dict[str, Any] = {
        "id": case_id,
        "user_input": user_input,
        "message_history": history,
        "available_tools": [dict(t) for t in tools],
        "expected_tool_calls": ex.expected,
        "expected_no_tool": not ex.expected and not ex.notes,
        "order": ex.order,
        "tags": list(tags),
    }
    responses = [e for _, e in ex.responses]
    if responses:
        case["tool_responses"] = responses
    if source_trace_id:
        case["source_trace_id"] = source_trace_id
    if ex.notes or notes:
        case["notes"] = "; ".join([*ex.notes, *notes])
    return case


def conversation_case(
    case_id: str,
    rows: list[dict[str, Any]],
    responses: list[dict[str, Any]],
    *,
    history: list[dict[str, Any]],
    tools: Sequence[Mapping[str, Any]],
    tags: Sequence[str],
    source_trace_id: str | None,
    notes: Sequence[str],
) -> dict[str, Any]:
    """A conversation case's row, its keys in the order the dataset docs give them."""
    case: dict[str, Any] = {
        "id": case_id,
        "message_history": history,
        "available_tools": [dict(t) for t in tools],
        "conversation": rows,
        "tags": list(tags),
    }
    if responses:
        case["tool_responses"] = responses
    if source_trace_id:
        case["source_trace_id"] = source_trace_id
    if notes:
        case["notes"] = "; ".join(notes)
    return case
