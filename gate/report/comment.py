"""The sticky PR comment: the hidden marker, then the report, within GitHub's limit.

The comment renders the report's view (:mod:`gate.report.view`) without the sections of
the full report only (:mod:`gate.report.markdown`), fitted into ``max_chars``; docs/reports.md
("Size") gives the limit and the order rows are left out in.

The marker, ``<!-- toolgate:comment name=<gate name> -->``, is the first line, so that
:mod:`gate.github.comments` finds the comment again (together with its author: a pasted
marker does not hijack it). The name is percent-encoded outside ``[A-Za-z0-9._-]`` so it
can never close the HTML comment.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import quote

from gate.report.escape import Escaper
from gate.report.fit import Block, fit_redacted, utf16_len
from gate.report.markdown import COMMENT, blocks, verdict_why
from gate.report.redact import Redactor
from gate.report.view import status, view
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


# ─── the workflow_run comment: another run's results, that run's verdict ──────

RELAY_NOTICE_GATE = "toolgate"
"""The gate name of the fixed notice posted when a run left no valid results.json (its
gate name is unknown: nothing of the artifact is read for it)."""


@dataclass(frozen=True, slots=True)
class RelayedRun:
    """The run whose output a ``workflow_run`` job posts, as GitHub's event describes it
    (trusted: GitHub wrote it, not the run)."""

    head_sha: str
    conclusion: str | None
    """The triggering run's conclusion: the verdict of record."""
    run_number: int | None = None
    run_url: str | None = None


def _run_link(run: RelayedRun) -> str:
    # "run 41", never "#41": a number after # would reference issue 41.
    name = f"workflow run {run.run_number}" if run.run_number else "the workflow run"
    url = run.run_url
    return f"[{name}]({url})" if url and _PLAIN_URL.fullmatch(url) else name


_PLAIN_URL = re.compile(r"https?://[A-Za-z0-9._~:/?&=%+-]+")


def _concluded(run: RelayedRun) -> tuple[str, str]:
    """(emoji, words) of the run's conclusion, GitHub's word quoted when it is neither
    success nor failure."""
    match run.conclusion:
        case "success":
            return "✅", "passed"
        case "failure":
            return "❌", "failed"
        case None:
            return "⚪", "did not finish"
        case other:
            return "⚪", f"ended {Escaper().code(other, 40, table=False)}"


def relayed_heading(results: Results, run: RelayedRun, esc: Escaper) -> list[str]:
    """The verdict line from the run's conclusion, then what the results file claims —
    with a warning when the two disagree."""
    emoji, word = _concluded(run)
    if emoji == "✅" and status(results)[0] == "⚠️":
        emoji = "⚠️"  # the check passed, but compared nothing: never green
    name = esc.code(results.gate_name, 64, table=False)
    lines = [
        f"## {emoji} ToolGate {name} {word} — the check of {_run_link(run)} "
        f"concluded {esc.code(run.conclusion or 'nothing yet', 40, table=False)}",
        "",
    ]
    claim = status(results)[1]  # what the results file says of itself
    if (claim, run.conclusion) not in (("passed", "success"), ("failed", "failure")):
        lines += [
            f"> ⚠️ The results file that run uploaded says **{claim}**, but its check "
            f"concluded {esc.code(run.conclusion or 'nothing yet', 40, table=False)}. The "
            "check is the verdict of record (`fail-on: never` keeps a failing gate's check "
            "green); what follows is what the uploaded results say.",
            "",
        ]
    lines.append(f"_The uploaded results say: {claim} — {verdict_why(results, esc)}_")
    return lines


def relay_footer(run: RelayedRun) -> str:
    return (
        f"<sub>Posted by the `workflow_run` job from the output of {_run_link(run)} for "
        f"commit {Escaper().code(run.head_sha[:12], 12, table=False)}; the verdict of record "
        "is that run's check.</sub>"
    )


def render_relayed_comment(
    results: Results,
    run: RelayedRun,
    *,
    max_chars: int = DEFAULT_MAX_CHARS,
    redactor: Redactor | None = None,
) -> str:
    """The comment for another run's uploaded results (the fork-PR ``workflow_run``
    pattern): the report rendered from ``results`` like every comment — every string of
    it escaped — under a heading whose verdict is ``run``'s conclusion."""
    esc = Escaper(redactor or Redactor(), limit=120)
    return render_comment(
        results,
        max_chars=max_chars,
        redactor=redactor,
        report_url=run.run_url,
        heading=relayed_heading(results, run, esc),
        footer=["", relay_footer(run), ""],
    )


class RelayProblem(enum.StrEnum):
    """Why a run's output yields no report: fixed sentences, never the artifact's text."""

    MISSING = "holds no results.json"
    TOO_LARGE = "holds a results.json over the size limit"
    INVALID = "holds a results.json that is not a valid results file"
    NOT_DOWNLOADED = "could not be downloaded (no output folder)"


def render_relay_notice(run: RelayedRun, problem: str) -> str:
    """The fixed notice posted instead of a report: names the run and its conclusion,
    and why there is nothing else to show. Nothing in it comes from the artifact."""
    emoji, word = _concluded(run)
    conclusion = Escaper().code(run.conclusion or "nothing yet", 40, table=False)
    return "\n".join(
        [
            marker(RELAY_NOTICE_GATE),
            f"## {emoji} ToolGate {word} — the check of {_run_link(run)} concluded {conclusion}",
            "",
            f"> ⚠️ The output that run uploaded {problem}, so there is no report to show "
            "here. That run's step summary has its report.",
            "",
            relay_footer(run),
            "",
        ]
    )


def render_comment(
    results: Results,
    *,
    max_chars: int = DEFAULT_MAX_CHARS,
    redactor: Redactor | None = None,
    report_url: str | None = None,
    heading: Sequence[str] | None = None,
    footer: Sequence[str] = (),
) -> str:
    """The comment body (Markdown), at most ``max_chars`` UTF-16 code units; ``heading``
    replaces the verdict heading and ``footer`` ends it (:func:`render_relayed_comment`)."""
    red = redactor or Redactor()
    esc = Escaper(red, limit=320)
    limit = min(max_chars, GITHUB_COMMENT_LIMIT)
    v = view(results)

    def parts() -> list[Block]:
        marked = [Block(head=[marker(results.gate_name)])]
        tail = [Block(head=list(footer))] if footer else []
        return [*marked, *blocks(v, esc, shown=COMMENT, heading=heading), *tail]

    text = fit_redacted(
        parts,
        limit,
        measure=utf16_len,
        where=where_full_report(report_url),
        shortened="Shortened to fit GitHub's comment size limit",
        banner_at=2,
        redact=red.redact,
    )
    return text if utf16_len(text) <= limit else text[: max(0, limit - 1)]
