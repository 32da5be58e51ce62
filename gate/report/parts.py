"""The parts of a report view (:mod:`gate.report.view`): what is said, not how it looks.

A :class:`View` is a heading, a few context paragraphs and a list of :class:`Section` s.
A section has a title, a :class:`Placement` (in sight, folded, or only in the full
report), paragraphs, a :class:`Table` of :class:`Row` s and a list of :class:`Item` s.
Every piece of text is a :data:`~gate.report.sentences.Sentence`: words, and
:class:`~gate.report.sentences.Code` for data shown literally. Each renderer (the comment,
report.md and the step summary, the console) escapes and lays out these parts its own
way, and decides nothing about what to show.

Rows may be built lazily (:class:`Lazy`): a comment over 100,000 failing cases renders
the few hundred rows that fit, not all of them.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, overload

from gate.report.sentences import Sentence


class Sub(str):
    """A small note beside a value (a dataset line: ``line 50``)."""

    __slots__ = ()


class Fixed(str):
    """Figures and words of ours only, no data (``36/36 → 0/3 (p = 0.00028)``, ``✅ ≥
    0.850``): shown as they are, HTML made inert."""

    __slots__ = ()


class Full(Fixed):
    """Figures of ours shown in the full report only (a value's interval: ``[0.86, 0.96]``);
    the comment and the console leave them out."""

    __slots__ = ()


class Placement(enum.Enum):
    """Where a section goes."""

    VISIBLE = "visible"
    """In sight in every report."""
    FOLDED = "folded"
    """Collapsed under its title (the console names it in one line)."""
    FULL = "full"
    """Only in the full report (report.md, the step summary)."""


class Box(enum.Enum):
    """How a paragraph stands out."""

    PLAIN = "plain"
    NOTE = "note"
    """An aside (italic)."""
    WARNING = "warning"
    """A warning (a ⚠️ quote)."""


class Key(enum.StrEnum):
    """Which section: one name per kind of content, in the order a reader meets them."""

    NOT_VALID = "not_valid"
    MISSING = "missing"
    HARD = "hard_failures"
    REGRESSIONS = "regressions"
    NEW_FAILING = "new_failing"
    UNDECIDED = "undecided"
    UNDECIDED_RISES = "undecided_rises"
    REMOVED = "removed"
    RETIRED = "retired"
    NO_ANSWER = "no_answer"
    FAILING = "failing"
    METRICS = "metrics"
    OTHER_METRICS = "other_metrics"
    GATES = "gates"
    VARIANCE = "variance"
    KNOWN = "known_failures"
    DRIFT = "drift"
    FIXED = "fixed"
    FLAKY = "flaky"
    NOISE = "noise"
    NEW_PASSING = "new_passing"
    HISTORY = "history_tests"
    NOT_COMPARABLE = "not_comparable"
    PER_TOOL = "per_tool"
    SLICES = "slices"
    CONFUSION = "confusion"
    EVIDENCE = "evidence"
    CONVERSATIONS = "conversations"
    JUDGE = "judge"
    ALL_CASES = "all_cases"
    RUN_INFO = "run_info"


@dataclass(frozen=True, slots=True)
class Para:
    """A paragraph."""

    text: Sentence
    box: Box = Box.PLAIN


@dataclass(frozen=True, slots=True)
class Cell:
    """A table cell of several lines, with more of them folded under ``more_label``."""

    lines: tuple[Sentence, ...]
    more: tuple[Sentence, ...] = ()
    more_label: str = ""


@dataclass(frozen=True, slots=True)
class Row:
    """A table row: one cell per column (a plain sentence is a one-line cell);
    ``group``: a row that heads the rows under it (``Cost per sample``)."""

    cells: tuple[Cell | Sentence, ...]
    group: bool = False


_T = TypeVar("_T")


class Lazy(Sequence[_T], Generic[_T]):
    """Rows or items built on first access (``build(item)``), then kept."""

    def __init__(self, items: Sequence[Any], build: Callable[[Any], _T]) -> None:
        self._items = items
        self._build = build
        self._done: list[_T] = []

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, i: int) -> _T: ...
    @overload
    def __getitem__(self, i: slice) -> list[_T]: ...
    def __getitem__(self, i: int | slice) -> _T | list[_T]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        while len(self._done) <= i:
            self._done.append(self._build(self._items[len(self._done)]))
        return self._done[i]

    def __iter__(self) -> Iterator[_T]:
        return (self[i] for i in range(len(self)))


@dataclass(frozen=True, slots=True)
class Table:
    """Columns and rows, worst first; ``right``: the columns of figures. Under a size
    limit a renderer leaves rows out, rank ``cut`` first (1 first; 0 never), keeping
    ``keep`` (:mod:`gate.report.fit`); ``what`` names the rows left out."""

    columns: tuple[str, ...]
    rows: Sequence[Row]
    right: tuple[int, ...] = ()
    keep: int = 0
    cut: int = 0
    what: str = "rows"


@dataclass(frozen=True, slots=True)
class Item:
    """A list item: its text, sub-items, data lines shown literally (``lines``, a diff
    in ``lang``) and a table folded under ``table_label``."""

    text: Sentence
    sub: tuple[Item, ...] = ()
    lines: tuple[str, ...] = ()
    lang: str = ""
    table: Table | None = None
    table_label: str = ""


@dataclass(frozen=True, slots=True)
class Section:
    """One section: ``title`` (our words and counts: data in it only as
    :class:`~gate.report.sentences.Code`), ``intro`` paragraphs, a ``table``, ``items``
    (cut like a table's rows: ``keep``, ``cut``, ``what``), then ``notes`` (items under
    the table) and ``outro`` paragraphs."""

    key: Key
    title: Sentence
    placement: Placement = Placement.VISIBLE
    intro: tuple[Para, ...] = ()
    table: Table | None = None
    items: Sequence[Item] = ()
    notes: tuple[Item, ...] = ()
    outro: tuple[Para, ...] = ()
    keep: int = 0
    cut: int = 0
    what: str = "items"


@dataclass(frozen=True, slots=True)
class Heading:
    """The report's first line: the verdict's mark and word, the gate, and why — the
    broken cases named first (up to three), every count true."""

    mark: str
    word: str
    gate: str
    why: Sentence


@dataclass(frozen=True, slots=True)
class View:
    """The whole report as data (:func:`gate.report.view.view`)."""

    heading: Heading
    context: tuple[Para, ...]
    sections: tuple[Section, ...]
    footer: Sentence
    """One line of the run's figures (the console ends with it)."""
    broken: tuple[str, ...] = ()
    """The cases the run found broken, in the order the report lists them."""
