"""What a plain ``toolgate check`` imports: the MCP SDK (about 2 s) only when the config
names MCP servers or an MCP agent, never for the drift check of a config without them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_SNIPPET = """
import sys
from gate.cli import main
code = main(["check", "--config", sys.argv[1], "--out", sys.argv[2], "--no-progress"])
print("EXIT", code, "MCP", "mcp" in sys.modules)
"""


def test_check__example_without_mcp__mcp_sdk_never_imported(tmp_path: Path) -> None:
    config = ROOT / "examples" / "support-agent" / "toolgate.yml"
    proc = subprocess.run(
        [sys.executable, "-c", _SNIPPET, str(config), str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert "EXIT 0 MCP False" in proc.stdout, proc.stdout[-2000:] + proc.stderr[-2000:]


_SCORE_SNIPPET = """
import sys
import gate.commands.score
print(sorted(m for m in sys.modules if m.startswith("gate.report.")))
print("ruamel" in sys.modules)
"""


def test_score__imports__no_renderer_no_yaml() -> None:
    # `toolgate score` writes results.json only: gate.report's renderers stay unloaded, and
    # with --dataset no YAML is read (ruamel loads when gate.yamlio parses).
    proc = subprocess.run(
        [sys.executable, "-c", _SCORE_SNIPPET], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split("\n")[:2] == ["['gate.report.redact']", "False"], proc.stdout


_REPORT_SNIPPET = """
import importlib
import gate.report
for name in gate.report.__all__:
    value = getattr(gate.report, name)
    home = gate.report._LAZY.get(name)
    assert home is None or value is getattr(importlib.import_module(home), name), name
try:
    gate.report.no_such_name
except AttributeError:
    print("OK", len(gate.report.__all__))
"""


def test_report_package__every_public_name__resolves_lazily() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _REPORT_SNIPPET], capture_output=True, text=True, timeout=120
    )
    assert proc.stdout.strip() == "OK 8", proc.stdout + proc.stderr[-2000:]
