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
    assert "write-all" not in str(perms)
    allowed = {"contents", "pull-requests", "actions", "packages"}
    assert set(perms) <= allowed
    if perms.get("contents") == "write":
        pytest.fail(f"{path.name}: no workflow here needs contents: write")


def test_basic__gates_prs_and_uploads_the_baseline_on_push():
    wf = load(EXAMPLES / "basic.yml")
    assert set(wf["on"]) == {"pull_request", "push"}
    assert wf["permissions"] == {"contents": "read", "pull-requests": "write", "actions": "read"}
    steps = wf["jobs"]["toolgate"]["steps"]
    upload = next(s for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact"))
    assert upload["with"]["name"] == "toolgate-results"  # BaselineConfig.artifact's default
    assert "push" in upload["if"]


def test_sharded__four_shards_then_one_merge_that_comments():
    wf = load(EXAMPLES / "sharded.yml")
    shard, gate = wf["jobs"]["shard"], wf["jobs"]["gate"]
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
    assert gate_wf["permissions"] == {"contents": "read"}
    assert list(gate_wf["on"]) == ["pull_request"]
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
        if "upload-artifact" in str(s.get("uses"))
    )
    assert download["with"]["name"] == upload["with"]["name"]
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
