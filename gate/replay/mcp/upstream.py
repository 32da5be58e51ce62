"""A client of the team's real MCP servers (``agent.servers``), for record mode and tool lists.

:class:`Upstream` connects to every configured server (streamable HTTP with the headers
``headers_env`` names, or a stdio command started in ``cwd`` with ``env`` added), lists
their tools, and calls them — synchronously, from any thread: the MCP sessions live on
an event loop of their own in a background thread. Every exchange (connecting, listing,
each call) is bounded by the server's ``timeout_s``. A server that cannot be reached or
listed is an :class:`~gate.errors.McpServerError` naming it.

As a :class:`~gate.replay.frozen.ToolBackend`, :meth:`Upstream.call` answers a call from
the server that advertises the tool (the first one, in config order); a tool no server
advertises is an error result marked unrecorded (nothing to freeze), and a server's tool
error is an error result (frozen as ``error``).
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import Any, TypeVar

import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from gate.config import McpServerConfig
from gate.errors import McpServerError
from gate.model import ToolSpec
from gate.replay.frozen import ToolOutcome
from gate.replay.mcp.content import from_result

T = TypeVar("T")


def tool_spec(tool: types.Tool) -> ToolSpec:
    """An MCP tool as the dataset's tool definition (name, description, input schema, and
    its annotations when it has any: they say the tool's effect)."""
    notes = (
        tool.annotations.model_dump(by_alias=True, exclude_none=True) if tool.annotations else {}
    )
    return ToolSpec(
        tool.name, tool.description or "", dict(tool.input_schema or {}), annotations=notes or None
    )


class Upstream:
    """Open sessions to the configured servers (module docstring). Use as a context
    manager, or :meth:`open` / :meth:`close`."""

    def __init__(
        self,
        servers: Sequence[McpServerConfig],
        *,
        root: Path,
        environ: Mapping[str, str],
    ) -> None:
        self._servers = list(servers)
        self._root = root
        self._environ = environ
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._clients: dict[str, Client] = {}
        self._stop: asyncio.Event | None = None
        self._holders: list[asyncio.Future[None]] = []
        self.tools: dict[str, dict[str, types.Tool]] = {}
        """Server name → tool name → the tool as the server lists it (config order)."""

    def __enter__(self) -> Upstream:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _run(self, coro: Any, timeout: float, what: str) -> Any:
        try:
            return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)
        except (FutureTimeout, TimeoutError):
            raise McpServerError(f"{what}: no answer within {timeout:g}s") from None

    def open(self) -> None:
        """Connect to every server and list its tools."""
        self._thread.start()
        for server in self._servers:
            try:
                self._run(self._connect(server), server.timeout_s, f"MCP server {server.name!r}")
                listed = self._run(
                    self._clients[server.name].list_tools(),
                    server.timeout_s,
                    f"MCP server {server.name!r}: tools/list",
                )
            except McpServerError:
                raise
            except Exception as exc:  # any failure of the SDK or the server: one message
                raise McpServerError(
                    f"MCP server {server.name!r}: {_describe(exc)}", hint=_hint(server)
                ) from None
            self.tools[server.name] = {t.name: t for t in listed.tools}

    async def _connect(self, server: McpServerConfig) -> None:
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if self._stop is None:
            self._stop = asyncio.Event()
        stop = self._stop

        async def hold() -> None:
            try:
                async with self._client(server) as client:
                    self._clients[server.name] = client
                    ready.set_result(None)
                    await stop.wait()
            except BaseException as exc:
                if not ready.done():
                    ready.set_exception(exc)
                    return
                raise

        self._holders.append(asyncio.ensure_future(hold()))
        await ready

    def _client(self, server: McpServerConfig) -> Client:
        if server.url is not None:
            headers = {h: self._environ.get(var, "") for h, var in server.headers_env.items()}
            http = create_mcp_http_client(headers=headers or None)
            return Client(streamable_http_client(server.url, http_client=http))
        assert server.command is not None
        argv = server.command if isinstance(server.command, list) else shlex.split(server.command)
        cwd = (self._root / server.cwd).resolve() if server.cwd else self._root
        params = StdioServerParameters(
            command=argv[0], args=argv[1:], env=dict(server.env) or None, cwd=cwd
        )
        return Client(params)

    def listed(self, server: str) -> list[ToolSpec]:
        """The tools ``server`` advertises, as tool definitions, sorted by name."""
        return [tool_spec(t) for _, t in sorted(self.tools.get(server, {}).items())]

    def server_of(self, tool: str) -> str | None:
        return next((s for s, tools in self.tools.items() if tool in tools), None)

    def start_turn(self, index: int) -> None:
        return None  # live servers: the same tools in every user turn

    def call(self, name: str, args: Mapping[str, Any] | None) -> ToolOutcome:
        """Call ``name`` on the server that advertises it (a ToolBackend)."""
        server = self.server_of(name)
        if server is None:
            return ToolOutcome(
                {"error": f"no configured MCP server advertises {name!r}"},
                is_error=True,
                unrecorded=True,
            )
        if args is None:
            return ToolOutcome({"error": "the arguments are not a JSON object"}, is_error=True)
        cfg = next(s for s in self._servers if s.name == server)
        try:
            result = self._run(
                self._clients[server].call_tool(name, dict(args)),
                cfg.timeout_s,
                f"MCP server {server!r}: tools/call {name}",
            )
        except McpServerError as exc:
            return ToolOutcome({"error": str(exc)}, is_error=True, unrecorded=True)
        except Exception as exc:  # a protocol error is not a tool's answer: never frozen
            return ToolOutcome(
                {"error": f"MCP server {server!r}: {_describe(exc)}"},
                is_error=True,
                unrecorded=True,
            )
        content, is_error = from_result(result)
        return ToolOutcome(content, is_error=is_error)

    def close(self) -> None:
        """End the sessions (stdio servers are stopped by the SDK) and the loop (bounded)."""
        if not self._thread.is_alive():
            return

        async def closing() -> None:
            if self._stop is not None:
                self._stop.set()
            if self._holders:
                with contextlib.suppress(Exception, asyncio.CancelledError):
                    await asyncio.wait_for(
                        asyncio.gather(*self._holders, return_exceptions=True), 10
                    )

        with contextlib.suppress(FutureTimeout, RuntimeError, TimeoutError):
            asyncio.run_coroutine_threadsafe(closing(), self._loop).result(15)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)


def _describe(exc: BaseException) -> str:
    """The innermost message of an exception (task groups wrap the real one)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _hint(server: McpServerConfig) -> str:
    where = server.url if server.url else f"command {server.command!r}"
    return f"Check that the server at {where} is running and speaks MCP."
