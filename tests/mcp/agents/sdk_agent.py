"""A test agent on the official MCP Python SDK: ``sdk_agent.py TRANSPORT SCENARIO``.

TRANSPORT is ``http`` (``mcp.Client`` on ``TOOLGATE_MCP_URL``: the SDK negotiates the
protocol era), ``legacy`` (``ClientSession`` over ``streamable_http_client``, the 2025
handshake) or ``stdio`` (``mcp.Client`` launching ``TOOLGATE_MCP_COMMAND``). SCENARIO picks
what the agent does (see ``SCENARIOS``); the final answer goes to stdout.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import sys
from contextlib import asynccontextmanager
from typing import Any

from mcp import Client, ClientSession, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client


@asynccontextmanager
async def connect(transport: str):
    if transport == "http":
        async with Client(os.environ["TOOLGATE_MCP_URL"]) as client:
            yield client
    elif transport == "legacy":
        url = os.environ["TOOLGATE_MCP_URL"]
        async with (
            streamable_http_client(url) as (read, write, *_),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session
    elif transport == "stdio":
        argv = shlex.split(os.environ["TOOLGATE_MCP_COMMAND"])
        async with Client(StdioServerParameters(command=argv[0], args=argv[1:])) as client:
            yield client
    else:
        raise SystemExit(f"unknown transport {transport!r}")


def text(result: Any) -> str:
    body = result.content[0].text if result.content else ""
    return ("error: " if result.is_error else "") + body


async def main(transport: str, scenario: str) -> None:
    with open(os.environ["TOOLGATE_CASE"], encoding="utf-8") as fh:
        case = json.load(fh)
    order = case["user_input"].split()[-1].rstrip("?")
    if scenario == "never_connect":
        print("I answered without my tools")
        return
    async with connect(transport) as client:
        tools = [t.name for t in (await client.list_tools()).tools]
        if scenario == "list":
            print(",".join(tools))
        elif scenario == "case":
            print(json.dumps(case))
        elif scenario == "env":
            names = ("GITHUB_TOKEN", "CRM_TOKEN", "MY_FLAG", "TOOLGATE_CASE")
            print(" ".join(f"{n}={n in os.environ}" for n in names))
        elif scenario == "lookup":
            result = await client.call_tool("lookup_order", {"order_id": order})
            print(f"order {order}: {text(result)}")
        elif scenario == "parallel":
            a, b = await asyncio.gather(
                client.call_tool("lookup_order", {"order_id": order}),
                client.call_tool("issue_refund", {"order_id": order, "amount": 5}),
            )
            print(f"{text(a)} / {text(b)}")
        elif scenario == "sequence":
            a = await client.call_tool("lookup_order", {"order_id": order})
            b = await client.call_tool("issue_refund", {"order_id": order, "amount": 5})
            print(f"{text(a)} then {text(b)}")
        elif scenario == "unknown_tool":
            print(text(await client.call_tool("delete_everything", {"confirm": True})))
        elif scenario == "bad_args":
            print(text(await client.call_tool("lookup_order", {"order_id": 12345, "x": [1]})))
        elif scenario == "loop":
            for _ in range(20):
                result = await client.call_tool("lookup_order", {"order_id": order})
            print(text(result))
        elif scenario == "twice":
            await client.call_tool("lookup_order", {"order_id": order})
            async with connect(transport) as again:
                await again.call_tool("lookup_order", {"order_id": order})
            print("connected twice")
        elif scenario == "no_final":
            await client.call_tool("lookup_order", {"order_id": order})
        elif scenario == "crash":
            await client.call_tool("lookup_order", {"order_id": order})
            print("something went wrong in the agent", file=sys.stderr)
            sys.stdout.flush()
            os._exit(3)
        elif scenario == "break":  # the session breaks mid-call: the process dies waiting
            # exits 1.5 s into a call the server holds (batch_window_ms: 5000)
            asyncio.get_running_loop().call_later(1.5, os._exit, 4)
            await client.call_tool("lookup_order", {"order_id": order})
            await asyncio.sleep(10)
        elif scenario == "hang":
            await client.call_tool("lookup_order", {"order_id": order})
            await asyncio.sleep(3600)
        else:
            raise SystemExit(f"unknown scenario {scenario!r}")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
