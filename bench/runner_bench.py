"""Runner overhead: wall time of ``run_all`` against the ideal for a given agent latency.

Two scenarios, each 2,000 case-samples (400 cases × 5 samples) at concurrency 32, every
case-sample being two agent steps (one tool call, then a final answer), each step taking
``--latency-ms`` (50 ms) in the agent:

* ``openai``  — the runner is the agent loop over the fake chat-completions server
  (``tests/servers/openai_server.py``), run in a *separate process* so that its own work
  does not count as runner overhead; the server delays every answer by the latency;
* ``command`` — 32 worker processes of a JSON-lines agent that sleeps the latency before
  each message. Reported twice: including the start-up of the 32 workers, and in steady
  state (workers started before the clock starts), since start-up is paid once per run.

ideal = latency × steps ÷ concurrency (the wall time with zero overhead); the ratio
wall ÷ ideal − 1 is the overhead (target: under 5 %). Each scenario runs ``--repeat``
times; medians are printed. Usage::

    /work/venv/bin/python bench/runner_bench.py [--cases 400] [--samples 5] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gate.config import Config  # noqa: E402
from gate.model import ArgMatcher, Case, FrozenResponse, MatcherKind, SourceRef, ToolSpec  # noqa: E402
from gate.replay.command import CommandPoolAgent  # noqa: E402
from gate.replay.runner import run_all  # noqa: E402

SERVER = """
import sys, time
sys.path.insert(0, {root!r})
from tests.servers.openai_server import FakeOpenAIServer, Response, chat_completion, tool_call
latency = {latency}

def script(req, i):
    if any(m.get("role") == "tool" for m in req["messages"]):
        return Response(body=chat_completion(content="done"), delay_s=latency)
    call = tool_call("lookup_order", {{"order_id": "ord_1"}})
    return Response(body=chat_completion(tool_calls=[call]), delay_s=latency)

with FakeOpenAIServer(script) as srv:
    print(srv.base_url, flush=True)
    sys.stdin.read()
"""

AGENT = """
import json, sys, time
latency = {latency}
for line in sys.stdin:
    msg = json.loads(line)
    time.sleep(latency)
    if msg["type"] == "start":
        out = {{"type": "tool_calls", "calls": [{{"id": "c1", "name": "lookup_order",
               "arguments": {{"order_id": "ord_1"}}}}]}}
    else:
        out = {{"type": "final", "content": "done"}}
    sys.stdout.write(json.dumps(out) + "\\n")
    sys.stdout.flush()
"""

TOOL = ToolSpec(
    "lookup_order",
    "Look up an order.",
    {"type": "object", "properties": {"order_id": {"type": "string"}}},
)


class _Dataset:
    def __init__(self, n: int):
        self.cases = tuple(
            Case(
                id=f"case-{i:05d}",
                user_input=f"where is order ord_1? ({i})",
                source=SourceRef("bench", i + 1),
                available_tools=(TOOL,),
                tool_responses=(
                    FrozenResponse(
                        "lookup_order",
                        {"order_id": ArgMatcher(MatcherKind.EQUAL, "ord_1")},
                        {"status": "shipped"},
                    ),
                ),
            )
            for i in range(n)
        )


def _config(tmp: Path, agent: dict[str, Any], concurrency: int) -> Config:
    cfg = Config.model_validate(
        {"dataset": {"path": "d.jsonl"}, "agent": agent, "concurrency": concurrency}
    )
    return cfg.model_copy(update={"source": tmp / "toolgate.yml"})


def _run(
    cfg: Config, ds: _Dataset, out: Path, samples: int, agent: Any = None
) -> tuple[float, int]:
    t0 = time.perf_counter()
    summary = run_all(
        cfg, ds, out, samples=samples, shard=None, resume=False, progress=False, agent=agent
    )
    wall = time.perf_counter() - t0
    if summary.errors:
        raise SystemExit(f"bench run had {summary.errors} errors: {summary.error_kinds}")
    return wall, summary.written


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=400)
    ap.add_argument("--samples", type=int, default=5)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--latency-ms", type=float, default=50.0, help="must be > 0")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if args.latency_ms <= 0:
        raise SystemExit("--latency-ms must be > 0 (the ideal is latency x steps / concurrency)")
    latency = args.latency_ms / 1000
    ds = _Dataset(args.cases)
    n = args.cases * args.samples
    steps = 2 * n
    ideal = latency * steps / args.concurrency
    print(
        f"{n} case-samples x 2 steps, latency {args.latency_ms:g} ms, concurrency "
        f"{args.concurrency}: ideal {ideal:.2f}s"
    )
    tmp = Path(tempfile.mkdtemp(prefix="toolgate-bench-"))
    results: dict[str, list[float]] = {"openai": [], "command (incl. start-up)": [],
                                       "command (steady state)": []}  # fmt: skip

    server = subprocess.Popen(
        [sys.executable, "-c", SERVER.format(root=str(ROOT), latency=latency)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        base_url = server.stdout.readline().strip()
        cfg = _config(
            tmp,
            {"kind": "openai", "model": "bench", "base_url": base_url, "timeout_s": 30,
             "api_key_env": "TOOLGATE_BENCH_NO_KEY"},
            args.concurrency,
        )  # fmt: skip
        for r in range(args.repeat):
            wall, _ = _run(cfg, ds, tmp / f"openai-{r}", args.samples)
            results["openai"].append(wall)
    finally:
        server.terminate()
        server.wait()

    agent_file = tmp / "agent.py"
    agent_file.write_text(textwrap.dedent(AGENT.format(latency=latency)))
    agent_cfg = {
        "kind": "command",
        "command": [sys.executable, str(agent_file)],
        "workers": args.concurrency,
        "timeout_s": 30,
    }
    cfg = _config(tmp, agent_cfg, args.concurrency)
    for r in range(args.repeat):
        wall, _ = _run(cfg, ds, tmp / f"command-{r}", args.samples)
        results["command (incl. start-up)"].append(wall)
        agent = CommandPoolAgent(cfg, cfg.agent)  # type: ignore[arg-type]
        agent.prepare(n)
        time.sleep(1.0)  # let the workers finish importing before the clock starts
        wall, _ = _run(cfg, ds, tmp / f"command-warm-{r}", args.samples, agent=agent)
        results["command (steady state)"].append(wall)

    print(f"{'scenario':28} {'median wall':>12} {'ideal':>7} {'ratio':>7} {'overhead':>9}  runs")
    for name, walls in results.items():
        med = statistics.median(walls)
        ratio = med / ideal
        print(
            f"{name:28} {med:11.2f}s {ideal:6.2f}s {ratio:7.3f} {100 * (ratio - 1):8.1f}%"
            f"  {json.dumps([round(w, 2) for w in walls])}"
        )


if __name__ == "__main__":
    main()
