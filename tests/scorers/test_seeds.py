"""Acceptance examples from the seeds (issue 3): each is one test."""

from __future__ import annotations

import pytest

from gate.config import ScoringConfig
from gate.model import OrderMode, SampleScore
from gate.results import evidence_json, tallies_json
from gate.scorers import ScoringContext, score_sample
from gate.scorers.matching import greedy_matching
from tests.scorers.helpers import call, case, expected, run, tool

SEED_004_SCHEMA = {
    "type": "object",
    "properties": {"order_id": {"type": "string"}, "include_items": {"type": "boolean"}},
    "required": ["order_id"],
    "additionalProperties": False,
}


WEATHER_TOOLS = [tool("getWeather"), tool("getTime")]


def _score(c, r, **scoring) -> SampleScore:  # type: ignore[no-untyped-def]
    return score_sample(c, r, ScoringContext.build(ScoringConfig(**scoring)), full=True)


def test_seed000__argless_expectation_does_not_steal_the_specific_call() -> None:
    c = case(expect=[expected("getWeather"), expected("getWeather", {"city": "Berlin"})])
    r = run([call("getWeather", {"city": "Berlin"}), call("getWeather", {"city": "Munich"})])
    s = _score(c, r)
    assert s.scores["call_accuracy"] == 1.0
    assert s.passed
    # First-match-wins would pair getWeather() with the Berlin call and report 0.5.
    adj = [[0, 1], [0]]
    assert sum(v >= 0 for v in greedy_matching(adj, 2)) / 2 == 0.5


def test_seed000__integer_matches_equivalent_float() -> None:
    c = case(expect=[expected("setVolume", {"level": 5})])
    s = _score(c, run([call("setVolume", {"level": 5.0})]))
    assert s.scores["call_accuracy"] == 1.0


def test_seed000__extra_calls__do_not_lower_call_accuracy_and_pass_under_superset() -> None:
    c = case(expect=[expected("getWeather", {"city": "Berlin"})], tools=WEATHER_TOOLS)
    r = run([call("getWeather", {"city": "Berlin"}), call("getTime", {"tz": "CET"})])
    s = _score(c, r, default_order=OrderMode.SUPERSET)
    assert s.scores["call_accuracy"] == 1.0
    assert s.scores["tool_selection_precision"] == 0.5
    assert s.scores["trajectory_match"] == 1.0
    assert s.passed


def test_seed000__extra_calls__fail_the_default_unordered_case_but_not_call_accuracy() -> None:
    c = case(expect=[expected("getWeather", {"city": "Berlin"})], tools=WEATHER_TOOLS)
    r = run([call("getWeather", {"city": "Berlin"}), call("getTime", {"tz": "CET"})])
    s = _score(c, r)
    assert s.scores["call_accuracy"] == 1.0
    assert s.scores["trajectory_match"] == 0.0
    assert not s.passed
    assert s.failed_checks == ("order",)
    assert evidence_json(s.evidence)["extra"] == [{"index": 1, "name": "getTime"}]


def _refund_calls(*names: str):  # type: ignore[no-untyped-def]
    return [call(n, {"orderId": "12345"}) for n in names]


def test_seed001__same_three_calls__iou_one() -> None:
    names = ("GetOrder", "CancelOrder", "IssueRefund")
    c = case(expect=[expected(n, {"orderId": "12345"}) for n in names])
    s = _score(c, run(*[[x] for x in _refund_calls(*names)]))
    assert s.scores["tool_set_iou"] == 1.0


def test_seed001__missing_refund__iou_two_thirds_and_reason_names_it() -> None:
    names = ("GetOrder", "CancelOrder", "IssueRefund")
    c = case(expect=[expected(n, {"orderId": "12345"}) for n in names])
    s = _score(c, run(*[[x] for x in _refund_calls("GetOrder", "CancelOrder")]))
    assert s.scores["tool_set_iou"] == pytest.approx(2 / 3)
    assert round(s.scores["tool_set_iou"] or 0, 2) == 0.67
    assert "IssueRefund" in s.reasons["tool_set_iou"]
    assert not s.passed


def test_seed001__order_matters_option__reversed_order_lowers_iou() -> None:
    names = ("GetOrder", "CancelOrder", "IssueRefund")
    c = case(expect=[expected(n, {"orderId": "12345"}) for n in names])
    r = run(*[[x] for x in _refund_calls("IssueRefund", "CancelOrder", "GetOrder")])
    assert _score(c, r).scores["tool_set_iou"] == 1.0
    assert _score(c, r, order_matters_for_iou=True).scores["tool_set_iou"] == pytest.approx(1 / 3)


def test_seed002__name_only_match__partial_credit_half_with_reason() -> None:
    c = case(expect=[expected("get_weather", {"city": "Paris", "units": "celsius"})])
    s = _score(c, run([call("get_weather", {"city": "Paris"})]))
    assert s.scores["partial_credit_accuracy"] == 0.5
    assert s.reasons["partial_credit_accuracy"] == "0 exact, 1 name-only; 1 expected, 1 actual"
    diffs = evidence_json(s.evidence)["arg_diffs"][0]["diffs"]
    assert diffs == [{"argument": "units", "expected": "celsius", "why": "missing"}]


def test_seed002__reason_counts_exact_name_only_and_lengths() -> None:
    c = case(
        expect=[
            expected("a", {"x": 1}),
            expected("b", {"x": 1}),
            expected("c", {"x": 1}),
        ]
    )
    r = run([call("a", {"x": 1}), call("b", {"x": 1}), call("c", {"x": 2}), call("d", {})])
    s = _score(c, r)
    assert evidence_json(s.evidence)["summary"] == "2 exact, 1 name-only; 3 expected, 4 actual"
    assert s.scores["partial_credit_accuracy"] == pytest.approx(2.5 / 4)


def test_seed003__extra_optional_arg__required_args_match_passes() -> None:
    c = case(expect=[expected("get_order", {"order_id": "12345"})])
    s = _score(c, run([call("get_order", {"order_id": "12345", "include_history": False})]))
    assert s.scores["required_args_match"] == 1.0
    assert s.passed


def test_seed003__calendar_and_reminders__precision_one_recall_half() -> None:
    c = case(expect=[expected("get_calendar_events"), expected("create_reminder")])
    s = _score(c, run([call("get_calendar_events", {"range": "next week"})]))
    assert s.scores["tool_selection_precision"] == 1.0
    assert s.scores["tool_selection_recall"] == 0.5
    assert s.scores["tool_selection_f1"] == pytest.approx(2 / 3)


def test_seed003__retry_loop__passes_set_comparison_fails_duplicates_and_strict() -> None:
    loop = [[call("search", {"q": "refund policy"})] for _ in range(4)]
    c = case(expect=[expected("search", {"q": "refund policy"})], order="strict")
    s = _score(c, run(*loop))
    assert s.scores["tool_set_iou"] == 1.0  # a set comparison sees a clean run
    assert s.scores["duplicate_calls"] == 3.0
    assert s.scores["trajectory_match"] == 0.0
    assert not s.passed


def test_seed003__no_tool_case__unnecessary_call_tallied_for_pooling() -> None:
    c = case(no_tool=True, tools=[tool("search")])
    s = _score(c, run([call("search", {"q": "x"})], [call("search", {"q": "y"})]))
    assert s.scores["no_tool_respected"] == 0.0
    assert s.scores["call_accuracy"] is None
    assert s.scores["required_args_match"] is None
    assert (
        tallies_json(s.tallies)["calls_on_no_tool"] == 2 and tallies_json(s.tallies)["calls"] == 2
    )
    assert s.failed_checks == ("order", "no_tool")


def test_seed004__wrong_id_is_schema_valid_but_fails_required_args() -> None:
    c = case(
        expect=[expected("lookup_order", {"order_id": "ord_7281"})],
        tools=[tool("lookup_order", SEED_004_SCHEMA)],
    )
    s = _score(c, run([call("lookup_order", {"order_id": "ord_7282"})]))
    assert s.scores["schema_validity"] == 1.0
    assert s.scores["required_args_match"] == 0.0
    assert evidence_json(s.evidence)["arg_diffs"][0]["diffs"][0]["argument"] == "order_id"


def test_seed004__undeclared_field_fails_schema_validity() -> None:
    c = case(
        expect=[expected("lookup_order", {"order_id": "ord_7281"})],
        tools=[tool("lookup_order", SEED_004_SCHEMA)],
    )
    s = _score(c, run([call("lookup_order", {"order_id": "ord_7281", "customer_email": "a@b.c"})]))
    assert s.scores["schema_validity"] == 0.0
    assert evidence_json(s.evidence)["malformed"][0]["kind"] == "SchemaMismatch"
    assert "customer_email" in evidence_json(s.evidence)["malformed"][0]["detail"]
    assert s.failed_checks == ("schema_valid",)


def test_seed004__string_for_boolean_fails_schema_validity() -> None:
    c = case(
        expect=[expected("lookup_order", {"order_id": "ord_7281"})],
        tools=[tool("lookup_order", SEED_004_SCHEMA)],
    )
    s = _score(c, run([call("lookup_order", {"order_id": "ord_7281", "include_items": "yes"})]))
    assert s.scores["schema_validity"] == 0.0
    assert "boolean" in evidence_json(s.evidence)["malformed"][0]["detail"]


def test_seed004__malformed_classes_are_counted() -> None:
    c = case(
        expect=[expected("lookup_order", {"order_id": "ord_7281"})],
        tools=[tool("lookup_order", SEED_004_SCHEMA)],
    )
    r = run(
        [
            call("lookup_order", '{"order_id": "ord_7281"'),
            call("lookup_orders", {"order_id": "ord_7281"}),
            call("lookup_order", {}),
        ]
    )
    s = _score(c, r)
    assert tallies_json(s.tallies)["malformed"] == {
        "InvalidJson": 1,
        "UnknownName": 1,
        "SchemaMismatch": 1,
    }
    assert s.scores["malformed_call_rate"] == 1.0
    assert s.scores["parse_failure_rate"] == pytest.approx(1 / 3)
    # The parse failure still named the right tool: it is not a wrong-tool miss.
    assert s.scores["tool_selection_recall"] == 1.0
