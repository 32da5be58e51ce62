"""A conversation agent on the official MCP Python SDK:
``conversation_agent.py TRANSPORT VARIANT [MODE]``.

TRANSPORT is ``http`` (``mcp.Client`` on ``TOOLGATE_MCP_URL``) or ``stdio`` (``mcp.Client``
launching ``TOOLGATE_MCP_COMMAND``). VARIANT is a variant of the support agent
(``tests/conversation/support.decide``: ``good``, ``forbidden``, ``eager``,
``wrong_email``), run on the conversation so far. It answers each user turn with one line
``{"type": "final", "content": ...}`` on stdout, then reads the next user turn
(``{"type": "user", "messages": [...]}``) from stdin, until end of file.

MODE (default ``keep``) picks how it behaves: ``keep`` — one MCP connection for the whole
conversation; ``reconnect`` — a new connection in every user turn; ``twice`` / ``thrice``
— one / two more connections in the second turn (the first kept); ``exit_after_1`` —
exits with the status in ``TOOLGATE_TEST_EXIT`` (default 0) after answering the first
turn; ``not_json`` — a plain text answer to the second turn; ``two_lines`` — two answer
lines for the first turn (in one write). Every user turn it was sent is logged to stderr
(``heard: <content>``).
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import sys
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from tests.conversation.support import decide


def client() -> Client:
    if sys.argv[1] == "stdio":
        argv = shlex.split(os.environ["TOOLGATE_MCP_COMMAND"])
        return Client(StdioServerParameters(command=argv[0], args=argv[1:]))
    return Client(os.environ["TOOLGATE_MCP_URL"])


def result_value(result: Any) -> Any:
    if result.structured_content is not None:
        return result.structured_content
    return result.content[0].text if result.content else ""


async def answer(tools: Any, messages: list[dict[str, Any]], variant: str) -> str | None:
    """One user turn: call tools as the support agent decides, until it answers."""
    while True:
        step = decide(messages, variant)
        if "calls" not in step:
            content = step.get("content")
            messages.append({"role": "assistant", "content": content})
            return content
        calls = [{**c, "id": f"c{len(messages)}_{i}"} for i, c in enumerate(step["calls"])]
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": c["id"],
                        "type": "function",
                        "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])},
                    }
                    for c in calls
                ],
            }
        )
        for c in calls:
            value = result_value(await tools.call_tool(c["name"], c["arguments"]))
            text = value if isinstance(value, str) else json.dumps(value)
            messages.append({"role": "tool", "tool_call_id": c["id"], "content": text})


def say(*answers: str | None) -> None:
    sys.stdout.write("".join(json.dumps({"type": "final", "content": a}) + "\n" for a in answers))
    sys.stdout.flush()


async def main(variant: str, mode: str) -> None:
    with open(os.environ["TOOLGATE_CASE"], encoding="utf-8") as fh:
        case = json.load(fh)
    if case.get("conversation") is not True or not isinstance(case.get("turns"), int):
        raise SystemExit(f"not a conversation case: {case!r}")
    messages = [*case["message_history"], {"role": "user", "content": case["user_input"]}]
    turn = 1
    async with AsyncExitStack() as kept:
        tools = await kept.enter_async_context(client()) if mode != "reconnect" else None
        while True:
            if mode == "reconnect":
                async with client() as tools:
                    content = await answer(tools, messages, variant)
            else:
                for _ in range({"twice": 1, "thrice": 2}.get(mode, 0) if turn == 2 else 0):
                    async with client() as again:
                        await again.list_tools()
                content = await answer(tools, messages, variant)
            if mode == "not_json" and turn == 2:
                print(content, flush=True)
            elif mode == "two_lines" and turn == 1:
                say(content, "and another thing")  # in one write: they arrive together
            else:
                say(content)
            if mode == "exit_after_1":
                sys.stderr.write("leaving after the first turn\n")
                sys.stdout.flush()
                os._exit(int(os.environ.get("TOOLGATE_TEST_EXIT", "0")))
            line = await asyncio.to_thread(sys.stdin.readline)
            if not line:
                break
            message = json.loads(line)
            assert message["type"] == "user" and message["case_id"] == case["case_id"]
            sys.stderr.write(f"heard: {message['content']}\n")
            messages = message["messages"]
            turn += 1


if __name__ == "__main__":
    asyncio.run(main(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "keep"))
