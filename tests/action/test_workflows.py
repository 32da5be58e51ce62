"""The shipped workflows use the Action as action.yml defines it.

actionlint (``.ci/lint``) checks the workflow syntax, expressions and permissions names,
but it does not read this repository's action.yml; these tests do: every ``with:`` key is
an input of the Action, every ``steps.<id>.outputs.<name>`` an output, and each pattern
(basic, sharded, fork-safe, baseline refresh) has the shape docs/action.md describes.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "workflows"
OURS = ROOT / ".github" / "workflows"
ACTION = YAML(typ="safe").load((ROOT / "action.yml").read_text("utf-8"))
ACTION_REFS = re.compile(r"^(\./|toolgate/toolgate@|docker://ghcr\.io/)")


def load(path: Path) -> dict[str, Any]:
    # YAML 1.1 reads a bare `on:` key as True; GitHub reads it as "on".
    data = YAML(typ="safe").load(path.read_text("utf-8"))
    if True in data:
        data["on"] = data.pop(True)
    return data


def all_workflows() -> list[Path]:
    return sorted([*EXAMPLES.glob("*.yml"), *OURS.glob("*.yml")])


def toolgate_steps(wf: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    found = []
    for job_name, job in wf["jobs"].items():
        for step in job.get("steps", []):
            if ACTION_REFS.match(str(step.get("uses", ""))):
                found.append((job_name, step))
    return found


def test_examples__all_present():
    names = {p.name for p in EXAMPLES.glob("*.yml")}
    assert names == {
        "basic.yml",
        "sharded.yml",
        "fork-safe.yml",
        "fork-safe-comment.yml",
        "baseline-refresh.yml",
        "paths-filtered.yml",
    }


@pytest.mark.parametrize("path", all_workflows(), ids=lambda p: p.name)
def test_workflow__with_keys_are_action_inputs_and_outputs_exist(path):
    wf = load(path)
    text = path.read_text("utf-8")
    ids = set()
    for _job, step in toolgate_steps(wf):
        unknown = set(step.get("with", {})) - set(ACTION["inputs"])
        assert not unknown, f"{path.name}: not inputs of the Action: {unknown}"
        if "id" in step:
            ids.add(step["id"])
    for step_id, output in re.findall(r"steps\.([\w-]+)\.outputs\.([\w-]+)", text):
        if step_id in ids:
            assert output in ACTION["outputs"], f"{path.name}: no output {output!r}"


@pytest.mark.parametrize("path", all_workflows(), ids=lambda p: p.name)
def test_workflow__declares_least_privilege_permissions(path):
    wf = load(path)
    perms = wf.get("permissions")
    assert isinstance(perms, dict), f"{path.name}: set permissions explicitly"
    levels = [perms, *(j["permissions"] for j in wf["jobs"].values() if "permissions" in j)]
    for p in levels:
        assert "write-all" not in str(p)
        assert set(p) <= {"contents", "pull-requests", "actions", "packages"}
        if p.get("contents") == "write" and path.name != "release.yml":
            pytest.fail(f"{path.name}: no workflow here but the release needs contents: write")
    for job_name, job in wf["jobs"].items():
        granted = job.get("permissions", perms)
        steps = job.get("steps", [])
        comments = any(
            ACTION_REFS.match(str(s.get("uses", "")))
            and s.get("with", {}).get("mode", "check") in ("check", "merge", "comment")
            and s.get("with", {}).get("comment", "true") != "false"
            for s in steps
        )
        if granted.get("pull-requests") == "write":
            assert comments, f"{path.name}: job {job_name} may comment but never does"


def test_basic__gates_prs_and_uploads_the_baseline_on_push():
    wf = load(EXAMPLES / "basic.yml")
    assert set(wf["on"]) == {"pull_request", "merge_group", "push", "workflow_dispatch"}
    assert wf["permissions"] == {"contents": "read", "pull-requests": "write", "actions": "read"}
    steps = wf["jobs"]["toolgate"]["steps"]
    upload = next(s for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact"))
    assert upload["with"]["name"] == "toolgate-results"  # BaselineConfig.artifact's default
    assert "push" in upload["if"]


def test_sharded__four_shards_then_one_merge_that_comments():
    wf = load(EXAMPLES / "sharded.yml")
    shard, gate = wf["jobs"]["shard"], wf["jobs"]["gate"]
    assert wf["permissions"] == {"contents": "read"}
    assert shard["permissions"] == {"contents": "read"}, "a shard never comments"
    assert gate["permissions"] == {
        "contents": "read",
        "pull-requests": "write",
        "actions": "read",
    }
    assert shard["strategy"]["matrix"]["shard"] == [1, 2, 3, 4]
    assert shard["strategy"]["fail-fast"] is False
    ((_, run_step),) = [s for s in toolgate_steps({"jobs": {"shard": shard}})]
    assert run_step["with"]["mode"] == "run"
    assert run_step["with"]["shard"] == "${{ matrix.shard }}/4"
    assert gate["needs"] == "shard"
    download = next(s for s in gate["steps"] if "download-artifact" in str(s.get("uses")))
    ((_, merge_step),) = [s for s in toolgate_steps({"jobs": {"gate": gate}})]
    assert merge_step["with"]["mode"] == "merge"
    assert merge_step["with"]["merge"] == download["with"]["path"]
    assert "comment" not in merge_step["with"]  # the one comment, from the merge


def test_fork_safe__gate_cannot_comment_and_companion_never_checks_out():
    gate_wf = load(EXAMPLES / "fork-safe.yml")
    comment_wf = load(EXAMPLES / "fork-safe-comment.yml")
    assert gate_wf["permissions"] == {"contents": "read", "actions": "read"}
    assert set(gate_wf["on"]) == {"pull_request", "merge_group", "push", "workflow_dispatch"}
    ((_, gate_step),) = toolgate_steps(gate_wf)
    assert gate_step["with"]["comment"] == "false"

    assert comment_wf["on"]["workflow_run"]["workflows"] == [gate_wf["name"]]
    assert comment_wf["on"]["workflow_run"]["types"] == ["completed"]
    job = comment_wf["jobs"]["comment"]
    uses = [str(s.get("uses", "")) for s in job["steps"]]
    assert not any(u.startswith("actions/checkout") for u in uses), "never check out PR code"
    download = next(s for s in job["steps"] if "download-artifact" in str(s.get("uses")))
    assert download["with"]["run-id"] == "${{ github.event.workflow_run.id }}"
    upload = next(
        s
        for j in gate_wf["jobs"].values()
        for s in j["steps"]
        if "upload-artifact" in str(s.get("uses")) and s["with"]["name"] != "toolgate-results"
    )
    assert download["with"]["name"] == upload["with"]["name"]
    assert "github.event_name == 'pull_request'" in upload["if"]
    ((_, comment_step),) = toolgate_steps(comment_wf)
    assert comment_step["with"] == {"mode": "comment", "out": download["with"]["path"]}


def test_baseline_refresh__extends_mains_history_without_gating_or_commenting():
    wf = load(EXAMPLES / "baseline-refresh.yml")
    assert wf["on"]["push"]["branches"] == ["main"]
    assert wf["permissions"]["actions"] == "read", "finding main's previous results"
    ((_, step),) = toolgate_steps(wf)
    assert step["with"]["baseline"] == "auto"
    assert step["with"]["fail-on"] == "never"
    upload = next(
        s for s in wf["jobs"]["baseline"]["steps"] if "upload-artifact" in str(s.get("uses"))
    )
    assert upload["with"]["name"] == "toolgate-results"


def test_self_test__uses_this_checkout_on_the_example_for_every_pr():
    wf = load(OURS / "self-test.yml")
    assert "pull_request" in wf["on"]
    ((_, step),) = toolgate_steps(wf)
    assert step["uses"] == "./"
    assert step["with"]["working-directory"] == "examples/support-agent"


def test_ci__tests_on_python_311_to_313_and_runs_the_linters():
    wf = load(OURS / "ci.yml")
    versions = wf["jobs"]["tests"]["strategy"]["matrix"]["python-version"]
    assert versions == ["3.11", "3.12", "3.13"]
    runs = " ".join(str(s.get("run", "")) for j in wf["jobs"].values() for s in j["steps"])
    for tool in ("ruff check", "mypy", "pytest", ".ci/lint"):
        assert tool in runs


def required_checks_table() -> list[tuple[str, tuple[str, ...], str]]:
    """docs/action.md, "Blocking merges": (workflow file, triggers, check to require)."""
    doc = (ROOT / "docs" / "action.md").read_text("utf-8")
    section = doc[doc.index("## Blocking merges") :]
    rows = re.findall(
        r"^\| `examples/workflows/([\w.-]+)` \| ([^|]+) \| `([^`]+)` \|$", section, re.M
    )
    return [
        (f, tuple(sorted(t.strip(" `") for t in triggers.split(","))), check)
        for f, triggers, check in rows
    ]


def check_names(wf: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The check each job reports: its ``name:``, else its id."""
    return {str(job.get("name", job_id)): job for job_id, job in wf["jobs"].items()}


def test_blocking_merges__docs_table__names_every_gating_example():
    table = required_checks_table()
    gating = {
        p.name
        for p in EXAMPLES.glob("*.yml")
        if "pull_request" in load(p)["on"] and p.name != "baseline-refresh.yml"
    }
    assert {f for f, _, _ in table} == gating


@pytest.mark.parametrize(
    ("name", "triggers", "check"), required_checks_table(), ids=lambda v: str(v)
)
def test_blocking_merges__example__has_the_triggers_and_the_check_the_docs_require(
    name, triggers, check
):
    wf = load(EXAMPLES / name)
    assert set(triggers) <= set(wf["on"]), f"{name}: lacks {set(triggers) - set(wf['on'])}"
    jobs = check_names(wf)
    assert check in jobs, f"{name}: no job reports a check named {check!r}: {sorted(jobs)}"
    job = jobs[check]
    if "needs" in job:
        # A job skipped because a job it needs failed would report success.
        assert "!cancelled()" in str(job.get("if", "")), f"{name}: {check} may be skipped"
    steps = [s for s in job["steps"] if ACTION_REFS.match(str(s.get("uses", "")))]
    assert steps, f"{name}: the required job {check!r} does not run ToolGate"
    assert all(s.get("with", {}).get("mode", "check") in ("check", "merge") for s in steps)
    assert "paths" not in (wf["on"].get("pull_request") or {}), "a paths: filter never reports"


def test_paths_filtered__gate_skipped_only_on_a_definite_no():
    wf = load(EXAMPLES / "paths-filtered.yml")
    assert not any(isinstance(v, dict) and "paths" in v for v in wf["on"].values())
    cond = wf["jobs"]["toolgate"]["if"]
    assert "needs.changes.outputs.relevant != 'false'" in cond and "!cancelled()" in cond


# ─── one workflow, one way to reference the Action ────────────────────────────

BASIC = EXAMPLES / "basic.yml"
SHOWN = re.compile(
    r"<!-- the workflow: examples/workflows/basic\.yml[^>]*-->\n```yaml\n(.*?)```", re.S
)


@pytest.mark.parametrize("doc", ["README.md", "docs/action.md"])
def test_one_workflow__the_docs_show_basic_yml_byte_for_byte(doc):
    """The README's workflow, the guide's and examples/workflows/basic.yml are one file;
    `toolgate init` writes the same (its template is compared below and in
    tests/commands)."""
    (shown,) = SHOWN.findall((ROOT / doc).read_text("utf-8"))
    assert shown == BASIC.read_text("utf-8")


def test_one_workflow__init_template_is_basic_yml():
    template = ROOT / "gate" / "templates" / "init" / "workflow.yml"
    assert template.read_bytes() == BASIC.read_bytes()


def test_one_workflow__pull_requests_pushes_merge_queue_and_manual_runs():
    wf = load(BASIC)
    assert set(wf["on"]) == {"pull_request", "push", "merge_group", "workflow_dispatch"}
    ((_, step),) = toolgate_steps(wf)
    # a base run must succeed to be found as the baseline: never failed by its gate
    assert "'never'" in step["with"]["fail-on"] and "'gate'" in step["with"]["fail-on"]
    for event in ("push", "workflow_dispatch"):
        assert f"github.event_name == '{event}'" in step["with"]["fail-on"]


BASE_EVENTS = ("push", "workflow_dispatch")


def baseline_uploads(wf: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        s
        for j in wf["jobs"].values()
        for s in j.get("steps", [])
        if "upload-artifact" in str(s.get("uses")) and s["with"]["name"] == "toolgate-results"
    ]


@pytest.mark.parametrize(
    "path",
    [p for p in sorted(EXAMPLES.glob("*.yml")) if "pull_request" in load(p)["on"]],
    ids=lambda p: p.name,
)
def test_every_gating_example__makes_its_own_baseline_on_pushes(path):
    """A workflow that gates pull requests also produces what they are compared with:
    on a push to main it uploads `toolgate-results` (BaselineConfig.artifact's default)
    from the step's results-path, and never on a pull request."""
    wf = load(path)
    assert "push" in wf["on"], f"{path.name}: no base run (push) makes the baseline"
    (upload,) = baseline_uploads(wf)
    cond = upload["if"]
    assert "github.event_name == 'push'" in cond and "pull_request" not in cond.replace(
        "github.event_name != 'pull_request'", ""
    )
    assert upload["with"]["path"] == "${{ steps.toolgate.outputs.results-path }}"


ACTION_USES = re.compile(r"toolgate/toolgate@([\w.\-]+)")


def released_major() -> str:
    version = re.search(
        r'^version = "(\d+)\.\d+\.\d+"$', (ROOT / "pyproject.toml").read_text(), re.M
    )
    assert version is not None
    return f"v{version.group(1)}"


def test_version_scheme__every_reference_is_the_major_release_tag():
    """One scheme: `toolgate/toolgate@vN`, N the major version pyproject.toml declares (the
    tag the release workflow moves to each release); `@main`, a commit SHA or one release
    (`@vN.x.y`) only where the text says why."""
    major = released_major()
    files = [
        ROOT / "README.md",
        ROOT / "SECURITY.md",
        *sorted((ROOT / "docs").glob("*.md")),
        *sorted(EXAMPLES.glob("*.yml")),
        ROOT / "gate" / "templates" / "init" / "workflow.yml",
    ]
    seen = 0
    for f in files:
        for ref in ACTION_USES.findall(f.read_text("utf-8")):
            seen += 1
            if ref in ("main", "sha256"):
                continue
            assert ref == major or ref.startswith(major + "."), f"{f.name}: @{ref}, not @{major}"
    assert seen >= 10
    release = (OURS / "release.yml").read_text("utf-8")
    assert "type=semver,pattern={{major}}" in release and "move vX.Y and vX" in release


def test_version_scheme__the_workflow_says_how_to_pin_by_commit_sha():
    text = BASIC.read_text("utf-8")
    ((_, step),) = toolgate_steps(load(BASIC))
    assert step["uses"] == f"toolgate/toolgate@{released_major()}"
    assert "full commit SHA" in text and "toolgate/toolgate@<40-character sha>" in text
