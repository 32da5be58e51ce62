"""The command line imports only the command it runs, and still lists every command."""

from __future__ import annotations

import json
import subprocess
import sys

from gate.cli import COMMANDS


def _modules_after(argv: list[str]) -> set[str]:
    """The gate.commands modules imported by parsing ``argv`` in a fresh interpreter."""
    code = (
        "import json, sys\n"
        "from gate.cli import build_parser, _command_of\n"
        f"argv = {argv!r}\n"
        "build_parser(_command_of(argv)).parse_args(argv)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('gate.commands.'))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    return set(json.loads(out))


def test_cli__score_command__imports_only_the_score_module() -> None:
    modules = _modules_after(["score", "--dataset", "d.jsonl", "--runs", "r.jsonl"])
    assert "gate.commands.score" in modules
    assert "gate.commands.comment" not in modules
    assert "gate.commands.check" not in modules


def test_cli__top_level_help__lists_every_command() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "gate", "--help"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0
    for name in COMMANDS:
        assert name in proc.stdout


def test_cli__unknown_command__usage_error_exit_2() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "gate", "scroe"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2
    assert "invalid choice: 'scroe'" in proc.stderr
