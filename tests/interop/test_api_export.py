"""``gate.assert_tool_calls`` (the pytest API) and ``toolgate export`` (CSV)."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

import gate
from gate.interop.export import CASE_METRICS
from tests.interop.conftest import toolgate

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather now.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "unit": {"type": "string", "enum": ["c", "f"]},
            },
            "required": ["city"],
        },
    },
}


def test_assert_tool_calls__matching_calls__returns_the_score() -> None:
    score = gate.assert_tool_calls(
        [{"name": "get_weather", "arguments": '{"city": " PARIS ", "unit": "c"}'}],
        [{"name": "get_weather", "args": {"city": "paris"}}],
        tools=[WEATHER],
    )
    assert score.passed and score.scores["tool_selection_f1"] == 1.0


def test_assert_tool_calls__wrong_argument__message_shows_the_evidence() -> None:
    with pytest.raises(AssertionError) as err:
        gate.assert_tool_calls(
            [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Lyon"}'},
                }
            ],
            [{"name": "get_weather", "args": {"city": "Paris"}}],
        )
    text = str(err.value)
    assert "failing checks: calls_matched" in text
    assert 'expected: get_weather(city="Paris")' in text
    assert 'actual:   get_weather(city="Lyon")' in text
    assert 'argument: get_weather.city: expected "Paris", got "Lyon"' in text


def test_assert_tool_calls__must_not_call__fails_with_the_violation() -> None:
    with pytest.raises(AssertionError, match="forbidden: 'delete_account' must not be called"):
        gate.assert_tool_calls(
            [
                {"name": "get_weather", "arguments": {"city": "Paris"}},
                {"name": "delete_account", "arguments": {}},
            ],
            [{"name": "get_weather", "args": {"city": "Paris"}}],
            must_not_call=["delete_account"],
        )


def test_assert_tool_calls__strict_order__sequence_is_checked() -> None:
    expected = [{"name": "lookup", "args": {}}, {"name": "refund", "args": {}}]
    calls = [{"name": "refund", "arguments": {}}, {"name": "lookup", "arguments": {}}]
    gate.assert_tool_calls(calls, expected)  # unordered: fine
    with pytest.raises(AssertionError, match="order"):
        gate.assert_tool_calls(calls, expected, order="strict")
    # One parallel batch is a set, even under strict order.
    gate.assert_tool_calls([calls], expected, order="strict")


def test_assert_tool_calls__batched_expectation__strict_compares_batch_by_batch() -> None:
    paris = {"name": "get_weather", "arguments": {"city": "Paris"}}
    berlin = {"name": "get_weather", "arguments": {"city": "Berlin"}}
    book = {"name": "book_trip", "arguments": {}}
    expected = [
        [
            {"name": "get_weather", "args": {"city": "Paris"}},
            {"name": "get_weather", "args": {"city": "Berlin"}},
        ],
        {"name": "book_trip", "args": {}},
    ]
    score = gate.assert_tool_calls([[berlin, paris], [book]], expected, order="strict")
    assert score.scores["batching"] == 1.0
    with pytest.raises(AssertionError, match="order"):
        gate.assert_tool_calls([[paris], [berlin], [book]], expected, order="strict")
    # Outside strict, batches do not decide; the score still says what happened.
    score = gate.assert_tool_calls([[paris], [berlin], [book]], expected)
    assert score.scores["batching"] == pytest.approx(2 / 3)


def test_assert_tool_calls__exact_except_defaults__default_passes_other_extra_fails() -> None:
    tools = [
        {
            "name": "search",
            "description": "Search.",
            "parameters": {
                "type": "object",
                "properties": {
                    "q": {"type": "string"},
                    "page": {"type": "integer", "default": 1},
                    "delete_all": {"type": "boolean"},
                },
            },
        }
    ]
    expected = [{"name": "search", "args": {"q": "x"}, "args_match": "exact_except_defaults"}]
    gate.assert_tool_calls(
        [{"name": "search", "arguments": {"q": "x", "page": 1}}], expected, tools=tools
    )
    with pytest.raises(AssertionError, match="delete_all"):
        gate.assert_tool_calls(
            [{"name": "search", "arguments": {"q": "x", "delete_all": True}}],
            expected,
            tools=tools,
        )


def test_assert_tool_calls__no_tool_expected__any_call_fails() -> None:
    gate.assert_tool_calls([], [])
    with pytest.raises(AssertionError, match="no_tool"):
        gate.assert_tool_calls([{"name": "get_weather", "arguments": {"city": "x"}}], [])


def test_assert_tool_calls__bfcl_profile__bfcl_string_rule() -> None:
    call = [{"name": "f", "arguments": {"city": "new-york"}}]
    gate.assert_tool_calls(call, [{"name": "f", "args": {"city": "New York"}}], normalize="bfcl")
    with pytest.raises(AssertionError):
        gate.assert_tool_calls(call, [{"name": "f", "args": {"city": "New York"}}])


def test_assert_tool_calls__schema_violation__fails_with_tools() -> None:
    with pytest.raises(AssertionError, match="schema_valid"):
        gate.assert_tool_calls(
            [{"name": "get_weather", "arguments": {"city": "Paris", "unit": "kelvin"}}],
            [{"name": "get_weather", "args": {"city": "Paris"}}],
            tools=[WEATHER],
        )


def test_assert_tool_calls__bad_expectation__value_error() -> None:
    with pytest.raises(ValueError, match=r"\$inn"):
        gate.assert_tool_calls([], [{"name": "f", "args": {"x": {"$inn": [1]}}}])


def test_import_gate__stays_cheap_until_asserting() -> None:
    code = (
        "import sys, gate; print('gate.api' in sys.modules, 'gate.scorers' in sys.modules);"
        "gate.assert_tool_calls([], []); print('gate.scorers' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["False", "False", "True"]
    assert "assert_tool_calls" in gate.__all__


def _scored(tmp_path: Path) -> Path:
    tools = [
        WEATHER,
        {
            "type": "function",
            "function": {
                "name": "send_email",
                "description": "Send.",
                "parameters": {"type": "object", "properties": {"to": {"type": "string"}}},
            },
        },
    ]
    cases = [
        {
            "id": "w1",
            "user_input": "Weather in Paris?",
            "available_tools": tools,
            "expected_tool_calls": [{"name": "get_weather", "args": {"city": "Paris"}}],
            "tags": ["weather"],
        },
        {
            "id": "w2",
            "user_input": "Email Bob",
            "available_tools": tools,
            "expected_tool_calls": [{"name": "send_email", "args": {"to": "bob"}}],
            "difficulty": "hard",
        },
    ]
    runs = [
        {
            "case_id": "w1",
            "sample": 0,
            "turns": [{"calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]}],
        },
        {
            "case_id": "w2",
            "sample": 0,
            "turns": [{"calls": [{"name": "get_weather", "arguments": {"city": "Bob"}}]}],
        },
    ]
    (tmp_path / "dataset.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    proc = toolgate(
        "score",
        "--dataset",
        tmp_path / "dataset.jsonl",
        "--runs",
        tmp_path / "runs.jsonl",
        "--out",
        tmp_path / "res",
    )
    assert (tmp_path / "res" / "results.json").exists(), proc.stderr
    return tmp_path / "res" / "results.json"


def test_export_cases_csv__one_row_per_case_with_evidence(tmp_path: Path) -> None:
    results = _scored(tmp_path)
    proc = toolgate("export", results, "--format", "cases-csv", "--out", tmp_path / "cases.csv")
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.DictReader(io.StringIO((tmp_path / "cases.csv").read_text())))
    assert [r["id"] for r in rows] == ["w1", "w2"]
    assert list(rows[0]) == [
        "id",
        "passed",
        "pass_rate",
        "flaky",
        "samples",
        "difficulty",
        "tags",
        "failed_checks",
        *CASE_METRICS,
        "expected",
        "actual",
        "why",
    ]
    assert (rows[0]["passed"], rows[0]["pass_rate"], rows[0]["tags"]) == ("true", "1", "weather")
    assert (rows[1]["passed"], rows[1]["difficulty"], rows[1]["tool_selection_recall"]) == (
        "false",
        "hard",
        "0",
    )
    assert rows[1]["expected"] == 'send_email(to="bob")'
    assert rows[1]["actual"] == 'get_weather(city="Bob")'
    assert "calls_matched" in rows[1]["failed_checks"].split(";")
    again = toolgate("export", results, "--format", "cases-csv", "--out", "-")
    assert again.stdout == (tmp_path / "cases.csv").read_text()  # deterministic


def test_export_tools_csv__recall_per_tool(tmp_path: Path) -> None:
    results = _scored(tmp_path)
    out = toolgate("export", results, "--format", "tools-csv", "--out", "-").stdout
    assert out.splitlines() == [
        "tool,expected,matched,recall,called",
        "get_weather,1,1,1,2",
        "send_email,1,0,0,0",
    ]


def test_export__not_a_results_file__exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "r.json"
    bad.write_text('{"cases": 1}')
    proc = toolgate("export", bad, "--format", "tools-csv", "--out", "-")
    assert proc.returncode == 2 and "r.json" in proc.stderr
