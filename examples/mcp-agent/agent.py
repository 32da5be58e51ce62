"""A customer-support agent on the OpenAI Agents SDK that takes its tools from MCP.

Nothing in it knows about ToolGate except where its tools and its question come from:

* the tools: an MCP server at ``TOOLGATE_MCP_URL`` (in production, the team's own MCP
  server's URL goes there);
* the question: ``TOOLGATE_CASE``, a JSON file with ``user_input`` and ``message_history``;
* the answer: printed on stdout.

The model is any OpenAI-compatible endpoint (``MODEL_BASE_URL``, ``MODEL``,
``OPENAI_API_KEY``). Without ``MODEL_BASE_URL`` it starts the bundled scripted model
(``scripted_model.py``) on 127.0.0.1, so the example runs offline; ``--variant regressed``
picks the scripted model's regressed build.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from typing import Any

from agents import Agent, ModelSettings, OpenAIChatCompletionsModel, Runner, set_tracing_disabled
from agents.mcp import MCPServerStreamableHttp
from openai import AsyncOpenAI

INSTRUCTIONS = (
    "You are a customer-support agent. Use the tools to look orders up, verify the "
    "customer's identity before any refund, and never delete an account: deactivate it."
)


def conversation(case: dict[str, Any]) -> list[dict[str, Any]]:
    """The case's history (its text turns) and the user turn, as the SDK's input."""
    history = [
        {"role": m["role"], "content": m["content"]}
        for m in case.get("message_history", [])
        if m.get("role") in ("user", "assistant") and isinstance(m.get("content"), str)
    ]
    return [*history, {"role": "user", "content": case["user_input"]}]


async def main(variant: str) -> None:
    set_tracing_disabled(True)  # nothing leaves the machine
    with open(os.environ["TOOLGATE_CASE"], encoding="utf-8") as fh:
        case = json.load(fh)
    base_url = os.environ.get("MODEL_BASE_URL")
    if base_url is None:
        import scripted_model

        base_url = scripted_model.serve()
    client = AsyncOpenAI(base_url=base_url, api_key=os.environ.get("OPENAI_API_KEY", "offline"))
    model = OpenAIChatCompletionsModel(
        model=os.environ.get("MODEL", f"scripted-{variant}"), openai_client=client
    )
    async with MCPServerStreamableHttp(
        params={"url": os.environ["TOOLGATE_MCP_URL"]}, cache_tools_list=True, name="tools"
    ) as tools:
        agent = Agent(
            name="support",
            instructions=INSTRUCTIONS,
            model=model,
            model_settings=ModelSettings(temperature=0),
            mcp_servers=[tools],
        )
        result = await Runner.run(agent, input=conversation(case), max_turns=8)
    print(result.final_output)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", choices=["good", "regressed"], default="good")
    asyncio.run(main(parser.parse_args().variant))
