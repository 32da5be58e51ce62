"""Orchestration: the stages of a gate run, wired from the pure layers and the I/O layers.

``check`` (``toolgate check``, the CI job) runs them in order: :func:`load_inputs`
(config, dataset, pin) → the runner → :func:`score_stage` → :func:`confirm_stage` →
:func:`judge_stage` → :func:`gate.policy.decide.decide` → reports and publishing.

``score_stage`` (runs file → :class:`~gate.results.Results` without a verdict): read the
runs file, check that it covers exactly the dataset's cases (of the shard), score every
case-sample with the deterministic scorers, and reduce the scores
(:func:`gate.policy.reduce.build_results`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from gate.config import Config, NormalizeConfig, ScoringConfig
from gate.dataset import Dataset
from gate.errors import ExitCode
from gate.gcpause import no_gc
from gate.model import SampleScore
from gate.policy.reduce import DatasetLike, build_results
from gate.report.redact import Redactor
from gate.results import Results, read_results
from gate.runsfile import RunsWriter, iter_runs
from gate.scorepool import read_and_score
from gate.scorers import ScoringContext, score_sample


def score_stage(
    *,
    dataset: DatasetLike,
    runs_path: Path,
    config: Config | None = None,
    runs_display: str | None = None,
    shard: tuple[int, int] | None = None,
    agent: Mapping[str, Any] | None = None,
    keep_scores: list[SampleScore] | None = None,
) -> Results:
    """Score a runs file against the dataset; the results carry no verdict yet.

    ``keep_scores``, when given, receives the sample scores (the confirmation stage
    rebuilds the results with extra samples from them).

    Coverage is checked before anything is scored, each problem naming the runs file's
    line: a run of a case the dataset does not have, of a case of another shard, a
    (case, sample) recorded twice, and — naming the case's dataset line — a case of the
    dataset (of the shard) with no run at all: a case that silently vanished would raise
    the pass rate. A malformed line stops the read at that line
    (:class:`~gate.errors.RunsFileError`).
    """
    t0 = time.perf_counter()
    display = runs_display or str(runs_path)
    # The cyclic collector finds nothing in these acyclic records but rescans the growing
    # heap again and again (a fifth of the time): pause it while reading and scoring.
    with no_gc():
        ctx = scoring_context(config, dataset)
        # Reading and scoring, in parallel worker processes for large files (same scores).
        scores, notes = read_and_score(dataset, runs_path, display, shard, ctx)
    if keep_scores is not None:
        keep_scores.extend(scores)
    t2 = time.perf_counter()

    agent_info = dict(agent) if agent is not None else _agent_info(config, display)
    with no_gc():  # the heap now holds every sample score: a collection would scan it all
        results = build_results(
            dataset=dataset,
            scores=scores,
            config=config,
            agent=agent_info,
            shard=shard,
            timing={
                "read_score_s": round(t2 - t0, 3),
                "score_workers": notes["workers"],
                "case_samples": len(scores),
            },
        )
    t3 = time.perf_counter()
    results.timing["reduce_s"] = round(t3 - t2, 3)
    return results


def _agent_info(config: Config | None, runs_display: str) -> dict[str, Any]:
    info: dict[str, Any] = {"kind": config.agent.kind if config is not None else "replay"}
    info["runs"] = runs_display
    return info


# ─── the whole gate: `toolgate check` ─────────────────────────────────────────
#
#   toolgate.yml ─► config ─► dataset (pin) ─► runner ─► runs.jsonl
#   runs.jsonl ─► score_stage ─► (confirm_stage) ─► (judge_stage) ─► decide ─► results.json
#   results.json ─► reports (report.md, junit.xml, comment.md) ─► publish (Actions only)


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


@dataclass(slots=True)
class CheckOutcome:
    results: Results
    out: Path
    exit_code: int
    publish_warnings: list[str] = field(default_factory=list)


def load_inputs(config_path: Path, display: str | None = None) -> tuple[Config, Dataset]:
    """Config, dataset and their cross-checks: the pin, the judge's inputs. Raises
    :class:`~gate.errors.InputError` naming file, line and field."""
    from gate.config import load_config
    from gate.dataset import load_dataset
    from gate.dataset.pin import check_pin

    config = load_config(config_path, display=display)
    ds_path = config.resolve(config.dataset.path)
    dataset = load_dataset(ds_path, display=_rel(ds_path))
    check_pin(config, dataset, config_display=display)
    if config.judge is not None:
        from gate.judge import check_judge_inputs

        check_judge_inputs(config)
    return config, dataset


def load_baseline(choice: str | None, config: Config) -> tuple[Results | None, str | None]:
    """The baseline results and where they came from: ``choice`` is a path, ``none``, or
    None for the config's committed ``baseline.path`` (if any)."""
    if choice is not None and choice.lower() == "none":
        return None, None
    if choice is not None:
        return read_results(Path(choice), display=choice), f"file {choice}"
    if config.baseline.path:
        path = config.resolve(config.baseline.path)
        return read_results(path, display=config.baseline.path), (
            f"committed file {config.baseline.path}"
        )
    return None, None


def confirm_stage(
    head: Results,
    *,
    base: Results | None,
    config: Config,
    dataset: Dataset,
    out: Path,
    samples: int,
    shard: tuple[int, int] | None,
    scores: list[SampleScore],
) -> Results:
    """Adaptive confirmation (``confirm:``): run more samples of the cases that look like
    flips against the baseline, and rebuild the results with them marked ``extra``.

    The extra samples are numbered after the regular ones and written to
    ``out/confirm/runs.jsonl`` (seeded from the regular samples of those cases, so only
    the new sample numbers run), never into the main runs file.
    """
    from gate.policy.confirm import cases_to_confirm
    from gate.replay.runner import RUNS_FILE, run_all

    plan = cases_to_confirm(head, base, config)
    if not plan or config.agent.kind == "replay":
        return head
    confirm_dir = out / "confirm"
    confirm_dir.mkdir(parents=True, exist_ok=True)
    confirm_runs = confirm_dir / RUNS_FILE
    # Seed the confirm file with the regular samples of those cases, so `resume` runs only
    # the new sample numbers.
    with RunsWriter(confirm_runs) as writer:
        for _, run in iter_runs(out / RUNS_FILE):
            if run.case_id in plan:
                writer.write(run)
    by_extra: dict[int, list[str]] = {}
    for cid, k in plan.items():
        by_extra.setdefault(k, []).append(cid)
    for k, ids in sorted(by_extra.items()):
        run_all(
            config,
            dataset,
            confirm_dir,
            samples=samples + k,
            shard=shard,
            resume=True,
            case_ids=ids,
            progress=False,
        )
    ctx = scoring_context(config, dataset)
    cases = {c.id: c for c in dataset.cases}
    extra = [
        score_sample(cases[run.case_id], run, ctx)
        for _, run in iter_runs(confirm_runs)
        if run.sample >= samples
    ]
    rebuilt = build_results(
        dataset=dataset,
        scores=scores,
        extra_scores=extra,
        config=config,
        agent=head.agent,
        shard=shard,
        timing=dict(head.timing),
    )
    # build_results filled rebuilt.confirm (a ConfirmInfo: max_extra_samples, the extra
    # samples spent and, per case, how many); a plain dict there would not render.
    return rebuilt


def judge_stage(
    head: Results, *, config: Config, dataset: Dataset, runs_path: Path, out: Path
) -> Results:
    """The LLM judge's block under ``judge`` (reported, never gating; never raises for an
    outage)."""
    if config.judge is None:
        return head
    from gate.judge import run_judge

    runs = [run for _, run in iter_runs(runs_path)]
    head.judge = run_judge(config, dataset, runs, out, results=head)
    return head


def redactor_for(config: Config | None, environ: Mapping[str, str]) -> Redactor:
    """Secrets never to print (:meth:`Config.secret_env_names`)."""
    names = config.secret_env_names() if config is not None else []
    return Redactor.from_environ(names, environ)


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
    head, scores = _score_with_scores(dataset, summary.runs_path, config, opts.shard, summary.agent)
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
    outcome = _report_and_publish(decided, config, out, opts, environ, stream)
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


def _score_with_scores(
    dataset: Dataset,
    runs_path: Path,
    config: Config,
    shard: tuple[int, int] | None,
    agent: Mapping[str, Any],
) -> tuple[Results, list[SampleScore]]:
    captured: list[SampleScore] = []
    results = score_stage(
        dataset=dataset,
        runs_path=runs_path,
        config=config,
        shard=shard,
        agent=agent,
        keep_scores=captured,
    )
    return results, captured


def scoring_context(config: Config | None, dataset: DatasetLike) -> ScoringContext:
    """The scorers' context for a config (defaults without one): validators compiled once."""
    scoring = config.scoring if config is not None else ScoringConfig()
    normalize = config.dataset.normalize if config is not None else NormalizeConfig()
    budget = config.agent.step_budget if config is not None else None
    return ScoringContext.build(scoring, normalize, dataset.tools, step_budget=budget)


def _report_and_publish(
    results: Results,
    config: Config,
    out: Path,
    opts: CheckOptions,
    environ: Mapping[str, str],
    stream: TextIO,
) -> CheckOutcome:
    from gate.github.context import GitHubContext
    from gate.github.publish import publish
    from gate.report import render_console, write_reports
    from gate.results import write_results

    redactor = redactor_for(config, environ)
    results_path = out / "results.json"
    write_results(results_path, results)
    ctx = GitHubContext.from_environ(environ)
    write_reports(results, out, redactor=redactor, report_url=ctx.run_url)
    stream.write(render_console(results, redactor=redactor))
    warnings: list[str] = []
    if ctx.in_actions:
        report = publish(
            results,
            ctx,
            redactor=redactor,
            results_path=_rel(results_path),
            dataset_file=results.dataset.path,
            comment=opts.comment and config.reporting.comment,
            annotations=config.reporting.annotations,
            stream=stream,
        )
        warnings = list(report.warnings)
    stream.flush()
    verdict = results.verdict
    passed = verdict is not None and verdict.passed
    return CheckOutcome(
        results=results,
        out=out,
        exit_code=ExitCode.PASS if passed else ExitCode.GATE_FAILED,
        publish_warnings=warnings,
    )


def _rel(path: Path) -> str:
    """How reports name a file: relative to the repository in GitHub Actions
    (``GITHUB_WORKSPACE``, so annotations point at the right file whatever the working
    directory), else to the working directory; absolute when under neither."""
    import os

    base = os.environ.get("GITHUB_WORKSPACE") or str(Path.cwd())
    try:
        return str(path.resolve().relative_to(Path(base).resolve()))
    except ValueError:
        return str(path)
