"""The expression evaluator the workflow tests run steps with (tests/action/expressions.py),
against what GitHub documents for the forms ToolGate's workflows use."""

from __future__ import annotations

import pytest

from tests.action.expressions import evaluate, render, step_runs

CTX = {
    "github": {"event_name": "push"},
    "steps": {"toolgate": {"outputs": {"results-path": "toolgate-out/results.json"}}},
}
FAIL_ON = (
    "${{ (github.event_name == 'push' || github.event_name == 'workflow_dispatch') "
    "&& 'never' || 'gate' }}"
)


@pytest.mark.parametrize(
    ("event", "want"),
    [("push", "never"), ("workflow_dispatch", "never"), ("pull_request", "gate")],
)
def test_and_or_idiom__returns_an_operand(event, want):
    assert render(FAIL_ON, {**CTX, "github": {"event_name": event}}) == want


@pytest.mark.parametrize(
    ("expr", "want"),
    [
        ("github.event_name == 'PUSH'", True),  # strings compare case-insensitively
        ("github.event_name != 'push'", False),
        ("steps.toolgate.outputs.results-path != ''", True),
        ("steps.other.outputs.x", None),
        ("!cancelled()", True),
        ("'it''s'", "it's"),
        ("1 == 1", True),
        ("null || 'x'", "x"),
        ("'' && 'x'", ""),
    ],
)
def test_expressions__values(expr, want):
    assert evaluate(expr, CTX) == want


def test_step_if__always_runs_after_a_failure_success_does_not():
    step = {"if": "${{ always() && steps.toolgate.outputs.results-path != '' }}"}
    assert step_runs(step, CTX, "failure")
    assert not step_runs({}, CTX, "failure")
    assert step_runs({}, CTX, "success")


def test_unreadable_expression__refused():
    with pytest.raises(ValueError):
        evaluate("github.event_name === 'push'", CTX)
