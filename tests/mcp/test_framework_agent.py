"""End to end: an OpenAI Agents SDK agent (examples/mcp-agent) taking its tools from
ToolGate's MCP server, its model the repository's fake OpenAI-compatible server on
127.0.0.1, gated by a real ``toolgate check`` — a good build passes, the regressed one
fails on a must-not-call and a flipped case.

The example's two cases the regressed build breaks (the refund and the account closing)
are enough for that: each agent process spends about 4 s importing the SDK, and nine base
samples of five cases made this the suite's longest test by far."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from tests.servers.openai_server import FakeOpenAIServer, Response

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "mcp-agent"


def _scripted_model() -> ModuleType:
    spec = importlib.util.spec_from_file_location("scripted_model", EXAMPLE / "scripted_model.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_CASES = ("refund-damaged", "account-close")


def _config(folder: Path, variant: str, base_url: str) -> Path:
    path = folder / f"toolgate.{variant}.yml"
    text = (EXAMPLE / "toolgate.yml").read_text(encoding="utf-8")
    text = text.replace(
        'command: ["python", "agent.py"]',
        f"command: [{json.dumps(sys.executable)}, {json.dumps(str(EXAMPLE / 'agent.py'))}, "
        f'"--variant", "{variant}"]\n  env: {{MODEL_BASE_URL: "{base_url}"}}',
    )
    path.write_text(text, encoding="utf-8")
    pin = subprocess.run(
        [sys.executable, "-m", "gate", "pin", "--config", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert pin.returncode == 0, pin.stderr
    return path


def _check(config: Path, out: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    proc = subprocess.run(
        [sys.executable, "-m", "gate", "check", "--config", str(config), "--out", str(out), *extra],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=config.parent,
    )
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    return proc.returncode, results


def test_framework_agent__good_and_regressed_builds__gate_passes_then_fails(
    tmp_path: Path,
) -> None:
    shutil.copy(EXAMPLE / "tools.json", tmp_path / "tools.json")
    lines = (EXAMPLE / "dataset.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [line for line in lines if json.loads(line)["id"] in _CASES]
    assert len(kept) == len(_CASES)
    (tmp_path / "dataset.jsonl").write_text("".join(kept), encoding="utf-8")
    model = _scripted_model()
    with FakeOpenAIServer(lambda request, _i: Response(body=model.reply(request))) as srv:
        # Nine samples of the good build: the base history a single case's regression is
        # tested against (one base sample could never make one case significant).
        code, good = _check(
            _config(tmp_path, "good", srv.base_url), tmp_path / "good", "--samples", "9"
        )
        assert code == 0, good["verdict"]
        assert good["verdict"]["passed"] is True
        code, bad = _check(
            _config(tmp_path, "regressed", srv.base_url),
            tmp_path / "regressed",
            "--baseline",
            str(tmp_path / "good" / "results.json"),
            "--samples",
            "2",
        )
        requests = [r.json for r in srv.requests if r.json]
    assert code == 1
    assert bad["verdict"]["passed"] is False
    hard = {(h["case_id"], h["kind"]) for h in bad["hard_failures"]}
    assert ("account-close", "must_not_call") in hard
    flips = {f["case_id"]: f["kind"] for f in bad["comparison"]["flips"]}
    assert flips["refund-damaged"] == "regression"
    # The model saw the tools the agent listed from ToolGate's MCP server.
    listed = {t["function"]["name"] for r in requests for t in r.get("tools", [])}
    assert {"lookup_order", "verify_identity", "issue_refund", "delete_account"} <= listed
    lines = (tmp_path / "good" / "runs.jsonl").read_text(encoding="utf-8").splitlines()
    runs = [json.loads(line) for line in lines]
    by_case = {r["case_id"]: r for r in runs}
    assert [c["name"] for t in by_case["refund-damaged"]["turns"] for c in t["calls"]] == [
        "verify_identity",
        "issue_refund",
    ]
