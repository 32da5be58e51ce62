"""The image test's own parts, without Docker: the checks name what broke, the build log
is read for the failed step, the stand-in base follows the Dockerfile's Debian release, and
CI runs the image test (``.ci/image``), never skipping it. The image itself is built and
run by ``.ci/image`` (``python -m tests.image.check_image``), not by this suite."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

from tests.action.dockerfile import BaseImage, base_image, instructions
from tests.image.base import apt_mirror
from tests.image.check_image import (
    Report,
    build_failure,
    check_config,
    check_facts,
    entrypoint_problem,
    project_facts,
)

ROOT = Path(__file__).resolve().parents[2]
ENTRYPOINT = ["/usr/local/bin/python", "-P", "-m", "gate.action"]
BASE = BaseImage("python:3.12.12-slim-bookworm", (3, 12), "bookworm")
HEAD = "a" * 40
LOCK = {"numpy": "2.4.6", "pydantic": "2.14.4"}

#: Each Debian release's own Python: what the stand-in base runs.
DEBIAN_PYTHON = {"bookworm": "3.11", "trixie": "3.13"}


def healthy() -> dict[str, list[str]]:
    return {
        "python_version": ["3.12.12"],
        "gate_file": ["/opt/toolgate/gate/action.py"],
        "opt_toolgate": ["gate requirements.lock "],
        "git_version": ["git version 2.39.5"],
        "git_safe": ["* "],
        "git_head": [HEAD],
        "pkg": ["numpy==2.4.6", "pydantic==2.14.4", "pip==25.3"],
        "pip_check": ["ok"],
    }


def run_checks(facts: dict[str, list[str]], *, official: bool = True) -> Report:
    r = Report()
    check_facts(
        facts,
        base=BASE,
        official=official,
        repo_head=HEAD,
        lock=LOCK,
        requires_python=SpecifierSet(">=3.11"),
        ci_pythons=["3.11", "3.12", "3.13"],
        r=r,
    )
    return r


def test_facts__a_healthy_image__every_check_passes() -> None:
    r = run_checks(healthy())
    assert r.failed == [] and len(r.passed) == 11


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"git_version": ["sh: 1: git: not found"]}, "git is missing from the image"),
        (
            {
                "gate_file": ["ModuleNotFoundError: No module named 'gate'"],
                "opt_toolgate": ["requirements.lock "],
            },
            "gate package missing from /opt/toolgate",
        ),
        ({"test_file": ["/opt/toolgate/tests"]}, "/opt/toolgate holds ['/opt/toolgate/tests']"),
        ({"opt_toolgate": ["gate bench requirements.lock "]}, "holds ['bench']"),
        ({"compiler": ["/usr/bin/gcc"]}, "no compiler in the image: found ['/usr/bin/gcc']"),
        ({"git_safe": [""]}, "safe.directory"),
        ({"git_head": ["fatal: detected dubious ownership"]}, "dubious ownership"),
        ({"pkg": ["numpy==2.4.5", "pydantic==2.14.4"]}, "numpy==2.4.6 (installed: 2.4.5)"),
        ({"pip_check": ["pydantic 2.14.4 has requirement x"]}, "pip check"),
        ({"python_version": ["3.10.4"]}, "is in requires-python >=3.11"),
        ({"python_version": ["3.11.2"]}, "FROM python:3.12.12-slim-bookworm but the image runs"),
    ],
)
def test_facts__what_broke__is_named(change: dict[str, list[str]], message: str) -> None:
    r = run_checks({**healthy(), **change})
    assert r.failed, change
    assert any(message in f for f in r.failed), r.failed


def test_facts__on_the_stand_in__its_own_python_is_not_held_to_the_from() -> None:
    r = run_checks({**healthy(), "python_version": ["3.11.2"]}, official=False)
    assert r.failed == []


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        ([], "is missing"),
        (["python", "-P", "-m", "gate.action"], "absolute path"),
        (["/bin/sh", "-c", "python -P -m gate.action"], "/bin/sh is not a Python interpreter"),
        (["/usr/local/bin/python", "-P", "-m", "gate"], "does not start gate.action"),
        (["/usr/local/bin/python", "-m", "gate.action"], "without -P"),
    ],
)
def test_entrypoint__not_gate_action__says_why(argv: list[str], words: str) -> None:
    problem = entrypoint_problem(argv)
    assert problem is not None and words in problem


def test_entrypoint__the_dockerfiles__is_fine() -> None:
    assert entrypoint_problem(ENTRYPOINT) is None


def test_config__github_rules__each_named() -> None:
    r = Report()
    check_config(
        {
            "Entrypoint": ENTRYPOINT,
            "Cmd": ["python3"],
            "User": "app",
            "WorkingDir": "/app",
            "Env": ["PATH=/usr/bin"],
        },
        ENTRYPOINT,
        r,
    )
    text = "\n".join(r.failed)
    assert "CMD ['python3']" in text and "USER 'app'" in text and "WORKDIR '/app'" in text
    assert "PYTHONPATH is None" in text


def test_build_failure__names_the_step_and_the_cause() -> None:
    stdout = (
        "Step 1/8 : FROM python:3.12.12-slim-bookworm\n ---> 1234\n"
        "Step 3/8 : RUN apt-get update && apt-get install -y --no-install-recommends "
        "&& git config --system --add safe.directory '*'\n"
        " ---> Running in 99\n\x1b[91m/bin/sh: 1: git: not found\n\x1b[0m"
    )
    stderr = (
        "The command '/bin/sh -c apt-get update && apt-get install -y ...' returned a "
        "non-zero code: 127\n"
    )
    text = build_failure(stdout, stderr)
    assert text.startswith("the image does not build — git is missing from the image: Step 3/8")
    assert "returned a non-zero code: 127" in text and "/bin/sh: 1: git: not found" in text
    assert "\x1b" not in text


def test_build_failure__a_lock_that_does_not_install__is_named() -> None:
    stdout = (
        "Step 5/8 : RUN python -m pip install --no-cache-dir -r /opt/toolgate/requirements.lock\n"
        "ERROR: No matching distribution found for numpy==9.9\n"
    )
    text = build_failure(stdout, "The command ... returned a non-zero code: 1\n")
    assert "requirements.lock does not install on the image's Python" in text


def test_apt_mirror__deb822_and_one_line_sources__the_main_archive(tmp_path: Path) -> None:
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list.d" / "debian.sources").write_text(
        "Types: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\n\n"
        "Types: deb\nURIs: http://mirror.example/debian/\nSuites: bookworm\n"
    )
    assert apt_mirror(tmp_path) == "http://mirror.example/debian"
    (tmp_path / "sources.list.d" / "debian.sources").unlink()
    (tmp_path / "sources.list").write_text(
        "deb [arch=amd64] http://ftp.example/debian bookworm main\n"
    )
    assert apt_mirror(tmp_path) == "http://ftp.example/debian"
    (tmp_path / "sources.list").unlink()
    assert apt_mirror(tmp_path) == "http://deb.debian.org/debian"


# ─── Python as the image has it ───────────────────────────────────────────────


def test_base__from_and_stand_in__both_run_a_python_the_project_supports_and_ci_tests() -> None:
    """The release image runs the FROM's Python; the image test's stand-in (when the FROM
    cannot be pulled) runs the same Debian release's own Python. Both must be inside
    ``requires-python`` and run by the CI suite, the lowest of them by the lowest-versions
    job."""
    base = base_image(instructions((ROOT / "Dockerfile").read_text("utf-8")))
    requires, ci_pythons, _ = project_facts()
    official = f"{base.python[0]}.{base.python[1]}"
    stand_in = DEBIAN_PYTHON[base.debian]
    for version in (official, stand_in):
        assert f"{version}.0" in requires, f"Python {version} is outside {requires}"
        assert version in ci_pythons, f"CI's test matrix {ci_pythons} lacks Python {version}"
    from ruamel.yaml import YAML

    ci = YAML(typ="safe").load((ROOT / ".github" / "workflows" / "ci.yml").read_text("utf-8"))
    lowest_job = next(
        s["with"]["python-version"]
        for s in ci["jobs"]["lowest"]["steps"]
        if str(s.get("uses", "")).startswith("actions/setup-python")
    )
    floor = next(s.version for s in requires if s.operator == ">=")
    assert str(lowest_job) == floor, "the lowest-versions job runs the lowest Python allowed"
    for version in (official, stand_in):
        assert tuple(map(int, version.split("."))) >= tuple(map(int, floor.split(".")))


# ─── CI runs it, and never skips it ───────────────────────────────────────────


def test_ci_run__runs_the_image_test() -> None:
    lines = (ROOT / ".ci" / "run").read_text("utf-8").splitlines()
    assert "bash .ci/image" in lines
    assert lines.index("bash .ci/image") < next(
        i for i, ln in enumerate(lines) if ln.startswith("python -m pytest")
    )
    image = (ROOT / ".ci" / "image").read_text("utf-8")
    assert "exec python -m tests.image.check_image" in image


@pytest.mark.parametrize(
    ("ci", "code", "words"),
    [
        ("true", 1, "TOOLGATE_SKIP_IMAGE=1 is refused in CI"),
        ("", 0, "image test: SKIPPED because TOOLGATE_SKIP_IMAGE=1"),
    ],
)
def test_ci_image__skip_flag__refused_in_ci_said_aloud_elsewhere(
    ci: str, code: int, words: str
) -> None:
    env = {"PATH": os.environ["PATH"], "TOOLGATE_SKIP_IMAGE": "1", "CI": ci}
    proc = subprocess.run(
        ["bash", str(ROOT / ".ci" / "image")], env=env, capture_output=True, text=True, check=False
    )
    assert proc.returncode == code
    assert words in proc.stdout + proc.stderr
