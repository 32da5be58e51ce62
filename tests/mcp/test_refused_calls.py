"""Every ``tools/call`` an MCP agent attempts is recorded, whatever the SDK makes of it.

The agent is a real process speaking JSON-RPC by hand (``agents/raw_agent.py``) over
streamable HTTP (the 2025 handshake and the stateless 2026 revision) and over stdio (the
``TOOLGATE_MCP_COMMAND`` bridge); the gate is ``toolgate check``, a real process. A call
the SDK refuses before ToolGate's handler runs — arguments nested past its 200 levels, a
batch, a body cut short, a deep ``_meta`` — is a parse failure that keeps its text and
still counts against ``must_not_call``; one whose name cannot be read is a protocol
error. Arguments deeper than the runs file's bound are recorded as a parse failure too,
so the run never writes a line its own reader refuses.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.reliability.helpers import assert_clean_exit, case, project, toolgate

RAW_AGENT = Path(__file__).resolve().parent / "agents" / "raw_agent.py"
TRANSPORTS = ["legacy", "modern", "stdio"]


def deep(depth: int) -> str:
    return "[" * depth + "]" * depth


def call_body(name: str = '"delete_account"', arguments: str = '{"x": 1}', rid: int = 2) -> str:
    return (
        f'{{"jsonrpc":"2.0","id":{rid},"method":"tools/call",'
        f'"params":{{"name":{name},"arguments":{arguments}}}}}'
    )


def check(
    tmp_path: Path, transport: str, bodies: list[str], *, flood: int = 0
) -> tuple[Any, list[dict[str, Any]]]:
    """``toolgate check`` of one case (``delete_account`` must never be called) whose
    agent sends ``bodies``, then a correct ``lookup_order``; the process and the runs."""
    agent = (
        "  kind: mcp\n"
        f"  command: {json.dumps([sys.executable, str(RAW_AGENT), transport])}\n"
        "  timeout_s: 30\n"
        f"  env: {json.dumps({'RAW_BODIES': json.dumps(bodies), 'RAW_FLOOD': str(flood)})}\n"
    )
    project(tmp_path, [case(id="c1")], agent, samples=1)
    proc = toolgate(
        "check", "--config", "toolgate.yml", "--out", "out", "--baseline", "none", cwd=tmp_path
    )
    runs_file = tmp_path / "out" / "runs.jsonl"
    runs = (
        [json.loads(line) for line in runs_file.read_text().splitlines()]
        if runs_file.exists()
        else []
    )
    return proc, runs


def calls(run: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for t in run["turns"] for c in t["calls"]]


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("depth", [250, 1200])
def test_mcp__must_not_call_with_arguments_past_the_sdk_limit__recorded_and_the_gate_fails(
    tmp_path: Path, transport: str, depth: int
) -> None:
    proc, (run,) = check(tmp_path, transport, [call_body(arguments=f'{{"x": {deep(depth)}}}')])
    assert_clean_exit(proc, 1)
    assert "must_not_call" in proc.stdout
    forbidden = [c for c in calls(run) if c["name"] == "delete_account"]
    assert len(forbidden) == 1, calls(run)
    assert forbidden[0]["parse_ok"] is False and forbidden[0]["arguments"] is None
    assert forbidden[0]["raw_arguments"].replace(" ", "").startswith('{"x":[[[[')
    assert any(c["name"] == "lookup_order" and c["parse_ok"] for c in calls(run))
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["verdict"]["passed"] is False
    assert results["verdict"]["hard_failures"] == 1


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("depth", [20, 70, 180])
def test_mcp__arguments_within_the_sdk_limit__recorded_and_the_runs_file_reads_back(
    tmp_path: Path, transport: str, depth: int
) -> None:
    """20 levels are arguments; 70 and 180 are past the runs file's bound (the reader
    refuses lines deeper than 64): a parse failure with the text, never a refused file."""
    proc, (run,) = check(tmp_path, transport, [call_body(arguments=f'{{"x": {deep(depth)}}}')])
    assert_clean_exit(proc, 1)
    (forbidden,) = [c for c in calls(run) if c["name"] == "delete_account"]
    if depth == 20 and transport != "modern":  # the modern envelope is missing: refused
        assert forbidden["parse_ok"] is True
        assert forbidden["arguments"] == {"x": json.loads(deep(20))}
    else:
        assert forbidden["parse_ok"] is False
        assert json.loads(forbidden["raw_arguments"]) == {"x": json.loads(deep(depth))}
    assert "nesting deeper" not in proc.stdout + proc.stderr


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_mcp__deep_meta_batch_and_cut_body__each_call_recorded(
    tmp_path: Path, transport: str
) -> None:
    deep_meta = (
        '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"delete_account",'
        f'"arguments":{{"customer_id":"c9"}},"_meta":{{"k":{deep(300)}}}}}}}'
    )
    batch = "[" + call_body(rid=6) + "," + call_body('"issue_refund"', rid=7) + "]"
    cut = call_body('"delete_account"', '{"x": [[[[', rid=8)[:-4]
    proc, (run,) = check(tmp_path, transport, [deep_meta, batch, cut])
    assert_clean_exit(proc, 1)
    names = sorted(c["name"] for c in calls(run))
    assert names == ["delete_account"] * 3 + ["issue_refund", "lookup_order"], names
    refused = [c for c in calls(run) if c["name"] != "lookup_order"]
    assert all(c["parse_ok"] is False for c in refused)
    texts = {c["raw_arguments"] for c in refused}
    assert '{"customer_id":"c9"}' in texts  # the deep _meta refused the whole call
    assert '{"x": [[' in texts  # the cut body's arguments, as far as they went


@pytest.mark.parametrize("transport", ["legacy", "stdio"])
def test_mcp__name_nested_past_the_sdk_limit__protocol_error(
    tmp_path: Path, transport: str
) -> None:
    proc, (run,) = check(tmp_path, transport, [call_body(name=deep(400))])
    assert_clean_exit(proc, 0)  # no gate fails on it; the sample is the agent's failure
    assert run["error"].startswith("protocol: a tools/call request named no tool"), run["error"]


def test_mcp__escaped_method_and_name__still_read(tmp_path: Path) -> None:
    body = (
        '{"jsonrpc":"2.0","id":3,"method":"tools\\/call","params":{"name":'
        '"delete\\u005faccount","arguments":{"x":' + deep(300) + "}}}"
    )
    proc, (run,) = check(tmp_path, "legacy", [body])
    assert_clean_exit(proc, 1)
    assert [c["name"] for c in calls(run)].count("delete_account") == 1


def test_mcp__two_thousand_broken_requests__one_log_line_per_kind(tmp_path: Path) -> None:
    """The agent fires 2,000 calls and exits at once: the SDK logs an error with a
    traceback for each request it can no longer answer. The log shows one line per kind
    of error, with its count, ahead of the verdict."""
    proc, _ = check(tmp_path, "legacy", [call_body('"lookup_order"')], flood=2000)
    assert "Traceback" not in proc.stderr, proc.stderr[:2000]
    assert len(proc.stderr.splitlines()) <= 5, proc.stderr[:2000]
    tallies = [ln for ln in proc.stderr.splitlines() if "the MCP server logged" in ln]
    assert all(" × " in ln for ln in tallies)


def test_mcp__failure_messages__carry_no_pid_and_two_runs_report_alike(tmp_path: Path) -> None:
    """An agent that exits with code 3, and one that exits 0 without connecting: their
    errors once named the process id, so two identical runs reported differently."""
    outs = []
    for n in (1, 2):
        where = tmp_path / f"run{n}"
        where.mkdir()
        crash = where / "crash.py"
        crash.write_text("import sys\nprint('boom', file=sys.stderr)\nsys.exit(3)\n")
        quiet = where / "quiet.py"
        quiet.write_text("print('answered from memory')\n")
        rows = [case(id="c1"), case(id="c2")]
        agent = (
            f"  kind: mcp\n  command: [{json.dumps(sys.executable)}, crash.py]\n  timeout_s: 30\n"
        )
        project(where, rows, agent, samples=1)
        proc = toolgate("check", "--config", "toolgate.yml", "--out", "out", cwd=where)
        assert_clean_exit(proc, 4)  # the agent could not start: the run is not valid
        runs = (where / "out" / "runs.jsonl").read_text()
        assert "exited with code 3" in runs and "[pid" not in runs
        (where / "toolgate.yml").write_text(
            (where / "toolgate.yml").read_text().replace("crash.py", "quiet.py")
        )
        proc = toolgate("check", "--config", "toolgate.yml", "--out", "out2", cwd=where)
        assert "Traceback" not in proc.stderr
        runs = (where / "out2" / "runs.jsonl").read_text()
        assert "never connected" in runs and "[pid" not in runs
        outs.append(
            [
                "".join(
                    ln  # the timings (report.md's one timing key) left out
                    for ln in (where / o / f).read_text().splitlines(keepends=True)
                    if "_s`: " not in ln
                )
                for o in ("out", "out2")
                for f in ("report.md", "comment.md")
            ]
        )
    assert outs[0] == outs[1]


def test_peek__the_name_after_arguments_nested_past_any_parser__read_without_recursion() -> None:
    """The scan the host and the bridge run on a body orjson refuses (deeper than 1,024
    levels): it reads the tool name wherever it stands, with no recursion (the
    interpreter's own limit is 1,000 frames)."""
    from gate.replay.mcp.peek import attempts

    body = (
        '\ufeff{"jsonrpc":"2.0","id":"r1","method":"tools/call","params":{"arguments":{"x":'
        + deep(5000)
        + '},"name":"delete\\u005faccount"}}'
    ).encode()
    (got,) = attempts(body)
    assert (got.name, got.request_id) == ("delete_account", "r1")
    assert got.arguments_text.startswith('{"x":[[[') and len(got.arguments_text) > 10_000
    # a batch cut short: the first call whole, the second as far as it went
    cut = (
        b"["
        + call_body(rid=1).encode()
        + b","
        + call_body('"issue_refund"', '{"a":[1,', 2).encode()[:-8]
    )
    assert [(a.name, a.request_id) for a in attempts(cut)] == [
        ("delete_account", 1),
        ("issue_refund", 2),
    ]
