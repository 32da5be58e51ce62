"""The sticky PR comment: the hidden marker, then the report, within GitHub's limit.

GitHub rejects a comment body over 65,536 characters (HTTP 422). The comment is built
from the same blocks as the full report (``gate.report.markdown``, comment style) and
fitted into ``max_chars`` (default 65,000, counted in UTF-16 code units to be safe): the
full case table goes first, then per-tool rows, then fixed/flaky/judge rows, then drift,
then regressions down to the 10 worst, then hard failures down to 10. What is kept
always includes the verdict line, the hard failures and the worst flips; a banner under
the verdict says how many rows were left out and where the full report is.

The marker, ``<!-- toolgate:comment name=<gate name> -->``, is the first line, so that
:mod:`gate.github.comments` finds the comment again (together with its author: a pasted
marker does not hijack it). The name is percent-encoded outside ``[A-Za-z0-9._-]`` so it
can never close the HTML comment.
"""

from __future__ import annotations

from urllib.parse import quote

from gate.report.escape import Escaper
from gate.report.fit import Block, fit, utf16_len
from gate.report.markdown import Style, build
from gate.report.redact import Redactor
from gate.results import Results

GITHUB_COMMENT_LIMIT = 65_536
DEFAULT_MAX_CHARS = 65_000


def marker(gate_name: str) -> str:
    """The hidden first line that identifies this gate's comment."""
    return f"<!-- toolgate:comment name={quote(gate_name, safe='._-')} -->"


def where_full_report(report_url: str | None) -> str:
    if report_url:
        return f"the full report is in the [step summary and artifacts of this run]({report_url})"
    return "the full report is in this run's step summary and in `report.md` (artifact)"


def render_comment(
    results: Results,
    *,
    max_chars: int = DEFAULT_MAX_CHARS,
    redactor: Redactor | None = None,
    report_url: str | None = None,
) -> str:
    """The comment body (Markdown), at most ``max_chars`` UTF-16 code units."""
    red = redactor or Redactor()
    esc = Escaper(red, limit=120)
    where = where_full_report(report_url)
    budget = min(max_chars, GITHUB_COMMENT_LIMIT)
    text = ""
    for _ in range(3):
        blocks = [Block(head=[marker(results.gate_name)]), *build(results, Style.COMMENT, esc)]

        def banner(n: int) -> Block:
            return Block(
                head=[
                    f"> ⚠️ Shortened to fit GitHub's comment size limit: {n:,} rows were left "
                    f"out; {where}.",
                    "",
                ]
            )

        fitted = fit(blocks, budget, measure=utf16_len, where=where, banner=banner, banner_at=2)
        # A last pass over the whole text: nothing unescaped may carry a secret.
        text = red.redact(fitted.text)
        over = utf16_len(text) - min(max_chars, GITHUB_COMMENT_LIMIT)
        if over <= 0:
            return text
        budget -= over + 64
    return text[: max(0, min(max_chars, GITHUB_COMMENT_LIMIT) - 1)]
