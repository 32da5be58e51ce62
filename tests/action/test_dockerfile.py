"""The Action's Dockerfile follows GitHub's rules for Docker container actions.

Here the rules are checked on the file itself, in every run of the suite (the image
test, ``.ci/image``, builds the image and runs it as the runner does): no ``USER``,
no ``WORKDIR``, an absolute exec-form ``ENTRYPOINT`` running ``gate.action``, git
installed with ``safe.directory '*'`` in the system config, an official Debian-based slim
Python base pinned to a patch version, and every Python dependency installed from
``requirements.lock`` at an exact version that fits ``pyproject.toml``.
(``.ci/lint`` runs hadolint on it as well.)
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from tests.action.dockerfile import base_image, instructions

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"
LOCK = ROOT / "requirements.lock"


@pytest.fixture(scope="module")
def steps() -> list[tuple[str, str]]:
    return instructions(DOCKERFILE.read_text(encoding="utf-8"))


def lock_pins() -> dict[str, str]:
    pins: dict[str, str] = {}
    for n, raw in enumerate(LOCK.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([0-9][0-9A-Za-z.+!-]*)", line)
        assert m, f"requirements.lock:{n}: {line!r} is not an exact `name==version` pin"
        pins[canonicalize_name(m.group(1))] = m.group(2)
    return pins


# ─── GitHub's rules ───────────────────────────────────────────────────────────


def test_dockerfile__first_instruction__is_a_pinned_official_slim_debian_python(steps):
    word, image = steps[0]
    assert word == "FROM"
    m = re.fullmatch(
        r"python:(\d+)\.(\d+)\.(\d+)-slim-(bookworm|trixie)(@sha256:[0-9a-f]{64})?", image
    )
    assert m, f"base image {image!r} is not python:X.Y.Z-slim-<debian release>"
    assert (int(m.group(1)), int(m.group(2))) >= (3, 11), "ToolGate needs Python >= 3.11"
    assert sum(1 for w, _ in steps if w == "FROM") == 1, "one stage: nothing to copy between"


def test_dockerfile__has_no_user_instruction__the_workspace_needs_root(steps):
    assert [a for w, a in steps if w == "USER"] == []


def test_dockerfile__has_no_workdir__the_workspace_is_mounted_over_it(steps):
    assert [a for w, a in steps if w == "WORKDIR"] == []


def test_dockerfile__entrypoint__is_absolute_exec_form_running_gate_action(steps):
    entries = [a for w, a in steps if w == "ENTRYPOINT"]
    assert len(entries) == 1
    argv = json.loads(entries[0])  # exec form is a JSON array; shell form would not parse
    assert isinstance(argv, list) and all(isinstance(a, str) for a in argv)
    assert argv[0].startswith("/"), f"{argv[0]!r} is not an absolute path"
    assert Path(argv[0]).name.startswith("python")
    assert argv[-2:] == ["-m", "gate.action"]
    # -P keeps the user's repository (the working directory) off sys.path, so a folder
    # named `gate` there cannot shadow ToolGate's package.
    assert "-P" in argv[1:-2]
    assert [a for w, a in steps if w == "CMD"] == [], "CMD would add arguments to the entrypoint"


def test_dockerfile__marks_every_directory_safe_for_git_in_the_system_config(steps):
    runs = " ".join(a for w, a in steps if w == "RUN")
    assert re.search(r"git config --system --add safe\.directory '\*'", runs)


def test_dockerfile__installs_git_without_recommends_and_drops_apt_lists(steps):
    apt = [a for w, a in steps if w == "RUN" and "apt-get install" in a]
    assert len(apt) == 1
    assert re.search(r"apt-get install -y --no-install-recommends [^&]*\bgit\b", apt[0])
    assert "rm -rf /var/lib/apt/lists/*" in apt[0], "apt lists left in the layer"
    # update in the same layer as install, or a cached layer installs from stale lists
    assert apt[0].index("apt-get update") < apt[0].index("apt-get install")


def test_dockerfile__pip_installs_only_the_lock(steps):
    pips = [a for w, a in steps if w == "RUN" and "pip install" in a]
    assert pips, "no pip install"
    for cmd in pips:
        assert "-r /opt/toolgate/requirements.lock" in cmd, f"pip install outside the lock: {cmd}"
        assert "--no-cache-dir" in cmd


def test_dockerfile__copies_only_what_dockerignore_lets_in(steps):
    ignore = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert ignore[0] == "*", ".dockerignore should exclude everything by default"
    allowed = {p.removeprefix("!").rstrip("/") for p in ignore if p.startswith("!")}
    for word, args in steps:
        if word in {"COPY", "ADD"}:
            assert word == "COPY", "ADD fetches URLs and unpacks archives: use COPY"
            *sources, _dest = args.split()
            for src in sources:
                assert src.rstrip("/") in allowed, f"{src} is excluded by .dockerignore"
                assert (ROOT / src).exists(), f"{src} does not exist"


def test_dockerfile__package_on_pythonpath_matches_entrypoint(steps):
    envs = " ".join(a for w, a in steps if w == "ENV")
    assert "PYTHONPATH=/opt/toolgate" in envs
    assert any(w == "COPY" and a.split()[-1] == "/opt/toolgate/gate" for w, a in steps)


# ─── the dependency lock ──────────────────────────────────────────────────────


def test_lock__pins_every_runtime_dependency_inside_its_pyproject_range():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    pins = lock_pins()
    for spec in project["dependencies"]:
        req = Requirement(spec)
        name = canonicalize_name(req.name)
        assert name in pins, f"{req.name} is a runtime dependency but not in requirements.lock"
        assert req.specifier.contains(Version(pins[name]), prereleases=True), (
            f"requirements.lock pins {req.name}=={pins[name]}, outside pyproject's {req.specifier}"
        )


@pytest.mark.parametrize("where", ["the FROM's Python", "the lowest Python allowed"])
def test_lock__is_closed_under_the_dependencies_of_its_packages(steps, where):
    """Every package a locked package needs (on Linux, on the image's Python and on the
    lowest one pyproject allows, which the image test's stand-in base runs) is locked too,
    so pip in the image resolves nothing on its own."""
    pins = lock_pins()
    base = base_image(steps)
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "requires-python"
    ]
    floor = next(s.version for s in SpecifierSet(requires) if s.operator == ">=")
    minor = f"{base.python[0]}.{base.python[1]}" if where.startswith("the FROM") else floor
    env = {
        **default_environment(),
        "sys_platform": "linux",
        "platform_system": "Linux",
        "python_version": minor,
        "python_full_version": f"{minor}.0",
    }
    missing: list[str] = []
    for name in pins:
        try:
            installed = metadata.version(name)
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            pytest.skip(f"{name} is not installed here; cannot read its metadata")
        if Version(installed) != Version(pins[name]):
            # The metadata here describes another version (the lowest-versions job runs
            # the oldest allowed ones): it says nothing about what the locked version needs.
            pytest.skip(f"{name} {installed} is installed, not the locked {pins[name]}")
        for spec in requires:
            req = Requirement(spec)
            extras_needed = {"crypto"} if name == "pygithub" else set()  # pyjwt[crypto]
            if req.marker is not None and not any(
                req.marker.evaluate({**env, "extra": e}) for e in ({""} | extras_needed)
            ):
                continue
            if canonicalize_name(req.name) not in pins:
                missing.append(f"{name} needs {req}")
    assert missing == []


@pytest.mark.skipif(
    os.environ.get("TOOLGATE_LOWEST_VERSIONS") == "1",
    reason="the lowest-versions job runs on the oldest allowed versions, not the lock's",
)
def test_lock__matches_the_versions_the_tests_run_against():
    """The image must run what CI tested: each pin equals the installed version."""
    mismatched = []
    for name, version in lock_pins().items():
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
        if Version(installed) != Version(version):
            mismatched.append(f"{name}: lock {version}, installed {installed}")
    assert mismatched == [], "regenerate requirements.lock (see its header)"


# ─── the parser above is itself tested, so the rules cannot pass vacuously ────


def test_instructions__joins_continuations_and_skips_comments():
    text = '# c\nFROM x\nRUN a \\\n    # inner\n    && b\nENTRYPOINT ["/p"]\n'
    assert instructions(text) == [("FROM", "x"), ("RUN", "a && b"), ("ENTRYPOINT", '["/p"]')]


def test_rules__catch_a_dockerfile_that_breaks_them():
    bad = instructions(
        "FROM python:latest\nWORKDIR /app\nUSER app\nENTRYPOINT python -m gate.action\n"
    )
    assert [w for w, _ in bad] == ["FROM", "WORKDIR", "USER", "ENTRYPOINT"]
    with pytest.raises(json.JSONDecodeError):
        json.loads(bad[-1][1])
