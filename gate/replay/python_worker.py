"""The child process a ``python`` agent runs in: ``python -m gate.replay.python_worker
SPEC [PATH...]``.

It imports the callable ``SPEC`` (``module:attr.attr``; each ``PATH`` first on
``sys.path``), says so on its protocol output — ``{"type": "ready"}``, or ``{"type":
"error", "kind": "start", "message": "cannot import …"}`` and exit — and then serves the
``command`` protocol (:mod:`gate.replay.command`) for as many case-samples as it is given:
each ``start`` calls the callable once (and so does each ``user`` message of a
conversation, with the conversation so far as ``messages``), each ``call_tool`` is a
``tool_calls`` message answered by the next ``tool_results``, the return value is the
``final`` message (docs/agent-protocol.md, "``python``: a function in your package").

The protocol runs on private copies of the original stdin and stdout; file descriptors 0
and 1 are pointed at ``/dev/null`` and at stderr before the callable is imported, so
that a ``print()`` or an ``input()`` of the agent cannot break or steal a message.

Every reply echoes ``case_id`` and ``sample``. Errors carry a ``kind`` the parent keeps:
``exception`` (the callable raised; ``detail`` holds the end of the traceback),
``protocol`` (it returned something that is not an answer). Little but the standard
library is imported here, so that a worker starts in about the time Python itself takes.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import sys
import traceback
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any

OPTIONAL_KWARGS = ("seed", "case_id", "sample", "turn")
"""Passed to the callable when it accepts them (by name or ``**kwargs``); ``turn`` is the
1-based user turn of a conversation (1 for a one-turn case)."""

TRACEBACK_LINES = 12
"""How many lines of a traceback an ``exception`` error keeps."""


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """What ``call_tool`` returns: the frozen response's ``content`` and whether the tool
    failed."""

    content: Any
    is_error: bool = False


def import_target(spec: str, paths: Sequence[str]) -> Any:
    """Import ``module:attr.attr`` (``paths`` first on ``sys.path``); raises what the
    import raised (also for ``toolgate record --tools``)."""
    for p in reversed(paths):
        if p not in sys.path:
            sys.path.insert(0, p)
    module_name, _, attr = spec.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def load_callable(spec: str, paths: Sequence[str]) -> Callable[..., Any] | str:
    """The callable ``spec`` names (:func:`import_target`); the reason, as text, when it
    cannot be imported or is not callable."""
    try:
        obj = import_target(spec, paths)
    except Exception as exc:  # any import-time failure of user code is a config problem
        return f"cannot import {spec!r}: {type(exc).__name__}: {exc}"
    if not callable(obj):
        return f"{spec!r} is not callable"
    return obj  # type: ignore[no-any-return]


def is_async(fn: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - async __call__ on an object
    )


def optional_kwargs(fn: Callable[..., Any]) -> tuple[str, ...]:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return ()
    var_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    return tuple(k for k in OPTIONAL_KWARGS if var_kw or k in params)


class Channel:
    """The protocol's two private streams."""

    def __init__(self, reader: IO[bytes], writer: IO[bytes]) -> None:
        self._reader = reader
        self._writer = writer

    def send(self, message: Mapping[str, Any]) -> None:
        self._writer.write(json.dumps(message, ensure_ascii=False, allow_nan=False).encode())
        self._writer.write(b"\n")
        self._writer.flush()

    def receive(self) -> dict[str, Any] | None:
        """The next message; None at the end of the input (the parent is done)."""
        while True:
            line = self._reader.readline()
            if not line:
                return None
            if line.strip():
                message = json.loads(line)
                if not isinstance(message, dict):
                    raise ValueError(f"not a message object: {line[:200]!r}")
                return message


class Agent:
    """The callable and what it accepts."""

    def __init__(self, fn: Callable[..., Any], channel: Channel) -> None:
        self.fn = fn
        self.channel = channel
        self.is_async = is_async(fn)
        self.extra = optional_kwargs(fn)

    def serve(self) -> None:
        start: Mapping[str, Any] = {}
        turn = 0
        while (message := self.channel.receive()) is not None:
            kind = message.get("type")
            if kind == "start":
                start, turn = message, 1
            elif kind == "user":  # a conversation's next turn: the start's seed still holds
                turn += 1
                message = {**start, **message}
            else:
                raise ValueError(f"expected a start message, got {kind!r}")
            self.channel.send(self.one({**message, "turn": turn}))

    def one(self, start: Mapping[str, Any]) -> dict[str, Any]:
        """Run one case-sample; the reply that ends it."""
        ids = {"case_id": start.get("case_id"), "sample": start.get("sample")}
        kwargs: dict[str, Any] = {
            "messages": start.get("messages") or [],
            "tools": start.get("tools") or [],
            "call_tool": self._call_tool(ids),
        }
        kwargs.update({k: start.get(k) for k in self.extra})
        try:
            value = self.fn(**kwargs)
            if inspect.isawaitable(value):
                import asyncio  # only for async agents: it is most of a worker's start-up

                value = asyncio.run(_await(value))
        except BaseException as exc:  # sys.exit() too: an answer of the callable's
            if isinstance(exc, KeyboardInterrupt):
                raise
            tb = "".join(traceback.format_exception(exc)).rstrip().splitlines()
            return {
                "type": "error",
                **ids,
                "kind": "exception",
                "message": f"the callable raised {type(exc).__name__}: {exc}",
                "detail": "\n".join(tb[-TRACEBACK_LINES:]),
            }
        return {**ids, **final(value)}

    def _call_tool(self, ids: Mapping[str, Any]) -> Any:
        channel = self.channel

        def turn(calls: Sequence[tuple[str, Any]]) -> list[ToolOutcome]:
            plain: list[dict[str, Any]] = []
            for i, (name, args) in enumerate(calls):
                if not isinstance(name, str) or not name:
                    raise TypeError(f"call_tool: call[{i}]: the tool name must be a string")
                if args is not None and not isinstance(args, str | Mapping):
                    raise TypeError(
                        f"call_tool: call[{i}]: arguments must be a dict or a JSON string, "
                        f"not {type(args).__name__}"
                    )
                plain.append({"name": name, "arguments": {} if args is None else args})
            try:
                channel.send({"type": "tool_calls", **ids, "calls": plain})
            except (TypeError, ValueError) as exc:
                raise TypeError(f"call_tool: arguments that are not JSON: {exc}") from None
            reply = channel.receive()
            if reply is None or reply.get("type") != "tool_results":
                # ToolGate ended the case-sample (a step budget overrun, the run's end):
                # nothing is waiting for an answer, and the callable must not go on.
                sys.stderr.flush()
                os._exit(0)
            return [
                ToolOutcome(r.get("content"), bool(r.get("is_error")))
                for r in reply.get("results") or []
            ]

        if self.is_async:

            async def async_call_tool(name: str, arguments: Any = None) -> ToolOutcome:
                return turn([(name, arguments)])[0]

            async def async_batch(calls: Sequence[tuple[str, Any]]) -> list[ToolOutcome]:
                return turn(list(calls))

            async_call_tool.batch = async_batch  # type: ignore[attr-defined]
            return async_call_tool

        def call_tool(name: str, arguments: Any = None) -> ToolOutcome:
            return turn([(name, arguments)])[0]

        call_tool.batch = lambda calls: turn(list(calls))  # type: ignore[attr-defined]
        return call_tool


def final(value: Any) -> dict[str, Any]:
    """The message a return value makes."""
    if value is None or isinstance(value, str):
        return {"type": "final", "content": value}
    if isinstance(value, Mapping):
        content = value.get("content", value.get("final"))
        if content is not None and not isinstance(content, str):
            return {
                "type": "error",
                "kind": "protocol",
                "message": "the returned content must be a string",
            }
        usage = value.get("usage")
        return {"type": "final", "content": content, "usage": usage}
    return {
        "type": "error",
        "kind": "protocol",
        "message": f"the callable returned {type(value).__name__}; return a string, None or "
        '{"content": ..., "usage": ...}',
    }


async def _await(value: Awaitable[Any]) -> Any:
    return await value


def private_streams() -> Channel:
    """The protocol's own copies of stdin and stdout; fds 0 and 1 then point at
    ``/dev/null`` and stderr (module docstring)."""
    reader = os.fdopen(os.dup(0), "rb")
    writer = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    return Channel(reader, writer)


def main(argv: Sequence[str]) -> int:
    if not argv:
        print("usage: python -m gate.replay.python_worker MODULE:CALLABLE [PATH…]", file=sys.stderr)
        return 2
    channel = private_streams()
    fn = load_callable(argv[0], list(argv[1:]))
    if isinstance(fn, str):
        channel.send({"type": "error", "kind": "start", "message": fn})
        return 1
    channel.send({"type": "ready"})
    Agent(fn, channel).serve()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
