"""Anthropic Messages API → :class:`AssistantTurn`.

A message's ``content`` is a list of blocks; each ``{"type": "tool_use", "id", "name",
"input"}`` block is one call, and ``input`` is already a JSON object (anything else →
``parse_ok=False``). Text is the concatenation of ``text`` blocks. Usage
``input_tokens``/``output_tokens`` is renamed to ``prompt_tokens``/``completion_tokens``.

Streaming: :class:`StreamAccumulator` takes the typed events — ``message_start`` (usage),
``content_block_start`` (a ``tool_use`` block with its id and name and an empty input),
``content_block_delta`` (``text_delta`` text or ``input_json_delta`` ``partial_json``
fragments, joined per block index before decoding; no fragments means ``{}``),
``message_delta`` (stop reason, output tokens) — and parses once at the end.
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


def call_from_block(block: Any, path: str = "content[0]") -> ToolCall:
    """One ``tool_use`` block → :class:`ToolCall`."""
    b = expect_mapping(block, path)
    return make_call(b.get("name"), b.get("input", {}), b.get("id"), path)


def parse_message(body: Any) -> AssistantTurn:
    """A ``message`` object → :class:`AssistantTurn`."""
    obj = expect_mapping(body, "message")
    if obj.get("type") == "error":
        raise PayloadError("error", f"the endpoint returned an error: {obj.get('error')!r:.300}")
    calls: list[ToolCall] = []
    texts: list[str] = []
    for i, block in enumerate(expect_list(obj.get("content"), "content")):
        b = expect_mapping(block, f"content[{i}]")
        if b.get("type") == "tool_use":
            calls.append(call_from_block(b, f"content[{i}]"))
        elif b.get("type") == "text" and isinstance(b.get("text"), str):
            texts.append(b["text"])
    usage = int_counts(obj.get("usage"), _USAGE)
    if usage and "total_tokens" not in usage:
        usage["total_tokens"] = usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
    stop = obj.get("stop_reason")
    return AssistantTurn(
        calls=tuple(calls),
        content="".join(texts) or None,
        usage=usage,
        finish_reason=stop if isinstance(stop, str) else None,
    )


class StreamAccumulator:
    """Joins Messages streaming events into one message, then parses it once."""

    def __init__(self) -> None:
        self._blocks: dict[int, dict[str, Any]] = {}
        self._json: dict[int, list[str]] = {}
        self._usage: dict[str, Any] = {}
        self._stop: str | None = None
        self._events = 0

    def add(self, event: Any) -> None:
        path = f"event[{self._events}]"
        self._events += 1
        ev = expect_mapping(event, path)
        kind = ev.get("type")
        if kind == "message_start":
            msg = expect_mapping(ev.get("message"), f"{path}.message")
            self._update_usage(msg.get("usage"))
        elif kind == "content_block_start":
            block = dict(expect_mapping(ev.get("content_block"), f"{path}.content_block"))
            self._blocks[expect_index(ev.get("index"), f"{path}.index")] = block
        elif kind == "content_block_delta":
            index = expect_index(ev.get("index"), f"{path}.index")
            delta = expect_mapping(ev.get("delta"), f"{path}.delta")
            target = self._blocks.get(index)
            if target is None:
                raise PayloadError(f"{path}.index", f"delta for block {index} before its start")
            if delta.get("type") == "text_delta" and isinstance(delta.get("text"), str):
                prev = target.get("text")  # a start block's "text" may be junk: not text
                target["text"] = (prev if isinstance(prev, str) else "") + delta["text"]
            elif delta.get("type") == "input_json_delta" and isinstance(
                delta.get("partial_json"), str
            ):
                self._json.setdefault(index, []).append(delta["partial_json"])
        elif kind == "message_delta":
            delta = ev.get("delta") or {}
            if isinstance(delta, dict) and isinstance(delta.get("stop_reason"), str):
                self._stop = delta["stop_reason"]
            self._update_usage(ev.get("usage"))
        elif kind == "error":
            raise PayloadError(path, f"the endpoint reported an error: {ev.get('error')!r:.300}")

    def _update_usage(self, usage: Any) -> None:
        # A usage that is not an object is ignored, as parse_message ignores it.
        if isinstance(usage, dict):
            self._usage.update(usage)

    def finish(self) -> AssistantTurn:
        if self._events == 0:
            raise PayloadError("stream", "no events before the end of the stream")
        content = []
        for index, block in sorted(self._blocks.items()):
            if block.get("type") == "tool_use" and index in self._json:
                joined = "".join(self._json[index])
                # The joined fragments are the model's JSON text; an empty join means {}.
                block = {**block, "input": joined if joined.strip() else {}}
            content.append(block)
        return parse_message(
            {"type": "message", "content": content, "usage": self._usage, "stop_reason": self._stop}
        )
