"""The ``mcp`` adapter with a Node agent on the official MCP TypeScript SDK
(``@modelcontextprotocol/sdk`` from the npm registry, pinned in ``tests/mcp/node``'s
package-lock.json and installed there by ``.ci/run``)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from gate.model import ToolCall
from tests.mcp.helpers import run_mcp

NODE_DIR = Path(__file__).resolve().parent / "node"
SDK = NODE_DIR / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json"


@pytest.fixture
def node_agent() -> list[str]:
    node = shutil.which("node")
    missing = "node is not on PATH" if node is None else None
    if node is not None and not SDK.exists():
        missing = f"the Node MCP SDK is not installed: run `npm ci --prefix {NODE_DIR}`"
    if missing:
        if os.environ.get("TOOLGATE_REQUIRE_NODE_SDK") == "1":  # .ci/run sets it
            pytest.fail(missing)
        pytest.skip(missing)
    assert node is not None
    return [node, str(NODE_DIR / "agent.mjs")]


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_node_sdk_agent__both_transports__calls_recorded_and_answered(
    tmp_path: Path, node_agent: list[str], transport: str
) -> None:
    (run,) = run_mcp(tmp_path, [*node_agent, transport, "lookup"])
    assert run.error is None
    assert run.calls == (ToolCall("lookup_order", {"order_id": "ord_1"}, id="call_0_0"),)
    assert run.final == 'order ord_1: {"status":"shipped"}'


def test_node_sdk_agent__promise_all__one_parallel_batch(
    tmp_path: Path, node_agent: list[str]
) -> None:
    (run,) = run_mcp(tmp_path, [*node_agent, "http", "parallel"], batch_window_ms=2000)
    assert run.error is None
    assert [sorted(c.name for c in t.calls) for t in run.turns] == [
        ["issue_refund", "lookup_order"]
    ]
