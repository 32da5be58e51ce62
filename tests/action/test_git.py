"""The workspace is a git ``safe.directory`` for the action and every child it starts.

In the container the checked-out workspace belongs to the runner's user, not to root, so
git refuses it ("detected dubious ownership") unless it is marked safe. The image marks
every directory safe in its system config; :func:`gate.action.mark_safe_directory` also
marks the workspace through git's command-line scope (``GIT_CONFIG_*``), which reaches
the agent's subprocesses without writing a config file. Reproduced here with a repository
owned by another user.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from gate.action import mark_safe_directory

pytestmark = pytest.mark.skipif(
    shutil.which("git") is None or os.geteuid() != 0,
    reason="needs git, and root to give the repository another owner",
)


def git(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)


@pytest.fixture
def foreign_repo(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    repo = tmp_path / "workspace"
    repo.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    # No system or global config: only what the test sets counts.
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1"}
    assert git(["init", "-q"], repo, env).returncode == 0
    for p in [repo, *repo.rglob("*")]:
        os.chown(p, 65534, 65534, follow_symlinks=False)  # nobody: like the runner's user
    return repo, env


def test_foreign_workspace__unmarked__git_refuses_it(foreign_repo):
    repo, env = foreign_repo
    result = git(["status"], repo, env)
    assert result.returncode != 0
    assert "dubious ownership" in result.stderr


def test_foreign_workspace__marked__git_works_in_children(foreign_repo, monkeypatch):
    repo, env = foreign_repo
    for key in [k for k in os.environ if k.startswith("GIT_CONFIG_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")  # a setting the workflow already made
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "core.quotepath")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "false")

    mark_safe_directory(repo)
    mark_safe_directory(repo)  # idempotent

    child_env = {**env, **{k: v for k, v in os.environ.items() if k.startswith("GIT_CONFIG_")}}
    assert child_env["GIT_CONFIG_COUNT"] == "2"
    assert child_env["GIT_CONFIG_KEY_0"] == "core.quotepath", "existing settings are kept"
    result = git(["status", "--short"], repo, child_env)
    assert result.returncode == 0, result.stderr
    assert not list((Path(env["HOME"])).glob(".gitconfig")), "no config file was written"
