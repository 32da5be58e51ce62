"""gate.policy.validity: missing samples and the verdict "error", on typed outcomes."""

from __future__ import annotations

from gate.policy.validity import SampleOutcome, assess, missing


def _o(case: str, sample: int, error: str | None, **kw: object) -> SampleOutcome:
    return SampleOutcome(case, sample, error, **kw)  # type: ignore[arg-type]


def test_missing__infrastructure_errors_only__counted_by_case_and_reason() -> None:
    gone = missing(
        [
            _o("a", 0, None),
            _o("a", 1, "http: gave up after 3 attempt(s); last: HTTP 500: x"),
            _o("b", 0, "crash: the worker exited with code 1 (step 1) [pid 5]"),
            _o("b", 1, "deadline: not started: the global deadline passed"),
            _o("c", 0, "payload: the response body is not JSON"),
        ]
    )
    assert gone.planned == 5 and gone.count == 2
    assert dict(gone.per_case) == {"a": 1, "b": 1}
    assert dict(gone.by_reason) == {"deadline": 1, "http": 1}
    assert gone.is_missing("a", 1) and not gone.is_missing("b", 0)


def test_missing__hard_failure_recorded_before_the_endpoint_failed__not_missing() -> None:
    gone = missing([_o("a", 0, "http: gave up", hard_failure=True), _o("a", 1, None)])
    assert gone.count == 0


def test_assess__any_missing_with_default_threshold__run_invalid() -> None:
    _, invalid = assess([_o("a", 0, None), _o("a", 1, "http: HTTP 503")])
    assert invalid is not None and "1 of 2 case-sample(s) are missing (http: 1)" in invalid.reason


def test_assess__missing_within_threshold__run_valid() -> None:
    gone, invalid = assess([_o("a", 0, None), _o("a", 1, "http: HTTP 503")], max_missing=0.5)
    assert invalid is None and gone.count == 1


def test_assess__every_sample_crashed_the_same_way__invalid_with_the_stderr_lines() -> None:
    err = "crash: the worker exited with code {n} before answering (step 1) [pid {p}]\n" + (
        "--- stderr (last lines) ---\nError: Cannot find module '/app/agent.js'"
    )
    outcomes = [_o(c, s, err.format(n=1, p=100 + s)) for c in "abc" for s in range(2)]
    _, invalid = assess(outcomes)
    assert invalid is not None and "failed the same way" in invalid.reason
    assert "Error: Cannot find module '/app/agent.js'" in invalid.first_errors


def test_assess__every_sample_failed_after_calls__model_failure_not_invalid() -> None:
    err = "crash: the worker exited with code 1 (step 2) [pid 7]"
    _, invalid = assess([_o("a", 0, err, calls=1), _o("a", 1, err, calls=1)])
    assert invalid is None


def test_assess__every_sample_over_the_step_budget__the_models_answer_not_invalid() -> None:
    err = "step_budget: the agent asked for tool-calling turn 4 with a step budget of 3"
    _, invalid = assess([_o("a", 0, err), _o("b", 0, err)])
    assert invalid is None


def test_assess__failures_that_differ__not_invalid() -> None:
    _, invalid = assess([_o("a", 0, "crash: code 1"), _o("b", 0, "timeout: no answer")])
    assert invalid is None
