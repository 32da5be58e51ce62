"""Strict parsing of judge answers: a label on the scale, or recorded as unparsable."""

from __future__ import annotations

import pytest

from gate.judge.client import RAW_CHARS, REASON_CHARS, parse_answer

SCALE = ("faithful", "incomplete", "distorted")


@pytest.mark.parametrize(
    "content",
    [
        '{"label": "incomplete", "reason": "drops the date"}',
        '  {"reason": "drops the date", "label": "incomplete"}\n',
        '```json\n{"label": "incomplete", "reason": "drops the date"}\n```',
        '```\n{"label": "incomplete", "reason": "drops the date"}\n```',
    ],
)
def test_parse__one_json_object__label_and_reason(content: str) -> None:
    got = parse_answer(content, SCALE)
    assert (got.label, got.reason, got.problem, got.raw) == (
        "incomplete",
        "drops the date",
        None,
        None,
    )


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("incomplete", "not one JSON object"),
        ('The answer is {"label": "faithful", "reason": "ok"}', "not one JSON object"),
        ('{"label": "faithful", "reason": "ok"} Hope this helps!', "not one JSON object"),
        ('{"label": "faithful"}', "reason: Field required"),
        ('{"label": "faithful", "reason": "ok", "confidence": 0.9}', "confidence: Extra inputs"),
        ('{"label": 1, "reason": "ok"}', "label: Input should be a valid string"),
        ('{"label": "Faithful", "reason": "ok"}', "'Faithful' is not on the scale"),
        ('{"label": "faithful", "label": "distorted", "reason": "ok"}', "duplicate key"),
        ('["faithful", "ok"]', "Input should be a valid dictionary"),
        (
            '```json\n{"label": "faithful", "reason": "a"}\n```\n```json\n{}\n```',
            "not one JSON object",
        ),
        ("", "not one JSON object"),
    ],
)
def test_parse__anything_else__unparsable_with_raw_kept(content: str, problem: str) -> None:
    got = parse_answer(content, SCALE)
    assert got.label is None and got.reason is None
    assert problem in (got.problem or "")
    assert got.raw == content


def test_parse__no_content__unparsable() -> None:
    got = parse_answer(None, SCALE)
    assert got.label is None and got.problem == "the answer has no text content"


def test_parse__long_raw_and_reason__truncated() -> None:
    junk = "x" * (RAW_CHARS + 100)
    got = parse_answer(junk, SCALE)
    assert (
        got.raw is not None
        and got.raw.startswith("x" * RAW_CHARS)
        and "100 more characters" in got.raw
    )
    long_reason = parse_answer('{"label": "faithful", "reason": "%s"}' % ("y" * 1000), SCALE)
    assert long_reason.reason is not None and len(long_reason.reason) < REASON_CHARS + 40
