"""Every error ToolGate raises, in one place.

The tree::

    ToolGateError                  base; never raised itself
    ├── InputError                 bad input from the user: exit code 2
    │   ├── UsageError             wrong command-line words
    │   ├── ConfigError            toolgate.yml
    │   ├── DatasetError           the dataset and the files it references
    │   ├── PinMismatchError       the dataset's sha256 is not the pinned one
    │   ├── RunsFileError          runs.jsonl
    │   ├── ResultsFileError       results.json (own or baseline)
    │   ├── CalibrationError       the judge's calibration file of human labels
    │   └── McpServerError         a team's MCP server (record, import, drift) cannot
    │                              be reached, listed or called
    ├── AgentError                 the agent under test failed one case-sample;
    │                              recorded in runs.jsonl, never fatal to the run
    ├── GitHubError                the GitHub API failed; reported, never changes the verdict
    └── JudgeError                 the LLM judge failed; reported, never changes the verdict

An ``InputError`` carries one or more :class:`Problem` s, each naming the file, the line
(or CSV row) and the field, so that all problems of one input are reported in one pass.
The single top-level handler in ``gate.cli`` maps them to exit codes (:class:`ExitCode`)
and to ``::error file=…,line=…::`` annotations when running in GitHub Actions.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass


class ExitCode(enum.IntEnum):
    """Process exit codes, the same for every command and the Action."""

    PASS = 0
    GATE_FAILED = 1
    BAD_INPUT = 2
    BUG = 3


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with one input: where it is and what to do about it."""

    file: str
    line: int | None
    field: str | None
    message: str

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return (
            f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"
        )


class ToolGateError(Exception):
    """Base of every error ToolGate raises on purpose."""


class InputError(ToolGateError):
    """Bad input: a file, a setting or a command line. Exit code 2.

    Holds every problem found in one pass; ``str()`` lists them one per line.
    """

    def __init__(self, problems: Problem | Iterable[Problem] | str, *, hint: str | None = None):
        if isinstance(problems, str):
            problems = [Problem("<input>", None, None, problems)]
        elif isinstance(problems, Problem):
            problems = [problems]
        self.problems: tuple[Problem, ...] = tuple(problems)
        self.hint = hint
        super().__init__(self.render())

    def render(self) -> str:
        lines = [str(p) for p in self.problems]
        if len(self.problems) > 1:
            lines.append(f"({len(self.problems)} problems)")
        if self.hint:
            lines.append(self.hint)
        return "\n".join(lines)


class UsageError(InputError):
    """The command line is wrong (unknown flag, missing argument, unavailable command)."""

    def __init__(self, message: str, *, hint: str | None = None):
        super().__init__([Problem("toolgate", None, None, message)], hint=hint)


class ConfigError(InputError):
    """toolgate.yml is invalid."""


class DatasetError(InputError):
    """The dataset (JSONL or CSV) or a file it references is invalid."""


class PinMismatchError(InputError):
    """The dataset on disk is not the one the config pins."""


class RunsFileError(InputError):
    """runs.jsonl is malformed or does not fit the dataset."""


class ResultsFileError(InputError):
    """A results.json (ours or a baseline) is malformed or of another schema version."""


class CalibrationError(InputError):
    """The judge's calibration file (human labels, JSONL) is malformed."""


class McpServerError(InputError):
    """An MCP server named in ``agent.servers`` or on the command line cannot be reached,
    listed or called (``toolgate record``, ``import mcp-tools``; the gate's drift check
    reports it as a notice instead)."""

    def __init__(self, message: str, *, hint: str | None = None):
        super().__init__([Problem("toolgate", None, None, message)], hint=hint)


class AgentError(ToolGateError):
    """The agent under test failed one case-sample (crash, timeout, bad output)."""


class GitHubError(ToolGateError):
    """A GitHub API call failed. Reported as a warning; never changes the verdict."""


class JudgeError(ToolGateError):
    """The LLM judge failed. Reported; never changes the verdict."""
