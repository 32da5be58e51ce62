"""The Markdown renderer of the report view (:mod:`gate.report.view`): the PR comment, and
the full report (report.md, the step summary).

It lays out what the view says and decides nothing about what to show: every section in
its order, a folded one under ``<details>``, the sections of the full report only where
``shown`` asks for them. Every word goes through :class:`gate.report.escape.Escaper`
(data shown literally as code spans), and each section becomes a
:class:`gate.report.fit.Block` whose rows the fitting leaves out, least important first,
to keep within a size (:mod:`gate.report.fit`).
"""

from __future__ import annotations

import html
import re
from collections.abc import Collection, Sequence

from gate.report.escape import Escaper, visible
from gate.report.fit import Block
from gate.report.parts import (
    Box,
    Cell,
    Fixed,
    Full,
    Heading,
    Item,
    Lazy,
    Para,
    Placement,
    Row,
    Section,
    Sub,
    Table,
    View,
)
from gate.report.sentences import Code, Sentence
from gate.report.view import status, view
from gate.results import Results

__all__ = ["COMMENT", "REPORT", "blocks", "render_sentence", "status", "verdict_why"]

COMMENT = frozenset({Placement.VISIBLE, Placement.FOLDED})
"""What the comment shows."""
REPORT = frozenset(Placement)
"""What the full report shows."""


def render_sentence(
    parts: Sentence, esc: Escaper, lim: int | None = None, *, table: bool = True, full: bool
) -> str:
    """A sentence in Markdown: words escaped as text, :class:`Code` parts as code spans,
    :class:`~gate.report.parts.Sub` as a small note, :class:`~gate.report.parts.Full` only
    in the full report (``full``)."""
    out = []
    for p in parts:
        if isinstance(p, Full) and not full:
            continue
        if isinstance(p, Code):
            out.append(esc.code(p, lim, table=table))
        elif isinstance(p, Fixed):
            shown = html.escape(visible(p), quote=False)
            out.append(shown.replace("|", "\\|") if table else shown)
        elif isinstance(p, Sub):
            out.append(f" <sub>{esc.text(p, lim)}</sub>")
        else:
            out.append(esc.text(p, lim))
    return "".join(out)


def render_title(parts: Sentence, esc: Escaper) -> str:
    """A title or a column: our words as they are (HTML made inert; a title holds no data
    in its words, :class:`~gate.report.parts.Section`), data as code spans."""
    return "".join(
        esc.code(p, 200, table=False)
        if isinstance(p, Code)
        else html.escape(visible(p), quote=False)
        for p in parts
    )


def verdict_why(results: Results, esc: Escaper) -> str:
    """The verdict's reason as inert prose (the heading's ``why``), as the comment has it."""
    why = render_sentence(view(results).heading.why, esc, 400, table=False, full=False)
    return why or status(results)[1]


def heading_line(h: Heading, esc: Escaper, level: str, *, full: bool) -> str:
    name = esc.code(h.gate, 64, table=False)
    why = render_sentence(h.why, esc, 400, table=False, full=full)
    return f"{level} {h.mark} ToolGate {name} {h.word} — {why}"


def blocks(
    v: View,
    esc: Escaper,
    *,
    shown: Collection[Placement] = COMMENT,
    level: str = "##",
    heading: Sequence[str] | None = None,
) -> list[Block]:
    """Every block of the report, in order (the caller fits them into a size).
    ``heading`` replaces the verdict line (trusted Markdown): the ``workflow_run``
    comment takes its verdict from the triggering run's conclusion
    (:func:`gate.report.comment.render_relayed_comment`)."""
    full = Placement.FULL in shown
    head = [heading_line(v.heading, esc, level, full=full)] if heading is None else list(heading)
    out = [Block(head=[*head, "", *_paras(v.context, esc, full)])]
    for s in v.sections:
        if s.placement in shown:
            out += _section(s, esc, full)
    return out


def _paras(paras: Sequence[Para], esc: Escaper, full: bool) -> list[str]:
    out: list[str] = []
    for p in paras:
        text = render_sentence(p.text, esc, 600, table=False, full=full)
        match p.box:
            case Box.NOTE:
                out += [f"_{text}_", ""]
            case Box.WARNING:
                out += [f"> ⚠️ {text}", ""]
            case Box.PLAIN:
                out += [text, ""]
    return out


def _section(s: Section, esc: Escaper, full: bool) -> list[Block]:
    """A section as blocks: its title (a ``<details>`` summary when folded), intro, table
    rows or items (the rows the fitting may cut), notes and outro."""
    folded = s.placement is Placement.FOLDED
    title = render_title(s.title, esc)
    if not title:
        head: list[str] = []
    elif folded:
        head = ["<details>", f"<summary>{title}</summary>", ""]
    else:
        head = [f"### {title}", ""]
    head += _paras(s.intro, esc, full)
    out: list[Block] = []
    if s.table is not None:
        t = s.table
        rows = Lazy(t.rows, lambda r: _row(r, esc, full))
        keep = 0 if folded else t.keep
        block = Block([*head, *_table_head(t)], rows, [""], keep=keep, cut=t.cut, what=t.what)
        block.drop_whole = folded
        out.append(block)
        head = []
    if s.items:
        items = Lazy(s.items, lambda i: _item(i, esc, full))
        keep = 0 if folded else s.keep
        out.append(Block(head, items, [""], keep=keep, cut=s.cut, what=s.what, drop_whole=folded))
        head = []
    notes = [_item(i, esc, full) for i in s.notes]
    closing = [*notes, *([""] if notes else []), *_paras(s.outro, esc, full)]
    closing += ["</details>", ""] if folded and title else []
    if out:
        out[-1].tail.extend(closing)
    else:
        out.append(Block([*head, *closing]))
    return out


def _table_head(t: Table) -> list[str]:
    cols = " | ".join(t.columns)
    rule = "|".join("--:" if i in t.right else "---" for i in range(len(t.columns)))
    return [f"| {cols} |", f"|{rule}|"]


def _cell(c: Cell | Sentence, esc: Escaper, full: bool) -> str:
    if not isinstance(c, Cell):
        return render_sentence(c, esc, full=full)
    text = "<br>".join(render_sentence(x, esc, full=full) for x in c.lines) or "—"
    if c.more:
        rest = "<br>".join(render_sentence(x, esc, full=full) for x in c.more)
        text += f"<details><summary>{esc.text(c.more_label)}</summary>{rest}</details>"
    return text


def _row(r: Row, esc: Escaper, full: bool) -> str:
    cells = [_cell(c, esc, full) for c in r.cells]
    if r.group and cells:
        cells[0] = f"**{cells[0]}**"
    return "| " + " | ".join(cells) + " |"


def _item(i: Item, esc: Escaper, full: bool, depth: int = 0) -> str:
    text = render_sentence(i.text, esc, table=False, full=full)
    if i.lines:
        return "\n".join([text, _fenced(i.lines, esc, i.lang)])
    pad = "  " * depth
    lines = [f"{pad}- {text}"]
    lines += [_item(x, esc, full, depth + 1) for x in i.sub]
    if i.table is not None:
        rows = [_row(r, esc, full) for r in i.table.rows]
        lines += ["", f"<details><summary>{esc.text(i.table_label)}</summary>", ""]
        lines += [*_table_head(i.table), *rows, "", "</details>", ""]
    return "\n".join(lines)


def _fenced(lines: Sequence[str], esc: Escaper, lang: str) -> str:
    """A fenced block of data lines: each line made visible and truncated, and a fence
    longer than any backtick run inside, so the data cannot close it."""
    body = [esc.console(line, 300) for line in lines]
    longest = max((len(run) for line in body for run in re.findall("`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return "\n".join([f"{fence}{lang}", *body, fence])
