"""Reports rendered from a :class:`gate.results.Results` alone (docs/reports.md).

* :func:`render_comment` — the sticky PR comment (hidden marker, ≤ 65,536 characters);
* :func:`render_markdown` — the full report: ``report.md`` and the step summary (≤ 1 MiB);
* :func:`render_junit` — JUnit XML, one testcase per case;
* :func:`render_console` — a terminal summary;
* :func:`write_reports` — ``report.md``, ``junit.xml`` and ``comment.md`` into a folder.

Renderers never recompute a score: they show what the scorers and the policy recorded,
every data string escaped (:mod:`gate.report.escape`) and every secret redacted
(:mod:`gate.report.redact`).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gate.report.comment import marker, render_comment
    from gate.report.console import render_console
    from gate.report.junit import render_junit
    from gate.report.redact import Redactor
    from gate.report.summary import STEP_SUMMARY_LIMIT, render_markdown
    from gate.results import Results

__all__ = [
    "STEP_SUMMARY_LIMIT",
    "Redactor",
    "marker",
    "render_comment",
    "render_console",
    "render_junit",
    "render_markdown",
    "write_reports",
]

# The renderers load on first use (PEP 562): a command that only redacts (``toolgate
# score``, through gate.report.redact) does not import every renderer with this package.
_LAZY = {
    "STEP_SUMMARY_LIMIT": "gate.report.summary",
    "Redactor": "gate.report.redact",
    "marker": "gate.report.comment",
    "render_comment": "gate.report.comment",
    "render_console": "gate.report.console",
    "render_junit": "gate.report.junit",
    "render_markdown": "gate.report.summary",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def write_reports(
    results: Results,
    out: Path,
    *,
    redactor: Redactor | None = None,
    report_url: str | None = None,
) -> None:
    """Write ``out/report.md``, ``out/junit.xml`` and ``out/comment.md``."""
    from gate.outdir import write_atomic
    from gate.report.comment import render_comment
    from gate.report.junit import render_junit
    from gate.report.summary import render_markdown

    files = {
        "report.md": render_markdown(results, redactor=redactor, report_url=report_url),
        "junit.xml": render_junit(results, redactor=redactor),
        "comment.md": render_comment(results, redactor=redactor, report_url=report_url),
    }
    for name, text in files.items():
        write_atomic(out / name, [text.encode("utf-8")])
