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
