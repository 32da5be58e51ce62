"""An agent whose tools come from ToolGate's MCP server, for one-turn and conversation
cases alike (docs/agent-protocol.md, "Conversations"): one MCP connection kept for every
user turn; each answer a line on stdout, each next user turn a line read from stdin."""

import asyncio
import json
import os
import sys

from mcp import Client


async def answer(tools, listed, messages):
    """One user turn: your agent loop (model and tools) until it answers. This stand-in
    calls the first tool with the user's last message and says what it answered."""
    if not listed:
        return "I can answer that without tools."
    result = await tools.call_tool(listed[0].name, {"query": messages[-1]["content"]})
    prefix = "the tool failed: " if result.is_error else "the tool said: "
    return prefix + result.content[0].text


async def main():
    with open(os.environ["TOOLGATE_CASE"], encoding="utf-8") as fh:
        case = json.load(fh)  # ..., user_input (turn 1), "conversation": true, "turns": 3
    messages = [*case["message_history"], {"role": "user", "content": case["user_input"]}]
    async with Client(os.environ["TOOLGATE_MCP_URL"]) as tools:  # kept across the turns
        listed = (await tools.list_tools()).tools
        while True:
            content = await answer(tools, listed, messages)
            if not case.get("conversation"):
                print(content)  # a one-turn case: stdout is the final answer
                return
            print(json.dumps({"type": "final", "content": content}), flush=True)
            line = await asyncio.to_thread(sys.stdin.readline)  # the loop keeps running
            if not line:
                return  # end of file: the conversation is over
            messages = json.loads(line)["messages"]  # the conversation so far, this turn last


asyncio.run(main())
