"""A value's interval (a ``Full`` sentence part) is shown in the full report only: every
place a sentence stands in the comment and the console leaves it out."""

from __future__ import annotations

from gate.report.console import plain
from gate.report.escape import Escaper
from gate.report.markdown import COMMENT, REPORT, blocks
from gate.report.parts import (
    Full,
    Heading,
    Item,
    Key,
    Para,
    Placement,
    Row,
    Section,
    Table,
    View,
)
from gate.report.redact import Redactor
from gate.report.sentences import Sentence

VALUE: Sentence = ["0.899", Full(" [0.843, 0.947]")]


def _view() -> View:
    table = Table(("Metric", "Head"), [Row((["m"], VALUE))])
    section = Section(
        Key.METRICS,
        ["Metrics"],
        Placement.VISIBLE,
        intro=(Para(VALUE),),
        table=table,
        items=[Item(VALUE, sub=(Item(VALUE),), table=table, table_label="more")],
        notes=(Item(VALUE),),
        outro=(Para(VALUE),),
    )
    return View(Heading("✅", "passed", "g", VALUE), (Para(VALUE),), (section,), ["end"])


def _text(shown: frozenset[Placement]) -> str:
    esc = Escaper(Redactor())
    out: list[str] = []
    for b in blocks(_view(), esc, shown=shown):
        out += [*b.head, *b.rows, *b.tail]
    return "\n".join(out)


def test_full_part__report__shown_everywhere_it_stands() -> None:
    # heading, context, intro, table row, item, sub-item, item table, note, outro
    assert _text(REPORT).count("0.899 [0.843, 0.947]") == 9


def test_full_part__comment__left_out_everywhere() -> None:
    text = _text(COMMENT)
    assert text.count("0.899") == 9
    assert "0.843" not in text


def test_full_part__console__left_out() -> None:
    assert plain(VALUE, Escaper(Redactor())) == "0.899"
