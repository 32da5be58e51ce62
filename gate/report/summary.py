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
from gate.report.fit import Block, fit, utf8_len
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
    budget = max_bytes
    text = ""
    v = view(results)
    for _ in range(3):
        parts = blocks(v, esc, shown=REPORT, level="#")

        def banner(n: int) -> Block:
            return Block(
                head=[
                    f"> ⚠️ Shortened to fit the size limit: {n:,} rows were left out; {where}.",
                    "",
                ]
            )

        fitted = fit(parts, budget, measure=utf8_len, where=where, banner=banner, banner_at=1)
        text = red.redact(fitted.text)
        over = utf8_len(text) - max_bytes
        if over <= 0:
            return text
        budget -= over + 64
    return text.encode("utf-8")[: max(0, max_bytes)].decode("utf-8", "ignore")
