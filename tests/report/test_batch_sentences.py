"""The comment's sentence for a batching failure, from a real scored sample's evidence."""

from __future__ import annotations

from gate.config import ScoringConfig
from gate.model import OrderMode, ToolCall, Turn
from gate.report.escape import Escaper
from gate.report.markdown import render_sentence
from gate.report.sentences import check_sentences
from gate.results import SampleResult, evidence_json
from gate.scorers import ScoringContext, score_sample
from tests.scorers.helpers import case, expected, run

TRIP = case(
    expect=[
        expected("get_weather", {"city": "Paris"}, batch=0),
        expected("get_weather", {"city": "Berlin"}, batch=0),
        expected("book_trip", {}, batch=1),
    ],
    order=OrderMode.STRICT,
)
PARIS = ToolCall("get_weather", {"city": "Paris"})
BERLIN = ToolCall("get_weather", {"city": "Berlin"})
BOOK = ToolCall("book_trip", {})


def _sentences(*turns: tuple[ToolCall, ...]) -> list[str]:
    s = score_sample(
        TRIP, run(*(Turn(calls=t) for t in turns)), ScoringContext.build(ScoringConfig())
    )
    assert s.evidence is not None
    sample = SampleResult(
        sample=0,
        passed=s.passed,
        scores=[],
        failed_checks=list(s.failed_checks),
        evidence=evidence_json(s.evidence),
    )
    esc = Escaper(limit=400)
    return [render_sentence(x, esc, 400, full=True) for _, x in check_sentences(sample)]


def test_sentences__batch_split_over_turns__names_the_calls_and_turns() -> None:
    assert _sentences((PARIS,), (BERLIN,), (BOOK,)) == [
        "`get_weather` and `get_weather` were expected in one turn but came in turns 1 and 2"
    ]


def test_sentences__serial_calls_sent_together__names_the_turn() -> None:
    assert _sentences((PARIS, BERLIN, BOOK)) == [
        "`get_weather`, `get_weather` and `book_trip` were expected in separate turns but "
        "came together in turn 1"
    ]


def test_sentences__batches_in_the_wrong_sequence__says_which_came_first() -> None:
    assert _sentences((BOOK,), (PARIS, BERLIN)) == [
        "`book_trip` came before `get_weather`; this case expects `get_weather` first"
    ]
