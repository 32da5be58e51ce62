"""Transcript import: each provider's recorded conversations → runs and dataset cases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gate.dataset import load_dataset
from gate.interop import InteropError
from gate.interop.transcripts import Format, import_transcripts
from gate.runsfile import read_runs
from tests.interop.conftest import SAMPLES, toolgate


def test_openai__history_then_response__one_turn_per_assistant_message() -> None:
    # refund-017 has two user turns: --last-turn tests the last one, the rest is history
    imported = import_transcripts(SAMPLES / "openai_chat.jsonl", Format.OPENAI, last_turn=True)
    run = imported.runs[0]
    assert run.case_id == "refund-017" and run.sample == 0
    assert [[c.name for c in t.calls] for t in run.turns] == [["lookup_order"], ["refund"]]
    assert run.turns[0].tool_results[0].id == "call_a1"
    assert run.turns[1].calls[0].arguments == {"order_id": "ord_7281", "amount": 42.5}
    assert run.usage == {"prompt_tokens": 310, "completion_tokens": 24, "total_tokens": 334}
    assert run.latency_ms == 812.5
    assert run.meta is not None and run.meta["source_trace_id"] == "refund-017"


def test_openai__invalid_arguments__kept_as_a_parse_failure() -> None:
    run = import_transcripts(SAMPLES / "openai_chat.jsonl", Format.OPENAI).runs[1]
    (turn,) = run.turns
    assert [c.parse_ok for c in turn.calls] == [True, False]
    assert turn.calls[1].raw_arguments == '{"city": "Rome"'


def test_openai__two_user_turns__a_conversation_case_by_default() -> None:
    imported = import_transcripts(SAMPLES / "openai_chat.jsonl", Format.OPENAI, cases=True)
    refund = imported.cases[0]
    assert [(t["user"], len(t["expected_tool_calls"])) for t in refund["conversation"]] == [
        ("Hi, I have a question.", 0),
        ("Refund order ord_7281 please.", 2),
    ]
    assert refund["message_history"] == []
    run = imported.runs[0]
    assert [(t.user, [c.name for c in t.calls]) for t in run.turns] == [
        ("Hi, I have a question.", []),
        ("Refund order ord_7281 please.", ["lookup_order"]),
        (None, ["refund"]),
    ]


def test_openai__cases__calls_become_expectations_and_results_frozen() -> None:
    cases = import_transcripts(
        SAMPLES / "openai_chat.jsonl", Format.OPENAI, cases=True, last_turn=True
    ).cases
    refund = cases[0]
    assert refund["user_input"] == "Refund order ord_7281 please."
    # The system prompt is the agent's own: left out unless asked.
    assert [m["role"] for m in refund["message_history"]] == ["user", "assistant"]
    assert refund["expected_tool_calls"] == [
        {"name": "lookup_order", "args": {"order_id": "ord_7281"}},
        {"name": "refund", "args": {"order_id": "ord_7281", "amount": 42.5}},
    ]
    assert refund["order"] == "strict"
    assert refund["tool_responses"] == [
        {
            "name": "lookup_order",
            "args": {"order_id": "ord_7281"},
            "response": {"status": "delivered", "amount": 42.5},
        }
    ]
    weather, smalltalk = cases[1], cases[2]
    assert weather["expected_tool_calls"] == [{"name": "get_weather", "args": {"city": "Paris"}}]
    assert "undecodable" in weather["notes"]
    assert smalltalk["expected_no_tool"] is True and smalltalk["expected_tool_calls"] == []


def test_responses__function_call_items__turns_and_outputs() -> None:
    imported = import_transcripts(SAMPLES / "responses.jsonl", Format.RESPONSES, cases=True)
    run = imported.runs[0]
    assert [[c.name for c in t.calls] for t in run.turns] == [["search_flights"], ["book_flight"]]
    assert run.turns[0].calls[0].id == "call_s1"
    assert run.turns[0].tool_results[0].content == '[{"flight": "TP1351", "price": 89}]'
    case = imported.cases[0]
    # The built-in web_search tool is not a function tool.
    assert [t["function"]["name"] for t in case["available_tools"]] == [
        "search_flights",
        "book_flight",
    ]
    assert case["tool_responses"][0]["response"] == [{"flight": "TP1351", "price": 89}]


def test_anthropic__tool_result_error__kept_as_error() -> None:
    imported = import_transcripts(SAMPLES / "anthropic.jsonl", Format.ANTHROPIC, cases=True)
    run = imported.runs[0]
    assert run.case_id == "files-3"
    assert run.turns[0].calls[0].name == "read_file"
    assert run.turns[0].tool_results[0].is_error is True
    assert run.final == "I could not read notes.txt: permission denied."
    assert run.usage == {"prompt_tokens": 410, "completion_tokens": 15, "total_tokens": 425}
    case = imported.cases[0]
    assert case["tool_responses"] == [
        {"name": "read_file", "args": {"path": "notes.txt"}, "error": "permission denied"}
    ]
    assert case["available_tools"][0]["function"]["parameters"]["required"] == ["path"]
    assert len(case["available_tools"]) == 2  # the server tool is left out


def test_gemini__openapi_schema_types__become_json_schema() -> None:
    imported = import_transcripts(SAMPLES / "gemini.jsonl", Format.GEMINI, cases=True)
    run = imported.runs[0]
    assert [c.name for c in run.turns[0].calls] == ["set_light", "set_fan"]
    tools = {
        t["function"]["name"]: t["function"]["parameters"]
        for t in imported.cases[0]["available_tools"]
    }
    assert tools["set_light"] == {
        "type": "object",
        "properties": {"room": {"type": "string"}, "brightness": {"type": ["integer", "null"]}},
        "required": ["room"],
    }
    assert tools["set_fan"]["properties"]["on"] == {"type": "boolean"}
    # Without call ids, a functionResponse answers the call in the same position.
    second = imported.cases[1]
    assert second["tool_responses"] == [
        {"name": "get_light", "args": {"room": "porch"}, "response": {"on": False}}
    ]
    assert imported.runs[1].final == "No, the porch light is off."


@pytest.mark.parametrize(
    ("record", "field", "message"),
    [
        (
            {
                "request": {
                    "messages": [{"role": "user", "content": "x"}, {"role": "tool", "content": "1"}]
                }
            },
            "request.messages[1].tool_call_id",
            "tool message",
        ),
        (
            {"request": {"messages": [{"role": "robot", "content": "x"}]}},
            "request.messages[0].role",
            "unknown role",
        ),
        (
            {
                "request": {"messages": [{"role": "user", "content": "x"}]},
                "response": {"choices": []},
            },
            "response.choices",
            "is empty",
        ),
        ({"request": {"messages": []}, "respons": {}}, "respons", "unknown key"),
        (
            {"request": {"messages": [{"role": "user", "content": "x"}]}},
            "response",
            "no assistant answer",
        ),
    ],
)
def test_bad_record__error_names_file_line_and_field(
    tmp_path: Path, record: dict, field: str, message: str
) -> None:
    path = tmp_path / "t.jsonl"
    good = json.dumps(
        {
            "request": {"messages": [{"role": "user", "content": "x"}]},
            "response": {"choices": [{"message": {"role": "assistant", "content": "y"}}]},
        }
    )
    path.write_text(good + "\n" + json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(InteropError) as err:
        import_transcripts(path, Format.OPENAI)
    (problem,) = err.value.problems
    assert (problem.file, problem.line, problem.field) == (str(path), 2, field)
    assert message in problem.message


def test_same_case_id_twice__numbered_as_samples(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    lines = (SAMPLES / "openai_chat.jsonl").read_text().splitlines()
    path.write_text("\n".join([lines[2], lines[2]]) + "\n", encoding="utf-8")
    runs = import_transcripts(path, Format.OPENAI).runs
    assert [(r.case_id, r.sample) for r in runs] == [("smalltalk-1", 0), ("smalltalk-1", 1)]


def test_cli_transcripts__cases__replayed_runs_pass_their_own_cases(tmp_path: Path) -> None:
    proc = toolgate(
        "import",
        "transcripts",
        "--format",
        "anthropic",
        SAMPLES / "anthropic.jsonl",
        "--out",
        tmp_path,
        "--cases",
    )
    assert proc.returncode == 0, proc.stderr
    assert "imported 1 runs, 1 cases" in proc.stdout
    assert len(read_runs(tmp_path / "runs.jsonl")) == 1
    assert [c.id for c in load_dataset(tmp_path / "dataset.jsonl").cases] == ["files-3"]
    proc = toolgate(
        "score",
        "--dataset",
        tmp_path / "dataset.jsonl",
        "--runs",
        tmp_path / "runs.jsonl",
        "--out",
        tmp_path / "res",
    )
    results = json.loads((tmp_path / "res" / "results.json").read_text())
    assert [c["passed"] for c in results["cases"]] == [True], proc.stderr
    again = toolgate(
        "import",
        "transcripts",
        "--format",
        "anthropic",
        SAMPLES / "anthropic.jsonl",
        "--out",
        tmp_path,
    )
    assert again.returncode == 2 and "already exists" in again.stderr
