"""OpenAI Responses API → :class:`AssistantTurn`.

A ``response`` object's ``output`` is a list of items; each ``{"type": "function_call",
"call_id", "name", "arguments"}`` item is one call (``arguments`` a JSON string; its
``call_id`` is the id the tool output must echo, so it is the call's id). Text is the
concatenation of the ``output_text`` parts of ``message`` items. Other items (reasoning,
built-in tool calls such as ``web_search_call``) are not function calls and are skipped.

Streaming: :class:`StreamAccumulator` takes the typed events. The final
``response.completed`` event carries the whole response and wins; without it, items are
assembled from ``response.output_item.added``/``.done`` and the
``response.function_call_arguments.delta`` fragments (joined before parsing).
"""

from __future__ import annotations

from typing import Any

from gate.adapters.interface import (
    AssistantTurn,
    PayloadError,
    expect_index,
    expect_list,
    expect_mapping,
    int_counts,
    make_call,
)
from gate.model import ToolCall

_USAGE = {"input_tokens": "prompt_tokens", "output_tokens": "completion_tokens"}


def call_from_item(item: Any, path: str = "output[0]") -> ToolCall:
    """One ``function_call`` output item → :class:`ToolCall` (id = ``call_id``)."""
    it = expect_mapping(item, path)
    call_id = it.get("call_id", it.get("id"))
    return make_call(it.get("name"), it.get("arguments", "{}"), call_id, path)


def parse_response(body: Any) -> AssistantTurn:
    """A ``response`` object → :class:`AssistantTurn`."""
    obj = expect_mapping(body, "response")
    if obj.get("error") and not obj.get("output"):
        raise PayloadError("error", f"the endpoint returned an error: {obj['error']!r:.300}")
    calls: list[ToolCall] = []
    texts: list[str] = []
    for i, item in enumerate(expect_list(obj.get("output"), "output")):
        it = expect_mapping(item, f"output[{i}]")
        kind = it.get("type")
        if kind == "function_call":
            calls.append(call_from_item(it, f"output[{i}]"))
        elif kind == "message":
            for j, part in enumerate(expect_list(it.get("content", []), f"output[{i}].content")):
                p = expect_mapping(part, f"output[{i}].content[{j}]")
                if p.get("type") == "output_text" and isinstance(p.get("text"), str):
                    texts.append(p["text"])
    status = obj.get("status")
    return AssistantTurn(
        calls=tuple(calls),
        content="".join(texts) or None,
        usage=int_counts(obj.get("usage"), _USAGE),
        finish_reason=status if isinstance(status, str) else None,
    )


class StreamAccumulator:
    """Joins Responses streaming events, then parses once."""

    def __init__(self) -> None:
        self._items: dict[int, dict[str, Any]] = {}
        self._args: dict[int, list[str]] = {}
        self._text: list[str] = []
        self._final: Any = None
        self._events = 0

    def add(self, event: Any) -> None:
        path = f"event[{self._events}]"
        self._events += 1
        ev = expect_mapping(event, path)
        kind = ev.get("type")
        at = f"{path}.output_index"
        if kind in ("response.completed", "response.incomplete"):
            self._final = ev.get("response")
        elif kind in ("error", "response.failed"):
            raise PayloadError(path, f"the endpoint reported an error: {dict(ev)!r:.300}")
        elif kind in ("response.output_item.added", "response.output_item.done"):
            item = expect_mapping(ev.get("item"), f"{path}.item")
            self._items[expect_index(ev.get("output_index", len(self._items)), at)] = dict(item)
        elif kind == "response.function_call_arguments.delta":
            delta = ev.get("delta")
            if isinstance(delta, str):
                self._args.setdefault(expect_index(ev.get("output_index", 0), at), []).append(delta)
        elif kind == "response.function_call_arguments.done":
            index = expect_index(ev.get("output_index", 0), at)
            if isinstance(ev.get("arguments"), str):
                self._args[index] = [ev["arguments"]]
        elif kind == "response.output_text.delta" and isinstance(ev.get("delta"), str):
            self._text.append(ev["delta"])

    def finish(self) -> AssistantTurn:
        if self._final is not None:
            return parse_response(self._final)
        if self._events == 0:
            raise PayloadError("stream", "no events before the end of the stream")
        calls: list[ToolCall] = []
        for index, item in sorted(self._items.items()):
            if item.get("type") != "function_call":
                continue
            merged = dict(item)
            if index in self._args and not (
                isinstance(item.get("arguments"), str) and item["arguments"]
            ):
                merged["arguments"] = "".join(self._args[index])
            calls.append(call_from_item(merged, f"output[{index}]"))
        return AssistantTurn(calls=tuple(calls), content="".join(self._text) or None)
