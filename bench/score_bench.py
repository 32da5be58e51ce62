"""Benchmark: ``toolgate score`` on 100,000 case-samples, against merely decoding the runs
file and against the peers a user would pick instead.

What it does, all on the same files on disk:

1. generates a dataset (realistic tool schemas: enums, patterns, nested objects, arrays,
   ``additionalProperties: false``; 1–5 expected calls per case, parallel groups, no-tool
   cases, must-not-call lists, acceptable alternatives, strict/superset order modes) and a
   runs file of N case-samples (default 100,000 = 20,000 cases × 5 samples) whose agent
   makes 1–5 calls with realistic faults: wrong and missing values, extra arguments,
   arguments that do not parse, unknown tools, type errors, retry loops (duplicates),
   extra and dropped calls, reordered turns, parallel batches, tool errors;
2. times merely decoding the runs file line by line (stdlib ``json`` and ``orjson``);
3. runs the whole ``toolgate score`` process (every scorer on; results.json with every
   sample's scores, reasons and evidence written) — the median of ``--repeat`` runs — and
   reads its peak memory from the kernel (``wait4``);
4. runs each peer (``bench/score_peers.py``) in its own bench-only virtualenv under
   ``bench-venvs/`` at the repository's root (``--venvs``, or ``TOOLGATE_PEER_VENVS``):
   DeepEval's ``ToolCorrectnessMetric``, agentevals'
   trajectory match (strict and unordered) and BFCL's AST checker; each reads the same
   dataset and runs file and computes its one number (imports not charged to it).

``--compare OTHER`` instead times another checkout's ``toolgate score`` against this
one's on the same files, alternately, ``--repeat`` rounds (OTHER: a folder holding its
``gate`` package, e.g. ``git worktree add /tmp/before <commit>``). With ``--paired`` both
run at once, each pinned to a core of its own (swapped every round, one scoring process
each): the host's drift then touches both alike.

It prints case-samples per second for every side, the ratio of ToolGate's whole process
to decoding alone, and ToolGate's speed-up over the fastest peer. ``--quick`` (N = 2,000,
one repeat, peers skipped when their venv is missing) is the CI smoke test.

Install the peers (never runtime dependencies)::

    V=bench-venvs   # at the repository's root; git-ignored
    python3 -m venv $V/deepeval   && $V/deepeval/bin/pip install deepeval
    python3 -m venv $V/agentevals && $V/agentevals/bin/pip install agentevals
    python3 -m venv $V/bfcl       && $V/bfcl/bin/pip install bfcl-eval soundfile
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

# ─── the tools ────────────────────────────────────────────────────────────────

_ID = {"type": "string", "pattern": "^ord_[0-9]{4,8}$"}
TOOLS: list[dict[str, Any]] = [
    {
        "name": "lookup_order",
        "description": "Look up an order by its ID.",
        "parameters": {
            "type": "object",
            "properties": {"order_id": _ID, "include_items": {"type": "boolean"}},
            "required": ["order_id"],
            "additionalProperties": False,
        },
    },
    {
        "name": "issue_refund",
        "description": "Refund an order, fully or partly.",
        "parameters": {
            "type": "object",
            "properties": {
                "order_id": _ID,
                "amount": {"type": "number", "minimum": 0},
                "reason": {"type": "string", "enum": ["damaged", "late", "wrong_item", "other"]},
                "notify": {"type": "boolean"},
            },
            "required": ["order_id", "amount", "reason"],
            "additionalProperties": False,
        },
    },
    {
        "name": "search_docs",
        "description": "Search the help centre.",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1},
                "top_k": {"type": "integer", "minimum": 1, "maximum": 20},
                "filters": {
                    "type": "object",
                    "properties": {
                        "category": {"type": "string", "enum": ["billing", "shipping", "returns"]},
                        "lang": {"type": "string"},
                    },
                    "additionalProperties": False,
                },
            },
            "required": ["query"],
        },
    },
    {
        "name": "send_email",
        "description": "Send an email to the customer.",
        "parameters": {
            "type": "object",
            "properties": {
                "to": {
                    "type": "array",
                    "items": {"type": "string", "pattern": ".+@.+"},
                    "minItems": 1,
                },
                "subject": {"type": "string", "maxLength": 200},
                "body": {"type": "string"},
                "cc": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["to", "subject", "body"],
            "additionalProperties": False,
        },
    },
    {
        "name": "update_shipping_address",
        "description": "Change where an order ships.",
        "parameters": {
            "type": "object",
            "properties": {
                "order_id": _ID,
                "address": {
                    "type": "object",
                    "properties": {
                        "line1": {"type": "string"},
                        "city": {"type": "string"},
                        "postcode": {"type": "string"},
                        "country": {"type": "string", "enum": ["GB", "US", "DE", "FR"]},
                    },
                    "required": ["line1", "city", "postcode", "country"],
                    "additionalProperties": False,
                },
            },
            "required": ["order_id", "address"],
            "additionalProperties": False,
        },
    },
    {
        "name": "get_weather",
        "description": "Weather forecast for a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "units": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                "days": {"type": "integer", "minimum": 1, "maximum": 14},
            },
            "required": ["city"],
        },
    },
    {
        "name": "create_reminder",
        "description": "Create a reminder.",
        "parameters": {
            "type": "object",
            "properties": {
                "title": {"type": "string"},
                "at": {"type": "string", "format": "date-time"},
                "repeat": {"type": "string", "enum": ["none", "daily", "weekly"]},
            },
            "required": ["title", "at"],
        },
    },
    {
        "name": "cancel_order",
        "description": "Cancel an order.",
        "parameters": {
            "type": "object",
            "properties": {"order_id": _ID, "reason": {"type": "string"}},
            "required": ["order_id"],
            "additionalProperties": False,
        },
    },
    {
        "name": "verify_identity",
        "description": "Verify the customer's identity.",
        "parameters": {
            "type": "object",
            "properties": {
                "customer_id": {"type": "string"},
                "method": {"type": "string", "enum": ["sms", "email"]},
            },
            "required": ["customer_id", "method"],
            "additionalProperties": False,
        },
    },
    {
        "name": "delete_account",
        "description": "Delete the customer's account.",
        "parameters": {
            "type": "object",
            "properties": {"customer_id": {"type": "string"}, "confirm": {"const": True}},
            "required": ["customer_id", "confirm"],
        },
    },
]
_BY_NAME = {t["name"]: t for t in TOOLS}
_CITIES = ["Berlin", "Paris", "Munich", "London", "New York", "Lisbon", "Oslo", "Tokyo"]
_WORDS = "refund policy damaged items late delivery address change invoice tracking".split()  # noqa: SIM905


def _value(rng: random.Random, schema: dict[str, Any], name: str) -> Any:
    if "enum" in schema:
        return rng.choice(schema["enum"])
    if "const" in schema:
        return schema["const"]
    t = schema.get("type")
    if t == "string":
        if "pattern" in schema and schema["pattern"].startswith("^ord_"):
            return f"ord_{rng.randint(1000, 99999)}"
        if "pattern" in schema:
            return f"user{rng.randint(1, 999)}@example.com"
        if name == "city":
            return rng.choice(_CITIES)
        if name == "at":
            month, day, hour = rng.randint(1, 12), rng.randint(1, 28), rng.randint(0, 23)
            return f"2026-{month:02d}-{day:02d}T{hour:02d}:00:00Z"
        return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 4)))
    if t == "integer":
        return rng.randint(schema.get("minimum", 1), schema.get("maximum", 10))
    if t == "number":
        return round(rng.uniform(1, 300), 2)
    if t == "boolean":
        return rng.random() < 0.5
    if t == "array":
        return [
            _value(rng, schema.get("items", {"type": "string"}), name)
            for _ in range(rng.randint(1, 2))
        ]
    if t == "object":
        return _args(rng, schema, optional=0.5)
    return "x"


def _args(rng: random.Random, schema: dict[str, Any], *, optional: float = 0.3) -> dict[str, Any]:
    req = set(schema.get("required", []))
    out = {}
    for k, sub in schema.get("properties", {}).items():
        if k in req or rng.random() < optional:
            out[k] = _value(rng, sub, k)
    return out


# ─── the dataset and the runs ─────────────────────────────────────────────────


def generate(workdir: Path, n: int, samples: int, seed: int = 7) -> tuple[Path, Path, Path]:
    """dataset.jsonl + tools.json + runs.jsonl with ``n`` case-samples; returns their paths."""
    rng = random.Random(seed)
    n_cases = max(1, n // samples)
    tools_path = workdir / "tools.json"
    tools_path.write_text(json.dumps([{"type": "function", "function": t} for t in TOOLS]))
    ds_path = workdir / "dataset.jsonl"
    runs_path = workdir / "runs.jsonl"
    names = [t["name"] for t in TOOLS if t["name"] != "delete_account"]
    with ds_path.open("w") as ds, runs_path.open("w") as rf:
        for ci in range(n_cases):
            cid = f"case-{ci:06d}"
            no_tool = rng.random() < 0.1
            expected: list[dict[str, Any]] = []
            groups: list[int] = []  # turn group of each expected call
            if not no_tool:
                k = rng.choices([1, 2, 3, 4, 5], weights=[35, 30, 18, 10, 7])[0]
                g = 0
                for i in range(k):
                    name = rng.choice(names)
                    # The expectation names the arguments that matter (required ones).
                    full = _args(rng, _BY_NAME[name]["parameters"])
                    req = _BY_NAME[name]["parameters"].get("required", [])
                    expected.append(
                        {
                            "name": name,
                            "args": {a: full[a] for a in req if a in full},
                            "_full": full,
                        }
                    )
                    if i and rng.random() < 0.3:
                        groups.append(g)  # parallel with the previous call
                    else:
                        g += 1 if i else 0
                        groups.append(g)
            case: dict[str, Any] = {
                "id": cid,
                "user_input": f"request {ci}",
                "available_tools": "@tools.json",
                "expected_tool_calls": [{"name": e["name"], "args": e["args"]} for e in expected],
                "difficulty": rng.choice(["easy", "medium", "hard"]),
                "tags": [rng.choice(["orders", "billing", "search", "account"])],
            }
            if no_tool:
                case["expected_no_tool"] = True
            if rng.random() < 0.2:
                case["must_not_call"] = ["delete_account"]
            r = rng.random()
            if r < 0.15:
                case["order"] = "strict"
            elif r < 0.2:
                case["order"] = "superset"
            if expected and rng.random() < 0.05:
                alt = dict(expected[0])
                case["acceptable_alternatives"] = [
                    [{"name": "search_docs", "args": {"query": "help"}}]
                    + [{"name": e["name"], "args": e["args"]} for e in expected[1:]]
                ]
                del alt
            ds.write(json.dumps(case) + "\n")
            for s in range(samples):
                rf.write(json.dumps(_run(rng, cid, s, expected, groups, no_tool)) + "\n")
    return ds_path, tools_path, runs_path


def _run(
    rng: random.Random,
    cid: str,
    sample: int,
    expected: list[dict[str, Any]],
    groups: list[int],
    no_tool: bool,
) -> dict[str, Any]:
    turns: dict[int, list[dict[str, Any]]] = {}
    if no_tool:
        if rng.random() < 0.15:
            turns[0] = [{"name": "search_docs", "arguments": {"query": "help"}}]
    else:
        for e, g in zip(expected, groups, strict=True):
            if rng.random() < 0.03:
                continue  # dropped call
            args = json.loads(json.dumps(e["_full"]))
            call: dict[str, Any] = {"name": e["name"], "arguments": args}
            p = rng.random()
            if p < 0.06 and args:
                k = rng.choice(sorted(args))
                args[k] = _value(
                    rng, _BY_NAME[e["name"]]["parameters"]["properties"][k], k
                )  # wrong value
            elif p < 0.09 and args:
                args.pop(rng.choice(sorted(args)))  # missing argument
            elif p < 0.12:
                args["customer_email"] = "a@b.c"  # undeclared argument
            elif p < 0.15:
                call = {
                    "name": e["name"],
                    "arguments": None,
                    "parse_ok": False,
                    "raw_arguments": json.dumps(args)[:-3],
                }  # truncated JSON
            elif p < 0.17:
                call["name"] = e["name"] + "s"  # unknown tool
            elif p < 0.20:
                bools = [k for k, v in args.items() if isinstance(v, bool)]
                if bools:
                    args[bools[0]] = "yes"  # string for a boolean
            turns.setdefault(g, []).append(call)
            if rng.random() < 0.03:
                turns.setdefault(g + 100, []).append(json.loads(json.dumps(call)))  # retry loop
        if rng.random() < 0.05:
            extra = rng.choice(TOOLS)
            turns.setdefault(50, []).append(
                {"name": extra["name"], "arguments": _args(rng, extra["parameters"])}
            )
    order = sorted(turns)
    if len(order) > 1 and rng.random() < 0.05:
        order[0], order[1] = order[1], order[0]
    out_turns = []
    cn = 0
    for t in order:
        calls = turns[t]
        results = []
        for c in calls:
            c["id"] = f"call_{cn}"
            cn += 1
            err = rng.random() < 0.05
            results.append(
                {
                    "id": c["id"],
                    "content": {"status": 500} if err else {"ok": True},
                    "is_error": err,
                }
            )
        out_turns.append({"calls": calls, "tool_results": results, "content": None})
    return {
        "case_id": cid,
        "sample": sample,
        "turns": out_turns,
        "final": "Done.",
        "error": None,
        "latency_ms": round(rng.uniform(200, 3000), 1),
        "usage": {
            "prompt_tokens": rng.randint(200, 900),
            "completion_tokens": rng.randint(10, 120),
        },
    }


# ─── timing ───────────────────────────────────────────────────────────────────


def timed_process(
    cmd: list[str], env: dict[str, str] | None = None, cwd: Path | None = None
) -> tuple[float, float, int, str]:
    """(wall seconds, CPU seconds, peak RSS in MiB, stdout) of one child process.

    CPU is user + system time from ``wait4``, which on Linux includes the child's own
    waited-for children (ToolGate's worker processes); peak RSS is the largest single
    process's resident set.
    """
    with tempfile.TemporaryFile() as err_fh:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err_fh, env=env, cwd=cwd)
        out = proc.stdout.read() if proc.stdout else b""
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err_fh.seek(0)
            tail = err_fh.read().decode(errors="replace")[-3000:]
            raise SystemExit(f"{' '.join(cmd[:4])}... failed ({proc.returncode}):\n{tail}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss // 1024, out.decode()


def _timing_of(results: Path) -> dict[str, Any]:
    """results.json's ``timing``, read in a child process: loading the whole file here
    would grow this process by gigabytes, and the next toolgate process, forked from it,
    would report that as its own peak RSS (Linux keeps the pre-exec high-water mark)."""
    code = "import json, sys; print(json.dumps(json.load(open(sys.argv[1])).get('timing', {})))"
    out = subprocess.run(
        [sys.executable, "-c", code, str(results)], capture_output=True, check=True, text=True
    ).stdout
    timing: dict[str, Any] = json.loads(out)
    return timing


def decode_time(runs: Path, decoder: str, repeat: int) -> float:
    """Median seconds to read and decode every line (in this process)."""
    import orjson

    loads = orjson.loads if decoder == "orjson" else json.loads
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        with runs.open("rb") as fh:
            for line in fh:
                loads(line)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=100_000, help="case-samples (default 100,000)")
    ap.add_argument("--samples", type=int, default=5, help="samples per case (default 5)")
    ap.add_argument("--repeat", type=int, default=3, help="toolgate runs; the median is reported")
    ap.add_argument(
        "--quick", action="store_true", help="CI smoke test: N=2,000, one repeat, peers optional"
    )
    ap.add_argument(
        "--peers",
        default="deepeval,agentevals-strict,agentevals-unordered,bfcl",
        help="comma-separated peers to run ('' for none)",
    )
    ap.add_argument(
        "--venvs",
        default=os.environ.get("TOOLGATE_PEER_VENVS", "bench-venvs"),
        help="folder of the peers' virtualenvs (default: $TOOLGATE_PEER_VENVS or bench-venvs)",
    )
    ap.add_argument("--workdir", default=None, help="keep the generated files here")
    ap.add_argument(
        "--toolgate", default=None, help="the toolgate executable (default: beside this python)"
    )
    ap.add_argument(
        "--compare",
        type=Path,
        metavar="OTHER",
        help="a folder holding another checkout's gate package: time it against this one",
    )
    ap.add_argument(
        "--paired",
        action="store_true",
        help="with --compare: run both at once, each pinned to its own core, serially",
    )
    args = ap.parse_args(argv)
    if args.paired and args.compare is None:
        ap.error("--paired times two checkouts: give the other with --compare")
    if args.quick:
        args.n = min(args.n, 2_000)
        args.repeat = 1
    work = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="toolgate-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        return _bench(args, work)
    finally:
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)


def _bench(args: argparse.Namespace, work: Path) -> int:
    t0 = time.perf_counter()
    ds, _tools, runs = generate(work, args.n, args.samples)
    if args.compare is not None:
        return compare(args.compare, ds, runs, work, args.repeat, paired=args.paired)
    n = sum(1 for _ in runs.open("rb"))
    size_mb = runs.stat().st_size / 1e6
    print(
        f"generated {n:,} case-samples ({size_mb:.1f} MB runs file) "
        f"in {time.perf_counter() - t0:.1f}s"
    )
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"machine: {os.cpu_count()} cores, load average {load:.2f}, Python {sys.version.split()[0]}"
    )

    rows: list[tuple[str, float, float, str]] = []  # (name, seconds, cases/s, note)
    reps = max(3, args.repeat)
    t_json = decode_time(runs, "json", reps)
    t_orjson = decode_time(runs, "orjson", reps)
    rows.append(("decode only: json.loads per line", t_json, n / t_json, "in-process, median"))
    rows.append(
        ("decode only: orjson.loads per line", t_orjson, n / t_orjson, "in-process, median")
    )

    # Timed as installed: pip byte-compiles a package it installs, but an editable
    # checkout run with PYTHONDONTWRITEBYTECODE set (as on some CI machines) would compile
    # every module from source at every start. Compiled once here, untimed (in a child:
    # importing gate here would raise the high-water mark the timed children inherit).
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import compileall, gate, os; "
            "compileall.compile_dir(os.path.dirname(gate.__file__), quiet=1)",
        ],
        check=True,
    )
    script = Path(sys.executable).with_name("toolgate")
    exe = (
        [args.toolgate]
        if args.toolgate
        else [str(script)]
        if script.exists()
        else [sys.executable, "-m", "gate"]
    )
    walls, cpus = [], []
    peak = 0
    timing: dict[str, Any] = {}
    results_mb = 0.0
    for i in range(args.repeat):
        out = work / f"out{i}"
        cmd = [*exe, "score", "--dataset", str(ds), "--runs", str(runs), "--out", str(out)]
        wall, cpu, peak_mib, _ = timed_process(cmd)
        walls.append(wall)
        cpus.append(cpu)
        peak = max(peak, peak_mib)
        timing = _timing_of(out / "results.json")
        results_mb = (out / "results.json").stat().st_size / 1e6
        shutil.rmtree(out, ignore_errors=True)
    t_tg = statistics.median(walls)
    cpu_tg = statistics.median(cpus)
    rows.append(
        (
            "toolgate score (whole process, all metrics)",
            t_tg,
            n / t_tg,
            f"median of {args.repeat}; CPU {cpu_tg:.1f}s; peak RSS {peak} MiB; "
            f"results.json {results_mb:.0f} MB",
        )
    )

    peer_rows = []
    for peer in [p for p in args.peers.split(",") if p]:
        venv = Path(args.venvs) / peer.split("-")[0]
        py = venv / "bin" / "python"
        if not py.exists():
            msg = f"peer {peer}: no venv at {venv} (see the module docstring to install it)"
            if args.quick:
                print("skipped " + msg)
                continue
            raise SystemExit(msg)
        env = dict(os.environ, PYTHONWARNINGS="ignore")
        cmd = [str(py), str(HERE / "score_peers.py"), peer, str(ds), str(runs)]
        wall, cpu, _, out_text = timed_process(cmd, env=env)
        rec = json.loads(out_text.strip().splitlines()[-1])
        assert rec["n"] == n, rec
        rows.append(
            (
                f"peer {peer} (one number)",
                rec["scored_s"],
                n / rec["scored_s"],
                f"imports {rec['import_s']:.1f}s not charged; whole process {wall:.1f}s, "
                f"CPU {cpu:.1f}s",
            )
        )
        peer_rows.append((peer, n / rec["scored_s"]))

    print()
    print(f"{'side':48} {'seconds':>9} {'cases/s':>11}  note")
    for name, secs, rate, note in rows:
        print(f"{name:48} {secs:9.2f} {rate:11,.0f}  {note}")
    print()
    print(f"toolgate inside: {json.dumps(timing)}")
    print(
        f"ratio toolgate whole process / json.loads decode:   {t_tg / t_json:5.2f}x (target <= 3)"
    )
    print(f"ratio toolgate whole process / orjson.loads decode: {t_tg / t_orjson:5.2f}x")
    if peer_rows:
        best_peer, best_rate = max(peer_rows, key=lambda x: x[1])
        print(
            f"speed-up over the fastest peer ({best_peer}): "
            f"{n / t_tg / best_rate:5.2f}x (target >= 2)"
        )
    return 0


def _pin(core: int) -> Callable[[], None]:
    """What a child runs before it starts: keep to ``core``."""
    return lambda: os.sched_setaffinity(0, {core})


def compare(
    other: Path, ds: Path, runs: Path, work: Path, rounds: int, *, paired: bool = False
) -> int:
    """``toolgate score`` from ``other``'s gate package and from this checkout's, on the
    same files, alternately (the order flips every round; ``paired``: at once, on a core
    each, the cores swapped every round): the medians of wall and CPU seconds, and the
    median of the rounds' ratios (this ÷ other) with their range."""
    here = Path(__file__).resolve().parent.parent
    trees = {"other": other.resolve(), "this": here}
    for root in trees.values():
        if not (root / "gate" / "__init__.py").is_file():
            raise SystemExit(f"{root} holds no gate package")
        compileall.compile_dir(root / "gate", quiet=1)  # neither pays for compiling
    if paired and len(os.sched_getaffinity(0)) < 2:
        raise SystemExit("--paired needs two cores")
    cores = sorted(os.sched_getaffinity(0))[:2]
    got: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
    for i in range(rounds):
        jobs: dict[int, tuple[str, float]] = {}
        for at, name in enumerate(sorted(trees, reverse=bool(i % 2))):
            env = {**os.environ, "PYTHONPATH": str(trees[name])}
            if paired:  # one scoring process, on its own core
                env |= {"TOOLGATE_SCORE_WORKERS": "1", "OPENBLAS_NUM_THREADS": "1"}
            out = work / f"out-{name}"
            cmd = [sys.executable, "-m", "gate", "score", "--dataset", str(ds)]
            # run from the work folder: `python -m` puts the current folder first on the path
            argv = [*cmd, "--runs", str(runs), "--out", str(out)]
            if not paired:
                wall, cpu, _, _ = timed_process(argv, env, cwd=work)
                got[name].append((wall, cpu))
                shutil.rmtree(out, ignore_errors=True)
                continue
            t0 = time.perf_counter()
            proc = subprocess.Popen(
                argv, env=env, cwd=work, stdout=subprocess.DEVNULL, preexec_fn=_pin(cores[at])
            )
            jobs[proc.pid] = (name, t0)
        while jobs:  # whichever ends first: its wall time is its own
            pid, status, usage = os.wait4(-1, 0)
            if pid not in jobs:
                continue
            name, t0 = jobs.pop(pid)
            if os.waitstatus_to_exitcode(status) != 0:
                raise SystemExit(f"{name}: toolgate score failed ({status})")
            got[name].append((time.perf_counter() - t0, usage.ru_utime + usage.ru_stime))
            shutil.rmtree(work / f"out-{name}", ignore_errors=True)
    for name, times in got.items():
        wall = statistics.median(w for w, _ in times)
        cpu = statistics.median(c for _, c in times)
        print(f"{name:5} {trees[name]}: wall {wall:6.2f} s, CPU {cpu:6.2f} s (medians of {rounds})")
    for i, what in ((0, "wall"), (1, "CPU")):
        ratios = sorted(t[i] / o[i] for t, o in zip(got["this"], got["other"], strict=True))
        print(
            f"{what} this / other, per round: median {statistics.median(ratios):.3f} "
            f"(range {ratios[0]:.3f}-{ratios[-1]:.3f})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
