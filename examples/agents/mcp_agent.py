"""A minimal agent whose tools come from MCP, for ToolGate's `mcp` adapter.

It calls the first tool the server lists with the user's words and prints the answer.
A real agent hands the listed tools to its model instead.
"""

import asyncio
import json
import os

from mcp import Client


async def main():
    with open(os.environ["TOOLGATE_CASE"], encoding="utf-8") as fh:
        case = json.load(fh)  # case_id, sample, seed, user_input, message_history
    async with Client(os.environ["TOOLGATE_MCP_URL"]) as tools:
        listed = (await tools.list_tools()).tools
        if not listed:
            print("I can answer that without tools.")
            return
        result = await tools.call_tool(listed[0].name, {"query": case["user_input"]})
        prefix = "the tool failed: " if result.is_error else "the tool said: "
        print(prefix + result.content[0].text)  # stdout is the final answer


asyncio.run(main())
