"""Google Gemini ``generateContent`` → :class:`AssistantTurn`.

``candidates[0].content.parts`` is a list of parts; each ``{"functionCall": {"name",
"args", "id"?}}`` part is one call, and ``args`` is already an object (a call with no
arguments may omit it → ``{}``). Text is the concatenation of ``text`` parts (thought
parts, ``"thought": true``, are left out). ``usageMetadata`` counts are renamed to the
OpenAI names; Gemini's ``totalTokenCount`` also counts the thinking and the tool-use
prompt, so ``thoughtsTokenCount`` is added to ``completion_tokens`` (billed as output, as
OpenAI counts reasoning) and ``toolUsePromptTokenCount`` to ``prompt_tokens``: the three
then add up as on every other provider. Gemini does not always give calls an id; the
runner assigns one.

Streaming (``streamGenerateContent``): every chunk is itself a ``GenerateContentResponse``
whose parts continue the message; :class:`StreamAccumulator` concatenates the parts of all
chunks (a function call arrives whole in one part) and keeps the last usage and finish
reason.
"""

from __future__ import annotations

from typing import Any

from gate.adapters.interface import (
    AssistantTurn,
    PayloadError,
    expect_list,
    expect_mapping,
    int_counts,
    make_call,
    refuse_error,
)
from gate.model import ToolCall

_USAGE = {
    "promptTokenCount": "prompt_tokens",
    "candidatesTokenCount": "completion_tokens",
    "totalTokenCount": "total_tokens",
}
_FOLDED = (
    ("thoughtsTokenCount", "completion_tokens"),
    ("toolUsePromptTokenCount", "prompt_tokens"),
)
"""Counts Gemini's total includes beside its prompt and candidates (module docstring)."""


def call_from_part(part: Any, path: str = "parts[0]") -> ToolCall:
    """One part holding ``functionCall`` → :class:`ToolCall`."""
    p = expect_mapping(part, path)
    fc = expect_mapping(p.get("functionCall"), f"{path}.functionCall")
    return make_call(fc.get("name"), fc.get("args", {}), fc.get("id"), f"{path}.functionCall")


def _parts(body: Any, path: str) -> tuple[list[Any], str | None, dict[str, int | float] | None]:
    obj = expect_mapping(body, path)
    refuse_error(obj, "candidates", f"{path}.error")
    usage = int_counts(obj.get("usageMetadata"), _USAGE)
    if usage:
        for part, into in _FOLDED:
            if part in usage and into in usage:
                usage[into] = usage[into] + usage[part]
    candidates = obj.get("candidates")
    if candidates is None:
        return [], None, usage
    cands = expect_list(candidates, f"{path}.candidates")
    if not cands:
        return [], None, usage
    cand = expect_mapping(cands[0], f"{path}.candidates[0]")
    finish = cand.get("finishReason") if isinstance(cand.get("finishReason"), str) else None
    content = cand.get("content")
    if content is None:
        return [], finish, usage
    parts = expect_mapping(content, f"{path}.candidates[0].content").get("parts", [])
    return list(expect_list(parts, f"{path}.candidates[0].content.parts")), finish, usage


def _turn(
    parts: list[Any], path: str, finish: str | None, usage: dict[str, int | float] | None
) -> AssistantTurn:
    calls: list[ToolCall] = []
    texts: list[str] = []
    for i, part in enumerate(parts):
        p = expect_mapping(part, f"{path}[{i}]")
        if "functionCall" in p:
            calls.append(call_from_part(p, f"{path}[{i}]"))
        elif isinstance(p.get("text"), str) and not p.get("thought"):
            texts.append(p["text"])
    return AssistantTurn(
        calls=tuple(calls), content="".join(texts) or None, usage=usage, finish_reason=finish
    )


def parse_response(body: Any) -> AssistantTurn:
    """A ``GenerateContentResponse`` → :class:`AssistantTurn` (first candidate)."""
    parts, finish, usage = _parts(body, "response")
    return _turn(parts, "candidates[0].content.parts", finish, usage)


class StreamAccumulator:
    """Concatenates the parts of streamed ``GenerateContentResponse`` chunks."""

    def __init__(self) -> None:
        self._parts: list[Any] = []
        self._finish: str | None = None
        self._usage: dict[str, int | float] | None = None
        self._chunks = 0

    def add(self, chunk: Any) -> None:
        parts, finish, usage = _parts(chunk, f"chunk[{self._chunks}]")
        self._chunks += 1
        self._parts.extend(parts)
        self._finish = finish or self._finish
        self._usage = usage or self._usage

    def finish(self) -> AssistantTurn:
        if self._chunks == 0:
            raise PayloadError("stream", "no chunks before the end of the stream")
        return _turn(self._parts, "stream.parts", self._finish, self._usage)
