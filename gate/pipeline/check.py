"""The whole gate: ``toolgate check``, the CI job.

toolgate.yml ─► config ─► dataset (pin) ─► runner ─► runs.jsonl
runs.jsonl ─► score ─► test against the base history (extra samples) ─► (judge) ─► decide
         ─► results.json
results.json ─► reports (report.md, junit.xml, comment.md) ─► publish (Actions only)
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TextIO

from gate.dataset.validate import unoffered_forbidden
from gate.jsonio import release
from gate.outdir import locked, remove_stale
from gate.pipeline.inputs import load_baseline, load_inputs, normalizers
from gate.pipeline.options import CheckOptions, CheckOutcome
from gate.pipeline.publish import (
    RESULTS_FILE,
    report_and_publish,
    say,
    validate_run,
    write_checked,
)
from gate.pipeline.score import (
    score_stage,
    unrecorded_calls,
    unrecorded_notice,
    workers_setting,
)
from gate.pipeline.sequential import (
    bill_lines,
    comparison_of,
    policy_stage,
    run_bill,
)
from gate.results import Decisions
from gate.runsfile import RunsIndex

if TYPE_CHECKING:
    from gate.config import Config


def check(
    opts: CheckOptions,
    environ: Mapping[str, str],
    stream: TextIO,
    *,
    log: TextIO | None = None,
) -> CheckOutcome:
    """Run, score, confirm, judge, compare, decide, report and publish: the CI job.

    ``stream`` gets the report (the console summary); ``log`` (default: standard error,
    where the progress goes) gets what the run announces as it goes — its bill before the
    agent's first run, the seeding's before it starts.

    Everything is written (results, reports, outputs, step summary, annotations, the
    comment) before the caller exits with the gate's code: a failing gate never loses its
    report, and a GitHub failure never changes the verdict. The runs file is opened once,
    after the runner wrote it, and shared by every stage that reads it.
    """
    from gate.policy.decide import decide
    from gate.replay.interface import build_agent
    from gate.replay.runner import run_all, select_cases

    t0 = time.perf_counter()
    workers_setting(environ)  # refused now, not after the agent ran
    inputs = opts.inputs or load_inputs(opts.config_path, opts.config_display, agent=True)
    config, dataset = inputs.config, inputs.dataset
    base = load_baseline(opts.baseline, config)
    source = (opts.baseline_source or base.source) if base is not None else None
    out = opts.out if opts.out is not None else config.resolve(config.reporting.out)
    samples = opts.samples if opts.samples is not None else config.initial_samples
    norms = normalizers(config)

    with locked(out):  # one writer per folder; no output of an earlier run survives
        remove_stale(out)
        # The agent is built first so that its description (the setup the histories
        # are kept under) gives the bill, stated before the first agent run.
        agent = build_agent(config)
        try:
            bill = run_bill(
                config,
                dataset,
                select_cases(dataset.cases, shard=opts.shard),
                base=base,
                samples=samples,
                agent=agent.describe(),
                base_run=opts.base_run,
            )
        except BaseException:
            agent.close()
            raise
        say(log or sys.stderr, "".join(f"{line}\n" for line in bill_lines(bill)))
        summary = run_all(
            config,
            dataset,
            out,
            samples=samples,
            shard=opts.shard,
            resume=opts.resume,
            progress=opts.progress,
            norms=norms,
            agent=agent,
        )
        # Closed by run_all; what it held (a replay agent: where each recorded run is) is
        # freed before scoring, whose workers are forked from this process.
        del agent
        release()
        t_run = time.perf_counter()
        judge_timing: dict[str, Any] = {}
        with RunsIndex(summary.runs_path) as runs:
            head = score_stage(
                dataset=dataset,
                runs=runs,
                config=config,
                shard=opts.shard,
                agent=summary.agent,
                norms=norms,
            )
            judged = head.runs.kept  # the runs as the score stage read them
            # A run that is not valid already (the agent cannot start, too many samples
            # missing) decides nothing: no extra sample, no seeding, would change that.
            hopeless = bool(summary.errors) and (
                validate_run(head.results, config.max_missing).run_error is not None
            )
            tested = policy_stage(
                head,
                base=base,
                config=config,
                dataset=dataset,
                runs=runs,
                out=out,
                samples=samples,
                shard=opts.shard,
                norms=norms,
                seed=opts.base_run and not hopeless,
                progress=opts.progress,
                sample_more=not hopeless,
                announce=lambda text: say(log or sys.stderr, text + "\n"),
            )
            head = tested.scored
            judge: dict[str, Any] | None = None
            if config.judge is not None:  # reported, never gating; an outage never raises
                from gate.judge import run_judge

                judge = run_judge(config, dataset, judged, out, timing=judge_timing)
            misses = unrecorded_calls(head, runs)
        comparison = (
            comparison_of(
                base.stats,
                head.stats,
                tested.evaluation,
                tested.params,
                source=source or "baseline",
                retired=config.dataset.retired_reasons(),
            )
            if base is not None
            else None
        )
        verdict = decide(
            head.stats,
            comparison,
            config,
            tested.evaluation,
            no_baseline=no_baseline_why(opts, config) if base is None else None,
            require_baseline=opts.require_baseline and not opts.base_run,
        )
        notices: list[str] = []
        unoffered = unoffered_forbidden(dataset.cases)
        if unoffered is not None:
            notices.append(unoffered)
        if misses:
            notices.append(unrecorded_notice(misses))
        # The pinned tools against what agent.servers advertise now (reported, never gating).
        from gate.interop.mcp_tools import server_drift

        mcp_drift, drift_notices = server_drift(config, dataset.tools, environ)
        notices.extend(drift_notices)
        try:
            # Written from the statistics and the sample records as they are (never a
            # whole results model in memory); the reports read the file back once.
            write_checked(
                out / RESULTS_FILE,
                head.stats,
                head.records,
                Decisions(
                    verdict=verdict,
                    comparison=comparison,
                    judge=judge,
                    notices=notices,
                    mcp_tool_drift=mcp_drift,
                    policy=tested.fields(base_run=opts.base_run, bill=bill),
                    timing={
                        **head.timing,
                        **judge_timing,
                        "run_wall_s": round(t_run - t0, 3),
                        "total_wall_s": round(time.perf_counter() - t0, 3),
                        "run_errors": summary.errors,
                    },
                ),
                max_missing=config.max_missing,
            )
        finally:
            head.records.close()  # the sample records are in results.json now
        # The reports read the file back: what made it is let go first.
        del head, judged, tested, judge, comparison, verdict, base, dataset, inputs, summary
        release()
        return report_and_publish(None, config, out, opts, environ, stream)


def no_baseline_why(opts: CheckOptions, config: Config) -> str:
    """Why a check has no baseline, in words: what the caller says (the Action's search),
    else what it was asked."""
    if opts.baseline_missing:
        return opts.baseline_missing
    if opts.base_run:
        return "no earlier results of the base branch (this base run starts its history)"
    if opts.baseline is not None and opts.baseline.lower() == "none":
        return "no baseline (--baseline none)"
    return "no baseline was given (--baseline FILE, or baseline.path in the config)"
