"""``toolgate report``: render any report from results files alone.

Use it to preview the PR comment locally, or to render reports in a later job from an
artifact. ``summary`` and ``md`` are the same full report (report.md / the step summary,
within 1 MiB). With ``--baseline`` and results that carry no comparison yet, the two are
compared (``gate.baseline.diff.compare``) before rendering; results that already carry one
keep it (a note on stderr says so).

Secrets: the values of the environment variables named by ``--secret-env`` and by the
config's ``reporting.secrets`` (``--config``; also the OpenAI adapter's ``api_key_env``)
are redacted, as are token shapes (``gate.report.redact``).
"""

from __future__ import annotations

import argparse
import enum
import os
import sys
from pathlib import Path
from typing import assert_never

from gate.errors import ExitCode, UsageError
from gate.pipeline.inputs import build_redactor as build_redactor
from gate.pipeline.inputs import load_baseline
from gate.report import (
    render_comment,
    render_console,
    render_junit,
    render_markdown,
)
from gate.report.comment import DEFAULT_MAX_CHARS
from gate.report.redact import Redactor
from gate.results import Results, read_results, with_comparison


class ReportFormat(enum.StrEnum):
    COMMENT = "comment"
    SUMMARY = "summary"
    MD = "md"
    JUNIT = "junit"
    CONSOLE = "console"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", metavar="RESULTS", help="a results.json")
    add_common_arguments(parser)
    parser.add_argument(
        "--format",
        choices=[f.value for f in ReportFormat],
        default=ReportFormat.CONSOLE.value,
        help="which report (default: console)",
    )
    parser.add_argument("--out", metavar="FILE", help="write here instead of stdout")
    parser.add_argument(
        "--max-chars",
        type=int,
        default=DEFAULT_MAX_CHARS,
        metavar="N",
        help=f"comment size limit in characters (default {DEFAULT_MAX_CHARS:,})",
    )


def add_common_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--baseline", metavar="BASE", help="the base results.json to compare with")
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="the config file whose reporting.secrets name variables to redact (default: none)",
    )
    parser.add_argument(
        "--secret-env",
        action="append",
        default=[],
        metavar="NAME",
        help="an environment variable whose value must never be shown (repeatable)",
    )


def run(args: argparse.Namespace) -> int:
    results = load_with_baseline(Path(args.results), args.baseline)
    redactor = build_redactor(args.config, args.secret_env, os.environ)
    fmt = ReportFormat(args.format)
    if fmt is ReportFormat.COMMENT and args.max_chars < 1_000:
        raise UsageError(f"--max-chars {args.max_chars} is too small (at least 1,000)")
    text = render(results, fmt, redactor=redactor, max_chars=args.max_chars)
    if args.out:
        out = Path(args.out)
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text, encoding="utf-8", newline="\n")
        except OSError as exc:
            raise UsageError(f"cannot write {args.out}: {exc.strerror or exc}") from None
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return ExitCode.PASS


def render(
    results: Results, fmt: ReportFormat, *, redactor: Redactor, max_chars: int = DEFAULT_MAX_CHARS
) -> str:
    match fmt:
        case ReportFormat.COMMENT:
            return render_comment(results, max_chars=max_chars, redactor=redactor)
        case ReportFormat.SUMMARY | ReportFormat.MD:
            return render_markdown(results, redactor=redactor)
        case ReportFormat.JUNIT:
            return render_junit(results, redactor=redactor)
        case ReportFormat.CONSOLE:
            return render_console(results, redactor=redactor)
        case _:
            assert_never(fmt)


def load_with_baseline(path: Path, baseline: str | None) -> Results:
    """Read results; with a baseline and no comparison yet, compare them."""
    results = read_results(path)
    if baseline is None:
        return results
    base = load_baseline(baseline, None)
    assert base is not None
    if results.comparison is not None:
        sys.stderr.write(
            f"toolgate: note: {path} already carries a comparison "
            f"({results.comparison.source}); --baseline is not used\n"
        )
        return results
    from gate.pipeline.sequential import comparison_of, recorded_tests
    from gate.pipeline.typed import stats_of
    from gate.results import CaseResult

    # the tests a check would run on these samples: the comparison, and each case's test
    # against its base history (what "fail as before" and the short history are told from)
    tests = recorded_tests([results], base.results, None)
    stats = stats_of(results)
    comparison = comparison_of(
        stats_of(base.results), stats, tests.evaluation, tests.params, source=base.source
    )
    fields = tests.fields()
    cases = [
        CaseResult.model_validate({**c.__dict__, **fields.cases.get(c.id, {})})
        for c in results.cases
    ]
    return with_comparison(
        results.model_copy(update={"cases": cases, "policy": fields.info}), comparison
    )
