"""``TOOLGATE_MCP_COMMAND``: the case's tools as an MCP server on stdio.

An agent whose MCP client launches its servers as processes runs this command (the
interpreter running ToolGate, this file, the case-sample's endpoint URL). It is an MCP
server on stdin/stdout that relays ``tools/list`` and every ``tools/call`` — concurrently,
in arrival order — to the case-sample's streamable-HTTP endpoint, where they are recorded
and answered: one code path for both transports. Arguments that are not a JSON object are
forwarded as their JSON text under ``_meta`` (the endpoint records a parse failure).

It exits when its stdin closes (the agent ended or was killed) or when the endpoint is
gone (the case-sample ended); every upstream exchange is bounded by ``--timeout``.
Run as a file, it puts its own package root on ``sys.path``: an MCP client starts servers
with a minimal environment, without ``PYTHONPATH``.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__" and not __package__:  # run as a file by the agent's MCP client
    sys.path[0] = str(Path(__file__).resolve().parents[3])

import argparse
import io
import json
from collections.abc import AsyncIterable, AsyncIterator, Mapping
from dataclasses import replace
from typing import Any

import anyio
import mcp_types as types
from mcp import Client
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

from gate.replay.mcp.peek import RAW_ARGUMENTS_META, attempts


def command(url: str, python: str | None = None) -> list[str]:
    """The argv of the bridge for one endpoint."""
    return [python or sys.executable, str(Path(__file__).resolve()), url]


async def relay(url: str, timeout_s: float) -> None:
    async with Client(url, read_timeout_seconds=timeout_s) as upstream:

        async def list_tools(
            _ctx: ServerRequestContext[Any, Any], _params: types.PaginatedRequestParams | None
        ) -> types.ListToolsResult:
            return await upstream.list_tools()

        async def call_tool(
            _ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
        ) -> types.CallToolResult:
            return await upstream.call_tool(params.name, params.arguments, meta=params.meta)

        async def raw_arguments(
            ctx: ServerRequestContext[Any, Any], call_next: CallNext
        ) -> HandlerResult:
            params = ctx.params
            if ctx.method == "tools/call" and isinstance(params, Mapping):
                raw = params.get("arguments")
                if raw is not None and not isinstance(raw, Mapping):
                    meta = dict(params.get("_meta") or {})
                    meta[RAW_ARGUMENTS_META] = json.dumps(raw, ensure_ascii=False)
                    ctx = replace(ctx, params={**params, "arguments": {}, "_meta": meta})
            return await call_next(ctx)

        server: Server[Any] = Server(
            "toolgate-stdio",
            get_tool_input_schema=lambda _name: None,
            on_list_tools=list_tools,
            on_call_tool=call_tool,
        )
        server.middleware = [raw_arguments]
        source = anyio.wrap_file(
            io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
        )
        async with stdio_server(stdin=_CheckedLines(source)) as (read, write):  # type: ignore[arg-type]
            await server.run(read, write, server.create_initialization_options())


class _CheckedLines:
    """The agent's stdin, line by line, as the SDK reads it — but a line the SDK would
    refuse (it validates each line whole, and drops it) that attempts ``tools/call`` is
    first rewritten into one well-formed call per attempt, carrying the argument text as
    sent under ``_meta``: the endpoint records each as a parse failure (or a protocol
    error when it named no tool), as it does the calls it refuses itself."""

    def __init__(self, source: AsyncIterable[str]) -> None:
        self._source = source

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        refused = 0
        async for line in self._source:
            try:
                types.jsonrpc_message_adapter.validate_json(line, by_name=False)
            except Exception:
                found = attempts(line.encode("utf-8", "replace"))
            else:
                found = []
            if not found:
                yield line
                continue
            for attempt in found:
                refused += 1
                rid = attempt.request_id
                message = {
                    "jsonrpc": "2.0",
                    "id": rid if rid is not None else f"toolgate-refused-{refused}",
                    "method": "tools/call",
                    "params": {
                        "name": attempt.name or "",
                        "arguments": {},
                        "_meta": {RAW_ARGUMENTS_META: attempt.arguments_text},
                    },
                }
                yield json.dumps(message, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("url", help="the case-sample's MCP endpoint (TOOLGATE_MCP_URL)")
    parser.add_argument("--timeout", type=float, default=600.0, help="most seconds per exchange")
    args = parser.parse_args(argv)
    try:
        anyio.run(relay, args.url, args.timeout)
    except KeyboardInterrupt:
        return 130
    except BaseException as exc:  # the endpoint closed or refused: the case-sample is over
        print(f"toolgate mcp bridge: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
