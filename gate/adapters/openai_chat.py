"""OpenAI chat completions (and every compatible endpoint) → :class:`AssistantTurn`.

Non-streaming: ``choices[0].message`` holds ``content`` and ``tool_calls`` — a list of
``{"id", "type": "function", "function": {"name", "arguments"}}`` where ``arguments`` is a
JSON *string* the model wrote, possibly invalid (→ ``parse_ok=False``, the raw string
kept). The legacy ``function_call: {name, arguments}`` field is read too.

Streaming (``stream: true``): each chunk's ``choices[0].delta`` carries fragments;
:class:`StreamAccumulator` joins them before anything is parsed. Tool-call fragments are
keyed by their ``index``: ``id`` and ``type`` are taken when first present, and ``name``
and ``arguments`` fragments are concatenated in arrival order (as the official SDK does).
Usage arrives in a last chunk with empty ``choices`` when ``stream_options.include_usage``
is set.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gate.adapters.interface import (
    AssistantTurn,
    PayloadError,
    expect_list,
    expect_mapping,
    int_counts,
    make_call,
    optional_text,
    refuse_error,
)
from gate.model import ToolCall


def call_from_tool_call(tool_call: Any, path: str = "tool_calls[0]") -> ToolCall:
    """One ``message.tool_calls`` entry → :class:`ToolCall`."""
    tc = expect_mapping(tool_call, path)
    fn = expect_mapping(tc.get("function"), f"{path}.function")
    return make_call(fn.get("name"), fn.get("arguments", "{}"), tc.get("id"), f"{path}.function")


def calls_from_message(message: Any, path: str = "message") -> tuple[ToolCall, ...]:
    """Every call of one assistant message (``tool_calls``, else legacy ``function_call``)."""
    msg = expect_mapping(message, path)
    raw_calls = msg.get("tool_calls")
    if raw_calls:
        return tuple(
            call_from_tool_call(tc, f"{path}.tool_calls[{i}]")
            for i, tc in enumerate(expect_list(raw_calls, f"{path}.tool_calls"))
        )
    legacy = msg.get("function_call")
    if legacy:
        fn = expect_mapping(legacy, f"{path}.function_call")
        return (
            make_call(fn.get("name"), fn.get("arguments", "{}"), None, f"{path}.function_call"),
        )
    return ()


def parse_completion(body: Any) -> AssistantTurn:
    """A ``chat.completion`` object → :class:`AssistantTurn` (first choice)."""
    obj = expect_mapping(body, "response")
    refuse_error(obj, "choices")
    choices = expect_list(obj.get("choices"), "choices")
    if not choices:
        raise PayloadError("choices", "is empty")
    choice = expect_mapping(choices[0], "choices[0]")
    message = expect_mapping(choice.get("message"), "choices[0].message")
    content = message.get("content")
    if isinstance(content, list):  # some compatible servers return content parts
        content = "".join(
            p.get("text", "") for p in content if isinstance(p, Mapping) and p.get("type") == "text"
        )
    return AssistantTurn(
        calls=calls_from_message(message, "choices[0].message"),
        content=optional_text(content, "choices[0].message.content"),
        usage=int_counts(obj.get("usage")),
        finish_reason=choice.get("finish_reason")
        if isinstance(choice.get("finish_reason"), str)
        else None,
        message=dict(message),
    )


class StreamAccumulator:
    """Joins ``chat.completion.chunk`` deltas into one message, then parses it once."""

    def __init__(self) -> None:
        self._content: list[str] = []
        self._calls: dict[int, dict[str, Any]] = {}
        self._usage: dict[str, int | float] | None = None
        self._finish: str | None = None
        self._chunks = 0

    def add(self, chunk: Any) -> None:
        path = f"chunk[{self._chunks}]"
        self._chunks += 1
        obj = expect_mapping(chunk, path)
        refuse_error(obj, "choices", f"{path}.error")
        usage = int_counts(obj.get("usage"))
        if usage:
            self._usage = usage
        for ci, choice in enumerate(expect_list(obj.get("choices", []), f"{path}.choices")):
            ch = expect_mapping(choice, f"{path}.choices[{ci}]")
            if ch.get("index", 0) != 0:
                continue  # only the first choice is the agent's answer
            if isinstance(ch.get("finish_reason"), str):
                self._finish = ch["finish_reason"]
            delta = ch.get("delta")
            if delta is None:
                continue
            d = expect_mapping(delta, f"{path}.choices[{ci}].delta")
            text = optional_text(d.get("content"), f"{path}.choices[{ci}].delta.content")
            if text:
                self._content.append(text)
            for ti, frag in enumerate(
                expect_list(d.get("tool_calls") or [], f"{path}.choices[{ci}].delta.tool_calls")
            ):
                self._add_call_fragment(frag, f"{path}.choices[{ci}].delta.tool_calls[{ti}]")

    def _add_call_fragment(self, fragment: Any, path: str) -> None:
        frag = expect_mapping(fragment, path)
        index = frag.get("index", len(self._calls))
        if not isinstance(index, int):
            raise PayloadError(f"{path}.index", "must be an integer")
        acc = self._calls.setdefault(
            index, {"id": None, "type": "function", "name": "", "arguments": ""}
        )
        if isinstance(frag.get("id"), str) and frag["id"] and acc["id"] is None:
            acc["id"] = frag["id"]
        if isinstance(frag.get("type"), str):
            acc["type"] = frag["type"]
        fn = frag.get("function")
        if fn is not None:
            f = expect_mapping(fn, f"{path}.function")
            if isinstance(f.get("name"), str):
                acc["name"] += f["name"]
            if isinstance(f.get("arguments"), str):
                acc["arguments"] += f["arguments"]

    def message(self) -> dict[str, Any]:
        """The joined assistant message, shaped like a non-streaming one."""
        msg: dict[str, Any] = {"role": "assistant", "content": "".join(self._content) or None}
        if self._calls:
            msg["tool_calls"] = [
                {
                    "id": acc["id"],
                    "type": acc["type"],
                    "function": {"name": acc["name"], "arguments": acc["arguments"]},
                }
                for _, acc in sorted(self._calls.items())
            ]
        return msg

    def finish(self) -> AssistantTurn:
        if self._chunks == 0:
            raise PayloadError("stream", "no chunks before the end of the stream")
        message = self.message()
        return AssistantTurn(
            calls=calls_from_message(message, "stream.message"),
            content=message["content"],
            usage=self._usage,
            finish_reason=self._finish,
            message=message,
        )
