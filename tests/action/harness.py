"""Run ``python -m gate.action`` as the Actions runner runs a Docker action.

The runner starts the container with the step's inputs as ``INPUT_<NAME>`` variables
(upper-cased, hyphens kept), the run's ``GITHUB_*`` variables, the workspace as working
directory, and two files the step appends to: ``GITHUB_OUTPUT`` and
``GITHUB_STEP_SUMMARY``. :func:`run_action` does the same with a subprocess: a clean
environment (nothing inherited from the test process but ``PATH``), real files, and
``GITHUB_API_URL`` pointing at the local fake GitHub server.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPOSITORY = "octo/agent"
BASE_SHA = "b" * 40
HEAD_SHA = "c" * 40
RUN_ID = 9001


@dataclass
class ActionRun:
    code: int
    stdout: str
    stderr: str
    outputs: dict[str, str]
    summary: str

    def annotations(self, level: str) -> list[str]:
        return [line for line in self.stdout.splitlines() if line.startswith(f"::{level}")]


def parse_outputs(text: str) -> dict[str, str]:
    """``GITHUB_OUTPUT`` as the runner reads it: ``name=value`` and ``name<<DELIM`` blocks;
    a later value of a name replaces an earlier one."""
    out: dict[str, str] = {}
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line:
            continue
        m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_-]*)<<(.+)", line)
        if m:
            name, delim = m.groups()
            value: list[str] = []
            while lines[i] != delim:
                value.append(lines[i])
                i += 1
            i += 1
            out[name] = "\n".join(value)
            continue
        name, sep, val = line.partition("=")
        assert sep, f"not an output line: {line!r}"
        out[name] = val
    return out


def pr_event(
    number: int = 7,
    *,
    base_sha: str = BASE_SHA,
    head_sha: str = HEAD_SHA,
    fork: bool = False,
    base_ref: str = "main",
) -> dict[str, Any]:
    """A ``pull_request`` (``opened``) payload with the fields GitHub sends that matter."""
    owner, repo = REPOSITORY.split("/")
    head_owner = "someone-else" if fork else owner
    repo_json = {
        "id": 1,
        "name": repo,
        "full_name": REPOSITORY,
        "owner": {"login": owner, "type": "Organization"},
        "fork": False,
        "default_branch": "main",
    }
    head_repo = {
        **repo_json,
        "id": 2 if fork else 1,
        "full_name": f"{head_owner}/{repo}",
        "owner": {"login": head_owner, "type": "User"},
        "fork": fork,
    }
    return {
        "action": "opened",
        "number": number,
        "pull_request": {
            "url": f"https://api.github.test/repos/{REPOSITORY}/pulls/{number}",
            "id": 100000 + number,
            "number": number,
            "state": "open",
            "title": "Tweak the refund prompt",
            "user": {"login": head_owner, "type": "User"},
            "draft": False,
            "head": {
                "label": f"{head_owner}:feature",
                "ref": "feature",
                "sha": head_sha,
                "repo": head_repo,
            },
            "base": {
                "label": f"{owner}:{base_ref}",
                "ref": base_ref,
                "sha": base_sha,
                "repo": repo_json,
            },
            "author_association": "CONTRIBUTOR" if fork else "MEMBER",
        },
        "repository": repo_json,
        "sender": {"login": head_owner, "type": "User"},
    }


def push_event(sha: str = BASE_SHA) -> dict[str, Any]:
    return {
        "ref": "refs/heads/main",
        "before": "0" * 40,
        "after": sha,
        "repository": {"id": 1, "full_name": REPOSITORY},
        "head_commit": {"id": sha, "message": "Merge pull request #6"},
    }


def workflow_run_event(
    head_sha: str = HEAD_SHA, *, run_number: int = 41, conclusion: str = "failure"
) -> dict[str, Any]:
    """A ``workflow_run`` (``completed``) payload for a fork PR's run: its
    ``pull_requests`` list is empty for forks, so the PR must be looked up."""
    return {
        "action": "completed",
        "workflow_run": {
            "id": 7700 + run_number,
            "name": "ToolGate (fork-safe)",
            "run_number": run_number,
            "event": "pull_request",
            "status": "completed",
            "conclusion": conclusion,
            "head_branch": "feature",
            "head_sha": head_sha,
            "html_url": f"https://github.test/{REPOSITORY}/actions/runs/{7700 + run_number}",
            "pull_requests": [],
            "head_repository": {"full_name": f"someone-else/{REPOSITORY.split('/')[1]}"},
        },
        "repository": {"id": 1, "full_name": REPOSITORY},
    }


def run_action(
    workspace: Path,
    runner_temp: Path,
    *,
    inputs: dict[str, str],
    event_name: str = "pull_request",
    event: dict[str, Any] | None = None,
    api_url: str = "http://127.0.0.1:9/",
    token: str | None = "ghs_action_token",
    extra_env: dict[str, str] | None = None,
    timeout: float = 180,
) -> ActionRun:
    """Run the entrypoint the way the runner runs the container, and collect what the
    step leaves: exit code, log, outputs, summary."""
    runner_temp.mkdir(parents=True, exist_ok=True)
    event_path = runner_temp / "event.json"
    event_path.write_text(json.dumps(event if event is not None else pr_event()), "utf-8")
    output = runner_temp / "output.txt"
    summary = runner_temp / "summary.md"
    output.write_text("", "utf-8")
    summary.write_text("", "utf-8")
    home = runner_temp / "home"
    home.mkdir(exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "CI": "true",
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": event_name,
        "GITHUB_EVENT_PATH": str(event_path),
        "GITHUB_REPOSITORY": REPOSITORY,
        "GITHUB_REPOSITORY_OWNER": REPOSITORY.split("/")[0],
        "GITHUB_API_URL": api_url.rstrip("/"),
        "GITHUB_SERVER_URL": "https://github.test",
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_OUTPUT": str(output),
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_SHA": HEAD_SHA,
        "GITHUB_REF": "refs/pull/7/merge" if event_name == "pull_request" else "refs/heads/main",
        "GITHUB_BASE_REF": "main" if event_name.startswith("pull_request") else "",
        "GITHUB_HEAD_REF": "feature" if event_name.startswith("pull_request") else "",
        "GITHUB_RUN_ID": str(RUN_ID),
        "GITHUB_RUN_NUMBER": "12",
        "GITHUB_RUN_ATTEMPT": "1",
        "GITHUB_WORKFLOW": "ToolGate",
        "GITHUB_WORKFLOW_REF": f"{REPOSITORY}/.github/workflows/toolgate.yml@refs/pull/7/merge",
        "GITHUB_JOB": "toolgate",
        "GITHUB_ACTION": "toolgate",
        "RUNNER_TEMP": str(runner_temp),
        "RUNNER_OS": "Linux",
        "TOOLGATE_GITHUB_BUDGET_S": "20",
    }
    if token is not None:
        env["INPUT_GITHUB-TOKEN"] = token
    for name, value in inputs.items():
        env[f"INPUT_{name.upper()}"] = value
    env.update(extra_env or {})
    proc = subprocess.run(
        [sys.executable, "-P", "-m", "gate.action"],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return ActionRun(
        code=proc.returncode,
        stdout=proc.stdout,
        stderr=proc.stderr,
        outputs=parse_outputs(output.read_text("utf-8")),
        summary=summary.read_text("utf-8"),
    )
