"""run_judge end to end against a real chat-completions server on 127.0.0.1."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from gate import jsonio
from gate.errors import CalibrationError, ConfigError
from gate.judge import run_judge
from gate.judge.agreement import cohen_kappa
from gate.results import Verdict
from tests.judge.helpers import (
    answer,
    honest_judge,
    results,
    rubric_of,
    standard,
    user_text,
    write_config,
)
from tests.servers.openai_server import FakeOpenAIServer, Response, chat_completion
from tests.servers.openai_server import openai_server as openai_server  # fixture

ALL = ["tool_appropriateness", "argument_fidelity", "error_handling"]
ENV = {"JUDGE_KEY": "sk-test-secret-123"}


def judge_cfg(srv: FakeOpenAIServer, **over: Any) -> dict[str, Any]:
    cfg: dict[str, Any] = {
        "model": "judge-1",
        "base_url": srv.base_url,
        "api_key_env": "JUDGE_KEY",
        "rubrics": ALL,
        "max_retries": 1,
        "timeout_s": 5,
        "price_per_1k_tokens": 0.5,
    }
    cfg.update(over)
    return cfg


def no_sleep(_s: float) -> None:
    return None


def test_run_judge__scripted_verdicts__scores_labels_reasons_and_cost(
    openai_server, tmp_path: Path
) -> None:
    srv = openai_server(honest_judge)
    config = write_config(tmp_path, judge_cfg(srv))
    dataset, runs = standard()
    block = run_judge(
        config,
        dataset,
        runs,
        tmp_path / "out",
        timing=results().timing,
        environ=ENV,
        sleep=no_sleep,
    )

    assert block["status"] == "ok"
    assert block["gating"] is False
    assert block["notices"] == []
    ta = block["rubrics"]["tool_appropriateness"]
    assert (ta["n"], ta["mean"], ta["labels"]["appropriate"], ta["eligible"]) == (4, 1.0, 4, 4)
    assert ta["metric"] == "judge.tool_appropriateness"
    af = block["rubrics"]["argument_fidelity"]
    # Automatic free text: only the 5-word search query (not "en", a pattern id or an enum).
    assert (af["eligible"], af["n"], af["mean"]) == (1, 1, 1.0)
    eh = block["rubrics"]["error_handling"]
    assert (eh["n"], eh["mean"], eh["labels"]["fabricated"]) == (1, 0.0, 1)
    assert block["cases"]["error"] == [
        {"sample": 0, "rubric": "tool_appropriateness", "item": "", "status": "ok",
         "label": "appropriate", "score": 1.0, "reason": "the right tool"},
        {"sample": 0, "rubric": "error_handling", "item": "get_order#0", "status": "ok",
         "label": "fabricated", "score": 0.0,
         "reason": "claims a shipment the failed lookup never gave"},
    ]  # fmt: skip
    assert block["cases"]["search"][1]["item"] == "web_search#0.query"
    # 6 calls × 15 tokens (the server's usage) at 0.5 per 1k tokens.
    assert block["tokens"] == {"prompt": 60, "completion": 30, "total": 90, "estimated": False}
    assert block["estimated_cost"] == pytest.approx(0.045)
    assert len(srv.requests) == 6
    # The block is plain JSON data (it goes into results.json as is).
    assert jsonio.loads_strict(jsonio.dumps(block)) == block


def test_run_judge__requests__pinned_temperature_json_mode_key_and_only_needed_data(
    openai_server, tmp_path: Path
) -> None:
    srv = openai_server(honest_judge)
    config = write_config(tmp_path, judge_cfg(srv))
    dataset, runs = standard()
    run_judge(
        config,
        dataset,
        runs,
        tmp_path / "out",
        timing=results().timing,
        environ=ENV,
        sleep=no_sleep,
    )
    for req in srv.requests:
        assert req.path == "/v1/chat/completions"
        assert req.json["temperature"] == 0
        assert req.json["model"] == "judge-1"
        assert req.json["response_format"] == {"type": "json_object"}
        assert req.headers["Authorization"] == "Bearer sk-test-secret-123"
        assert '"label"' in req.json["messages"][0]["content"]
    by_rubric: dict[str, list[str]] = {}
    for req in srv.requests:
        by_rubric.setdefault(rubric_of(req.json), []).append(user_text(req.json))
    weather = next(t for t in by_rubric["tool_appropriateness"] if "Paris" in t)
    # Tool appropriateness sees names and descriptions, not arguments or the answer.
    assert '["get_weather"]' in weather and "Current weather" in weather
    assert "PARIS-FR-75001" not in weather and "18 °C" not in weather
    (fidelity,) = by_rubric["argument_fidelity"]
    assert '"Mars sample return budget news"' in fidelity and '"query"' in fidelity
    assert '"en"' not in fidelity and "get_weather" not in fidelity
    (handling,) = by_rubric["error_handling"]
    assert "HTTP 500 upstream" in handling and "shipped yesterday" in handling
    assert "Where is my order" not in handling


def test_run_judge__malformed_500_and_slow_answers__recorded_never_raised(
    openai_server, tmp_path: Path
) -> None:
    def script(request: Any, index: int) -> Response:
        rubric, text = rubric_of(request), user_text(request)
        if rubric == "tool_appropriateness" and "Thanks" in text:
            return Response(body=chat_completion(content="Sure! I'd say appropriate."))
        if rubric == "tool_appropriateness" and "Mars" in text:
            return Response(body=chat_completion(content='{"label": "superb", "reason": "x"}'))
        if rubric == "argument_fidelity":
            return Response(500, {"error": {"message": "overloaded"}})
        if rubric == "error_handling":
            return Response(
                body=chat_completion(content='{"label":"handed_back","reason":"late"}'), delay_s=3
            )
        return honest_judge(request, index)

    srv = openai_server(script)
    config = write_config(
        tmp_path, judge_cfg(srv, timeout_s=0.4, max_retries=1, max_consecutive_failures=10)
    )
    dataset, runs = standard()
    res = results()
    res.verdict = Verdict(passed=True, summary="passed: all gates held")
    before = res.model_dump(exclude={"timing"})
    started = time.monotonic()
    block = run_judge(
        config, dataset, runs, tmp_path / "out", timing=res.timing, environ=ENV, sleep=no_sleep
    )
    elapsed = time.monotonic() - started

    assert elapsed < 2.5, "the slow answer must be cut at timeout_s (2 attempts × 0.4 s)"
    assert block["status"] == "degraded"
    ta = block["rubrics"]["tool_appropriateness"]
    assert (ta["judged"], ta["n"], ta["unparsable"], ta["mean"]) == (4, 2, 2, 1.0)
    thanks = block["cases"]["thanks"][0]
    assert thanks["status"] == "unparsable" and thanks["raw"] == "Sure! I'd say appropriate."
    assert "label" not in thanks  # never guessed
    mars = block["cases"]["search"][0]
    assert mars["status"] == "unparsable" and "'superb' is not on the scale" in mars["problem"]
    af = block["rubrics"]["argument_fidelity"]
    assert (af["errors"], af["n"], af["mean"]) == (1, 0, None)
    assert "HTTP 500" in block["cases"]["search"][1]["error"]
    eh = block["rubrics"]["error_handling"]
    assert eh["errors"] == 1 and "no answer within 0.4 s" in block["cases"]["error"][1]["error"]
    notices = " | ".join(block["notices"])
    assert "2 judge call(s) failed after retries (1 × HTTP 500, 1 × timeout)" in notices
    assert "2 judge answer(s) were unparsable" in notices
    # 500s and timeouts were retried once each.
    assert sum(1 for r in srv.requests if rubric_of(r.json) == "argument_fidelity") == 2
    # The verdict, and everything else in results, is untouched.
    assert res.model_dump(exclude={"timing"}) == before
    assert res.timing["judge"]["calls"] == 6


def test_run_judge__rerun_over_unchanged_cases__costs_nothing_and_same_block(
    openai_server, tmp_path: Path
) -> None:
    srv = openai_server(honest_judge)
    config = write_config(tmp_path, judge_cfg(srv))
    dataset, runs = standard()
    first_res, second_res = results(), results()
    first = run_judge(
        config,
        dataset,
        runs,
        tmp_path / "out",
        timing=first_res.timing,
        environ=ENV,
        sleep=no_sleep,
    )
    calls = len(srv.requests)
    second = run_judge(
        config,
        dataset,
        runs,
        tmp_path / "out",
        timing=second_res.timing,
        environ=ENV,
        sleep=no_sleep,
    )
    assert len(srv.requests) == calls, "every answer came from the cache"
    assert second == first
    assert first_res.timing["judge"]["tokens_spent"] == 90
    assert second_res.timing["judge"] == {
        **second_res.timing["judge"],
        "calls": 0,
        "cache_hits": 6,
        "tokens_spent": 0,
    }
    assert list((tmp_path / "out" / "judge-cache").rglob("*.json"))


def test_run_judge__changed_argument__only_that_item_asked_again(
    openai_server, tmp_path: Path
) -> None:
    srv = openai_server(honest_judge)
    config = write_config(tmp_path, judge_cfg(srv))
    dataset, runs = standard()
    run_judge(
        config,
        dataset,
        runs,
        tmp_path / "out",
        timing=results().timing,
        environ=ENV,
        sleep=no_sleep,
    )
    calls = len(srv.requests)
    from dataclasses import replace

    from tests.judge.helpers import call

    search = runs[1]
    new_turn = replace(
        search.turns[0], calls=(call("web_search", {"query": "Mars budget cuts 2026 news"}, "s1"),)
    )
    runs[1] = replace(search, turns=(new_turn,))
    run_judge(
        config,
        dataset,
        runs,
        tmp_path / "out",
        timing=results().timing,
        environ=ENV,
        sleep=no_sleep,
    )
    new = [rubric_of(r.json) for r in srv.requests[calls:]]
    # Tool names did not change, so tool appropriateness is cached; the argument is new.
    assert new == ["argument_fidelity"]


def test_run_judge__prompt_reworded__cache_key_changes(openai_server, tmp_path: Path) -> None:
    srv = openai_server(lambda req, i: answer("yes"))
    prompt = tmp_path / "polite.txt"
    prompt.write_text("QUESTION: Is the final answer polite?\nDATA\n{{final}}\n")
    custom = [{"name": "politeness", "prompt_file": "polite.txt", "scale": ["yes", "no"]}]
    config = write_config(tmp_path, judge_cfg(srv, rubrics=[], custom_rubrics=custom))
    dataset, runs = standard()
    run_judge(
        config,
        dataset,
        runs,
        tmp_path / "out",
        timing=results().timing,
        environ=ENV,
        sleep=no_sleep,
    )
    assert len(srv.requests) == 4
    prompt.write_text("QUESTION: Is the final answer courteous?\nDATA\n{{final}}\n")
    config = write_config(tmp_path, judge_cfg(srv, rubrics=[], custom_rubrics=custom))
    run_judge(
        config,
        dataset,
        runs,
        tmp_path / "out",
        timing=results().timing,
        environ=ENV,
        sleep=no_sleep,
    )
    assert len(srv.requests) == 8


def test_run_judge__no_api_key__unavailable_notice_no_requests(
    openai_server, tmp_path: Path
) -> None:
    srv = openai_server(honest_judge)
    config = write_config(tmp_path, judge_cfg(srv))
    dataset, runs = standard()
    block = run_judge(
        config, dataset, runs, tmp_path / "out", timing=results().timing, environ={}, sleep=no_sleep
    )
    assert srv.requests == []
    assert block["status"] == "unavailable"
    assert block["evaluations"]["skipped_unavailable"] == 6
    assert "JUDGE_KEY is not set" in block["notices"][0]
    assert block["rubrics"]["tool_appropriateness"]["mean"] is None


def test_run_judge__endpoint_down__breaker_stops_after_consecutive_failures(
    openai_server, tmp_path: Path
) -> None:
    srv = openai_server([Response(503, {"error": "down"})])
    config = write_config(
        tmp_path, judge_cfg(srv, max_retries=0, max_consecutive_failures=2, concurrency=1)
    )
    dataset, runs = standard()
    block = run_judge(
        config,
        dataset,
        runs,
        tmp_path / "out",
        timing=results().timing,
        environ=ENV,
        sleep=no_sleep,
    )
    assert len(srv.requests) == 2
    assert block["status"] == "unavailable"
    assert block["evaluations"]["errors"] == 2
    assert block["evaluations"]["skipped_unavailable"] == 4
    assert any("taken as down after 2 failed calls" in n for n in block["notices"])


def test_run_judge__unreachable_endpoint__reported_not_raised(tmp_path: Path) -> None:
    config = write_config(
        tmp_path,
        {
            "model": "m",
            "base_url": "http://127.0.0.1:9/v1",
            "api_key_env": "JUDGE_KEY",
            "max_retries": 0,
        },
    )
    dataset, runs = standard()
    block = run_judge(
        config,
        dataset,
        runs,
        tmp_path / "out",
        timing=results().timing,
        environ=ENV,
        sleep=no_sleep,
    )
    assert block["status"] == "unavailable"
    assert "connection" in " ".join(block["notices"])


def test_run_judge__budget__partial_and_deterministic_choice(openai_server, tmp_path: Path) -> None:
    srv = openai_server(honest_judge)
    config = write_config(tmp_path, judge_cfg(srv, max_evaluations=3))
    dataset, runs = standard()
    block = run_judge(
        config, dataset, runs, tmp_path / "a", timing=results().timing, environ=ENV, sleep=no_sleep
    )
    assert block["status"] == "partial"
    ev = block["evaluations"]
    assert (ev["selected"], ev["judged"], ev["skipped_for_budget"], ev["eligible"]) == (3, 3, 3, 6)
    assert sum(r["skipped_for_budget"] for r in block["rubrics"].values()) == 3
    assert any("judge budget reached (max_evaluations: 3)" in n for n in block["notices"])
    again = run_judge(
        config,
        dataset,
        list(reversed(runs)),
        tmp_path / "b",
        timing=results().timing,
        environ=ENV,
        sleep=no_sleep,
    )
    assert again["cases"] == block["cases"]


def test_run_judge__sample_rate__judges_that_share_of_case_samples(
    openai_server, tmp_path: Path
) -> None:
    srv = openai_server(honest_judge)
    config = write_config(tmp_path, judge_cfg(srv, sample=0.5, rubrics=["tool_appropriateness"]))
    dataset, runs = standard()
    block = run_judge(
        config,
        dataset,
        runs,
        tmp_path / "out",
        timing=results().timing,
        environ=ENV,
        sleep=no_sleep,
    )
    assert block["case_samples"] == {"total": 4, "sampled": 2}
    ta = block["rubrics"]["tool_appropriateness"]
    assert (ta["n"], ta["not_sampled"]) == (2, 2)
    assert block["status"] == "ok"  # a sampling rate is a choice, not an outage


def test_run_judge__calibration_file__kappa_next_to_scores(openai_server, tmp_path: Path) -> None:
    srv = openai_server(honest_judge)
    human = [
        {
            "case_id": "weather",
            "sample": 0,
            "rubric": "tool_appropriateness",
            "label": "appropriate",
        },
        {
            "case_id": "thanks",
            "sample": 0,
            "rubric": "tool_appropriateness",
            "label": "appropriate",
        },
        {
            "case_id": "search",
            "sample": 0,
            "rubric": "tool_appropriateness",
            "label": "appropriate",
        },
        {"case_id": "error", "sample": 0, "rubric": "tool_appropriateness", "label": "wrong_tool"},
        {
            "case_id": "error",
            "sample": 0,
            "rubric": "error_handling",
            "item": "get_order#0",
            "label": "fabricated",
        },
        {
            "case_id": "gone",
            "sample": 0,
            "rubric": "error_handling",
            "item": "get_order#0",
            "label": "handed_back",
        },
    ]
    (tmp_path / "human.jsonl").write_text("".join(json.dumps(h) + "\n" for h in human))
    config = write_config(tmp_path, judge_cfg(srv, calibration_file="human.jsonl"))
    dataset, runs = standard()
    block = run_judge(
        config,
        dataset,
        runs,
        tmp_path / "out",
        timing=results().timing,
        environ=ENV,
        sleep=no_sleep,
    )
    ag = block["rubrics"]["tool_appropriateness"]["agreement"]
    pairs = [("appropriate", "appropriate")] * 3 + [("appropriate", "wrong_tool")]
    assert ag["n"] == 4 and ag["raw"] == 0.75 and ag["unmatched"] == 0
    assert ag["kappa"] == round(cohen_kappa(pairs), 6)  # type: ignore[arg-type]
    eh = block["rubrics"]["error_handling"]["agreement"]
    assert (eh["n"], eh["raw"], eh["unmatched"]) == (1, 1.0, 1)
    assert block["rubrics"]["argument_fidelity"]["agreement"] is None
    assert block["calibration"] == {"file": "human.jsonl", "labels": 6, "matched": 5}


def test_run_judge__bad_calibration_file__input_error_names_line_and_field(
    openai_server, tmp_path: Path
) -> None:
    srv = openai_server(honest_judge)
    (tmp_path / "human.jsonl").write_text(
        '{"case_id": "a", "sample": 0, "rubric": "tool_appropriateness", "label": "appropriate"}\n'
        '{"case_id": "b", "sample": 0, "rubric": "tool_appropriateness", "label": "great"}\n'
    )
    config = write_config(tmp_path, judge_cfg(srv, calibration_file="human.jsonl"))
    dataset, runs = standard()
    with pytest.raises(CalibrationError) as exc:
        run_judge(
            config,
            dataset,
            runs,
            tmp_path / "out",
            timing=results().timing,
            environ=ENV,
            sleep=no_sleep,
        )
    (problem,) = exc.value.problems
    assert (problem.line, problem.field) == (2, "label")
    assert srv.requests == []


def test_run_judge__custom_rubric__receives_only_its_placeholders(
    openai_server, tmp_path: Path
) -> None:
    srv = openai_server(lambda req, i: answer("partly", "ok"))
    (tmp_path / "concise.txt").write_text(
        "QUESTION: Is the final answer concise for this request?\n"
        "request: {{user_input}}\nanswer: {{final}}\n"
    )
    custom = [{"name": "concise", "prompt_file": "concise.txt", "scale": ["yes", "partly", "no"]}]
    config = write_config(tmp_path, judge_cfg(srv, rubrics=[], custom_rubrics=custom))
    dataset, runs = standard()
    block = run_judge(
        config,
        dataset,
        runs,
        tmp_path / "out",
        timing=results().timing,
        environ=ENV,
        sleep=no_sleep,
    )
    rub = block["rubrics"]["concise"]
    assert rub["values"] == {"yes": 1.0, "partly": 0.5, "no": 0.0}
    assert (rub["n"], rub["mean"], rub["builtin"]) == (4, 0.5, False)
    assert rub["question"] == "Is the final answer concise for this request?"
    weather = next(user_text(r.json) for r in srv.requests if "Paris" in user_text(r.json))
    assert 'answer: "Tomorrow: 18 °C in Paris."' in weather
    assert "get_weather" not in weather


def test_run_judge__custom_prompt_unknown_placeholder__config_error_with_line(
    tmp_path: Path,
) -> None:
    (tmp_path / "bad.txt").write_text("QUESTION: x\n\nanswer: {{user_inptu}}\n")
    custom = [{"name": "bad", "prompt_file": "bad.txt", "scale": ["yes", "no"]}]
    config = write_config(tmp_path, {"model": "m", "rubrics": [], "custom_rubrics": custom})
    dataset, runs = standard()
    with pytest.raises(ConfigError) as exc:
        run_judge(config, dataset, runs, tmp_path / "out", timing=results().timing, environ=ENV)
    (problem,) = exc.value.problems
    assert problem.line == 3 and problem.file.endswith("bad.txt")
    assert "{{user_inptu}}" in problem.message and "did you mean 'user_input'" in problem.message


def test_run_judge__no_judge_section__disabled_block(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"model": "m"}).model_copy(update={"judge": None})
    dataset, runs = standard()
    block = run_judge(config, dataset, runs, tmp_path / "out", timing=results().timing)
    assert block["status"] == "disabled" and block["gating"] is False


def test_run_judge__api_key_never_in_block(openai_server, tmp_path: Path) -> None:
    def echo(request: Any, index: int) -> Response:
        return Response(401, {"error": {"message": "bad key sk-test-secret-123"}})

    srv = openai_server(echo)
    config = write_config(tmp_path, judge_cfg(srv, concurrency=1))
    dataset, runs = standard()
    block = run_judge(
        config,
        dataset,
        runs,
        tmp_path / "out",
        timing=results().timing,
        environ=ENV,
        sleep=no_sleep,
    )
    text = jsonio.dumps(block).decode()
    assert "HTTP 401" in text and "sk-test-secret-123" not in text
    assert len(srv.requests) == 3  # 401 is not retried; the breaker opens after 3 in a row


def test_run_judge__empty_api_key_env__keyless_endpoint_called_without_authorization(
    openai_server, tmp_path: Path
) -> None:
    srv = openai_server(honest_judge)
    config = write_config(tmp_path, judge_cfg(srv, api_key_env=""))
    dataset, runs = standard()
    block = run_judge(
        config, dataset, runs, tmp_path / "out", timing=results().timing, environ={}, sleep=no_sleep
    )
    assert block["status"] == "ok" and len(srv.requests) == 6
    assert all("Authorization" not in r.headers for r in srv.requests)


def test_run_judge__runs_of_unknown_cases__noticed_not_judged(
    openai_server, tmp_path: Path
) -> None:
    from gate.model import Run

    srv = openai_server(honest_judge)
    config = write_config(tmp_path, judge_cfg(srv, rubrics=["tool_appropriateness"]))
    dataset, runs = standard()
    block = run_judge(
        config,
        dataset,
        [*runs, Run("ghost", 0)],
        tmp_path / "out",
        timing=results().timing,
        environ=ENV,
        sleep=no_sleep,
    )
    assert block["rubrics"]["tool_appropriateness"]["n"] == 4
    assert "1 run(s) name cases not in the dataset" in block["notices"][0]


def test_judge_metrics__block__judge_prefixed_mean_and_n(openai_server, tmp_path: Path) -> None:
    from gate.judge import judge_metrics

    srv = openai_server(honest_judge)
    config = write_config(tmp_path, judge_cfg(srv))
    dataset, runs = standard()
    block = run_judge(
        config,
        dataset,
        runs,
        tmp_path / "out",
        timing=results().timing,
        environ=ENV,
        sleep=no_sleep,
    )
    got = {k: (v.mean, v.n) for k, v in judge_metrics(block).items()}
    assert got == {
        "judge.argument_fidelity": (1.0, 1),
        "judge.error_handling": (0.0, 1),
        "judge.tool_appropriateness": (1.0, 4),
    }
    assert judge_metrics({"status": "disabled", "rubrics": {}}) == {}
