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
import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import anyio
import mcp_types as types
from mcp import Client
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

RAW_ARGUMENTS_META = "toolgate/raw_arguments"  # the endpoint's (gate.replay.mcp.endpoint)


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
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())


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
