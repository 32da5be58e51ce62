"""Python agents for the ``python`` adapter tests (imported as ``module:callable``)."""

from __future__ import annotations

import asyncio
import time
from typing import Any


def sync_agent(messages: list[dict[str, Any]], tools: list[dict[str, Any]], call_tool: Any) -> str:
    out = call_tool("lookup_order", {"order_id": "ord_1"})
    return f"{out.content['status']} ({len(tools)} tools)"


async def async_agent(
    messages: Any, tools: Any, call_tool: Any, seed: int, case_id: str
) -> dict[str, Any]:
    out = await call_tool("lookup_order", '{"order_id": "ord_1"}')
    await asyncio.sleep(0)
    return {
        "content": f"{case_id}:{out.content['status']}",
        "usage": {"prompt_tokens": seed % 7 + 1},
    }


def batch_agent(messages: Any, tools: Any, call_tool: Any) -> None:
    outs = call_tool.batch(
        [("lookup_order", {"order_id": "ord_1"}), ("issue_refund", {"order_id": "ord_1"})]
    )
    assert [o.is_error for o in outs] == [False, True]
    return None


def raising_agent(messages: Any, tools: Any, call_tool: Any) -> str:
    call_tool("lookup_order", {"order_id": "ord_1"})
    raise KeyError("missing field")


def slow_agent(messages: Any, tools: Any, call_tool: Any) -> str:
    time.sleep(3)
    return "too late"


async def slow_async_agent(messages: Any, tools: Any, call_tool: Any) -> str:
    await asyncio.sleep(3)
    return "too late"


def greedy_agent(messages: Any, tools: Any, call_tool: Any) -> str:
    try:
        while True:
            call_tool("lookup_order", {"order_id": "ord_1"})
    except Exception:  # swallows the step-budget stop, as careless agents do
        return "I tried"


def wrong_return(messages: Any, tools: Any, call_tool: Any) -> int:
    return 42
