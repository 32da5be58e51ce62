"""Every validation error names the file, the line and the field; all come in one pass.

The table below holds (dataset rows, expected problems): each expected problem is
(line, field, a fragment of the message), and the test checks the rendered text starts
with ``<file>:<line>: <field>: `` — exactly what a user sees.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from gate.dataset import load_dataset
from gate.dataset.problems import MAX_PROBLEMS
from gate.errors import DatasetError, InputError
from tests.dataset.helpers import LOOKUP, REFUND, row, rows, to_csv, write_jsonl


def problems_of(path: Path, **kwargs: Any) -> list[str]:
    with pytest.raises(DatasetError) as err:
        load_dataset(path, **kwargs)
    assert isinstance(err.value, InputError)
    return [str(p) for p in err.value.problems]


def assert_problems(
    found: list[str], display: str, expected: list[tuple[int | None, str | None, str]]
) -> None:
    assert len(found) == len(expected), "\n".join(found)
    for text, (line, field, fragment) in zip(found, expected, strict=True):
        where = display if line is None else f"{display}:{line}"
        prefix = f"{where}: {field}: " if field else f"{where}: "
        assert text.startswith(prefix), f"{text!r} does not start with {prefix!r}"
        assert fragment in text, f"{fragment!r} not in {text!r}"


def _tool(name: str, parameters: Any) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": name, "description": "", "parameters": parameters},
    }


def _turn(calls: list[Any] | None = None, user: str = "Where is order 1?") -> dict[str, Any]:
    return {"user": user, "expected_tool_calls": [] if calls is None else calls}


def _conv(conversation: Any) -> dict[str, Any]:
    return row(user_input=None, expected_tool_calls=None, conversation=conversation)


CASES: list[tuple[str, list[Any], list[tuple[int | None, str | None, str]]]] = [
    # ── JSON itself ──
    ("invalid json", [row(), '{"id": "c2", "user_input": '], [(2, None, "invalid JSON")]),
    (
        "nan",
        ['{"id": "c1", "user_input": "x", "step_budget": NaN}'],
        [(1, None, "NaN is not valid JSON")],
    ),
    ("duplicate key", ['{"id": "c1", "id": "c2"}'], [(1, None, "duplicate key 'id'")]),
    (
        "too deep",
        [
            json.dumps(row(message_history=[{"role": "user", "content": [[[]]]}])).replace(
                "[[[]]]", "[" * 70 + "]" * 70
            )
        ],
        [(1, None, "nesting deeper than 64")],
    ),
    ("not an object", ["[1, 2]"], [(1, None, "a case must be a JSON object, not an array")]),
    # ── columns ──
    (
        "unknown column",
        [row(expected_tool_calls=None, expected_tool_call=[])],
        [
            (1, "expected_tool_call", "unknown column (did you mean 'expected_tool_calls'?)"),
            (1, "expected_tool_calls", "required"),
        ],
    ),
    ("missing id", [row(id=None)], [(1, "id", "required")]),
    ("id not a string", [row(id=7)], [(1, "id", "must be a non-empty string")]),
    (
        "id with spaces around",
        [row(id=" c1 ")],
        [(1, "id", "no control characters or surrounding spaces")],
    ),
    (
        "duplicate id",
        [row(id="a"), row(id="b"), row(id="a")],
        [(3, "id", "duplicate id 'a' (first at line 1)")],
    ),
    ("missing user_input", [row(user_input=None)], [(1, "user_input", "required")]),
    ("missing tools", [row(available_tools=None)], [(1, "available_tools", "required")]),
    (
        "tools as plain string",
        [row(available_tools="tools.json")],
        [(1, "available_tools", '"@file.json" reference')],
    ),
    # ── labelling ──
    (
        "no label",
        [row(expected_tool_calls=None)],
        [(1, "expected_tool_calls", "expected_no_tool: true")],
    ),
    (
        "no_tool with calls",
        [row(expected_no_tool=True)],
        [(1, "expected_no_tool", "is true but expected_tool_calls lists 1 call(s)")],
    ),
    (
        "empty list unlabelled",
        [row(expected_tool_calls=[])],
        [(1, "expected_tool_calls", "is empty: set `expected_no_tool: true`")],
    ),
    (
        "no_tool not bool",
        [row(expected_tool_calls=[], expected_no_tool="yes")],
        [(1, "expected_no_tool", "must be true or false")],
    ),
    (
        "no_tool with alternatives",
        [
            row(
                expected_tool_calls=None,
                expected_no_tool=True,
                acceptable_alternatives=[[{"name": "lookup_order"}]],
            )
        ],
        [(1, "acceptable_alternatives", "expected_no_tool is true")],
    ),
    # ── expected calls ──
    (
        "unknown tool (issue example)",
        [
            *rows(16),
            row(id="c17", expected_tool_calls=[{"name": "lookup_order"}, {"name": "refund_ordr"}]),
        ],
        [
            (
                17,
                "expected_tool_calls[1].name",
                "'refund_ordr' is not among available_tools (did you mean 'refund_order'?)",
            )
        ],
    ),
    (
        "call key typo",
        [row(expected_tool_calls=[{"name": "lookup_order", "arg": {}}])],
        [(1, "expected_tool_calls[0].arg", "unknown key (did you mean 'args'?)")],
    ),
    (
        "call not object",
        [row(expected_tool_calls=["lookup_order"])],
        [(1, "expected_tool_calls[0]", "a call must be an object")],
    ),
    (
        "calls not array",
        [row(expected_tool_calls={"name": "lookup_order"})],
        [(1, "expected_tool_calls", "must be an array")],
    ),
    (
        "args not object",
        [row(expected_tool_calls=[{"name": "lookup_order", "args": ["1"]}])],
        [(1, "expected_tool_calls[0].args", "must be an object")],
    ),
    (
        "required_args_only not bool",
        [row(expected_tool_calls=[{"name": "lookup_order", "required_args_only": "no"}])],
        [(1, "expected_tool_calls[0].required_args_only", "must be true or false")],
    ),
    # ── batches and argument-match modes ──
    (
        "empty batch",
        [row(expected_tool_calls=[[], {"name": "lookup_order"}])],
        [(1, "expected_tool_calls[0]", "an empty batch")],
    ),
    (
        "nested batch",
        [row(expected_tool_calls=[[{"name": "lookup_order"}, [{"name": "lookup_order"}]]])],
        [(1, "expected_tool_calls[0][1]", "a batch inside a batch")],
    ),
    (
        "batch element not object",
        [row(expected_tool_calls=[[{"name": "lookup_order"}, "refund_order"]])],
        [(1, "expected_tool_calls[0][1]", "a call must be an object")],
    ),
    (
        "batch element unknown tool",
        [row(expected_tool_calls=[[{"name": "lookup_ordr"}]])],
        [(1, "expected_tool_calls[0][0].name", "did you mean 'lookup_order'?")],
    ),
    (
        "alternative with an empty batch",
        [row(acceptable_alternatives=[[[{"name": "lookup_order"}], []]])],
        [(1, "acceptable_alternatives[0][1]", "an empty batch")],
    ),
    (
        "args_match unknown",
        [row(expected_tool_calls=[{"name": "lookup_order", "args_match": "exact_but_defaults"}])],
        [
            (
                1,
                "expected_tool_calls[0].args_match",
                "must be one of subset, exact, exact_except_defaults, not 'exact_but_defaults' "
                "(did you mean 'exact_except_defaults'?)",
            )
        ],
    ),
    (
        "args_match and required_args_only together",
        [
            row(
                expected_tool_calls=[
                    {"name": "lookup_order", "args_match": "exact", "required_args_only": False}
                ]
            )
        ],
        [(1, "expected_tool_calls[0].required_args_only", "give one of args_match and")],
    ),
    (
        "arg not in schema",
        [row(expected_tool_calls=[{"name": "lookup_order", "args": {"ordr_id": "1"}}])],
        [
            (
                1,
                "expected_tool_calls[0].args.ordr_id",
                "lookup_order has no parameter 'ordr_id' (did you mean 'order_id'?)",
            )
        ],
    ),
    (
        "value outside enum",
        [row(expected_tool_calls=[{"name": "refund_order", "args": {"reason": "damage"}}])],
        [
            (
                1,
                "expected_tool_calls[0].args.reason",
                "'damage' is not one of refund_order.reason's values",
            )
        ],
    ),
    (
        "$in option outside enum",
        [
            row(
                expected_tool_calls=[
                    {"name": "refund_order", "args": {"reason": {"$in": ["late", "lost"]}}}
                ]
            )
        ],
        [(1, "expected_tool_calls[0].args.reason", "'lost' is not one of")],
    ),
    (
        "alternative to unknown tool",
        [row(acceptable_alternatives=[[{"name": "lookup_order"}], [{"name": "track"}]])],
        [(1, "acceptable_alternatives[1][0].name", "'track' is not among available_tools")],
    ),
    (
        "alternatives not nested",
        [row(acceptable_alternatives=[{"name": "lookup_order"}])],
        [(1, "acceptable_alternatives[0]", "must be an array")],
    ),
    # ── matchers ──
    (
        "unknown matcher",
        [row(expected_tool_calls=[{"name": "lookup_order", "args": {"order_id": {"$regx": "1"}}}])],
        [
            (
                1,
                "expected_tool_calls[0].args.order_id",
                "unknown matcher '$regx' (did you mean '$regex'?)",
            )
        ],
    ),
    (
        "$in not list",
        [row(expected_tool_calls=[{"name": "lookup_order", "args": {"order_id": {"$in": "1"}}}])],
        [(1, "expected_tool_calls[0].args.order_id.$in", "non-empty array")],
    ),
    (
        "$in empty",
        [row(expected_tool_calls=[{"name": "lookup_order", "args": {"order_id": {"$in": []}}}])],
        [(1, "expected_tool_calls[0].args.order_id.$in", "non-empty array")],
    ),
    (
        "$regex invalid",
        [
            row(
                expected_tool_calls=[
                    {"name": "lookup_order", "args": {"order_id": {"$regex": "(["}}}
                ]
            )
        ],
        [(1, "expected_tool_calls[0].args.order_id.$regex", "not a valid regular expression")],
    ),
    (
        "$regex too long",
        [
            row(
                expected_tool_calls=[
                    {"name": "lookup_order", "args": {"order_id": {"$regex": "a" * 513}}}
                ]
            )
        ],
        [(1, "expected_tool_calls[0].args.order_id.$regex", "at most 512")],
    ),
    (
        "$regex not string",
        [row(expected_tool_calls=[{"name": "lookup_order", "args": {"order_id": {"$regex": 5}}}])],
        [(1, "expected_tool_calls[0].args.order_id.$regex", "must be a string")],
    ),
    (
        "$approx without tol",
        [row(expected_tool_calls=[{"name": "refund_order", "args": {"amount": {"$approx": 5}}}])],
        [(1, "expected_tool_calls[0].args.amount", "needs a tolerance")],
    ),
    (
        "$approx not number",
        [
            row(
                expected_tool_calls=[
                    {"name": "refund_order", "args": {"amount": {"$approx": "5", "tol": 1}}}
                ]
            )
        ],
        [(1, "expected_tool_calls[0].args.amount.$approx", "finite number")],
    ),
    (
        "tol negative",
        [
            row(
                expected_tool_calls=[
                    {"name": "refund_order", "args": {"amount": {"$approx": 5, "tol": -1}}}
                ]
            )
        ],
        [(1, "expected_tool_calls[0].args.amount.tol", ">= 0")],
    ),
    (
        "tol with $in",
        [
            row(
                expected_tool_calls=[
                    {"name": "refund_order", "args": {"amount": {"$in": [1], "tol": 1}}}
                ]
            )
        ],
        [(1, "expected_tool_calls[0].args.amount", "`tol` goes with `$approx`")],
    ),
    (
        "$absent false",
        [
            row(
                expected_tool_calls=[
                    {"name": "lookup_order", "args": {"include_items": {"$absent": False}}}
                ]
            )
        ],
        [(1, "expected_tool_calls[0].args.include_items.$absent", "must be true")],
    ),
    (
        "$any not true",
        [row(expected_tool_calls=[{"name": "lookup_order", "args": {"order_id": {"$any": 1}}}])],
        [(1, "expected_tool_calls[0].args.order_id.$any", "must be true")],
    ),
    (
        "two matchers",
        [
            row(
                expected_tool_calls=[
                    {"name": "lookup_order", "args": {"order_id": {"$any": True, "$regex": "1"}}}
                ]
            )
        ],
        [(1, "expected_tool_calls[0].args.order_id", "one matcher per argument")],
    ),
    (
        "matcher beside data",
        [
            row(
                expected_tool_calls=[
                    {"name": "lookup_order", "args": {"order_id": {"$any": True, "x": 1}}}
                ]
            )
        ],
        [(1, "expected_tool_calls[0].args.order_id", "unexpected key 'x' beside a matcher")],
    ),
    (
        "nested matcher",
        [
            row(
                expected_tool_calls=[
                    {"name": "refund_order", "args": {"order_id": {"inner": [{"$regex": "x"}]}}}
                ]
            )
        ],
        [(1, "expected_tool_calls[0].args.order_id.inner[0]", "top-level arguments only")],
    ),
    # ── must_not_call ──
    (
        "must_not_call unknown tool",
        [row(must_not_call=["refund_ordr"])],
        [
            (
                1,
                "must_not_call[0]",
                "'refund_ordr' is not among available_tools (did you mean 'refund_order'?)",
            )
        ],
    ),
    (
        "must_not_call also expected",
        [row(must_not_call=["lookup_order"])],
        [(1, "must_not_call", "'lookup_order' is also expected in expected_tool_calls")],
    ),
    (
        "must_not_call in an alternative",
        [row(must_not_call=["refund_order"], acceptable_alternatives=[[{"name": "refund_order"}]])],
        [(1, "must_not_call", "also expected in acceptable_alternatives[0]")],
    ),
    (
        "must_not_call twice",
        [row(must_not_call=["refund_order", "refund_order"])],
        [(1, "must_not_call[1]", "listed twice")],
    ),
    (
        "must_not_call not list",
        [row(must_not_call="refund_order")],
        [(1, "must_not_call", "must be an array")],
    ),
    # ── enums, numbers, tags, text ──
    (
        "difficulty typo",
        [row(difficulty="meduim")],
        [
            (
                1,
                "difficulty",
                "must be one of easy, medium, hard, not 'meduim' (did you mean 'medium'?)",
            )
        ],
    ),
    ("order typo", [row(order="strcit")], [(1, "order", "(did you mean 'strict'?)")]),
    ("step_budget zero", [row(step_budget=0)], [(1, "step_budget", "whole number from 1")]),
    ("step_budget bool", [row(step_budget=True)], [(1, "step_budget", "whole number from 1")]),
    ("tag with space", [row(tags=["ok", "two words"])], [(1, "tags[1]", "without spaces")]),
    ("tag twice", [row(tags=["a", "a"])], [(1, "tags[1]", "listed twice")]),
    ("notes not string", [row(notes=["x"])], [(1, "notes", "must be a string")]),
    # ── tool responses ──
    (
        "response unknown tool",
        [row(tool_responses=[{"name": "lookup", "response": {}}])],
        [(1, "tool_responses[0].name", "(did you mean 'lookup_order'?)")],
    ),
    (
        "response and error",
        [row(tool_responses=[{"name": "lookup_order", "response": {}, "error": "x"}])],
        [(1, "tool_responses[0]", "both `response` and `error`")],
    ),
    (
        "response missing",
        [row(tool_responses=[{"name": "lookup_order"}])],
        [(1, "tool_responses[0]", "needs `response`")],
    ),
    (
        "error null",
        [row(tool_responses=[{"name": "lookup_order", "error": None}])],
        [(1, "tool_responses[0].error", "is null")],
    ),
    (
        "response key typo",
        [row(tool_responses=[{"name": "lookup_order", "respons": {}}])],
        [
            (1, "tool_responses[0].respons", "(did you mean 'response'?)"),
            (1, "tool_responses[0]", "needs `response`"),
        ],
    ),
    (
        "response bad matcher",
        [
            row(
                tool_responses=[
                    {"name": "lookup_order", "args": {"order_id": {"$in": []}}, "response": 1}
                ]
            )
        ],
        [(1, "tool_responses[0].args.order_id.$in", "non-empty")],
    ),
    # ── message history ──
    (
        "history role typo",
        [row(message_history=[{"role": "asistant", "content": "x"}])],
        [(1, "message_history[0].role", "(did you mean 'assistant'?)")],
    ),
    (
        "history dangling tool result",
        [row(message_history=[{"role": "tool", "tool_call_id": "call_9", "content": "x"}])],
        [(1, "message_history[0].tool_call_id", "answers no earlier assistant tool call")],
    ),
    (
        "history key typo",
        [row(message_history=[{"role": "user", "contnet": "x"}])],
        [(1, "message_history[0].contnet", "(did you mean 'content'?)")],
    ),
    (
        "history bad tool call",
        [row(message_history=[{"role": "assistant", "tool_calls": [{"name": "x"}]}])],
        [(1, "message_history[0].tool_calls[0]", '"type": "function"')],
    ),
    # ── inline tools ──
    (
        "schema bad type",
        [
            row(
                available_tools=[_tool("lookup_order", {"type": "obj"})],
                expected_tool_calls=[{"name": "lookup_order"}],
            )
        ],
        [
            (
                1,
                "available_tools[0].function.parameters.type",
                "not a valid JSON Schema: 'obj' is not a JSON type (did you mean 'object'?)",
            )
        ],
    ),
    (
        "schema bad pattern",
        [
            row(
                available_tools=[
                    _tool(
                        "lookup_order",
                        {
                            "type": "object",
                            "properties": {"a": {"type": "string", "pattern": "(["}},
                        },
                    )
                ],
                expected_tool_calls=[{"name": "lookup_order"}],
            )
        ],
        [(1, "available_tools[0].function.parameters.properties.a.pattern", "is not a 'regex'")],
    ),
    (
        "schema not object type",
        [
            row(
                available_tools=[_tool("lookup_order", {"type": "string"})],
                expected_tool_calls=[{"name": "lookup_order"}],
            )
        ],
        [(1, "available_tools[0].function.parameters.type", 'must be "object"')],
    ),
    (
        "schema unknown dialect",
        [
            row(
                available_tools=[
                    _tool("lookup_order", {"$schema": "https://example.com/s", "type": "object"})
                ],
                expected_tool_calls=[{"name": "lookup_order"}],
            )
        ],
        [(1, "available_tools[0].function.parameters.$schema", "unknown JSON Schema dialect")],
    ),
    (
        "schema remote ref",
        [
            row(
                available_tools=[
                    _tool(
                        "lookup_order",
                        {
                            "type": "object",
                            "properties": {"a": {"$ref": "https://example.com/a.json"}},
                        },
                    )
                ],
                expected_tool_calls=[{"name": "lookup_order"}],
            )
        ],
        [(1, "available_tools[0].function.parameters.properties.a.$ref", "only local references")],
    ),
    (
        "schema ref to nothing",
        [
            row(
                available_tools=[
                    _tool(
                        "lookup_order",
                        {
                            "type": "object",
                            "$defs": {"id": {"type": "string"}},
                            "properties": {"a": {"$ref": "#/$defs/ids"}},
                        },
                    )
                ],
                expected_tool_calls=[{"name": "lookup_order"}],
            )
        ],
        [
            (
                1,
                "available_tools[0].function.parameters.properties.a.$ref",
                "'#/$defs/ids' points at nothing in this schema (did you mean '#/$defs/id'?)",
            )
        ],
    ),
    (
        "schema unevaluated with pattern properties",
        [
            row(
                available_tools=[
                    _tool(
                        "lookup_order",
                        {
                            "type": "object",
                            "patternProperties": {"^x_": {"type": "string"}},
                            "unevaluatedProperties": False,
                        },
                    )
                ],
                expected_tool_calls=[{"name": "lookup_order"}],
            )
        ],
        [
            (
                1,
                "available_tools[0].function.parameters.unevaluatedProperties",
                "cannot be combined with patternProperties",
            )
        ],
    ),
    (
        "draft-07 meta-schema",
        [
            row(
                available_tools=[
                    _tool(
                        "lookup_order",
                        {
                            "$schema": "http://json-schema.org/draft-07/schema#",
                            "type": "object",
                            "properties": {"a": {"type": "strin"}},
                        },
                    )
                ],
                expected_tool_calls=[{"name": "lookup_order"}],
            )
        ],
        [
            (
                1,
                "available_tools[0].function.parameters.properties.a.type",
                "(did you mean 'string'?)",
            )
        ],
    ),
    (
        "tool anthropic key",
        [
            row(
                available_tools=[{"name": "lookup_order", "input_schema": {}}],
                expected_tool_calls=[{"name": "lookup_order"}],
            )
        ],
        [(1, "available_tools[0].input_schema", "Anthropic's `input_schema`")],
    ),
    (
        "tool wrapper type",
        [
            row(
                available_tools=[{"type": "fn", "function": REFUND}],
                expected_tool_calls=[{"name": "refund_order"}],
            )
        ],
        [(1, "available_tools[0].type", 'must be "function"')],
    ),
    (
        "tool bad name",
        [
            row(
                available_tools=[{"name": "look up", "parameters": {}}],
                expected_tool_calls=None,
                expected_no_tool=True,
            )
        ],
        [(1, "available_tools[0].name", "must be a tool name")],
    ),
    (
        "tool twice",
        [row(available_tools=[LOOKUP, LOOKUP])],
        [(1, "available_tools[1].name", "duplicate tool 'lookup_order'")],
    ),
    # ── conversations ──
    (
        "conversation with user_input",
        [row(expected_tool_calls=None, conversation=[_turn()])],
        [(1, "user_input", "a conversation case gives it per turn")],
    ),
    (
        "conversation with expected_tool_calls",
        [row(user_input=None, conversation=[_turn()])],
        [(1, "expected_tool_calls", "a conversation case gives it per turn")],
    ),
    (
        "conversation empty",
        [_conv([])],
        [(1, "conversation", "must be a non-empty array of user turns")],
    ),
    (
        "conversation not a list",
        [_conv({"user": "hi"})],
        [(1, "conversation", "not an object")],
    ),
    (
        "turn without user",
        [_conv([_turn(), {"expected_tool_calls": []}])],
        [(1, "conversation[1].user", "required")],
    ),
    (
        "turn without expectations",
        [_conv([{"user": "hi"}])],
        [(1, "conversation[0].expected_tool_calls", "required: the calls the agent should make")],
    ),
    (
        "turn key typo",
        [_conv([{**_turn(), "expected_no_tol": True}])],
        [(1, "conversation[0].expected_no_tol", "unknown key")],
    ),
    (
        "turn calls an unknown tool",
        [_conv([_turn([{"name": "nope"}])])],
        [(1, "conversation[0].expected_tool_calls[0].name", "'nope' is not among")],
    ),
    (
        "turn expects no tool and calls",
        [_conv([{**_turn([{"name": "lookup_order"}]), "expected_no_tool": True}])],
        [(1, "conversation[0].expected_no_tool", "is true but expected_tool_calls lists 1")],
    ),
    (
        "turn order unknown",
        [_conv([{**_turn(), "order": "sideways"}])],
        [(1, "conversation[0].order", "must be one of unordered, strict, subset, superset")],
    ),
    (
        "turn response for an unknown tool",
        [_conv([{**_turn(), "tool_responses": [{"name": "nope", "response": 1}]}])],
        [(1, "conversation[0].tool_responses[0].name", "'nope' is not among")],
    ),
    (
        "turn alternatives naming an unknown tool",
        [_conv([{**_turn([{"name": "lookup_order"}]), "alternatives": [[{"name": "nope"}]]}])],
        [(1, "conversation[0].alternatives[0][0].name", "'nope' is not among")],
    ),
]


@pytest.mark.parametrize(
    ("items", "expected"), [(c[1], c[2]) for c in CASES], ids=[c[0] for c in CASES]
)
def test_validation__jsonl__names_file_line_field(
    tmp_path: Path, items: list[Any], expected: list[Any]
) -> None:
    path = write_jsonl(tmp_path / "dataset.jsonl", items)
    assert_problems(problems_of(path, display="data/dataset.jsonl"), "data/dataset.jsonl", expected)


# Cases that mean something else in CSV: a header typo is a header problem (tested below),
# text cells cannot hold a number or an array, a bare tools.json is not JSON, and the
# duplicate-id message names the first row's CSV line.
_NOT_CSV = {
    "unknown column",
    "id not a string",
    "notes not string",
    "tools as plain string",
    "duplicate id",
}
CSV_CASES = [c for c in CASES if all(isinstance(x, dict) for x in c[1]) and c[0] not in _NOT_CSV]


@pytest.mark.parametrize(
    ("items", "expected"), [(c[1], c[2]) for c in CSV_CASES], ids=[c[0] for c in CSV_CASES]
)
def test_validation__csv__same_problems_at_row_lines(
    tmp_path: Path, items: list[Any], expected: list[Any]
) -> None:
    """The same rows as CSV report the same problems, at the row's line (header = 1)."""
    path = tmp_path / "dataset.csv"
    path.write_text(to_csv(items), encoding="utf-8")
    shifted = [(None if line is None else line + 1, field, frag) for line, field, frag in expected]
    assert_problems(problems_of(path, display="dataset.csv"), "dataset.csv", shifted)


def test_validation__csv_duplicate_id__names_the_first_row_line(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text(to_csv([row(id="a"), row(id="a")]), encoding="utf-8")
    assert_problems(
        problems_of(path, display="d.csv"),
        "d.csv",
        [(3, "id", "duplicate id 'a' (first at line 2)")],
    )


def test_validation__many_problems__one_pass_in_line_order(tmp_path: Path) -> None:
    items: list[Any] = rows(9)
    items[1] = row(id="c2", difficulty="extreme")
    items[4] = "{not json"
    items[8] = row(id="c1")
    found = problems_of(write_jsonl(tmp_path / "d.jsonl", items), display="d.jsonl")
    assert [t.split(":")[1] for t in found] == ["2", "5", "9"]


def test_validation__thousands_of_problems__capped_with_a_count(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", rows(MAX_PROBLEMS + 50, difficulty="x"))
    found = problems_of(path, display="d.jsonl")
    assert len(found) == MAX_PROBLEMS + 1
    assert found[-1] == f"d.jsonl: ... and 50 more problems (showing the first {MAX_PROBLEMS})"


def test_validation__empty_file__no_cases(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text("\n\n")
    assert problems_of(path, display="d.jsonl") == ["d.jsonl: the dataset has no cases"]


def test_validation__missing_file__cannot_read(tmp_path: Path) -> None:
    [text] = problems_of(tmp_path / "nope.jsonl", display="nope.jsonl")
    assert text.startswith("nope.jsonl: cannot read")


def test_validation__unknown_format__names_the_choices(tmp_path: Path) -> None:
    path = tmp_path / "d.txt"
    path.write_text("{}")
    [text] = problems_of(path, display="d.txt")
    assert ".jsonl" in text and ".csv" in text


def test_validation__not_utf8__line_named(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_bytes(json.dumps(row()).encode() + b"\n" + b'{"id": "\xff"}\n')
    assert_problems(problems_of(path, display="d.jsonl"), "d.jsonl", [(2, None, "not valid UTF-8")])


# ── @file references ──


def test_reference__escapes_folder__refused(tmp_path: Path) -> None:
    (tmp_path / "tools.json").write_text(json.dumps([LOOKUP, REFUND]))
    (tmp_path / "data").mkdir()
    path = write_jsonl(tmp_path / "data" / "d.jsonl", [row(available_tools="@../tools.json")])
    assert_problems(
        problems_of(path, display="data/d.jsonl"),
        "data/d.jsonl",
        [(1, "available_tools", "points outside the dataset's folder")],
    )


def test_reference__root_widened__parent_allowed(tmp_path: Path) -> None:
    (tmp_path / "tools.json").write_text(json.dumps([LOOKUP, REFUND]))
    (tmp_path / "data").mkdir()
    path = write_jsonl(tmp_path / "data" / "d.jsonl", [row(available_tools="@../tools.json")])
    ds = load_dataset(path, root=tmp_path)
    assert [t.name for t in ds.cases[0].available_tools] == ["lookup_order", "refund_order"]
    assert ds.files[1] == tmp_path / "data" / "../tools.json"


@pytest.mark.skipif(os.name == "nt", reason="symlinks")
def test_reference__symlink_leading_outside__refused(tmp_path: Path) -> None:
    outside = tmp_path / "secret.json"
    outside.write_text(json.dumps([LOOKUP]))
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "tools.json").symlink_to(outside)
    path = write_jsonl(tmp_path / "data" / "d.jsonl", [row(available_tools="@tools.json")])
    assert_problems(
        problems_of(path, display="d.jsonl"), "d.jsonl", [(1, "available_tools", "points outside")]
    )


def test_reference__absolute__refused(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [row(available_tools=f"@{tmp_path / 'tools.json'}")])
    assert_problems(
        problems_of(path, display="d.jsonl"), "d.jsonl", [(1, "available_tools", "absolute path")]
    )


def test_reference__missing__suggests_near_name(tmp_path: Path) -> None:
    (tmp_path / "tools.json").write_text(json.dumps([LOOKUP, REFUND]))
    path = write_jsonl(
        tmp_path / "d.jsonl",
        [row(available_tools="@tool.json"), row(id="c2", available_tools="@tool.json")],
    )
    assert_problems(
        problems_of(path, display="d.jsonl"),
        "d.jsonl",
        [  # one problem for a file every case names: the first line, with the count
            (
                1,
                "available_tools",
                "no such file tool.json (did you mean 'tools.json'?) (and 1 more case "
                "references it, line 2)",
            ),
        ],
    )


def test_reference__empty_name__refused(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [row(available_tools="@")])
    assert_problems(
        problems_of(path, display="d.jsonl"),
        "d.jsonl",
        [(1, "available_tools", "needs a file name")],
    )


def test_reference__bad_tool_in_file__reported_once_at_the_bad_fields_line(
    tmp_path: Path,
) -> None:
    tools = [LOOKUP, {"name": "refund_order", "parameters": {"type": "obj"}}]
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "tools.json").write_text(json.dumps(tools, indent=2))
    (line,) = [
        i + 1
        for i, text in enumerate(json.dumps(tools, indent=2).splitlines())
        if text.strip() == '"type": "obj"'
    ]
    path = write_jsonl(tmp_path / "data" / "d.jsonl", rows(3, available_tools="@tools.json"))
    assert_problems(
        problems_of(path, display="data/d.jsonl"),
        "data/tools.json",
        [(line, "[1].parameters.type", "'obj' is not a JSON type")],
    )


@pytest.mark.parametrize(
    ("tool", "field", "needle"),
    [
        (
            _tool("t", {"type": "object", "properties": {"city": {"type": "strng"}}}),
            "[1].function.parameters.properties.city.type",
            '"type": "strng"',
        ),
        (
            _tool("t", {"type": "object", "properties": {"n": {"enum": "one"}}}),
            "[1].function.parameters.properties.n.enum",
            '"enum": "one"',
        ),
        (
            {"type": "function", "function": {"name": "t", "paramters": {}}},
            "[1].function.paramters",
            '"paramters": {}',
        ),
        (
            _tool("t", {"type": "object", "anyOf": [{"type": "object"}, {"type": 7}]}),
            "[1].function.parameters.anyOf[1].type",
            '"type": 7',
        ),
    ],
)
def test_reference__nested_bad_field__line_of_that_field_not_of_the_tool(
    tmp_path: Path, tool: dict[str, Any], field: str, needle: str
) -> None:
    text = json.dumps([LOOKUP, tool], indent=2)
    (tmp_path / "tools.json").write_text(text)
    (line,) = [i + 1 for i, t in enumerate(text.splitlines()) if needle in t]
    path = write_jsonl(tmp_path / "d.jsonl", [row(available_tools="@tools.json")])
    found = problems_of(path, display="d.jsonl")
    assert found and found[0].startswith(f"tools.json:{line}: {field}: "), found


def test_reference__file_not_json__line_named(tmp_path: Path) -> None:
    (tmp_path / "tools.json").write_text('[\n  {"name": "a"},\n  oops\n]\n')
    path = write_jsonl(tmp_path / "d.jsonl", [row(available_tools="@tools.json")])
    assert_problems(problems_of(path, display="d.jsonl"), "tools.json", [(3, None, "invalid JSON")])


def test_reference__file_not_array__refused(tmp_path: Path) -> None:
    (tmp_path / "tools.json").write_text(json.dumps({"tools": [LOOKUP]}))
    path = write_jsonl(tmp_path / "d.jsonl", [row(available_tools="@tools.json")])
    assert_problems(
        problems_of(path, display="d.jsonl"),
        "tools.json",
        [(1, None, "must be a JSON array of tool definitions")],
    )


def test_reference__duplicate_tool_in_file__names_both_lines(tmp_path: Path) -> None:
    (tmp_path / "tools.json").write_text(
        "[\n" + json.dumps(LOOKUP) + ",\n" + json.dumps(LOOKUP) + "\n]\n"
    )
    path = write_jsonl(tmp_path / "d.jsonl", [row(available_tools="@tools.json")])
    assert_problems(
        problems_of(path, display="d.jsonl"),
        "tools.json",
        [(3, "[1].name", "duplicate tool 'lookup_order' (first at line 2)")],
    )


# ── CSV-only problems ──


def test_csv__unknown_header__line_1_with_suggestion(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text(
        to_csv(
            [row()],
            columns=["id", "user_input", "available_tools", "expected_tool_calls", "dificulty"],
        )
    )
    assert_problems(
        problems_of(path, display="d.csv"),
        "d.csv",
        [(1, "dificulty", "unknown column (did you mean 'difficulty'?)")],
    )


def test_csv__row_with_extra_cells__line_named(tmp_path: Path) -> None:
    text = to_csv([row()], columns=["id", "user_input", "available_tools", "expected_tool_calls"])
    path = tmp_path / "d.csv"
    path.write_text(text + 'c2,hi,"[]","[]",extra\n')
    assert_problems(
        problems_of(path, display="d.csv"),
        "d.csv",
        [(3, None, "row has 5 cells; the header has 4")],
    )


def test_csv__cell_not_json__column_named(tmp_path: Path) -> None:
    text = to_csv(
        [row()],
        columns=["id", "user_input", "available_tools", "expected_tool_calls", "expected_no_tool"],
    )
    path = tmp_path / "d.csv"
    path.write_text(text + 'c2,hi,"[]","[]",TRUE\n')
    assert_problems(
        problems_of(path, display="d.csv"),
        "d.csv",
        [(3, "expected_no_tool", "(write true or false)")],
    )


def test_csv__repeated_header__refused(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text("id,user_input,id\n")
    found = problems_of(path, display="d.csv")
    assert found[0].startswith("d.csv:1: id: column 3 repeats the column 'id'")


def test_csv__unbalanced_quote__reported(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text('id,user_input\n"c1,hi\n')
    found = problems_of(path, display="d.csv")
    assert found and found[0].startswith("d.csv:2: ")


@pytest.mark.parametrize(
    ("name", "accepted"),
    [
        ("delete_account", True),  # a tool the agent holds beyond the case's list
        ("functions.wipe_everything", True),  # an invented, namespaced name
        ("refund_ordr", False),  # one letter off an offered tool
        ("Refund_Order", False),  # case
        ("refund order", False),  # spacing
        ("rеfund_order", False),  # a Cyrillic е
        ("lookup-order", False),  # punctuation
    ],
)
def test_must_not_call__name_not_offered__accepted_unless_a_look_alike(
    tmp_path: Path, name: str, accepted: bool
) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [row(must_not_call=[name])])
    if accepted:
        (case,) = load_dataset(path).cases
        assert case.must_not_call == (name,)
        return
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    (problem,) = info.value.problems
    assert problem.field == "must_not_call[0]"
    assert "did you mean" in problem.message and "is not among available_tools" in problem.message


def test_must_not_call__unoffered_names__one_notice_naming_them() -> None:
    from gate.dataset.validate import unoffered_forbidden
    from tests.scorers.helpers import case, tool

    offered = [tool("lookup_order")]
    cases = [
        case("a", tools=offered, must_not_call=["delete_account"]),
        case("b", tools=offered, must_not_call=["delete_account", "drop_db"]),
        case("c", tools=offered),
    ]
    notice = unoffered_forbidden(cases)
    assert notice is not None
    assert "delete_account, drop_db" in notice and "in 2 case(s)" in notice
    assert unoffered_forbidden(cases[2:]) is None
