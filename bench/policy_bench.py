"""Benchmark: the policy and the diff over 100,000 cases × 5 samples on numpy arrays.

Times the numeric core a run goes through after scoring — the reduction over samples and
cases (per-case mean/std/pass rate, dataset and slice means, std over samples, pooled
unnecessary-call rate, seeded bootstrap CI), the variance guards, the gates with their
failing cases, and the flip classification against a baseline — on arrays shaped like a
real run: 100,000 cases × 5 samples × every deterministic metric, about 10% n/a,
3 difficulties, 12 tags, no-tool and must-not-call slices. Target: under one second.

Then, for context, the object-level path of ``toolgate score`` at 100,000 case-samples
(20,000 cases × 5): ``build_results`` from SampleScore objects, writing results.json, and
``decide`` + ``compare`` on the Results objects.

    python bench/policy_bench.py [--cases 100000] [--samples 5] [--repeat 5] [--quick]

Prints medians over the repeats and the ratio to the 1-second target.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gate.model import (
    Case,
    Difficulty,
    Evidence,
    ExpectedCall,
    SampleScore,
    SourceRef,
    Tallies,
    ToolSpec,
    ToolTally,
)
from gate.policy.decide import beyond_threshold
from gate.policy.reduce import reduce_arrays
from gate.scorers.registry import METRICS, POOLED_METRICS

TARGET_S = 1.0


def synthetic_arrays(cases: int, samples: int, seed: int = 1) -> dict[str, Any]:
    # numpy is imported after gate.policy, which (like every toolgate command) sets the
    # one-BLAS-thread default before numpy loads.
    import numpy as np

    rng = np.random.default_rng(seed)
    k = len([m for m in METRICS if m not in POOLED_METRICS])
    rows = cases * samples
    # per-case "skill" so that samples of a case agree more often than not
    skill = np.repeat(rng.beta(5, 1, size=cases), samples)
    passed = rng.random(rows) < skill
    values = np.where(rng.random((rows, k)) < skill[:, None], 1.0, rng.random((rows, k)))
    values[rng.random((rows, k)) < 0.1] = np.nan  # n/a
    values[:, -1] = passed
    calls = rng.integers(0, 5, size=rows).astype(np.float64)
    no_tool_case = rng.random(cases) < 0.15
    calls_nt = np.where(np.repeat(no_tool_case, samples), calls, 0.0)
    diff = rng.integers(0, 3, size=cases)
    tags = rng.integers(0, 12, size=cases)
    slices = {f"difficulty={d}": diff == i for i, d in enumerate(("easy", "medium", "hard"))}
    slices |= {f"tag=t{t}": tags == t for t in range(12)}
    slices |= {"no_tool=true": no_tool_case, "no_tool=false": ~no_tool_case}
    mnc = rng.random(cases) < 0.2
    slices |= {"must_not_call=true": mnc, "must_not_call=false": ~mnc}
    base_rate = np.clip(np.round(rng.beta(5, 1, size=cases) * samples) / samples, 0, 1)
    return {
        "values": values,
        "passed": passed,
        "calls": calls,
        "calls_no_tool": calls_nt,
        "sizes": np.full(cases, samples, dtype=np.int64),
        "regular": samples,
        "slices": slices,
        "base_rate": base_rate,
    }


def numeric_core(data: dict[str, Any]) -> dict[str, Any]:
    import numpy as np

    red = reduce_arrays(
        values=data["values"],
        passed=data["passed"],
        calls=data["calls"],
        calls_no_tool=data["calls_no_tool"],
        sizes=data["sizes"],
        regular=data["regular"],
        slices=data["slices"],
        seed=0,
    )
    # variance guards: flaky share and the worst std over samples
    rate = red.case_pass_rate
    flaky = np.flatnonzero((rate > 0) & (rate < 1))
    worst_std = np.nanmax(red.slice_std[0])
    # gates: five min gates with their failing cases, worst first
    failing = [beyond_threshold(red.case.mean[:, j], "min", 0.9) for j in range(5)]
    # flips against the baseline: stable pass → stable fail
    regressions = np.flatnonzero((data["base_rate"] == 1.0) & (rate == 0.0))
    return {
        "flaky": flaky.size,
        "worst_std": float(worst_std),
        "failing": [f.size for f in failing],
        "regressions": regressions.size,
    }


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, Any, float]:
    """(median wall seconds, last result, median CPU seconds of this process)."""
    times = []
    cpu = []
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        c = time.process_time()
        out = fn()
        cpu.append(time.process_time() - c)
        times.append(time.perf_counter() - t)
    return statistics.median(times), out, statistics.median(cpu)


def object_path(cases: int, samples: int, repeat: int) -> None:
    from dataclasses import dataclass

    import numpy as np

    from gate.baseline.diff import compare
    from gate.config import Config
    from gate.pipeline.score import scores_to_scored
    from gate.policy.decide import decide
    from gate.results import write_scored

    rng = np.random.default_rng(2)
    names = [m for m in METRICS if m not in POOLED_METRICS]

    @dataclass(frozen=True)
    class DS:
        display: str
        path: Path
        sha256: str
        cases: tuple[Case, ...]
        tools: dict[str, ToolSpec]
        cases_sha256: str | None = None

    ds_cases = tuple(
        Case(
            id=f"case-{i:06d}",
            user_input="x",
            source=SourceRef("dataset.jsonl", i + 1),
            expected_tool_calls=(ExpectedCall("lookup_order"),),
            difficulty=(Difficulty.EASY, Difficulty.MEDIUM, Difficulty.HARD)[i % 3],
            tags=(f"t{i % 12}",),
        )
        for i in range(cases)
    )
    ds = DS(
        "dataset.jsonl",
        Path("/nonexistent"),
        "0" * 64,
        ds_cases,
        {"lookup_order": ToolSpec("lookup_order")},
    )
    vals = np.round(rng.random((cases * samples, len(names))), 2).tolist()
    passed = (rng.random(cases * samples) < 0.85).tolist()
    scores = [
        SampleScore(
            case_id=c.id,
            sample=s,
            passed=passed[i * samples + s],
            scores=dict(zip(names, vals[i * samples + s], strict=True)),
            failed_checks=() if passed[i * samples + s] else ("calls_matched",),
            evidence=Evidence(
                expected=(ExpectedCall("lookup_order"),),
                actual=(),
                alternative=0,
                matched=(),
                summary="0 exact, 0 name-only; 1 expected, 0 actual",
            ),
            tallies=Tallies(calls=1, per_tool={"lookup_order": ToolTally(1, 1, 1)}),
            usage={"prompt_tokens": 300, "completion_tokens": 20},
        )
        for i, c in enumerate(ds_cases)
        for s in range(samples)
    ]
    cfg = Config.model_validate(
        {
            "dataset": {"path": "d"},
            "agent": {"kind": "replay", "runs": "r"},
            "samples": samples,
            "gates": [{"metric": "tool_selection_f1", "min": 0.9}],
            "variance": {"max_flaky_share": 0.3},
        }
    )

    def build() -> Any:
        return scores_to_scored(dataset=ds, scores=scores, config=cfg, agent={})

    t_build, scored, _ = timed(build, repeat)
    stats = scored.stats
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "results.json"
        t_write, _, _ = timed(lambda: write_scored(path, stats, scored.records), repeat)
        size = path.stat().st_size

    def compare_decide() -> Any:
        return decide(stats, compare(stats, stats, source="self"), cfg)

    t_decide, _, _ = timed(compare_decide, repeat)
    t_compare, _, _ = timed(lambda: compare(stats, stats), repeat)
    n = cases * samples
    print(f"\nobject path, {cases:,} cases × {samples} samples = {n:,} case-samples (medians):")
    print(f"  rows + reduce    {t_build:7.3f} s   {n / t_build:10,.0f} case-samples/s")
    print(f"  write results    {t_write:7.3f} s   ({size / 1e6:.0f} MB)")
    print(f"  decide+compare   {t_decide:7.3f} s   (compare alone {t_compare:.3f} s)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=100_000)
    ap.add_argument("--samples", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="skip the object-level path")
    args = ap.parse_args()

    data = synthetic_arrays(args.cases, args.samples)
    k = data["values"].shape[1]
    t_core, out, cpu_core = timed(lambda: numeric_core(data), args.repeat)
    print(
        f"numeric core: {args.cases:,} cases × {args.samples} samples × {k} metrics, "
        f"{len(data['slices'])} slices, bootstrap CI"
    )
    print(
        f"  median {t_core:.3f} s wall ({cpu_core:.3f} s CPU) over {args.repeat} runs — "
        f"{t_core / TARGET_S:.2f}× the 1 s target"
    )
    print(f"  load average while measuring: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(
        f"  ({out['flaky']:,} flaky cases, worst std {out['worst_std']:.4f}, "
        f"{out['regressions']:,} regressions)"
    )
    if not args.quick:
        object_path(20_000, args.samples, max(1, args.repeat // 2))


if __name__ == "__main__":
    main()
