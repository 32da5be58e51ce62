"""Importing the traces of one session (OTLP, Langfuse): one conversation case and run,
which `toolgate check` replays turn by turn; traces without a session are imported as
before; `--per-trace`, `--session-attribute`; located errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gate.dataset import load_dataset
from gate.interop import InteropError
from gate.interop.otel import import_trace_file
from tests.interop._conversation_case import (
    A3,
    CASE_RESPONSES,
    CONVERSATION,
    GOLDEN,
    RUN_SHAPE,
    U1,
    U2,
    U3,
    assert_every_turn_passed,
    check,
    import_cases,
    read_rows,
    shape,
)
from tests.interop.conftest import SAMPLES, toolgate


@pytest.mark.parametrize(
    ("sample", "case_id", "source"),
    [
        ("conversation_otlp.json", "conv-42", "otel"),
        ("conversation_langfuse.jsonl", "lf-session-7", "langfuse"),
    ],
)
def test_traces__a_session_of_three_traces__one_conversation_case_and_run(
    tmp_path: Path, sample: str, case_id: str, source: str
) -> None:
    out = import_cases(tmp_path, "otel", SAMPLES / sample)
    (case,) = read_rows(out / "dataset.jsonl")
    assert case["id"] == case_id and case["source_trace_id"] == case_id
    assert case["conversation"] == CONVERSATION
    assert case["tool_responses"] == CASE_RESPONSES
    assert case["tags"] == ["imported", source]
    (run,) = read_rows(out / "runs.jsonl")
    assert shape(run) == RUN_SHAPE  # the file holds the traces out of order
    assert run["final"] == A3
    assert run["meta"]["session_id"] == case_id and len(run["meta"]["trace_ids"]) == 3
    assert len(load_dataset(out / "dataset.jsonl").cases[0].conversation) == 3
    assert_every_turn_passed(check(out), case_id)


def test_traces__per_trace_flag__one_run_per_trace_as_before(tmp_path: Path) -> None:
    imported = import_trace_file(SAMPLES / "conversation_otlp.json", per_trace=True, cases=True)
    assert len(imported.runs) == 3
    assert all(t.user is None for r in imported.runs for t in r.turns)
    assert [c["user_input"] for c in imported.cases] == [U3, U1, U2]  # file order
    help_text = toolgate("import", "otel", "--help").stdout
    assert "--per-trace" in help_text and "--session-attribute" in help_text


def test_traces__session_attribute__names_another_attribute(tmp_path: Path) -> None:
    text = (SAMPLES / "conversation_otlp.json").read_text(encoding="utf-8")
    path = tmp_path / "t.json"
    path.write_text(text.replace("gen_ai.conversation.id", "app.thread"), encoding="utf-8")
    assert len(import_trace_file(path).runs) == 3  # no known session attribute
    (run,) = import_trace_file(path, session_attributes=("app.thread",)).runs
    assert run.case_id == "conv-42"


def test_traces__without_a_session__one_run_each_byte_for_byte_as_before(tmp_path: Path) -> None:
    for sample, golden in (("otlp.json", "otlp"), ("langfuse.json", "langfuse")):
        out = tmp_path / golden
        proc = toolgate("import", "otel", sample, "--out", out, cwd=SAMPLES)
        assert proc.returncode == 0, proc.stderr
        assert (out / "runs.jsonl").read_bytes() == (GOLDEN / golden / "runs.jsonl").read_bytes()


def test_traces__one_trace_cases__a_one_turn_case_each(tmp_path: Path) -> None:
    imported = import_trace_file(SAMPLES / "langfuse.json", cases=True)
    (case,) = imported.cases
    assert case["user_input"] == "What's the weather in Oslo?"
    assert case["expected_tool_calls"] == [{"name": "get_weather", "args": {"city": "Oslo"}}]
    assert case["tool_responses"] == [
        {"name": "get_weather", "args": {"city": "Oslo"}, "response": {"temp_c": 4}}
    ]
    assert case["source_trace_id"] == "trace-lf-1"


def test_traces__no_tool_definitions__stand_ins_with_a_note(tmp_path: Path) -> None:
    text = (SAMPLES / "conversation_langfuse.jsonl").read_text(encoding="utf-8")
    rows = [json.loads(line) for line in text.splitlines()]
    for trace in rows:
        for obs in trace["observations"]:
            if obs["type"] == "GENERATION":
                obs["input"] = obs["input"]["messages"]
    path = tmp_path / "lf.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = import_cases(tmp_path, "otel", path)
    (case,) = read_rows(out / "dataset.jsonl")
    assert {t["function"]["name"] for t in case["available_tools"]} == {
        "verify_identity",
        "get_order",
        "issue_refund",
    }
    assert "no definition of verify_identity was recorded" in case["notes"]
    assert_every_turn_passed(check(out), "lf-session-7")


def test_traces__session_trace_without_user_message__located_error(tmp_path: Path) -> None:
    data = json.loads((SAMPLES / "conversation_otlp.json").read_text(encoding="utf-8"))
    spans = data["resourceSpans"][0]["scopeSpans"][0]["spans"]
    for s in spans:
        s["attributes"] = [a for a in s["attributes"] if a["key"] != "gen_ai.input.messages"]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    proc = toolgate("import", "otel", path, "--out", tmp_path / "o")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "t.json:1: gen_ai.input.messages: trace " in proc.stderr
    assert "records no user message" in proc.stderr and "(3 problems)" in proc.stderr
    assert toolgate("import", "otel", path, "--out", tmp_path / "p", "--per-trace").returncode == 0


def test_traces__a_session_naming_two_cases__located_error(tmp_path: Path) -> None:
    text = (SAMPLES / "conversation_langfuse.jsonl").read_text(encoding="utf-8")
    rows = [json.loads(line) for line in text.splitlines()]
    for i, trace in enumerate(rows):
        trace["observations"][0]["metadata"] = {"toolgate_case_id": f"case-{i}"}
    path = tmp_path / "lf.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(InteropError) as err:
        import_trace_file(path)
    (problem,) = err.value.problems
    assert "session 'lf-session-7' name different cases" in problem.message
    assert problem.field == "toolgate.case_id"


def test_traces__langfuse_session_id_of_the_wrong_type__located_error(tmp_path: Path) -> None:
    rows = read_rows(SAMPLES / "conversation_langfuse.jsonl")
    rows[1]["sessionId"] = 7
    path = tmp_path / "lf.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(InteropError) as err:
        import_trace_file(path)
    (problem,) = err.value.problems
    assert (problem.line, problem.field) == (2, "sessionId")
