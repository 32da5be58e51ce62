"""Running cases through the ``mcp`` adapter with real agent processes."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Any

from gate.model import Case, FrozenResponse, Run
from gate.replay.runner import run_all
from gate.runsfile import iter_runs
from tests.replay.helpers import FakeDataset, case, config, response

AGENTS = Path(__file__).resolve().parent / "agents"
SDK_AGENT = AGENTS / "sdk_agent.py"

RESPONSES: tuple[FrozenResponse, ...] = (
    response("lookup_order", {"order_id": "ord_1"}, ok={"status": "shipped"}),
    response("lookup_order", None, ok={"status": "unknown order"}),
    response("issue_refund", None, ok={"refunded": True}),
)


def order_case(id: str = "c1", **kw: Any) -> Case:
    return case(id, responses=RESPONSES, **kw)


def sdk_agent(transport: str, scenario: str) -> list[str]:
    return [sys.executable, str(SDK_AGENT), transport, scenario]


def script_agent(tmp_path: Path, body: str) -> list[str]:
    """A plain Python program (no MCP client): for agents that never connect."""
    path = tmp_path / "plain_agent.py"
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return [sys.executable, str(path)]


def run_mcp(
    tmp_path: Path,
    command: list[str],
    cases: list[Case] | None = None,
    *,
    samples: int = 1,
    **agent: Any,
) -> list[Run]:
    """Run the cases (default: one order case) and return the runs in plan order."""
    agent_cfg: dict[str, Any] = {"kind": "mcp", "command": command, "timeout_s": 60, **agent}
    cfg = config(tmp_path, agent_cfg, concurrency=2)
    summary = run_all(
        cfg,
        FakeDataset(cases or [order_case()]),
        tmp_path / "out",
        samples=samples,
        shard=None,
        resume=False,
        progress=False,
    )
    runs = [run for _, run in iter_runs(summary.runs_path)]
    return sorted(runs, key=lambda r: (r.sample, r.case_id))


def error_kind(run: Run) -> str | None:
    return run.error.split(":", 1)[0] if run.error else None
