"""Run ``python -m gate.action`` as the Actions runner runs a Docker action.

The runner starts the container with the step's inputs as ``INPUT_<NAME>`` variables
(upper-cased, hyphens kept), the run's ``GITHUB_*`` variables, the workspace as working
directory, and two files the step appends to: ``GITHUB_OUTPUT`` and
``GITHUB_STEP_SUMMARY``. :func:`run_action` does the same with a subprocess: a clean
environment (nothing inherited from the test process but ``PATH``), real files, and
``GITHUB_API_URL`` pointing at the local fake GitHub server.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import subprocess
import sys
import zipfile
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
    output_names: list[str]
    """Every name written to ``GITHUB_OUTPUT``, in order, repeats included."""

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


@dataclass
class RunnerFiles:
    """The environment the runner gives the step, and the files it reads back after."""

    env: dict[str, str]
    output: Path
    summary: Path

    def outputs(self) -> dict[str, str]:
        return parse_outputs(self.output.read_text("utf-8"))

    def output_names(self) -> list[str]:
        return written_names(self.output.read_text("utf-8"))


def written_names(text: str) -> list[str]:
    """The names in a ``GITHUB_OUTPUT`` file, in order, repeats included."""
    names: list[str] = []
    delim: str | None = None
    for line in text.split("\n"):
        if delim is not None:
            delim = None if line == delim else delim
            continue
        if m := re.fullmatch(r"([A-Za-z_][A-Za-z0-9_-]*)<<(.+)", line):
            names.append(m.group(1))
            delim = m.group(2)
        elif line:
            names.append(line.partition("=")[0])
    return names


def runner_env(
    workspace: Path,
    runner_temp: Path,
    *,
    inputs: dict[str, str],
    event_name: str = "pull_request",
    event: dict[str, Any] | None = None,
    api_url: str = "http://127.0.0.1:9/",
    token: str | None = "ghs_action_token",
    extra_env: dict[str, str] | None = None,
) -> RunnerFiles:
    """What the runner hands a Docker action: ``INPUT_*`` (hyphens kept), the run's
    ``GITHUB_*``, the event payload, empty ``GITHUB_OUTPUT``/``GITHUB_STEP_SUMMARY`` files,
    and nothing inherited from the test process but ``PATH``."""
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
    return RunnerFiles(env, output, summary)


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
    files = runner_env(
        workspace,
        runner_temp,
        inputs=inputs,
        event_name=event_name,
        event=event,
        api_url=api_url,
        token=token,
        extra_env=extra_env,
    )
    proc = subprocess.run(
        [sys.executable, "-P", "-m", "gate.action"],
        cwd=workspace,
        env=files.env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return ActionRun(
        code=proc.returncode,
        stdout=proc.stdout,
        stderr=proc.stderr,
        outputs=files.outputs(),
        summary=files.summary.read_text("utf-8"),
        output_names=files.output_names(),
    )


# ─── a small repository whose gate passes (good runs) or fails (bad runs) ──────


def mini_repo(ws: Path) -> Path:
    """A repository with a 12-case dataset and a replay agent: ``toolgate.yml`` replays
    runs that pass every case, ``toolgate.bad.yml`` runs where case order-2 calls the
    must-not-call ``delete_account``."""
    from gate.dataset import load_dataset

    ws.mkdir(parents=True, exist_ok=True)
    tool = {
        "type": "function",
        "function": {
            "name": "lookup_order",
            "description": "Look up an order.",
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string"}},
                "required": ["order_id"],
                "additionalProperties": False,
            },
        },
    }
    danger = {
        "type": "function",
        "function": {
            "name": "delete_account",
            "description": "Delete the account.",
            "parameters": {"type": "object", "properties": {"user_id": {"type": "string"}}},
        },
    }
    (ws / "tools.json").write_text(json.dumps([tool, danger]), "utf-8")
    cases, good, bad = [], [], []
    for i in range(1, 13):
        cid = f"order-{i}"
        cases.append(
            {
                "id": cid,
                "user_input": f"Where is order {i}?",
                "available_tools": "@tools.json",
                "expected_tool_calls": [{"name": "lookup_order", "args": {"order_id": str(i)}}],
                "must_not_call": ["delete_account"],
                "tool_responses": [{"name": "lookup_order", "response": {"status": "shipped"}}],
            }
        )
        call = {"id": "c1", "name": "lookup_order", "arguments": {"order_id": str(i)}}
        wrong = {"id": "c1", "name": "delete_account", "arguments": {"user_id": "u1"}}
        for runs, c in ((good, call), (bad, wrong if i == 2 else call)):
            runs.append({"case_id": cid, "sample": 0, "turns": [{"calls": [c]}], "final": "ok"})
    lines = lambda rows: "".join(json.dumps(r) + "\n" for r in rows)  # noqa: E731
    (ws / "dataset.jsonl").write_text(lines(cases), "utf-8")
    (ws / "runs.good.jsonl").write_text(lines(good), "utf-8")
    (ws / "runs.bad.jsonl").write_text(lines(bad), "utf-8")
    sha = load_dataset(ws / "dataset.jsonl").sha256
    for name, runs in (("toolgate.yml", "runs.good.jsonl"), ("toolgate.bad.yml", "runs.bad.jsonl")):
        (ws / name).write_text(
            "name: mini\n"
            f"dataset:\n  path: dataset.jsonl\n  sha256: {sha}\n"
            f"agent:\n  kind: replay\n  runs: {runs}\n"
            "gates:\n  - metric: call_accuracy\n    min: 0.9\n"
            "regressions:\n  max_new_failures: 0\n",
            "utf-8",
        )
    return ws


def shards(ws: Path, config: str, n: int = 2, folder: str = "toolgate-shards") -> Path:
    """What the matrix jobs of sharded.yml leave after download-artifact: one folder per
    shard, each with that shard's results.json (``toolgate run`` + ``score --shard``)."""
    from gate.cli import main as cli

    root = ws / folder
    for i in range(1, n + 1):
        out = root / f"toolgate-shard-{i}"
        cfg = str(ws / config)
        assert cli(["run", "--config", cfg, "--out", str(out), "--shard", f"{i}/{n}"]) == 0
        runs = str(out / "runs.jsonl")
        assert (
            cli(
                ["score", "--config", cfg, "--runs", runs, "--out", str(out), "--shard", f"{i}/{n}"]
            )
            == 0
        )
    return root


def full_results(ws: Path, config: str = "toolgate.yml") -> bytes:
    from gate.cli import main as cli

    out = ws.parent / f"full-{config}"
    assert cli(["run", "--config", str(ws / config), "--out", str(out)]) == 0
    assert (
        cli(
            [
                "score",
                "--config",
                str(ws / config),
                "--runs",
                str(out / "runs.jsonl"),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    return (out / "results.json").read_bytes()


def merge_group_event(base_sha: str = BASE_SHA, head_sha: str = HEAD_SHA) -> dict[str, Any]:
    """A ``merge_group`` (``checks_requested``) payload: the queue built the group's commit
    ``head_sha`` on ``base_sha`` of main."""
    return {
        "action": "checks_requested",
        "merge_group": {
            "head_sha": head_sha,
            "head_ref": f"refs/heads/gh-readonly-queue/main/pr-7-{base_sha}",
            "base_sha": base_sha,
            "base_ref": "refs/heads/main",
            "head_commit": {"id": head_sha, "tree_id": "t" * 40, "message": "Tweak (#7)"},
        },
        "repository": {"id": 1, "full_name": REPOSITORY},
        "sender": {"login": "octocat", "type": "User"},
    }


# ─── an agent with packages of its own (the `install` and `setup` inputs) ────────

AGENT = '''\
"""A support agent that needs packages of its own."""
import json
import sys

import acme_phrasing
import acme_support_sdk

open("setup-ran.txt").close()  # written by the step's `setup:`, before the gate

ids = {}
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "start":
        ids = {"case_id": msg["case_id"], "sample": msg["sample"]}
        order = acme_support_sdk.order_id(msg["messages"][-1]["content"])
        call = {"id": "c1", "name": "lookup_order", "arguments": {"order_id": order}}
        print(json.dumps({"type": "tool_calls", **ids, "calls": [call]}), flush=True)
    else:
        status = msg["results"][0]["content"]["status"]
        print(json.dumps({"type": "final", **ids, "content": acme_phrasing.say(status)}),
              flush=True)
'''


def wheel(folder: Path, dist: str, version: str, module: str, source: str) -> Path:
    """A pure-Python wheel, written as the wheel format says (PEP 427): the module, the
    metadata, and a RECORD of every file's sha256."""
    info = f"{dist}-{version}.dist-info"
    files = {
        f"{module}/__init__.py": source.encode(),
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n".encode(),
        f"{info}/WHEEL": (
            b"Wheel-Version: 1.0\nGenerator: toolgate-tests\nRoot-Is-Purelib: true\n"
            b"Tag: py3-none-any\n"
        ),
    }
    record = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    path = folder / f"{dist}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
    return path


def agent_repo(ws: Path) -> None:
    """mini_repo's dataset with a command agent that imports two packages of its own."""
    mini_repo(ws)
    wheels = ws / "wheels"
    wheels.mkdir()
    wheel(
        wheels,
        "acme_support_sdk",
        "1.0",
        "acme_support_sdk",
        "import re\n\ndef order_id(text):\n    return re.search(r'\\d+', text).group(0)\n",
    )
    wheel(wheels, "acme_phrasing", "2.0", "acme_phrasing",
          "def say(status):\n    return f'Your order has {status}.'\n")  # fmt: skip
    (ws / "requirements.txt").write_text(
        "--no-index\n--find-links wheels\nacme-support-sdk==1.0\nacme-phrasing==2.0\n"
    )
    (ws / "agent.py").write_text(AGENT)
    pinned = next(ln for ln in (ws / "toolgate.yml").read_text().splitlines() if "sha256" in ln)
    (ws / "toolgate.agent.yml").write_text(
        "name: mini\n"
        f"dataset:\n  path: dataset.jsonl\n{pinned}\n"
        'agent:\n  kind: command\n  command: ["python", "agent.py"]\n  workers: 2\n'
        "  timeout_s: 20\n"
        "samples: 1\n"
        "gates:\n  - metric: call_accuracy\n    min: 0.9\n"
    )
