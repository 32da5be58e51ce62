"""The full Markdown report: ``report.md`` and the ``$GITHUB_STEP_SUMMARY``.

Everything the comment shows, and more (every metric with its interval, the gates and
their reasons, the variance guard, slices, tool confusion, malformed-call classes and the
per-sample evidence of every failing case). The runner accepts at most 1 MiB of step
summary per step, so the report is fitted into ``max_bytes`` (UTF-8 bytes; default
:data:`STEP_SUMMARY_LIMIT`), cutting the all-cases table first, then per-tool rows and the
per-sample evidence (down to 20 failing cases), and so on (``gate.report.fit``);
``results.json`` always holds everything.
"""

from __future__ import annotations

from gate.report.escape import Escaper
from gate.report.fit import Block, fit, utf8_len
from gate.report.markdown import Style, build
from gate.report.redact import Redactor
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
    esc = Escaper(red, limit=240)
    where = "every case and sample is in `results.json`"
    if report_url:
        where += f" ([this run]({report_url}))"
    budget = max_bytes
    text = ""
    for _ in range(3):
        blocks = build(results, Style.FULL, esc)

        def banner(n: int) -> Block:
            return Block(
                head=[
                    f"> ⚠️ Shortened to fit the size limit: {n:,} rows were left out; {where}.",
                    "",
                ]
            )

        fitted = fit(blocks, budget, measure=utf8_len, where=where, banner=banner, banner_at=1)
        text = red.redact(fitted.text)
        over = utf8_len(text) - max_bytes
        if over <= 0:
            return text
        budget -= over + 64
    return text.encode("utf-8")[: max(0, max_bytes)].decode("utf-8", "ignore")
