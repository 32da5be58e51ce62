"""The confirm stage (``confirm:``): extra samples of the cases that look like flips."""

from __future__ import annotations

from pathlib import Path

from gate.config import Config
from gate.dataset import Dataset
from gate.model import SampleScore
from gate.pipeline.inputs import scoring_context
from gate.policy.reduce import build_results
from gate.results import Results
from gate.runsfile import RunsWriter, iter_runs
from gate.scorers import score_sample


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
