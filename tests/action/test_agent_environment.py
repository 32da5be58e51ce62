"""The agent's own packages in the container: the ``install`` and ``setup`` inputs, through
the entrypoint started the way the Actions runner starts a container action
(:mod:`tests.action.runner_contract`).

The agent is a real ``command`` agent (``python agent.py``) importing two packages that
ToolGate does not ship; they are real wheels, built here, installed by real pip from a
folder of the repository (``--no-index --find-links wheels`` in requirements.txt, as a team
with vendored wheels writes it): no network. ToolGate's own environment — the interpreter
running the entrypoint — is compared before and after: the same packages, and the agent's
not importable there.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gate.replay.agentenv import AgentEnvironment, _pip_environ
from tests.action.harness import HEAD_SHA, REPOSITORY, agent_repo, pr_event
from tests.action.runner_contract import (
    RunnerHost,
    StepResult,
    namespaces_available,
    run_container_action,
)
from tests.servers import github_actions_routes as routes
from tests.servers.github_server import GitHubServer

TOKEN = "ghs_agent_env_token"
WHY_NOT = namespaces_available()
needs_namespaces = pytest.mark.skipif(WHY_NOT is not None, reason=WHY_NOT or "")


def packages() -> list[tuple[str, str]]:
    """ToolGate's environment: every distribution the entrypoint's interpreter sees."""
    code = (
        "import importlib.metadata as m, json; "
        "print(json.dumps(sorted((d.metadata['Name'], d.version) for d in m.distributions())))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return [tuple(p) for p in json.loads(out.stdout)]  # type: ignore[misc]


@pytest.fixture
def gh() -> GitHubServer:
    owner, repo = REPOSITORY.split("/")
    server = GitHubServer(owner=owner, repo=repo, register=[routes.register])
    server.add_token(TOKEN, "github-actions[bot]", kind="app")
    server.add_pull(7, base_sha="b" * 40, head_sha=HEAD_SHA)
    with server:
        yield server  # type: ignore[misc]


@pytest.fixture
def host(tmp_path: Path) -> RunnerHost:
    h = RunnerHost(tmp_path / "runner")
    agent_repo(h.workspace)
    return h


def step(
    host: RunnerHost, gh: GitHubServer, with_: dict[str, str], env: dict[str, str] | None = None
) -> StepResult:
    return run_container_action(
        host,
        with_={"config": "toolgate.agent.yml", "baseline": "none", **with_},
        event_name="pull_request",
        event=pr_event(),
        api_url=gh.api_url,
        token=TOKEN,
        repository=REPOSITORY,
        sha=HEAD_SHA,
        step_env=env,
        timeout=300,
    )


@needs_namespaces
def test_action__install_requirements__agent_imports_its_packages_passes_toolgate_unchanged(
    host: RunnerHost, gh: GitHubServer
) -> None:
    before = packages()
    r = step(
        host,
        gh,
        {
            "install": "requirements.txt",
            "setup": 'python -c "import acme_phrasing" && echo ok > setup-ran.txt',
        },
    )
    assert r.code == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert (r.outputs["verdict"], r.outputs["passed"]) == ("passed", "true")
    log = r.stdout.splitlines()
    # install, then setup, then the gate: each in its own collapsed group, with its time
    groups = [ln for ln in log if ln.startswith("::group::")]
    assert groups == [
        "::group::ToolGate: install requirements.txt into the agent's environment",
        "::group::ToolGate: setup",
        "::group::ToolGate check",
    ], groups
    assert any(
        ln.startswith("ToolGate: installed requirements.txt into the agent's environment in ")
        and ln.endswith(" s")
        for ln in log
    ), r.stdout[-3000:]
    assert any(ln.startswith("ToolGate: setup ran in ") for ln in log)
    assert "Successfully installed acme-phrasing-2.0 acme-support-sdk-1.0" in r.stdout
    results = json.loads((host.workspace / "toolgate-out" / "results.json").read_text())
    assert results["metrics"]["call_accuracy"]["mean"] == 1.0
    # ToolGate's own environment is what it was, and the agent's packages are not in it
    assert packages() == before
    probe = subprocess.run(
        [sys.executable, "-c", "import acme_support_sdk"], capture_output=True, check=False
    )
    assert probe.returncode != 0
    # no path of the container in what the next step reads
    assert "/github/" not in json.dumps(results["agent"])


@needs_namespaces
def test_action__without_install__the_same_agent_cannot_import_its_packages__verdict_error(
    host: RunnerHost, gh: GitHubServer
) -> None:
    """The control: without ``install`` the container has ToolGate's packages only."""
    (host.workspace / "setup-ran.txt").write_text("")
    r = step(host, gh, {})
    assert r.code == 4, r.stdout[-3000:]
    assert r.outputs["verdict"] == "error"
    words = "the agent could not start: ModuleNotFoundError: No module named 'acme_phrasing'"
    assert f"ToolGate mini: ERROR — {words}" in r.stdout.splitlines()
    assert r.outputs["summary"] == f"ERROR — {words}"
    escaped = words.replace("_", "\\_")
    summary = r.summary.decode()
    assert summary.lstrip().startswith(f"# ⛔ ToolGate `mini` error — {escaped}\n"), summary[:300]
    (comment,) = gh.comments_on(7)
    assert comment.body.splitlines()[1] == f"## ⛔ ToolGate `mini` error — {escaped}"
    assert "install: requirements.txt" in comment.body  # the hint
    assert "missed" not in summary and "missed" not in comment.body


@needs_namespaces
def test_action__setup_fails__exit_2_names_setup_and_the_gate_never_starts(
    host: RunnerHost, gh: GitHubServer
) -> None:
    r = step(host, gh, {"setup": "echo fetching the model card; exit 3"})
    assert r.code == 2, r.stdout[-3000:]
    assert r.outputs["verdict"] == "error"
    (err,) = [a for a in r.annotations if a.level == "error"]
    assert err.message.startswith("setup: the setup command failed (exit code 3, after "), err
    assert "fetching the model card" in err.message
    assert "::group::ToolGate check" not in r.stdout
    assert not (host.workspace / "toolgate-out").exists()


@needs_namespaces
def test_action__install_cannot_resolve__exit_2_names_install_and_the_gate_never_starts(
    host: RunnerHost, gh: GitHubServer
) -> None:
    (host.workspace / "requirements.txt").write_text(
        "--no-index\n--find-links wheels\nacme-not-published==9.9\n"
    )
    r = step(host, gh, {"install": "requirements.txt"})
    assert r.code == 2, r.stdout[-3000:]
    (err,) = [a for a in r.annotations if a.level == "error"]
    assert err.message.startswith("install: pip could not install requirements.txt (exit code ")
    assert "acme-not-published" in err.message
    assert not (host.workspace / "toolgate-out").exists()


@needs_namespaces
def test_action__install_file_missing__exit_2_with_the_nearest_name(
    host: RunnerHost, gh: GitHubServer
) -> None:
    r = step(host, gh, {"install": "requirement.txt"})
    assert r.code == 2
    (err,) = [a for a in r.annotations if a.level == "error"]
    assert "no such file 'requirement.txt'" in err.message
    assert "(did you mean 'requirements.txt'?)" in err.message


@needs_namespaces
def test_action__workflow_commands_in_setup_output__not_obeyed(
    host: RunnerHost, gh: GitHubServer
) -> None:
    r = step(host, gh, {"setup": "echo '::error::forged by the setup'; exit 1"})
    assert r.code == 2
    assert not [a for a in r.annotations if a.message == "forged by the setup"]


def test_pip_environ__relative_cache_dir__under_the_workspace_and_caching_back_on(
    tmp_path: Path,
) -> None:
    made = AgentEnvironment(tmp_path / "env", tmp_path / "env" / "bin" / "python")
    env = _pip_environ(
        {"PIP_CACHE_DIR": ".toolgate-pip-cache", "PIP_NO_CACHE_DIR": "1", "GITHUB_TOKEN": "x"},
        tmp_path / "ws",
        made,
    )
    assert env["PIP_CACHE_DIR"] == str(tmp_path / "ws" / ".toolgate-pip-cache")
    assert "PIP_NO_CACHE_DIR" not in env and "GITHUB_TOKEN" not in env
    assert env["VIRTUAL_ENV"] == str(tmp_path / "env")
    plain = _pip_environ({"PIP_NO_CACHE_DIR": "1"}, tmp_path / "ws", made)
    assert plain["PIP_NO_CACHE_DIR"] == "1" and "PIP_CACHE_DIR" not in plain


@needs_namespaces
@pytest.mark.parametrize(
    "line",
    ["-r {secret}", "--constraint={secret}", "-rfile://{secret}", "-r ${{SECRET_DIR}}/secret.txt"],
)
def test_action__install_names_a_file_outside_the_workspace__exit_2_never_quoted(
    host: RunnerHost, gh: GitHubServer, tmp_path: Path, line: str
) -> None:
    """pip follows ``-r``/``-c`` anywhere and quotes what it read in its error: a nested
    requirements file outside the workspace is refused before pip runs, and what it holds
    is never shown."""
    secret = tmp_path / "elsewhere" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("TOPSECRET-first-line\n")
    (host.workspace / "requirements.txt").write_text("-r reqs/more.txt\n")
    (host.workspace / "reqs").mkdir()
    (host.workspace / "reqs" / "more.txt").write_text(
        "# pinned\n-c ../requirements.txt\n" + line.format(secret=secret) + "\n"
    )
    r = step(host, gh, {"install": "requirements.txt"}, env={"SECRET_DIR": str(secret.parent)})
    assert r.code == 2, r.stdout[-3000:]
    assert "TOPSECRET" not in r.stdout + r.stderr
    (err,) = [a for a in r.annotations if a.level == "error"]
    assert err.message.startswith("install: reqs/more.txt line 3: "), err.message
    assert "names a file outside the workspace" in err.message
    assert not (host.workspace / "toolgate-out").exists()
