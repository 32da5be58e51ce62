"""The agent's own environment in the Action's container: the ``install`` and ``setup``
inputs, run before the gate starts (docs/action.md, "The agent's environment").

``install`` is :func:`install_requirements` then :func:`activate` (every file it reads
with ``-r``/``-c`` must be in the workspace: :func:`check_nested`); ``setup`` is
:func:`run_setup`. Each is bounded by :data:`STEP_TIMEOUT_S`. A service ``setup`` starts
in the background lives for the step: the step goes on once the shell exits — never
waiting for the service, which may hold the output open — and ToolGate ends it, with
every other process the step started, once the gate is over (:mod:`gate.github.stepfiles`).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import deque
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from gate.errors import InputError, Problem
from gate.replay.command import agent_environ, kill_group

INPUTS_FILE = "action inputs"
"""Where an input's problem is reported (as :data:`gate.github.context.INPUTS_FILE`)."""

STEP_TIMEOUT_S = 30 * 60.0
"""Most time ``install`` or ``setup`` may take; then it is stopped and the step fails."""

TAIL_LINES = 15
"""How many of its last output lines a failed ``install`` or ``setup`` quotes."""

_STOP_GRACE_S = 5.0


@dataclass(frozen=True, slots=True)
class AgentEnvironment:
    """The virtual environment ``install`` made."""

    root: Path
    python: Path
    """Its interpreter (``root/bin/python``, never resolved: it is a symlink)."""


@dataclass(frozen=True, slots=True)
class StepOutcome:
    code: int | None
    """The exit code; ``None`` when it was stopped at :data:`STEP_TIMEOUT_S`."""
    seconds: float
    tail: tuple[str, ...]


def prepare(
    *,
    install: str | None,
    setup: str | None,
    workdir: Path,
    workspace: Path,
    scratch: Path | None,
    log: TextIO,
    environ: MutableMapping[str, str] | None = None,
) -> AgentEnvironment | None:
    """Run ``install`` then ``setup`` (module docstring); the environment ``install``
    made, activated in ``environ`` (default :data:`os.environ`, where ToolGate's children
    get theirs), or ``None`` without ``install``. Raises :class:`InputError` naming the
    input that failed."""
    env = os.environ if environ is None else environ
    made: AgentEnvironment | None = None
    if install:
        made = install_requirements(install, workdir, workspace, scratch, log, env)
        activate(made, env)
    if setup:
        run_setup(setup, workdir, log, env)
    return made


def install_requirements(
    install: str,
    workdir: Path,
    workspace: Path,
    scratch: Path | None,
    log: TextIO,
    environ: Mapping[str, str],
) -> AgentEnvironment:
    """A new virtual environment with the requirements file installed into it."""
    requirements = (workdir / install).resolve()
    root = workspace.resolve()
    if requirements != root and root not in requirements.parents:
        raise _bad("install", f"{install!r} leaves the workspace ({root})")
    if not requirements.is_file():
        near = _nearest(workdir, install)
        raise _bad("install", f"no such file {install!r} in {workdir}{near}")
    check_nested(requirements, root, _pip_environ(environ, workspace, None))
    folder = Path(tempfile.mkdtemp(prefix="toolgate-agent-env-", dir=scratch))
    made = AgentEnvironment(folder, folder / "bin" / "python")
    title = f"ToolGate: install {install} into the agent's environment"
    with _group(log, title):
        t0 = time.monotonic()
        venv = _run(
            [sys.executable, "-m", "venv", str(folder)],
            cwd=workdir,
            env=agent_environ(environ),
            log=log,
        )
        if venv.code != 0:
            raise _failed("install", "could not make the agent's virtual environment", venv)
        pip = _run(
            [
                str(made.python),
                "-m",
                "pip",
                "install",
                "--disable-pip-version-check",
                "--no-input",
                "-r",
                str(requirements),
            ],
            cwd=workdir,
            env=_pip_environ(environ, workspace, made),
            log=log,
        )
        seconds = time.monotonic() - t0
    if pip.code != 0:
        raise _failed("install", f"pip could not install {install}", pip)
    _say(log, f"ToolGate: installed {install} into the agent's environment in {seconds:.1f} s")
    return made


def run_setup(setup: str, workdir: Path, log: TextIO, environ: Mapping[str, str]) -> None:
    """``setup`` in a shell, in the working directory, with the agent's environment."""
    shell = shutil.which("bash", path=environ.get("PATH"))
    argv = [shell, "-eo", "pipefail", "-c", setup] if shell else ["/bin/sh", "-ec", setup]
    env = {**agent_environ(environ), "PIP_REQUIRE_VIRTUALENV": "1"}
    with _group(log, "ToolGate: setup"):
        done = _run(argv, cwd=workdir, env=env, log=log)
    if done.code != 0:
        raise _failed("setup", "the setup command failed", done)
    _say(log, f"ToolGate: setup ran in {done.seconds:.1f} s")


def activate(made: AgentEnvironment, environ: MutableMapping[str, str]) -> None:
    """What ``source bin/activate`` does, for every process started afterwards."""
    environ["VIRTUAL_ENV"] = str(made.root)
    bin_dir = str(made.root / "bin")
    rest = environ.get("PATH", "")
    environ["PATH"] = bin_dir + (os.pathsep + rest if rest else "")
    environ.pop("PYTHONHOME", None)


_NESTED = re.compile(
    r"^(?:-r|--requirement|-c|--constraint)(?:\s*=\s*|\s+|(?<=^-r)|(?<=^-c))(?P<value>\S.*)$"
)
"""A requirements file's line that reads another file (``-r``/``-c``, long forms, with a
space, an ``=`` or nothing between the option and its value)."""
_ENV_VAR = re.compile(r"\$\{(?P<name>[A-Z0-9_]+)\}")
"""What pip expands in a requirements file (``${NAME}``)."""
MAX_NESTED = 64
"""Most requirements files one ``install`` may read, the first included."""


def check_nested(requirements: Path, root: Path, environ: Mapping[str, str]) -> None:
    """Every file ``requirements`` reads with ``-r``/``-c`` (and the files those read) is
    in the workspace ``root``: pip would follow a path anywhere, and quote what it read
    in its error. Read as pip reads them — a line continued by a backslash, a ``#``
    comment, ``${VAR}`` expanded from pip's environment, a path relative to the file
    that names it, a ``file:`` URL. A file outside is an input error naming the file
    and the line that names it, never quoting what the file outside holds."""
    seen: set[Path] = set()
    todo = [requirements.resolve()]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        if len(seen) > MAX_NESTED:
            raise _bad("install", f"the requirements files name more than {MAX_NESTED} others")
        shown = _shown(path, root)
        try:
            text = path.read_text("utf-8", errors="replace")
        except OSError as exc:
            raise _bad("install", f"{shown}: cannot read ({exc.strerror or exc})") from None
        for lineno, line in _logical_lines(text):
            m = _NESTED.match(line)
            if m is None:
                continue
            value = _ENV_VAR.sub(lambda v: environ.get(v.group("name"), ""), m.group("value"))
            value = value.strip().strip("'\"")
            if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", value):
                if not value.lower().startswith("file:"):
                    continue  # an index URL: pip fetches it, nothing of this machine is read
                value = re.sub(r"^file:(//)?", "", value, flags=re.IGNORECASE)
            target = (path.parent / value).resolve()
            if target != root and root not in target.parents:
                raise _bad(
                    "install",
                    f"{shown} line {lineno}: {line.split()[0]} names a file outside the "
                    f"workspace ({root}): every requirements file must be in the repository",
                )
            if not target.is_file():
                raise _bad("install", f"{shown} line {lineno}: no such file {value!r}")
            todo.append(target)


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first physical line number, text) of each logical line, as pip joins them: a
    trailing backslash continues a line; a ``#`` at the start or after a space starts a
    comment."""
    out: list[tuple[int, str]] = []
    buf = ""
    start = 0
    for n, raw in enumerate(text.splitlines(), start=1):
        if not buf:
            start = n
        if raw.endswith("\\"):
            buf += raw[:-1]
            continue
        buf += raw
        line = re.sub(r"(^|\s+)#.*$", "", buf).strip()
        if line:
            out.append((start, line))
        buf = ""
    return out


def _shown(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.name


def _pip_environ(
    environ: Mapping[str, str], workspace: Path, made: AgentEnvironment | None
) -> dict[str, str]:
    """pip's environment: the agent's, with ``PIP_CACHE_DIR`` (when the step sets it)
    under the workspace if relative, and no ``PIP_NO_CACHE_DIR`` then (the image sets it,
    and it would win)."""
    env = agent_environ(environ)
    if made is not None:
        env["VIRTUAL_ENV"] = str(made.root)
    cache = env.get("PIP_CACHE_DIR", "").strip()
    if cache:
        env["PIP_CACHE_DIR"] = str(Path(cache) if Path(cache).is_absolute() else workspace / cache)
        env.pop("PIP_NO_CACHE_DIR", None)
    return env


def _run(argv: Sequence[str], *, cwd: Path, env: dict[str, str], log: TextIO) -> StepOutcome:
    """Run ``argv`` with its output (stdout and stderr, merged) copied to ``log`` between
    ``::stop-commands::`` markers; stopped (its process group killed) past
    :data:`STEP_TIMEOUT_S`."""
    t0 = time.monotonic()
    tail: deque[str] = deque(maxlen=TAIL_LINES)
    token = uuid.uuid4().hex
    _say(log, f"::stop-commands::{token}")
    try:
        proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as exc:
        _say(log, f"::{token}::")
        return StepOutcome(127, time.monotonic() - t0, (f"cannot start {argv[0]}: {exc}",))
    assert proc.stdout is not None
    stream = proc.stdout
    quiet = threading.Event()
    """Set when the command is over: what still comes is a background process's."""
    last = [time.monotonic()]

    def copy() -> None:
        for raw in iter(stream.readline, b""):
            last[0] = time.monotonic()
            if quiet.is_set():
                continue  # drained, never shown: the pipe must not fill up under it
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            tail.append(line)
            log.write(line + "\n")
        log.flush()

    reader = threading.Thread(target=copy, daemon=True)
    reader.start()
    code: int | None
    try:
        code = proc.wait(timeout=STEP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        code = None
    finally:
        if proc.poll() is None or code is None:
            kill_group(proc, _STOP_GRACE_S)
        held = _output_done(reader, last)
        quiet.set()
        if not held:
            stream.close()
        _say(log, f"::{token}::")
    if held:
        _say(
            log,
            "ToolGate: a process the command started in the background holds its output: "
            "it keeps running for the step, and ToolGate ends it once the gate is over.",
        )
    seconds = time.monotonic() - t0
    if code is None:
        tail.append(f"(stopped after {STEP_TIMEOUT_S / 60:.0f} minutes)")
    return StepOutcome(code, seconds, tuple(tail))


_QUIET_S = 0.25
"""Once the command exited, its output is taken as complete after this long without any."""


def _output_done(reader: threading.Thread, last: list[float]) -> bool:
    """Wait (at most :data:`_STOP_GRACE_S`) for the output of a command that exited;
    whether a process it left running still holds the pipe open (then what it writes is
    not the command's: it is drained, never shown, and never waited for)."""
    end = time.monotonic() + _STOP_GRACE_S
    while reader.is_alive():
        now = time.monotonic()
        if now >= end or now - last[0] >= _QUIET_S:
            reader.join(timeout=0.01)
            return reader.is_alive()
        reader.join(timeout=0.02)
    return False


def _failed(name: str, what: str, done: StepOutcome) -> InputError:
    how = (
        f"exit code {done.code}"
        if done.code is not None
        else f"stopped after {STEP_TIMEOUT_S / 60:.0f} minutes"
    )
    lines = [ln for ln in done.tail if ln.strip()]
    last = f"; its last lines:\n{chr(10).join(lines)}" if lines else ""
    return _bad(name, f"{what} ({how}, after {done.seconds:.1f} s){last}")


def _bad(name: str, message: str) -> InputError:
    return InputError(
        Problem(INPUTS_FILE, None, name, message),
        hint="The gate did not start: fix the input and run the job again.",
    )


def _nearest(folder: Path, wanted: str) -> str:
    from gate.dataset.matchers import did_you_mean

    try:
        names = [p.name for p in folder.iterdir() if p.is_file()]
    except OSError:
        return ""
    return did_you_mean(Path(wanted).name, names)


def _say(log: TextIO, text: str) -> None:
    log.write(text + "\n")
    log.flush()


@contextlib.contextmanager
def _group(log: TextIO, title: str) -> Iterator[None]:
    """A collapsed log group (``::group::`` … ``::endgroup::``)."""
    _say(log, f"::group::{title}")
    try:
        yield
    finally:
        _say(log, "::endgroup::")
