"""``toolgate diff BASE_RESULTS HEAD_RESULTS [--format md|json]``: the flip table alone.

Reads two results.json files and prints which cases flipped between them: HEAD's
samples tested against the base history BASE carries, by the one classification every
command uses (:mod:`gate.policy.flips`: regressions and fixes, likely ones with why they
are not significant yet, undecided ones with what would decide them, noise; new and
removed cases) — for a HEAD that ``toolgate check`` wrote with BASE as its baseline, the
same kinds as that check. ``--format json`` prints the :class:`gate.results.Comparison`.
Exit code 0 whatever the flips (this command reports; ``check`` and ``merge`` gate), 2 on
bad input.

The Markdown is rendered here, small and self-contained: every string from a dataset or a
model (case ids, check and tool names) is escaped for a Markdown table cell (:func:`cell`:
nothing is mentioned, referenced or autolinked).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from gate.errors import ExitCode
from gate.model import Comparison, Flip
from gate.pipeline.sequential import recorded_comparison
from gate.report import fmt
from gate.results import dumps_results, read_results

MAX_CELL = 120
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069]")
_MD_PUNCT = re.compile(r"([\\`*_{}\[\]()#+!|~])")
_REFERENCE = re.compile(r"#(?=\d)|(?i:\bGH-)(?=\d)|:(?=//)|(?i:\bwww)(?=\.)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("base", metavar="BASE_RESULTS", help="the baseline's results.json")
    parser.add_argument("head", metavar="HEAD_RESULTS", help="this run's results.json")
    parser.add_argument(
        "--format",
        choices=("md", "json"),
        default="md",
        help="md: a Markdown flip table (default); json: the comparison as JSON",
    )


def run(args: argparse.Namespace) -> int:
    base = read_results(Path(args.base), display=args.base)
    head = read_results(Path(args.head), display=args.head)
    comparison = recorded_comparison(base, head, source=args.base)
    if args.format == "json":
        sys.stdout.write(dumps_results(comparison).decode())
    else:
        sys.stdout.write(render_flips_md(comparison))
    return ExitCode.PASS


def cell(value: object, limit: int | None = MAX_CELL) -> str:
    """Escape an untrusted string for one Markdown table cell (or a line of prose),
    truncated to ``limit`` characters."""
    text = str(value)
    text = _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text.replace("\r\n", "\n"))
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _MD_PUNCT.sub(r"\\\1", text)
    # GitHub links #12, owner/repo#12 and GH-12 after Markdown (a backslash does not stop
    # it), and bare URLs: a zero-width space breaks each, as in every other report.
    text = _REFERENCE.sub("\\g<0>\u200b", text)
    return text.replace("@", "@\u200b")


def _rate(rate: float | None, n: int) -> str:
    return "—" if rate is None else f"{rate:.2f} ({round(rate * n)}/{n})"


_TITLES = {
    "regression": "Regressions",
    "likely_regression": "Likely regressions (not significant yet)",
    "undecided": "Undecided: changed, too few samples to tell",
    "fix": "Fixes",
    "likely_fix": "Likely fixes (not significant yet)",
    "noise": "Within noise: the test could have told, and did not",
    "new": "New cases",
    "removed": "Removed cases",
}


def render_flips_md(c: Comparison) -> str:
    """The flip table in Markdown (the whole output of ``toolgate diff``)."""
    lines = ["## ToolGate flips", ""]
    if not c.comparable:
        lines += [f"Not comparable: {cell(c.note or '', None)}", ""]
        return "\n".join(lines) + "\n"
    lines.append(
        f"**{c.regressions} regression(s), {c.likely_regressions} likely, {c.fixes} fix(es), "
        f"{c.likely_fixes} likely, {c.undecided} undecided, {c.noise} noise** — "
        f"base {cell(c.source)}"
    )
    if c.note:
        lines += ["", cell(c.note, None)]
    lines += ["", f"_{cell(c.rule, None)}_", ""]
    if not c.flips:
        lines += ["No flips: no case moved.", ""]
    for kind, title in _TITLES.items():
        rows = [f for f in c.flips if f.kind == kind]
        if rows:
            lines += [f"### {title} ({len(rows)})", "", *_table(rows), ""]
    if c.cost:
        n = max(d.cases for d in c.cost)
        lines += [
            f"### Cost per sample ({n} case(s) against their base history)",
            "",
            "| metric | base | head | change |",
            "|---|--:|--:|--:|",
            *(
                f"| {d.metric} | {fmt.cost(d.metric, d.base)} | {fmt.cost(d.metric, d.head)} "
                f"| {fmt.cost_change(d.metric, d.change, d.relative, d.beyond_noise)} |"
                for d in c.cost
            ),
            "",
        ]
    if c.tool_drift:
        lines += ["### Tool definitions changed", ""]
        for d in c.tool_drift:
            cases = ", ".join(cell(x) for x in d.flipped_cases) or "none"
            lines.append(f"- {cell(d.tool)} ({d.change}); flipped cases: {cases}")
        lines.append("")
    return "\n".join(lines)


def _table(rows: list[Flip]) -> list[str]:
    out = [
        "| case | line | base | head | p | failed checks | tools | why |",
        "|---|---:|---|---|---|---|---|---|",
    ]
    for f in rows:
        tools = ", ".join(cell(t) + (" (changed)" if t in f.drifted_tools else "") for t in f.tools)
        out.append(
            f"| {cell(f.case_id)} | {f.line if f.line is not None else ''} "
            f"| {_rate(f.base_pass_rate, f.base_samples)} "
            f"| {_rate(f.head_pass_rate, f.head_samples)} "
            f"| {'' if f.p_value is None else f'{f.p_value:.2g}'} "
            f"| {', '.join(cell(x) for x in f.failed_checks)} | {tools} "
            f"| {cell(f.because or '')} |"
        )
    return out
