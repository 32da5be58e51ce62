"""The runs file's writer never writes a line its reader refuses (nesting past 64 levels).

One bound, :data:`gate.runsfile.RUN_MAX_DEPTH`, is the reader's; the recording side
derives the arguments' bound from it (:data:`gate.runsfile.ARGUMENTS_MAX_DEPTH`, the
levels a call's arguments sit under in a line taken off) and the writer checks each line
against it. Each test runs ``toolgate check`` (a real process) with a real ``command``
agent (``agents/script_agent.py``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from gate import jsonio
from gate.runsfile import ARGUMENTS_LEVEL, ARGUMENTS_MAX_DEPTH, RUN_MAX_DEPTH
from tests.reliability.helpers import assert_clean_exit, case, project, toolgate

SCRIPT_AGENT = Path(__file__).resolve().parent / "agents" / "script_agent.py"


def nested(depth: int) -> Any:
    """An object nested ``depth`` levels (``{"a": {"a": … {}}}``)."""
    value: Any = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


def scripted(tmp_path: Path, replies: list[Any], rows: list[dict[str, Any]] | None = None) -> Path:
    (tmp_path / "script.json").write_text(json.dumps({"replies": replies}))
    agent = (
        "  kind: command\n"
        f"  command: {json.dumps([sys.executable, str(SCRIPT_AGENT)])}\n"
        "  workers: 1\n"
        "  timeout_s: 20\n"
        f"  env: {json.dumps({'SCRIPT': str(tmp_path / 'script.json')})}\n"
    )
    return project(tmp_path, rows or [case(id="c1")], agent, samples=1)


def run_lines(tmp_path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (tmp_path / "out" / "runs.jsonl").read_text().splitlines()]


def test_bound__the_arguments_bound_is_the_lines_less_the_levels_above_them() -> None:
    assert jsonio.MAX_DEPTH == RUN_MAX_DEPTH == 64
    assert ARGUMENTS_MAX_DEPTH == RUN_MAX_DEPTH - ARGUMENTS_LEVEL == 59
    line = {"turns": [{"calls": [{"arguments": nested(ARGUMENTS_MAX_DEPTH)}]}]}
    assert jsonio.depth(line) == RUN_MAX_DEPTH


def test_command__arguments_string_nested_62_levels__a_parse_failure_that_still_counts(
    tmp_path: Path,
) -> None:
    """The line itself is shallow (the arguments are a string): it parses, and its
    arguments once decoded to an object whose run line the reader then refused."""
    text = json.dumps(nested(62))
    scripted(
        tmp_path,
        [
            {
                "type": "tool_calls",
                "calls": [{"id": "x", "name": "delete_account", "arguments": text}],
            },
            {"type": "final", "content": "done"},
        ],
    )
    proc = toolgate(
        "check", "--config", "toolgate.yml", "--out", "out", "--baseline", "none", cwd=tmp_path
    )
    assert_clean_exit(proc, 1)
    assert "nesting deeper" not in proc.stdout + proc.stderr
    assert "must_not_call" in proc.stdout
    (run,) = run_lines(tmp_path)
    (call,) = run["turns"][0]["calls"]
    assert (call["name"], call["parse_ok"], call["raw_arguments"]) == (
        "delete_account",
        False,
        text,
    )


def test_command__arguments_object_at_the_bound__kept_as_arguments(tmp_path: Path) -> None:
    args = nested(ARGUMENTS_MAX_DEPTH - 1)  # in the message: message › calls › call › args
    scripted(
        tmp_path,
        [
            {
                "type": "tool_calls",
                "calls": [{"id": "x", "name": "lookup_order", "arguments": args}],
            },
            {"type": "final", "content": "done"},
        ],
    )
    proc = toolgate(
        "check", "--config", "toolgate.yml", "--out", "out", "--baseline", "none", cwd=tmp_path
    )
    assert_clean_exit(proc, 0)
    (run,) = run_lines(tmp_path)
    assert run["turns"][0]["calls"][0]["arguments"] == args


def test_frozen_response_nested_60_levels__recorded_as_text_and_the_run_reads_back(
    tmp_path: Path,
) -> None:
    """A dataset line may nest 64 levels; its frozen response sits 3 deep there but 5 deep
    in a runs line: the writer keeps a response too deep for the line as its text."""
    deep = nested(60)
    row = case(
        id="c1",
        tool_responses=[{"name": "lookup_order", "response": deep}],
        expected_tool_calls=[{"name": "lookup_order", "args": {"order_id": "ord_10482"}}],
    )
    assert jsonio.depth(row) <= jsonio.MAX_DEPTH
    scripted(
        tmp_path,
        [
            {
                "type": "tool_calls",
                "calls": [
                    {"id": "x", "name": "lookup_order", "arguments": {"order_id": "ord_10482"}}
                ],
            },
            {"type": "final", "content": "done"},
        ],
        rows=[row],
    )
    proc = toolgate(
        "check", "--config", "toolgate.yml", "--out", "out", "--baseline", "none", cwd=tmp_path
    )
    assert_clean_exit(proc, 0)
    (run,) = run_lines(tmp_path)
    content = run["turns"][0]["tool_results"][0]["content"]
    assert isinstance(content, str) and json.loads(content) == deep
