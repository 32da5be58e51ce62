"""Merge then decide (the Action's ``mode: merge``): join the shards' results, gate once on
the whole dataset, compare with the baseline, and write results.json and the reports.

The tests against the base history run once more over every case as one family, on the
samples the shards took (their extra samples included: the per-case test is valid at any
stopping point); no agent runs here, so no more samples are taken.

Every statistic is recomputed from the shards' sample records
(:func:`gate.pipeline.typed.merge_run`, which refuses parts of different datasets,
overlapping cases, shards of different splits and missing shards); the verdict is
:func:`gate.policy.decide.decide` with the config's policy. Publishing is the caller's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from gate.config import Config
from gate.errors import ExitCode
from gate.outdir import locked, remove_stale
from gate.pipeline.publish import exit_code, say, validate_run, write_run_files
from gate.pipeline.sequential import comparison_of, recorded_tests
from gate.pipeline.typed import merge_run, stats_of
from gate.report.redact import Redactor
from gate.results import Decisions, Results, assemble, read_results


@dataclass(frozen=True, slots=True)
class MergeOutcome:
    results: Results
    """The merged results, decided."""
    results_path: Path
    exit_code: ExitCode
    """``PASS`` or ``GATE_FAILED``."""


def merge_and_decide(
    parts: Sequence[tuple[str, Path]],
    *,
    config: Config | None,
    baseline: Results | None,
    baseline_source: str | None,
    out: Path,
    baseline_missing: str | None = None,
    require_baseline: bool = False,
    redactor: Redactor,
    report_url: str | None = None,
    stream: TextIO,
) -> MergeOutcome:
    """``parts`` are ``(display name, results.json path)``; each file is read once. The
    merged run is compared with ``baseline`` (when given) before the verdict is decided;
    ``baseline_missing`` says why there is none, and ``require_baseline`` fails a merge
    compared with nothing."""
    from gate.policy.decide import decide

    read = [(name, read_results(path, display=name)) for name, path in parts]
    merged = merge_run(read)
    tests = recorded_tests([r for _, r in read], baseline, config)
    comparison = (
        comparison_of(
            stats_of(baseline),
            merged.stats,
            tests.evaluation,
            tests.params,
            source=baseline_source or "baseline",
            retired=config.dataset.retired_reasons() if config is not None else None,
        )
        if baseline is not None
        else None
    )
    verdict = decide(
        merged.stats,
        comparison,
        config,
        tests.evaluation,
        no_baseline=baseline_missing,
        require_baseline=require_baseline,
    )
    decided = assemble(
        merged.stats,
        merged.records,
        Decisions(
            verdict=verdict,
            comparison=comparison,
            judge=merged.judge,
            timing=merged.timing,
            policy=tests.fields(),
        ),
    )
    decided = validate_run(decided, config.max_missing if config is not None else 0.0)
    with locked(out):
        remove_stale(out)
        results_path, decided = write_run_files(
            decided, out, redactor=redactor, report_url=report_url, stream=stream
        )
    say(stream, f"merged {len(read)} part(s), {len(decided.cases)} cases → {results_path}\n")
    return MergeOutcome(results=decided, results_path=results_path, exit_code=exit_code(decided))
