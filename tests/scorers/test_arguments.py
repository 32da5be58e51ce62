"""Argument matching: the table in cases/arguments.json, bounded $regex, and agreement of
the compiled hot path with the reference rule."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gate.config import NormalizeConfig
from gate.model import ArgMatcher, ArgProblem, MatcherKind
from gate.scorers.argmatch import (
    REGEX_MAX_INPUT,
    REGEX_MAX_PATTERN,
    arg_diffs,
    args_match,
    compile_args,
    match_value,
    regex_fullmatch,
)
from gate.scorers.normalize import Normalizer
from tests.scorers.helpers import matchers

TABLE = json.loads((Path(__file__).parent / "cases" / "arguments.json").read_text())


def _norm(row: dict[str, Any]) -> Normalizer:
    base = Normalizer.from_config(NormalizeConfig(**row.get("normalize", {})))
    return base.for_tool(row["schema"]) if "schema" in row else base


@pytest.mark.parametrize("row", TABLE, ids=[r["name"] for r in TABLE])
def test_args_match__table(row: dict[str, Any]) -> None:
    norm = _norm(row)
    exp = matchers(row["expected"])
    exact = bool(row.get("exact", False))
    assert args_match(exp, row["actual"], exact=exact, norm=norm) is row["match"]
    # The compiled hot path agrees with the reference rule.
    assert compile_args(exp, exact=exact, norm=norm).matches(row["actual"]) is row["match"]
    # A non-match always explains itself; a match has nothing to explain.
    diffs = arg_diffs(exp, row["actual"], exact=exact, norm=norm)
    assert bool(diffs) is (not row["match"])


def test_args_match__unparsed_arguments__never_match() -> None:
    norm = Normalizer.from_config()
    assert args_match({}, None, exact=False, norm=norm) is False
    assert arg_diffs({}, None, exact=False, norm=norm)[0].why == "arguments did not parse"


def test_regex__catastrophic_pattern__answers_quickly_without_matching() -> None:
    start = time.perf_counter()
    ok, why = regex_fullmatch(r"(a+)+$", "a" * 40 + "b")
    assert ok is False and why is not None
    # `(a|aa)+$` backtracks exponentially even in the regex module: the timeout stops it.
    ok2, why2 = regex_fullmatch(r"(a|aa)+$", "a" * 64 + "b")
    elapsed = time.perf_counter() - start
    assert ok2 is False
    assert why2 is not None and "longer than" in why2
    assert elapsed < 2.0


def test_regex__too_long_pattern_or_input__refused() -> None:
    ok, why = regex_fullmatch("a" * (REGEX_MAX_PATTERN + 1), "a" * (REGEX_MAX_PATTERN + 1))
    assert not ok and why is not None and "pattern longer" in why
    ok, why = regex_fullmatch(r"a*", "a" * (REGEX_MAX_INPUT + 1))
    assert not ok and why is not None and "input longer" in why
    assert regex_fullmatch(r"a*", "a" * REGEX_MAX_INPUT) == (True, None)


def test_match_value__present_flag__decides_absent_and_any() -> None:
    norm = Normalizer.from_config()
    absent = ArgMatcher(MatcherKind.ABSENT)
    anyv = ArgMatcher(MatcherKind.ANY)
    assert match_value(absent, False, None, norm)
    assert not match_value(absent, True, 3, norm)
    assert match_value(anyv, True, 0, norm)
    assert not match_value(anyv, False, None, norm)
    # null counts as absent by default, so `$any` refuses it and `$absent` accepts it.
    assert not match_value(anyv, True, None, norm)
    assert match_value(absent, True, None, norm)


def test_free_text__similar_query__matches_by_token_set_ratio() -> None:
    norm = Normalizer.from_config(free_text=("query",), free_text_min=0.8)
    exp = matchers({"query": "refund policy for damaged items"})
    assert args_match(exp, {"query": "damaged items refund policy"}, exact=False, norm=norm)
    assert not args_match(exp, {"query": "weather in paris"}, exact=False, norm=norm)
    diffs = arg_diffs(exp, {"query": "weather in paris"}, exact=False, norm=norm)
    assert "similarity" in diffs[0].why


def test_per_arg_override__case_sensitive_argument() -> None:
    base = Normalizer.from_config()
    norm = base.for_tool({"type": "object"}, args={"password": NormalizeConfig(case=False)})
    assert args_match(
        matchers({"password": "Secret"}), {"password": "Secret"}, exact=False, norm=norm
    )
    assert not args_match(
        matchers({"password": "Secret"}), {"password": "secret"}, exact=False, norm=norm
    )
    assert args_match(matchers({"user": "Ann"}), {"user": "ann"}, exact=False, norm=norm)


_json_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.sampled_from([0.0, 1.0, 2.5, -1.0, 5.0]),
    st.sampled_from(["", "a", "A", " a ", "5", "5.0", "2026-08-19", "19/08/2026", "x y"]),
)
_json = st.recursive(
    _json_scalar,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from("abc"), inner, max_size=3)
    ),
    max_leaves=6,
)
_matcher_json = st.one_of(
    _json,
    st.builds(lambda o: {"$in": o}, st.lists(_json, min_size=1, max_size=3)),
    st.just({"$absent": True}),
    st.just({"$any": True}),
    st.builds(lambda p: {"$regex": p}, st.sampled_from(["a", "5", "[a-z ]*", ".*"])),
)


@settings(max_examples=300, deadline=None)
@given(
    expected=st.dictionaries(st.sampled_from("pqr"), _matcher_json, max_size=3),
    actual=st.dictionaries(st.sampled_from("pqrs"), _json, max_size=4),
    exact=st.booleans(),
    profile=st.sampled_from(["default", "bfcl"]),
)
def test_compiled_args__any_input__agree_with_args_match(
    expected: dict[str, Any], actual: dict[str, Any], exact: bool, profile: str
) -> None:
    norm = Normalizer.from_config(NormalizeConfig(profile=profile))  # type: ignore[arg-type]
    exp = matchers(expected)
    assert compile_args(exp, exact=exact, norm=norm).matches(actual) == args_match(
        exp, actual, exact=exact, norm=norm
    )


def test_arg_diffs__nested_object__names_the_member_that_differs() -> None:
    norm = Normalizer.from_config()
    exp = matchers({"address": {"city": "London", "country": "GB", "line1": "221B Baker St"}})
    act = {"address": {"city": "london", "country": "United Kingdom", "line1": "221B Baker St"}}
    assert arg_diffs(exp, act, exact=False, norm=norm) == (
        ArgProblem(
            argument="address.country",
            expected="GB",
            why="differs",
            actual="United Kingdom",
            present=True,
        ),
    )
