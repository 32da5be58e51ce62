"""Provider payloads (shaped as in each API's published reference) → ToolCall.

The samples live in ``payloads/*.json``.

Every sample here is written from the provider's API reference: the OpenAI chat
completions object and its ``chat.completion.chunk`` stream, the OpenAI Responses object
and its typed stream events, the Anthropic Messages object and stream events, and the
Gemini ``GenerateContentResponse``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gate.adapters import (
    PayloadError,
    Provider,
    anthropic,
    gemini,
    openai_chat,
    openai_responses,
    parse,
    plain,
    stream_accumulator,
)
from gate.adapters.sse import iter_events
from gate.model import ToolCall

PAYLOADS = Path(__file__).parent / "payloads"


def _load(name: str) -> Any:
    return json.loads((PAYLOADS / name).read_text())


# ─── OpenAI chat completions ──────────────────────────────────────────────────

OPENAI_CHAT_TWO_CALLS = _load("openai_chat_completion_two_calls.json")


def test_openai_chat__tool_calls__parsed_from_structured_field_with_invalid_json_kept() -> None:
    turn = parse(Provider.OPENAI_CHAT, OPENAI_CHAT_TWO_CALLS)
    assert turn.calls == (
        ToolCall(
            name="get_current_weather",
            arguments={"location": "Boston, MA"},
            id="call_abc123",
            raw_arguments='{\n"location": "Boston, MA"\n}',
        ),
        ToolCall(
            name="lookup_order",
            arguments=None,
            id="call_def456",
            raw_arguments='{"order_id": "ord_1", ',
            parse_ok=False,
        ),
    )
    assert turn.content is None
    assert turn.usage == {"prompt_tokens": 82, "completion_tokens": 17, "total_tokens": 99}
    assert turn.finish_reason == "tool_calls"
    assert turn.message is not None and turn.message["tool_calls"][0]["id"] == "call_abc123"


def test_openai_chat__text_that_looks_like_a_call__is_not_a_call() -> None:
    body = {
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": '{"name": "lookup_order", "arguments": {"order_id": "1"}}',
                },
                "finish_reason": "stop",
            }
        ]
    }
    turn = openai_chat.parse_completion(body)
    assert turn.calls == ()
    assert turn.content is not None and "lookup_order" in turn.content


@pytest.mark.parametrize(
    ("arguments", "parsed", "ok"),
    [
        ('{"a": 1}', {"a": 1}, True),
        ("[1, 2]", None, False),  # JSON, but not an object
        ('{"a": NaN}', None, False),  # not strict JSON
        ('{"a": 1, "a": 2}', None, False),  # duplicate key
        ("", None, False),
    ],
)
def test_openai_chat__argument_strings__decoded_strictly(
    arguments: str, parsed: dict[str, Any] | None, ok: bool
) -> None:
    call = openai_chat.call_from_tool_call(
        {"id": "c", "type": "function", "function": {"name": "f", "arguments": arguments}}
    )
    assert (call.arguments, call.parse_ok, call.raw_arguments) == (parsed, ok, arguments)


def test_openai_chat__legacy_function_call__read() -> None:
    msg = {"role": "assistant", "content": None, "function_call": {"name": "f", "arguments": "{}"}}
    assert openai_chat.calls_from_message(msg) == (ToolCall("f", {}, None, "{}"),)


def test_openai_chat__no_choices__payload_error_names_path() -> None:
    with pytest.raises(PayloadError, match=r"^choices: must be an array"):
        openai_chat.parse_completion({"id": "x", "object": "chat.completion"})
    with pytest.raises(PayloadError, match=r"tool_calls\[0\]\.function\.name"):
        openai_chat.parse_completion(
            {
                "choices": [
                    {"message": {"tool_calls": [{"id": "c", "function": {"arguments": "{}"}}]}}
                ]
            }
        )


def test_openai_chat__error_body__payload_error() -> None:
    with pytest.raises(PayloadError, match="endpoint returned an error"):
        openai_chat.parse_completion({"error": {"message": "model overloaded", "type": "server"}})


# Chunks as the API streams them for two parallel tool calls, with include_usage.
OPENAI_CHAT_STREAM = _load("openai_chat_stream_chunks.json")


def test_openai_chat_stream__interleaved_fragments__accumulated_before_parsing() -> None:
    acc = openai_chat.StreamAccumulator()
    for chunk in OPENAI_CHAT_STREAM:
        acc.add(chunk)
    turn = acc.finish()
    assert [(c.id, c.name, c.arguments, c.parse_ok) for c in turn.calls] == [
        ("call_A", "lookup_order", {"order_id": "ord_7"}, True),
        ("call_B", "get_customer", None, False),  # the model never closed the object
    ]
    assert turn.calls[1].raw_arguments == '{"email": "a@b.c"'
    assert turn.usage == {"prompt_tokens": 50, "completion_tokens": 20, "total_tokens": 70}
    assert turn.finish_reason == "tool_calls"


def test_openai_chat_stream__sse_bytes__same_result_as_chunks() -> None:
    wire = b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in OPENAI_CHAT_STREAM)
    wire = b": keep-alive\n\n" + wire + b"data: [DONE]\n\n"
    acc = stream_accumulator(Provider.OPENAI_CHAT)
    for _name, event in iter_events(wire.splitlines(keepends=True)):
        acc.add(event)
    assert [c.name for c in acc.finish().calls] == ["lookup_order", "get_customer"]


def test_openai_chat_stream__content_only__final_text() -> None:
    acc = openai_chat.StreamAccumulator()
    for text in ["Your order ", "has shipped."]:
        acc.add({"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]})
    turn = acc.finish()
    assert (turn.calls, turn.content) == ((), "Your order has shipped.")


def test_openai_chat_stream__empty__payload_error() -> None:
    with pytest.raises(PayloadError, match="no chunks"):
        openai_chat.StreamAccumulator().finish()


def test_sse__broken_event_json__payload_error() -> None:
    with pytest.raises(PayloadError, match="stream event 0"):
        list(iter_events([b'data: {"choices": [\n', b"\n"]))


# ─── OpenAI Responses ─────────────────────────────────────────────────────────

RESPONSES_BODY = _load("openai_responses_function_call.json")


def test_openai_responses__function_call_items__call_id_is_the_id() -> None:
    turn = parse(Provider.OPENAI_RESPONSES, RESPONSES_BODY)
    assert turn.calls == (
        ToolCall("get_weather", {"location": "Paris, France"}, "call_12345xyz",
                 '{"location":"Paris, France"}'),
    )  # fmt: skip
    assert turn.content == "Checking."
    assert turn.usage == {"prompt_tokens": 36, "completion_tokens": 87, "total_tokens": 123}


def test_openai_responses_stream__argument_deltas__joined() -> None:
    events = [
        {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0,
         "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1",
                  "name": "get_weather", "arguments": ""}},
        {"type": "response.function_call_arguments.delta", "item_id": "fc_1",
         "output_index": 0, "delta": '{"location":'},
        {"type": "response.function_call_arguments.delta", "item_id": "fc_1",
         "output_index": 0, "delta": '"Paris"}'},
    ]  # fmt: skip
    acc = openai_responses.StreamAccumulator()
    for ev in events:
        acc.add(ev)
    assert acc.finish().calls == (
        ToolCall("get_weather", {"location": "Paris"}, "call_1", '{"location":"Paris"}'),
    )


def test_openai_responses_stream__completed_event__wins() -> None:
    acc = openai_responses.StreamAccumulator()
    acc.add({"type": "response.output_text.delta", "delta": "partial"})
    acc.add({"type": "response.completed", "response": RESPONSES_BODY})
    assert [c.name for c in acc.finish().calls] == ["get_weather"]


# ─── Anthropic ────────────────────────────────────────────────────────────────

ANTHROPIC_MESSAGE = _load("anthropic_message_tool_use.json")


def test_anthropic__tool_use_blocks__input_object_taken_as_is() -> None:
    turn = parse(Provider.ANTHROPIC, ANTHROPIC_MESSAGE)
    assert turn.calls == (
        ToolCall("lookup_order", {"order_id": "ord_7281"}, "toolu_01A09q90qw90lq917835lq9"),
        ToolCall("list_orders", {}, "toolu_02"),
    )
    assert turn.content == "I'll look up the order."
    assert turn.usage == {
        "prompt_tokens": 472,
        "completion_tokens": 91,
        "cache_read_input_tokens": 0,
        "total_tokens": 563,
    }
    assert turn.finish_reason == "tool_use"


def test_anthropic__input_not_an_object__parse_failure() -> None:
    call = anthropic.call_from_block({"type": "tool_use", "id": "t", "name": "f", "input": [1]})
    assert (call.parse_ok, call.arguments) == (False, None)


ANTHROPIC_STREAM = _load("anthropic_stream_events.json")


def test_anthropic_stream__partial_json__joined_then_decoded() -> None:
    acc = anthropic.StreamAccumulator()
    for ev in ANTHROPIC_STREAM:
        acc.add(ev)
    turn = acc.finish()
    assert [(c.id, c.name, c.arguments) for c in turn.calls] == [
        ("toolu_01T1x1fJ34qAmk2tNTrN7Up6", "get_weather", {"location": "San Francisco, CA"}),
        ("toolu_02", "list_orders", {}),
    ]
    assert turn.calls[0].raw_arguments == '{"location": "San Francisco, CA"}'
    assert turn.content == "Okay"
    assert turn.usage == {"prompt_tokens": 25, "completion_tokens": 89, "total_tokens": 114}


def test_anthropic_stream__cut_off_json__parse_failure_kept() -> None:
    acc = anthropic.StreamAccumulator()
    for ev in ANTHROPIC_STREAM[:7]:
        acc.add(ev)
    (call,) = acc.finish().calls
    assert (call.parse_ok, call.raw_arguments) == (False, '{"location": "San Fra')


def test_anthropic_stream__delta_before_start__payload_error() -> None:
    acc = anthropic.StreamAccumulator()
    with pytest.raises(PayloadError, match="before its start"):
        acc.add(ANTHROPIC_STREAM[2])


# ─── Gemini ───────────────────────────────────────────────────────────────────

GEMINI_RESPONSE = _load("gemini_function_calls.json")


def test_gemini__function_call_parts__args_object_and_optional_id() -> None:
    turn = parse(Provider.GEMINI, GEMINI_RESPONSE)
    assert turn.calls == (
        ToolCall("set_light_values", {"brightness": 25, "color_temp": "warm"}),
        ToolCall("power_disco_ball", {"power": True}, "fc-2"),
        ToolCall("list_devices", {}),
    )
    assert turn.content is None  # thought parts are not the answer
    assert turn.usage == {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}
    assert turn.finish_reason == "STOP"


def test_gemini_stream__parts_across_chunks__concatenated() -> None:
    chunks = [
        {"candidates": [{"content": {"role": "model", "parts": [{"text": "Let me "}]}}]},
        {"candidates": [{"content": {"role": "model", "parts": [{"text": "check."}]}}]},
        {"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"name": "lookup_order", "args": {"order_id": "7"}}}]},
            "finishReason": "STOP"}],
         "usageMetadata": {"promptTokenCount": 9, "totalTokenCount": 12}},
    ]  # fmt: skip
    acc = gemini.StreamAccumulator()
    for c in chunks:
        acc.add(c)
    turn = acc.finish()
    assert turn.content == "Let me check."
    assert turn.calls == (ToolCall("lookup_order", {"order_id": "7"}),)
    assert turn.usage == {"prompt_tokens": 9, "total_tokens": 12}


def test_gemini__blocked_prompt_without_candidates__empty_turn() -> None:
    turn = gemini.parse_response({"promptFeedback": {"blockReason": "SAFETY"}})
    assert turn.calls == () and turn.content is None


# ─── plain ────────────────────────────────────────────────────────────────────


def test_plain__object_or_string_arguments__both_accepted() -> None:
    calls = plain.calls_from_plain(
        [
            {"name": "a", "arguments": {"x": 1}},
            {"id": "c2", "name": "b", "arguments": '{"y": 2}'},
            {"name": "c", "arguments": "{oops"},
            {"name": "d"},
        ]
    )
    assert calls == (
        ToolCall("a", {"x": 1}),
        ToolCall("b", {"y": 2}, "c2", '{"y": 2}'),
        ToolCall("c", None, None, "{oops", parse_ok=False),
        ToolCall("d", {}),
    )


def test_plain__missing_name__payload_error_names_index() -> None:
    with pytest.raises(PayloadError, match=r"calls\[1\]\.name"):
        plain.calls_from_plain([{"name": "a"}, {"arguments": {}}])
