"""Recorded provider conversations → runs.jsonl (and optionally dataset cases).

``toolgate import transcripts --format openai|anthropic|gemini|responses FILE`` reads one
record per conversation; docs/interop.md ("Transcripts") gives the record, the request
and response of each format, and how user turns become one-turn or conversation cases
(:mod:`gate.interop._conversation`). Tool calls are read by the provider adapters in
:mod:`gate.adapters` (from the structured fields, never from text); a malformed payload is
an :class:`~gate.interop.InteropError` naming the file, the record and the field.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from gate.adapters import anthropic, gemini, openai_chat, openai_responses
from gate.adapters.interface import AssistantTurn
from gate.dataset.matchers import json_kind
from gate.errors import FieldError, PayloadError
from gate.interop._conversation import (
    Conversation,
    Imported,
    Message,
    ToolMessage,
    to_case,
    to_run,
)
from gate.interop._records import Locator, Record, read_records
from gate.model import Run, ToolCall


class Format(enum.StrEnum):
    OPENAI = "openai"
    ANTHROPIC = "anthropic"
    GEMINI = "gemini"
    RESPONSES = "responses"


_RECORD_KEYS = ("id", "case_id", "sample", "request", "response", "latency_ms", "metadata")


def _mapping(value: Any, field: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise FieldError(field, f"must be an object, not {json_kind(value)}")
    return value


def _list(value: Any, field: str) -> list[Any]:
    if not isinstance(value, list):
        raise FieldError(field, f"must be an array, not {json_kind(value)}")
    return value


def _adapter(fn: Callable[..., Any], *args: Any, prefix: str | None = None) -> Any:
    """Call an adapter; its :class:`PayloadError` becomes a problem at its path (under
    ``prefix`` when the adapter's paths are relative to a payload)."""
    try:
        return fn(*args)
    except PayloadError as exc:
        path = f"{prefix}.{exc.path}" if prefix and exc.path else (exc.path or prefix or "")
        message = str(exc)
        if exc.path and message.startswith(f"{exc.path}: "):
            message = message[len(exc.path) + 2 :]
        raise FieldError(path, message) from None


def _text_of(content: Any, field: str, text_types: tuple[str, ...]) -> str | None:
    """A message content that is a string or a list of text parts → its text."""
    if content is None or isinstance(content, str):
        return content
    parts = _list(content, field)
    texts = []
    for i, p in enumerate(parts):
        if isinstance(p, str):
            texts.append(p)
            continue
        part = _mapping(p, f"{field}[{i}]")
        typed = part.get("type") in text_types or "type" not in part
        if typed and isinstance(part.get("text"), str):
            texts.append(part["text"])
    return "\n".join(texts) if texts else None


def _answered(
    messages: list[Message],
    tools: list[dict[str, Any]],
    parse: Callable[[Any], AssistantTurn],
    response: Any,
) -> Conversation:
    """The conversation, the provider's ``response`` (when recorded) its last message."""
    if response is None:
        return Conversation(messages, tools)
    turn: AssistantTurn = _adapter(parse, response, prefix="response")
    messages.append(Message("assistant", turn.content, calls=turn.calls, where="response"))
    return Conversation(messages, tools, usage=turn.usage)


def _block_messages(
    role: str, texts: list[str], results: list[ToolMessage], calls: list[ToolCall], where: str
) -> list[Message]:
    """One Anthropic or Gemini message of blocks/parts: tool results (a user turn may add
    text after them), an assistant message, or a user message."""
    text = "\n".join(texts) if texts else None
    if role == "assistant":
        return [Message("assistant", text, calls=tuple(calls), where=where)]
    if not results:
        return [Message("user", text, where=where)]
    tool = Message("tool", results=tuple(results), where=where)
    return [tool, Message("user", text, where=where)] if text else [tool]


# ─── OpenAI chat completions ─────────────────────────────────────────────────


def _tools(
    raw: Any, specs: Callable[[Mapping[str, Any], str], list[dict[str, Any]]]
) -> list[dict[str, Any]]:
    """A request's ``tools`` → OpenAI-shaped function tools; ``specs`` gives the function
    specs of one tool (none for a built-in tool, which is not a function tool)."""
    field = "request.tools"
    return [
        {"type": "function", "function": spec}
        for i, t in enumerate(_list(raw or [], field))
        for spec in specs(_mapping(t, f"{field}[{i}]"), f"{field}[{i}]")
    ]


def _openai_tool(tool: Mapping[str, Any], field: str) -> list[dict[str, Any]]:
    if tool.get("type", "function") != "function":
        return []
    return [
        _function_spec(_mapping(tool.get("function"), f"{field}.function"), f"{field}.function")
    ]


def _function_spec(
    fn: Mapping[str, Any], field: str, schema_key: str = "parameters"
) -> dict[str, Any]:
    name = fn.get("name")
    if not isinstance(name, str) or not name:
        raise FieldError(f"{field}.name", "must be a non-empty string")
    spec: dict[str, Any] = {"name": name}
    if isinstance(fn.get("description"), str):
        spec["description"] = fn["description"]
    params = fn.get(schema_key)
    spec["parameters"] = (
        dict(_mapping(params, f"{field}.{schema_key}"))
        if params is not None
        else {"type": "object", "properties": {}}
    )
    return spec


def parse_openai(request: Mapping[str, Any], response: Any) -> Conversation:
    messages: list[Message] = []
    for i, raw in enumerate(_list(request.get("messages"), "request.messages")):
        f = f"request.messages[{i}]"
        m = _mapping(raw, f)
        role = m.get("role")
        if role in ("system", "developer", "user", "assistant"):
            calls = _adapter(openai_chat.calls_from_message, m, f) if role == "assistant" else ()
            text = _text_of(m.get("content"), f"{f}.content", ("text",))
            kind = role if role in ("user", "assistant") else "system"
            messages.append(Message(kind, text, calls=calls, where=f))
        elif role in ("tool", "function"):
            call_id = m.get("tool_call_id")
            if role == "tool" and not isinstance(call_id, str):
                raise FieldError(
                    f"{f}.tool_call_id", "a tool message must name the call it answers"
                )
            call_id = call_id if isinstance(call_id, str) else None
            result = ToolMessage(call_id, m.get("content"), name=m.get("name"))
            messages.append(Message("tool", results=(result,), where=f))
        else:
            raise FieldError(
                f"{f}.role", f"unknown role {role!r} (system, developer, user, assistant, tool)"
            )
    tools = _tools(request.get("tools"), _openai_tool)
    return _answered(messages, tools, openai_chat.parse_completion, response)


# ─── OpenAI Responses ────────────────────────────────────────────────────────


def _responses_tool(tool: Mapping[str, Any], field: str) -> list[dict[str, Any]]:
    return [_function_spec(tool, field)] if tool.get("type") == "function" else []


def _responses_items(items: list[Any], field: str) -> list[Message]:
    messages: list[Message] = []
    for i, raw in enumerate(items):
        f = f"{field}[{i}]"
        it = _mapping(raw, f)
        kind = it.get("type", "message")
        if kind == "message":
            role = it.get("role")
            text = _text_of(
                it.get("content"), f"{f}.content", ("input_text", "output_text", "text")
            )
            if role not in ("system", "developer", "user", "assistant"):
                raise FieldError(
                    f"{f}.role", f"unknown role {role!r} (system, developer, user, assistant)"
                )
            messages.append(Message("system" if role == "developer" else role, text, where=f))
        elif kind == "function_call":
            call = _adapter(openai_responses.call_from_item, it, f)
            # Consecutive function_call items (and any text just before them) are one turn.
            if messages and messages[-1].role == "assistant":
                last = messages[-1]
                messages[-1] = replace(last, calls=(*last.calls, call))
            else:
                messages.append(Message("assistant", None, calls=(call,), where=f))
        elif kind == "function_call_output":
            call_id = it.get("call_id")
            if not isinstance(call_id, str):
                raise FieldError(f"{f}.call_id", "must name the function call it answers")
            messages.append(
                Message("tool", results=(ToolMessage(call_id, it.get("output")),), where=f)
            )
        # reasoning items, built-in tool calls and their outputs are not function calls
    return messages


def parse_responses(request: Mapping[str, Any], response: Any) -> Conversation:
    messages: list[Message] = []
    if isinstance(request.get("instructions"), str):
        messages.append(Message("system", request["instructions"], where="request.instructions"))
    raw_input = request.get("input")
    if isinstance(raw_input, str):
        messages.append(Message("user", raw_input, where="request.input"))
    else:
        messages.extend(_responses_items(_list(raw_input, "request.input"), "request.input"))
    tools = _tools(request.get("tools"), _responses_tool)
    return _answered(messages, tools, openai_responses.parse_response, response)


# ─── Anthropic Messages ──────────────────────────────────────────────────────


def _anthropic_tool(tool: Mapping[str, Any], field: str) -> list[dict[str, Any]]:
    # Server tools (web_search_…, bash_…) have a type and no schema.
    return [_function_spec(tool, field, "input_schema")] if "input_schema" in tool else []


def _tool_result_content(content: Any, field: str) -> Any:
    if content is None or isinstance(content, str):
        return content
    blocks = _list(content, field)
    if all(isinstance(b, Mapping) and b.get("type") == "text" for b in blocks):
        return "\n".join(str(b.get("text", "")) for b in blocks)
    return blocks


def parse_anthropic(request: Mapping[str, Any], response: Any) -> Conversation:
    messages: list[Message] = []
    system = request.get("system")
    if system is not None:
        messages.append(
            Message("system", _text_of(system, "request.system", ("text",)), where="request.system")
        )
    for i, raw in enumerate(_list(request.get("messages"), "request.messages")):
        f = f"request.messages[{i}]"
        m = _mapping(raw, f)
        role = m.get("role")
        content = m.get("content")
        if role not in ("user", "assistant"):
            raise FieldError(f"{f}.role", f"unknown role {role!r} (user, assistant)")
        if isinstance(content, str):
            messages.append(Message(role, content, where=f))
            continue
        blocks = _list(content, f"{f}.content")
        texts: list[str] = []
        calls = []
        results: list[ToolMessage] = []
        for j, b in enumerate(blocks):
            bf = f"{f}.content[{j}]"
            block = _mapping(b, bf)
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif kind == "tool_use" and role == "assistant":
                calls.append(_adapter(anthropic.call_from_block, block, bf))
            elif kind == "tool_result" and role == "user":
                tid = block.get("tool_use_id")
                if not isinstance(tid, str):
                    raise FieldError(f"{bf}.tool_use_id", "must name the tool_use block it answers")
                is_error = block.get("is_error", False)
                if not isinstance(is_error, bool):
                    raise FieldError(f"{bf}.is_error", "must be true or false")
                output = _tool_result_content(block.get("content"), f"{bf}.content")
                results.append(ToolMessage(tid, output, is_error))
        messages += _block_messages(role, texts, results, calls, f)
    tools = _tools(request.get("tools"), _anthropic_tool)
    return _answered(messages, tools, anthropic.parse_message, response)


# ─── Gemini generateContent ──────────────────────────────────────────────────

_GEMINI_DROP = frozenset({"propertyOrdering", "example", "nullable"})


def gemini_schema(node: Any) -> Any:
    """Gemini's OpenAPI-subset ``Schema`` (``type: "STRING"``, ``nullable``) → JSON Schema."""
    if isinstance(node, list):
        return [gemini_schema(n) for n in node]
    if not isinstance(node, Mapping):
        return node
    out: dict[str, Any] = {}
    for k, v in node.items():
        if k in _GEMINI_DROP:
            continue
        if k == "type" and isinstance(v, str):
            out[k] = v.lower()
        elif k == "properties" and isinstance(v, Mapping):
            out[k] = {name: gemini_schema(sub) for name, sub in v.items()}
        elif k in ("items", "anyOf"):
            out[k] = gemini_schema(v)
        else:
            out[k] = v
    if node.get("nullable") is True and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    return out


def _gemini_tool(tool: Mapping[str, Any], field: str) -> list[dict[str, Any]]:
    decls = tool.get("functionDeclarations", tool.get("function_declarations"))
    if decls is None:
        return []  # googleSearch, codeExecution, …
    specs: list[dict[str, Any]] = []
    for j, d in enumerate(_list(decls, f"{field}.functionDeclarations")):
        df = f"{field}.functionDeclarations[{j}]"
        decl = _mapping(d, df)
        if "parametersJsonSchema" in decl:
            specs.append(_function_spec(decl, df, "parametersJsonSchema"))
        else:
            spec = _function_spec(decl, df)
            specs.append({**spec, "parameters": gemini_schema(spec["parameters"])})
    return specs


def parse_gemini(request: Mapping[str, Any], response: Any) -> Conversation:
    messages: list[Message] = []
    system = request.get("systemInstruction", request.get("system_instruction"))
    if system is not None:
        sys_field = "request.systemInstruction.parts"
        sys_parts = _list(_mapping(system, "request.systemInstruction").get("parts", []), sys_field)
        text = _text_of(sys_parts, sys_field, ("text",))
        messages.append(Message("system", text, where="request.systemInstruction"))
    for i, raw in enumerate(_list(request.get("contents"), "request.contents")):
        f = f"request.contents[{i}]"
        c = _mapping(raw, f)
        role = c.get("role", "user")
        if role not in ("user", "model", "function", "tool"):
            raise FieldError(f"{f}.role", f"unknown role {role!r} (user, model)")
        texts: list[str] = []
        calls = []
        results: list[ToolMessage] = []
        for j, p in enumerate(_list(c.get("parts"), f"{f}.parts")):
            pf = f"{f}.parts[{j}]"
            part = _mapping(p, pf)
            if "functionCall" in part:
                calls.append(_adapter(gemini.call_from_part, part, pf))
            elif "functionResponse" in part:
                fr = _mapping(part["functionResponse"], f"{pf}.functionResponse")
                fid = fr.get("id") if isinstance(fr.get("id"), str) else None
                results.append(ToolMessage(fid, fr.get("response"), name=fr.get("name")))
            elif isinstance(part.get("text"), str) and not part.get("thought"):
                texts.append(part["text"])
        role = "assistant" if role == "model" else "user"
        messages += _block_messages(role, texts, results, calls, f)
    tools = _tools(request.get("tools"), _gemini_tool)
    return _answered(messages, tools, gemini.parse_response, response)


_PARSERS: dict[Format, Callable[[Mapping[str, Any], Any], Conversation]] = {
    Format.OPENAI: parse_openai,
    Format.RESPONSES: parse_responses,
    Format.ANTHROPIC: parse_anthropic,
    Format.GEMINI: parse_gemini,
}


# ─── the file ────────────────────────────────────────────────────────────────


def _record_id(
    rec: Record, obj: Mapping[str, Any], stem: str, index: int
) -> tuple[str, str | None]:
    """(case id, source trace id) of one record."""
    for key in ("case_id", "id"):
        v = obj.get(key)
        if v is not None and (not isinstance(v, str) or not v):
            raise FieldError(key, "must be a non-empty string")
    resp = obj.get("response")
    resp_id = (
        resp.get("id") if isinstance(resp, Mapping) and isinstance(resp.get("id"), str) else None
    )
    case_id = obj.get("case_id") or obj.get("id") or f"{stem}-{index}"
    return str(case_id), (obj.get("id") if isinstance(obj.get("id"), str) else None) or resp_id


def iter_conversations(
    path: Path, fmt: Format, *, display: str | None = None
) -> Iterator[tuple[Record, Conversation, str, str | None, int | None]]:
    """(record, conversation, case id, source trace id, explicit sample) per record;
    every problem in the file is collected and raised once at the end."""
    name = display or str(path)
    loc = Locator(name)
    parse = _PARSERS[fmt]
    out = []
    for index, rec in enumerate(
        read_records(path, display=name, unwrap=("data", "records")), start=1
    ):
        try:
            obj = _mapping(rec.value, "")
            unknown = [k for k in obj if k not in _RECORD_KEYS]
            if unknown:
                raise FieldError(
                    str(unknown[0]), f"unknown key (a record has {', '.join(_RECORD_KEYS)})"
                )
            request = _mapping(obj.get("request"), "request")
            sample = obj.get("sample")
            if sample is not None and (
                not isinstance(sample, int) or isinstance(sample, bool) or sample < 0
            ):
                raise FieldError("sample", "must be an integer >= 0")
            latency = obj.get("latency_ms")
            if latency is not None and (
                not isinstance(latency, int | float) or isinstance(latency, bool)
            ):
                raise FieldError("latency_ms", "must be a number")
            metadata = obj.get("metadata")
            if metadata is not None:
                _mapping(metadata, "metadata")
            case_id, trace_id = _record_id(rec, obj, path.stem, index)
            conv = parse(request, obj.get("response"))
            conv.latency_ms = float(latency) if latency is not None else None
            conv.meta = {
                "source": f"transcript:{fmt.value}",
                "record": f"{name}:{rec.line}{rec.pointer}",
            }
            if trace_id:
                conv.meta["source_trace_id"] = trace_id
            if metadata:
                conv.meta["metadata"] = dict(metadata)
            if not any(m.role == "assistant" for m in conv.messages):
                raise FieldError(
                    "response",
                    "no assistant answer: give the response, or a request that ends with "
                    "the assistant's turn",
                )
        except FieldError as bad:
            loc.add(rec, rec.field(bad.field) if bad.field else rec.pointer or None, bad.message)
            continue
        out.append((rec, conv, case_id, trace_id, sample))
    loc.raise_if_any()
    yield from out


def import_transcripts(
    path: Path,
    fmt: Format,
    *,
    display: str | None = None,
    cases: bool = False,
    keep_system: bool = False,
    last_turn: bool = False,
) -> Imported:
    """Every record of ``path`` → runs (samples numbered per case id) and, with ``cases``,
    one dataset case per case id (from its first record). A record of several user turns
    is a conversation (:mod:`gate.interop._conversation`); with ``last_turn``, only its
    last user turn is (the earlier ones are the case's ``message_history``)."""
    name = display or str(path)
    loc = Locator(name)
    runs: list[Run] = []
    rows: list[dict[str, Any]] = []
    counts: Counter[str] = Counter()
    seen_samples: set[tuple[str, int]] = set()
    for rec, conv, case_id, trace_id, sample in iter_conversations(path, fmt, display=name):
        n = sample if sample is not None else counts[case_id]
        counts[case_id] += 1
        if (case_id, n) in seen_samples:
            loc.add(rec, rec.field("sample"), f"case {case_id!r} sample {n} appears twice")
            continue
        seen_samples.add((case_id, n))
        try:
            runs.append(to_run(conv, case_id, n, last_turn=last_turn))
            if cases and counts[case_id] == 1:
                rows.append(
                    to_case(
                        conv,
                        case_id,
                        source_trace_id=trace_id,
                        tags=["imported", fmt.value],
                        keep_system=keep_system,
                        last_turn=last_turn,
                    )
                )
        except FieldError as exc:
            loc.add(rec, rec.field(exc.field) if exc.field else rec.pointer or None, exc.message)
    loc.raise_if_any()
    if not runs:
        raise Locator(name).fail(None, None, "no records")
    return Imported(runs, rows, fmt.value)
