"""The MCP path's cost: per-case-sample overhead against ``command``, and the batch window.

Two measurements, each printed as a table with medians::

    python bench/mcp_bench.py [--cases 20] [--repeat 3] [--trials 200]

1. **Per-case-sample overhead.** The same cases (one ``lookup_order`` call, then the
   answer; no model time) run through ``run_all`` with ``--concurrency`` (2) at once:

   * ``command`` — a JSON-lines Python agent, long-lived workers (the reference);
   * ``mcp`` — an agent on the official MCP Python SDK (``mcp.Client`` on
     ``TOOLGATE_MCP_URL``), one process per case-sample as the adapter runs it, with the
     default ``batch_window_ms`` (50) and with 0;
   * ``mcp, node`` — the same with the Node agent on ``@modelcontextprotocol/sdk``
     (when ``tests/mcp/node`` is installed);
   * floors: the Python agent started directly (``subprocess.run``) against one endpoint
     kept open — the agent's own cost, without the adapter's per-case-sample work — and
     the interpreter importing the SDK alone — paid by any agent process.

   It prints the median ``latency_ms`` of a case-sample (as runs.jsonl records it), the
   wall time, and the ratio to ``command``.

2. **Batch window.** ``asyncio.gather`` of two ``call_tool`` s with the official SDK
   client (``mcp.Client``, negotiating the 2026-07-28 revision; and ``ClientSession``
   with the 2025 handshake) against one endpoint that answers at once
   (``batch_window_ms: 0``): the gap between the two requests' arrivals at the server,
   ``--trials`` times. A window shorter than the gap splits a parallel batch in two.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gate.config import Config  # noqa: E402
from gate.model import Case, ToolCall, ToolResult  # noqa: E402
from gate.replay.frozen import ReplayBackend  # noqa: E402
from gate.replay.mcp.endpoint import Endpoint  # noqa: E402
from gate.replay.mcp.host import McpHost  # noqa: E402
from gate.replay.runner import run_all  # noqa: E402
from gate.replay.session import Job, Session  # noqa: E402
from gate.runsfile import iter_runs  # noqa: E402
from tests.mcp.helpers import order_case  # noqa: E402

SDK_AGENT = ROOT / "tests" / "mcp" / "agents" / "sdk_agent.py"
NODE_DIR = ROOT / "tests" / "mcp" / "node"

COMMAND_AGENT = """
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "start":
        order = msg["messages"][-1]["content"].split()[-1].rstrip("?")
        call = {"id": "c1", "name": "lookup_order", "arguments": {"order_id": order}}
        print(json.dumps({"type": "tool_calls", "calls": [call]}), flush=True)
    elif msg["type"] == "tool_results":
        content = json.dumps(msg["results"][0]["content"])
        print(json.dumps({"type": "final", "content": "order: " + content}), flush=True)
"""


class _Cases:
    def __init__(self, cases: list[Case]) -> None:
        self.cases = tuple(cases)


def _config(folder: Path, agent: dict[str, Any], concurrency: int) -> Config:
    cfg = Config.model_validate(
        {"dataset": {"path": "dataset.jsonl"}, "agent": agent, "concurrency": concurrency}
    )
    return cfg.model_copy(update={"source": folder / "toolgate.yml"})


def _run(
    folder: Path, agent: dict[str, Any], cases: list[Case], concurrency: int
) -> dict[str, Any]:
    out = folder / "out"
    shutil.rmtree(out, ignore_errors=True)
    t0 = time.perf_counter()
    summary = run_all(
        _config(folder, agent, concurrency),
        _Cases(cases),
        out,
        samples=1,
        shard=None,
        resume=False,
        progress=False,
    )
    wall = time.perf_counter() - t0
    runs = [run for _, run in iter_runs(summary.runs_path)]
    errors = [r.error.splitlines()[0] for r in runs if r.error]
    if errors:
        raise SystemExit(f"{agent['kind']}: {len(errors)} case-sample(s) failed: {errors[0]}")
    return {"latency": statistics.median(r.latency_ms or 0.0 for r in runs), "wall": wall}


def _floors(cases_n: int) -> tuple[float, float]:
    """Median ms of (a) the Python agent's own start-up — importing the SDK, nothing
    else — and (b) the same agent as ``mcp`` runs it, but started directly (one
    ``subprocess.run``) against one endpoint kept open: what the agent costs without the
    adapter's per-case-sample work (endpoint, case file, process group, waits)."""
    imports, direct = [], []
    case = order_case()
    host = McpHost()
    host.start()
    job = Job(case=case, sample=0, seed=0, step_budget=10**6, timeout_s=600)
    endpoint = Endpoint(
        Session(job, ReplayBackend(case)), batch_window_s=0.05, max_connections=10**6
    )
    url = host.open(endpoint)
    with tempfile.TemporaryDirectory() as tmp:
        case_file = Path(tmp) / "case.json"
        case_file.write_text(json.dumps({"user_input": case.user_input}), encoding="utf-8")
        env = {**os.environ, "TOOLGATE_MCP_URL": url, "TOOLGATE_CASE": str(case_file)}
        try:
            for _ in range(cases_n):
                t0 = time.perf_counter()
                subprocess.run(
                    [sys.executable, "-c", "import mcp, mcp.client.streamable_http"], check=True
                )
                imports.append((time.perf_counter() - t0) * 1000)
                t0 = time.perf_counter()
                subprocess.run(
                    [sys.executable, str(SDK_AGENT), "http", "lookup"],
                    check=True,
                    env=env,
                    stdout=subprocess.DEVNULL,
                )
                direct.append((time.perf_counter() - t0) * 1000)
        finally:
            host.stop()
    return statistics.median(imports), statistics.median(direct)


def overhead(cases_n: int, repeat: int, concurrency: int) -> None:
    cases = [order_case(f"c{i}", user=f"where is my order ord_{i}?") for i in range(cases_n)]
    with tempfile.TemporaryDirectory(prefix="toolgate-mcp-bench-") as tmp:
        folder = Path(tmp)
        (folder / "agent.py").write_text(COMMAND_AGENT, encoding="utf-8")
        python_mcp = [sys.executable, str(SDK_AGENT), "http", "lookup"]
        scenarios: list[tuple[str, dict[str, Any]]] = [
            ("command (JSON lines, warm workers)",
             {"kind": "command", "command": [sys.executable, "agent.py"], "workers": concurrency}),
            ("mcp, Python SDK agent, batch_window_ms 50",
             {"kind": "mcp", "command": python_mcp, "workers": concurrency}),
            ("mcp, Python SDK agent, batch_window_ms 0",
             {"kind": "mcp", "command": python_mcp, "workers": concurrency, "batch_window_ms": 0}),
        ]  # fmt: skip
        node = shutil.which("node")
        if node and (NODE_DIR / "node_modules").exists():
            scenarios.append(
                ("mcp, Node SDK agent, batch_window_ms 50",
                 {"kind": "mcp", "command": [node, str(NODE_DIR / "agent.mjs"), "http", "lookup"],
                  "workers": concurrency}),
            )  # fmt: skip
        rows: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in scenarios}
        floors: list[tuple[float, float]] = []
        for _ in range(repeat):
            for name, agent in scenarios:
                rows[name].append(_run(folder, agent, cases, concurrency))
            floors.append(_floors(min(cases_n, 10)))
    ref = statistics.median(r["latency"] for r in rows[scenarios[0][0]])
    print(f"\nper-case-sample cost, {cases_n} cases x {repeat} runs, concurrency {concurrency}")
    print(f"{'scenario':<44} {'median ms':>10} {'wall s':>8} {'x command':>10}")
    for name, _ in scenarios:
        lat = statistics.median(r["latency"] for r in rows[name])
        wall = statistics.median(r["wall"] for r in rows[name])
        print(f"{name:<44} {lat:>10.1f} {wall:>8.2f} {lat / ref:>10.1f}")
    imports = statistics.median(f[0] for f in floors)
    direct = statistics.median(f[1] for f in floors)
    print(f"{'floor: the Python agent started directly':<44} {direct:>10.1f}")
    print(f"{'floor: python -c import mcp':<44} {imports:>10.1f}")


async def _gaps(trials: int, legacy: bool) -> list[float]:
    from mcp import Client, ClientSession
    from mcp.client.streamable_http import streamable_http_client

    arrivals: list[float] = []
    case = order_case()
    host = McpHost()
    host.start()

    class Timed(Endpoint):
        def _enqueue(self, call: ToolCall) -> asyncio.Future[ToolResult | None]:
            arrivals.append(time.perf_counter())
            return super()._enqueue(call)

    job = Job(case=case, sample=0, seed=0, step_budget=10**6, timeout_s=60)
    endpoint = Timed(Session(job, ReplayBackend(case)), batch_window_s=0, max_connections=1)
    url = host.open(endpoint)
    gaps: list[float] = []

    async def pair(client: Any) -> None:
        arrivals.clear()
        await asyncio.gather(
            client.call_tool("lookup_order", {"order_id": "ord_1"}),
            client.call_tool("issue_refund", {"order_id": "ord_1"}),
        )
        gaps.append((arrivals[1] - arrivals[0]) * 1000)

    try:
        if legacy:
            async with (
                streamable_http_client(url) as (read, write, *_),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                for _ in range(trials):
                    await pair(session)
        else:
            async with Client(url) as client:
                for _ in range(trials):
                    await pair(client)
    finally:
        host.stop()
    return gaps


def window(trials: int) -> None:
    print(f"\ngap between the arrivals of two gathered call_tool requests, {trials} trials (ms)")
    print(f"{'client':<44} {'p50':>7} {'p90':>7} {'p99':>7} {'max':>7}")
    for name, legacy in (("mcp.Client (2026-07-28, stateless)", False),
                         ("ClientSession (2025 handshake)", True)):  # fmt: skip
        gaps = sorted(asyncio.run(_gaps(trials, legacy)))

        def q(p: float, gaps: list[float] = gaps) -> float:
            return gaps[min(len(gaps) - 1, int(p * len(gaps)))]

        print(f"{name:<44} {q(0.5):>7.2f} {q(0.9):>7.2f} {q(0.99):>7.2f} {gaps[-1]:>7.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--only", choices=["overhead", "window"], default=None)
    args = parser.parse_args()
    with open("/proc/loadavg", encoding="ascii") as fh:
        print("load average at start:", " ".join(fh.read().split()[:3]))
    if args.only in (None, "window"):
        window(args.trials)
    if args.only in (None, "overhead"):
        overhead(args.cases, args.repeat, args.concurrency)
    print(json.dumps({"python": sys.version.split()[0]}))


if __name__ == "__main__":
    main()
