"""The plain-text renderer of the report view (``toolgate report --format console``, what
``toolgate check`` prints).

It shows what the comment shows in sight, in the same order: the verdict line first, then
what the run was compared with, then each section with at most :data:`MAX_ROWS` rows; a
folded section is named in one line. No colour codes (the output is deterministic and
safe to pipe). Data strings are made visible (``gate.report.escape.Escaper.console``): a
model's output cannot move the cursor, clear the screen or print a line that looks like
ours.
"""

from __future__ import annotations

from gate.report.escape import Escaper
from gate.report.parts import Box, Cell, Full, Placement, Row, Section, Sub
from gate.report.redact import Redactor
from gate.report.sentences import Code, Sentence
from gate.report.view import view
from gate.results import Results

MAX_ROWS = 20


def render_console(results: Results, *, redactor: Redactor | None = None) -> str:
    esc = Escaper(redactor or Redactor(), limit=300)
    v = view(results)
    h = v.heading
    out = [f"ToolGate {esc.console(h.gate, 64)}: {h.word.upper()} — {plain(h.why, esc)}"]
    for p in v.context:
        out.append(("warning: " if p.box is Box.WARNING else "") + plain(p.text, esc))
    for s in v.sections:
        if s.placement is not Placement.FULL:
            out += _section(s, esc)
    out += ["", plain(v.footer, esc)]
    return (redactor or Redactor()).redact("\n".join(out)) + "\n"


def plain(sentence: Sentence, esc: Escaper) -> str:
    """A sentence as one line of plain text."""
    out = []
    for p in sentence:
        if isinstance(p, Full):  # the full report's alone
            continue
        if isinstance(p, Sub):
            out.append(f" ({esc.console(p)})")
        elif isinstance(p, Code):
            out.append(esc.console(p))
        else:
            out.append(esc.console(p, 600))
    return "".join(out)


def _section(s: Section, esc: Escaper) -> list[str]:
    title = plain(s.title, esc)
    rows = len(s.table.rows) if s.table is not None else len(s.items)
    if s.placement is Placement.FOLDED:
        return ["", f"{title} — in report.md"] if title else []
    out = [""]
    if title:
        out.append(title)
    out += [f"  {plain(p.text, esc)}" for p in s.intro]
    lines: list[str] = []
    if s.table is not None:
        lines = [_row(r, esc) for r in s.table.rows[:MAX_ROWS]]
    elif s.items:
        lines = [plain(i.text, esc) for i in s.items[:MAX_ROWS]]
    out += [f"  {x}" for x in lines]
    if rows > MAX_ROWS:
        out.append(f"  … {rows - MAX_ROWS} more in report.md")
    out += [f"  {plain(i.text, esc)}" for i in s.notes]
    out += [f"  {plain(p.text, esc)}" for p in s.outro]
    return out


def _cell(c: Cell | Sentence, esc: Escaper) -> str:
    if not isinstance(c, Cell):
        return plain(c, esc)
    text = " · ".join(plain(x, esc) for x in c.lines)
    return text + (f" (+{c.more_label})" if c.more else "")


def _row(r: Row, esc: Escaper) -> str:
    return "  ".join(x for x in (_cell(c, esc) for c in r.cells) if x and x != "—")
