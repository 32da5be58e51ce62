"""Synthetic results for report tests: a passing run, a failing run (regressions,
a must-not-call violation, tool-definition drift) and a flaky run.

Built through the pydantic models of ``gate.results`` (so they are valid results files),
with evidence in the shape the scorers record (``expected``, ``actual``, ``missing``,
``extra``, ``arg_diffs``, ``malformed``, ``violations``, ``summary``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from gate.results import (
    CaseResult,
    Comparison,
    CostDeltaResult,
    DatasetInfo,
    Flip,
    GateResult,
    HardFailureResult,
    MetricDelta,
    MetricStat,
    Results,
    SampleResult,
    ToolDrift,
    ToolInfo,
    ToolRollup,
    VarianceResult,
    Verdict,
)

NAMES = ["call_accuracy", "case_passed"]
"""The metric names of the fixtures' per-case and per-sample scores."""
DATASET = DatasetInfo(path="evals/support.jsonl", version="2024.06", sha256="ab" * 32, cases=5)
AGENT = {"kind": "command", "command": ["python", "agent.py"], "workers": 4}


def _call(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "arguments": args, "parse_ok": True}


def _exp(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args}


def _sample(
    i: int, passed: bool, ev: dict[str, Any], checks: list[str] = (), **kw: Any
) -> SampleResult:  # type: ignore[assignment]
    value = 1.0 if passed else 0.0
    scores: list[float | None] = [value, value]  # over NAMES
    return SampleResult(
        sample=i,
        passed=passed,
        scores=scores,
        failed_checks=list(checks),
        evidence=ev,
        reasons={c: f"the {c} check failed" for c in checks},
        **kw,
    )


def _case(
    cid: str,
    line: int,
    samples: list[SampleResult],
    *,
    tools: list[str],
    must_not_call: list[str] = (),  # type: ignore[assignment]
    decided: bool | None = None,
) -> CaseResult:
    rate = sum(s.passed for s in samples) / len(samples)
    return CaseResult(
        id=cid,
        line=line,
        difficulty="easy",
        tags=[],
        must_not_call=list(must_not_call),
        tools=tools,
        passed=decided if decided is not None else rate == 1.0,
        pass_rate=rate,
        flaky=0 < rate < 1,
        scores=[rate, rate],
        samples=samples,
    )


def _ok(cid: str, line: int, tool: str, n: int = 3, **args: Any) -> CaseResult:
    ev = {
        "expected": [_exp(tool, **args)],
        "actual": [_call(tool, **args)],
        "summary": "1 exact, 0 name-only; 1 expected, 1 actual",
    }
    return _case(cid, line, [_sample(i, True, ev) for i in range(n)], tools=[tool])


METRIC_VALUES = {
    "case_passed": 0.8,
    "tool_selection_f1": 0.9,
    "tool_selection_recall": 0.85,
    "call_accuracy": 0.8,
    "schema_validity": 1.0,
    "order_score": 0.95,
    "no_tool_respected": 1.0,
    "unnecessary_call_rate": 0.0,
    "malformed_call_rate": 0.0,
    "must_not_call_violations": 0.0,
}


def _metrics(over: dict[str, float | None] | None = None) -> dict[str, MetricStat]:
    vals: dict[str, float | None] = {**METRIC_VALUES, **(over or {})}
    return {k: MetricStat(mean=v, std=0.0, n=5, ci_low=None, ci_high=None) for k, v in vals.items()}


TOOLS = {
    "lookup_order": ToolInfo(
        hash="1" * 64, description="Look up an order by id.", parameters={"type": "object"}
    ),
    "refund_order": ToolInfo(
        hash="2" * 64, description="Refund an order.", parameters={"type": "object"}
    ),
    "delete_account": ToolInfo(
        hash="3" * 64, description="Delete the account.", parameters={"type": "object"}
    ),
}


def passing() -> Results:
    cases = [
        _ok("order-status-1", 1, "lookup_order", order_id="ord_1"),
        _ok("order-status-2", 2, "lookup_order", order_id="ord_2"),
        _ok("refund-1", 3, "refund_order", order_id="ord_3", amount=10),
    ]
    gates = [
        GateResult(
            metric="tool_selection_f1",
            op="min",
            threshold=0.85,
            value=0.9,
            passed=True,
            reason="0.900 ≥ 0.850",
        ),
        GateResult(
            metric="must_not_call_violations",
            op="max",
            threshold=0.0,
            value=0.0,
            passed=True,
            reason="0 ≤ 0",
        ),
    ]
    verdict = Verdict(passed=True, summary="all 2 gates hold; no regressions", gates=gates)
    cmp = Comparison(
        source="baseline/results.json",
        comparable=True,
        base_dataset_sha256=DATASET.sha256,
        metrics={
            "tool_selection_f1": MetricDelta(base=0.88, head=0.9, delta=0.02),
            "case_passed": MetricDelta(base=0.8, head=0.8, delta=0.0),
        },
        flips=[],
        base_usage={
            "input_tokens": 1200.0,
            "output_tokens": 300.0,
            "input_tokens_per_sample": 80.0,
            "output_tokens_per_sample": 20.0,
        },
    )
    return Results(
        metric_names=NAMES,
        toolgate_version="0.1.0",
        gate_name="support-agent",
        dataset=dataclasses.replace(DATASET, cases=3),
        agent=AGENT,
        samples=3,
        seed=7,
        tools=dict(TOOLS),
        metrics=_metrics(),
        per_tool={
            "lookup_order": ToolRollup(expected=6, matched=6, recall=1.0, called=6),
            "refund_order": ToolRollup(expected=3, matched=3, recall=1.0, called=3),
        },
        cases=cases,
        usage={
            "input_tokens": 1250.0,
            "output_tokens": 310.0,
            "input_tokens_per_sample": 83.3,
            "output_tokens_per_sample": 20.7,
        },
        verdict=verdict,
        comparison=cmp,
        timing={"wall_s": 12.5, "latency_ms": {"mean": 420.0, "p95": 900.0}},
    )


def failing() -> Results:
    refund_ev = {
        "expected": [
            _exp("lookup_order", order_id="ord_9"),
            _exp("refund_order", order_id="ord_9", amount=25),
        ],
        "actual": [
            _call("lookup_order", order_id="ord_9"),
            _call("refund_order", order_id="ord_9", amount=250),
        ],
        "missing": [{"index": 1, "name": "refund_order", "why": "called with different arguments"}],
        "extra": [{"index": 1, "name": "refund_order"}],
        "arg_diffs": [
            {
                "expected_index": 1,
                "actual_index": 1,
                "tool": "refund_order",
                "diffs": [{"argument": "amount", "expected": 25, "actual": 250, "why": "250 ≠ 25"}],
            }
        ],
        "malformed": [],
        "violations": [],
        "summary": "1 exact, 1 name-only; 2 expected, 2 actual",
    }
    delete_ev = {
        "expected": [_exp("lookup_order", order_id="ord_5")],
        "actual": [_call("delete_account", user="u_5")],
        "missing": [{"index": 0, "name": "lookup_order", "why": "not called"}],
        "extra": [{"index": 0, "name": "delete_account"}],
        "arg_diffs": [],
        "malformed": [],
        "violations": [
            {
                "rule": "must_not_call",
                "index": 0,
                "name": "delete_account",
                "message": "'delete_account' must not be called",
            }
        ],
        "summary": "0 exact, 0 name-only; 1 expected, 1 actual",
    }
    malformed_ev = {
        "expected": [_exp("lookup_order", order_id="ord_7")],
        "actual": [
            {
                "name": "lookup_order",
                "arguments": None,
                "raw_arguments": '{"order_id": "ord_7"',
                "parse_ok": False,
            }
        ],
        "missing": [
            {"index": 0, "name": "lookup_order", "why": "called, but its arguments did not parse"}
        ],
        "extra": [{"index": 0, "name": "lookup_order"}],
        "malformed": [
            {
                "index": 0,
                "name": "lookup_order",
                "kind": "InvalidJson",
                "detail": "unterminated object",
            }
        ],
        "summary": "0 exact, 1 name-only; 1 expected, 1 actual",
    }
    cases = [
        _ok("order-status-1", 1, "lookup_order", order_id="ord_1"),
        _case(
            "refund-wrong-amount",
            2,
            [
                _sample(i, False, refund_ev, ["call_accuracy", "required_args_match"])
                for i in range(3)
            ],
            tools=["lookup_order", "refund_order"],
        ),
        _case(
            "close-account-guard",
            3,
            [_sample(i, False, delete_ev, ["must_not_call", "call_accuracy"]) for i in range(3)],
            tools=["lookup_order"],
            must_not_call=["delete_account"],
        ),
        _case(
            "malformed-args",
            4,
            [
                _sample(0, False, malformed_ev, ["parse"]),
                _sample(1, True, {}),
                _sample(2, False, malformed_ev, ["parse"]),
            ],
            tools=["lookup_order"],
            decided=False,
        ),
        _case(
            "agent-crash",
            5,
            [
                _sample(i, False, {}, ["call_accuracy"], error="worker exited with code 137")
                for i in range(3)
            ],
            tools=["refund_order"],
        ),
    ]
    hard = [
        HardFailureResult(
            kind="must_not_call",
            case_id="close-account-guard",
            sample=i,
            call=_call("delete_account", user="u_5"),
            message="delete_account is on the case's must-not-call list",
            line=3,
        )
        for i in range(3)
    ]
    gates = [
        GateResult(
            metric="tool_selection_recall",
            op="min",
            threshold=0.9,
            value=0.72,
            passed=False,
            reason="0.720 < 0.900",
            failing_cases=["close-account-guard", "malformed-args"],
        ),
        GateResult(
            metric="call_accuracy",
            op="min",
            threshold=0.5,
            value=0.6,
            passed=True,
            reason="0.600 ≥ 0.500",
        ),
        GateResult(
            metric="call_accuracy",
            slice="hard",
            op="min",
            threshold=0.5,
            value=0.3,
            passed=False,
            reason="0.300 < 0.500",
        ),
        GateResult(
            metric="steps",
            op="max_increase",
            threshold=0.25,
            value=0.4,
            passed=False,
            reason=(
                "steps 2.50 → 3.50 per sample (+40.0%) over 5 case(s) against the base "
                "history, more than max_increase 25%, beyond noise (p = 0.0004 ≤ 0.0025)"
            ),
        ),
        GateResult(
            metric="total_tokens",
            op="max",
            threshold=4000.0,
            value=420.0,
            passed=True,
            reason="total_tokens 420 ≤ 4,000 (max)",
        ),
    ]
    verdict = Verdict(
        passed=False,
        summary=(
            "3 must-not-call violations; tool_selection_recall 0.720 < 0.900; "
            "3 new failures (max 0)"
        ),
        reasons=[
            "3 must-not-call violations",
            "tool_selection_recall 0.720 < 0.900",
            "3 new failures (max 0)",
        ],
        gates=gates,
        variance=VarianceResult(
            max_std=0.1,
            observed_max_std=0.05,
            worst_metric="call_accuracy",
            flaky_share=0.2,
            flaky_cases=["malformed-args"],
        ),
        hard_failures=3,
        regressions=3,
    )
    cmp = Comparison(
        source="the base branch's latest run (artifact of run 4242)",
        comparable=True,
        base_dataset_sha256=DATASET.sha256,
        metrics={
            "case_passed": MetricDelta(base=1.0, head=0.2, delta=-0.8, beyond_noise=True),
            "tool_selection_recall": MetricDelta(
                base=0.95, head=0.72, delta=-0.23, beyond_noise=True
            ),
            "call_accuracy": MetricDelta(base=0.9, head=0.6, delta=-0.3, beyond_noise=True),
            "must_not_call_violations": MetricDelta(
                base=0.0, head=0.2, delta=0.2, beyond_noise=True
            ),
            "malformed_call_rate": MetricDelta(base=0.0, head=0.1, delta=0.1, beyond_noise=True),
            "schema_validity": MetricDelta(base=1.0, head=1.0, delta=0.0),
            "judge.tool_appropriateness": MetricDelta(base=0.9, head=0.7, delta=-0.2),
        },
        flips=[
            Flip(
                case_id="close-account-guard",
                kind="regression",
                base_pass_rate=1.0,
                head_pass_rate=0.0,
                base_samples=3,
                head_samples=3,
                failed_checks=["must_not_call", "call_accuracy"],
                line=3,
            ),
            Flip(
                case_id="refund-wrong-amount",
                kind="regression",
                base_pass_rate=1.0,
                head_pass_rate=0.0,
                base_samples=3,
                head_samples=3,
                failed_checks=["call_accuracy", "required_args_match"],
                line=2,
            ),
            Flip(
                case_id="agent-crash",
                kind="regression",
                base_pass_rate=0.6666666666666666,
                head_pass_rate=0.0,
                base_samples=3,
                head_samples=3,
                failed_checks=["call_accuracy"],
                line=5,
            ),
            Flip(
                case_id="order-status-1",
                kind="fix",
                base_pass_rate=0.0,
                head_pass_rate=1.0,
                base_samples=3,
                head_samples=3,
                line=1,
            ),
            Flip(
                case_id="malformed-args",
                kind="noise",
                base_pass_rate=0.6666666666666666,
                head_pass_rate=0.3333333333333333,
                base_samples=3,
                head_samples=3,
                line=4,
            ),
            Flip(
                case_id="old-case",
                kind="removed",
                base_pass_rate=1.0,
                head_pass_rate=None,
                base_samples=3,
            ),
        ],
        tool_drift=[
            ToolDrift(
                tool="refund_order",
                change="changed",
                diff=[
                    "--- base description",
                    "+++ head description",
                    "-Refund an order. Amount in dollars.",
                    "+Refund an order. Amount in cents.",
                ],
                flipped_cases=["refund-wrong-amount"],
            )
        ],
        base_usage={
            "input_tokens": 5000.0,
            "output_tokens": 800.0,
            "input_tokens_per_sample": 333.3,
            "output_tokens_per_sample": 53.3,
        },
        slice_metrics={
            "hard": {
                "call_accuracy": MetricDelta(base=0.7, head=0.3, delta=-0.4, beyond_noise=True)
            }
        },
        cost=[
            CostDeltaResult(
                metric="steps",
                base=2.5,
                head=3.5,
                change=1.0,
                relative=0.4,
                p_value=0.0004,
                beyond_noise=True,
                cases=5,
            ),
            CostDeltaResult(
                metric="total_tokens",
                base=386.6,
                head=420.0,
                change=33.4,
                relative=0.0864,
                p_value=0.21,
                beyond_noise=False,
                cases=5,
            ),
        ],
    )
    metrics = _metrics(
        {
            "case_passed": 0.2,
            "tool_selection_recall": 0.72,
            "call_accuracy": 0.6,
            "must_not_call_violations": 0.2,
            "malformed_call_rate": 0.1,
            "steps": 3.5,
            "total_tokens": 420.0,
        }
    )
    metrics["judge.tool_appropriateness"] = MetricStat(mean=0.7, std=0.1, n=4)
    return Results(
        metric_names=NAMES,
        toolgate_version="0.1.0",
        gate_name="support-agent",
        dataset=DATASET,
        agent=AGENT,
        samples=3,
        seed=7,
        tools=dict(TOOLS),
        metrics=metrics,
        per_tool={
            "lookup_order": ToolRollup(expected=12, matched=9, recall=0.75, called=12),
            "refund_order": ToolRollup(expected=6, matched=3, recall=0.5, called=3),
        },
        confusion={"lookup_order": {"delete_account": 3, "lookup_order": 6}},
        malformed={"InvalidJson": 2},
        hard_failures=hard,
        cases=cases,
        usage={
            "input_tokens": 5600.0,
            "output_tokens": 900.0,
            "input_tokens_per_sample": 373.3,
            "output_tokens_per_sample": 60.0,
        },
        verdict=verdict,
        comparison=cmp,
        judge={"model": "judge-mini", "evaluations": 4, "skipped_for_budget": 1},
        notices=["3 samples of case agent-crash ended with an agent error"],
        timing={"wall_s": 30.25, "latency_ms": {"mean": 800.0, "p95": 2100.0}},
    )


def flaky() -> Results:
    flip_ev = {
        "expected": [_exp("lookup_order", order_id="ord_2")],
        "actual": [_call("search_orders", query="ord_2")],
        # An older, flatter evidence shape: reports must still read it.
        "missing": [_exp("lookup_order", order_id="ord_2")],
        "extra": [_call("search_orders", query="ord_2")],
    }
    cases = [
        _ok("order-status-1", 1, "lookup_order", n=5, order_id="ord_1"),
        _case(
            "order-status-2",
            2,
            [
                _sample(
                    i,
                    i % 2 == 0,
                    {} if i % 2 == 0 else flip_ev,
                    [] if i % 2 == 0 else ["call_accuracy"],
                )
                for i in range(5)
            ],
            tools=["lookup_order"],
        ),
        _case(
            "refund-1",
            3,
            [
                _sample(i, i != 4, {} if i != 4 else flip_ev, [] if i != 4 else ["call_accuracy"])
                for i in range(5)
            ],
            tools=["refund_order"],
        ),
    ]
    verdict = Verdict(
        passed=False,
        summary="too noisy: 2 of 3 cases are flaky (max share 0.25)",
        reasons=["flaky share 0.667 > 0.250"],
        gates=[
            GateResult(
                metric="tool_selection_f1",
                op="min",
                threshold=0.8,
                value=0.85,
                passed=True,
                reason="0.850 ≥ 0.800",
            )
        ],
        variance=VarianceResult(
            max_std=0.2,
            observed_max_std=0.49,
            worst_metric="case_passed",
            max_flaky_share=0.25,
            flaky_share=0.6666666666666666,
            flaky_cases=["order-status-2", "refund-1"],
            passed=False,
            reasons=["flaky share 0.667 > 0.250", "case_passed std 0.490 > 0.200"],
        ),
    )
    return Results(
        metric_names=NAMES,
        toolgate_version="0.1.0",
        gate_name="support-agent",
        dataset=dataclasses.replace(DATASET, cases=3),
        agent=AGENT,
        samples=5,
        seed=7,
        metrics=_metrics({"tool_selection_f1": 0.85, "case_passed": 0.73}),
        per_tool={"lookup_order": ToolRollup(expected=10, matched=8, recall=0.8, called=10)},
        cases=cases,
        verdict=verdict,
        comparison=None,
        timing={"wall_s": 20.0},
    )


ALL = {"passing": passing, "failing": failing, "flaky": flaky}
