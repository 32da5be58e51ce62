"""runs.jsonl: every record shape of docs/agent-protocol.md, round trips, and line-named errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gate.errors import RunsFileError
from gate.model import Run, ToolCall, ToolResult, Turn
from gate.runsfile import (
    MAX_RUN_CALLS,
    MAX_RUN_TURNS,
    SHORT_LINE,
    RunsWriter,
    decode_arguments,
    parse_run_line,
    read_runs,
)


def test_plain_call_with_object_arguments__accepted_as_is() -> None:
    run = parse_run_line(
        '{"case_id": "c1", "sample": 0, '
        '"turns": [{"calls": [{"name": "f", "arguments": {"x": 1}}]}]}',
        file="runs.jsonl",
        lineno=1,
    )
    assert run.calls == (ToolCall(name="f", arguments={"x": 1}),)


def test_string_arguments__decoded_and_raw_kept() -> None:
    run = parse_run_line(
        '{"case_id": "c1", "sample": 0, '
        '"turns": [{"calls": [{"name": "f", "arguments": "{\\"x\\": 1}"}]}]}',
        file="runs.jsonl",
        lineno=1,
    )
    (call,) = run.calls
    assert call.arguments == {"x": 1} and call.raw_arguments == '{"x": 1}' and call.parse_ok


@pytest.mark.parametrize("raw", ['{"x": 1', "[1, 2]", '{"x": NaN}', '{"x": 1, "x": 2}', "42"])
def test_undecodable_or_non_object_arguments__parse_failure_not_error(raw: str) -> None:
    args, kept, ok = decode_arguments(raw)
    assert (args, kept, ok) == (None, raw, False)


def test_explicit_parse_failure__kept() -> None:
    run = parse_run_line(
        '{"case_id": "c1", "sample": 0, "turns": [{"calls": [{"name": "f", "arguments": null, '
        '"raw_arguments": "{oops", "parse_ok": false}]}]}',
        file="runs.jsonl",
        lineno=3,
    )
    assert run.calls[0].parse_ok is False and run.calls[0].raw_arguments == "{oops"


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ('{"sample": 0, "turns": []}', "case_id"),
        ('{"case_id": "c", "turns": []}', "sample"),
        ('{"case_id": "c", "sample": 0}', "turns"),
        ('{"case_id": "c", "sample": -1, "turns": []}', "sample"),
        ('{"case_id": "c", "sample": true, "turns": []}', "sample"),
        ('{"case_id": "c", "sample": 0, "turns": {}}', "turns"),
        (
            '{"case_id": "c", "sample": 0, "turns": [{"calls": [{"arguments": {}}]}]}',
            "turns[0].calls[0].name",
        ),
        ('{"case_id": "c", "sample": 0, "turns": [{"calls": [], "oops": 1}]}', "turns[0].oops"),
        ('{"case_id": "c", "sample": 0, "turns": [], "usage": {"tokens": "many"}}', "usage"),
        ('{"case_id": "c", "sample": 0, "turns": [], "extra": 1}', "extra"),
    ],
)
def test_malformed_record__error_names_line_and_field(line: str, field: str) -> None:
    with pytest.raises(RunsFileError) as info:
        parse_run_line(line, file="runs.jsonl", lineno=7)
    (problem,) = info.value.problems
    assert (problem.file, problem.line, problem.field) == ("runs.jsonl", 7, field)


def test_record_without_turns_or_sample__required_and_located() -> None:
    for line, field, words in [
        ('{"case_id": "c", "turns": []}', "sample", "required"),
        ('{"case_id": "c", "sample": 0}', "turns", "required"),
    ]:
        with pytest.raises(RunsFileError) as info:
            parse_run_line(line, file="runs.jsonl", lineno=2)
        (problem,) = info.value.problems
        assert (problem.line, problem.field) == (2, field) and words in problem.message


def test_empty_turns__an_agent_that_did_nothing__accepted() -> None:
    run = parse_run_line('{"case_id": "c", "sample": 1, "turns": []}', file="r", lineno=1)
    assert (run.sample, run.turns) == (1, ())


def test_invalid_json_line__names_line() -> None:
    with pytest.raises(RunsFileError, match=r"runs.jsonl:2: invalid JSON"):
        parse_run_line("{nope", file="runs.jsonl", lineno=2)


def test_writer_then_reader__round_trip(tmp_path: Path) -> None:
    run = Run(
        case_id="c1",
        sample=2,
        turns=(
            Turn(
                calls=(ToolCall(name="f", arguments={"a": [1, 2]}, id="x1"),),
                tool_results=(ToolResult(id="x1", content={"ok": True}),),
            ),
            Turn(calls=(), content="done"),
        ),
        final="done",
        latency_ms=12.5,
        usage={"prompt_tokens": 3},
    )
    path = tmp_path / "runs.jsonl"
    with RunsWriter(path) as writer:
        writer.write(run)
        writer.write(Run(case_id="c2", sample=0, error="agent crashed: exit 1"))
    (l1, r1), (l2, r2) = read_runs(path)
    assert (l1, l2) == (1, 2)
    assert r1 == run
    assert r2.error == "agent crashed: exit 1"


def test_unrecorded_result__written_as_a_field_and_read_back(tmp_path: Path) -> None:
    result = ToolResult(id="c1", content={"error": "no frozen response"}, is_error=True)
    miss = ToolResult(id="c1", content=result.content, is_error=True, unrecorded=True)
    run = Run(
        case_id="c",
        sample=0,
        turns=(Turn(calls=(ToolCall("f", {}, id="c1"),), tool_results=(miss,)),),
    )
    path = tmp_path / "runs.jsonl"
    with RunsWriter(path) as w:
        w.write(run)
    assert '"unrecorded":true' in path.read_text()
    ((_, back),) = read_runs(path)
    assert back.turns[0].tool_results == (miss,)
    assert miss != result


def test_unrecorded_result__older_file_marked_in_content__read_as_unrecorded() -> None:
    line = (
        '{"case_id": "c", "sample": 0, '
        '"turns": [{"calls": [{"id": "c1", "name": "f", "arguments": {}}], '
        '"tool_results": [{"id": "c1", "is_error": true, "content": '
        '{"toolgate_unrecorded": true, "error": "no frozen response for f({})"}}]}]}'
    )
    run = parse_run_line(line, file="runs.jsonl", lineno=1)
    (result,) = run.turns[0].tool_results
    assert result.unrecorded and result.is_error


def test_unrecorded_result__not_a_boolean__names_the_field() -> None:
    line = (
        '{"case_id": "c", "sample": 0, "turns": [{"calls": [], '
        '"tool_results": [{"id": "c1", "content": null, "unrecorded": "yes"}]}]}'
    )
    with pytest.raises(RunsFileError) as exc:
        parse_run_line(line, file="runs.jsonl", lineno=3)
    (problem,) = exc.value.problems
    assert (problem.line, problem.field) == (3, "turns[0].tool_results[0].unrecorded")


def _compact(record: dict[str, object]) -> str:
    return json.dumps(record, separators=(",", ":"))


def test_shortest_lines_past_the_bounds__not_shorter_than_short_line() -> None:
    """The reader counts turns and calls only on lines of SHORT_LINE or more: the shortest
    line past either bound is that long, and it is still cut and failed."""
    turn = {"calls": [{}] * (MAX_RUN_CALLS + 1)}
    many_calls = _compact({"case_id": "c", "sample": 0, "turns": [turn]})
    many_turns = _compact({"case_id": "c", "sample": 0, "turns": [{}] * (MAX_RUN_TURNS + 1)})
    assert len(many_calls) >= SHORT_LINE and len(many_turns) >= SHORT_LINE
    # the same line with calls that convert: still past the bound, and cut
    run = parse_run_line(many_calls.replace("{}", '{"name":"f"}'), file="runs.jsonl", lineno=1)
    assert len(run.calls) == MAX_RUN_CALLS
    assert run.error is not None and run.error.startswith("step_budget: the run records 10,001")
    run = parse_run_line(many_turns, file="runs.jsonl", lineno=1)
    assert len(run.turns) == MAX_RUN_TURNS and run.error is not None
    assert "10,001 turns" in run.error
