"""OpenTelemetry GenAI traces (OTLP JSON) and Langfuse observation exports → runs.jsonl
(and optionally dataset cases).

docs/interop.md ("Traces") gives the mapping in full: model and tool spans, Langfuse
observations, case ids, sessions and ``--cases``. Beside it: one trace is one run and a
session of traces one conversation (:mod:`gate.interop._conversation` builds its case); a
model turn's text is ``final`` when it is the last turn and made no call; a session's
first turn carries its user message (``Turn.user``, the runner's convention).
"""

from __future__ import annotations

import enum
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from gate import jsonio
from gate.errors import FieldError, InteropError, Problem
from gate.interop._conversation import (
    Imported,
    conversation_case,
    conversation_turns,
    marked_turns,
    one_turn_case,
)
from gate.interop._records import Locator, Record, read_records
from gate.model import Run, ToolCall, ToolResult, Turn
from gate.runsfile import decode_arguments


class TraceFormat(enum.StrEnum):
    AUTO = "auto"
    OTLP = "otlp"
    LANGFUSE = "langfuse"


MODEL_OPERATIONS = frozenset({"chat", "generate_content", "text_completion"})
TOOL_OPERATION = "execute_tool"
CASE_ATTRIBUTE = "toolgate.case_id"
SAMPLE_ATTRIBUTE = "toolgate.sample"
SESSION_ATTRIBUTES = ("gen_ai.conversation.id", "session.id", "langfuse.session.id")
"""The span (or resource) attributes naming a trace's session, the first found: the GenAI
conventions' conversation id, the general ``session.id`` (what Langfuse's and
OpenInference's instrumentations write), Langfuse's older ``langfuse.session.id``."""

_STATUS_ERROR = {2, "STATUS_CODE_ERROR", "ERROR"}
_OTEL_USAGE = tuple(f"gen_ai.usage.{k}_tokens" for k in ("input", "output", "prompt", "completion"))


# ─── the neutral shape both formats parse into ───────────────────────────────


@dataclass(slots=True)
class _Exec:
    """One tool execution (an ``execute_tool`` span / a ``TOOL`` observation)."""

    start: int
    end: int
    parent: str | None
    call: ToolCall
    content: Any
    is_error: bool


@dataclass(slots=True)
class _ModelTurn:
    start: int
    end: int
    calls: tuple[ToolCall, ...]
    text: str | None


@dataclass(slots=True)
class _Trace:
    trace_id: str
    where: str
    """The first record that held one of its spans (for messages)."""
    model_turns: list[_ModelTurn] = field(default_factory=list)
    execs: list[_Exec] = field(default_factory=list)
    usage: Counter[str] = field(default_factory=Counter)
    tools: list[dict[str, Any]] | None = None
    user_input: str | None = None
    case_id: str | None = None
    sample: int | None = None
    session: str | None = None
    """The session (conversation) the trace belongs to, when it names one."""
    error: str | None = None
    start: int | None = None
    end: int | None = None

    def span(self, start: int, end: int) -> None:
        self.start = start if self.start is None else min(self.start, start)
        self.end = end if self.end is None else max(self.end, end)


def _trace_turns(trace: _Trace) -> list[Turn]:
    """Model turns and tool executions → the turns of one trace (docs/interop.md)."""
    model = sorted(trace.model_turns, key=lambda t: t.start)
    execs = sorted(trace.execs, key=lambda e: (e.start, e.end))
    turns_calls: list[list[ToolCall]] = [list(t.calls) for t in model]
    turns_results: list[list[ToolResult]] = [[] for _ in model]
    batches: list[tuple[int, list[_Exec]]] = []  # tool-only batches when no model span
    for ex in execs:
        target = None
        if ex.call.id is not None:
            for i, calls in enumerate(turns_calls):
                if any(c.id == ex.call.id for c in calls):
                    target = i
                    break
        if target is None:
            before = [i for i, t in enumerate(model) if t.start <= ex.start]
            if before:
                target = before[-1]
                if not model[target].calls:
                    turns_calls[target].append(ex.call)
        if target is not None:
            turns_results[target].append(
                ToolResult(id=ex.call.id, content=ex.content, is_error=ex.is_error)
            )
            continue
        # No model span before it: parallel batches are tool spans that overlap in time.
        if batches and ex.start < batches[-1][0]:
            batches[-1][1].append(ex)
            batches[-1] = (max(batches[-1][0], ex.end), batches[-1][1])
        else:
            batches.append((ex.end, [ex]))
    turns = [
        Turn(
            calls=tuple(e.call for e in group),
            tool_results=tuple(
                ToolResult(id=e.call.id, content=e.content, is_error=e.is_error) for e in group
            ),
        )
        for _, group in batches
    ]
    turns.extend(
        Turn(calls=tuple(turns_calls[i]), tool_results=tuple(turns_results[i]), content=m.text)
        for i, m in enumerate(model)
    )
    return turns


def _latency(trace: _Trace) -> float | None:
    if trace.start is not None and trace.end is not None and trace.end >= trace.start:
        return (trace.end - trace.start) / 1e6
    return None


def _user_turns(session: Sequence[_Trace], source: str) -> list[tuple[str, list[Turn]]]:
    """The user turns of a session: each trace's user message and its turns. A trace
    without a recorded user message is an :class:`InteropError` (its turn is unknown)."""
    out: list[tuple[str, list[Turn]]] = []
    problems: list[Problem] = []
    where = "gen_ai.input.messages" if source == "otel" else "input"
    for tr in session:
        if tr.user_input is None or not tr.user_input.strip():
            problems.append(
                Problem(
                    tr.where,
                    None,
                    where,
                    f"trace {tr.trace_id} of session {tr.session!r} records no user message "
                    f"(its model calls' {where}), so its turn of the conversation is unknown: "
                    "record message content, or pass --per-trace",
                )
            )
            continue
        out.append((tr.user_input, _trace_turns(tr)))
    if problems:
        raise InteropError(problems)
    return out


def _session_tools(session: Sequence[_Trace]) -> list[dict[str, Any]] | None:
    """The tools the model saw in any trace of the session (first definition wins)."""
    if all(tr.tools is None for tr in session):
        return None
    seen: dict[Any, dict[str, Any]] = {}
    for tr in session:
        for t in tr.tools or []:
            fn = t.get("function")
            name = fn.get("name") if isinstance(fn, Mapping) else None
            seen.setdefault(name if isinstance(name, str) else len(seen), t)
    return list(seen.values())


def _run_of(group: Sequence[_Trace], case_id: str, sample: int, source: str) -> Run:
    """One trace, or a session of several, → one run (docs/interop.md). A session's
    traces are its user turns, the first turn of each carrying the user's message (the
    runner's convention)."""
    lead = group[0]
    meta: dict[str, Any] = {"source": source}
    if len(group) == 1:
        turns = _trace_turns(lead)
        meta["trace_id"] = lead.trace_id
        tools = lead.tools
    else:
        turns = marked_turns(_user_turns(group, source))
        meta.update(session_id=lead.session, trace_ids=[tr.trace_id for tr in group])
        tools = _session_tools(group)
    if tools is not None:
        meta["tools"] = tools
    if len(group) == 1 and lead.user_input is not None:
        meta["user_input"] = lead.user_input
    usage: Counter[str] = Counter()
    for tr in group:
        usage.update(tr.usage)
    latencies = [v for tr in group if (v := _latency(tr)) is not None]
    return Run(
        case_id=case_id,
        sample=sample,
        turns=tuple(turns),
        final=turns[-1].content if turns and not turns[-1].calls else None,
        error=next((tr.error for tr in group if tr.error is not None), None),
        latency_ms=sum(latencies) if latencies else None,
        usage=dict(usage) or None,
        meta=meta,
    )


def _sessions(traces: Iterable[_Trace], per_trace: bool) -> list[list[_Trace]]:
    """The traces grouped by session (each in start-time order), in the order the file
    first holds them; a trace without a session (or with ``per_trace``) is its own."""
    groups: list[list[_Trace]] = []
    by_session: dict[str, list[_Trace]] = {}
    for tr in traces:
        if per_trace or tr.session is None:
            groups.append([tr])
            continue
        group = by_session.get(tr.session)
        if group is None:
            group = by_session[tr.session] = []
            groups.append(group)
        group.append(tr)
    for group in groups:
        group.sort(key=lambda tr: tr.start if tr.start is not None else 0)
    return groups


def _session_ids(session: Sequence[_Trace]) -> tuple[str, int | None]:
    """(case id, explicit sample) of a trace or a session: the traces' own (they must
    agree), else the trace id (one trace) or the session id."""
    lead = session[0]
    if len(session) == 1:
        return lead.case_id or lead.trace_id, lead.sample
    for attr in ("case_id", "sample"):
        values = {getattr(tr, attr) for tr in session} - {None}
        if len(values) > 1:
            shown = ", ".join(sorted(map(repr, values)))
            raise InteropError(
                Problem(
                    lead.where,
                    None,
                    CASE_ATTRIBUTE if attr == "case_id" else SAMPLE_ATTRIBUTE,
                    f"the traces of session {lead.session!r} name different "
                    f"{'cases' if attr == 'case_id' else 'samples'} ({shown}): a session is "
                    "one conversation (or pass --per-trace)",
                )
            )
    case_id = next((tr.case_id for tr in session if tr.case_id is not None), None)
    sample = next((tr.sample for tr in session if tr.sample is not None), None)
    return case_id or str(lead.session), sample


def _number_runs(groups: Iterable[Sequence[_Trace]], source: str, *, cases: bool) -> Imported:
    """Case ids and samples for every trace or session, and their runs (and cases);
    every problem is raised at once."""
    counts: Counter[str] = Counter()
    runs: list[Run] = []
    rows: list[dict[str, Any]] = []
    taken: set[tuple[str, int]] = set()
    problems: list[Problem] = []
    for group in groups:
        try:
            case_id, explicit = _session_ids(group)
            sample = explicit if explicit is not None else counts[case_id]
            while explicit is None and (case_id, sample) in taken:
                sample += 1
            first = case_id not in counts
            counts[case_id] = sample + 1
            if (case_id, sample) in taken:
                raise InteropError(
                    Problem(
                        group[0].where,
                        None,
                        SAMPLE_ATTRIBUTE,
                        f"case {case_id!r} sample {sample} appears twice",
                    )
                )
            taken.add((case_id, sample))
            runs.append(_run_of(group, case_id, sample, source))
            if cases and first:
                rows.append(_case_of(group, case_id, source))
        except InteropError as exc:
            problems += exc.problems
    if problems:
        raise InteropError(problems[:50])
    return Imported(runs, rows, source)


def _case_tools(
    tools: list[dict[str, Any]] | None, turns: Iterable[Turn]
) -> tuple[list[dict[str, Any]], list[str]]:
    """The tools a case offers: those the traces recorded, and a stand-in for each tool
    called that none defines (definitions are opt-in in most instrumentations)."""
    out = list(tools or [])
    named = {fn.get("name") for t in out if isinstance(fn := t.get("function"), Mapping)}
    notes: list[str] = []
    for t in turns:
        for c in t.calls:
            if c.name not in named:
                named.add(c.name)
                out.append(
                    {
                        "type": "function",
                        "function": {
                            "name": c.name,
                            "parameters": {"type": "object", "properties": {}},
                        },
                    }
                )
                notes.append(
                    f"no definition of {c.name} was recorded: a stand-in that takes any "
                    "arguments is offered; put the real one in its place"
                )
    return out, notes


def _case_of(group: Sequence[_Trace], case_id: str, source: str) -> dict[str, Any]:
    """The dataset case of one trace (a one-turn case) or of a session (a conversation
    case): the calls become expectations, the tool results frozen responses."""
    tags = ["imported", source]
    if len(group) > 1:
        groups = _user_turns(group, source)
        tools, tool_notes = _case_tools(
            _session_tools(group), (t for _, turns in groups for t in turns)
        )
        rows, responses, notes = conversation_turns(groups)
        return conversation_case(
            case_id,
            rows,
            responses,
            history=[],
            tools=tools,
            tags=tags,
            source_trace_id=group[0].session,
            notes=[*notes, *tool_notes],
        )
    tr = group[0]
    if tr.user_input is None or not tr.user_input.strip():
        where = "gen_ai.input.messages" if source == "otel" else "input"
        raise InteropError(
            Problem(
                tr.where,
                None,
                where,
                f"trace {tr.trace_id} records no user message (its model calls' {where}): "
                "a case needs the user's turn; record message content",
            )
        )
    turns = _trace_turns(tr)
    tools, tool_notes = _case_tools(tr.tools, turns)
    return one_turn_case(
        case_id,
        tr.user_input,
        turns,
        history=[],
        tools=tools,
        tags=tags,
        source_trace_id=tr.trace_id,
        notes=tool_notes,
    )


# ─── OTLP JSON ───────────────────────────────────────────────────────────────


def any_value(v: Any, field: str) -> Any:
    """An OTLP ``AnyValue`` → a plain JSON value."""
    if not isinstance(v, Mapping):
        raise FieldError(field, 'an attribute value must be an object like {"stringValue": …}')
    if "stringValue" in v:
        return v["stringValue"]
    if "boolValue" in v:
        return v["boolValue"]
    if "intValue" in v:
        raw = v["intValue"]
        try:
            return int(raw)  # proto3 JSON writes int64 as a string
        except (TypeError, ValueError):
            raise FieldError(field, f"intValue {raw!r} is not an integer") from None
    if "doubleValue" in v:
        return v["doubleValue"]
    if "arrayValue" in v:
        values = v["arrayValue"].get("values", []) if isinstance(v["arrayValue"], Mapping) else []
        return [any_value(x, f"{field}.arrayValue.values[{i}]") for i, x in enumerate(values)]
    if "kvlistValue" in v:
        kv = v["kvlistValue"].get("values", []) if isinstance(v["kvlistValue"], Mapping) else []
        return attributes(kv, f"{field}.kvlistValue.values")
    if "bytesValue" in v:
        return v["bytesValue"]
    if not v:
        return None
    raise FieldError(field, f"unknown attribute value kind {sorted(v)[0]!r}")


def attributes(raw: Any, field: str) -> dict[str, Any]:
    """An OTLP ``KeyValue`` list → a dict."""
    if raw is None:
        return {}
    if not isinstance(raw, list):
        raise FieldError(field, "must be an array of {key, value}")
    out: dict[str, Any] = {}
    for i, kv in enumerate(raw):
        if not isinstance(kv, Mapping) or not isinstance(kv.get("key"), str):
            raise FieldError(f"{field}[{i}]", "must be {key: string, value: AnyValue}")
        out[kv["key"]] = any_value(kv.get("value", {}), f"{field}[{i}].value")
    return out


def _nanos(v: Any, field: str) -> int:
    try:
        return int(v)
    except (TypeError, ValueError):
        raise FieldError(field, f"must be an integer of nanoseconds, not {v!r}") from None


def _json_attr(value: Any, field: str) -> Any:
    """Attributes that hold JSON (messages, tool definitions) arrive as a string."""
    if isinstance(value, str):
        try:
            return jsonio.loads_strict(value)
        except jsonio.JsonInputError as exc:
            raise FieldError(field, f"is not valid JSON: {exc}") from None
    return value


def _call(name: Any, arguments: Any, call_id: Any, field: str) -> ToolCall:
    if not isinstance(name, str) or not name:
        raise FieldError(f"{field}.name", "a tool call needs a name")
    if arguments is None:
        arguments = {}
    args, raw, ok = decode_arguments(arguments)
    return ToolCall(
        name=name,
        arguments=args,
        id=str(call_id) if call_id is not None else None,
        raw_arguments=raw,
        parse_ok=ok,
    )


def _calls_from_output_messages(msgs: Any, field: str) -> tuple[list[ToolCall], str | None]:
    """GenAI semconv ``gen_ai.output.messages``: [{role, parts: [{type, …}]}]."""
    if not isinstance(msgs, list):
        raise FieldError(field, "must be an array of messages")
    calls: list[ToolCall] = []
    texts: list[str] = []
    for i, m in enumerate(msgs):
        if not isinstance(m, Mapping):
            raise FieldError(f"{field}[{i}]", "must be an object")
        for j, p in enumerate(m.get("parts") or []):
            if not isinstance(p, Mapping):
                raise FieldError(f"{field}[{i}].parts[{j}]", "must be an object")
            if p.get("type") == "tool_call":
                pf = f"{field}[{i}].parts[{j}]"
                calls.append(_call(p.get("name"), p.get("arguments"), p.get("id"), pf))
            elif p.get("type") == "text" and isinstance(p.get("content"), str):
                texts.append(p["content"])
    return calls, ("\n".join(texts) if texts else None)


def _user_input(msgs: Any) -> str | None:
    if not isinstance(msgs, list):
        return None
    for m in reversed(msgs):
        if isinstance(m, Mapping) and m.get("role") == "user":
            texts = [
                p["content"]
                for p in m.get("parts") or []
                if isinstance(p, Mapping)
                and p.get("type") == "text"
                and isinstance(p.get("content"), str)
            ]
            if isinstance(m.get("content"), str):
                texts.append(m["content"])
            if texts:
                return "\n".join(texts)
    return None


_INDEXED = re.compile(r"^(gen_ai\.completion|llm\.request\.functions|gen_ai\.prompt)\.(\d+)\.(.+)$")


def _indexed(attrs: Mapping[str, Any], prefix: str) -> dict[int, dict[str, Any]]:
    """OpenLLMetry's flattened ``prefix.<i>.key`` attributes → {i: {key: value}}."""
    out: dict[int, dict[str, Any]] = defaultdict(dict)
    for k, v in attrs.items():
        m = _INDEXED.match(k)
        if m and m.group(1) == prefix:
            out[int(m.group(2))][m.group(3)] = v
    return dict(sorted(out.items()))


def _openllmetry_calls(attrs: Mapping[str, Any], field: str) -> tuple[list[ToolCall], str | None]:
    calls: list[ToolCall] = []
    text = None
    for i, comp in _indexed(attrs, "gen_ai.completion").items():
        if isinstance(comp.get("content"), str):
            text = comp["content"]
        j = 0
        while f"tool_calls.{j}.name" in comp:
            calls.append(
                _call(
                    comp[f"tool_calls.{j}.name"],
                    comp.get(f"tool_calls.{j}.arguments"),
                    comp.get(f"tool_calls.{j}.id"),
                    f"{field}.gen_ai.completion.{i}.tool_calls.{j}",
                )
            )
            j += 1
    return calls, text


def _tool_definitions(attrs: Mapping[str, Any], field: str) -> list[dict[str, Any]] | None:
    if "gen_ai.tool.definitions" in attrs:
        raw = _json_attr(attrs["gen_ai.tool.definitions"], f"{field}.gen_ai.tool.definitions")
        if not isinstance(raw, list):
            raise FieldError(
                f"{field}.gen_ai.tool.definitions", "must be a JSON array of tool definitions"
            )
        return [_openai_tool(t) for t in raw if isinstance(t, Mapping)]
    functions = _indexed(attrs, "llm.request.functions")
    if functions:
        out = []
        for fn in functions.values():
            params = fn.get("parameters")
            if isinstance(params, str):
                try:
                    params = jsonio.loads_strict(params)
                except jsonio.JsonInputError:
                    params = None
            spec: dict[str, Any] = {
                "name": fn.get("name"),
                "parameters": params
                if isinstance(params, Mapping)
                else {"type": "object", "properties": {}},
            }
            if isinstance(fn.get("description"), str):
                spec["description"] = fn["description"]
            out.append({"type": "function", "function": spec})
        return out
    return None


def _openai_tool(t: Mapping[str, Any]) -> dict[str, Any]:
    """A tool definition in any of the common shapes → the OpenAI chat shape."""
    if isinstance(t.get("function"), Mapping):
        return {"type": "function", "function": dict(t["function"])}
    spec = {k: t[k] for k in ("name", "description") if k in t}
    params = t.get("parameters", t.get("input_schema", t.get("inputSchema")))
    spec["parameters"] = (
        dict(params) if isinstance(params, Mapping) else {"type": "object", "properties": {}}
    )
    return {"type": "function", "function": spec}


def _usage(raw: Mapping[str, Any], keys: Sequence[str]) -> Counter[str]:
    """The token counts under ``keys`` (input, output, prompt, completion), summed under
    the OpenAI chat names."""
    out: Counter[str] = Counter()
    for key, name in zip(keys, ("prompt_tokens", "completion_tokens") * 2, strict=True):
        v = raw.get(key)
        if isinstance(v, int) and not isinstance(v, bool):
            out[name] += v
    return out


def _iter_spans(rec: Record, loc: Locator) -> Iterable[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(field, span, resource attributes) for every span of one OTLP export record."""
    obj = rec.value
    if not isinstance(obj, Mapping) or not isinstance(obj.get("resourceSpans"), list):
        loc.add(
            rec, rec.pointer or None, 'not an OTLP JSON export: expected {"resourceSpans": [...]}'
        )
        return
    for i, rs in enumerate(obj["resourceSpans"]):
        rf = rec.field("resourceSpans", i)
        if not isinstance(rs, Mapping):
            loc.add(rec, rf, "must be an object")
            continue
        try:
            resource = attributes(
                (rs.get("resource") or {}).get("attributes"), f"{rf}.resource.attributes"
            )
        except FieldError as bad:
            loc.add(rec, bad.field, bad.message)
            continue
        scopes = rs.get("scopeSpans", rs.get("instrumentationLibrarySpans", []))
        if not isinstance(scopes, list):
            loc.add(rec, f"{rf}.scopeSpans", "must be an array")
            continue
        for j, ss in enumerate(scopes):
            sf = f"{rf}.scopeSpans[{j}]"
            spans = ss.get("spans", []) if isinstance(ss, Mapping) else None
            if not isinstance(spans, list):
                loc.add(rec, f"{sf}.spans", "must be an array")
                continue
            for k, span in enumerate(spans):
                if not isinstance(span, Mapping):
                    loc.add(rec, f"{sf}.spans[{k}]", "must be an object")
                    continue
                yield f"{sf}.spans[{k}]", dict(span), resource


def _otlp_traces(
    records: list[Record],
    loc: Locator,
    display: str,
    case_attribute: str | None,
    session_attributes: Sequence[str] = SESSION_ATTRIBUTES,
) -> list[_Trace]:
    traces: dict[str, _Trace] = {}
    for rec in records:
        for sfield, span, resource in _iter_spans(rec, loc):
            try:
                _add_span(
                    traces, rec, display, sfield, span, resource, case_attribute, session_attributes
                )
            except FieldError as bad:
                loc.add(rec, bad.field, bad.message)
    return list(traces.values())


def _add_span(
    traces: dict[str, _Trace],
    rec: Record,
    display: str,
    sfield: str,
    span: Mapping[str, Any],
    resource: Mapping[str, Any],
    case_attribute: str | None,
    session_attributes: Sequence[str] = SESSION_ATTRIBUTES,
) -> None:
    trace_id = span.get("traceId")
    if not isinstance(trace_id, str) or not trace_id:
        raise FieldError(f"{sfield}.traceId", "must be a non-empty string")
    start = _nanos(span.get("startTimeUnixNano"), f"{sfield}.startTimeUnixNano")
    end = _nanos(span.get("endTimeUnixNano", start), f"{sfield}.endTimeUnixNano")
    afield = f"{sfield}.attributes"
    attrs = attributes(span.get("attributes"), afield)
    tr = traces.setdefault(trace_id, _Trace(trace_id, f"{display}:{rec.line}"))
    tr.span(start, end)
    for source in (attrs, resource):
        for key, target in (
            (CASE_ATTRIBUTE, "case_id"),
            (case_attribute, "case_id"),
            (SAMPLE_ATTRIBUTE, "sample"),
        ):
            if key and key in source and getattr(tr, target) is None:
                value = source[key]
                if target == "sample":
                    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                        raise FieldError(f"{afield}.{key}", "must be an integer >= 0")
                    tr.sample = value
                else:
                    tr.case_id = str(value)
    if tr.session is None:
        for source in (attrs, resource):
            key = next((k for k in session_attributes if source.get(k) not in (None, "")), None)
            if key is not None:
                tr.session = str(source[key])
                break
    status = span.get("status") or {}
    is_error = isinstance(status, Mapping) and status.get("code") in _STATUS_ERROR
    if not span.get("parentSpanId") and is_error:
        message = status.get("message") if isinstance(status.get("message"), str) else None
        tr.error = message or f"the trace's root span {span.get('name')!r} ended with an error"
    operation = attrs.get("gen_ai.operation.name")
    if operation in MODEL_OPERATIONS:
        if "gen_ai.output.messages" in attrs:
            ofield = f"{afield}.gen_ai.output.messages"
            out = _json_attr(attrs["gen_ai.output.messages"], ofield)
            calls, text = _calls_from_output_messages(out, ofield)
        else:
            calls, text = _openllmetry_calls(attrs, afield)
        tr.model_turns.append(_ModelTurn(start, end, tuple(calls), text))
        tr.usage.update(_usage(attrs, _OTEL_USAGE))
        if tr.tools is None:
            tr.tools = _tool_definitions(attrs, afield)
        if tr.user_input is None and "gen_ai.input.messages" in attrs:
            ifield = f"{afield}.gen_ai.input.messages"
            tr.user_input = _user_input(_json_attr(attrs["gen_ai.input.messages"], ifield))
    elif operation == TOOL_OPERATION:
        name = attrs.get("gen_ai.tool.name")
        if not isinstance(name, str) or not name:
            raise FieldError(
                f"{afield}.gen_ai.tool.name", "an execute_tool span must name its tool"
            )
        call = _call(
            name,
            attrs.get("gen_ai.tool.call.arguments"),
            attrs.get("gen_ai.tool.call.id"),
            f"{afield}.gen_ai.tool",
        )
        result = attrs.get("gen_ai.tool.call.result")
        if is_error and result is None:
            result = status.get("message") if isinstance(status, Mapping) else None
        failed = bool(is_error or "error.type" in attrs)
        tr.execs.append(_Exec(start, end, span.get("parentSpanId") or None, call, result, failed))


# ─── Langfuse ────────────────────────────────────────────────────────────────

_LANGFUSE_TYPES = frozenset(
    {
        "GENERATION",
        "SPAN",
        "EVENT",
        "TOOL",
        "AGENT",
        "CHAIN",
        "RETRIEVER",
        "EVALUATOR",
        "EMBEDDING",
        "GUARDRAIL",
    }
)


def _iso_nanos(v: Any, field: str) -> int:
    if not isinstance(v, str):
        raise FieldError(field, "must be an ISO 8601 time")
    try:
        dt = datetime.fromisoformat(v.replace("Z", "+00:00"))
    except ValueError:
        raise FieldError(field, f"{v!r} is not an ISO 8601 time") from None
    return int(dt.timestamp() * 1e9)


def _langfuse_observations(
    records: list[Record], loc: Locator
) -> list[tuple[Record, str, Any, str | None]]:
    """(record, field, observation, the session of its trace object) of every observation."""
    out: list[tuple[Record, str, Any, str | None]] = []
    for rec in records:
        v = rec.value
        if isinstance(v, Mapping) and isinstance(v.get("observations"), list):
            # A trace object with its observations inside (and its sessionId).
            session = v.get("sessionId")
            if session is not None and not isinstance(session, str):
                loc.add(rec, rec.field("sessionId"), "must be a string or null")
                continue
            for i, o in enumerate(v["observations"]):
                out.append((rec, rec.field("observations", i), o, session or None))
        else:
            out.append((rec, rec.pointer, v, None))
    return out


def _langfuse_calls(output: Any, field: str) -> tuple[list[ToolCall], str | None]:
    msg = output
    if isinstance(msg, list):  # a list of messages: the last assistant one
        msg = next(
            (
                m
                for m in reversed(msg)
                if isinstance(m, Mapping) and m.get("role") in ("assistant", "ai")
            ),
            None,
        )
    if isinstance(msg, str) or msg is None:
        return [], msg if isinstance(msg, str) else None
    if not isinstance(msg, Mapping):
        return [], None
    raw_calls = msg.get("tool_calls")
    if raw_calls is None and isinstance(msg.get("additional_kwargs"), Mapping):
        raw_calls = msg["additional_kwargs"].get("tool_calls")
    calls: list[ToolCall] = []
    for i, tc in enumerate(raw_calls or []):
        f = f"{field}.tool_calls[{i}]"
        if not isinstance(tc, Mapping):
            raise FieldError(f, "must be an object")
        if isinstance(tc.get("function"), Mapping):  # OpenAI shape
            fn = tc["function"]
            calls.append(
                _call(fn.get("name"), fn.get("arguments", "{}"), tc.get("id"), f"{f}.function")
            )
        else:  # LangChain shape {name, args, id}
            calls.append(
                _call(tc.get("name"), tc.get("args", tc.get("arguments")), tc.get("id"), f)
            )
    content = msg.get("content")
    text = content if isinstance(content, str) and content else None
    return calls, text


def _langfuse_traces(records: list[Record], loc: Locator, display: str) -> list[_Trace]:
    traces: dict[str, _Trace] = {}
    for rec, ofield, obs, trace_session in _langfuse_observations(records, loc):

        def at(key: str, ofield: str = ofield) -> str:
            return f"{ofield}.{key}" if ofield else key

        try:
            if not isinstance(obs, Mapping):
                raise FieldError(ofield, "an observation must be an object")
            kind = obs.get("type")
            if kind not in _LANGFUSE_TYPES:
                raise FieldError(
                    at("type"),
                    f"unknown observation type {kind!r} (GENERATION, SPAN, EVENT, TOOL, …)",
                )
            trace_id = obs.get("traceId")
            if not isinstance(trace_id, str) or not trace_id:
                raise FieldError(at("traceId"), "must be a non-empty string")
            start = _iso_nanos(obs.get("startTime"), at("startTime"))
            end = _iso_nanos(obs["endTime"], at("endTime")) if obs.get("endTime") else start
            tr = traces.setdefault(trace_id, _Trace(trace_id, f"{display}:{rec.line}"))
            tr.span(start, end)
            session = obs.get("sessionId", trace_session)
            if session is not None and not isinstance(session, str):
                raise FieldError(at("sessionId"), "must be a string or null")
            if tr.session is None and session:
                tr.session = session
            raw_meta = obs.get("metadata")
            meta: Mapping[str, Any] = raw_meta if isinstance(raw_meta, Mapping) else {}
            if tr.case_id is None and isinstance(meta.get("toolgate_case_id"), str):
                tr.case_id = meta["toolgate_case_id"]
            if (
                not obs.get("parentObservationId")
                and obs.get("level") == "ERROR"
                and tr.error is None
            ):
                msg = obs.get("statusMessage")
                tr.error = (
                    msg
                    if isinstance(msg, str) and msg
                    else f"observation {obs.get('name')!r} ended with an error"
                )
            if kind == "GENERATION":
                calls, text = _langfuse_calls(obs.get("output"), at("output"))
                tr.model_turns.append(_ModelTurn(start, end, tuple(calls), text))
                usage = obs.get("usageDetails") or obs.get("usage") or {}
                if isinstance(usage, Mapping):
                    keys = ("input", "output", "promptTokens", "completionTokens")
                    tr.usage.update(_usage(usage, keys))
                inp = obs.get("input")
                if tr.tools is None:
                    raw_tools = inp.get("tools") if isinstance(inp, Mapping) else meta.get("tools")
                    if isinstance(raw_tools, list):
                        tr.tools = [_openai_tool(t) for t in raw_tools if isinstance(t, Mapping)]
                if tr.user_input is None:
                    msgs = inp.get("messages") if isinstance(inp, Mapping) else inp
                    tr.user_input = _user_input(msgs)
            elif kind == "TOOL":
                tool_name = obs.get("name")
                args = obs.get("input")
                call_id: Any = meta.get("tool_call_id") or meta.get("toolCallId")
                if isinstance(args, Mapping) and isinstance(args.get("tool_call_id"), str):
                    call_id = call_id or args["tool_call_id"]
                call = _call(
                    tool_name,
                    args if isinstance(args, Mapping | str) else {},
                    call_id,
                    ofield or "name",
                )
                parent = obs.get("parentObservationId")
                failed = obs.get("level") == "ERROR"
                tr.execs.append(_Exec(start, end, parent, call, obs.get("output"), failed))
        except FieldError as bad:
            loc.add(rec, bad.field, bad.message)
    return list(traces.values())


# ─── the file ────────────────────────────────────────────────────────────────


def detect(records: list[Record]) -> TraceFormat:
    for rec in records:
        v = rec.value
        if isinstance(v, Mapping) and "resourceSpans" in v:
            return TraceFormat.OTLP
        if isinstance(v, Mapping) and ("observations" in v or ("traceId" in v and "type" in v)):
            return TraceFormat.LANGFUSE
    return TraceFormat.OTLP


def import_trace_file(
    path: Path,
    *,
    fmt: TraceFormat = TraceFormat.AUTO,
    display: str | None = None,
    case_attribute: str | None = None,
    session_attributes: Sequence[str] = SESSION_ATTRIBUTES,
    per_trace: bool = False,
    cases: bool = False,
) -> Imported:
    """Every trace of ``path`` → one run, the traces of a session one run together
    (docs/interop.md), and, with ``cases``, one dataset case per case id: a trace's a
    one-turn case, a session's a conversation case. Problems are raised at once."""
    name = display or str(path)
    records = read_records(path, display=name, unwrap=("data",))
    if fmt is TraceFormat.AUTO:
        fmt = detect(records)
    loc = Locator(name)
    if fmt is TraceFormat.OTLP:
        traces = _otlp_traces(records, loc, name, case_attribute, session_attributes)
        source = "otel"
    else:
        traces = _langfuse_traces(records, loc, name)
        source = "langfuse"
    loc.raise_if_any()
    if not traces:
        raise loc.fail(None, None, "no traces in this file")
    usable = [t for t in traces if t.model_turns or t.execs]
    if not usable:
        raise loc.fail(
            None,
            None,
            f"no GenAI spans: none has gen_ai.operation.name = chat or {TOOL_OPERATION}"
            if fmt is TraceFormat.OTLP
            else "no GENERATION or TOOL observations",
        )
    return _number_runs(_sessions(usable, per_trace), source, cases=cases)
