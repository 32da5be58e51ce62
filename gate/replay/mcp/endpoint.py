"""One case-sample's MCP server: the case's tools, answered from its frozen responses.

An :class:`Endpoint` is an MCP server (the SDK's low-level ``Server`` behind its own
streamable-HTTP session manager) bound to one :class:`~gate.replay.session.Session`. What
it answers, the batch window and the connection count are the user's contract, written
once in docs/agent-protocol.md ("What the server answers", "Parallel calls: the batch
window", "Connections"). The step budget is the session's.

The server never validates arguments itself (``get_tool_input_schema`` answers None, and
the SDK's tracing middleware is dropped: nothing leaves the machine).
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import threading
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError

from gate import __version__, jsonio
from gate.model import ToolCall, ToolResult
from gate.replay.mcp.content import to_result
from gate.replay.mcp.peek import RAW_ARGUMENTS_META, Attempt
from gate.replay.session import AgentFailure, ErrorKind, Session
from gate.runsfile import decode_arguments

NAMED_NO_TOOL = "a tools/call request named no tool"

_OPENING_METHODS = frozenset({"initialize", "server/discover"})

LOCAL_ONLY = TransportSecuritySettings(
    enable_dns_rebinding_protection=True,
    allowed_hosts=["127.0.0.1:*", "localhost:*"],
    allowed_origins=["http://127.0.0.1:*", "http://localhost:*"],
)
"""Requests must name the loopback host (DNS-rebinding protection)."""


class Endpoint:
    """The MCP server of one case-sample (module docstring). Its handlers run on the
    host's event loop; :meth:`wait_event` and the counters are read from the runner thread.
    """

    def __init__(
        self,
        session: Session,
        *,
        batch_window_s: float,
        max_connections: int,
    ) -> None:
        self.token = secrets.token_urlsafe(24)
        """The random path segment of this endpoint's URL."""
        self.session = session
        self.batch_window_s = batch_window_s
        self.max_connections = max_connections
        self.connections = 0
        self.turn_connections = [0]
        """Connections opened in each user turn so far (one entry for a one-turn case)."""
        self.requests = 0
        self.failure: AgentFailure | None = None
        self._batch: list[tuple[ToolCall, asyncio.Future[ToolResult | None]]] | None = None
        self._cond = threading.Condition()
        self._events = 0
        self.server: Server[Any] = Server(
            "toolgate",
            version=__version__,
            instructions="ToolGate serves this case's tools from frozen responses.",
            get_tool_input_schema=lambda _name: None,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )
        self.server.middleware = [self._observe]
        self.manager = StreamableHTTPSessionManager(
            app=self.server,
            json_response=True,
            security_settings=LOCAL_ONLY,
            session_idle_timeout=None,  # the case-sample's own limits end it
        )

    # ─── seen from the runner thread ──────────────────────────────────────────

    def events(self) -> int:
        """How many things happened so far (calls, failures): a change means activity."""
        with self._cond:
            return self._events

    def wait_event(self, seen: int, timeout: float, also: Callable[[], bool]) -> int:
        """Wait until the event count moves past ``seen`` or ``also()`` holds, at most
        ``timeout`` s; returns the count."""
        with self._cond:
            self._cond.wait_for(lambda: self._events != seen or also(), timeout=timeout)
            return self._events

    def notify(self) -> None:
        """Wake the runner thread (also called when the agent's process exits)."""
        with self._cond:
            self._events += 1
            self._cond.notify_all()

    def end_turn(self) -> None:
        """The agent answered its user turn and another follows: the next turn's
        connections are counted from zero."""
        with self._cond:
            self.turn_connections.append(0)

    def _fail(self, failure: AgentFailure) -> None:
        if self.failure is None:
            self.failure = failure
        self.notify()

    # ─── the MCP handlers (on the host's loop) ───────────────────────────────

    async def _observe(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        """Count requests and connections; rewrite a ``tools/call`` whose arguments are
        not an object so that it reaches :meth:`_call_tool` as a parse failure."""
        if ctx.request_id is not None:
            self.requests += 1
        if ctx.method in _OPENING_METHODS and self.failure is None:
            with self._cond:
                self.connections += 1
                self.turn_connections[-1] += 1
                opened, turn = self.turn_connections[-1], len(self.turn_connections)
            if opened > self.max_connections:
                where = f" in user turn {turn}" if self.session.conversation else ""
                self._fail(
                    AgentFailure(
                        ErrorKind.PROTOCOL,
                        f"the agent opened MCP connection {opened}{where} ({ctx.method}) "
                        f"with agent.max_connections: {self.max_connections}",
                    )
                )
                raise MCPError(
                    code=types.INVALID_REQUEST,
                    message=f"this case allows {self.max_connections} MCP connection(s)",
                )
        params = ctx.params
        if ctx.method == "tools/call" and isinstance(params, Mapping):
            if not isinstance(params.get("name"), str):
                self._fail(AgentFailure(ErrorKind.PROTOCOL, NAMED_NO_TOOL))
            raw = params.get("arguments")
            if raw is not None and not isinstance(raw, Mapping):
                meta = params.get("_meta")
                meta = dict(meta) if isinstance(meta, Mapping) else {}
                meta[RAW_ARGUMENTS_META] = jsonio.dumps(raw).decode()
                ctx = replace(ctx, params={**params, "arguments": {}, "_meta": meta})
        return await call_next(ctx)

    async def _list_tools(
        self, _ctx: ServerRequestContext[Any, Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        specs = (t["function"] for t in self.session.job.tools)  # as every adapter gives them
        tools = [
            types.Tool(name=f["name"], description=f["description"], input_schema=f["parameters"])
            for f in specs
        ]
        return types.ListToolsResult(tools=tools)

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        _claim(ctx, params.name)
        meta: Mapping[str, Any] = params.meta or {}
        raw = meta.get(RAW_ARGUMENTS_META)
        if not params.name:
            self._fail(AgentFailure(ErrorKind.PROTOCOL, NAMED_NO_TOOL))
            return to_result({"error": NAMED_NO_TOOL}, is_error=True)
        if isinstance(raw, str):
            call = ToolCall(name=params.name, arguments=None, raw_arguments=raw, parse_ok=False)
        else:
            args, text, ok = decode_arguments(dict(params.arguments or {}))
            call = ToolCall(name=params.name, arguments=args, raw_arguments=text, parse_ok=ok)
        result = await self._enqueue(call)
        if result is None:
            why = self.failure.message if self.failure is not None else "the case-sample ended"
            return to_result({"error": why}, is_error=True)
        return to_result(result.content, is_error=result.is_error)

    def refused(self, attempt: Attempt) -> None:
        """Record a ``tools/call`` the SDK refused before the handler ran (on the loop):
        a parse failure that keeps the argument text as sent — it still counts, a
        must-not-call tool included —, or a protocol error when it named no tool."""
        self.requests += 1  # the agent did reach its server
        if attempt.name is None:
            self._fail(AgentFailure(ErrorKind.PROTOCOL, NAMED_NO_TOOL))
            return
        call = ToolCall(
            name=attempt.name,
            arguments=None,
            raw_arguments=attempt.arguments_text,
            parse_ok=False,
        )
        self._enqueue(call)

    def _enqueue(self, call: ToolCall) -> asyncio.Future[ToolResult | None]:
        """Add ``call`` to the open batch (opening one); the future of its result."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[ToolResult | None] = loop.create_future()
        if self._batch is None:
            self._batch = []
            if self.batch_window_s > 0:
                loop.call_later(self.batch_window_s, self.flush)
        self._batch.append((call, future))
        if self.batch_window_s <= 0:
            self.flush()
        self.notify()
        return future

    def flush(self) -> None:
        """Close the open batch: record it as one turn and release its answers (on the
        loop; also called when the agent exits, so no call is left unrecorded)."""
        batch, self._batch = self._batch, None
        if not batch:
            return
        try:
            results: list[ToolResult | None] = list(self.session.answer([c for c, _ in batch]))
        except AgentFailure as failure:  # the step budget (the turn is recorded), or ended
            self._fail(failure)
            results = [None] * len(batch)
        for (_, future), result in zip(batch, results, strict=True):
            if not future.done():  # the agent may have given up on the request
                future.set_result(result)


ATTEMPTS_KEY = "toolgate.attempts"
"""Where the host leaves a request's :class:`~.peek.Attempt` s in its ASGI scope."""


def _claim(ctx: ServerRequestContext[Any, Any], name: str) -> None:
    """Mark the attempt this handled call came from as recorded by the handler: the one
    of its HTTP request (the host peeked at it) with its id and name, else its name,
    else the first not yet claimed."""
    request = ctx.request
    scope = getattr(request, "scope", None)
    found = scope.get(ATTEMPTS_KEY) if isinstance(scope, dict) else None
    if not found:
        return
    open_ = [a for a in found if not a.claimed]
    for match in (
        lambda a: a.request_id == ctx.request_id and a.name == name,
        lambda a: a.name == name,
        lambda a: True,
    ):
        hit = next((a for a in open_ if match(a)), None)
        if hit is not None:
            hit.claimed = True
            return


async def hold(endpoint: Endpoint, ready: asyncio.Event, stop: asyncio.Event) -> None:
    """Run the endpoint's session manager until ``stop`` is set (a task on the host loop)."""
    async with endpoint.manager.run():
        ready.set()
        with contextlib.suppress(asyncio.CancelledError):
            await stop.wait()
