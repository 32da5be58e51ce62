"""The registry of agent kinds: every built-in kind loads, declares its own name and an
adapter that exists; a kind is imported only when named; a bad registration is refused
with what is wrong; and each kind answers the questions other modules used to ask by name."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
import types
from pathlib import Path
from typing import ClassVar, Literal

import pytest

from gate import agents
from gate.agents.interface import AgentSettings, Interpreted


def test_registry__every_kind__loads_with_its_name_and_an_adapter_that_exists() -> None:
    kinds = agents.all_settings()
    assert list(kinds) == ["replay", "command", "python", "openai", "mcp"]
    for name, cls in kinds.items():
        assert cls.model_fields["kind"].annotation == Literal[name]
        module, _, attr = cls.adapter.partition(":")
        assert callable(getattr(importlib.import_module(module), attr)), name
    assert agents.settings_of("no-such-kind") is None and agents.settings_of(5) is None
    assert agents.settings_of(agents.RUNS_FILE_KIND) is kinds["replay"]


def test_registry__one_kind_named__only_its_module_imported() -> None:
    code = (
        "import sys\n"
        "from gate.config import Config\n"
        "before = sorted(m for m in sys.modules if m.startswith('gate.agents.'))\n"
        "Config.model_validate({'dataset': {'path': 'd'}, 'agent': {'kind': 'replay', "
        "'runs': 'r'}})\n"
        "after = sorted(m for m in sys.modules if m.startswith(('gate.agents.', 'gate.replay')))\n"
        "print(before, after)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.stdout.split() == [
        "['gate.agents.interface']",
        "['gate.agents.interface',",
        "'gate.agents.replay']",
    ], proc.stderr


class _NoAdapter(AgentSettings):
    kind: Literal["lazy"]


class _OtherName(AgentSettings):
    kind: Literal["other"]
    adapter: ClassVar[str] = "x:Y"


@pytest.mark.parametrize(
    ("attr", "why"),
    [
        ("Path", "is not an AgentSettings subclass"),
        ("_NoAdapter", "names no adapter"),
        ("_OtherName", "must declare kind: Literal['lazy']"),
    ],
)
def test_registry__bad_registration__refused_with_what_is_wrong(
    monkeypatch: pytest.MonkeyPatch, attr: str, why: str
) -> None:
    module = types.ModuleType("bad_kinds")
    module.__dict__.update(Path=Path, _NoAdapter=_NoAdapter, _OtherName=_OtherName)
    monkeypatch.setitem(sys.modules, "bad_kinds", module)
    monkeypatch.setattr(agents, "KINDS", dict(agents.KINDS))
    agents.register("lazy", f"bad_kinds:{attr}")
    with pytest.raises(TypeError, match=re.escape(f"agent kind 'lazy': bad_kinds:{attr} {why}")):
        agents.settings_of("lazy")


def test_registry__a_name_taken__refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(agents, "KINDS", dict(agents.KINDS))
    agents.register("replay", agents.KINDS["replay"])  # the same again: nothing to do
    with pytest.raises(ValueError, match="agent kind 'command' is already registered"):
        agents.register("command", "elsewhere:CommandAgent")


def _settings(**agent: object) -> AgentSettings:
    from gate.config import Config

    return Config.model_validate({"dataset": {"path": "d"}, "agent": agent}).agent


def test_kinds__capabilities__each_kind_answers_for_itself(tmp_path: Path) -> None:
    replay = _settings(kind="replay", runs="r.jsonl")
    command = _settings(kind="command", command=["python", "a.py"], python="path")
    python = _settings(kind="python", callable="m:f")
    openai = _settings(kind="openai", model="m", api_key_env="KEY", system_prompt_file="p.txt")
    mcp = _settings(
        kind="mcp",
        command=["a"],
        servers=[{"name": "s", "url": "http://127.0.0.1:1/mcp", "headers_env": {"X": "TOK"}}],
    )
    kinds = (replay, command, python, openai, mcp)
    assert [k.samples_recorded for k in kinds] == [True, False, False, False, False]
    assert [k.validate_starts for k in kinds] == [None, "command", "callable", None, None]
    assert [k.secret_env_names() for k in kinds] == [[], [], [], ["KEY"], ["TOK"]]
    assert [len(k.mcp_servers()) for k in kinds] == [0, 0, 0, 0, 1]
    assert [isinstance(k, Interpreted) for k in kinds] == [False, True, True, False, False]
    assert [k.interpreter(tmp_path) for k in kinds] == [
        sys.executable, None, sys.executable, sys.executable, sys.executable
    ]  # fmt: skip
    # what a base run of the same kind described, as the previous release hashed it
    base = {"kind": "openai", "model": "b", "base_url": "u", "temperature": 0, "params": {}}
    assert openai.legacy_identity(base) == {
        "model": "b", "base_url": "u", "temperature": 0, "params": {},
        "system_prompt_file": "p.txt",
    }  # fmt: skip
    assert [k.legacy_identity(base) for k in (replay, command, python, mcp)] == [{}] * 4
    # the Action's interpreter where the file does not choose one
    assert python.with_interpreter("/venv/bin/python").interpreter(tmp_path) == "/venv/bin/python"
    assert command.with_interpreter("/venv/bin/python") is command  # `python: path` stays
    assert replay.with_interpreter("/venv/bin/python") is replay


def test_kinds__preflight__each_kind_checks_its_own_files(tmp_path: Path) -> None:
    def show(p: Path) -> str:
        return p.name

    (tmp_path / "here.jsonl").write_text("")
    cases = [
        (_settings(kind="replay", runs="here.jsonl"), []),
        (_settings(kind="replay", runs="gone.jsonl"), [("runs", "no such file gone.jsonl")]),
        (_settings(kind="openai", model="m", system_prompt_file="p.txt"),
         [("system_prompt_file", "no such file p.txt")]),
        (_settings(kind="python", callable="m:f", python="venv/bin/python"),
         [("python", "the interpreter 'venv/bin/python' is not there (looked for python)")]),
        (_settings(kind="command", command=[]), [("command", "is empty")]),
        (_settings(kind="command", command=["python", "agent.py"]),
         [("command", "python would run 'agent.py', which is not in the folder "
           f"{tmp_path.name}")]),
        (_settings(kind="mcp", command=["anything"]), []),
    ]  # fmt: skip
    for settings, expected in cases:
        assert settings.preflight(tmp_path, show) == expected, settings.kind
