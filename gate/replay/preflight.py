"""What ``check`` refuses before the first case, and ``validate`` reports: an agent that
cannot start. A program that is not there, a script the command names that is missing, an
unreadable ``system_prompt_file``, a Python ``callable`` that cannot be imported, a replay
``runs`` file that is missing — each a located problem (the config's file, line, field),
never a run whose every case-sample fails the same way."""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path

from gate.config import BARE_PYTHON, CommandAgent, Config, PythonAgent
from gate.dataset import default_display
from gate.errors import ErrorKind, Problem
from gate.model import DatasetLike
from gate.yamlio import YamlDoc

INTERPRETERS = frozenset({"python", "python3", "node", "bash", "sh", "ruby", "deno", "bun", "perl"})
"""Programs whose first argument names the script they run (checked to exist)."""


def interpreter_note(config: Config) -> str | None:
    """A command starting with a bare ``python`` runs ToolGate's own interpreter unless
    ``agent.python`` says otherwise: say which, since an agent that needs packages from
    another environment then fails to import."""
    agent = config.agent
    if agent.kind != "command":
        return None
    argv = list(agent.command) if isinstance(agent.command, list) else shlex.split(agent.command)
    if not argv or argv[0] not in BARE_PYTHON:
        return None
    interpreter = config.agent_python()
    if interpreter is None:
        found = shutil.which(argv[0])
        return f"agent.command starts with {argv[0]!r}: with agent.python: path it runs {found}"
    if interpreter != sys.executable:
        return f"agent.command starts with {argv[0]!r}: agent.python runs it with {interpreter}"
    return (
        f"agent.command starts with {argv[0]!r}: ToolGate runs it with its own interpreter "
        f"({sys.executable}; agent.python: toolgate); to use your agent's environment, set "
        "agent.python: path (the python on PATH) or name its interpreter instead (for "
        "example .venv/bin/python)"
    )


def nearest_file(folder: Path, wanted: str) -> str:
    """`` (did you mean 'x'?)`` for the file under ``folder`` (two levels deep) whose
    relative path is closest to ``wanted``, or an empty string."""
    from gate.dataset.matchers import did_you_mean

    suffix = Path(wanted).suffix
    found: list[str] = []
    for pattern in ("*", "*/*"):
        for p in folder.glob(pattern):
            if len(found) >= 2000:
                break
            if p.is_file() and (not suffix or p.suffix == suffix):
                found.append(p.relative_to(folder).as_posix())
    return did_you_mean(wanted, found)


def agent_problems(config: Config, doc: YamlDoc, *, start_python: bool = True) -> list[Problem]:
    """What ``check`` would refuse before the first case: a program that is not there, a
    script the command names that is missing, an interpreter ``agent.python`` names that
    is not there, an unreadable ``system_prompt_file``, a Python ``callable`` that cannot be
    imported, a replay ``runs`` file that is missing.

    The callable is checked by starting one worker (``start_python``): ``validate`` does;
    the commands that run the agent do not, since their adapter starts its workers before
    the first case and refuses one that cannot import the callable at the same line — the
    agent's module is imported once per worker, never twice."""
    problems: list[Problem] = []

    def report(path: tuple[str | int, ...], field: str, message: str) -> None:
        problems.append(Problem(doc.file, doc.line_of(path), field, message))

    agent = config.agent
    interpreter = config.agent_python()
    if (
        isinstance(agent, CommandAgent | PythonAgent)
        and interpreter is not None
        and interpreter != sys.executable
        and not Path(interpreter).exists()
    ):
        report(
            ("agent", "python"),
            "agent.python",
            f"the interpreter {agent.python!r} is not there "
            f"(looked for {default_display(Path(interpreter))})",
        )
        return problems
    if agent.kind == "replay" and not config.resolve(agent.runs).exists():
        report(
            ("agent", "runs"),
            "agent.runs",
            f"no such file {default_display(config.resolve(agent.runs))}",
        )
    elif agent.kind == "command":
        argv = (
            list(agent.command) if isinstance(agent.command, list) else shlex.split(agent.command)
        )
        where: tuple[str | int, ...] = ("agent", "command")
        cwd = config.resolve(agent.cwd) if agent.cwd else config.root
        if not argv:
            report(where, "agent.command", "is empty")
            return problems
        program = argv[0]
        if program not in BARE_PYTHON or interpreter is None:
            found = (
                (cwd / program).exists() if "/" in program else shutil.which(program) is not None
            )
            if not found:
                report(
                    where,
                    "agent.command",
                    f"the program {program!r} is not there"
                    + (
                        f" (looked in {_folder(cwd)}){nearest_file(cwd, program)}"
                        if "/" in program
                        else " (not on PATH)"
                    ),
                )
                return problems
        if Path(program).name.rstrip("0123456789.") in INTERPRETERS:
            script = next((a for a in argv[1:] if not a.startswith("-")), None)
            if argv[1:2] == ["-m"] or argv[1:2] == ["-c"]:
                script = None
            if script is not None and not (cwd / script).exists():
                report(
                    where,
                    "agent.command",
                    f"{program} would run {script!r}, which is not in {_folder(cwd)}"
                    f"{nearest_file(cwd, script)}",
                )
    elif agent.kind == "openai" and agent.system_prompt_file:
        path = config.resolve(agent.system_prompt_file)
        if not path.is_file():
            report(
                ("agent", "system_prompt_file"),
                "agent.system_prompt_file",
                f"no such file {default_display(path)}",
            )
    elif agent.kind == "python" and start_python:
        from gate.replay.python_agent import check_callable

        # In a worker process, as check imports it: never into this one.
        for p in check_callable(config, agent):
            report(("agent", "callable"), p.field or "agent.callable", p.message)
    return problems


def _folder(path: Path) -> str:
    """A folder as messages name it: relative to the working directory, and absolute when
    that is the working directory itself (``.`` names nothing)."""
    shown = default_display(path)
    return f"the folder {path.resolve()}" if shown == "." else f"the folder {shown}"


START_FAILURES = frozenset(
    {ErrorKind.CRASH, ErrorKind.PROTOCOL, ErrorKind.TIMEOUT, ErrorKind.EXCEPTION, ErrorKind.START}
)
"""How a first case-sample fails when the agent cannot start or cannot speak the protocol
(its own ``error`` message, a step budget overrun or a malformed output are answers)."""

FIRST_ERROR_LINES = 12
"""How many lines of the first case-sample's error a start failure quotes."""


def first_case_problems(config: Config, doc: YamlDoc, dataset: DatasetLike) -> list[Problem]:
    """Start a ``command`` or ``python`` agent once — the dataset's first case, one sample,
    in a scratch folder, nothing scored (``toolgate validate``) — and report a start
    failure at the agent's config line with its first error lines."""
    import tempfile

    from gate.errors import ConfigError, error_kind_of
    from gate.policy.validity import agents_words
    from gate.replay.runner import run_all
    from gate.runsfile import iter_runs

    agent = config.agent
    if agent.kind not in ("command", "python") or not dataset.cases:
        return []
    field = "agent.command" if agent.kind == "command" else "agent.callable"
    first = dataset.cases[0]
    with tempfile.TemporaryDirectory(prefix="toolgate-validate-") as scratch:
        try:
            summary = run_all(
                config,
                dataset,
                Path(scratch),
                samples=1,
                shard=None,
                resume=False,
                case_ids=[first.id],
                progress=False,
            )
        except ConfigError as exc:  # a python callable that cannot be imported
            return list(exc.problems)
        runs = [run for _, run in iter_runs(summary.runs_path)]
    error = runs[0].error if runs else None
    if error is None or error_kind_of(error) not in START_FAILURES:
        return []
    lines = [ln for ln in error.strip().splitlines() if ln.strip()][:FIRST_ERROR_LINES]
    return [
        Problem(
            doc.file,
            doc.line_of(("agent", field.split(".")[1])),
            field,
            f"the agent could not start on the first case ({first.id!r}): "
            f"{agents_words(error)}\n" + "\n".join(f"    {ln}" for ln in lines),
        )
    ]
