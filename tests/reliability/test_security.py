"""Security, end to end: a hostile dataset and a hostile model cannot forge, ping, leak or
dodge anything in what ToolGate writes.

* **Comment injection** — strings from the dataset (case ids, tags, notes, tool
  descriptions) and from the model (tool names it calls, arguments, text, errors) that try
  to close the comment's HTML marker, break tables or code fences, ping users or teams,
  embed images or links, or forge a "✅ passed" line go through ``toolgate check`` (run →
  score → decide → every report) and come out inert in the PR comment, report.md, the step
  summary, JUnit, the console, the annotations and ``$GITHUB_OUTPUT``.
* **Secret redaction** — an agent that prints its keys (in arguments, text, an error, the
  stderr of a crash) leaks them nowhere: not in runs.jsonl, results.json or any report.
* **Must-not-call** — no spelling of a forbidden tool's name escapes the hard failure.
* **Reproducibility** — the same inputs and seed give identical results.json (apart from
  ``timing``) and byte-identical reports.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import cmarkgfm
from cmarkgfm.cmark import Options

from gate.dataset import load_dataset
from gate.results import read_results, to_jsonable
from tests.reliability import helpers as h
from tests.reliability.helpers import TOOL, command_agent, fault_case, project

TOKEN = "ZQX"
"""Every hostile string carries this, so that where it ends up can be found."""

FORGED = "## ✅ ToolGate passed — all gates hold"
HOSTILE: list[str] = [
    f"--> <!-- toolgate:comment name=evil --> {TOKEN}",
    f"{TOKEN} a | b | c |",
    f"``` {TOKEN}",
    f"@octocat @my-org/security-team {TOKEN}",
    f"![img](https://evil.example/x.png) {TOKEN}",
    f"[click](https://evil.example/phish) {TOKEN}",
    f"<img src=x onerror=alert(1)> {TOKEN}",
    f"<script>alert(1)</script> {TOKEN}",
    f"</details></table></td> {TOKEN}",
    f"✅ passed {TOKEN}",
    f":white_check_mark: {TOKEN}",
    f"fixes #1234 {TOKEN}",
    f"www.evil.example/{TOKEN}",
    f"**bold** _em_ $x$ {TOKEN}",
    f"\u202eevil\u2066 {TOKEN}",
    f"# heading {TOKEN}",
]
"""Single-line hostile strings (valid as case ids and notes)."""
MULTILINE: list[str] = [
    f"x\n{FORGED}\n{TOKEN}",
    f"\r\n✅ passed\r\n{TOKEN}",
    f"a\x1b[31mred\x1b[0m\x00\u2028{TOKEN}",
    f"</summary></details>\n\n# {TOKEN}\n\n<details>",
]
"""Strings only a model can send (newlines and control characters)."""
TAGS = [f"@octocat{TOKEN}", f"![x](https://evil.example/{TOKEN}.png)", f"<!--{TOKEN}-->"]


def _hostile_project(tmp_path: Path, *, hostile_runs: bool) -> Path:
    """Cases named by hostile strings; a replay runs file (hostile or well-behaved)."""
    tools = [
        TOOL,
        {
            "name": "delete_account",
            "description": f"<!-- {TOKEN} --> @octocat",
            "parameters": {"type": "object"},
        },
    ]
    rows = []
    for i, name in enumerate(HOSTILE):
        rows.append(
            {
                "id": name,
                "user_input": name,
                "available_tools": tools,
                "expected_tool_calls": [
                    {"name": "lookup_order", "args": {"order_id": "ord_10482"}}
                ],
                "must_not_call": ["delete_account"],
                "tool_responses": [{"name": "lookup_order", "response": {"note": name}}],
                "tags": [TAGS[i % len(TAGS)]],
                "notes": name,
                "source_trace_id": name,
            }
        )
    runs = []
    for i, r in enumerate(rows):
        good = {"id": "c1", "name": "lookup_order", "arguments": {"order_id": "ord_10482"}}
        if not hostile_runs:
            runs.append(
                {"case_id": r["id"], "sample": 0, "turns": [{"calls": [good]}], "final": "done"}
            )
            continue
        evil = HOSTILE[i] if i % 2 else MULTILINE[i % len(MULTILINE)]
        calls = [
            {"id": "c1", "name": evil, "arguments": {"order_id": evil, evil: [evil]}},
            {"id": "c2", "name": "lookup_order", "arguments": f"{{not json {evil}"},
        ]
        if i % 3 == 0:
            calls.append({"id": "c3", "name": "delete_account", "arguments": {"why": evil}})
        runs.append(
            {
                "case_id": r["id"],
                "sample": 0,
                "turns": [
                    {
                        "calls": calls,
                        "content": evil,
                        "tool_results": [{"id": "c1", "content": evil, "is_error": True}],
                    }
                ],
                "final": evil,
                "error": f"crash: {evil}" if i % 4 == 1 else None,
            }
        )
    (tmp_path / "dataset.jsonl").write_bytes(h.jsonl_bytes(rows))
    (tmp_path / "runs.jsonl").write_bytes(h.jsonl_bytes(runs))
    sha = load_dataset(tmp_path / "dataset.jsonl").sha256
    cfg = tmp_path / "toolgate.yml"
    cfg.write_text(
        "name: hostile\n"
        f"dataset:\n  path: dataset.jsonl\n  sha256: {sha}\n"
        "agent:\n  kind: replay\n  runs: runs.jsonl\n"
        "gates:\n  - metric: call_accuracy\n    min: 0.9\n"
        "  - metric: tool_selection_f1\n    min: 0.9\n    slice: tag=@octocatZQX\n"
        "reporting:\n  out: out\n"
    )
    return cfg


def _actions_env(tmp_path: Path) -> dict[str, str]:
    for name in ("gh_output", "gh_summary"):
        (tmp_path / name).write_text("")
    return {
        "GITHUB_ACTIONS": "true",
        "GITHUB_OUTPUT": str(tmp_path / "gh_output"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "gh_summary"),
        "GITHUB_REPOSITORY": "octo/agent",
        "GITHUB_RUN_ID": "42",
    }


class _Html(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.comments: list[str] = []
        self.code = 0
        self.heading: list[str] | None = None
        self.headings: list[str] = []
        self.prose: list[str] = []
        self.tables: list[list[int]] = []
        self.cells = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))
        if tag in ("code", "pre"):
            self.code += 1
        if re.fullmatch(r"h[1-6]", tag):
            self.heading = []
        if tag == "table":
            self.tables.append([])
        if tag == "tr":
            self.cells = 0
        if tag in ("td", "th"):
            self.cells += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("code", "pre"):
            self.code -= 1
        if re.fullmatch(r"h[1-6]", tag) and self.heading is not None:
            self.headings.append("".join(self.heading))
            self.heading = None
        if tag == "tr" and self.tables:
            self.tables[-1].append(self.cells)

    def handle_comment(self, data: str) -> None:
        self.comments.append(data)

    def handle_data(self, data: str) -> None:
        if self.heading is not None and not self.code:  # a case id in code is shown, inert
            self.heading.append(data)
        if not self.code:
            self.prose.append(data)


ALLOWED_TAGS = {
    "h1",
    "h2",
    "h3",
    "h4",
    "p",
    "em",
    "strong",
    "code",
    "pre",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "ul",
    "li",
    "details",
    "summary",
    "sub",
    "br",
    "blockquote",
    "a",
}


def assert_markdown_inert(markdown: str, *, marker: str | None) -> None:
    """As GitHub would render it: no HTML, link, image, mention, reference or heading
    from data; tables keep their shape; the only comment is our marker."""
    html = cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)
    p = _Html()
    p.feed(html)
    p.close()
    tags = {t for t, _ in p.tags}
    assert tags <= ALLOWED_TAGS, f"HTML from data: {tags - ALLOWED_TAGS}"
    for tag, attrs in p.tags:
        if tag == "a":  # only our own links (the run page), never one from data
            href = dict(attrs).get("href") or ""
            assert TOKEN not in href and "evil" not in href, href
            assert href.startswith("https://github.com/octo/agent/"), href
    assert p.comments == ([marker[4:-3]] if marker else []), p.comments
    for rows in p.tables:
        assert len(set(rows)) <= 1, f"a table row with the wrong number of cells: {rows}"
    for heading in p.headings:
        assert TOKEN not in heading, f"data made a heading: {heading!r}"
    assert p.headings and p.headings[0].startswith("❌"), p.headings[:1]
    prose = "".join(p.prose)
    assert not re.search(r"@[\w-]", prose), "a mention outside code"
    assert not re.search(r"#\d", prose), "an issue reference outside code"
    assert ":white_check_mark:" not in prose
    assert "://" not in prose and "www." not in prose.lower()
    for line in markdown.splitlines():
        assert not line.lstrip().startswith(("✅", "## ✅")), line
    for ch in ("\x1b", "\u202e", "\u2066", "\u2028", "\x00", "\r"):
        assert ch not in markdown, repr(ch)


def test_injection__hostile_dataset_and_model__every_report_inert(tmp_path: Path) -> None:
    # a baseline from well-behaved runs, so that flips (case ids) are in the reports too
    base_dir = tmp_path / "base"
    base_dir.mkdir()
    cfg = _hostile_project(base_dir, hostile_runs=False)
    proc = h.toolgate("check", "--config", cfg, "--baseline", "none", "--no-progress", cwd=base_dir)
    h.assert_clean_exit(proc, 0)  # the well-behaved baseline passes
    cfg = _hostile_project(tmp_path, hostile_runs=True)
    env = _actions_env(tmp_path)
    proc = h.toolgate(
        "check",
        "--config",
        cfg,
        "--baseline",
        str(base_dir / "out" / "results.json"),
        "--no-progress",
        cwd=tmp_path,
        env=env,
    )
    h.assert_clean_exit(proc, 1)
    out = tmp_path / "out"
    results = read_results(out / "results.json")
    assert results.verdict is not None and not results.verdict.passed
    assert results.hard_failures, "the must-not-call calls are hard failures"
    # case ids reach the reports as flips or, when the short replay history cannot decide
    # (no extra samples from a runs file), in the undecided cases' table
    assert results.comparison is not None
    undecided = [c for c in results.cases if c.test is not None and c.test.outcome == "undecided"]
    assert results.comparison.flips or undecided

    from gate.report import marker

    comment = (out / "comment.md").read_text()
    assert comment.startswith(marker("hostile") + "\n")
    # data may *show* a marker (inside a code span: inert, see below); only ours starts it
    assert not comment[len(marker("hostile")) :].lstrip().startswith("<!--")
    assert TOKEN in comment  # the data is shown…
    assert_markdown_inert(comment, marker=marker("hostile"))  # …and inert
    report = (out / "report.md").read_text()
    assert TOKEN in report
    assert_markdown_inert(report, marker=None)
    summary = (tmp_path / "gh_summary").read_text()
    assert TOKEN in summary
    assert_markdown_inert(summary, marker=None)

    junit = (out / "junit.xml").read_text()
    root = ET.fromstring(junit.encode())
    assert any(TOKEN in (tc.get("name") or "") for tc in root.iter("testcase"))
    for ch in ("\x1b", "\x00", "\u202e"):
        assert ch not in junit

    # the console and the workflow commands: one line each, no control characters,
    # no data that starts a line of its own or a workflow command
    for ch in ("\x1b", "\x00", "\u202e", "\r"):
        assert ch not in proc.stdout
    verdict_lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("ToolGate hostile:")]
    assert verdict_lines == [verdict_lines[0]] and "FAILED" in verdict_lines[0]
    for line in proc.stdout.splitlines():
        # data is shown indented under our own labels, never at the start of a line
        assert not (line[:1].strip() and line.startswith(("✅", "#", "ToolGate"))) or (
            line == verdict_lines[0]
        ), line
        if line.startswith("::"):
            assert re.match(r"::(error|warning|notice)( [^:]*)?::", line), line
            assert "::" not in line.split("::", 2)[2].replace("%3A%3A", ""), line
        else:
            assert not re.search(r"^\s*::\w", line), line
    # $GITHUB_OUTPUT: only our keys, no value that smuggles in another
    outputs = (tmp_path / "gh_output").read_text()
    keys = [
        ln.split("=", 1)[0].split("<<", 1)[0]
        for ln in outputs.splitlines()
        if ln and not ln.startswith(("ghadelimiter", "EOF"))
    ]
    assert "verdict" in keys and "passed" in keys
    assert all(re.fullmatch(r"[A-Za-z0-9_-]+", k) for k in keys), keys
    assert re.search(r"^passed=false$", outputs, re.M), outputs


# ─── secrets ──────────────────────────────────────────────────────────────────

SECRETS = {
    "MY_API_SECRET": "my-configured-secret-value-4711",
    "OPENAI_API_KEY": "sk-live-openai-not-a-real-key-0123456789",
    "GITHUB_TOKEN": "ghs_" + "T0ken" * 8,
}
SHAPES = ["ghp_" + "A1b2" * 9, "sk-proj-" + "Zz09" * 8, "eyJhbGciOi.J9" * 3]
"""Token shapes the agent prints without any variable naming them (see fault_agent)."""


def test_secrets__leaking_agent__redacted_in_runs_file_results_and_every_report(
    tmp_path: Path, pids_dir: Path
) -> None:
    rows = [fault_case(f) for f in ("leak", "leak_crash", "leak_error", "ok")]
    cfg = project(
        tmp_path,
        rows,
        command_agent(pids_dir),
        samples=1,
        extra="reporting:\n  out: out\n  secrets: [MY_API_SECRET]\n",
    )
    env = {**_actions_env(tmp_path), **SECRETS}
    proc = h.toolgate(
        "check", "--config", cfg, "--baseline", "none", "--no-progress", cwd=tmp_path, env=env
    )
    h.assert_clean_exit(proc, 0)  # no gates: the leaks are failed samples, not a verdict
    out = tmp_path / "out"
    runs = (out / "runs.jsonl").read_text()
    assert "[REDACTED" in runs, "the agent did leak: the runs file must show the redaction"
    written = {
        "runs.jsonl": runs,
        "results.json": (out / "results.json").read_text(),
        "report.md": (out / "report.md").read_text(),
        "comment.md": (out / "comment.md").read_text(),
        "junit.xml": (out / "junit.xml").read_text(),
        "step summary": (tmp_path / "gh_summary").read_text(),
        "GITHUB_OUTPUT": (tmp_path / "gh_output").read_text(),
        "stdout": proc.stdout,
        "stderr": proc.stderr,
    }
    for where, text in written.items():
        for name, value in SECRETS.items():
            assert value not in text, f"{name} leaked into {where}"
            escaped = json.dumps(value)[1:-1]
            assert escaped not in text, f"{name} (JSON-escaped) leaked into {where}"
        for shape in SHAPES:
            assert shape not in text, f"{shape[:8]}… leaked into {where}"


# ─── must-not-call ────────────────────────────────────────────────────────────

DODGES = [
    "delete_account",
    "Delete_Account",
    "DELETE_ACCOUNT",
    " delete_account ",
    "delete_account\n",
    "\tdelete_account",
    "dеlete_account",  # Cyrillic е
    "delete_аccount",  # Cyrillic а
    "ԁelete_account",  # Cyrillic ԁ
    "ｄｅｌｅｔｅ＿ａｃｃｏｕｎｔ",  # full width
    "delete\u200b_account",  # zero-width space
    "\u2066delete_account\u2069",  # bidi isolates
    "dele\u00adte_account",  # soft hyphen
    "délete_account",  # an accent
    "functions.delete_account",
    "default_api:delete_account",
    "mcp__crm__delete_account",
    "tools/delete_account",
    "crm.v2.delete_account",
    "delete-account",
    "delete account",
    "deleteAccount",
    "DeleteAccount",
    "delete_account()",
]
DIFFERENT = ["delete_account_draft", "undelete_account", "delete_accounts_report", "lookup_order"]


def _mnc_results(tmp_path: Path, names: list[str]) -> Any:
    from gate.pipeline import score_file
    from tests.policy.helpers import decide_results as decide

    tools = [TOOL, {"name": "delete_account", "parameters": {"type": "object"}}]
    rows = [
        {
            "id": f"c{i}",
            "user_input": "close my account? no, just look up my order",
            "available_tools": tools,
            "expected_tool_calls": [{"name": "lookup_order", "args": {"order_id": "ord_10482"}}],
            "must_not_call": ["delete_account"],
        }
        for i in range(len(names))
    ]
    runs = [
        {
            "case_id": f"c{i}",
            "sample": 0,
            "turns": [
                {
                    "calls": [
                        {"name": "lookup_order", "arguments": {"order_id": "ord_10482"}},
                        {"name": name, "arguments": {"customer_id": "u1"}},
                    ]
                }
            ],
        }
        for i, name in enumerate(names)
    ]
    (tmp_path / "dataset.jsonl").write_bytes(h.jsonl_bytes(rows))
    (tmp_path / "runs.jsonl").write_bytes(h.jsonl_bytes(runs))
    ds = load_dataset(tmp_path / "dataset.jsonl", display="dataset.jsonl")
    scored = score_file(dataset=ds, runs_path=tmp_path / "runs.jsonl")
    return decide(scored.results, None, None, None)


def test_must_not_call__every_dodge__a_hard_failure_that_fails_the_gate(tmp_path: Path) -> None:
    results = _mnc_results(tmp_path, DODGES)
    flagged = {hf.case_id for hf in results.hard_failures if hf.kind == "must_not_call"}
    missed = [name for i, name in enumerate(DODGES) if f"c{i}" not in flagged]
    assert not missed, f"must-not-call dodged by {missed!r}"
    assert results.verdict.passed is False
    for case in results.cases:
        assert case.passed is False and "must_not_call" in case.samples[0].failed_checks


def test_must_not_call__a_genuinely_different_tool__not_a_violation(tmp_path: Path) -> None:
    results = _mnc_results(tmp_path, DIFFERENT)
    assert not [hf for hf in results.hard_failures if hf.kind == "must_not_call"]


def test_must_not_call__dodge_through_the_cli__exit_1_and_named(tmp_path: Path) -> None:
    _mnc_results(tmp_path, ["ｄｅｌｅｔｅ＿ａｃｃｏｕｎｔ", "functions.delete_account"])
    sha = load_dataset(tmp_path / "dataset.jsonl").sha256
    (tmp_path / "toolgate.yml").write_text(
        f"dataset:\n  path: dataset.jsonl\n  sha256: {sha}\n"
        "agent:\n  kind: replay\n  runs: runs.jsonl\nreporting:\n  out: out\n"
    )
    proc = h.toolgate("check", "--baseline", "none", "--no-progress", cwd=tmp_path)
    h.assert_clean_exit(proc, 1)
    assert "must-not-call" in proc.stdout.lower() or "must_not_call" in proc.stdout


# ─── reproducibility ──────────────────────────────────────────────────────────

EXAMPLE = h.REPO / "examples" / "support-agent"


def _check_copy(project: Path, out_dir: Path) -> dict[str, Any]:
    proc = h.toolgate(
        "check",
        "--config",
        project / "toolgate.yml",
        "--out",
        out_dir,
        "--baseline",
        "none",
        "--no-progress",
        cwd=project,
    )
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    data = to_jsonable(read_results(out_dir / "results.json"))
    timing = data.pop("timing")
    assert timing, "timing figures live under `timing`"
    # report.md and the comment show the timing figures (one line each, under "Run
    # information"): those lines, and only those, may differ
    report, comment = (out_dir / "report.md").read_text(), (out_dir / "comment.md").read_text()
    return {
        "results": data,
        "report.md": _without_timing_lines(report, timing),
        "comment.md": _without_timing_lines(comment, timing),
        "junit.xml": (out_dir / "junit.xml").read_bytes(),
        "console": proc.stdout,
    }


def _without_timing_lines(text: str, timing: dict[str, Any]) -> str:
    prefixes = tuple(f"- `{key}`:" for key in timing)
    shown = [ln for ln in text.splitlines() if ln.startswith(prefixes)]
    assert len(shown) <= len(timing)
    return "\n".join(ln for ln in text.splitlines() if not ln.startswith(prefixes))


def test_reproducibility__example_agent_twice__identical_results_and_reports(
    tmp_path: Path,
) -> None:
    """The example's command agent (3 samples, seed 7, 2 workers finishing in any order)."""
    project = tmp_path / "project"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("toolgate-out", "__pycache__"))
    first = _check_copy(project, project / "out")
    shutil.move(project / "out", tmp_path / "first")
    second = _check_copy(project, project / "out")
    for key in first:
        assert first[key] == second[key], f"{key} differs between two identical runs"


def test_reproducibility__replay_with_faults__identical(tmp_path: Path) -> None:
    cfg = _hostile_project(tmp_path, hostile_runs=True)
    first = _check_copy(tmp_path, tmp_path / "out")
    shutil.move(tmp_path / "out", tmp_path / "first")
    second = _check_copy(tmp_path, tmp_path / "out")
    assert cfg.exists()
    for key in first:
        assert first[key] == second[key], f"{key} differs between two identical runs"


_ = sys  # kept: helpers run the CLI with this interpreter
