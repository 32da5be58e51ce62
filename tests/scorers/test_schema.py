"""JSON-Schema validation: the compiled fast path agrees with jsonschema, drafts are
honoured, and every schema is compiled once."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gate.scorers.schema import ArgsValidator, SchemaCache

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


def test_validator__simple_schema__uses_fast_path() -> None:
    assert ArgsValidator(LOOKUP).fast_path


@pytest.mark.parametrize(
    "args, fragment",
    [
        ({"order_id": "ord_7281"}, None),
        ({}, "'order_id' is a required property"),
        ({"order_id": "ord_7281", "include_items": "yes"}, "is not of type 'boolean'"),
        ({"order_id": "ord_7281", "customer_email": "a@b.c"}, "customer_email"),
        ({"order_id": "ord_7281", "limit": 5.0}, None),  # 5.0 is an integer in 2020-12
        ({"order_id": "ord_7281", "limit": True}, "is not of type 'integer'"),
        ({"order_id": "ord_7281", "limit": 100}, "limit"),
        ({"order_id": "ord_7281", "tags": ["a", "c"]}, "tags/1"),
        ({"order_id": "ord_7281", "mode": "slow"}, "mode"),
        ({"order_id": "ord_7281", "address": {"zip": "1", "floor": 2}}, None),
        ({"order_id": "ord_7281", "address": {"zip": "1", "floor": "2"}}, "address/floor"),
    ],
)
def test_validator__seed004_style_args__verdict_and_message(
    args: dict[str, Any], fragment: str | None
) -> None:
    err = ArgsValidator(LOOKUP).error(args)
    if fragment is None:
        assert err is None
    else:
        assert err is not None and fragment in err


def test_validator__deeply_nested_schema__falls_back_from_generated_code() -> None:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(40):
        schema = {"type": "array", "items": schema}
    v = ArgsValidator(schema)
    assert v.fast_path
    deep: Any = "x"
    for _ in range(40):
        deep = [deep]
    assert v.error(deep) is None
    bad: Any = 1
    for _ in range(40):
        bad = [bad]
    assert v.error(bad) is not None


def test_validator__draft4_schema__boolean_exclusive_minimum_honoured() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "object",
        "properties": {"n": {"type": "number", "minimum": 0, "exclusiveMinimum": True}},
    }
    v = ArgsValidator(schema)
    assert not v.fast_path
    assert v.error({"n": 0}) is not None
    assert v.error({"n": 0.5}) is None


def test_validator__draft3_integer__float_is_not_an_integer() -> None:
    v = ArgsValidator({"$schema": "http://json-schema.org/draft-03/schema#", "type": "integer"})
    assert v.error(5.0) is not None


def test_validator__ref_and_anyof__fall_back_to_jsonschema() -> None:
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
    assert v.error({"id": 1}) is not None


def test_validator__invalid_schema__every_call_mismatches_with_reason() -> None:
    v = ArgsValidator({"type": "objekt"})
    err = v.error({})
    assert err is not None and "schema is invalid" in err


def test_schema_cache__equal_schemas__compiled_once() -> None:
    cache = SchemaCache()
    a = cache.get({"type": "object", "properties": {"x": {"type": "string"}}})
    b = cache.get({"properties": {"x": {"type": "string"}}, "type": "object"})
    assert a is b and len(cache) == 1


_schemas = st.recursive(
    st.fixed_dictionaries(
        {},
        optional={
            "type": st.sampled_from(
                ["string", "integer", "number", "boolean", "null", "object", "array"]
            )
            | st.lists(
                st.sampled_from(["string", "integer", "null"]), min_size=1, max_size=2, unique=True
            ),
            "enum": st.lists(
                st.sampled_from([1, 1.0, True, "a", None, 0, False]), min_size=1, max_size=3
            ),
            "minimum": st.integers(-2, 2),
            "exclusiveMaximum": st.integers(-2, 3),
            "minLength": st.integers(0, 2),
            "maxLength": st.integers(0, 3),
            "pattern": st.sampled_from(["^a", "b", "[0-9]"]),
            "minItems": st.integers(0, 2),
            "required": st.lists(st.sampled_from(["p", "q"]), max_size=2, unique=True),
            "description": st.just("annotation"),
        },
    ),
    lambda inner: st.fixed_dictionaries(
        {},
        optional={
            "type": st.just("object"),
            "properties": st.dictionaries(st.sampled_from(["p", "q"]), inner, max_size=2),
            "additionalProperties": st.booleans() | inner,
            "items": inner,
        },
    ),
    max_leaves=4,
)
_instances = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.sampled_from([0.0, 1.0, 1.5, -2.0])
    | st.sampled_from(["", "a", "ab", "b1", "abc"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["p", "q", "r"]), inner, max_size=3)
    ),
    max_leaves=6,
)


@settings(max_examples=600, deadline=None)
@given(_schemas, _instances)
def test_fast_path__any_schema_and_instance__agrees_with_jsonschema(
    schema: dict[str, Any], instance: Any
) -> None:
    from gate.scorers.schema import compile_codegen, compile_fast, explain

    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError:
        return
    expected = jsonschema.Draft202012Validator(schema).is_valid(instance)
    assert compile_fast(schema)(instance) is expected
    assert compile_codegen(schema)(instance) is expected
    # The message explainer finds a broken keyword exactly when the instance is invalid.
    assert (explain(schema, instance) is None) is expected
    assert (ArgsValidator(schema).error(instance) is None) is expected
