"""The command line itself: a bare ``toolgate`` helps, the help names the exit codes and
where to start, only the command given is imported, one ``toolgate:`` prefix per line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gate.cli import COMMANDS, main


def _toolgate(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gate", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


def test_cli__bare_toolgate__prints_the_help_and_exits_0() -> None:
    proc = _toolgate()
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: toolgate")
    assert "toolgate init" in proc.stdout
    for code in ("0  passed", "1  the gate failed", "2  usage or input error", "3  a bug"):
        assert code in proc.stdout


def test_cli__command_help__names_exit_codes_and_config_default(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for command in ("check", "run", "validate", "pin", "record"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        out = capsys.readouterr().out
        assert "exit codes:" in out and "2  usage or input error" in out
        assert "the config file (default: toolgate.yml)" in " ".join(out.split()), command


def test_cli__version__imports_no_command_module() -> None:
    code = (
        "import sys\n"
        "from gate.cli import main\n"
        "try:\n    main(['--version'])\nexcept SystemExit:\n    pass\n"
        "heavy = sorted(m for m in sys.modules if m.startswith(('gate.commands', "
        "'gate.results', 'gate.pipeline', 'numpy', 'pydantic')))\n"
        "print(heavy)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.stdout.splitlines()[-1] == "[]", proc.stdout


def test_cli__input_error__one_toolgate_prefix_per_line(tmp_path: Path) -> None:
    proc = _toolgate("validate", "--config", "missing.yml", cwd=tmp_path)
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    assert lines and all(line.startswith("toolgate: ") for line in lines), proc.stderr
    assert not any(line.count("toolgate:") > 1 for line in lines), proc.stderr
    assert lines[0] == "toolgate: error: no config file missing.yml"


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
