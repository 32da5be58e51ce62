"""Server-sent events (``text/event-stream``) as used by streaming LLM APIs.

Each event's ``data:`` lines are joined with newlines (per the SSE spec) and decoded as
strict JSON; the OpenAI terminator ``data: [DONE]`` ends the stream. ``event:`` names are
returned alongside (Anthropic and the Responses API also put the type inside the JSON).

An event is complete only at the blank line that ends it: a stream cut in the middle of an
event (the connection closed after ``data: {"choi``, or after a whole ``data:`` line but
before its blank line) raises :class:`gate.errors.StreamTruncated` — the same as a stream
cut between events, which callers retry — never a JSON error about the unfinished text.
(The SSE spec discards such an event; discarding it silently would lose part of a reply.)
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from gate import jsonio
from gate.adapters.interface import PayloadError
from gate.errors import StreamTruncated


def iter_events(lines: Iterable[bytes | str]) -> Iterator[tuple[str | None, Any]]:
    """(event name, decoded data) for every event in the stream, until ``[DONE]``."""
    name: str | None = None
    data: list[str] = []
    count = 0
    for raw in lines:
        line = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
        line = line.rstrip("\r\n")
        if line == "":
            if data:
                text = "\n".join(data)
                if text.strip() == "[DONE]":
                    return
                try:
                    value = jsonio.loads_strict(text)
                except jsonio.JsonInputError as exc:
                    raise PayloadError(f"stream event {count}", str(exc)) from None
                yield name, value
                count += 1
            name, data = None, []
            continue
        if line.startswith(":"):
            continue  # an SSE comment (keep-alive)
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "data":
            data.append(value)
        elif field == "event":
            name = value
    if data and "\n".join(data).strip() != "[DONE]":
        raise StreamTruncated(f"the stream was cut in the middle of event {count}")
