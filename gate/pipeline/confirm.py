"""The confirm stage (``confirm:``): extra samples of the cases that look like flips."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from gate.config import Config
from gate.dataset import Dataset
from gate.gcpause import no_gc
from gate.model import Shard, SuiteStats
from gate.pipeline.inputs import scoring_context
from gate.pipeline.score import Scored
from gate.policy.reduce import reduce
from gate.policy.table import assemble
from gate.runsfile import Coverage, RunsIndex, RunsWriter
from gate.scorers.context import NormalizerTable


def confirm_stage(
    head: Scored,
    *,
    base: SuiteStats | None,
    config: Config,
    dataset: Dataset,
    runs: RunsIndex,
    out: Path,
    samples: int,
    shard: Shard | None,
    norms: NormalizerTable | None = None,
) -> Scored:
    """Adaptive confirmation (``confirm:``): run more samples of the cases that look like
    flips against the baseline, and reduce again with them marked ``extra``.

    The extra samples are numbered after the regular ones and written to
    ``out/confirm/runs.jsonl``, never into the main runs file. That file is seeded with
    the regular samples of those cases (taken from the runs index, not read again), so the
    runner adds only the new sample numbers; it is then read once to score them.
    """
    from gate.outdir import write_atomic
    from gate.pipeline._scorepool import ScoreJob, SerialExecutor
    from gate.policy.confirm import cases_to_confirm
    from gate.replay.runner import HEADER_FILE, RUNS_FILE, run_all

    plan = cases_to_confirm(head.stats, base, config)
    if not plan or config.agent.kind == "replay":
        return head
    confirm_dir = out / "confirm"
    confirm_dir.mkdir(parents=True, exist_ok=True)
    confirm_runs = confirm_dir / RUNS_FILE
    assert runs.rows is not None
    ids = [c.id for c in dataset.cases]
    seed_rows = [k for k, i in enumerate(runs.rows.case) if ids[i] in plan]
    seeded: set[tuple[str, int]] = set()
    # The seed lines are this run's: its header goes with them, so the resume accepts them.
    header = out / HEADER_FILE
    if header.is_file():
        write_atomic(confirm_dir / HEADER_FILE, [header.read_bytes()])
    with RunsWriter(confirm_runs) as writer:
        for _, run in runs.runs(seed_rows):
            writer.write(run)
            seeded.add((run.case_id, run.sample))
    by_extra: dict[int, list[str]] = {}
    for cid, k in plan.items():
        by_extra.setdefault(k, []).append(cid)
    for k, case_ids in sorted(by_extra.items()):
        run_all(
            config,
            dataset,
            confirm_dir,
            samples=samples + k,
            shard=shard,
            resume=True,
            case_ids=case_ids,
            progress=False,
            recorded=seeded,
            norms=norms,
        )
    planned = [c for c in dataset.cases if c.id in plan]
    with RunsIndex(confirm_runs) as extra_runs, no_gc():
        coverage = Coverage(
            planned,
            runs_display=extra_runs.display,
            dataset_display=dataset.display,
            equal_samples=False,
        )
        job = ScoreJob(
            index=extra_runs,
            coverage=coverage,
            cases=planned,
            ctx=scoring_context(config, dataset, norms=norms),
            metas=head.table.metas,
            min_sample=samples,
            extra=True,
        )
        extra = SerialExecutor().score(job)
        batches = [*head.batches, *extra.batches]
        table = assemble(head.table.metas, batches)
        stats = reduce(table, head.stats.header, seed=head.seed, max_extra=head.max_extra)
    records = head.records.joined(extra.records)
    return dataclasses.replace(
        head, stats=stats, table=table, batches=batches, records=records, _results=None
    )
