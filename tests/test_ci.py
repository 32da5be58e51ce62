"""CI runs the test command the README gives, coverage floor included."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _readme_test_command() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = re.findall(r"\.venv/bin/python (-m pytest [^\n`]*)", readme)
    assert commands, "README.md gives no test command"
    return commands[0].strip()


def test_ci_run__readme_test_command__is_the_command_ci_runs() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert f"python {_readme_test_command()}" in ci


def test_readme_test_command__measures_coverage_with_a_floor() -> None:
    command = _readme_test_command()
    assert "--cov=gate" in command.split()
    floor = re.search(r"--cov-fail-under=(\d+)\b", command)
    assert floor and 0 < int(floor.group(1)) <= 100
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme.count(f"--cov-fail-under={floor.group(1)}") >= 2  # the start and Development
