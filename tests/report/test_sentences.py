"""Plain sentences for failing checks, and calls with only what differs in full."""

from __future__ import annotations

from typing import Any

from gate.report.escape import Escaper
from gate.report.markdown import render_sentence
from gate.report.sentences import check_sentences, elided_calls, error_summary
from gate.results import SampleResult


def _sample(checks: list[str], ev: dict[str, Any], error: str | None = None) -> SampleResult:
    return SampleResult(
        sample=0, passed=False, scores=[], failed_checks=checks, evidence=ev, error=error
    )


def _text(sample: SampleResult) -> list[str]:
    esc = Escaper(limit=400)
    return [render_sentence(s, esc, 400, full=True) for _, s in check_sentences(sample)]


ORDER_ONLY = {
    "expected": [
        {"name": "send_email", "args": {"to": "a@example.com"}},
        {"name": "create_event", "args": {"title": "x"}},
    ],
    "actual": [
        {"name": "create_event", "arguments": {"title": "x"}},
        {"name": "send_email", "arguments": {"to": "a@example.com"}},
    ],
    "matched": [[0, 1], [1, 0]],
    "missing": [],
    "extra": [],
    "summary": "2 exact, 0 name-only; 2 expected, 2 actual",
}


def test_sentences__order_only_regression__says_which_call_came_first() -> None:
    assert _text(_sample(["order"], ORDER_ONLY)) == [
        "`create_event` came before `send_email`; this case expects `send_email` first"
    ]


def test_sentences__order_only__no_counting_jargon() -> None:
    assert not any("exact" in t for t in _text(_sample(["order"], ORDER_ONLY)))


def test_sentences__forbidden_and_missing__forbidden_call_first() -> None:
    ev = {
        "expected": [{"name": "deactivate_account", "args": {"email": "h@example.com"}}],
        "actual": [{"name": "delete_account", "arguments": {"email": "h@example.com"}}],
        "missing": [{"index": 0, "name": "deactivate_account", "why": "not called"}],
        "extra": [{"index": 0, "name": "delete_account"}],
        "violations": [{"rule": "must_not_call", "index": 0, "name": "delete_account"}],
    }
    text = _text(_sample(["calls_matched", "must_not_call"], ev))
    assert text[0] == (
        'called `delete_account(email="h@example.com")`, which this case must not call'
    )
    assert text[1] == "`deactivate_account` not called"


def test_sentences__differing_argument__both_values_in_full() -> None:
    ev = {
        "arg_diffs": [
            {
                "tool": "update_shipping_address",
                "diffs": [{"argument": "address.country", "expected": "GB", "actual": "UK"}],
            }
        ],
        "missing": [{"index": 0, "name": "update_shipping_address", "why": "differs"}],
    }
    assert _text(_sample(["calls_matched"], ev)) == [
        '`update_shipping_address` was called with `address.country="UK"`; '
        'this case expects `address.country="GB"`'
    ]


def test_elided_calls__matched_calls__shown_as_name_only_rest_in_full() -> None:
    long_reason = "x" * 300
    ev = {
        "expected": [
            {"name": "verify_identity", "args": {"email": "f@example.com"}},
            {"name": "issue_refund", "args": {"amount": 210.0}},
        ],
        "actual": [
            {"name": "issue_refund", "arguments": {"amount": 210.0}},
            {"name": "escalate", "arguments": {"reason": long_reason}},
        ],
        "matched": [[1, 0]],
    }
    exp, act = elided_calls(ev)
    assert exp == 'verify_identity(email="f@example.com"), issue_refund(…)'
    assert act == f'issue_refund(…), escalate(reason="{long_reason}")'


def test_error_summary__stderr_tail__first_line_and_last_stderr_lines() -> None:
    err = "agent exited with code 1\n--- stderr (last lines) ---\na\nb\nc\nModuleNotFoundError: x"
    assert error_summary(err) == "agent exited with code 1 · b · c · ModuleNotFoundError: x"
