"""The entrypoint started exactly the way the Actions runner starts a Docker action, for
``check``, ``run``, ``merge`` and ``comment``: the runner's mounts under ``/github`` in a
private mount namespace, working directory ``/github/workspace``, every ``INPUT_*`` of
action.yml (defaults applied, hyphens kept), the runner's ``GITHUB_*`` allow-list with
container paths, ``GITHUB_ACTIONS=true``, ``CI=true``. What the step leaves is read back
with ports of the runner's own parsers: the outputs (heredoc key/value files), the step
summary (at most 1 MiB), the annotations (workflow commands; a ``file`` must come out
relative to the workspace and exist there) and the exit code.

The runner's rules are cited from its source in :mod:`tests.action.runner_contract`
(``src/Runner.Worker/Handlers/ContainerActionHandler.cs``,
``src/Runner.Worker/Container/ContainerInfo.cs``, ``src/Runner.Worker/Handlers/Handler.cs``,
``src/Runner.Worker/GitHubContext.cs``, ``src/Runner.Worker/FileCommandManager.cs``,
``src/Runner.Common/ActionCommand.cs``, ``src/Runner.Worker/ActionCommandManager.cs``).
Needs root and ``unshare --mount`` (CI runs as root); skipped with the reason elsewhere.
The emulation leaves an empty ``/github`` folder on the host (its contents live in a tmpfs
of the private namespace).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gate.github.workflow import format_outputs
from tests.action.harness import (
    BASE_SHA,
    HEAD_SHA,
    REPOSITORY,
    full_results,
    mini_repo,
    pr_event,
    shards,
    workflow_run_event,
)
from tests.action.runner_contract import (
    ACTION,
    STEP_SUMMARY_LIMIT,
    PathMap,
    RunnerHost,
    StepResult,
    namespaces_available,
    parse_command,
    parse_key_values,
    run_container_action,
)
from tests.servers import github_actions_routes as routes
from tests.servers.github_server import GitHubServer

TOKEN = "ghs_runner_contract_token"
WHY_NOT = namespaces_available()
needs_namespaces = pytest.mark.skipif(WHY_NOT is not None, reason=WHY_NOT or "")


@pytest.fixture
def gh() -> Iterator[GitHubServer]:
    owner, repo = REPOSITORY.split("/")
    server = GitHubServer(owner=owner, repo=repo, register=[routes.register])
    server.add_token(TOKEN, "github-actions[bot]", kind="app")
    server.add_pull(7, base_sha=BASE_SHA, head_sha=HEAD_SHA)
    with server:
        yield server


@pytest.fixture
def host(tmp_path: Path) -> RunnerHost:
    h = RunnerHost(tmp_path / "runner")
    mini_repo(h.workspace)
    return h


def step(host: RunnerHost, gh: GitHubServer, with_: dict[str, str], **kw: object) -> StepResult:
    return run_container_action(
        host,
        with_=with_,
        event_name=str(kw.get("event_name", "pull_request")),
        event=kw.get("event", pr_event()),  # type: ignore[arg-type]
        api_url=gh.api_url,
        token=TOKEN,
        repository=REPOSITORY,
        sha=HEAD_SHA,
    )


def assert_contract(r: StepResult, *, paths: tuple[str, ...] = (), summary: bool = True) -> None:
    """What holds for every mode: action.yml's outputs each written once, a summary the
    runner accepts, annotation files relative to the workspace, and output paths that
    exist on the host (relative to the repository root)."""
    assert set(ACTION["outputs"]) <= set(r.outputs), r.stdout + r.stderr
    assert len(r.output_names) == len(set(r.output_names)), f"written twice: {r.output_names}"
    assert len(r.summary) <= STEP_SUMMARY_LIMIT
    assert bool(r.summary) is summary
    r.summary.decode("utf-8")
    for a in r.annotations:
        if a.file is not None:
            assert not a.file.startswith("/"), f"annotation file outside the workspace: {a}"
            assert (r.workspace / a.file).is_file(), f"no such file in the workspace: {a}"
    for name in paths:
        value = r.outputs[name]
        assert value and not value.startswith("/"), f"{name}={value!r}"
        assert (r.workspace / value).is_file(), f"{name} does not exist for the next step"
    assert "/github/" not in "".join(r.outputs[n] for n in paths)
    assert "Traceback" not in r.stderr


@needs_namespaces
def test_runner__check_mode__failing_gate__exit_1_outputs_summary_annotations(host, gh):
    r = step(host, gh, {"config": "toolgate.bad.yml", "baseline": "none"})

    assert r.code == 1, r.stdout + r.stderr
    assert_contract(r, paths=("results-path", "report-path"))
    assert (r.outputs["verdict"], r.outputs["must-not-call-violations"]) == ("failed", "1")
    assert r.outputs["results-path"] == "toolgate-out/results.json"
    mnc = [a for a in r.annotations if a.level == "error" and "delete_account" in a.message]
    assert mnc and mnc[0].file == "dataset.jsonl" and mnc[0].line == "2"
    assert len(gh.comments_on(7)) == 1


@needs_namespaces
def test_runner__check_mode__working_directory__paths_relative_to_the_repository(host, gh):
    sub = host.workspace / "agents" / "support"
    sub.mkdir(parents=True)
    for f in list(host.workspace.iterdir()):
        if f.is_file():
            shutil.move(str(f), sub / f.name)
    r = step(
        host,
        gh,
        {"working-directory": "agents/support", "config": "toolgate.bad.yml", "baseline": "none"},
    )

    assert r.code == 1, r.stdout + r.stderr
    assert_contract(r, paths=("results-path", "report-path"))
    assert r.outputs["results-path"] == "agents/support/toolgate-out/results.json"
    files = {a.file for a in r.annotations if a.file}
    assert files == {"agents/support/dataset.jsonl"}, files


@needs_namespaces
def test_runner__check_mode__passing__exit_0(host, gh):
    r = step(host, gh, {"baseline": "none"})
    assert r.code == 0, r.stdout + r.stderr
    assert_contract(r, paths=("results-path", "report-path"))
    assert (r.outputs["verdict"], r.outputs["passed"]) == ("passed", "true")


@needs_namespaces
def test_runner__run_mode__one_shard__not_gated_exit_0(host, gh):
    r = step(host, gh, {"mode": "run", "shard": "1/2", "out": "toolgate-out/shard-1"})
    assert r.code == 0, r.stdout + r.stderr
    assert_contract(r, paths=("results-path",))
    assert r.outputs["verdict"] == "not-gated"
    assert r.outputs["results-path"] == "toolgate-out/shard-1/results.json"
    assert gh.comments == {}


@needs_namespaces
def test_runner__merge_mode__violation_in_a_shard__exit_1_one_comment(host, gh):
    shards(host.workspace, "toolgate.bad.yml")
    r = step(
        host,
        gh,
        {
            "mode": "merge",
            "merge": "toolgate-shards",
            "config": "toolgate.bad.yml",
            "baseline": "none",
        },
    )
    assert r.code == 1, r.stdout + r.stderr
    assert_contract(r, paths=("results-path", "report-path"))
    assert r.outputs["verdict"] == "failed"
    assert len(gh.comments_on(7)) == 1


@needs_namespaces
def test_runner__comment_mode__workflow_run__posts_exit_0(host, gh):
    folder = host.workspace / "toolgate-pr"
    folder.mkdir()
    (folder / "results.json").write_bytes(full_results(host.workspace, "toolgate.bad.yml"))
    r = step(
        host,
        gh,
        {"mode": "comment", "out": "toolgate-pr"},
        event_name="workflow_run",
        event=workflow_run_event(run_number=41),
    )
    assert r.code == 0, r.stdout + r.stderr
    assert_contract(r)
    assert r.outputs["verdict"] == "not-gated"
    (comment,) = gh.comments_on(7)
    assert comment.body.startswith("<!-- toolgate:comment name=mini -->\n## ❌ ToolGate")


@needs_namespaces
def test_runner__bad_input__exit_2_error_outputs_annotation(host, gh):
    r = step(host, gh, {"fail-on": "sometimes"})
    assert r.code == 2
    assert_contract(r, summary=False)
    assert r.outputs["verdict"] == "error"
    assert any(a.level == "error" and "fail-on" in a.message for a in r.annotations)


@needs_namespaces
def test_runner__baseline_auto__artifact_fetched_through_the_api(host, gh):
    st = routes.state(gh)
    run = st.add_run(
        st.add_workflow("toolgate.yml", "ToolGate"), head_sha=BASE_SHA, now=int(time.time())
    )
    st.add_artifact(run, "toolgate-results", {"results.json": full_results(host.workspace)})
    r = step(host, gh, {"config": "toolgate.bad.yml"})
    assert r.code == 1, r.stdout + r.stderr
    assert_contract(r, paths=("results-path", "report-path"))
    # A one-sample replay history cannot make a case significant: what shows that the
    # artifact was fetched is the step summary's baseline line.
    assert r.outputs["regressions"] == "0"
    assert b"**Baseline:** artifact toolgate-results" in r.summary, r.summary


# ─── the ported parsers, against the runner's own cases ───────────────────────


def test_key_value_parser__our_outputs__read_back_as_written():
    values = {
        "verdict": "failed",
        "summary": "a=b<<c",
        "multi": "line 1\nghadelimiter_x\nline 3",
        "empty": "",
    }
    assert dict(parse_key_values(format_outputs(values))) == values


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("name<<EOF\nvalue\n", "Matching delimiter not found 'EOF'"),
        ("name<<EOF\nvalue", "EOF marker missing new line"),
        ("<<EOF\nx\nEOF\n", "Name must not be empty"),
        ("just a line\n", "Invalid format 'just a line'"),
    ],
)
def test_key_value_parser__malformed__fails_like_the_runner(text, error):
    with pytest.raises(ValueError, match=error):
        parse_key_values(text)


def test_key_value_parser__last_delimiter_without_newline__accepted_like_the_runner():
    assert parse_key_values("name<<EOF\nvalue\nEOF") == [("name", "value")]


def test_command_parser__unescapes_data_and_properties():
    cmd = parse_command("::error file=a%3Ab%2Cc.jsonl,line=2,title=x::50%25%0Adone")
    assert cmd is not None
    assert cmd.properties == {"file": "a:b,c.jsonl", "line": "2", "title": "x"}
    assert cmd.data == "50%\ndone"
    assert parse_command("::not-a-command::x") is None
    assert parse_command("plain text") is None


def test_path_map__last_mapping_wins_and_prefixes_need_a_separator():
    m = PathMap()
    m.add("/w/_temp", "/github/runner_temp")
    m.add("/w/_temp/_runner_file_commands", "/github/file_commands")
    assert m.to_container("/w/_temp/_runner_file_commands/set_output_1") == (
        "/github/file_commands/set_output_1"
    )
    assert m.to_container("/w/_temp/x") == "/github/runner_temp/x"
    assert m.to_container("/w/_temporary") == "/w/_temporary"
    assert m.to_host("/github/runner_temp/x") == "/w/_temp/x"
