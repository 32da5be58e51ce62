"""Infrastructure failures are not model failures: a run that decided nothing says so.

Real processes: ``toolgate check`` as a subprocess, a command agent whose script is
missing, the fake OpenAI-compatible server on 127.0.0.1 failing on purpose.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from gate.errors import ExitCode
from gate.results import read_results
from tests.reliability import helpers as h
from tests.reliability.helpers import TOOL, fault_case, project
from tests.reliability.test_faults import FAULT_FIGURES, records
from tests.servers.openai_server import FakeOpenAIServer, Response, chat_completion, tool_call


def test_check__agent_script_missing__refused_before_the_first_case_exit_2(
    tmp_path: Path,
) -> None:
    rows = [fault_case("ok", n) for n in range(3)]
    agent = (
        "  kind: command\n"
        f"  command: {json.dumps([sys.executable, str(tmp_path / 'no_such_agent.py')])}\n"
        "  workers: 2\n  timeout_s: 5\n"
    )
    cfg = project(tmp_path, rows, agent)
    proc = h.toolgate("check", "--config", cfg, "--out", "out", "--no-progress", cwd=tmp_path)
    h.assert_clean_exit(proc, ExitCode.BAD_INPUT)
    assert "agent.command" in proc.stderr and "no_such_agent.py" in proc.stderr, proc.stderr
    assert "toolgate.yml:" in proc.stderr, "the message names the config's line"
    assert not (tmp_path / "out" / "runs.jsonl").exists(), "no case ran"


def test_check__agent_cannot_start__verdict_error_exit_4_with_its_stderr(
    tmp_path: Path,
) -> None:
    """The script is there but dies at start, the same way for every case-sample: the run
    is not valid (never "the agent got worse"), and the agent's own words are shown."""
    rows = [fault_case("ok", n) for n in range(3)]
    script = tmp_path / "broken_agent.py"
    script.write_text(
        "import sys\nsys.stderr.write('agent: no_such_module_for_toolgate is not installed\\n')\n"
        "sys.exit(1)\n",
        "utf-8",
    )
    agent = (
        "  kind: command\n"
        f"  command: {json.dumps([sys.executable, str(script)])}\n"
        "  workers: 2\n  timeout_s: 5\n"
    )
    cfg = project(tmp_path, rows, agent)
    proc = h.toolgate("check", "--config", cfg, "--out", "out", "--no-progress", cwd=tmp_path)
    h.assert_clean_exit(proc, ExitCode.RUN_INVALID)
    # the agent's own words reach the terminal
    assert "no_such_module_for_toolgate" in proc.stdout, proc.stdout
    assert "ERROR" in proc.stdout and "FAILED" not in proc.stdout
    results = read_results(tmp_path / "out" / "results.json")
    assert results.run_error is not None and "failed the same way" in results.run_error.reason
    assert results.verdict is not None and results.verdict.passed is False
    comment = (tmp_path / "out" / "comment.md").read_text()
    assert "This run is not valid" in comment
    assert "gate(s) missed" not in comment and "Regress" not in comment
    FAULT_FIGURES["faults injected"] += 6
    FAULT_FIGURES["case-samples planned"] += 6
    FAULT_FIGURES["case-samples recorded"] += len(records(tmp_path / "out" / "runs.jsonl"))


def _openai_agent(srv: FakeOpenAIServer) -> str:
    return (
        "  kind: openai\n  model: fake-model\n"
        f"  base_url: {srv.base_url}\n  api_key_env: TOOLGATE_FAULTS_NO_KEY\n"
        "  timeout_s: 2\n  max_retries: 1\n"
    )


def test_check__endpoint_fails_one_case__missing_counted_verdict_error(tmp_path: Path) -> None:
    """The endpoint answers 503 to every request of one case: its samples are missing —
    not failures that would read as a regression, not passes — and the run is not valid."""

    def script(req: Any, i: int) -> Response:
        user = next(m["content"] for m in req["messages"] if m["role"] == "user")
        if "FAULT=down" in user:
            return Response(503, {"error": {"message": "overloaded"}}, {"Retry-After": "0"})
        if any(m["role"] == "tool" for m in req["messages"]):
            return Response(body=chat_completion(content="done"))
        call = tool_call("lookup_order", {"order_id": "ord_10482"})
        return Response(body=chat_completion(tool_calls=[call]))

    rows = [fault_case("ok", 0), fault_case("ok", 1), fault_case("down", 0)]
    with FakeOpenAIServer(script) as srv:
        cfg = project(tmp_path, rows, _openai_agent(srv))
        proc = h.toolgate("check", "--config", cfg, "--out", "out", "--no-progress", cwd=tmp_path)
    h.assert_clean_exit(proc, ExitCode.RUN_INVALID)
    runs = records(tmp_path / "out" / "runs.jsonl")
    line = next(
        json.loads(x)
        for x in (tmp_path / "out" / "runs.jsonl").read_text().splitlines()
        if '"down-0"' in x
    )
    assert line["error_class"] == "infrastructure"
    results = read_results(tmp_path / "out" / "results.json")
    assert results.missing is not None
    assert (results.missing.count, results.missing.planned) == (2, 6)
    assert results.missing.per_case == {"down-0": 2} and results.missing.by_reason == {"http": 2}
    assert results.run_error is not None and "2 of 6 case-sample(s) are missing" in (
        results.run_error.reason
    )
    comment = (tmp_path / "out" / "comment.md").read_text()
    assert "This run is not valid" in comment and "Missing case-samples: 2 of 6" in comment
    assert "Missing case-samples: 2 of 6 (http 2)." in proc.stdout
    FAULT_FIGURES["faults injected"] += 2
    FAULT_FIGURES["case-samples planned"] += 6
    FAULT_FIGURES["case-samples recorded"] += len(runs)


def test_check__forbidden_call_then_endpoint_fails__hard_failure_stands_exit_1(
    tmp_path: Path,
) -> None:
    """The model makes the must-not-call call, then the endpoint fails for good: that
    sample is not missing — its hard failure fails the gate."""

    def script(req: Any, i: int) -> Response:
        if any(m["role"] == "tool" for m in req["messages"]):
            return Response(500, {"error": {"message": "upstream"}})
        call = tool_call("lookup_order", {"order_id": "ord_10482"})
        return Response(body=chat_completion(tool_calls=[call]))

    row = fault_case("ok", 0) | {"must_not_call": ["lookup_order"], "expected_tool_calls": []}
    row["expected_no_tool"] = True
    row["available_tools"] = [TOOL]
    with FakeOpenAIServer(script) as srv:
        cfg = project(tmp_path, [row], _openai_agent(srv), samples=1)
        proc = h.toolgate("check", "--config", cfg, "--out", "out", "--no-progress", cwd=tmp_path)
    h.assert_clean_exit(proc, ExitCode.GATE_FAILED)
    results = read_results(tmp_path / "out" / "results.json")
    assert results.run_error is None and results.missing is None
    assert [hf.kind for hf in results.hard_failures] == ["must_not_call"]
    FAULT_FIGURES["faults injected"] += 1
    FAULT_FIGURES["case-samples planned"] += 1
    FAULT_FIGURES["case-samples recorded"] += 1


# ─── missing samples below max_missing: not sampled, never a failure nor a pass ──

_HTTP = "http: gave up after 2 attempts: HTTP 503: overloaded"


def _replay_project(
    root: Path, plan: dict[str, list[bool | None]], *, samples: int, extra: str = ""
) -> Path:
    """A replay run of ``plan``: case → per sample, True (the expected call), False (no
    call: a failure) or None (missing: the endpoint failed it)."""
    root.mkdir(parents=True, exist_ok=True)
    lines = []
    for cid, outcomes in plan.items():
        for s, ok in enumerate(outcomes[:samples]):
            if ok is None:
                lines.append({"case_id": cid, "sample": s, "turns": [], "error": _HTTP})
            elif ok:
                call = {"name": "lookup_order", "arguments": {"order_id": "ord_10482"}}
                lines.append({"case_id": cid, "sample": s, "turns": [{"calls": [call]}],
                              "final": "shipped"})  # fmt: skip
            else:
                lines.append({"case_id": cid, "sample": s, "turns": [], "final": "no idea"})
    (root / "runs.jsonl").write_bytes(h.jsonl_bytes(lines))
    rows = [fault_case("ok", 0) | {"id": cid} for cid in plan]
    return project(root, rows, "  kind: replay\n  runs: runs.jsonl\n", samples=samples,
                   extra=extra)  # fmt: skip


def _decided(root: Path, cfg: Path, *more: str) -> tuple[int, Any]:
    proc = h.toolgate("check", "--config", cfg, "--out", "out", "--no-progress", *more, cwd=root)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr[-2000:]
    return proc.returncode, read_results(root / "out" / "results.json")


def _shape(results: Any) -> tuple[Any, ...]:
    """What the verdict rests on: the verdict, every case's outcome, the gated means."""
    v = results.verdict
    return (
        v.passed,
        v.summary,
        tuple(v.reasons),
        tuple((c.id, c.passed, c.pass_rate, c.flaky) for c in results.cases),
        tuple((k, results.metrics[k].mean) for k in sorted(results.metrics)),
    )


def test_check__missing_samples_within_max_missing__same_verdict_as_without_them(
    tmp_path: Path,
) -> None:
    """Sample 2 of two cases is missing (under max_missing): the verdict, each case's
    outcome and every mean are those of the run of samples 0 and 1 alone — the passing
    case stays a stable pass (not flaky), the failing case a failure (never a pass)."""
    plan: dict[str, list[bool | None]] = {
        "good": [True, True, None],
        "bad": [False, False, None],
        "fine": [True, True, True],
    }
    with_gaps = _replay_project(tmp_path / "a", plan, samples=3, extra="max_missing: 0.25\n")
    code_a, a = _decided(tmp_path / "a", with_gaps)
    without = _replay_project(tmp_path / "b", {k: v[:2] for k, v in plan.items()}, samples=2)
    code_b, b = _decided(tmp_path / "b", without)
    assert a.missing is not None and (a.missing.count, a.missing.planned) == (2, 9)
    assert a.run_error is None and code_a == code_b
    assert _shape(a) == _shape(b)
    # Against a base history (the run without gaps): the test sees 2 observations of each
    # gapped case, the same as the run without them.
    base = tmp_path / "base.json"
    base.write_bytes((tmp_path / "b" / "out" / "results.json").read_bytes())
    code_a, a = _decided(tmp_path / "a", with_gaps, "--baseline", str(base))
    code_b, b = _decided(tmp_path / "b", without, "--baseline", str(base))
    assert code_a == code_b and _shape(a) == _shape(b)
    tests = [(c.id, c.test.outcome if c.test else None) for c in a.cases]
    assert tests == [(c.id, c.test.outcome if c.test else None) for c in b.cases]
    assert a.comparison is not None and b.comparison is not None
    assert [(f.case_id, f.kind) for f in a.comparison.flips] == [
        (f.case_id, f.kind) for f in b.comparison.flips
    ]
    cases = {c.id: c for c in a.cases}
    assert cases["good"].passed and not cases["good"].flaky and cases["good"].pass_rate == 1.0
    assert not cases["bad"].passed and cases["bad"].pass_rate == 0.0
    report = (tmp_path / "a" / "out" / "report.md").read_text()
    assert "Missing case-samples: 2 of 9 \\(http 2\\)." in report
    FAULT_FIGURES["faults injected"] += 2
    FAULT_FIGURES["case-samples planned"] += 9
    FAULT_FIGURES["case-samples recorded"] += 9


def test_check__missing_sample_within_max_missing__not_sampled_in_every_report(
    tmp_path: Path,
) -> None:
    """A missing sample is *not sampled* wherever a case is shown: the passing case passes
    2 of 2 samples (not 3 of 3, not with the missing sample's checks as failing ones),
    and JUnit counts no failure for it."""
    plan: dict[str, list[bool | None]] = {"good": [True, True, None], "bad": [False, False, False]}
    cfg = _replay_project(tmp_path, plan, samples=3, extra="max_missing: 0.25\n")
    _, results = _decided(tmp_path, cfg)
    assert results.run_error is None and results.missing is not None
    good = next(c for c in results.cases if c.id == "good")
    assert [s.failed_checks for s in good.samples] == [[], [], []]
    report = (tmp_path / "out" / "report.md").read_text()
    assert "| `good` | ✅ | 2/2 |  | — | 1 |" in report, report
    # two of its three samples were sampled: pass^3 leaves it out (the bad case: 0)
    assert results.pass_hat == [0.5, 0.5, 0.0]
    junit = (tmp_path / "out" / "junit.xml").read_text()
    assert "pass rate 1.000 over 2 samples" in junit
    assert "<failure" not in junit.split('name="good"', 1)[1].split("</testcase>", 1)[0]


def test_check__case_with_every_sample_missing__not_sampled_never_a_regression(
    tmp_path: Path,
) -> None:
    """A case the endpoint failed on every sample is *not sampled*: listed apart, never a
    regression against a baseline where it passed, never a pass."""
    passing: dict[str, list[bool | None]] = {"one": [True, True], "two": [True, True]}
    base_cfg = _replay_project(tmp_path / "base", passing, samples=2)
    code, _ = _decided(tmp_path / "base", base_cfg)
    assert code == ExitCode.PASS
    baseline = tmp_path / "base" / "out" / "results.json"
    head_cfg = _replay_project(
        tmp_path / "head", {"one": [True, True], "two": [None, None]}, samples=2,
        extra="max_missing: 0.5\n",
    )  # fmt: skip
    code, head = _decided(tmp_path / "head", head_cfg, "--baseline", str(baseline))
    assert head.run_error is None and head.missing is not None
    assert head.missing.per_case == {"two": 2}
    two = next(c for c in head.cases if c.id == "two")
    assert not two.passed  # never a pass from missing samples
    assert head.comparison is not None
    assert not [f for f in head.comparison.flips if f.case_id == "two"]  # nor a regression
    assert code == ExitCode.PASS, head.verdict
    report = (tmp_path / "head" / "out" / "report.md").read_text()
    assert "Not sampled: 1 case \\(`two`\\) lost every sample." in report
    FAULT_FIGURES["faults injected"] += 2
    FAULT_FIGURES["case-samples planned"] += 4
    FAULT_FIGURES["case-samples recorded"] += 4


# ─── a python agent that ends, crashes or stalls its process ──────────────────

_PY_AGENT = """
import ctypes, os, re, sys


def run(messages, tools, call_tool, case_id):
    fault = re.search(r"FAULT=(\\w+)", messages[-1]["content"]).group(1)
    call_tool("lookup_order", {"order_id": "ord_10482"})
    if fault == "os_exit":
        os._exit(0)
    if fault == "segfault":
        ctypes.string_at(0)
    if fault == "sys_exit":
        sys.exit(0)
    if fault == "endless":
        while True:
            pass
    return "shipped"
"""


def test_check__python_agent_exits_crashes_or_loops__recorded_per_case_sample(
    tmp_path: Path,
) -> None:
    """os._exit(0), a segfault, sys.exit() and an endless loop inside a python agent's
    callable: each costs its own case-sample (crash, crash, exception, timeout), the others
    pass, and toolgate check decides and writes its results — never exit 0 without them."""
    (tmp_path / "py_fault_agent.py").write_text(_PY_AGENT, "utf-8")
    faults = {"os_exit": "crash", "segfault": "crash", "sys_exit": "exception",
              "endless": "timeout", "ok": None}  # fmt: skip
    rows = [fault_case(f, 0) for f in faults]
    agent = '  kind: python\n  callable: "py_fault_agent:run"\n  path: ["."]\n  timeout_s: 2\n'
    cfg = project(tmp_path, rows, agent)
    proc = h.toolgate("check", "--config", cfg, "--out", "out", "--no-progress", cwd=tmp_path)
    h.assert_clean_exit(proc, ExitCode.PASS)  # no gates: the faults are failed cases
    runs = records(tmp_path / "out" / "runs.jsonl")
    assert len(runs) == 2 * len(faults)
    for r in runs:
        want = faults[r.case_id.rsplit("-", 1)[0]]
        assert (r.error.split(":", 1)[0] if r.error else None) == want, (r.case_id, r.error)
        assert [c.name for c in r.calls] == ["lookup_order"]  # the call before the fault
    results = read_results(tmp_path / "out" / "results.json")
    assert results.run_error is None and results.missing is None
    FAULT_FIGURES["faults injected"] += 2 * (len(faults) - 1)
    FAULT_FIGURES["case-samples planned"] += 2 * len(faults)
    FAULT_FIGURES["case-samples recorded"] += len(runs)


_COUNTING_AGENT = """
import os

with open(os.environ["IMPORTS_LOG"], "a", encoding="utf-8") as log:
    log.write(f"{os.getpid()}\\n")


def run(messages, tools, call_tool, case_id):
    call_tool("lookup_order", {"order_id": "ord_10482"})
    return "shipped"
"""


def test_check__python_agent__its_module_imported_once_per_worker(tmp_path: Path) -> None:
    """``check`` does not start a worker of its own to see that the callable imports (the
    adapter's first worker tells, before the first case): with one worker, the agent's
    module is imported once, not twice."""
    (tmp_path / "counting_agent.py").write_text(_COUNTING_AGENT, "utf-8")
    log = tmp_path / "imports.log"
    rows = [fault_case("ok", 0), fault_case("ok", 1)]
    agent = '  kind: python\n  callable: "counting_agent:run"\n  path: ["."]\n'
    cfg = (
        project(tmp_path, rows, agent, extra="")
        .read_text()
        .replace("concurrency: 4", "concurrency: 1")
    )
    (tmp_path / "toolgate.yml").write_text(cfg)
    proc = h.toolgate(
        "check", "--config", "toolgate.yml", "--out", "out", "--no-progress",
        cwd=tmp_path, env={"IMPORTS_LOG": str(log)},
    )  # fmt: skip
    h.assert_clean_exit(proc, ExitCode.PASS)
    assert len(log.read_text("utf-8").split()) == 1


def test_check__python_callable_cannot_import__exit_2_at_the_config_line(tmp_path: Path) -> None:
    rows = [fault_case("ok", 0)]
    agent = '  kind: python\n  callable: "no_such_module_xyz:run"\n'
    project(tmp_path, rows, agent)
    proc = h.toolgate("check", "--config", "toolgate.yml", "--out", "out", "--no-progress",
                      cwd=tmp_path)  # fmt: skip
    assert proc.returncode == ExitCode.BAD_INPUT, proc.stderr
    assert "toolgate.yml:7: agent.callable:" in proc.stderr, proc.stderr
    assert "No module named 'no_such_module_xyz'" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "out" / "runs.jsonl").exists() or not (
        tmp_path / "out" / "runs.jsonl"
    ).read_text("utf-8")


def test_check__score_workers_not_a_number__exit_2_before_the_agent_runs(tmp_path: Path) -> None:
    """``TOOLGATE_SCORE_WORKERS=abc`` is refused before the first case, not read after the
    run as "one process"."""
    (tmp_path / "counting_agent.py").write_text(_COUNTING_AGENT, "utf-8")
    log = tmp_path / "imports.log"
    agent = '  kind: python\n  callable: "counting_agent:run"\n  path: ["."]\n'
    project(tmp_path, [fault_case("ok", 0)], agent)
    for bad in ("abc", "0", "-2", "1.5"):
        proc = h.toolgate(
            "check", "--config", "toolgate.yml", "--out", "out", "--no-progress",
            cwd=tmp_path, env={"IMPORTS_LOG": str(log), "TOOLGATE_SCORE_WORKERS": bad},
        )  # fmt: skip
        h.assert_clean_exit(proc, ExitCode.BAD_INPUT)
        assert f"TOOLGATE_SCORE_WORKERS={bad!r}: expected a whole number" in proc.stderr
        assert not log.exists(), "the agent never started"
        assert not (tmp_path / "out" / "runs.jsonl").exists()
