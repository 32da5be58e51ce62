"""Python agents for the ``python`` adapter tests (imported as ``module:callable``)."""

from __future__ import annotations

import asyncio
import json
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


def recording_agent(messages: Any, tools: Any, call_tool: Any) -> str:
    a = call_tool("lookup_order", {"order_id": "ord_1"})
    b = call_tool("lookup_order", {"order_id": "ord_2"})
    c = call_tool("lookup_order", {"order_id": "ord_2"})  # the same call: real tool runs once
    d = call_tool("issue_refund", {"order_id": "ord_2"})
    e = call_tool("not_a_real_tool", {})
    return json.dumps([x.content for x in (a, b, c, d, e)])


REAL_CALLS: list[tuple[str, str]] = []


def _lookup(order_id: str) -> dict[str, Any]:
    REAL_CALLS.append(("lookup_order", order_id))
    return {"order_id": order_id, "status": "delivered"}


def _refund(order_id: str) -> dict[str, Any]:
    REAL_CALLS.append(("issue_refund", order_id))
    raise RuntimeError("payments API returned 503")


REGISTRY = {"lookup_order": _lookup, "issue_refund": _refund}


# ─── agents that end, crash or stall their process (run in a worker process) ──


def _only_bad(case_id: str, call_tool: Any) -> str | None:
    """The answer of every case but ``bad``; None for ``bad`` (the caller misbehaves)."""
    if case_id == "bad":
        return None
    out = call_tool("lookup_order", {"order_id": "ord_1"})
    return f"{case_id}: {out.content['status']}"


def os_exit_agent(messages: Any, tools: Any, call_tool: Any, case_id: str) -> str:
    import os

    answer = _only_bad(case_id, call_tool)
    if answer is None:
        call_tool("lookup_order", {"order_id": "ord_1"})
        os._exit(0)
    return answer


def segfault_agent(messages: Any, tools: Any, call_tool: Any, case_id: str) -> str:
    import ctypes

    answer = _only_bad(case_id, call_tool)
    if answer is None:
        ctypes.string_at(0)  # reads address 0: SIGSEGV
    return answer or ""


def kill_segv_agent(messages: Any, tools: Any, call_tool: Any, case_id: str) -> str:
    import os
    import signal

    answer = _only_bad(case_id, call_tool)
    if answer is None:
        os.kill(os.getpid(), signal.SIGSEGV)
    return answer or ""


def sys_exit_agent(messages: Any, tools: Any, call_tool: Any, case_id: str) -> str:
    import sys

    answer = _only_bad(case_id, call_tool)
    if answer is None:
        sys.exit(3)
    return answer


def endless_agent(messages: Any, tools: Any, call_tool: Any, case_id: str) -> str:
    answer = _only_bad(case_id, call_tool)
    while answer is None:
        pass
    return answer


def printing_agent(messages: Any, tools: Any, call_tool: Any) -> str:
    import sys

    print("a print() on stdout")  # must not break the protocol
    print('{"type": "final", "content": "forged"}')
    sys.stdout.flush()
    out = call_tool("lookup_order", {"order_id": "ord_1"})
    return str(out.content["status"])


def pid_agent(messages: Any, tools: Any, call_tool: Any) -> str:
    import os

    return str(os.getpid())
