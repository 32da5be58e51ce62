"""Frozen tool replay: which recorded response answers a call, and what a miss looks like."""

from __future__ import annotations

from typing import Any

from gate.config import NormalizeConfig
from gate.model import ArgMatcher, FrozenResponse, MatcherKind
from gate.replay.frozen import (
    UNRECORDED_KEY,
    FunctionBackend,
    RecordingBackend,
    ReplayBackend,
    ToolOutcome,
)
from gate.scorers.context import NormalizerTable
from tests.replay.helpers import case, response


def _backend(*responses: FrozenResponse, normalize: NormalizeConfig | None = None) -> ReplayBackend:
    return ReplayBackend(case("c1", responses=responses), NormalizerTable(normalize))


def test_replay__two_responses_match__kth_call_gets_kth_then_last_repeats() -> None:
    b = _backend(
        response("lookup_order", {"order_id": "ord_1"}, ok={"status": "pending"}),
        response("lookup_order", {"order_id": "ord_1"}, ok={"status": "shipped"}),
    )
    got = [b.call("lookup_order", {"order_id": "ord_1"}).content for _ in range(3)]
    assert got == [{"status": "pending"}, {"status": "shipped"}, {"status": "shipped"}]


def test_replay__args_differ__specific_response_else_tool_default() -> None:
    b = _backend(
        response("lookup_order", {"order_id": "ord_1"}, ok={"id": 1}),
        response("lookup_order", None, ok={"id": "default"}),
    )
    assert b.call("lookup_order", {"order_id": "ord_1"}).content == {"id": 1}
    assert b.call("lookup_order", {"order_id": "ord_2"}).content == {"id": "default"}
    # extra arguments are allowed, as for expectations
    assert b.call("lookup_order", {"order_id": "ord_1", "verbose": True}).content == {"id": 1}


def test_replay__normalisation__same_rules_as_expectations() -> None:
    b = _backend(
        response("lookup_order", {"order_id": "ord_10482"}, ok="hit"),
        normalize=NormalizeConfig(id_prefixes=("ord_",)),
    )
    assert b.call("lookup_order", {"order_id": "  ORD_10482 "}).content == "hit"
    assert b.call("lookup_order", {"order_id": "10482"}).content == "hit"


def test_replay__matcher_kinds__regex_and_in_pick_responses() -> None:
    regex = FrozenResponse(
        "lookup_order",
        {"order_id": ArgMatcher(MatcherKind.REGEX, pattern=r"ord_9\d+")},
        response="nines",
    )
    one_of = FrozenResponse(
        "lookup_order", {"order_id": ArgMatcher(MatcherKind.IN, options=("a", "b"))}, response="ab"
    )
    b = _backend(regex, one_of)
    assert b.call("lookup_order", {"order_id": "ord_912"}).content == "nines"
    assert b.call("lookup_order", {"order_id": "B"}).content == "ab"


def test_replay__frozen_error__delivered_as_error() -> None:
    b = _backend(response("issue_refund", None, error={"status": 500, "message": "upstream down"}))
    out = b.call("issue_refund", {"order_id": "ord_1"})
    assert out == ToolOutcome({"status": 500, "message": "upstream down"}, is_error=True)


def test_replay__empty_result__delivered_as_success() -> None:
    b = _backend(response("lookup_order", None, ok=[]))
    assert b.call("lookup_order", {"order_id": "x"}) == ToolOutcome([], is_error=False)


def test_replay__unrecorded_call__error_result_names_call_and_nearest() -> None:
    b = _backend(
        response("issue_refund", {"order_id": "ord_1"}, ok="r"),
        response("lookup_order", {"order_id": "ord_1"}, ok="l"),
        response("lookup_order", {"order_id": "ord_22"}, ok="l2"),
    )
    out = b.call("lookup_order", {"order_id": "x"})
    assert out.is_error and out.unrecorded
    assert out.content == {
        UNRECORDED_KEY: True,
        "error": 'no frozen response for lookup_order({"order_id": "x"})',
        "nearest": 'lookup_order({"order_id": "ord_1"})',
    }
    assert b.misses == [
        'case c1: no frozen response for lookup_order({"order_id": "x"}); '
        'nearest recorded call: lookup_order({"order_id": "ord_1"})'
    ]


def test_replay__case_records_nothing__nearest_is_null() -> None:
    empty = ReplayBackend(case("c3", responses=()))
    out = empty.call("delete_account", {"user": "u1"})
    assert out.content == {
        UNRECORDED_KEY: True,
        "error": 'no frozen response for delete_account({"user": "u1"})',
        "nearest": None,
    }
    assert empty.misses == [
        'case c3: no frozen response for delete_account({"user": "u1"}); the case records none'
    ]


def test_replay__arguments_did_not_parse__only_a_default_answers() -> None:
    specific = _backend(response("lookup_order", {"order_id": "ord_1"}, ok="x"))
    assert specific.call("lookup_order", None).unrecorded
    assert "<arguments that are not a JSON object>" in specific.misses[0]
    default = _backend(response("lookup_order", None, ok="d"))
    assert default.call("lookup_order", None).content == "d"


def test_function_backend__exception_unknown_tool_unparsed__error_results() -> None:
    def lookup_order(order_id: str) -> dict[str, Any]:
        if order_id == "boom":
            raise RuntimeError("db down")
        return {"order_id": order_id}

    fb = FunctionBackend({"lookup_order": lookup_order})
    assert fb.call("lookup_order", {"order_id": "1"}) == ToolOutcome({"order_id": "1"})
    assert fb.call("lookup_order", {"order_id": "boom"}) == ToolOutcome(
        {"error": "RuntimeError: db down"}, is_error=True
    )
    assert fb.call("nope", {}).is_error
    assert fb.call("lookup_order", None).is_error
    assert fb.call("lookup_order", {"bad": 1}).content == {
        "error": "TypeError: test_function_backend__exception_unknown_tool_unparsed__error_results."
        "<locals>.lookup_order() got an unexpected keyword argument 'bad'"
    }


def test_function_backend__handler__gets_name_and_args() -> None:
    fb = FunctionBackend(handler=lambda name, args: ToolOutcome([name, args], is_error=True))
    assert fb.call("t", {"a": 1}) == ToolOutcome(["t", {"a": 1}], is_error=True)


def test_recording__known_calls_replayed_unknown_called_once_each() -> None:
    calls: list[tuple[str, Any]] = []

    def handler(name: str, args: Any) -> Any:
        calls.append((name, args))
        return {"real": args}

    rec = RecordingBackend(
        FunctionBackend(handler=handler),
        _backend(response("lookup_order", {"order_id": "ord_1"}, ok="frozen")),
    )
    assert rec.call("lookup_order", {"order_id": "ord_1"}).content == "frozen"
    assert rec.call("lookup_order", {"order_id": "ord_2"}).content == {
        "real": {"order_id": "ord_2"}
    }
    assert rec.call("lookup_order", {"order_id": "ord_2"}).content == {
        "real": {"order_id": "ord_2"}
    }
    assert calls == [("lookup_order", {"order_id": "ord_2"})]
    assert [(r.name, r.args) for r in rec.recorded] == [("lookup_order", {"order_id": "ord_2"})]
