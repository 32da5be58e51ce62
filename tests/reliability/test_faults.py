"""The fault suite: every way the agent, its endpoint, the runner itself or GitHub can fail.

Real processes throughout: ``toolgate run`` / ``score`` / ``check`` as subprocesses, a
command agent that misbehaves on purpose (``agents/fault_agent.py``), the fake
OpenAI-compatible server (``tests/servers/openai_server.py``) and the fake GitHub API
(``tests/servers/github_server.py``), all on 127.0.0.1.

What must hold, for every fault:

* **agent side** — each case-sample gets exactly one recorded outcome (a run, or an
  error naming the kind of failure), the run completes with exit code 0, and scoring sees
  every case;
* **the runner killed** (SIGKILL, several times) — ``--resume`` completes the file with
  nothing already recorded lost or changed, and no case-sample twice;
* **GitHub side** — the verdict, the exit code and results.json are those of a healthy
  GitHub; the failure is reported; the time spent on GitHub stays within its budget.

The figures (faults injected, case-samples planned and recorded, cases lost) are counted
in :data:`FAULT_FIGURES` and printed at the end of the session.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from gate.results import read_results, to_jsonable
from gate.runsfile import read_runs
from tests.reliability import helpers as h
from tests.reliability.fuzzing import FIGURES
from tests.reliability.helpers import TOOL, TrickleServer, command_agent, fault_case, project

FAULT_FIGURES: Counter[str] = FIGURES.setdefault("faults", Counter())
"""faults injected / case-samples planned, recorded, lost / GitHub scenarios."""

COMMAND_FAULTS: dict[str, str | None] = {
    # fault → the error kind its case-samples must be recorded with (None: a clean run)
    "ok": None,
    "stderr_flood": None,
    "bad_args": None,
    "huge_final": None,
    "ansi_final": None,
    "crash_start": "crash",
    "crash_mid": "crash",
    "exit0": "crash",
    "hang": "timeout",
    "hang_mid": "timeout",
    "partial": "timeout",
    "invalid_json": "protocol",
    "nan_output": "protocol",
    "surrogate": "protocol",
    "wrong_type": "protocol",
    "empty_calls": "protocol",
    "flood_line": "protocol",
    "flood_lines": "protocol",
    "agent_error": "agent_error",
    "budget": "step_budget",
}
PASSES = {"ok", "stderr_flood", "huge_final", "ansi_final"}
"""Faults whose case-samples still pass the gate (the agent did the right calls)."""


def records(path: Path) -> list[Any]:
    return [r for _, r in read_runs(path)]


def kind_of(error: str | None) -> str | None:
    return None if error is None else error.split(":", 1)[0]


# ─── agent side: a command agent ──────────────────────────────────────────────


def test_faults__command_agent__every_case_sample_recorded_with_its_outcome(
    tmp_path: Path, pids_dir: Path
) -> None:
    rows = [fault_case(f) for f in COMMAND_FAULTS]
    cfg = project(tmp_path, rows, command_agent(pids_dir))
    t0 = time.monotonic()
    proc = h.toolgate("run", "--config", cfg, "--out", "out", "--no-progress", cwd=tmp_path)
    h.assert_clean_exit(proc, 0)
    assert time.monotonic() - t0 < 90
    runs = records(tmp_path / "out" / "runs.jsonl")
    planned = {(r["id"], s) for r in rows for s in range(2)}
    got = Counter((r.case_id, r.sample) for r in runs)
    assert set(got) == planned and set(got.values()) == {1}, "lost or duplicated case-samples"
    for run in runs:
        fault = run.case_id.rsplit("-", 1)[0]
        assert kind_of(run.error) == COMMAND_FAULTS[fault], (fault, run.error)
    crashed = {r.case_id for r in runs if kind_of(r.error) in ("crash", "protocol", "timeout")}
    # The error says what broke, never which process: a pid would make the reports of
    # identical runs differ (and edit the sticky comment on every push).
    assert all(r.error and "pid" not in r.error for r in runs if r.case_id in crashed)
    huge = next(r for r in runs if r.case_id == "huge_final-0")
    assert huge.final is not None and len(huge.final) == 1_000_000

    # scoring sees every case; a failed case-sample is a failed sample, never dropped
    proc = h.toolgate(
        "score", "--config", cfg, "--runs", "out/runs.jsonl", "--out", "out", cwd=tmp_path
    )
    h.assert_clean_exit(proc, 0)
    results = read_results(tmp_path / "out" / "results.json")
    by_id = {c.id: c for c in results.cases}
    assert set(by_id) == {r["id"] for r in rows}
    for fault in COMMAND_FAULTS:
        assert by_id[f"{fault}-0"].passed is (fault in PASSES), fault
    FAULT_FIGURES["faults injected"] += sum(2 for f in COMMAND_FAULTS if f not in ("ok",))
    FAULT_FIGURES["case-samples planned"] += len(planned)
    FAULT_FIGURES["case-samples recorded"] += len(got)
    FAULT_FIGURES["cases lost"] += len(planned - set(got))


def _orphans_alive(pids: Path) -> list[int]:
    alive = []
    for entry in pids.iterdir():
        try:
            cmdline = Path(f"/proc/{entry.name}/cmdline").read_bytes()
        except OSError:
            continue
        if entry.read_text() == "orphan" and cmdline.startswith(b"sleep\0"):
            alive.append(int(entry.name))
    return alive


def test_faults__worker_stops_reading_or_leaves_a_child__bounded_and_classified(
    tmp_path: Path, pids_dir: Path
) -> None:
    """A worker that stops reading its stdin while a 1 MB tool result is written to it
    (over the 64 KiB pipe buffer) blocked the runner forever; a worker that exits leaving a
    child holding its stdout was recorded as a timeout and the child outlived ToolGate."""
    no_read = fault_case("no_read")
    no_read["tool_responses"] = [{"name": "lookup_order", "response": {"note": "n" * 1_000_000}}]
    rows = [no_read, fault_case("orphan"), fault_case("ok")]
    cfg = project(tmp_path, rows, command_agent(pids_dir, timeout_s=2), samples=1)
    t0 = time.monotonic()
    proc = h.toolgate(
        "run", "--config", cfg, "--out", "out", "--no-progress", cwd=tmp_path, timeout=60
    )
    elapsed = time.monotonic() - t0
    h.assert_clean_exit(proc, 0)
    assert elapsed < 30, elapsed
    by_id = {r.case_id: r for r in records(tmp_path / "out" / "runs.jsonl")}
    assert kind_of(by_id["no_read-0"].error) == "timeout", by_id["no_read-0"].error
    assert "did not read its input" in (by_id["no_read-0"].error or "")
    assert kind_of(by_id["orphan-0"].error) == "crash", by_id["orphan-0"].error
    assert by_id["ok-0"].error is None
    assert any(e.read_text() == "orphan" for e in pids_dir.iterdir())
    assert _orphans_alive(pids_dir) == [], "a child of an exited worker outlived the run"
    FAULT_FIGURES["faults injected"] += 2
    FAULT_FIGURES["case-samples planned"] += 3
    FAULT_FIGURES["case-samples recorded"] += len(by_id)


def test_faults__sigterm_while_a_worker_does_not_read__exits_143_quickly(
    tmp_path: Path, pids_dir: Path
) -> None:
    """The runner blocked in a write to a worker that stopped reading ignored SIGTERM
    (only SIGKILL ended it, and its workers were orphaned)."""
    no_read = fault_case("no_read")
    no_read["tool_responses"] = [{"name": "lookup_order", "response": {"note": "n" * 1_000_000}}]
    cfg = project(tmp_path, [no_read], command_agent(pids_dir, timeout_s=60), samples=1)
    proc = subprocess.Popen(
        [sys.executable, "-m", "gate", "run", "--config", str(cfg), "--out", "out",
         "--no-progress"],
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(h.REPO)},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not _alive(pids_dir):
        time.sleep(0.05)
    time.sleep(1.5)  # the worker sent its call; the runner is writing the 1 MB result
    t_sig = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=30)
    took_ms = round((time.monotonic() - t_sig) * 1000)
    FAULT_FIGURES["worst ms to exit after a signal"] = max(
        FAULT_FIGURES["worst ms to exit after a signal"], took_ms
    )
    assert proc.returncode == 143 and took_ms < 10_000, (proc.returncode, took_ms)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _alive(pids_dir):
        time.sleep(0.1)
    assert _alive(pids_dir) == []
    FAULT_FIGURES["faults injected"] += 1


def test_faults__late_extra_line__never_the_next_cases_answer(
    tmp_path: Path, pids_dir: Path
) -> None:
    """A worker that answers twice: the second, late line carries its case id. It is
    never the next case's answer (it once was) nor its failure (it was then charged to
    the next case, which became a likely regression): the line is dropped, the next case
    is answered as if it never came, and the worker is replaced after it."""
    rows = [fault_case("late_line"), fault_case("ok")]
    agent = command_agent(pids_dir).replace("workers: 4", "workers: 1")
    cfg = project(tmp_path, rows, agent, samples=1, extra="")
    cfg.write_text(cfg.read_text().replace("concurrency: 4", "concurrency: 1"))
    proc = h.toolgate("run", "--config", cfg, "--out", "out", "--no-progress", cwd=tmp_path)
    h.assert_clean_exit(proc, 0)
    by_id = {r.case_id: r for r in records(tmp_path / "out" / "runs.jsonl")}
    assert by_id["late_line-0"].final == "done"
    nxt = by_id["ok-0"]
    assert nxt.final != "stale", nxt
    assert nxt.error is None, nxt.error
    FAULT_FIGURES["faults injected"] += 1
    FAULT_FIGURES["case-samples planned"] += 2
    FAULT_FIGURES["case-samples recorded"] += len(by_id)


def test_faults__runner_killed_repeatedly__resume_completes_nothing_lost_nothing_twice(
    tmp_path: Path, pids_dir: Path
) -> None:
    faults = ["ok", "crash_mid", "invalid_json", "agent_error", "exit0", "bad_args"]
    rows = [fault_case(f, n) for n in range(8) for f in faults]
    cfg = project(tmp_path, rows, command_agent(pids_dir, sleep_s=0.03), samples=2)
    planned = {(r["id"], s) for r in rows for s in range(2)}
    runs_file = tmp_path / "out" / "runs.jsonl"
    kept = b""
    kills = 0
    for stop_at in (15, 40, 70):
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gate",
                "run",
                "--config",
                str(cfg),
                "--out",
                "out",
                "--no-progress",
                *(["--resume"] if kills else []),
            ],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            if runs_file.exists() and runs_file.read_bytes().count(b"\n") >= stop_at:
                break
            time.sleep(0.02)
        assert proc.poll() is None, "the run finished before it could be killed"
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
        kills += 1
        now = runs_file.read_bytes()
        assert now.startswith(kept), "a kill changed lines recorded before it"
        kept = now[: now.rfind(b"\n") + 1]  # a torn last line is dropped by --resume
        lines = [r for r in kept.split(b"\n") if r]
        keys = [(json.loads(x)["case_id"], json.loads(x)["sample"]) for x in lines]
        assert len(keys) == len(set(keys)), "a case-sample recorded twice"
    proc2 = h.toolgate(
        "run", "--config", cfg, "--out", "out", "--resume", "--no-progress", cwd=tmp_path
    )
    h.assert_clean_exit(proc2, 0)
    final = runs_file.read_bytes()
    assert final.startswith(kept), "resume changed what was recorded before the kills"
    got = Counter((r.case_id, r.sample) for r in records(runs_file))
    assert set(got) == planned and set(got.values()) == {1}
    FAULT_FIGURES["faults injected"] += kills + sum(
        1 for r in rows for _ in range(2) if not r["id"].startswith("ok")
    )
    FAULT_FIGURES["runner kills (SIGKILL)"] += kills
    FAULT_FIGURES["case-samples planned"] += len(planned)
    FAULT_FIGURES["case-samples recorded"] += len(got)
    FAULT_FIGURES["cases lost"] += len(planned - set(got))


# ─── agent side: an OpenAI-compatible endpoint ────────────────────────────────

OPENAI_FAULTS: dict[str, str | None] = {
    "ok": None,
    "429_then_ok": None,
    "500_then_ok": None,
    "truncated_then_ok": None,
    "cut_body_then_ok": None,
    "sse_cut_then_ok": None,
    "drop_then_ok": None,
    "bad_args": None,
    "huge_args": None,
    "429_always": "http",
    "500_always": "http",
    "502_always": "http",
    "truncated_always": "http",
    "cut_body_always": "http",
    "sse_cut_always": "http",
    "drop_always": "http",
    "stall": "http",
    "malformed_json": "payload",
    "no_choices": "payload",
    "error_200": "payload",
    "nan_body": "payload",
    "html_body": "payload",
    "400": "http",
    "flood_body": "http",
}


FLOOD = b'{"choices": [{"message": {"content": "' + b"x" * (40 << 20) + b'"}}]}'


def _openai_script() -> Any:
    from tests.servers.openai_server import Response, chat_completion, tool_call

    attempts: Counter[str] = Counter()

    def script(request: Any, index: int) -> Response:
        messages = request["messages"] if isinstance(request, dict) else []
        user = next((m["content"] for m in messages if m.get("role") == "user"), "")
        fault = user.split("FAULT=", 1)[1].split()[0] if "FAULT=" in user else "ok"
        key = f"{user}|{len(messages)}"
        attempts[key] += 1
        first = attempts[key] == 1
        answered = any(m.get("role") == "tool" for m in messages)
        ok = (
            Response(body=chat_completion(content="done"))
            if answered
            else Response(
                body=chat_completion(
                    tool_calls=[tool_call("lookup_order", {"order_id": "ord_10482"})]
                )
            )
        )
        if fault.endswith("_then_ok") and not first:
            return ok
        kind = fault.removesuffix("_then_ok").removesuffix("_always")
        if kind == "429":
            return Response(429, {"error": {"message": "slow down"}}, {"Retry-After": "0"})
        if kind in ("500", "502"):
            return Response(int(kind), {"error": {"message": "upstream"}})
        if kind == "400":
            return Response(400, {"error": {"message": "bad request"}})
        if kind == "truncated":
            return Response(body=chat_completion(content="x" * 500), truncate_to=40)
        if kind == "drop":
            return Response(drop=True)
        if kind == "stall":
            return Response(body=chat_completion(content="late"), delay_s=5.0)
        if kind == "malformed_json":
            return Response(body=b'{"choices": [}')
        if kind == "cut_body":  # a full-length body whose JSON is cut short
            return Response(body=json.dumps(ok.body).encode()[:30])
        if kind == "sse_cut":  # a stream cut in the middle of its first event
            event = {"choices": [{"index": 0, "delta": {"content": "done"}}]}
            return Response(
                body=f"data: {json.dumps(event)}"[:25].encode(),
                headers={"Content-Type": "text/event-stream"},
            )
        if kind == "no_choices":
            return Response(body={"id": "x", "object": "chat.completion"})
        if kind == "error_200":
            return Response(body={"error": {"message": "overloaded"}})
        if kind == "nan_body":
            return Response(body=b'{"choices": [{"message": {"content": NaN}}]}')
        if kind == "flood_body":  # 40 MB: past the 32 MiB a response may have
            return Response(body=FLOOD)
        if kind == "html_body":
            return Response(body=b"<html><body>502 Bad Gateway</body></html>")
        if kind == "bad_args" and not answered:
            return Response(
                body=chat_completion(tool_calls=[tool_call("lookup_order", "{not json")])
            )
        if kind == "huge_args" and not answered:
            args = json.dumps({"order_id": "ord_10482", "note": "n" * 1_000_000})
            return Response(body=chat_completion(tool_calls=[tool_call("lookup_order", args)]))
        return ok

    return script


def test_faults__openai_endpoint__every_case_sample_recorded_and_retries_recover(
    tmp_path: Path,
) -> None:
    from tests.servers.openai_server import FakeOpenAIServer

    rows = [fault_case(f) for f in OPENAI_FAULTS]
    with FakeOpenAIServer(_openai_script()) as srv:
        agent = (
            "  kind: openai\n  model: fake-model\n"
            f"  base_url: {srv.base_url}\n  api_key_env: TOOLGATE_FAULTS_NO_KEY\n"
            "  timeout_s: 1\n  max_retries: 2\n  step_budget: 3\n"
        )
        cfg = project(tmp_path, rows, agent)
        proc = h.toolgate("run", "--config", cfg, "--out", "out", "--no-progress", cwd=tmp_path)
        h.assert_clean_exit(proc, 0)
        n_requests = len(srv.requests)
    runs = records(tmp_path / "out" / "runs.jsonl")
    planned = {(r["id"], s) for r in rows for s in range(2)}
    got = Counter((r.case_id, r.sample) for r in runs)
    assert set(got) == planned and set(got.values()) == {1}
    for run in runs:
        fault = run.case_id.rsplit("-", 1)[0]
        assert kind_of(run.error) == OPENAI_FAULTS[fault], (fault, run.error)
        if OPENAI_FAULTS[fault] is None:
            assert run.calls and run.final == "done", (fault, run)
    bad = next(r for r in runs if r.case_id == "bad_args-0")
    assert bad.calls[0].parse_ok is False and bad.calls[0].raw_arguments == "{not json"
    assert n_requests > len(planned)  # retries happened
    FAULT_FIGURES["faults injected"] += sum(2 for f in OPENAI_FAULTS if f != "ok")
    FAULT_FIGURES["case-samples planned"] += len(planned)
    FAULT_FIGURES["case-samples recorded"] += len(got)
    FAULT_FIGURES["cases lost"] += len(planned - set(got))


# ─── GitHub side ──────────────────────────────────────────────────────────────

TOKEN = "ghs_faultsuite000000000000000000000000000"


def _replay_project(tmp_path: Path, *, passing: bool) -> Path:
    """A replay project whose gate passes (or fails, on a must-not-call)."""
    rows = [fault_case("ok", n) for n in range(3)]
    for r in rows:
        r["available_tools"] = [TOOL, {"name": "delete_account", "parameters": {"type": "object"}}]
        r["must_not_call"] = ["delete_account"]
    lines = []
    for r in rows:
        calls = [{"id": "c1", "name": "lookup_order", "arguments": {"order_id": "ord_10482"}}]
        if not passing and r["id"] == "ok-1":
            calls.append({"id": "c2", "name": "delete_account", "arguments": {}})
        lines.append({"case_id": r["id"], "sample": 0, "turns": [{"calls": calls}], "final": "ok"})
    (tmp_path / "runs.jsonl").write_bytes(h.jsonl_bytes(lines))
    return project(
        tmp_path,
        rows,
        "  kind: replay\n  runs: runs.jsonl\n",
        samples=1,
        extra="gates:\n  - metric: call_accuracy\n    min: 0.9\nreporting:\n  out: out\n",
    )


def _actions_env(tmp_path: Path, api_url: str, pr: int = 7) -> dict[str, str]:
    event = tmp_path / "event.json"
    event.write_text(
        json.dumps(
            {"pull_request": {"number": pr, "base": {"sha": "b" * 40}, "head": {"sha": "h" * 40}}}
        )
    )
    (tmp_path / "gh_output").write_text("")
    (tmp_path / "gh_summary").write_text("")
    return {
        "GITHUB_ACTIONS": "true",
        "GITHUB_REPOSITORY": "octo/agent",
        "GITHUB_API_URL": api_url,
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_OUTPUT": str(tmp_path / "gh_output"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "gh_summary"),
        "GITHUB_RUN_ID": "42",
        "TOOLGATE_GITHUB_BUDGET_S": "6",
    }


def _without_timing(path: Path) -> dict[str, Any]:
    data = to_jsonable(read_results(path))
    data.pop("timing", None)
    return data


GITHUB_FAULTS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    # scenario → [(route, Fault kwargs)], every call of the route
    "healthy": [],
    "500 listing comments": [("list_comments", {"status": 500})],
    "502 creating the comment": [("create_comment", {"status": 502})],
    "502 after the comment landed": [("create_comment", {"status": 502, "apply": True})],
    "403 secondary rate limit, Retry-After 3600": [
        (
            "get_issue",
            {
                "status": 403,
                "body": {"message": "You have exceeded a secondary rate limit."},
                "headers": {"Retry-After": "3600"},
            },
        )
    ],
    "404 for the pull request": [("get_issue", {"status": 404, "body": {"message": "Not Found"}})],
    "401 bad credentials": [("get_repo", {"status": 401, "body": {"message": "Bad credentials"}})],
    "timeout (a stalled API)": [("get_repo", {"delay": 30.0})],
    "200 with an HTML body": [("list_comments", {"status": 200, "body": b"<html>oops</html>"})],
}


def _check_with_github(
    tmp_path: Path, scenario: str, passing: bool
) -> tuple[subprocess.CompletedProcess[str], float, int, Path]:
    """``toolgate check`` in a fresh project against a fake GitHub with the scenario's
    faults: (the process, seconds, comments on the PR, the project folder)."""
    from tests.servers.github_server import Fault, GitHubServer

    work = tmp_path / f"{'pass' if passing else 'fail'}-{list(GITHUB_FAULTS).index(scenario)}"
    work.mkdir(parents=True)
    cfg = _replay_project(work, passing=passing)
    with GitHubServer() as gh:
        gh.add_token(TOKEN, "github-actions[bot]", kind="app")
        gh.add_pull(7)
        for route, kwargs in GITHUB_FAULTS[scenario]:
            gh.inject(route, Fault(**kwargs))
        t0 = time.monotonic()
        proc = h.toolgate(
            "check",
            "--config",
            cfg,
            "--baseline",
            "none",
            "--no-progress",
            cwd=work,
            env=_actions_env(work, gh.api_url),
            timeout=120,
        )
        elapsed = time.monotonic() - t0
        comments = len(gh.comments_on(7))
    return proc, elapsed, comments, work


@pytest.mark.parametrize(
    ("passing", "scenarios"),
    [
        (True, list(GITHUB_FAULTS)),
        (
            False,
            [
                "healthy",
                "502 creating the comment",
                "403 secondary rate limit, Retry-After 3600",
                "timeout (a stalled API)",
            ],
        ),
    ],
    ids=["gate-passes", "gate-fails"],
)
def test_faults__github_failures__verdict_exit_code_and_results_unchanged(
    tmp_path: Path, passing: bool, scenarios: list[str]
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=3) as pool:
        done = list(pool.map(lambda sc: _check_with_github(tmp_path, sc, passing), scenarios))
    expected_code = 0 if passing else 1
    reference: dict[str, Any] | None = None
    for scenario, (proc, elapsed, comments, work) in zip(scenarios, done, strict=True):
        h.assert_clean_exit(proc, expected_code)
        assert elapsed < 6 + 20, (scenario, elapsed)  # the GitHub budget, plus start-up
        results = _without_timing(work / "out" / "results.json")
        assert results["verdict"]["passed"] is passing
        if scenario == "healthy":
            reference = results
        else:
            assert reference is not None
            assert results == reference, f"{scenario}: results differ from a healthy GitHub"
            FAULT_FIGURES["faults injected"] += 1
            FAULT_FIGURES["GitHub failure scenarios"] += 1
        if scenario in ("healthy", "502 after the comment landed"):
            assert comments == 1, (scenario, comments)
        else:
            assert comments == 0, (scenario, comments)
            assert "::warning" in proc.stdout, (scenario, proc.stdout[-2000:])
            # the outputs and the step summary are still written
            assert "verdict=" in (work / "gh_output").read_text()
            assert (work / "gh_summary").read_text().strip()


@pytest.mark.parametrize("mode", ["length", "close", "headers"])
def test_faults__openai_endpoint_trickles_bytes__case_sample_times_out(
    tmp_path: Path, mode: str
) -> None:
    """A server that sends one byte every 0.2 s never trips a per-read timeout of 1 s: the
    run hung (found by this suite) until the whole exchange got a bound — on a kept-alive
    connection, on a closing one (``Connection: close`` without a length: the watchdog
    shut a socket the connection no longer held, 50-90 s), and while the headers trickle
    (a cut-off 200 was returned as a non-JSON payload)."""
    rows = [fault_case("ok", n) for n in range(2)]
    with TrickleServer(mode=mode) as srv:
        agent = (
            f"  kind: openai\n  model: m\n  base_url: http://127.0.0.1:{srv.port}/v1\n"
            "  api_key_env: TOOLGATE_FAULTS_NO_KEY\n  timeout_s: 1\n  max_retries: 1\n"
        )
        cfg = project(tmp_path, rows, agent, samples=1)
        t0 = time.monotonic()
        proc = h.toolgate(
            "run", "--config", cfg, "--out", "out", "--no-progress", cwd=tmp_path, timeout=60
        )
        elapsed = time.monotonic() - t0
    h.assert_clean_exit(proc, 0)
    assert elapsed < 20, elapsed
    runs = records(tmp_path / "out" / "runs.jsonl")
    assert sorted(r.case_id for r in runs) == ["ok-0", "ok-1"]
    assert all(kind_of(r.error) == "http" for r in runs), [r.error for r in runs]
    assert all("no answer within" in (r.error or "") for r in runs), [r.error for r in runs]
    FAULT_FIGURES["faults injected"] += 2
    FAULT_FIGURES["case-samples planned"] += 2
    FAULT_FIGURES["case-samples recorded"] += len(runs)


def _alive(pids: Path) -> list[int]:
    alive = []
    for entry in pids.iterdir():
        try:
            if b"fault_agent.py" in Path(f"/proc/{entry.name}/cmdline").read_bytes():
                alive.append(int(entry.name))
        except OSError:
            continue
    return alive


def _default_sigint() -> None:
    """A shell that starts a job in the background makes it ignore SIGINT, and a child
    inherits that: give the gate the default disposition a terminal's Ctrl-C meets."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_faults__runner_terminated__workers_stopped_and_resume_completes(
    tmp_path: Path, pids_dir: Path, sig: signal.Signals
) -> None:
    """``docker stop`` and a cancelled job send SIGTERM: the runner died on the spot and
    left hanging agent workers running (found by this suite); now it unwinds like Ctrl-C."""
    rows = [fault_case("ok", n) for n in range(6)] + [fault_case("hang", n) for n in range(4)]
    cfg = project(tmp_path, rows, command_agent(pids_dir, timeout_s=60), samples=1)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gate",
            "run",
            "--config",
            str(cfg),
            "--out",
            "out",
            "--no-progress",
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_sigint,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len(_alive(pids_dir)) < 4:
        time.sleep(0.05)
    time.sleep(0.5)  # the ok cases are recorded; the hanging ones wait for their answer
    t_sig = time.monotonic()
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    took_ms = round((time.monotonic() - t_sig) * 1000)
    FAULT_FIGURES["worst ms to exit after a signal"] = max(
        FAULT_FIGURES["worst ms to exit after a signal"], took_ms
    )
    assert proc.returncode == (143 if sig == signal.SIGTERM else 130), err
    assert "Traceback" not in err
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _alive(pids_dir):
        time.sleep(0.1)
    assert not _alive(pids_dir), "agent workers left running after the runner stopped"
    kept = (tmp_path / "out" / "runs.jsonl").read_bytes()
    assert kept.endswith(b"\n") and kept.count(b"\n") >= 1
    # the hanging cases would hang again: let them time out quickly on resume
    cfg.write_text(cfg.read_text().replace("timeout_s: 60", "timeout_s: 1"))
    again = h.toolgate(
        "run", "--config", cfg, "--out", "out", "--resume", "--no-progress", cwd=tmp_path
    )
    h.assert_clean_exit(again, 0)
    final = (tmp_path / "out" / "runs.jsonl").read_bytes()
    assert final.startswith(kept)
    got = Counter((r.case_id, r.sample) for r in records(tmp_path / "out" / "runs.jsonl"))
    assert set(got) == {(r["id"], 0) for r in rows} and set(got.values()) == {1}
    FAULT_FIGURES["faults injected"] += 1 + 4
    FAULT_FIGURES["case-samples planned"] += len(rows)
    FAULT_FIGURES["case-samples recorded"] += len(got)
