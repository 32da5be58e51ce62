"""The whole gate: ``toolgate check``, the CI job.

toolgate.yml ─► config ─► dataset (pin) ─► runner ─► runs.jsonl
runs.jsonl ─► score ─► (confirm) ─► (judge) ─► decide ─► results.json
results.json ─► reports (report.md, junit.xml, comment.md) ─► publish (Actions only)
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from gate.dataset import Dataset
from gate.pipeline.confirm import confirm_stage
from gate.pipeline.inputs import load_baseline, load_inputs
from gate.pipeline.judge import judge_stage
from gate.pipeline.publish import report_and_publish
from gate.pipeline.score import score_with_scores
from gate.results import Results
from gate.runsfile import iter_runs

if TYPE_CHECKING:
    from gate.github.context import GitHubContext


@dataclass(frozen=True, slots=True)
class CheckOptions:
    """What `toolgate check` was asked to do (the CLI and the Action build this)."""

    config_path: Path
    config_display: str | None = None
    out: Path | None = None
    baseline: str | None = None
    """A baseline results.json, ``none``, or None for the config's ``baseline.path``."""
    baseline_source: str | None = None
    samples: int | None = None
    shard: tuple[int, int] | None = None
    resume: bool = False
    comment: bool = True
    progress: bool = True
    github: GitHubContext | None = None
    """The GitHub context the caller has read already (the Action): nothing is then read
    from the environment for it, and the caller publishes; ``None`` (``toolgate check``):
    read from ``environ`` and, in Actions, published here."""


@dataclass(slots=True)
class CheckOutcome:
    results: Results
    out: Path
    exit_code: int
    publish_warnings: list[str] = field(default_factory=list)


def check(opts: CheckOptions, environ: Mapping[str, str], stream: TextIO) -> CheckOutcome:
    """Run, score, confirm, judge, decide, report and publish: the CI job.

    Everything is written (results, reports, outputs, step summary, annotations, the
    comment) before the caller exits with the gate's code: a failing gate never loses its
    report, and a GitHub failure never changes the verdict.
    """
    from gate.policy.decide import decide
    from gate.replay.runner import run_all

    t0 = time.perf_counter()
    config, dataset = load_inputs(opts.config_path, opts.config_display)
    base, source = load_baseline(opts.baseline, config)
    if opts.baseline_source and base is not None:
        source = opts.baseline_source
    out = opts.out if opts.out is not None else config.resolve(config.reporting.out)
    samples = opts.samples if opts.samples is not None else config.samples

    summary = run_all(
        config,
        dataset,
        out,
        samples=samples,
        shard=opts.shard,
        resume=opts.resume,
        progress=opts.progress,
    )
    t_run = time.perf_counter()
    head, scores = score_with_scores(dataset, summary.runs_path, config, opts.shard, summary.agent)
    if base is not None:
        head = confirm_stage(
            head,
            base=base,
            config=config,
            dataset=dataset,
            out=out,
            samples=samples,
            shard=opts.shard,
            scores=scores,
        )
    head = judge_stage(head, config=config, dataset=dataset, runs_path=summary.runs_path, out=out)
    decided = decide(head, config, base, source)
    # The pinned tools against what agent.servers advertise now (reported, never gating).
    from gate.interop.mcp_tools import server_drift

    decided.mcp_tool_drift, drift_notices = server_drift(config, dataset.tools, environ)
    decided.notices.extend(drift_notices)
    decided.timing.update(
        {
            "run_wall_s": round(t_run - t0, 3),
            "total_wall_s": round(time.perf_counter() - t0, 3),
            "run_errors": summary.errors,
        }
    )
    # The runner counts the misses of what it ran; read the file for them (in dataset
    # order) only when there are some, or when resumed runs it did not see may hold some.
    reread = summary.unrecorded_calls or summary.skipped
    misses = unrecorded_calls(dataset, summary.runs_path) if reread else []
    if misses:
        distinct = list(dict.fromkeys(misses))  # samples repeat the same call
        decided.notices.append(
            f"{len(misses)} tool call(s) had no frozen response (first: {'; '.join(distinct[:3])})"
        )
    outcome = report_and_publish(decided, config, out, opts, environ, stream)
    return outcome


def unrecorded_calls(dataset: Dataset, runs_path: Path) -> list[str]:
    """Every call the frozen responses could not answer, in dataset order then sample
    order (never in the order concurrent workers happened to finish)."""
    order = {c.id: i for i, c in enumerate(dataset.cases)}
    found: list[tuple[int, int, str]] = []
    for _, run in iter_runs(runs_path):
        for turn in run.turns:
            for result in turn.tool_results:
                content = result.content
                if isinstance(content, dict) and content.get("toolgate_unrecorded") is True:
                    text = f"case {run.case_id}: {content.get('error', 'no frozen response')}"
                    found.append((order.get(run.case_id, len(order)), run.sample, text))
    return [text for *_, text in sorted(found)]
