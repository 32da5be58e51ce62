"""The README's workflow in a fresh repository, end to end: the first push makes the
baseline, the pull requests after it are compared with it — as a new team would meet it.

The workflow is read from README.md (the block tests/action/test_workflows.py keeps equal
to examples/workflows/basic.yml); each step runs as the runner runs it: its ``if:`` and
``with:`` evaluated for the event (:mod:`tests.action.expressions`), the ToolGate step
started as a container action (:func:`tests.action.runner_contract.run_container_action`:
the runner's mounts, environment and file commands) against the fake GitHub API
(tests/servers), and ``actions/upload-artifact`` emulated by putting the zip it would make
— the file its ``path:`` names, under its ``name:`` — into the fake API's artifact store as
a run of this workflow, with the conclusion the job would have.

The repository is the shipped example at its root (``toolgate.yml`` as the workflow names
it). The push is a base run (no earlier artifact: it seeds every case's history); the pull
requests then find that artifact through ``baseline: auto``:

* the regressed build fails with its 16 regressions, and the comment says which artifact;
* the same build with one case appended to the dataset (re-pinned) fails with the same
  regressions, the new case named — a dataset edit is compared case by case;
* the same build under another gate ``name:`` still compares, saying whose artifact;
* the good build with two passing cases deleted (re-pinned) fails, its first line saying
  so; retired in the config, it passes and lists them;
* a pull request whose dataset is another one is "not compared": ⚠️, the reason in the
  first line, at most 40 visible lines, ``compared: false``; with ``require-baseline:
  true`` it fails.

Needs root and ``unshare --mount`` (as tests/action/test_runner_contract.py).
"""

from __future__ import annotations

import io
import json
import re
import shutil
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from tests.action.expressions import render, step_runs
from tests.action.harness import BASE_SHA, HEAD_SHA, REPOSITORY, pr_event, push_event
from tests.action.runner_contract import (
    RunnerHost,
    StepResult,
    namespaces_available,
    run_container_action,
)
from tests.servers import github_actions_routes as routes
from tests.servers.github_server import GitHubServer
from tests.test_example_goldens import visible_lines

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "support-agent"
TOKEN = "ghs_readme_workflow_token"
PR = 7
WHY_NOT = namespaces_available()
pytestmark = pytest.mark.skipif(WHY_NOT is not None, reason=WHY_NOT or "")

SHOWN = re.compile(
    r"<!-- the workflow: examples/workflows/basic\.yml[^>]*-->\n```yaml\n(.*?)```", re.S
)


def readme_workflow() -> dict[str, Any]:
    (text,) = SHOWN.findall((ROOT / "README.md").read_text("utf-8"))
    data = YAML(typ="safe").load(text)
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads `on:` as True
    return data


WORKFLOW = readme_workflow()
(JOB,) = WORKFLOW["jobs"].values()


def toolgate_step() -> dict[str, Any]:
    (step,) = [s for s in JOB["steps"] if str(s.get("uses", "")).startswith("toolgate/")]
    return step


@dataclass
class Job:
    """One run of the README's job: the ToolGate step's result and what the job stored."""

    step: StepResult
    conclusion: str
    uploaded: dict[str, bytes]
    """Artifact name → the zip upload-artifact would have stored."""


def run_job(
    gh: GitHubServer,
    host: RunnerHost,
    *,
    event_name: str,
    event: dict[str, Any],
    sha: str,
    extra_with: dict[str, str] | None = None,
) -> Job:
    """The README job's steps in order, for ``event_name``: checkout is the workspace the
    test prepared; the ToolGate step runs as a container action; an upload step whose
    ``if:`` holds stores the file its ``path:`` names."""
    ctx: dict[str, Any] = {"github": {"event_name": event_name}, "steps": {}}
    status = "success"
    result: StepResult | None = None
    uploaded: dict[str, bytes] = {}
    assert set(WORKFLOW["on"]) >= {event_name}, f"the workflow does not run on {event_name}"
    for step in JOB["steps"]:
        uses = str(step.get("uses", ""))
        if uses.startswith("actions/checkout"):
            continue
        if not step_runs(step, ctx, status):
            continue
        with_ = {k: render(str(v), ctx, status=status) for k, v in step.get("with", {}).items()}
        if uses.startswith("toolgate/"):
            with_.update(extra_with or {})
            result = run_container_action(
                host,
                with_=with_,
                event_name=event_name,
                event=event,
                api_url=gh.api_url,
                token=TOKEN,
                repository=REPOSITORY,
                sha=sha,
                timeout=300,
            )
            ctx["steps"][step["id"]] = {"outputs": result.outputs}
            if result.code != 0:
                status = "failure"
        elif uses.startswith("actions/upload-artifact"):
            # upload-artifact of one file: the zip holds it at its root, by its name
            path = host.workspace / with_["path"]
            assert path.is_file(), f"upload-artifact: no file {with_['path']!r}"
            buf = io.BytesIO()
            with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
                z.write(path, path.name)
            uploaded[with_["name"]] = buf.getvalue()
        else:
            raise AssertionError(f"a step this test cannot run: {step}")
    assert result is not None, "the ToolGate step did not run"
    return Job(result, status, uploaded)


def store(gh: GitHubServer, job: Job, *, sha: str, event: str) -> int:
    """What GitHub keeps of a finished run of this workflow on main: the run (with the
    job's conclusion) and its artifacts. Returns the run's number."""
    st = routes.state(gh)
    wf = next((w for w in st.workflows if w.file == "toolgate.yml"), None)
    if wf is None:
        wf = st.add_workflow("toolgate.yml", WORKFLOW["name"])
    run = st.add_run(
        wf, head_sha=sha, event=event, conclusion=job.conclusion, age_days=0, now=int(time.time())
    )
    for name, data in job.uploaded.items():
        st.add_artifact(run, name, data=data)
    return run.run_number


def checkout(root: Path, name: str, config: str = "toolgate.yml") -> RunnerHost:
    """A fresh checkout of the repository: the example at its root, the config the
    workflow names being ``config`` of the example."""
    host = RunnerHost(root / name)
    for f in ("agent.py", "dataset.jsonl", "tools.json"):
        shutil.copy(EXAMPLE / f, host.workspace / f)
    shutil.copy(EXAMPLE / config, host.workspace / "toolgate.yml")
    return host


def repin(host: RunnerHost) -> None:
    from gate.cli import main as cli

    assert cli(["pin", "--config", str(host.workspace / "toolgate.yml")]) == 0


def comment_of(gh: GitHubServer, gate: str = "support-agent") -> str:
    """The sticky comment of the gate (one per gate name, edited by every run)."""
    marker = f"<!-- toolgate:comment name={gate} -->"
    (comment,) = [c for c in gh.comments_on(PR) if c.body.startswith(marker)]
    return comment.body


@pytest.fixture(scope="module")
def gh() -> Iterator[GitHubServer]:
    owner, repo = REPOSITORY.split("/")
    server = GitHubServer(owner=owner, repo=repo, register=[routes.register])
    server.add_token(TOKEN, "github-actions[bot]", kind="app")
    server.add_pull(PR, base_sha=BASE_SHA, head_sha=HEAD_SHA)
    with server:
        yield server


@pytest.fixture(scope="module")
def first_push(gh: GitHubServer, tmp_path_factory: pytest.TempPathFactory) -> Job:
    """The workflow's first run: a push to main of the fresh repository."""
    host = checkout(tmp_path_factory.mktemp("readme"), "push")
    job = run_job(gh, host, event_name="push", event=push_event(BASE_SHA), sha=BASE_SHA)
    store(gh, job, sha=BASE_SHA, event="push")
    return job


def pull_request(
    gh: GitHubServer, host: RunnerHost, extra_with: dict[str, str] | None = None
) -> Job:
    return run_job(
        gh,
        host,
        event_name="pull_request",
        event=pr_event(PR, base_sha=BASE_SHA, head_sha=HEAD_SHA),
        sha=HEAD_SHA,
        extra_with=extra_with,
    )


def regressed(job: Job) -> set[str]:
    data = json.loads((job.step.workspace / job.step.outputs["results-path"]).read_text())
    return {f["case_id"] for f in data["comparison"]["flips"] if f["kind"] == "regression"}


# ─── the first push ───────────────────────────────────────────────────────────


def test_first_push__a_base_run_that_states_its_bill_and_uploads_the_baseline(
    first_push: Job,
) -> None:
    r = first_push.step
    assert r.code == 0, r.stdout + r.stderr
    assert first_push.conclusion == "success"
    assert r.outputs["verdict"] == "passed" and r.outputs["compared"] == "false"
    bill = next(line for line in r.stderr.splitlines() if "agent runs" in line)
    assert bill == (
        "toolgate: this base run makes 2,772 agent runs: 77 cases × 3 samples (231), and 2,541 "
        "more to seed each case's base history to 36 samples (policy.min_history; "
        "policy.max_seed_samples caps it)."
    )
    assert set(first_push.uploaded) == {"toolgate-results"}
    with zipfile.ZipFile(io.BytesIO(first_push.uploaded["toolgate-results"])) as z:
        (name,) = z.namelist()
        results = json.loads(z.read(name))
    assert name == "results.json" and results["policy"]["base_run"] is True
    assert all(sum(e["samples"] for e in c["history"]) == 36 for c in results["cases"])


# ─── the pull requests after it ───────────────────────────────────────────────


@pytest.fixture(scope="module")
def regressed_pr(
    gh: GitHubServer, first_push: Job, tmp_path_factory: pytest.TempPathFactory
) -> Job:
    host = checkout(tmp_path_factory.mktemp("readme"), "pr", "toolgate.regressed.yml")
    return pull_request(gh, host)


def test_pull_request__regressed_build__fails_with_its_regressions_against_the_artifact(
    gh: GitHubServer, regressed_pr: Job
) -> None:
    r = regressed_pr.step
    assert r.code == 1, r.stdout + r.stderr
    assert r.outputs["verdict"] == "failed" and r.outputs["compared"] == "true"
    assert r.outputs["regressions"] == "16"
    assert regressed_pr.uploaded == {}  # a pull request never replaces the baseline
    first = comment_of(gh).splitlines()[1]
    assert first.startswith("## ❌ ToolGate `support-agent` failed")
    assert "16 cases \\[48 samples\\] regressed against artifact toolgate-results of run" in first
    assert " on main at bbbbbbb" in first
    assert b"**Baseline:** artifact toolgate-results of run #" in r.summary


def test_pull_request__appends_a_case_and_repins__same_regressions_the_case_named(
    gh: GitHubServer, regressed_pr: Job, tmp_path_factory: pytest.TempPathFactory
) -> None:
    host = checkout(tmp_path_factory.mktemp("readme"), "pr-new-case", "toolgate.regressed.yml")
    dataset = host.workspace / "dataset.jsonl"
    last = json.loads(dataset.read_text().splitlines()[-1])
    dataset.write_text(dataset.read_text() + json.dumps({**last, "id": "added-by-this-pr"}) + "\n")
    repin(host)
    job = pull_request(gh, host)
    r = job.step
    assert r.code == 1, r.stdout + r.stderr
    assert r.outputs["compared"] == "true"
    assert regressed(job) == regressed(regressed_pr) and len(regressed(job)) == 16
    body = comment_of(gh)
    assert "1 case added \\(`added-by-this-pr`\\)" in body
    assert "made from dataset sha256" not in body


def test_pull_request__renames_the_gate__still_compared_saying_whose_artifact(
    gh: GitHubServer, regressed_pr: Job, tmp_path_factory: pytest.TempPathFactory
) -> None:
    host = checkout(tmp_path_factory.mktemp("readme"), "pr-renamed", "toolgate.regressed.yml")
    config = host.workspace / "toolgate.yml"
    config.write_text(config.read_text().replace("name: support-agent", "name: support"))
    job = pull_request(gh, host)
    r = job.step
    assert r.code == 1, r.stdout + r.stderr
    assert r.outputs["compared"] == "true"
    assert regressed(job) == regressed(regressed_pr)
    assert b"made by the gate 'support-agent' (this gate is 'support')" in r.summary


def _without_two_passing_cases(host: RunnerHost) -> list[str]:
    dataset = host.workspace / "dataset.jsonl"
    rows = [json.loads(line) for line in dataset.read_text().splitlines()]
    gone = ["status-basic", "cancel-basic"]
    assert {r["id"] for r in rows} >= set(gone)
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows if r["id"] not in gone))
    repin(host)
    return gone


def test_pull_request__deletes_two_passing_cases__fails_the_first_line_says_so(
    gh: GitHubServer, first_push: Job, tmp_path_factory: pytest.TempPathFactory
) -> None:
    host = checkout(tmp_path_factory.mktemp("readme"), "pr-removed")
    _without_two_passing_cases(host)
    r = pull_request(gh, host).step
    assert r.code == 1, r.stdout + r.stderr
    first = comment_of(gh).splitlines()[1]
    assert first == (
        "## ❌ ToolGate `support-agent` failed — 2 cases removed — both passed on base"
    )


def test_pull_request__retires_the_two_cases__passes_and_lists_them(
    gh: GitHubServer, first_push: Job, tmp_path_factory: pytest.TempPathFactory
) -> None:
    host = checkout(tmp_path_factory.mktemp("readme"), "pr-retired")
    gone = _without_two_passing_cases(host)
    config = host.workspace / "toolgate.yml"
    config.write_text(
        config.read_text().replace(
            "  normalize:\n",
            "  retired:\n"
            + "".join(f"    - {{id: {g}, reason: merged into the history cases}}\n" for g in gone)
            + "  normalize:\n",
        )
    )
    r = pull_request(gh, host).step
    assert r.code == 0, r.stdout + r.stderr
    body = comment_of(gh)
    assert body.splitlines()[1].startswith("## ✅ ToolGate `support-agent` passed")
    for g in gone:
        assert f"- `{g}` — merged into the history cases (base " in body


def _another_dataset(root: Path, name: str) -> RunnerHost:
    """The README's repository whose pull request replaces the dataset by another one
    (toolgate init's), under the same gate name."""
    from gate.cli import main as cli

    host = RunnerHost(root / name)
    assert cli(["init", str(host.workspace)]) == 0
    config = host.workspace / "toolgate.yml"
    config.write_text(config.read_text().replace("name: toolgate", "name: support-agent"))
    return host


def test_pull_request__another_dataset__not_compared_short_never_green(
    gh: GitHubServer, first_push: Job, tmp_path_factory: pytest.TempPathFactory
) -> None:
    host = _another_dataset(tmp_path_factory.mktemp("readme"), "pr-other")
    r = pull_request(gh, host).step
    assert r.code == 0, r.stdout + r.stderr
    assert r.outputs["compared"] == "false"
    body = comment_of(gh)
    first = body.splitlines()[1]
    assert first.startswith("## ⚠️ ToolGate `support-agent` passed — not compared: ")
    assert "another dataset" in first and "✅" not in first
    assert len(visible_lines(body)) <= 40, visible_lines(body)
    console = next(line for line in r.stdout.splitlines() if line.startswith("ToolGate support"))
    assert "not compared" in console
    assert "every case is compared" not in r.stdout


def test_pull_request__another_dataset__require_baseline__fails_naming_why(
    gh: GitHubServer, first_push: Job, tmp_path_factory: pytest.TempPathFactory
) -> None:
    host = _another_dataset(tmp_path_factory.mktemp("readme"), "pr-other-required")
    r = pull_request(gh, host, {"require-baseline": "true"}).step
    assert r.code == 1, r.stdout + r.stderr
    assert r.outputs["compared"] == "false"
    first = comment_of(gh).splitlines()[1]
    assert first.startswith(
        "## ❌ ToolGate `support-agent` failed — not compared: the baseline was made from "
        "another dataset"
    )
    assert first.endswith("\\(require-baseline\\)")
