"""JSON-Schema validation: jsonschema decides, the fast path only ever says "valid" where
jsonschema agrees, patterns are bounded in time, and every schema is compiled once."""

from __future__ import annotations

import time
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gate.scorers import _schema_fast
from gate.scorers.schema import PATTERN_TIMEOUT_S, ArgsValidator, SchemaCache, search

LOOKUP = {
    "type": "object",
    "properties": {
        "order_id": {"type": "string", "pattern": "^ord_", "minLength": 5, "maxLength": 12},
        "include_items": {"type": "boolean"},
        "limit": {"type": "integer", "minimum": 1, "exclusiveMaximum": 100},
        "ratio": {"type": ["number", "null"], "maximum": 1},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "maxItems": 2},
        "mode": {"const": "fast"},
        "address": {
            "type": "object",
            "properties": {"zip": {"type": "string"}},
            "required": ["zip"],
            "additionalProperties": {"type": "integer"},
        },
    },
    "required": ["order_id"],
    "additionalProperties": False,
}


def _jsonschema_valid(schema: Any, instance: Any) -> bool:
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return bool(cls(schema).is_valid(instance))


def test_validator__simple_schema__uses_fast_path() -> None:
    assert ArgsValidator(LOOKUP).fast_path


@pytest.mark.parametrize(
    "args, message",
    [
        ({"order_id": "ord_7281"}, None),
        ({}, "'order_id' is a required property"),
        (
            {"order_id": "ord_7281", "include_items": "yes"},
            "include_items: 'yes' is not of type 'boolean'",
        ),
        (
            {"order_id": "ord_7281", "customer_email": "a@b.c"},
            "Additional properties are not allowed ('customer_email' was unexpected)",
        ),
        ({"order_id": "ord_7281", "limit": 5.0}, None),  # 5.0 is an integer in 2020-12
        ({"order_id": "ord_7281", "limit": True}, "limit: True is not of type 'integer'"),
        (
            {"order_id": "ord_7281", "limit": 100},
            "limit: 100 is greater than or equal to the maximum of 100",
        ),
        ({"order_id": "ord_7281", "tags": ["a", "c"]}, "tags/1: 'c' is not one of ['a', 'b']"),
        ({"order_id": "ord_7281", "mode": "slow"}, "mode: 'fast' was expected"),
        ({"order_id": "ord_7281", "address": {"zip": "1", "floor": 2}}, None),
        (
            {"order_id": "ord_7281", "address": {"zip": "1", "floor": "2"}},
            "address/floor: '2' is not of type 'integer'",
        ),
        ({"order_id": "xx_7281"}, "order_id: 'xx_7281' does not match '^ord_'"),
    ],
)
def test_validator__seed004_style_args__verdict_and_jsonschema_message(
    args: dict[str, Any], message: str | None
) -> None:
    assert ArgsValidator(LOOKUP).error(args) == message


def test_validator__several_errors__message_is_jsonschemas_most_relevant() -> None:
    """The home-made explainer used to answer with the first keyword it found broken
    (``p``'s type); jsonschema's ``best_match`` decides which error is the most relevant.
    Which one that is depends on jsonschema's version (4.21, the lowest allowed, picks
    ``p``'s type; 4.26 the enum): the message is always the one it picks."""
    schema = {
        "type": "object",
        "properties": {"p": {"type": "object"}},
        "additionalProperties": {"enum": ["a", "b"]},
    }
    args = {"p": "a", "s": 1}
    best = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(schema).iter_errors(args)
    )
    assert best is not None and best.message in (
        "1 is not one of ['a', 'b']",
        "'a' is not of type 'object'",
    )
    where = "/".join(str(p) for p in best.absolute_path)
    assert where in ("s", "p")
    assert ArgsValidator(schema).error(args) == f"{where}: {best.message}"


def test_validator__deeply_nested_schema__decided_by_fast_path_or_jsonschema() -> None:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(40):
        schema = {"type": "array", "items": schema}
    v = ArgsValidator(schema)
    deep: Any = "x"
    for _ in range(40):
        deep = [deep]
    assert v.error(deep) is None
    bad: Any = 1
    for _ in range(40):
        bad = [bad]
    err = v.error(bad)
    assert err is not None and err.endswith("1 is not of type 'string'")


def test_validator__draft4_schema__boolean_exclusive_minimum_honoured() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "object",
        "properties": {"n": {"type": "number", "minimum": 0, "exclusiveMinimum": True}},
    }
    v = ArgsValidator(schema)
    assert not v.fast_path
    assert v.error({"n": 0}) == "n: 0 is less than or equal to the minimum of 0"
    assert v.error({"n": 0.5}) is None


def test_validator__draft3_integer__float_is_not_an_integer() -> None:
    v = ArgsValidator({"$schema": "http://json-schema.org/draft-03/schema#", "type": "integer"})
    assert v.error(5.0) == "5.0 is not of type 'integer'"


def test_validator__ref_and_anyof__decided_by_jsonschema() -> None:
    schema = {
        "type": "object",
        "$defs": {"id": {"type": "string"}},
        "properties": {
            "id": {"$ref": "#/$defs/id"},
            "v": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        },
    }
    v = ArgsValidator(schema)
    assert not v.fast_path
    assert v.error({"id": "x", "v": None}) is None
    assert v.error({"id": 1}) == "id: 1 is not of type 'string'"


@pytest.mark.parametrize(
    "schema, args, message",
    [
        (
            {"type": "object", "properties": {"n": {"multipleOf": 3}}},
            {"n": 4},
            "n: 4 is not a multiple of 3",
        ),
        (
            {"type": "object", "properties": {"t": {"type": "array", "uniqueItems": True}}},
            {"t": [1, 1]},
            "t: [1, 1] has non-unique elements",
        ),
        (
            {"type": "object", "properties": {"s": {"type": "string", "not": {"const": "x"}}}},
            {"s": "x"},
            "s: 'x' should not be valid under {'const': 'x'}",
        ),
    ],
)  # fmt: skip
def test_validator__unsupported_keyword__whole_schema_decided_by_jsonschema(
    schema: dict[str, Any], args: dict[str, Any], message: str
) -> None:
    """A keyword outside the fast subset, however deep, sends every instance to
    jsonschema: one the subset would accept (``4`` is a number) is still refused."""
    v = ArgsValidator(schema)
    assert not v.fast_path
    assert v.error(args) == message
    assert not _jsonschema_valid(schema, args)


def test_validator__unknown_keyword__ignored_like_jsonschema_does() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "x-ui": {"minLength": 9}}}}
    v = ArgsValidator(schema)
    assert v.fast_path
    assert v.error({"a": "b"}) is None


def test_validator__invalid_schema__every_call_mismatches_with_reason() -> None:
    v = ArgsValidator({"type": "objekt"})
    assert v.error({}) == (
        "the tool's parameters schema is invalid: type: 'objekt' is not valid under any of the "
        "given schemas"
    )


def test_validator__ref_to_nothing__a_mismatch_not_an_exception() -> None:
    v = ArgsValidator({"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}})
    assert v.error({"a": 1}) == (
        "the tool's parameters schema is invalid: properties/a/$ref: '#/$defs/missing' points "
        "at nothing in this schema"
    )


def test_validator__ref_loops_without_end__a_mismatch_not_an_exception() -> None:
    err = ArgsValidator({"allOf": [{"$ref": "#"}]}).error({"a": 1})
    assert err == "the tool's parameters schema is invalid: its references loop without end"


def test_validator__unevaluated_with_pattern_properties__refused_with_reason() -> None:
    schema = {
        "type": "object",
        "patternProperties": {"^x_": {"type": "string"}},
        "unevaluatedProperties": False,
    }
    err = ArgsValidator(schema).error({"x_a": "1"})
    assert err is not None
    assert err.startswith(
        "the tool's parameters schema is invalid: unevaluatedProperties: cannot be combined "
        "with patternProperties"
    )


def test_schema_cache__equal_schemas__compiled_once() -> None:
    cache = SchemaCache()
    a = cache.get({"type": "object", "properties": {"x": {"type": "string"}}})
    b = cache.get({"properties": {"x": {"type": "string"}}, "type": "object"})
    assert a is b and len(cache) == 1


# ─── bounded patterns ─────────────────────────────────────────────────────────

LONG = "a" * 20_000 + "!"
BOUND_S = 40 * PATTERN_TIMEOUT_S  # the engine checks its clock coarsely on a busy machine


@pytest.mark.parametrize("pattern", [r"^(a|a)*$", r"^(a|aa)+$", r"^(a+)+$"])
def test_validator__pathological_pattern_on_long_string__ends_within_bound(pattern: str) -> None:
    v = ArgsValidator(
        {"type": "object", "properties": {"q": {"type": "string", "pattern": pattern}}}
    )
    t0 = time.perf_counter()
    err = v.error({"q": LONG})
    assert time.perf_counter() - t0 < BOUND_S
    assert err is not None and err.startswith("q: 'aaaa")
    assert f"does not match {pattern!r}" in err


@pytest.mark.parametrize("additional", [False, {"type": "integer"}, None])
def test_validator__pathological_pattern_property_on_long_key__ends_within_bound(
    additional: Any,
) -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "patternProperties": {r"^(a|a)*$": {"type": "string"}},
    }
    if additional is not None:
        schema["additionalProperties"] = additional
    v = ArgsValidator(schema)
    t0 = time.perf_counter()
    err = v.error({LONG: "x"})
    assert time.perf_counter() - t0 < BOUND_S
    assert err is not None and "was stopped after" in err


def test_search__stopped__undecided_again_without_searching_again() -> None:
    pattern = r"^(a|a)*$"
    text = "a" * 1_000 + "?"
    assert search(pattern, text) is None
    t0 = time.perf_counter()
    assert search(pattern, text) is None
    assert time.perf_counter() - t0 < PATTERN_TIMEOUT_S / 2


# ─── the fast path agrees with jsonschema ─────────────────────────────────────

_DRAFTS = [
    None,
    "https://json-schema.org/draft/2020-12/schema",
    "https://json-schema.org/draft/2019-09/schema",
    "http://json-schema.org/draft-07/schema#",
    "http://json-schema.org/draft-06/schema#",
]
_numbers = st.integers(-2, 3) | st.sampled_from([0.5, -1.5, 2.0])
_values = st.sampled_from([1, 1.0, True, False, "a", "", None, 0, [], [1], {}, {"p": 1}])
_leaf = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(
            ["string", "integer", "number", "boolean", "null", "object", "array"]
        )
        | st.lists(
            st.sampled_from(["string", "integer", "number", "null", "array"]),
            min_size=1,
            max_size=3,
            unique=True,
        ),
        "enum": st.lists(_values, min_size=1, max_size=3),
        "const": _values,
        "minimum": _numbers,
        "maximum": _numbers,
        "exclusiveMinimum": _numbers,
        "exclusiveMaximum": _numbers,
        "minLength": st.integers(0, 2),
        "maxLength": st.integers(0, 3),
        "pattern": st.sampled_from(["^a", "b", "[0-9]", "^$", "a{2}"]),
        "minItems": st.integers(0, 2),
        "maxItems": st.integers(0, 2),
        "minProperties": st.integers(0, 2),
        "maxProperties": st.integers(0, 2),
        "required": st.lists(st.sampled_from(["p", "q"]), max_size=2, unique=True),
        "format": st.sampled_from(["email", "date"]),
        "description": st.just("annotation"),
    },
)
_subset_schemas = st.recursive(
    _leaf | st.booleans(),
    lambda inner: st.builds(
        lambda base, extra: {**base, **extra},
        _leaf,
        st.fixed_dictionaries(
            {},
            optional={
                "properties": st.dictionaries(st.sampled_from(["p", "q"]), inner, max_size=2),
                "additionalProperties": inner,
                "items": inner,
            },
        ),
    ),
    max_leaves=5,
)
_instances = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.sampled_from([0.0, 1.0, 0.5, 2.0, -1.5])
    | st.sampled_from(["", "a", "ab", "b1", "abc", "aa"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["p", "q", "r"]), inner, max_size=3)
    ),
    max_leaves=6,
)


def _with_draft(schema: Any, uri: str | None) -> Any:
    if uri is None or not isinstance(schema, dict):
        return schema
    return {"$schema": uri, **schema}


def _valid_schema(schema: Any) -> bool:
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError:
        return False
    return True


@settings(max_examples=500, deadline=None)
@given(_subset_schemas, st.sampled_from(_DRAFTS), _instances)
def test_fast_path__subset_schema_and_any_instance__verdict_equals_jsonschemas(
    schema: Any, draft: str | None, instance: Any
) -> None:
    schema = _with_draft(schema, draft)
    if not _valid_schema(schema):
        return
    expected = _jsonschema_valid(schema, instance)
    v = ArgsValidator(schema)
    assert v.fast_path
    assert (v.error(instance) is None) is expected
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    check = _schema_fast.compile_check(schema, frozenset(cls.VALIDATORS), search)
    assert check is not None
    # Sound (it says valid only where jsonschema does) and, on the subset, exact.
    assert check(instance) is expected


_other = st.fixed_dictionaries(
    {},
    optional={
        "multipleOf": st.sampled_from([2, 0.5]),
        "uniqueItems": st.booleans(),
        "not": st.just({"type": "string"}),
        "anyOf": st.just([{"type": "integer"}, {"maxLength": 1}]),
        "patternProperties": st.just({"^p": {"type": "integer"}}),
        "contains": st.just({"type": "null"}),
        "dependentRequired": st.just({"p": ["q"]}),
        "propertyNames": st.just({"maxLength": 1}),
        "$ref": st.just("#/$defs/d"),
        "items": st.just([{"type": "integer"}]),
    },
)
_mixed_schemas = st.recursive(
    st.builds(lambda a, b: {**a, **b}, _leaf, _other),
    lambda inner: st.builds(
        lambda base, extra: {**base, **extra},
        st.builds(lambda a, b: {**a, **b}, _leaf, _other),
        st.fixed_dictionaries(
            {},
            optional={
                "properties": st.dictionaries(st.sampled_from(["p", "q"]), inner, max_size=2),
                "additionalProperties": inner,
            },
        ),
    ),
    max_leaves=4,
)


@settings(max_examples=300, deadline=None)
@given(
    _mixed_schemas,
    st.sampled_from([*_DRAFTS, "http://json-schema.org/draft-04/schema#"]),
    _instances,
)
def test_validator__schema_with_any_keyword__verdict_equals_jsonschemas(
    schema: Any, draft: str | None, instance: Any
) -> None:
    schema = _with_draft({**schema, "$defs": {"d": {"type": ["object", "string"]}}}, draft)
    if not _valid_schema(schema):
        return
    expected = _jsonschema_valid(schema, instance)
    err = ArgsValidator(schema).error(instance)
    assert (err is None) is expected, err
