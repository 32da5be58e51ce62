"""Writing and publishing a decided run: results.json, the reports, the console, and — for
``toolgate check`` in GitHub Actions — outputs, step summary, annotations and the sticky
comment (:func:`gate.github.publish.publish`).

The Action passes the context it has read (``CheckOptions.github``): then nothing is read
from the environment here and nothing is published — the Action publishes itself, with its
own notes, and writes its outputs once (``gate/action.py``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from gate.config import Config
from gate.errors import ExitCode
from gate.pipeline.inputs import redactor_for, rel
from gate.pipeline.options import CheckOutcome
from gate.report.redact import Redactor
from gate.results import Results, validity_fields

if TYPE_CHECKING:
    from gate.model import SuiteStats
    from gate.pipeline.options import CheckOptions
    from gate.policy.validity import SampleOutcome
    from gate.results import Decisions, SampleRecords

RESULTS_FILE = "results.json"


def write_run_files(
    results: Results | None,
    out: Path,
    *,
    redactor: Redactor,
    report_url: str | None,
    stream: TextIO,
) -> tuple[Path, Results]:
    """``out/results.json``, the reports (report.md, junit.xml, comment.md) and the console
    summary on ``stream``; returns the results file's path and the results as written.

    The reports are rendered from results.json as written (read back once), not from the
    values in memory: ``toolgate report`` on that file then gives the same bytes (the file
    keeps keys in its canonical order; the values in memory keep the dataset's)."""
    from gate.pipeline.records import kept_reasons
    from gate.report import render_console, write_reports
    from gate.results import open_results, write_results

    results_path = out / RESULTS_FILE
    if results is not None:
        write_results(results_path, results, keep=kept_reasons)
    written = open_results(results_path)  # its samples read from the file as asked
    # The verdict is out before the optional reports: a report that cannot be written
    # (a full disk) is then a located error after it, never instead of it.
    say(stream, render_console(written, redactor=redactor))
    write_reports(written, out, redactor=redactor, report_url=report_url)
    say(stream, written_paths(out))
    return results_path, written


def written_paths(out: Path) -> str:
    """The closing lines of the console: where the files are."""
    shown = rel(out)
    names = ", ".join((RESULTS_FILE, "report.md", "junit.xml", "comment.md"))
    return f"wrote {names} to {shown}/\n"


def say(stream: TextIO, text: str) -> None:
    """Write to the console; a closed one (``| head``, ``| true``) is not an error: the
    files and the exit code say the same, and the exit code must stay the verdict's."""
    try:
        stream.write(text)
        stream.flush()
    except BrokenPipeError:
        quiet_stdout()
    except ValueError:  # closed already
        pass


def quiet_stdout() -> None:
    """Point the broken standard output at /dev/null, so that nothing later (the final
    flush at exit) fails on it again."""
    import os
    import sys

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def validate_run(results: Results, max_missing: float) -> Results:
    """The results with their missing samples counted and, when the run is not valid,
    the verdict "error" (:mod:`gate.policy.validity`)."""
    from gate.policy.validity import SampleOutcome, assess

    hard = {(h.case_id, h.sample) for h in results.hard_failures}
    outcomes = [
        SampleOutcome(
            case_id=c.id,
            sample=s.sample,
            error=s.error,
            hard_failure=(c.id, s.sample) in hard,
            calls=int(s.tallies.get("calls", 0)),
            answered=s.answered_a_turn,
        )
        for c in results.cases
        for s in c.samples
    ]
    update = validity_fields(results.verdict, *assess(outcomes, max_missing=max_missing))
    return results.model_copy(update=update) if update else results


def record_outcomes(stats: SuiteStats, records: SampleRecords) -> list[SampleOutcome]:
    """What validity needs of each sample record (:func:`validate_run` without the
    results: each record is parsed on its own, and only these few fields are kept)."""
    import orjson

    from gate.policy.validity import SampleOutcome

    hard = {(h.case_id, h.sample) for h in stats.hard_failures}
    out: list[SampleOutcome] = []
    for i, case in enumerate(stats.cases):
        for raw in records.of_case(i):
            rec = orjson.loads(raw)
            turns = rec.get("turns") or ()
            out.append(
                SampleOutcome(
                    case_id=case.id,
                    sample=rec["sample"],
                    error=rec.get("error"),
                    hard_failure=(case.id, rec["sample"]) in hard,
                    calls=int(rec.get("tallies", {}).get("calls", 0)),
                    answered=bool(turns) and sum(t.get("ran", True) for t in turns) > 1,
                )
            )
    return out


def write_checked(
    path: Path,
    stats: SuiteStats,
    records: SampleRecords,
    decisions: Decisions,
    *,
    max_missing: float,
) -> None:
    """Write a checked run's results.json from its statistics and sample records, its
    missing samples counted and, when the run is not valid, the verdict "error" — the
    file :func:`validate_run` of the assembled results gives, without holding them."""
    from gate.policy.validity import assess
    from gate.results import validity_fields, write_scored

    missing, invalid = assess(record_outcomes(stats, records), max_missing=max_missing)
    validity = validity_fields(decisions.verdict, missing, invalid)
    write_scored(path, stats, records, dataclasses.replace(decisions, validity=validity))


def exit_code(results: Results) -> ExitCode:
    """The exit code of a decided run: 4 when it is not valid, else the verdict's."""
    if results.run_error is not None:
        return ExitCode.RUN_INVALID
    verdict = results.verdict
    return ExitCode.PASS if verdict is not None and verdict.passed else ExitCode.GATE_FAILED


def report_and_publish(
    results: Results | None,
    config: Config,
    out: Path,
    opts: CheckOptions,
    environ: Mapping[str, str],
    stream: TextIO,
) -> CheckOutcome:
    from gate.github.activity import plan_comment
    from gate.github.context import GitHubContext
    from gate.github.publish import emit, publish

    ctx = opts.github if opts.github is not None else GitHubContext.from_environ(environ)
    redactor = redactor_for(config, environ)
    results_path, results = write_run_files(
        results, out, redactor=redactor, report_url=ctx.run_url, stream=stream
    )
    if opts.github is None and ctx.in_actions:
        ctx.require_valid()
        for text in ctx.warnings:
            emit(stream, ctx, text, "warning")
        disabled_by = (
            "--no-comment was given"
            if not opts.comment
            else None
            if config.reporting.comment
            else "reporting.comment is false"
        )
        publish(  # its warnings are annotations and console lines already
            results,
            ctx,
            comment=plan_comment(ctx, disabled_by=disabled_by),
            redactor=redactor,
            results_path=rel(results_path),
            annotations=config.reporting.annotations,
            stream=stream,
        )
    say(stream, "")
    return CheckOutcome(results=results, out=out, exit_code=exit_code(results))
