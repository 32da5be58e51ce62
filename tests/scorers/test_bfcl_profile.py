"""The ``bfcl`` profile reproduces BFCL's AST checker where the default rules differ:
schema ``enum``/``const`` compare strings as BFCL does (its ``standardize_string``), in
both the fast path and jsonschema; parallel calls pair first-fit; an argument of several
declared types compares its strings as written. Under the default profile nothing changes."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft7Validator, Draft202012Validator

import gate
from gate.scorers import _schema_fast
from gate.scorers.analysis import first_fit
from gate.scorers.schema import ArgsValidator, SchemaCache, StringRule, _bounded, bfcl_fold, search

# (enum, value, BFCL accepts). BFCL's checker (bfcl_eval/eval_checker/ast_eval/
# ast_checker.py): standardize_string(s) = re.sub(r"[ \,\.\/\-\_\*\^]", "", s).lower()
# .replace("'", '"'), applied to both the model's string and every possible answer.
STRING_RULES: list[tuple[list[Any], Any, bool]] = [
    (["fahrenheit", "celsius"], "fahrenheit", True),
    (["fahrenheit", "celsius"], "FAHRENHEIT", True),  # lower-cased
    (["fahrenheit", "celsius"], "fahrenheit.", True),  # "." removed
    (["Saturday", "Sunday"], "  Saturday ", True),  # spaces removed
    (["New York", "Boston"], "newyork", True),  # inner spaces too
    (["pm2.5", "co2"], "PM25", True),
    (["a-b_c/d*e^f,g"], "abcdefg", True),  # every one of " ,./-_*^"
    (["it's"], 'IT"S', True),  # ' becomes "
    (["celsius"], "celsius!", False),  # "!" is not among the stripped characters
    (["celsius"], "\tcelsius", False),  # only U+0020 is a removed space
    (["celsius"], "celsius\n", False),
    (["celsius"], "celcius", False),
    (["celsius"], "", False),
    (["True", "False", "dontcare"], True, False),  # a boolean is not the string "True"
    (["1", "2"], 1, False),  # nor is a number its text
    ([1, 2], 1.0, True),  # numbers by value, as JSON equality says
    ([["new york", "boston"]], ["NEW YORK", "Boston."], True),  # list items too
    ([["a", "b"]], ["b", "a"], False),  # in order
    ([{"city": "New York"}], {"city": "new-york"}, True),  # object values too
    ([{"city": "x"}], {"CITY": "x"}, False),  # keys are not standardised
]


def _schema(enum: list[Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {"unit": {"enum": enum}}}


@pytest.mark.parametrize(("enum", "value", "accepted"), STRING_RULES)
def test_enum__bfcl_profile__accepts_what_bfcl_accepts(
    enum: list[Any], value: Any, accepted: bool
) -> None:
    schema = _schema(enum)
    error = ArgsValidator(schema, StringRule.BFCL).error({"unit": value})
    assert (error is None) is accepted, error


@pytest.mark.parametrize(("enum", "value", "accepted"), STRING_RULES)
def test_enum__bfcl_profile__fast_path_and_jsonschema_agree(
    enum: list[Any], value: Any, accepted: bool
) -> None:
    for cls in (Draft202012Validator, Draft7Validator):
        schema = _schema(enum)
        authority = _bounded(cls, StringRule.BFCL)(schema)
        fast = _schema_fast.compile_check(schema, frozenset(cls.VALIDATORS), search, bfcl_fold)
        assert fast is not None
        assert authority.is_valid({"unit": value}) is accepted
        assert fast({"unit": value}) is accepted


@pytest.mark.parametrize(
    ("enum", "value", "accepted"), [row for row in STRING_RULES if len(row[0]) == 1]
)
def test_const__bfcl_profile__accepts_what_bfcl_accepts(
    enum: list[Any], value: Any, accepted: bool
) -> None:
    schema = {"type": "object", "properties": {"unit": {"const": enum[0]}}}
    v = ArgsValidator(schema, StringRule.BFCL)
    assert (v.error({"unit": value}) is None) is accepted


@pytest.mark.parametrize(("enum", "value", "accepted"), STRING_RULES)
def test_enum__default_profile__json_equality_unchanged(
    enum: list[Any], value: Any, accepted: bool
) -> None:
    schema = _schema(enum)
    exact = any(
        _schema_fast.json_equal(value, e) for e in enum
    )  # what the drafts say, whatever BFCL does
    assert (ArgsValidator(schema).error({"unit": value}) is None) is exact
    assert (SchemaCache().get(schema).error({"unit": value}) is None) is exact
    assert Draft202012Validator(schema).is_valid({"unit": value}) is exact


def test_enum__bfcl_profile__error_names_the_rule() -> None:
    error = ArgsValidator(_schema(["celsius"]), StringRule.BFCL).error({"unit": "kelvin"})
    assert error == "unit: 'kelvin' is not one of ['celsius'] (compared as BFCL does)"


def test_enum__bfcl_profile__other_keywords_keep_their_meaning() -> None:
    schema = {
        "type": "object",
        "properties": {"code": {"type": "string", "pattern": "^[A-Z]{2}$", "enum": ["GB", "FR"]}},
    }
    v = ArgsValidator(schema, StringRule.BFCL)
    assert v.error({"code": "GB"}) is None
    # In the enum as BFCL compares, but the pattern still sees the string the model wrote.
    assert v.error({"code": "gb"}) == "code: 'gb' does not match '^[A-Z]{2}$'"


WEATHER = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                },
                "required": ["city", "unit"],
            },
        },
    }
]


def test_score__bfcl_profile__upper_case_enum_value_passes() -> None:
    expected = [{"name": "get_weather", "args": {"city": "Paris", "unit": "fahrenheit"}}]
    actual = [{"name": "get_weather", "arguments": {"city": "paris", "unit": "FAHRENHEIT"}}]
    score = gate.assert_tool_calls(actual, expected, tools=WEATHER, normalize="bfcl")
    assert score.passed


def test_score__default_profile__upper_case_enum_value_fails_schema_validity() -> None:
    expected = [{"name": "get_weather", "args": {"city": "Paris", "unit": "fahrenheit"}}]
    actual = [{"name": "get_weather", "arguments": {"city": "paris", "unit": "FAHRENHEIT"}}]
    with pytest.raises(AssertionError, match="schema_valid"):
        gate.assert_tool_calls(actual, expected, tools=WEATHER)


# ─── pairing ──────────────────────────────────────────────────────────────────

TICKER = [
    {
        "type": "function",
        "function": {
            "name": "get_stock",
            "parameters": {
                "type": "object",
                "properties": {"company": {"type": "string"}},
                "required": ["company"],
            },
        },
    }
]
# BFCL's parallel_178 in small: the first answer accepts either company, the second only
# Apple. BFCL's checker gives each answer, in order, the first output it accepts.
OVERLAPPING = [
    {"name": "get_stock", "args": {"company": {"$in": ["Microsoft", "Apple"]}}},
    {"name": "get_stock", "args": {"company": "Apple"}},
]
APPLE_FIRST = [
    [
        {"name": "get_stock", "arguments": {"company": "Apple"}},
        {"name": "get_stock", "arguments": {"company": "Microsoft"}},
    ]
]
MICROSOFT_FIRST = [list(reversed(APPLE_FIRST[0]))]


def test_pairing__bfcl_profile__first_fit_misses_the_pairing_as_bfcl_does() -> None:
    with pytest.raises(AssertionError, match="calls_matched"):
        gate.assert_tool_calls(APPLE_FIRST, OVERLAPPING, tools=TICKER, normalize="bfcl")
    score = gate.assert_tool_calls(MICROSOFT_FIRST, OVERLAPPING, tools=TICKER, normalize="bfcl")
    assert score.passed


def test_pairing__default_profile__maximum_matching_in_any_order() -> None:
    for actual in (APPLE_FIRST, MICROSOFT_FIRST):
        assert gate.assert_tool_calls(actual, OVERLAPPING, tools=TICKER).passed


class _Sent:
    def __init__(self, orig: int):
        self.orig = orig


@pytest.mark.parametrize(
    ("adj", "sent", "match"),
    [
        ([[0, 1], [0]], [0, 1], [0, -1]),  # the first expected takes the first accepted
        ([[0, 1], [0]], [1, 0], [1, 0]),  # "first" is the order the model sent them in
        ([[1], [0, 1]], [0, 1], [1, 0]),
        ([[], [0]], [0], [-1, 0]),
        ([[0], [0]], [0], [0, -1]),
    ],
)
def test_first_fit__pairs_in_expected_then_sent_order(
    adj: list[list[int]], sent: list[int], match: list[int]
) -> None:
    assert first_fit(adj, [_Sent(o) for o in sent]) == match  # type: ignore[arg-type]


# ─── BFCL's variable rule ─────────────────────────────────────────────────────

MUSIC = [
    {
        "type": "function",
        "function": {
            "name": "lookup_music",
            "parameters": {
                "type": "object",
                "properties": {
                    "artist": {"type": "string"},
                    # An integer parameter whose BFCL answer is the string "dontcare": the
                    # importer widens its type; BFCL compares such a value as written.
                    "year": {"type": ["integer", "string"]},
                },
            },
        },
    }
]


@pytest.mark.parametrize(
    ("artist", "year", "bfcl_passes", "default_passes"),
    [
        ("The Beatles", "dontcare", True, True),
        ("the-beatles", "dontcare", True, False),  # a string parameter: standardised
        ("The Beatles", "DONTCARE", False, True),  # several types: as written
        ("The Beatles", "dont care", False, False),
    ],
)
def test_strings__argument_of_several_types__compared_as_written_under_bfcl(
    artist: str, year: str, bfcl_passes: bool, default_passes: bool
) -> None:
    expected = [
        {"name": "lookup_music", "args": {"artist": "The Beatles", "year": "dontcare"}},
    ]
    actual = [{"name": "lookup_music", "arguments": {"artist": artist, "year": year}}]
    for normalize, passes in (("bfcl", bfcl_passes), (None, default_passes)):
        if passes:
            assert gate.assert_tool_calls(actual, expected, tools=MUSIC, normalize=normalize)
        else:
            with pytest.raises(AssertionError, match="calls_matched"):
                gate.assert_tool_calls(actual, expected, tools=MUSIC, normalize=normalize)
