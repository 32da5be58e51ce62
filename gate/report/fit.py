"""Fitting a report into a size limit by leaving rows out, least important first.

A report is a list of :class:`Block` s. A block is a few fixed lines (a heading, a table
header) around a list of rows. Under pressure, blocks give up rows in the order of their
``cut`` rank (1 first; rank 0 never gives up rows), each down to its ``keep`` minimum, and
say so in place ("… and 37 more cases left out"). Once a rank's cuts make the report fit,
rows of that rank are added back greedily (binary search per block), so the report uses
the space it has. If even every minimum is too big, the text is cut at a line boundary
(closing any ``<details>`` or code fence left open) — a guarantee, not a plan: the
minimums keep the verdict, the hard failures and the worst flips well inside the limits.

Cost. Rows may be lazy (:class:`gate.report.parts.Lazy`): rendered only when their size
is needed, and sizes are added up line by line (``measure`` is additive over lines joined
by ``\\n``) with an early stop once the budget is exceeded. So a comment over 100,000
regressions renders a few hundred of them, not all.

Measures: GitHub counts a comment's length in characters; counting UTF-16 code units is
the safe reading (an emoji outside the BMP counts twice). The step summary limit is in
bytes (UTF-8).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

Measure = Callable[[str], int]


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8"))


@dataclass
class Block:
    head: list[str] = field(default_factory=list)
    rows: Sequence[str] = field(default_factory=list)
    tail: list[str] = field(default_factory=list)
    keep: int = 0
    """Rows always kept (the worst, as rows are ordered worst first)."""
    cut: int = 0
    """Rank in the cutting order: 1 is cut first; 0 is never cut."""
    what: str = "rows"
    """What the rows are, plural, for the note: "cases", "tools", … (an "s" is dropped
    for one)."""
    drop_whole: bool = False
    """With no rows kept, replace the whole block (heading included) by the note."""
    shown: int = -1
    _sizes: list[int] = field(default_factory=list, repr=False)
    """Cumulative measured size of rows[:k+1] (each row + its newline), filled lazily."""

    def __post_init__(self) -> None:
        if self.shown < 0:
            self.shown = len(self.rows)

    @property
    def left_out(self) -> int:
        return len(self.rows) - self.shown

    def _note(self, where: str) -> list[str]:
        n = self.left_out
        if not n:
            return []
        what = self.what[:-1] if n == 1 and self.what.endswith("s") else self.what
        if self.shown == 0 and self.drop_whole:
            return [f"_{n:,} {what} left out to fit the size limit; {where}._", ""]
        return [f"_… and {n:,} more {what} left out; {where}._"]

    def render(self, where: str) -> list[str]:
        note = self._note(where)
        if note and self.shown == 0 and self.drop_whole:
            return note
        lines = [*self.head, *self.rows[: self.shown]]
        if note:
            lines.append("")  # end a table or list before the note
            lines += note
        lines.extend(self.tail)
        return lines

    def rows_size(self, k: int, measure: Measure, cap: int | None = None) -> int:
        """Size of the first ``k`` rows (each with its newline); stops early past ``cap``."""
        while len(self._sizes) < k:
            i = len(self._sizes)
            prev = self._sizes[-1] if self._sizes else 0
            self._sizes.append(prev + measure(self.rows[i]) + 1)
            if cap is not None and self._sizes[-1] > cap:
                return self._sizes[-1]
        return self._sizes[k - 1] if k else 0

    def size(self, measure: Measure, where: str, cap: int | None = None) -> int:
        note = self._note(where)
        if note and self.shown == 0 and self.drop_whole:
            return sum(measure(x) + 1 for x in note)
        fixed = sum(measure(x) + 1 for x in (*self.head, *self.tail, *note))
        if note:
            fixed += 1
        room = None if cap is None else cap - fixed
        return fixed + self.rows_size(self.shown, measure, room)


def render(blocks: Sequence[Block], where: str) -> str:
    return "\n".join(line for b in blocks for line in b.render(where))


@dataclass(frozen=True, slots=True)
class Fitted:
    text: str
    left_out: int
    """Rows left out across blocks (0: nothing was cut)."""
    hard_cut: bool


def fit(
    blocks: Sequence[Block],
    budget: int,
    *,
    measure: Measure,
    where: str,
    banner: Callable[[int], Block] | None = None,
    banner_at: int = 1,
) -> Fitted:
    """Render ``blocks`` within ``budget`` (as counted by ``measure``).

    ``banner(n)`` builds a block announcing that ``n`` rows were left out; it is inserted
    at ``banner_at`` when anything was cut, and its size is part of the budget.
    """
    blocks = list(blocks)

    def assemble() -> list[Block]:
        n = sum(b.left_out for b in blocks)
        if n and banner is not None:
            return [*blocks[:banner_at], banner(n), *blocks[banner_at:]]
        return blocks

    def fits() -> bool:
        total = -1  # "\n".join: one newline fewer than lines
        for b in assemble():
            total += b.size(measure, where, budget - total)
            if total > budget:
                return False
        return True

    if fits():
        return Fitted(render(assemble(), where), 0, False)
    for rank in sorted({b.cut for b in blocks if b.cut > 0}):
        group = [b for b in blocks if b.cut == rank]
        for b in group:
            b.shown = min(b.keep, len(b.rows))
        if fits():
            for b in group:
                _grow(b, fits)
            return Fitted(render(assemble(), where), sum(b.left_out for b in blocks), False)
    text = render(assemble(), where)
    return Fitted(_hard_cut(text, budget, measure, where), sum(b.left_out for b in blocks), True)


def fit_redacted(
    make: Callable[[], Sequence[Block]],
    limit: int,
    *,
    measure: Measure,
    where: str,
    shortened: str,
    banner_at: int,
    redact: Callable[[str], str],
) -> str:
    """:func:`fit` for a text redacted once fitted (a last pass: nothing unescaped may
    carry a secret, and a mask can be longer than what it hides): up to three tries, each
    with a budget smaller by what the last went over. The banner says ``shortened``; the
    text of the last try may still be over ``limit`` (the caller cuts it)."""

    def banner(n: int) -> Block:
        return Block(head=[f"> ⚠️ {shortened}: {n:,} rows were left out; {where}.", ""])

    budget = limit
    text = ""
    for _ in range(3):
        fitted = fit(
            make(), budget, measure=measure, where=where, banner=banner, banner_at=banner_at
        )
        text = redact(fitted.text)
        over = measure(text) - limit
        if over <= 0:
            break
        budget -= over + 64
    return text


def _grow(block: Block, fits: Callable[[], bool]) -> None:
    """Largest ``shown`` in [current, all rows] that still fits (sizes grow with rows)."""
    lo, hi = block.shown, len(block.rows)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        block.shown = mid
        if fits():
            lo = mid
        else:
            hi = mid - 1
    block.shown = lo


def _hard_cut(text: str, budget: int, measure: Measure, where: str) -> str:
    note = f"\n\n_The report was cut here to fit the size limit; {where}._\n"
    room = budget - measure(note) - len("\n</details>") * 8
    lines = text.split("\n")
    kept: list[str] = []
    used = 0
    for line in lines:
        n = measure(line) + 1
        if used + n > room:
            break
        kept.append(line)
        used += n
    if not kept:  # a single enormous line: cut inside it (never happens with our escaping)
        kept = [text[: max(0, room)]]
    fence = ""
    for line in kept:
        stripped = line.strip()
        if not fence and stripped.startswith("```"):
            fence = stripped[: len(stripped) - len(stripped.lstrip("`"))]
        elif fence and stripped == fence:
            fence = ""
    if fence:
        kept.append(fence)
    out = "\n".join(kept)
    open_details = out.count("<details>") - out.count("</details>")
    out += "\n</details>" * max(0, open_details)
    return out + note
