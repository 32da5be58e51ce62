"""Runner overhead: wall time of ``run_all`` against the ideal for a given agent latency.

Two scenarios, each 2,000 case-samples (400 cases × 5 samples) at concurrency 32, every
case-sample being two agent steps (one tool call, then a final answer), each step taking
``--latency-ms`` (50 ms) in the agent:

* ``openai``  — the runner is the agent loop over a chat-completions server run in a
  *separate process* (``bench/lean_chat_server.py`` by default; ``--server tests`` for the
  scripted test server), so that its own work does not count as runner overhead; the
  server answers every request the latency after the kernel received it;
* ``command`` — 32 worker processes of a JSON-lines agent that sleeps the latency before
  each message. Reported twice: in steady state (workers started before the clock
  starts), and including the start-up of the 32 workers, which is paid once per run.

ideal = latency × steps ÷ concurrency (the wall time with zero overhead); wall ÷ ideal
− 1 is the overhead (target: under 5 %). The *floor* rows run the same schedule with no
runner at all — threads that only sleep; bare keep-alive ``http.client`` threads against
the same server; bare pipe exchanges with the same pre-started workers, then stopping them
(stdin closed, exit awaited, as ``run_all`` does); and, for the cold row, the same with
the 32 workers also started inside the clock (the agent's own start-up, which the ideal
leaves out) — so the ``÷ bare`` column isolates what the runner itself adds on this
machine (timers, the loopback and interpreter start-up cost something even without it).
Each scenario runs ``--repeat`` times; medians are printed. Usage::

    python bench/runner_bench.py [--cases 400] [--samples 5] [--repeat 3]
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any, ClassVar

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gate.config import Config  # noqa: E402
from gate.model import ArgMatcher, Case, FrozenResponse, MatcherKind, SourceRef, ToolSpec  # noqa: E402
from gate.replay.command import CommandPoolAgent  # noqa: E402
from gate.replay.runner import run_all  # noqa: E402

SERVER = """
import gc, sys, time
sys.path.insert(0, {root!r})
from tests.servers.openai_server import FakeOpenAIServer, Response, chat_completion, tool_call
latency = {latency}

def script(req, i):
    if any(m.get("role") == "tool" for m in req["messages"]):
        return Response(body=chat_completion(content="done"), delay_s=latency)
    call = tool_call("lookup_order", {{"order_id": "ord_1"}})
    return Response(body=chat_completion(tool_calls=[call]), delay_s=latency)

class _Discard(list):
    def append(self, item):  # the bench keeps no record of its 12,000 requests
        pass

gc.disable()  # a lean server: its collector's pauses are not the runner's overhead
with FakeOpenAIServer(script) as srv:
    srv.requests = _Discard()
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
        ids = {{"case_id": msg["case_id"], "sample": msg["sample"]}}
        out = {{"type": "tool_calls", "calls": [{{"id": "c1", "name": "lookup_order",
               "arguments": {{"order_id": "ord_1"}}}}]}}
    else:
        out = {{"type": "final", "content": "done"}}
    sys.stdout.write(json.dumps({{**out, **ids}}) + "\\n")
    sys.stdout.flush()
"""

TOOL = ToolSpec(
    "lookup_order",
    "Look up an order.",
    {"type": "object", "properties": {"order_id": {"type": "string"}}},
)


class _Dataset:
    display = "bench"
    sha256 = "0" * 64
    tools: ClassVar[dict[str, Any]] = {}

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


def _split(total: int, parts: int) -> list[int]:
    return [total // parts + (i < total % parts) for i in range(parts)]


def _threads(counts: list[int], work: Any) -> float:
    """Run ``work(i, n)`` in one thread per count; the wall time."""
    threads = [threading.Thread(target=work, args=(i, n)) for i, n in enumerate(counts)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - t0


def _floor_sleep(concurrency: int, steps: int, latency: float) -> float:
    """Threads that only sleep the latency, as many times as the runner has steps."""
    return _threads(
        _split(steps, concurrency), lambda i, n: [time.sleep(latency) for _ in range(n)]
    )


def _floor_http(base_url: str, concurrency: int, n: int) -> float:
    """The same two requests per case-sample from bare keep-alive ``http.client``
    threads, with no runner: what the server and the loopback cost by themselves."""
    url = urllib.parse.urlsplit(base_url)
    tools = [{"type": "function", "function": {"name": TOOL.name, "description": TOOL.description,
                                               "parameters": dict(TOOL.parameters)}}]  # fmt: skip
    user = {"role": "user", "content": "where is order ord_1? (0)"}
    first = json.dumps({"model": "bench", "messages": [user], "tools": tools}).encode()
    second = json.dumps({"model": "bench", "tools": tools, "messages": [
        user,
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "type": "function",
         "function": {"name": "lookup_order", "arguments": '{"order_id": "ord_1"}'}}]},
        {"role": "tool", "tool_call_id": "c", "content": '{"status": "shipped"}'},
    ]}).encode()  # fmt: skip

    def work(_i: int, count: int) -> None:
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
        for _ in range(count):
            for body in (first, second):
                conn.request("POST", url.path + "/chat/completions", body,
                             {"Content-Type": "application/json"})  # fmt: skip
                json.loads(conn.getresponse().read())
        conn.close()

    return _threads(_split(n, concurrency), work)


def _floor_pipes(argv: list[str], concurrency: int, n: int, *, cold: bool = False) -> float:
    """The same two exchanges per case-sample over bare pipes to pre-started workers, then
    stopping them (stdin closed, exit awaited) as ``run_all`` does; with ``cold``, the
    workers are also started inside the clock: the agent's own start-up."""
    t0 = time.perf_counter()
    procs = [
        subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        for _ in range(concurrency)
    ]
    if not cold:
        time.sleep(1.0)  # the workers finish importing before the clock starts
        t0 = time.perf_counter()
    start = json.dumps({"type": "start", "case_id": "x", "sample": 0, "seed": 1,
                        "messages": [], "tools": []}).encode() + b"\n"  # fmt: skip
    results = json.dumps({"type": "tool_results", "results": [
        {"id": "c1", "name": "lookup_order", "content": {"status": "shipped"},
         "is_error": False}]}).encode() + b"\n"  # fmt: skip

    def work(i: int, count: int) -> None:
        proc = procs[i]
        assert proc.stdin is not None and proc.stdout is not None
        for _ in range(count):
            for line in (start, results):
                proc.stdin.write(line)
                proc.stdin.flush()
                json.loads(proc.stdout.readline())

    try:
        _threads(_split(n, concurrency), work)
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.close()
        for proc in procs:
            proc.wait(timeout=10)
        return time.perf_counter() - t0
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def _median(xs: list[float]) -> float:
    return statistics.median(xs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=400)
    ap.add_argument("--samples", type=int, default=5)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--latency-ms", type=float, default=50.0, help="must be > 0")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--server",
        choices=("lean", "tests"),
        default="lean",
        help="the chat-completions server: bench/lean_chat_server.py (default), or the "
        "scripted test server tests/servers/openai_server.py (more CPU per request)",
    )
    args = ap.parse_args()
    if args.latency_ms <= 0:
        raise SystemExit("--latency-ms must be > 0 (the ideal is latency x steps / concurrency)")
    latency = args.latency_ms / 1000
    ds = _Dataset(args.cases)
    n = args.cases * args.samples
    steps = 2 * n
    ideal = latency * steps / args.concurrency
    c = args.concurrency
    print(f"{n} case-samples x 2 steps, latency {args.latency_ms:g} ms, concurrency {c}: "
          f"ideal {ideal:.2f}s; median of {args.repeat} runs")  # fmt: skip
    tmp = Path(tempfile.mkdtemp(prefix="toolgate-bench-"))
    rows: dict[str, list[float]] = {}
    floors: dict[str, str] = {}

    def add(name: str, wall: float) -> None:
        rows.setdefault(name, []).append(wall)

    server_argv = (
        [sys.executable, str(ROOT / "bench" / "lean_chat_server.py"), str(latency)]
        if args.server == "lean"
        else [sys.executable, "-c", SERVER.format(root=str(ROOT), latency=latency)]
    )
    server = subprocess.Popen(
        server_argv,
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
            c,
        )  # fmt: skip
        for r in range(args.repeat):
            add("sleeping threads (no I/O)", _floor_sleep(c, steps, latency))
            add("openai: bare http.client", _floor_http(base_url, c, n))
            add("openai: run_all", _run(cfg, ds, tmp / f"openai-{r}", args.samples)[0])
        floors["openai: run_all"] = "openai: bare http.client"
    finally:
        server.terminate()
        server.wait()

    agent_file = tmp / "agent.py"
    agent_file.write_text(textwrap.dedent(AGENT.format(latency=latency)))
    argv = [sys.executable, str(agent_file)]
    cfg = _config(tmp, {"kind": "command", "command": argv, "workers": c, "timeout_s": 30}, c)
    for r in range(args.repeat):
        add("command: bare pipes", _floor_pipes(argv, c, n))
        agent = CommandPoolAgent(cfg, cfg.agent)  # type: ignore[arg-type]
        agent.prepare(n)
        time.sleep(1.0)  # the workers finish importing before the clock starts
        add("command: run_all, warm", _run(cfg, ds, tmp / f"warm-{r}", args.samples, agent)[0])
        add("command: bare pipes, cold", _floor_pipes(argv, c, n, cold=True))
        add("command: run_all, cold", _run(cfg, ds, tmp / f"cold-{r}", args.samples)[0])
    floors["command: run_all, warm"] = "command: bare pipes"
    floors["command: run_all, cold"] = "command: bare pipes, cold"

    print(f"{'scenario':27} {'wall':>7} {'÷ ideal':>8} {'÷ bare':>7}   runs")
    for name, walls in rows.items():
        med = _median(walls)
        vs_bare = f"{med / _median(rows[floors[name]]):7.3f}" if name in floors else " " * 7
        print(f"{name:27} {med:6.2f}s {med / ideal:8.3f} {vs_bare}   "
              f"{json.dumps([round(w, 2) for w in walls])}")  # fmt: skip


if __name__ == "__main__":
    main()
