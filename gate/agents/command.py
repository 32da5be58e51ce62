"""``kind: command``: any program, any language, speaking JSON lines on stdin/stdout, run as a
pool of long-lived workers (:mod:`gate.replay.command`)."""

from __future__ import annotations

import difflib
import enum
import shlex
import shutil
import sys
from pathlib import Path
from typing import Annotated, ClassVar, Literal

from pydantic import Field

from gate.agents.interface import BARE_PYTHON, Finding, Interpreted, Show

INTERPRETERS = frozenset({"python", "python3", "node", "bash", "sh", "ruby", "deno", "bun", "perl"})
"""Programs whose first argument names the script they run (checked to exist)."""


class ReplyIds(enum.StrEnum):
    """Whether a ``command`` agent's replies must name the case-sample they answer."""

    REQUIRED = "required"
    """Every reply carries the ``case_id`` and ``sample`` of its start message; a reply
    without them is a protocol error (the default)."""
    OPTIONAL = "optional"
    """Replies may leave them out; a reply that names them must still name the running
    case-sample. Output a worker prints between case-samples still gets it replaced."""


class CommandAgent(Interpreted):
    kind: Literal["command"]
    command: list[str] | str
    workers: Annotated[int, Field(ge=1, le=256)] = 4
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    reply_ids: ReplyIds = ReplyIds.REQUIRED
    """Whether replies must echo the start message's ``case_id`` and ``sample``."""

    adapter: ClassVar[str] = "gate.replay.command:CommandPoolAgent"
    validate_starts: ClassVar[str | None] = "command"

    def argv(self) -> list[str]:
        """The command line as configured (a string is split like a shell would)."""
        return list(self.command) if isinstance(self.command, list) else shlex.split(self.command)

    def preflight(self, root: Path, show: Show) -> list[Finding]:
        """The interpreter ``agent.python`` names, the program (on ``PATH``, or a path
        from ``agent.cwd``) and the script an interpreter would run."""
        found = super().preflight(root, show)
        if found:
            return found
        argv = self.argv()
        cwd = (root / self.cwd).resolve() if self.cwd else root
        if not argv:
            return [("command", "is empty")]
        program = argv[0]
        if program not in BARE_PYTHON or self.interpreter(root) is None:
            there = (cwd / program).exists() if "/" in program else shutil.which(program)
            if not there:
                where = (
                    f" (looked in {_folder(cwd, show)}){nearest_file(cwd, program)}"
                    if "/" in program
                    else " (not on PATH)"
                )
                return [("command", f"the program {program!r} is not there{where}")]
        if Path(program).name.rstrip("0123456789.") in INTERPRETERS:
            script = next((a for a in argv[1:] if not a.startswith("-")), None)
            if argv[1:2] == ["-m"] or argv[1:2] == ["-c"]:
                script = None
            if script is not None and not (cwd / script).exists():
                return [
                    (
                        "command",
                        f"{program} would run {script!r}, which is not in {_folder(cwd, show)}"
                        f"{nearest_file(cwd, script)}",
                    )
                ]
        return []

    def notes(self, root: Path) -> list[str]:
        out = [self._interpreter_note(root)] if self.argv()[:1] else []
        if self.reply_ids is not ReplyIds.REQUIRED:
            out.append(
                "agent.reply_ids is optional: replies without case_id and sample are "
                "accepted, so a late reply of an earlier case that names neither could be "
                "taken as the next case's answer; echo them from the start message and "
                "remove the setting"
            )
        return [n for n in out if n]

    def _interpreter_note(self, root: Path) -> str:
        """A command starting with a bare ``python`` runs ToolGate's own interpreter unless
        ``agent.python`` says otherwise: say which, since an agent that needs packages from
        another environment then fails to import."""
        program = self.argv()[0]
        if program not in BARE_PYTHON:
            return ""
        interpreter = self.interpreter(root)
        if interpreter is None:
            found = shutil.which(program)
            return f"agent.command starts with {program!r}: with agent.python: path it runs {found}"
        if interpreter != sys.executable:
            return f"agent.command starts with {program!r}: agent.python runs it with {interpreter}"
        return (
            f"agent.command starts with {program!r}: ToolGate runs it with its own interpreter "
            f"({sys.executable}; agent.python: toolgate); to use your agent's environment, set "
            "agent.python: path (the python on PATH) or name its interpreter instead (for "
            "example .venv/bin/python)"
        )


def nearest_file(folder: Path, wanted: str) -> str:
    """`` (did you mean 'x'?)`` for the file under ``folder`` (two levels deep) whose
    relative path is closest to ``wanted``, or an empty string."""
    suffix = Path(wanted).suffix
    found: list[str] = []
    for pattern in ("*", "*/*"):
        for p in folder.glob(pattern):
            if len(found) >= 2000:
                break
            if p.is_file() and (not suffix or p.suffix == suffix):
                found.append(p.relative_to(folder).as_posix())
    close = difflib.get_close_matches(wanted, found, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _folder(path: Path, show: Show) -> str:
    """A folder as messages name it: relative to the working directory, and absolute when
    that is the working directory itself (``.`` names nothing)."""
    shown = show(path)
    return f"the folder {path.resolve()}" if shown == "." else f"the folder {shown}"
