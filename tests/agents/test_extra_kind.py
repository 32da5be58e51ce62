"""Adding an agent kind is one module and one registry line: a copy of the package gets a
``scripted`` kind (the module below, and its line in ``gate.agents.KINDS``) and the real
``toolgate validate`` and ``toolgate check`` run it — its settings validated, its preflight
refusing a missing file at its line, its adapter answering every case through the frozen
responses, its description in results.json. No other module of the copy is touched."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gate.dataset import load_dataset

PACKAGE = Path(__file__).resolve().parents[2] / "gate"

KIND_MODULE = '''\
"""``kind: scripted``: plays a script of tool calls per case (each turn a parallel batch),
then answers."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

from gate.agents.interface import AgentSettings, Finding, Show
from gate.model import ToolCall


class ScriptedAgent(AgentSettings):
    kind: Literal["scripted"]
    script: str
    answer: str = "done"

    adapter: ClassVar[str] = "gate.agents.scripted:ScriptedRunner"

    def preflight(self, root: Path, show: Show) -> list[Finding]:
        path = (root / self.script).resolve()
        return [] if path.is_file() else [("script", f"no script {show(path)}")]


class ScriptedRunner:
    kind = "scripted"
    max_parallel = None

    def __init__(self, config: Any, cfg: ScriptedAgent) -> None:
        self.cfg = cfg
        self.turns = json.loads(config.resolve(cfg.script).read_text(encoding="utf-8"))

    def samples_for(self, case_id: str, samples: int) -> Sequence[int]:
        return range(samples)

    def prepare(self, jobs: int) -> None:
        pass

    def run(self, job: Any, session: Any) -> None:
        for turn in self.turns.get(job.case.id, []):
            session.answer([ToolCall(c["name"], c["arguments"]) for c in turn])
        session.next_user(self.cfg.answer)

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "script": self.cfg.script, **self.cfg.declared()}

    def close(self) -> None:
        pass
'''

REGISTRY_LINE = '    "scripted": "gate.agents.scripted:ScriptedAgent",\n'

TOOLS = [
    {
        "name": "get_order",
        "description": "Look an order up.",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
    }
]
CASES = [
    {
        "id": "lookup",
        "user_input": "Where is ord_1?",
        "available_tools": TOOLS,
        "expected_tool_calls": [{"name": "get_order", "args": {"order_id": "ord_1"}}],
        "tool_responses": [
            {"name": "get_order", "args": {"order_id": "ord_1"}, "response": {"status": "late"}}
        ],
    },
    {"id": "hello", "user_input": "Hi!", "available_tools": TOOLS, "expected_no_tool": True},
]
SCRIPT = {"lookup": [[{"name": "get_order", "arguments": {"order_id": "ord_1"}}]]}


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the package with the ``scripted`` kind added: its module, its line."""
    root = tmp_path_factory.mktemp("with_scripted_kind")
    shutil.copytree(PACKAGE, root / "gate", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "gate" / "agents" / "scripted.py").write_text(KIND_MODULE, encoding="utf-8")
    registry = root / "gate" / "agents" / "__init__.py"
    text = registry.read_text(encoding="utf-8")
    anchor = '    "mcp": "gate.agents.mcp:McpAgent",\n'
    assert anchor in text
    registry.write_text(text.replace(anchor, anchor + REGISTRY_LINE), encoding="utf-8")
    return root


def _project(tmp_path: Path, *, script: bool = True) -> Path:
    (tmp_path / "dataset.jsonl").write_text("".join(json.dumps(c) + "\n" for c in CASES))
    if script:
        (tmp_path / "script.json").write_text(json.dumps(SCRIPT))
    digest = load_dataset(tmp_path / "dataset.jsonl").sha256
    (tmp_path / "toolgate.yml").write_text(
        f"dataset: {{path: dataset.jsonl, sha256: {digest}}}\n"
        "agent:\n"
        "  kind: scripted\n"
        "  script: script.json\n"
        "  model: scripted-1\n"
        "samples: 2\n"
    )
    return tmp_path


def _toolgate(package: Path, cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(package)}
    env.pop("GITHUB_ACTIONS", None)
    return subprocess.run(
        [sys.executable, "-m", "gate", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_extra_kind__one_module_one_registry_line__validate_and_check_run_it(
    package: Path, tmp_path: Path
) -> None:
    project = _project(tmp_path)
    proc = _toolgate(package, project, "validate", "--config", "toolgate.yml")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("OK: toolgate.yml: dataset.jsonl: 2 cases")
    proc = _toolgate(
        package, project, "check", "--config", "toolgate.yml", "--out", "out",
        "--baseline", "none", "--no-progress",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    results: dict[str, Any] = json.loads((project / "out" / "results.json").read_text())
    assert results["agent"] == {"kind": "scripted", "script": "script.json", "model": "scripted-1"}
    assert {c["id"]: (c["passed"], len(c["samples"])) for c in results["cases"]} == {
        "lookup": (True, 2),
        "hello": (True, 2),
    }
    runs = [json.loads(line) for line in (project / "out" / "runs.jsonl").read_text().splitlines()]
    lookups = [r for r in runs if r.get("case_id") == "lookup"]
    assert len(lookups) == 2
    for run in lookups:  # the adapter's call, answered by the runner from the frozen responses
        (turn,) = run["turns"]
        assert [c["name"] for c in turn["calls"]] == ["get_order"]
        assert [r["content"] for r in turn["tool_results"]] == [{"status": "late"}]
        assert run["final"] == "done"
    # The copy is the one that ran: this checkout has no such kind.
    from gate import agents

    assert "scripted" not in agents.names()


def test_extra_kind__its_preflight__check_refuses_at_the_key_s_line(
    package: Path, tmp_path: Path
) -> None:
    project = _project(tmp_path, script=False)
    proc = _toolgate(package, project, "check", "--config", "toolgate.yml", "--no-progress")
    assert proc.returncode == 2, proc.stderr
    assert "toolgate.yml:4: agent.script: no script script.json" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (project / "toolgate-out" / "results.json").exists()


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> None:
    """The ``scripted`` kind registered in this process (:func:`gate.agents.register`),
    its module made from the same source; both undone after the test."""
    import types

    from gate import agents

    module = types.ModuleType("scripted_kind")
    monkeypatch.setitem(sys.modules, "scripted_kind", module)
    exec(compile(KIND_MODULE, "scripted_kind.py", "exec"), module.__dict__)
    monkeypatch.setattr(agents, "KINDS", dict(agents.KINDS))
    agents.register("scripted", "scripted_kind:ScriptedAgent")


def test_extra_kind__config_messages__name_it_with_the_others(
    scripted: None, tmp_path: Path
) -> None:
    from gate.config import load_config
    from gate.errors import ConfigError

    project = _project(tmp_path)
    config = load_config(project / "toolgate.yml")
    assert (config.agent.kind, config.agent.samples_recorded) == ("scripted", False)
    assert config.agent.declared() == {"model": "scripted-1"}
    text = (project / "toolgate.yml").read_text()
    (project / "toolgate.yml").write_text(
        text.replace("  model: scripted-1\n", "  scrip: x\n  workers: 2\n")
    )
    with pytest.raises(ConfigError) as err:
        load_config(project / "toolgate.yml", display="toolgate.yml")
    assert [str(p) for p in err.value.problems] == [
        "toolgate.yml:5: agent.scrip: unknown key (did you mean 'script'?)",
        "toolgate.yml:6: agent.workers: unknown key for `kind: scripted` "
        "(a key of command, mcp agents)",
    ]
    (project / "toolgate.yml").write_text(text.replace("kind: scripted", "kind: scripts"))
    with pytest.raises(ConfigError) as err:
        load_config(project / "toolgate.yml", display="toolgate.yml")
    assert [str(p) for p in err.value.problems] == [
        "toolgate.yml:2: agent: `kind` must be one of replay, command, python, openai, mcp, "
        "scripted"
    ]
