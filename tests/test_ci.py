"""CI runs the full-suite test command the README gives, coverage floor included; the
README's second "Start here" command is the fast subset, and says CI runs the full suite."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _readme_test_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = re.findall(r"\.venv/bin/python (-m pytest [^\n`]*)", readme)
    assert commands, "README.md gives no test command"
    return [c.strip() for c in commands]


def _readme_test_command() -> str:
    """The full suite's command: the one that measures coverage."""
    (full,) = [c for c in _readme_test_commands() if "--cov=gate" in c.split()]
    return full


def test_readme__start_here__runs_the_fast_subset_and_names_the_full_suite_as_cis() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme[readme.index("## Start here") :]
    start = start[: start.index("\n## ", 1)]
    (quick,) = re.findall(r"\.venv/bin/python (-m pytest [^\n`]*)", start)
    assert quick.split()[-2:] == ["-m", "quick"], quick
    assert "CI runs the full suite" in start


def test_ci_run__readme_test_command__is_the_command_ci_runs() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert f"python {_readme_test_command()}" in ci


def test_readme_test_command__measures_coverage_with_a_floor() -> None:
    command = _readme_test_command()
    assert "--cov=gate" in command.split()
    floor = re.search(r"--cov-fail-under=(\d+)\b", command)
    assert floor and 0 < int(floor.group(1)) <= 100
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme.count(f"--cov-fail-under={floor.group(1)}") >= 1  # Development


def _lowest_pins() -> dict[str, str]:
    from packaging.utils import canonicalize_name

    pins: dict[str, str] = {}
    for raw in (ROOT / ".ci" / "lowest.txt").read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f".ci/lowest.txt: {line!r} is not an exact pin"
            pins[canonicalize_name(name)] = version
    return pins


def test_lowest_pins__every_dependency__at_the_lowest_version_pyproject_allows() -> None:
    """Each direct dependency (runtime and test) is pinned in .ci/lowest.txt at a version
    its pyproject range allows and whose release is the range's lower bound (same
    major.minor, or exactly the bound)."""
    import tomllib

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name
    from packaging.version import Version

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    pins = _lowest_pins()
    specs = [*project["dependencies"], *project["optional-dependencies"]["test"]]
    seen = set()
    for spec in specs:
        req = Requirement(spec)
        name = canonicalize_name(req.name)
        seen.add(name)
        assert name in pins, f"{req.name} is not pinned in .ci/lowest.txt"
        pinned = Version(pins[name])
        assert req.specifier.contains(pinned), f"{name}=={pinned} is outside {req.specifier}"
        floors = [Version(s.version) for s in req.specifier if s.operator == ">="]
        assert floors, f"{req.name} has no lower bound: the lowest version is undefined"
        floor = floors[0]
        assert pinned.release[: len(floor.release)] == floor.release, (
            f"{name}: pinned {pinned}, but the lower bound is {floor}"
        )
    assert set(pins) == seen, f"pinned but not a dependency: {set(pins) - seen}"


def test_ci_workflow__lowest_versions_job__installs_the_pins_and_runs_the_suite() -> None:
    from ruamel.yaml import YAML

    wf = YAML(typ="safe").load((ROOT / ".github" / "workflows" / "ci.yml").read_text("utf-8"))
    job = wf["jobs"]["lowest"]
    runs = "\n".join(str(s.get("run", "")) for s in job["steps"])
    assert "pip install -r .ci/lowest.txt" in runs
    assert "--no-deps -e ." in runs
    assert "pytest" in runs
    setup = next(s for s in job["steps"] if "setup-python" in str(s.get("uses", "")))
    assert setup["with"]["python-version"] == "3.11", "the lowest Python ToolGate supports"


def test_ci_run__runs_the_suite_on_the_lowest_pins_too() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "pip install --quiet -r .ci/lowest.txt" in ci
    assert "--no-deps -e ." in ci
    assert "TOOLGATE_LOWEST_VERSIONS=1" in ci
