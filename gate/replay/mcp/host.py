"""The HTTP server that hosts every case-sample's MCP endpoint, on 127.0.0.1 only.

One uvicorn server runs on its own event loop in a background thread, bound to a free
port of 127.0.0.1. Each open :class:`~.endpoint.Endpoint` is at
``http://127.0.0.1:<port>/mcp/<token>`` (``token``: :attr:`~.endpoint.Endpoint.token`,
random); any other path, and a closed endpoint's, is a 404 (docs/agent-protocol.md).

Starting, opening, closing and stopping are bounded in time; a host that cannot start is a
:class:`~gate.replay.session.AgentFailure` of kind ``crash`` (the runner records it per
case-sample, and the adapter's ``prepare`` turns it into a config error up front).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import sys
import threading
from collections import Counter
from collections.abc import Awaitable, Callable
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, TextIO

import uvicorn

from gate.replay.mcp.endpoint import ATTEMPTS_KEY, Endpoint, hold
from gate.replay.mcp.peek import attempts, mentions_tools_call
from gate.replay.session import AgentFailure, ErrorKind

_START_S = 10.0
"""Most time the server may take to start, or an endpoint to open or close."""
_PREFIX = "/mcp/"

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


_QUIETED = ("mcp", "uvicorn", "sse_starlette")
"""The loggers of the libraries serving MCP: counted while a host serves (:class:`SdkLog`)."""


class SdkLog(logging.Handler):
    """What the MCP SDK and the HTTP server log while a host serves, counted by kind
    instead of printed: an agent's 2,000 broken requests would otherwise put thousands of
    traceback lines ahead of the verdict. :meth:`lines` gives one line per kind — its
    logger's message and exception type — with its count. Installed once however many
    hosts serve (:func:`quiet_sdk`)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.kinds: Counter[str] = Counter()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage().splitlines()[0][:200] if record.msg else record.name
        except Exception:  # a record whose arguments do not format
            text = str(record.msg)[:200]
        exc = record.exc_info[0].__name__ if record.exc_info and record.exc_info[0] else None
        self.kinds[f"{text} ({exc})" if exc else text] += 1

    def lines(self) -> list[str]:
        """One line per kind, most frequent first (then by text: the same on every run)."""
        return [
            f"toolgate: the MCP server logged {n:,} × {kind}"
            for kind, n in sorted(self.kinds.items(), key=lambda kv: (-kv[1], kv[0]))
        ]


_sdk_log: SdkLog | None = None
_sdk_users = 0
_sdk_saved: dict[str, bool] = {}
_sdk_lock = threading.Lock()


def quiet_sdk() -> None:
    """Count the serving libraries' log records (:class:`SdkLog`) from now on."""
    global _sdk_log, _sdk_users
    with _sdk_lock:
        _sdk_users += 1
        if _sdk_log is not None:
            return
        _sdk_log = SdkLog()
        for name in _QUIETED:
            logger = logging.getLogger(name)
            _sdk_saved[name] = logger.propagate
            logger.addHandler(_sdk_log)
            logger.propagate = False


def unquiet_sdk(log: TextIO | None) -> None:
    """One host less; when it was the last, stop counting and write the tally to ``log``
    (one line per kind of record)."""
    global _sdk_log, _sdk_users
    with _sdk_lock:
        _sdk_users = max(0, _sdk_users - 1)
        handler = _sdk_log
        if _sdk_users or handler is None:
            return
        _sdk_log = None
        for name in _QUIETED:
            logger = logging.getLogger(name)
            logger.removeHandler(handler)
            logger.propagate = _sdk_saved.pop(name, True)
    if log is not None and handler.kinds:
        log.write("".join(line + "\n" for line in handler.lines()))
        log.flush()


class McpHost:
    """See the module docstring. Thread-safe: endpoints are opened and closed from the
    runner threads. The serving libraries' log is counted while it serves and written,
    one line per kind, to ``log`` when it stops (:class:`SdkLog`)."""

    def __init__(self, log: TextIO | None = None) -> None:
        self._log = log if log is not None else sys.stderr
        self._endpoints: dict[str, tuple[Endpoint, asyncio.Event, asyncio.Future[None]]] = {}
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    # ─── lifecycle ──────────────────────────────────────────────────────────────

    def start(self) -> None:
        """Start the server (idempotent)."""
        with self._lock:
            if self._thread is not None:
                return
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(("127.0.0.1", 0))
            sock.listen(256)
            self.port = sock.getsockname()[1]
            config = uvicorn.Config(
                self._app,
                interface="asgi3",
                lifespan="off",
                http="h11",
                ws="none",
                log_level="critical",
                access_log=False,
                timeout_graceful_shutdown=1,
            )
            server = uvicorn.Server(config)
            loop = asyncio.new_event_loop()
            started = threading.Event()

            def serve() -> None:
                asyncio.set_event_loop(loop)
                loop.call_soon(started.set)
                try:
                    loop.run_until_complete(server.serve(sockets=[sock]))
                finally:
                    sock.close()
                    pending = asyncio.all_tasks(loop)  # e.g. SSE watchers of ended sessions
                    for task in pending:
                        task.cancel()
                    loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
                    loop.close()

            thread = threading.Thread(target=serve, name="toolgate-mcp-host", daemon=True)
            quiet_sdk()
            thread.start()
            if not started.wait(_START_S) or not self._wait_started(server):
                server.should_exit = True
                unquiet_sdk(self._log)
                raise AgentFailure(ErrorKind.CRASH, "the MCP server on 127.0.0.1 did not start")
            self._loop, self._server, self._thread = loop, server, thread

    @staticmethod
    def _wait_started(server: uvicorn.Server) -> bool:
        event = threading.Event()
        for _ in range(int(_START_S / 0.005)):
            if server.started:
                return True
            event.wait(0.005)
        return server.started

    def stop(self) -> None:
        """Close every endpoint and stop the server (bounded)."""
        with self._lock:
            tokens = list(self._endpoints)
        for token in tokens:
            self.close(self._endpoints[token][0])
        with self._lock:
            server, thread = self._server, self._thread
            self._server = self._thread = self._loop = None
        if server is not None:
            server.should_exit = True
        if thread is not None:
            thread.join(timeout=_START_S)
            unquiet_sdk(self._log)

    # ─── endpoints ──────────────────────────────────────────────────────────────

    def open(self, endpoint: Endpoint) -> str:
        """Serve ``endpoint``; returns its URL."""
        self.start()
        loop = self._loop
        assert loop is not None

        async def opening() -> tuple[asyncio.Event, asyncio.Future[None]]:
            ready, stop = asyncio.Event(), asyncio.Event()
            task = asyncio.ensure_future(hold(endpoint, ready, stop))
            await asyncio.wait_for(ready.wait(), _START_S)
            return stop, task

        try:
            stop, task = asyncio.run_coroutine_threadsafe(opening(), loop).result(_START_S + 1)
        except (FutureTimeout, TimeoutError, RuntimeError) as exc:
            raise AgentFailure(
                ErrorKind.CRASH, f"the case's MCP endpoint did not open: {exc!r}"
            ) from None
        with self._lock:
            self._endpoints[endpoint.token] = (endpoint, stop, task)
        return f"http://127.0.0.1:{self.port}{_PREFIX}{endpoint.token}"

    def run_on_loop(self, fn: Callable[[], None]) -> None:
        """Run ``fn`` on the host's loop and wait for it (bounded)."""
        loop = self._loop
        if loop is None:
            fn()
            return

        async def call() -> None:
            fn()

        with contextlib.suppress(FutureTimeout, RuntimeError):
            asyncio.run_coroutine_threadsafe(call(), loop).result(_START_S)

    def close(self, endpoint: Endpoint) -> None:
        """Stop answering for ``endpoint`` (404 from now on) and end its sessions. A batch
        still held is recorded first."""
        with self._lock:
            entry = self._endpoints.pop(endpoint.token, None)
        loop = self._loop
        if entry is None or loop is None:
            return
        _, stop, task = entry

        async def closing() -> None:
            endpoint.flush()
            stop.set()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(task), _START_S)
            if not task.done():
                task.cancel()

        with contextlib.suppress(FutureTimeout, RuntimeError):
            asyncio.run_coroutine_threadsafe(closing(), loop).result(_START_S + 1)

    # ─── the ASGI app ─────────────────────────────────────────────────────────

    async def _app(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        path: str = scope.get("path", "")
        entry = self._endpoints.get(path[len(_PREFIX) :]) if path.startswith(_PREFIX) else None
        if entry is None:
            await send({"type": "http.response.start", "status": 404, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        endpoint = entry[0]
        if scope.get("method") != "POST":
            await endpoint.manager.handle_request(scope, receive, send)  # type: ignore[arg-type]
            return
        body, whole, receive = await _read_body(receive)
        # Every tools/call is seen here, before the SDK parses the body (module docstring).
        found = attempts(body) if mentions_tools_call(body) else []
        if not whole:
            await _too_large(send)
        else:
            scope[ATTEMPTS_KEY] = found
            await endpoint.manager.handle_request(scope, receive, send)  # type: ignore[arg-type]
        for attempt in found:
            if not attempt.claimed:
                endpoint.refused(attempt)


MAX_BODY_BYTES = 16 * 1024 * 1024
"""Largest request body an endpoint reads; a larger one is refused (413), each call it
attempts recorded as far as its first :data:`MAX_BODY_BYTES` bytes show it."""


async def _read_body(receive: Receive) -> tuple[bytes, bool, Receive]:
    """The request's body (at most :data:`MAX_BODY_BYTES`), whether it is whole, and a
    ``receive`` that hands the SDK the same body, then the client's further events."""
    parts: list[bytes] = []
    size = 0
    more = True
    while more:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        parts.append(chunk)
        size += len(chunk)
        more = bool(message.get("more_body", False))
        if size > MAX_BODY_BYTES:
            return b"".join(parts)[:MAX_BODY_BYTES], False, receive
    body = b"".join(parts)
    given = False

    async def replay() -> dict[str, Any]:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return body, True, replay


async def _too_large(send: Send) -> None:
    body = (
        b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,'
        b'"message":"the request body is larger than ToolGate reads (16 MiB)"}}'
    )
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [(b"content-type", b"application/json")],
        }
    )
    await send({"type": "http.response.body", "body": body})
