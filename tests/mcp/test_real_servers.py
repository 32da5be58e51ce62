"""A team's real MCP servers: `toolgate record` proxies to them, `toolgate import
mcp-tools` reads their tools/list, and `toolgate check` reports their drift."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gate.config import load_config
from gate.dataset import load_dataset
from gate.errors import UsageError
from gate.replay.record import record
from tests.mcp.helpers import SDK_AGENT

SERVER = Path(__file__).resolve().parent / "servers" / "crm_server.py"


def _toolgate(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gate", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture
def http_server() -> Iterator[str]:
    """The CRM server over streamable HTTP on a free port of 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), "http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        else:
            pytest.fail("the test MCP server did not start")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.kill()
        proc.wait(timeout=10)


def _stdio_server(variant: str = "v1") -> dict[str, Any]:
    return {
        "name": "crm",
        "command": [sys.executable, str(SERVER), "stdio"],
        "env": {"CRM_VARIANT": variant, "CRM_CALL_LOG": os.environ.get("CRM_CALL_LOG", "")},
    }


def _project(tmp_path: Path, agent: dict[str, Any], tools: Any) -> Path:
    row = {
        "id": "c1",
        "user_input": "where is my order ord_1?",
        "available_tools": tools,
        "expected_tool_calls": [{"name": "lookup_order", "args": {"order_id": "ord_1"}}],
        "tool_responses": [],
    }
    (tmp_path / "dataset.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    cfg = tmp_path / "toolgate.yml"
    cfg.write_text(
        json.dumps({"dataset": {"path": "dataset.jsonl"}, "agent": agent}), encoding="utf-8"
    )
    return cfg


TOOLS = [
    {
        "name": "lookup_order",
        "description": "Look up an order by its id.",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
    }
]


def test_record__mcp_agent_with_real_server__calls_proxied_and_frozen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "calls.jsonl"
    monkeypatch.setenv("CRM_CALL_LOG", str(log))
    monkeypatch.delenv("CI", raising=False)
    agent = {
        "kind": "mcp",
        "command": [sys.executable, str(SDK_AGENT), "http", "lookup"],
        "servers": [_stdio_server()],
    }
    cfg_path = _project(tmp_path, agent, TOOLS)
    config = load_config(cfg_path)
    dataset = load_dataset(tmp_path / "dataset.jsonl")
    out = tmp_path / "recorded.jsonl"
    summary = record(config, dataset.cases, tmp_path / "dataset.jsonl", out, None, environ={})
    assert summary.recorded == 1 and summary.agent_errors == ()
    row = json.loads(out.read_text(encoding="utf-8"))
    assert row["tool_responses"] == [
        {
            "name": "lookup_order",
            "args": {"order_id": "ord_1"},
            "response": {"order_id": "ord_1", "status": "shipped"},
        }
    ]
    assert [json.loads(line)["name"] for line in log.read_text().splitlines()] == ["lookup_order"]


def test_record__mcp_agent_without_servers_or_tools__usage_error(tmp_path: Path) -> None:
    cfg_path = _project(tmp_path, {"kind": "mcp", "command": ["true"]}, TOOLS)
    config = load_config(cfg_path)
    dataset = load_dataset(tmp_path / "dataset.jsonl")
    with pytest.raises(UsageError, match=r"agent\.servers"):
        record(
            config,
            dataset.cases,
            tmp_path / "dataset.jsonl",
            tmp_path / "o.jsonl",
            None,
            environ={},
        )


def test_record__mcp_servers_in_ci__refused_before_any_server_starts(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    agent = {"kind": "mcp", "command": ["true"], "servers": [_stdio_server()]}
    cfg = _project(tmp_path, agent, TOOLS)
    proc = _toolgate(
        "record",
        "--config",
        str(cfg),
        "--out",
        "o.jsonl",
        cwd=tmp_path,
        env={"CI": "true", "CRM_CALL_LOG": str(log)},
    )
    assert proc.returncode == 2
    assert "refuses to run when CI=true" in proc.stderr
    assert not log.exists()


def test_import_mcp_tools__http_server__writes_tools_json(tmp_path: Path, http_server: str) -> None:
    proc = _toolgate(
        "import", "mcp-tools", "--url", http_server, "--out", "tools.json", cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    tools = json.loads((tmp_path / "tools.json").read_text(encoding="utf-8"))
    assert [t["name"] for t in tools] == ["issue_refund", "lookup_order"]
    assert tools[1]["description"] == "Look up an order by its id."
    assert tools[1]["parameters"]["required"] == ["order_id"]
    again = _toolgate(
        "import", "mcp-tools", "--url", http_server, "--out", "tools.json", cwd=tmp_path
    )
    assert again.returncode == 2 and "already exists" in again.stderr


def test_import_mcp_tools__unreachable_server__exit_2_names_it(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    proc = _toolgate(
        "import",
        "mcp-tools",
        "--url",
        f"http://127.0.0.1:{port}/mcp",
        "--timeout",
        "10",
        "--out",
        "tools.json",
        cwd=tmp_path,
    )
    assert proc.returncode == 2
    assert "MCP server 'server'" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "tools.json").exists()


def test_check__server_advertises_drifted_tools__drift_in_results_and_comment(
    tmp_path: Path,
) -> None:
    imported = _toolgate(
        "import",
        "mcp-tools",
        "--command",
        f"{sys.executable} {SERVER} stdio",
        "--out",
        "tools.json",
        cwd=tmp_path,
    )
    assert imported.returncode == 0, imported.stderr
    never_connects = tmp_path / "agent.py"
    never_connects.write_text("print('no tools needed')\n", encoding="utf-8")
    agent = {
        "kind": "mcp",
        "command": [sys.executable, str(never_connects)],
        "servers": [_stdio_server("v2")],
    }
    cfg = _project(tmp_path, agent, "@tools.json")
    assert _toolgate("pin", "--config", str(cfg), cwd=tmp_path).returncode == 0
    proc = _toolgate("check", "--config", str(cfg), "--out", "out", cwd=tmp_path)
    # The agent never connects, in every case-sample alike: the run is not valid (exit code
    # 4, nothing said about the agent); the drift is reported all the same, never gating.
    assert proc.returncode == 4, proc.stderr
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    drift = {d["tool"]: (d["change"], d["server"]) for d in results["mcp_tool_drift"]}
    assert drift == {
        "cancel_order": ("added", "crm"),
        "issue_refund": ("removed", None),
        "lookup_order": ("changed", "crm"),
    }
    changed = next(d for d in results["mcp_tool_drift"] if d["tool"] == "lookup_order")
    assert any("include_events" in line for line in changed["diff"])
    comment = (tmp_path / "out" / "comment.md").read_text(encoding="utf-8")
    assert "Tool-definition drift (3)" in comment
    assert r"changed on MCP server `crm` \(pinned → advertised\)" in comment
