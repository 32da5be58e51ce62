"""The full Markdown report: ``report.md`` and the ``$GITHUB_STEP_SUMMARY``.

Everything the comment shows (the same view, :mod:`gate.report.view`), and the sections of
the full report (the gates and their reasons, the variance guard, slices, tool confusion,
malformed-call classes, the per-sample evidence of every failing case, usage and timing).
The runner accepts at most 1 MiB of step summary per step, so the report is fitted into
``max_bytes`` (UTF-8 bytes; default :data:`STEP_SUMMARY_LIMIT`), cutting the all-cases
table first, then per-tool rows and the per-sample evidence (down to 20 failing cases),
and so on (``gate.report.fit``); ``results.json`` always holds everything.
"""

from __future__ import annotations

from gate.report.escape import Escaper
from gate.report.fit import fit_redacted, utf8_len
from gate.report.markdown import REPORT, blocks
from gate.report.redact import Redactor
from gate.report.view import view
from gate.results import Results

STEP_SUMMARY_LIMIT = 1_000_000
"""Bytes: below the runner's 1 MiB (1,048,576) per-step limit, with room to spare."""


def render_markdown(
    results: Results,
    *,
    max_bytes: int = STEP_SUMMARY_LIMIT,
    redactor: Redactor | None = None,
    report_url: str | None = None,
) -> str:
    """The full report as Markdown, at most ``max_bytes`` UTF-8 bytes."""
    red = redactor or Redactor()
    esc = Escaper(red, limit=600)
    where = "every case and sample is in `results.json`"
    if report_url:
        where += f" ([this run]({report_url}))"
    v = view(results)
    text = fit_redacted(
        lambda: blocks(v, esc, shown=REPORT, level="#"),
        max_bytes,
        measure=utf8_len,
        where=where,
        shortened="Shortened to fit the size limit",
        banner_at=1,
        redact=red.redact,
    )
    if utf8_len(text) <= max_bytes:
        return text
    return text.encode("utf-8")[: max(0, max_bytes)].decode("utf-8", "ignore")
