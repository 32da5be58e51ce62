"""The ``tools/call`` requests a JSON-RPC body attempts, read before the MCP SDK parses it.

The SDK refuses a body it cannot parse or validate — nesting past its own limit (200
levels), a batch, an envelope it does not accept — with an error, before ToolGate's
handler runs. A call it refused would leave no trace, and a must-not-call tool could be
called unseen. So every body is read here first (:func:`attempts`), and each attempted
``tools/call`` whose tool name can be read is recorded even when the SDK never hands it
on (:mod:`.endpoint`, :mod:`.host`, :mod:`.bridge`).

The reading is bounded and never recursive: orjson decodes the body when it can; when it
cannot (deeper than it goes, not valid JSON, a body cut short), a linear scan of the
tokens (:func:`_scan`) keeps a stack of the open brackets and reads only what it needs —
each message's ``method`` and ``id``, its ``params.name`` and the text of
``params.arguments`` — however deep the rest nests, and keeps what it read before a
syntax error. A message is a top-level object or an object of a top-level array (a
batch).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import orjson

TOOLS_CALL = "tools/call"
RAW_ARGUMENTS_META = "toolgate/raw_arguments"
"""``_meta`` key of a ``tools/call`` whose arguments were not a JSON object: their JSON
text (set by the endpoint itself, and by the stdio bridge, which must forward an object)."""
MAX_NAME_BYTES = 4096
"""Longest tool name read (a longer one is read as no name: the call is a protocol error)."""
MAX_ARGUMENT_TEXT = 1 << 20
"""The most of a refused call's argument text that is kept (the rest is cut, said so)."""


@dataclass(slots=True)
class Attempt:
    """One ``tools/call`` a body attempts."""

    name: str | None
    """The tool it names; ``None`` when no name can be read (a protocol error)."""
    request_id: str | int | None
    arguments_text: str
    """The JSON text of its ``arguments`` as sent (``""`` when it sent none)."""
    claimed: bool = False
    """Set when ToolGate's handler recorded the call (the SDK handed it on)."""


def mentions_tools_call(body: bytes) -> bool:
    """Whether ``body`` may hold a ``tools/call`` (the cheap test before :func:`attempts`:
    the method is a JSON string, so its text, or an escape in it, is in the body)."""
    return b"tools/call" in body or b"\\u" in body or b"\\/" in body


def attempts(body: bytes) -> list[Attempt]:
    """Every ``tools/call`` request in ``body`` (module docstring), in order (a UTF-8 byte
    order mark before it is read past)."""
    body = body.removeprefix(b"\xef\xbb\xbf")
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError:
        return [_attempt(m) for m in _scan(body) if m.get("method") == TOOLS_CALL]
    messages = value if isinstance(value, list) else [value]
    found = []
    for m in messages:
        if not isinstance(m, dict) or m.get("method") != TOOLS_CALL:
            continue
        params = m.get("params")
        params = params if isinstance(params, dict) else {}
        read = {"id": m.get("id"), "name": params.get("name")}
        if "arguments" in params:
            read["arguments"] = _text_of(params["arguments"])
        found.append(_attempt(read))
    return found


def _text_of(value: Any) -> str:
    try:
        text = orjson.dumps(value).decode()
    except orjson.JSONEncodeError:  # deeper than orjson writes
        try:
            text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        except (RecursionError, ValueError):
            text = "(nested too deep to write as text)"
    return _cut(text)


def _cut(text: str) -> str:
    if len(text) <= MAX_ARGUMENT_TEXT:
        return text
    return text[:MAX_ARGUMENT_TEXT] + f"… ({len(text) - MAX_ARGUMENT_TEXT} more characters)"


def _attempt(m: dict[str, Any]) -> Attempt:
    """The attempt of a message as read (its ``id``, ``name`` and ``arguments`` text)."""
    name = m.get("name")
    rid = m.get("id")
    return Attempt(
        name if isinstance(name, str) and name else None,
        rid if isinstance(rid, str | int) and not isinstance(rid, bool) else None,
        m.get("arguments", ""),
    )


# ─── the scan of a body orjson cannot decode ──────────────────────────────────

_TOKEN = re.compile(
    rb'[ \t\r\n]*(?:("[^"\\]*(?:\\.[^"\\]*)*")|([\[\]{}:,])|([^ \t\r\n\[\]{}:,"]+))', re.S
)
"""One JSON token after optional whitespace: a string (group 1), a punctuation mark
(group 2) or a bare scalar — a number, ``true``, ``false``, ``null`` (group 3)."""

_MESSAGE, _BATCH, _PARAMS, _ARGUMENTS, _OTHER = range(5)


def _string(token: bytes) -> str | None:
    """A JSON string token's value (``None`` when it is not a valid one)."""
    if len(token) > MAX_NAME_BYTES + 2:
        return None
    try:
        value = json.loads(token)
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def _scan(body: bytes) -> list[dict[str, Any]]:
    """The messages of ``body`` as far as they can be read: for each, ``method``, ``id``,
    ``name`` (``params.name`` when a string) and ``arguments`` (the text of
    ``params.arguments`` once its value is complete). Linear in the body, never
    recursive: the open brackets are a list."""
    messages: list[dict[str, Any]] = []
    # each open bracket: [role, is_object, the key being read (objects), expecting a key]
    stack: list[list[Any]] = []
    message: dict[str, Any] | None = None
    args_start = -1
    args_level = -1
    pos, end = 0, len(body)
    while pos < end:
        m = _TOKEN.match(body, pos)
        if m is None:
            break
        pos = m.end()
        string, punct, bare = m.group(1), m.group(2), m.group(3)
        top = stack[-1] if stack else None
        if top is not None and top[1] and top[3]:  # an object expects a key (or its end)
            if string is not None:
                key = _string(string) if len(stack) <= 3 else None
                top[2], top[3] = key, False
                continue
            if punct != b"}":
                break  # not JSON: keep what was read
        if punct == b":":
            continue
        if punct == b",":
            if top is not None and top[1]:
                top[3] = True
            continue
        if punct in (b"]", b"}"):
            if not stack:
                break
            role = stack.pop()[0]
            if role == _ARGUMENTS and len(stack) == args_level and message is not None:
                message["arguments"] = _cut(body[args_start : m.end(2)].decode("utf-8", "replace"))
            if role == _MESSAGE and message is not None:
                messages.append(message)
                message = None
            if not stack:
                break
            continue
        # a value: a scalar, or a bracket that opens one
        key = top[2] if top is not None and top[1] else None
        role = top[0] if top is not None else None
        if punct in (b"{", b"["):
            is_object = punct == b"{"
            if top is None:
                child = _MESSAGE if is_object else _BATCH
            elif role == _BATCH and is_object and len(stack) == 1:
                child = _MESSAGE
            elif role == _MESSAGE and key == "params" and is_object:
                child = _PARAMS
            elif role == _PARAMS and key == "arguments":
                child = _ARGUMENTS
                args_start, args_level = m.start(2), len(stack)
            else:
                child = _OTHER
            if child == _MESSAGE:
                message = {}
            if role == _PARAMS and key == "name" and message is not None:
                message["name"] = None  # a name that is not a string
            stack.append([child, is_object, None, is_object])
            continue
        if message is None:
            if top is None:
                break  # a bare scalar body
            continue
        token = string if string is not None else bare
        assert token is not None
        if role == _MESSAGE and key == "method" and string is not None:
            message["method"] = _string(string)
        elif role == _MESSAGE and key == "id":
            message["id"] = _string(string) if string is not None else _integer(bare)
        elif role == _PARAMS and key == "name":
            message["name"] = _string(string) if string is not None else None
        elif role == _PARAMS and key == "arguments":
            message["arguments"] = _cut(token.decode("utf-8", "replace"))
    if message is not None:  # cut short or malformed: what was read counts
        if "arguments" not in message and any(f[0] == _ARGUMENTS for f in stack):
            message["arguments"] = _cut(body[args_start:pos].decode("utf-8", "replace"))
        messages.append(message)
    return messages


def _integer(token: bytes | None) -> int | None:
    if token is None or not token.lstrip(b"-").isdigit() or len(token) > 40:
        return None
    return int(token)
