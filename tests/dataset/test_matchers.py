"""Matcher parsing: each syntax → its ArgMatcher, and back (``to_json``) unchanged."""

from __future__ import annotations

from typing import Any

import pytest

from gate.dataset.matchers import MAX_REGEX_LENGTH, parse_args, parse_matcher
from gate.model import ArgMatcher, MatcherKind


def parse(value: Any) -> tuple[ArgMatcher | None, list[tuple[str, str]]]:
    problems: list[tuple[str, str]] = []
    m = parse_matcher(value, "args.x", lambda f, msg: problems.append((f, msg)))
    return m, problems


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("ord_1", ArgMatcher(MatcherKind.EQUAL, value="ord_1")),
        (5, ArgMatcher(MatcherKind.EQUAL, value=5)),
        (None, ArgMatcher(MatcherKind.EQUAL, value=None)),
        (
            {"city": "Berlin", "zip": "10115"},
            ArgMatcher(MatcherKind.EQUAL, value={"city": "Berlin", "zip": "10115"}),
        ),
        ([1, {"a": 2}], ArgMatcher(MatcherKind.EQUAL, value=[1, {"a": 2}])),
        ({"$in": ["a", {"b": 1}]}, ArgMatcher(MatcherKind.IN, options=("a", {"b": 1}))),
        ({"$regex": r"ord_\d+"}, ArgMatcher(MatcherKind.REGEX, pattern=r"ord_\d+")),
        ({"$approx": 19.99, "tol": 0.01}, ArgMatcher(MatcherKind.APPROX, value=19.99, tol=0.01)),
        ({"$approx": 3, "tol": 0}, ArgMatcher(MatcherKind.APPROX, value=3, tol=0.0)),
        ({"$absent": True}, ArgMatcher(MatcherKind.ABSENT)),
        ({"$any": True}, ArgMatcher(MatcherKind.ANY)),
    ],
)
def test_matcher__valid_syntax__parsed_and_round_trips(value: Any, expected: ArgMatcher) -> None:
    m, problems = parse(value)
    assert problems == [] and m == expected
    assert m is not None and m.to_json() == value


def test_matcher__regex_at_length_limit__accepted() -> None:
    m, problems = parse({"$regex": "a" * MAX_REGEX_LENGTH})
    assert problems == [] and m is not None and m.kind is MatcherKind.REGEX


@pytest.mark.parametrize("number", [float("nan"), float("inf"), True])
def test_matcher__approx_not_a_finite_number__refused(number: Any) -> None:
    m, problems = parse({"$approx": number, "tol": 1})
    assert m is None and problems[0][0] == "args.x.$approx"


def test_parse_args__every_bad_argument__reported() -> None:
    problems: list[tuple[str, str]] = []
    out = parse_args(
        {"a": {"$in": []}, "b": 1, "c": {"$nope": 1}}, "args", lambda f, m: problems.append((f, m))
    )
    assert out is None
    assert [f for f, _ in problems] == ["args.a.$in", "args.c"]
