"""The agent under test never sees the gate's GitHub credentials."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import ClassVar

import pytest

from gate.config import Config
from gate.model import Case, SourceRef
from gate.replay.command import agent_environ
from gate.replay.runner import run_all
from gate.runsfile import read_runs

AGENT = """
import json, os, sys
for line in sys.stdin:
    msg = json.loads(line)
    seen = sorted(k for k in ("GITHUB_TOKEN", "INPUT_GITHUB-TOKEN", "ACTIONS_RUNTIME_TOKEN",
                              "MY_AGENT_KEY") if k in os.environ)
    print(json.dumps({"type": "final", "content": ",".join(seen), "case_id": msg["case_id"],
                      "sample": msg["sample"]}), flush=True)
"""


def test_agent_environ__drops_gate_credentials_keeps_others() -> None:
    env = agent_environ(
        {
            "GITHUB_TOKEN": "t",
            "INPUT_GITHUB-TOKEN": "t",
            "ACTIONS_RUNTIME_TOKEN": "r",
            "OPENAI_API_KEY": "k",
            "PATH": "/bin",
        }
    )
    assert env == {"OPENAI_API_KEY": "k", "PATH": "/bin"}


def test_command_worker__gate_token_in_environment__not_visible_to_agent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_secret")
    monkeypatch.setenv("INPUT_GITHUB-TOKEN", "ghs_secret")
    monkeypatch.setenv("MY_AGENT_KEY", "mine")
    (tmp_path / "agent.py").write_text(AGENT)
    config = Config.model_validate(
        {
            "dataset": {"path": "d.jsonl"},
            "agent": {"kind": "command", "command": [sys.executable, "agent.py"], "workers": 1},
        }
    ).model_copy(update={"source": tmp_path / "toolgate.yml"})

    class _Dataset:
        cases = (Case(id="c1", user_input="hi", source=SourceRef("d.jsonl", 1)),)
        sha256 = "0" * 64
        display = "d.jsonl"
        tools: ClassVar[dict[str, object]] = {}

    run_all(config, _Dataset(), tmp_path, samples=1, shard=None, resume=False, progress=False)
    ((_, run),) = read_runs(tmp_path / "runs.jsonl")
    assert run.final == "MY_AGENT_KEY"


def test_agent_environ__every_token_variable_the_gate_reads__dropped() -> None:
    from gate.github.context import GitHubContext, TokenSource

    names = [s.value for s in TokenSource if s is not TokenSource.INPUT]
    names += ["INPUT_GITHUB-TOKEN", "INPUT_GITHUB_TOKEN"]
    for name in names:  # each one on its own is what the gate would use
        assert GitHubContext.from_environ({name: "ghs_x"}).token == "ghs_x", name
    env = agent_environ({**{n: "ghs_x" for n in names}, "PATH": "/bin"})
    assert env == {"PATH": "/bin"}


def test_command_worker__toolgate_github_token__not_visible_to_agent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLGATE_GITHUB_TOKEN", "ghs_preferred_secret")
    (tmp_path / "agent.py").write_text(
        "import json, os, sys\n"
        "for line in sys.stdin:\n"
        "    msg = json.loads(line)\n"
        "    seen = os.environ.get('TOOLGATE_GITHUB_TOKEN', 'absent')\n"
        "    ids = {'case_id': msg['case_id'], 'sample': msg['sample']}\n"
        "    print(json.dumps({'type': 'final', 'content': seen, **ids}), flush=True)\n"
    )
    config = Config.model_validate(
        {
            "dataset": {"path": "d.jsonl"},
            "agent": {"kind": "command", "command": [sys.executable, "agent.py"], "workers": 1},
        }
    ).model_copy(update={"source": tmp_path / "toolgate.yml"})

    class _Dataset:
        cases = (Case(id="c1", user_input="hi", source=SourceRef("d.jsonl", 1)),)
        sha256 = "0" * 64
        display = "d.jsonl"
        tools: ClassVar[dict[str, object]] = {}

    run_all(config, _Dataset(), tmp_path, samples=1, shard=None, resume=False, progress=False)
    ((_, run),) = read_runs(tmp_path / "runs.jsonl")
    assert run.final == "absent"
