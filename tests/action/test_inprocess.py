"""The Action in this process, with its collaborators built by the test: the GitHub
client against the fake GitHub server on 127.0.0.1, a fixed clock, the log in memory and
the runner's files in tmp — one test per mode, and the rules every mode shares (the
outputs written once, the token rule, the budget rule, the one error handler)."""

from __future__ import annotations

import io
import os
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from gate.action import OUTPUTS, Collaborators, main
from gate.github.client import GitHubClient, RetryPolicy
from gate.github.context import GitHubContext
from tests.action.harness import (
    BASE_SHA,
    HEAD_SHA,
    REPOSITORY,
    full_results,
    mini_repo,
    parse_outputs,
    pr_event,
    push_event,
    runner_env,
    shards,
    workflow_run_event,
    written_names,
)
from tests.servers import github_actions_routes as routes
from tests.servers.github_server import GitHubServer

TOKEN = "ghs_input_token"
ENV_TOKEN = "ghs_workflow_level_token"
FORK_TOKEN = "ghs_fork_read_only"
NOW = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
FAST = RetryPolicy(budget_s=10.0, request_timeout_s=2, backoff_s=0.05, backoff_max_s=0.2)


@dataclass
class Step:
    """What one invocation left: the exit code, the log, the runner's files."""

    code: int
    out: str
    err: str
    outputs: dict[str, str]
    raw_outputs: str
    summary: str

    def annotations(self, level: str) -> list[str]:
        return [line for line in self.out.splitlines() if line.startswith(f"::{level}")]


@pytest.fixture
def gh() -> Iterator[GitHubServer]:
    owner, repo = REPOSITORY.split("/")
    server = GitHubServer(owner=owner, repo=repo, register=[routes.register])
    server.add_token(TOKEN, "github-actions[bot]", kind="app")
    server.add_token(ENV_TOKEN, "github-actions[bot]", kind="app")
    server.add_token(FORK_TOKEN, "github-actions[bot]", kind="app", read_only=True)
    server.add_pull(7, base_sha=BASE_SHA, head_sha=HEAD_SHA)
    with server:
        yield server


@pytest.fixture
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """What the Action changes in its process — the working directory and git's
    ``GIT_CONFIG_*`` — is put back after each test."""
    monkeypatch.chdir(tmp_path)
    for name in (
        "GIT_CONFIG_COUNT",
        *(f"GIT_CONFIG_{k}_{i}" for k in ("KEY", "VALUE") for i in range(4)),
    ):
        monkeypatch.delenv(name, raising=False)


def fast_client(ctx: GitHubContext) -> GitHubClient:
    """The production factory's choices (the context's token and API URL), with a short
    budget so a failing test fails fast."""
    assert ctx.token, "the Action asked for a client without a token"
    return GitHubClient(token=ctx.token, api_url=ctx.api_url, policy=FAST, write_interval_s=0)


def act(
    ws: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    inputs: dict[str, str],
    gh: GitHubServer | None = None,
    event_name: str = "pull_request",
    event: dict[str, Any] | None = None,
    token: str | None = TOKEN,
    extra_env: dict[str, str] | None = None,
    now: Any = lambda: NOW,
) -> Step:
    files = runner_env(
        ws,
        tmp_path / "runner",
        inputs=inputs,
        event_name=event_name,
        event=event,
        api_url=gh.api_url if gh is not None else "http://127.0.0.1:9/",
        token=token,
        extra_env=extra_env,
    )
    # The pipeline names files relative to the repository (annotations point at them).
    monkeypatch.setenv("GITHUB_WORKSPACE", str(ws))
    out, err = io.StringIO(), io.StringIO()
    deps = Collaborators(client=fast_client, now=now, out=out, err=err)
    code = main(files.env, deps)
    raw = files.output.read_text("utf-8")
    return Step(
        code,
        out.getvalue(),
        err.getvalue(),
        parse_outputs(raw),
        raw,
        files.summary.read_text("utf-8"),
    )


def base_artifact(gh: GitHubServer, ws: Path, *, age_days: float = 2.0) -> int:
    """main's results uploaded by a successful run at the PR's base, ``age_days`` before
    :data:`NOW`; returns the run's number."""
    st = routes.state(gh)
    wf = st.add_workflow("toolgate.yml", "ToolGate")
    run = st.add_run(wf, head_sha=BASE_SHA, age_days=age_days, now=int(NOW.timestamp()))
    st.add_artifact(run, "toolgate-results", {"results.json": full_results(ws)})
    return run.run_number


# ─── mode: check ──────────────────────────────────────────────────────────────


@pytest.mark.usefixtures("isolated")
def test_check__passing_pr__every_output_written_once_summary_and_comment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gh: GitHubServer
) -> None:
    ws = mini_repo(tmp_path / "ws")
    step = act(ws, tmp_path, monkeypatch, inputs={"baseline": "none"}, gh=gh)

    assert step.code == 0, step.out + step.err
    names = written_names(step.raw_outputs)
    assert len(names) == len(set(names)), f"an output written twice: {names}"
    assert set(OUTPUTS) <= set(names)
    assert {"hard-failures", "summary", "metric-call_accuracy"} <= set(names)
    assert (step.outputs["verdict"], step.outputs["passed"]) == ("passed", "true")
    assert step.outputs["results-path"] == "toolgate-out/results.json"
    assert step.outputs["report-path"] == "toolgate-out/report.md"
    assert step.outputs["metric-call_accuracy"] == "1.000000"
    # compared with nothing: passed, never green, the first line says why
    assert step.outputs["compared"] == "false"
    heading = (
        "# ⚠️ ToolGate `mini` passed — not compared: no baseline \\(the baseline input is none\\)"
    )
    assert step.summary.startswith(heading), step.summary[:200]
    assert step.summary.count("# ⚠️ ToolGate `mini` passed") == 1, "the report once"
    assert "**Baseline:** none (`baseline: none`)." in step.summary
    (comment,) = gh.comments_on(7)
    assert comment.body.startswith("<!-- toolgate:comment name=mini -->")
    assert "::group::ToolGate check" in step.out


@pytest.mark.usefixtures("isolated")
def test_check__must_not_call__exit_1_annotated_reported_and_commented(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gh: GitHubServer
) -> None:
    ws = mini_repo(tmp_path / "ws")
    step = act(
        ws, tmp_path, monkeypatch, inputs={"config": "toolgate.bad.yml", "baseline": "none"}, gh=gh
    )

    assert step.code == 1, step.out + step.err
    assert (step.outputs["verdict"], step.outputs["must-not-call-violations"]) == ("failed", "1")
    assert any(
        "file=dataset.jsonl,line=2" in e and "delete_account" in e
        for e in step.annotations("error")
    )
    assert "delete_account" in step.summary
    (comment,) = gh.comments_on(7)
    assert "delete_account" in comment.body


@pytest.mark.usefixtures("isolated")
def test_check__fail_on_never__exit_0_verdict_still_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gh: GitHubServer
) -> None:
    ws = mini_repo(tmp_path / "ws")
    step = act(
        ws,
        tmp_path,
        monkeypatch,
        inputs={"config": "toolgate.bad.yml", "baseline": "none", "fail-on": "never"},
        gh=gh,
    )

    assert step.code == 0
    assert step.outputs["verdict"] == "failed"
    assert step.summary.rstrip().endswith("Set `fail-on: gate` to block merges.")


@pytest.mark.usefixtures("isolated")
def test_check__fork_pr_read_only_token__summary_fallback_verdict_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gh: GitHubServer
) -> None:
    ws = mini_repo(tmp_path / "ws")
    step = act(
        ws,
        tmp_path,
        monkeypatch,
        inputs={"config": "toolgate.bad.yml", "baseline": "none"},
        gh=gh,
        event=pr_event(fork=True),
        token=FORK_TOKEN,
    )

    assert step.code == 1
    assert step.outputs["verdict"] == "failed"
    assert gh.comments == {}
    assert any("workflow_run" in w for w in step.annotations("warning"))
    assert "delete_account" in step.summary


@pytest.mark.usefixtures("isolated")
def test_check__comment_input_false__nothing_posted_notice_names_the_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gh: GitHubServer
) -> None:
    ws = mini_repo(tmp_path / "ws")
    step = act(ws, tmp_path, monkeypatch, inputs={"baseline": "none", "comment": "false"}, gh=gh)

    assert step.code == 0
    assert gh.comments == {} and gh.log == []
    assert "not commenting: the `comment` input is false" in step.out


@pytest.mark.usefixtures("isolated")
def test_check__baseline_auto__artifact_at_base_sha__aged_by_the_clock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gh: GitHubServer
) -> None:
    ws = mini_repo(tmp_path / "ws")
    number = base_artifact(gh, ws, age_days=3)
    step = act(ws, tmp_path, monkeypatch, inputs={"config": "toolgate.bad.yml"}, gh=gh)

    assert step.code == 1, step.out + step.err
    source = f"artifact toolgate-results of run #{number} on main at bbbbbbb, 3 days old"
    assert f"**Baseline:** {source}." in step.summary
    assert step.outputs["regressions"] == "0", "one base sample: no case can be significant"
    (comment,) = gh.comments_on(7)
    assert "order-2" in comment.body


# ─── the token and the budget: one rule each ──────────────────────────────────


@pytest.mark.usefixtures("isolated")
@pytest.mark.parametrize("variable", ["GITHUB_TOKEN", "TOOLGATE_GITHUB_TOKEN"])
def test_token__input_wins_over_environment__for_baseline_and_comment_requests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gh: GitHubServer, variable: str
) -> None:
    ws = mini_repo(tmp_path / "ws")
    base_artifact(gh, ws)
    step = act(
        ws,
        tmp_path,
        monkeypatch,
        inputs={"config": "toolgate.bad.yml"},
        gh=gh,
        token=TOKEN,
        extra_env={variable: ENV_TOKEN},
    )

    assert step.code == 1, step.out + step.err
    # A one-sample replay history cannot make order-2 significant (the report says so):
    # what shows that the baseline was found is the summary's line about it.
    assert "**Baseline:** artifact toolgate-results" in step.summary, "the baseline was found"
    seen: dict[str, set[str | None]] = {}
    for route, token in gh.tokens_seen:
        seen.setdefault(route, set()).add(token)
    baseline_routes = {"get_workflow", "list_workflow_runs", "download_artifact", "blob"}
    comment_routes = {"list_comments", "create_comment"}
    assert baseline_routes | comment_routes <= set(seen)
    assert all(tokens == {TOKEN} for tokens in seen.values()), seen


@pytest.mark.usefixtures("isolated")
def test_token__input_empty__environment_token_used_for_everything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gh: GitHubServer
) -> None:
    ws = mini_repo(tmp_path / "ws")
    step = act(
        ws,
        tmp_path,
        monkeypatch,
        inputs={"baseline": "none"},
        gh=gh,
        token="",
        extra_env={"GITHUB_TOKEN": ENV_TOKEN},
    )

    assert step.code == 0, step.out + step.err
    assert len(gh.comments_on(7)) == 1
    assert {token for _, token in gh.tokens_seen} == {ENV_TOKEN}


@pytest.mark.usefixtures("isolated")
@pytest.mark.parametrize("budget", ["inf", "nan", "-5", "soon"])
def test_budget__not_a_finite_positive_number__exit_2_with_error_outputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gh: GitHubServer, budget: str
) -> None:
    ws = mini_repo(tmp_path / "ws")
    step = act(
        ws,
        tmp_path,
        monkeypatch,
        inputs={},
        gh=gh,
        extra_env={"TOOLGATE_GITHUB_BUDGET_S": budget},
    )

    assert step.code == 2
    assert set(OUTPUTS) <= set(step.outputs)
    assert (step.outputs["verdict"], step.outputs["passed"]) == ("error", "false")
    (error,) = step.annotations("error")
    assert error.startswith("::error title=ToolGate input error::TOOLGATE_GITHUB_BUDGET_S: ")
    assert f"not {budget!r}" in error
    assert "Fix the `env:` of the ToolGate step." in step.err
    assert gh.log == [], "nothing ran"


# ─── the one error handler ────────────────────────────────────────────────────


@pytest.mark.usefixtures("isolated")
def test_bug__unexpected_exception__exit_3_error_outputs_and_annotation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gh: GitHubServer
) -> None:
    ws = mini_repo(tmp_path / "ws")
    base_artifact(gh, ws)

    def broken_clock() -> datetime:
        raise RuntimeError("the clock is broken")

    step = act(ws, tmp_path, monkeypatch, inputs={}, gh=gh, now=broken_clock)

    assert step.code == 3
    assert (step.outputs["verdict"], step.outputs["passed"]) == ("error", "false")
    (error,) = step.annotations("error")
    assert "internal error (RuntimeError: the clock is broken)" in error
    assert "Traceback" in step.err


@pytest.mark.usefixtures("isolated")
def test_bad_config__input_error_exit_2_names_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = mini_repo(tmp_path / "ws")
    step = act(ws, tmp_path, monkeypatch, inputs={"config": "nope.yml"})

    assert step.code == 2
    assert step.outputs["verdict"] == "error"
    assert "nope.yml" in step.err


# ─── mode: run and mode: merge ────────────────────────────────────────────────


@pytest.mark.usefixtures("isolated")
def test_run__one_shard__not_gated_results_and_summary_no_github(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gh: GitHubServer
) -> None:
    ws = mini_repo(tmp_path / "ws")
    step = act(
        ws,
        tmp_path,
        monkeypatch,
        inputs={"mode": "run", "shard": "1/2", "out": "toolgate-out/shard-1"},
        gh=gh,
    )

    assert step.code == 0, step.out + step.err
    assert step.outputs["verdict"] == "not-gated" and step.outputs["passed"] == "false"
    assert step.outputs["results-path"] == "toolgate-out/shard-1/results.json"
    assert step.outputs["report-path"] == ""
    from gate.results import read_results

    results = read_results(ws / "toolgate-out/shard-1/results.json")
    assert results.shard is not None and (results.shard.index, results.shard.count) == (1, 2)
    assert results.verdict is None
    assert "mini" in step.summary
    assert gh.log == [], "a shard never talks to GitHub"


@pytest.mark.usefixtures("isolated")
def test_merge__shards_with_a_violation__exit_1_one_comment_outputs_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gh: GitHubServer
) -> None:
    ws = mini_repo(tmp_path / "ws")
    shards(ws, "toolgate.bad.yml")
    step = act(
        ws,
        tmp_path,
        monkeypatch,
        inputs={
            "mode": "merge",
            "merge": "toolgate-shards",
            "config": "toolgate.bad.yml",
            "baseline": "none",
        },
        gh=gh,
    )

    assert step.code == 1, step.out + step.err
    names = written_names(step.raw_outputs)
    assert len(names) == len(set(names)), names
    assert (step.outputs["verdict"], step.outputs["must-not-call-violations"]) == ("failed", "1")
    assert step.outputs["results-path"] == "toolgate-out/results.json"
    assert (ws / "toolgate-out" / "report.md").is_file()
    assert "merged 2 part(s), 12 cases" in step.out
    (comment,) = gh.comments_on(7)
    assert comment.body.startswith("<!-- toolgate:comment name=mini -->")
    assert "delete_account" in comment.body


@pytest.mark.usefixtures("isolated")
def test_merge__no_results_under_the_folder__input_error_naming_merge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = mini_repo(tmp_path / "ws")
    (ws / "empty").mkdir()
    step = act(ws, tmp_path, monkeypatch, inputs={"mode": "merge", "merge": "empty"})

    assert step.code == 2
    assert any("merge: no results.json under" in e for e in step.annotations("error"))


# ─── mode: comment ────────────────────────────────────────────────────────────


@pytest.mark.usefixtures("isolated")
def test_comment__results_artifact__posted_on_pr_found_by_head_sha(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gh: GitHubServer
) -> None:
    ws = mini_repo(tmp_path / "ws")
    folder = ws / "toolgate-pr"
    folder.mkdir()
    (folder / "results.json").write_bytes(full_results(ws, "toolgate.bad.yml"))
    (folder / "pr_number.txt").write_text("1\n", "utf-8")  # never read
    gh.add_pull(1, base_sha=BASE_SHA, head_sha="1" * 40)

    step = act(
        ws,
        tmp_path,
        monkeypatch,
        inputs={"mode": "comment", "out": "toolgate-pr"},
        gh=gh,
        event_name="workflow_run",
        event=workflow_run_event(run_number=41),
    )

    assert step.code == 0, step.out + step.err
    assert step.outputs["verdict"] == "not-gated"
    assert gh.comments_on(1) == []
    (comment,) = gh.comments_on(7)
    assert comment.body.startswith("<!-- toolgate:comment name=mini -->")
    assert "delete_account" in comment.body
    assert (
        "**Comment:** for PR #7 (found by its head ccccccc), from the output of run 41 "
        "(concluded `failure`), rendered from its results.json." in step.summary
    )
    # The lookup and the post carry the one token of the context.
    assert {token for _, token in gh.tokens_seen} == {TOKEN}


@pytest.mark.usefixtures("isolated")
def test_comment__not_a_workflow_run__notice_nothing_posted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gh: GitHubServer
) -> None:
    ws = mini_repo(tmp_path / "ws")
    folder = ws / "toolgate-out"
    folder.mkdir()
    (folder / "comment.md").write_text("hello", "utf-8")
    step = act(ws, tmp_path, monkeypatch, inputs={"mode": "comment"}, gh=gh)

    assert step.code == 0
    assert gh.log == [] and gh.comments == {}
    assert any("runs on workflow_run events" in n for n in step.annotations("notice"))
    assert step.outputs["verdict"] == "not-gated"


@pytest.mark.usefixtures("isolated")
@pytest.mark.parametrize("mode", ["check", "run"])
def test_out__outside_the_workspace__input_error_naming_out_nothing_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gh: GitHubServer, mode: str
) -> None:
    """``out: ${{ runner.temp }}/x`` reaches the container as /github/runner_temp/x: a
    results-path there would not exist for the next step."""
    ws = mini_repo(tmp_path / "ws")
    elsewhere = tmp_path / "runner_temp" / "toolgate"
    step = act(ws, tmp_path, monkeypatch, inputs={"mode": mode, "out": str(elsewhere)}, gh=gh)

    assert step.code == 2, step.out + step.err
    assert step.outputs["verdict"] == "error"
    (error,) = step.annotations("error")
    assert "out: " in error and "is outside the workspace" in error
    assert not elsewhere.exists()


@pytest.mark.usefixtures("isolated")
def test_out__config_reporting_out_outside_the_workspace__input_error_naming_the_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gh: GitHubServer
) -> None:
    ws = mini_repo(tmp_path / "ws")
    cfg = ws / "toolgate.yml"
    cfg.write_text(cfg.read_text("utf-8") + "reporting:\n  out: ../../elsewhere\n", "utf-8")
    step = act(ws, tmp_path, monkeypatch, inputs={"baseline": "none"}, gh=gh)

    assert step.code == 2, step.out + step.err
    assert any(
        "reporting.out" in e and "outside the workspace" in e for e in step.annotations("error")
    )


# ─── merge queues ─────────────────────────────────────────────────────────────


@pytest.mark.usefixtures("isolated")
def test_merge_group__baseline_auto__queue_base_commit_compared_and_gated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gh: GitHubServer
) -> None:
    """In a merge queue the group's commit is gated against the base branch's results at
    the commit the queue built it on: a regression fails the queue's check."""
    from tests.action.harness import merge_group_event

    ws = mini_repo(tmp_path / "ws")
    run_number = base_artifact(gh, ws)
    step = act(
        ws,
        tmp_path,
        monkeypatch,
        inputs={"config": "toolgate.bad.yml"},
        gh=gh,
        event_name="merge_group",
        event=merge_group_event(),
    )

    assert step.code == 1, step.out + step.err
    # A one-sample replay history cannot make a case significant: what shows that the
    # group was compared with the queue's base commit is the summary's baseline line.
    assert step.outputs["regressions"] == "0", "one base sample: no case can be significant"
    assert f"artifact toolgate-results of run #{run_number} on main at bbbbbbb" in step.summary
    assert gh.comments == {}, "a merge group has no PR to comment on"
    assert any("merge_group event is not a pull request" in n for n in step.annotations("notice"))
    # the case that broke a hard rule is a likely regression, with the same words at any
    # history depth; it is the only warning
    (warning,) = step.annotations("warning")
    assert "case order-2 likely regressed: 1/1 → 0/1" in warning
    assert "it broke a hard rule, which fails the gate whatever more samples show" in warning


# ─── each input file read once in check mode ──────────────────────────────────

_OPENED: list[str] | None = None
"""Paths opened for reading while a test records (the audit hook below stays installed for
the rest of the process, as audit hooks do, and records nothing otherwise)."""


def _record_opens(event: str, args: tuple[Any, ...]) -> None:
    if _OPENED is None or event != "open" or not isinstance(args[0], (str, bytes, os.PathLike)):
        return
    mode, flags = args[1], args[2] if len(args) > 2 else 0
    reading = (mode is not None and "r" in mode and "+" not in mode) or (
        mode is None and isinstance(flags, int) and flags & 3 == os.O_RDONLY
    )
    if reading:
        _OPENED.append(os.path.realpath(os.fsdecode(args[0])))


@pytest.mark.usefixtures("isolated")
def test_check__config_dataset_and_tools__each_read_once_by_the_action_and_pipeline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gh: GitHubServer
) -> None:
    global _OPENED
    ws = mini_repo(tmp_path / "ws")
    sys.addaudithook(_record_opens)
    _OPENED = []
    try:
        step = act(ws, tmp_path, monkeypatch, inputs={"baseline": "none"}, gh=gh)
        opened = Counter(_OPENED)
    finally:
        _OPENED = None
    assert step.code == 0, step.out + step.err
    for name in ("toolgate.yml", "dataset.jsonl", "tools.json"):
        assert opened[os.path.realpath(ws / name)] == 1, (name, opened)


@pytest.mark.usefixtures("isolated")
def test_check__artifact_baseline__compared_output_true(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gh: GitHubServer
) -> None:
    ws = mini_repo(tmp_path / "ws")
    base_artifact(gh, ws)
    step = act(ws, tmp_path, monkeypatch, inputs={}, gh=gh)
    assert step.code == 0, step.out + step.err
    assert step.outputs["compared"] == "true"
    assert step.summary.startswith("# ✅ ToolGate `mini` passed")


@pytest.mark.usefixtures("isolated")
def test_check__no_artifact_require_baseline__exit_1_the_reason_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gh: GitHubServer
) -> None:
    ws = mini_repo(tmp_path / "ws")
    routes.state(gh).add_workflow("toolgate.yml", "ToolGate")
    step = act(ws, tmp_path, monkeypatch, inputs={"require-baseline": "true"}, gh=gh)
    assert step.code == 1, step.out + step.err
    assert (step.outputs["verdict"], step.outputs["compared"]) == ("failed", "false")
    first = step.summary.splitlines()[0]
    assert first.startswith(
        "# ❌ ToolGate `mini` failed — not compared: no 'toolgate-results' artifact from main yet"
    ), first
    (comment,) = gh.comments_on(7)
    assert r"a baseline is required \(`require-baseline`\), so the gate fails" in comment.body


@pytest.mark.usefixtures("isolated")
def test_check__push_without_artifact_require_baseline__a_base_run_never_fails_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gh: GitHubServer
) -> None:
    ws = mini_repo(tmp_path / "ws")
    routes.state(gh).add_workflow("toolgate.yml", "ToolGate")
    step = act(
        ws,
        tmp_path,
        monkeypatch,
        inputs={"require-baseline": "true"},
        gh=gh,
        event_name="push",
        event=push_event(),
    )
    assert step.code == 0, step.out + step.err
    assert (step.outputs["verdict"], step.outputs["compared"]) == ("passed", "false")
    assert step.summary.splitlines()[0].startswith(
        "# ⚠️ ToolGate `mini` passed — not compared: no 'toolgate-results' artifact from main "
        "yet \\(this base run starts its history\\)"
    ), step.summary[:300]
