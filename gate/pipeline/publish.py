"""Writing and publishing a decided run: results.json, the reports, the console, and — in
GitHub Actions — outputs, step summary, annotations and the sticky comment."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from gate.config import Config
from gate.errors import ExitCode
from gate.pipeline.inputs import _rel, redactor_for
from gate.results import Results

if TYPE_CHECKING:
    from gate.pipeline.check import CheckOptions, CheckOutcome


def report_and_publish(
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
    from gate.pipeline.check import CheckOutcome

    return CheckOutcome(
        results=results,
        out=out,
        exit_code=ExitCode.PASS if passed else ExitCode.GATE_FAILED,
        publish_warnings=warnings,
    )
