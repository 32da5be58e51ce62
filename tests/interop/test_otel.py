"""Trace import: OTLP JSON GenAI spans and Langfuse observations → runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gate.interop import InteropError
from gate.interop.otel import TraceFormat, import_trace_file
from gate.runsfile import read_runs
from tests.interop.conftest import SAMPLES, toolgate


def test_otlp__chat_and_tool_spans__turns_by_call_id() -> None:
    runs = {r.case_id: r for r in import_trace_file(SAMPLES / "otlp.json").runs}
    run = runs["refund-017"]  # toolgate.case_id on the root span
    assert [[c.name for c in t.calls] for t in run.turns] == [["lookup_order", "get_policy"], []]
    results = {r.id: r for r in run.turns[0].tool_results}
    assert (
        results["call_a1"].content == '{"status": "delivered"}' and not results["call_a1"].is_error
    )
    assert results["call_a2"].is_error and results["call_a2"].content == "policy service timed out"
    assert run.final == "Your order was delivered; I cannot check the policy right now."
    assert run.usage == {"prompt_tokens": 710, "completion_tokens": 36}
    assert run.latency_ms == 2500.0


def test_otlp__tool_definitions_and_user_input__kept_in_meta() -> None:
    run = next(
        r for r in import_trace_file(SAMPLES / "otlp.json").runs if r.case_id == "refund-017"
    )
    assert run.meta is not None
    assert [t["function"]["name"] for t in run.meta["tools"]] == ["lookup_order", "get_policy"]
    assert run.meta["tools"][0]["function"]["parameters"]["required"] == ["order_id"]
    assert run.meta["user_input"] == "Refund order ord_7281"
    assert run.meta["trace_id"] == "5b8efff798038103d269b633813fc60c"


def test_otlp__content_capture_off__tool_spans_become_the_calls() -> None:
    run = next(
        r for r in import_trace_file(SAMPLES / "otlp.json").runs if r.case_id.startswith("0af7")
    )
    (turn,) = run.turns
    assert [(c.name, c.arguments) for c in turn.calls] == [("search", {"q": "otel"})]
    assert turn.tool_results[0].content == "3 hits"


def test_otlp__case_attribute__names_the_case(tmp_path: Path) -> None:
    data = json.loads((SAMPLES / "otlp.json").read_text())
    span = data["resourceSpans"][0]["scopeSpans"][0]["spans"][5]
    span["attributes"].append({"key": "session.id", "value": {"stringValue": "sess-9"}})
    path = tmp_path / "t.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    ids = sorted(r.case_id for r in import_trace_file(path, case_attribute="session.id").runs)
    assert ids == ["refund-017", "sess-9"]


def test_otlp__bad_attribute_value__error_names_the_span_field(tmp_path: Path) -> None:
    data = json.loads((SAMPLES / "otlp.json").read_text())
    data["resourceSpans"][0]["scopeSpans"][0]["spans"][2]["attributes"][0]["value"] = {
        "stringVal": "x"
    }
    path = tmp_path / "t.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(InteropError) as err:
        import_trace_file(path)
    (problem,) = err.value.problems
    assert problem.file == str(path) and problem.line == 1
    assert problem.field == "resourceSpans[0].scopeSpans[0].spans[2].attributes[0].value"
    assert "stringVal" in problem.message


def test_otlp__jsonl_of_exports__one_run_per_trace(tmp_path: Path) -> None:
    data = json.loads((SAMPLES / "otlp.json").read_text())
    spans = data["resourceSpans"][0]["scopeSpans"][0]["spans"]
    first = {"resourceSpans": [{"scopeSpans": [{"spans": spans[:5]}]}]}
    second = {"resourceSpans": [{"scopeSpans": [{"spans": spans[5:]}]}]}
    path = tmp_path / "traces.jsonl"
    path.write_text(json.dumps(first) + "\n" + json.dumps(second) + "\n", encoding="utf-8")
    assert len(import_trace_file(path).runs) == 2


def test_not_genai__clear_error(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(
        json.dumps(
            {
                "resourceSpans": [
                    {
                        "scopeSpans": [
                            {
                                "spans": [
                                    {
                                        "traceId": "ab",
                                        "spanId": "cd",
                                        "name": "GET /",
                                        "startTimeUnixNano": "1",
                                        "endTimeUnixNano": "2",
                                    }
                                ]
                            }
                        ]
                    }
                ]
            }
        )
    )
    with pytest.raises(InteropError, match=r"no GenAI spans"):
        import_trace_file(path)


def test_langfuse__generation_and_tool__one_run() -> None:
    (run,) = import_trace_file(SAMPLES / "langfuse.json").runs
    assert run.case_id == "weather-oslo"
    assert [[c.name for c in t.calls] for t in run.turns] == [["get_weather"], []]
    assert run.turns[0].tool_results[0].content == {"temp_c": 4}
    assert run.final == "It is 4°C in Oslo."
    assert run.usage == {"prompt_tokens": 130, "completion_tokens": 19}
    assert run.meta is not None and run.meta["source"] == "langfuse"
    assert run.meta["tools"][0]["function"]["name"] == "get_weather"
    assert run.meta["user_input"] == "What's the weather in Oslo?"


def test_langfuse__unknown_type__error_names_the_record(tmp_path: Path) -> None:
    data = json.loads((SAMPLES / "langfuse.json").read_text())
    data["data"][1]["type"] = "TOOLCALL"
    path = tmp_path / "lf.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(InteropError) as err:
        import_trace_file(path, fmt=TraceFormat.LANGFUSE)
    (problem,) = err.value.problems
    assert problem.field == "data[1].type" and "TOOLCALL" in problem.message


def test_cli_otel__writes_a_runs_file_that_reads_back(tmp_path: Path) -> None:
    proc = toolgate("import", "otel", SAMPLES / "otlp.json", "--out", tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "imported 2 runs (2 cases)" in proc.stdout
    runs = [r for _, r in read_runs(tmp_path / "runs.jsonl")]
    assert sorted(r.case_id for r in runs)[1] == "refund-017"
    bad = tmp_path / "bad.json"
    bad.write_text('{"resourceSpans": 3}')
    proc = toolgate("import", "otel", bad, "--out", tmp_path / "o")
    assert proc.returncode == 2 and "bad.json" in proc.stderr and "resourceSpans" in proc.stderr
