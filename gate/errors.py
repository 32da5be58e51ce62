"""Every error ToolGate raises, in one place.

The tree of the errors a user can meet::

    ToolGateError                  base; never raised itself
    ├── InputError                 bad input from the user: exit code 2
    │   ├── UsageError             wrong command-line words
    │   ├── ConfigError            toolgate.yml
    │   ├── DatasetError           the dataset and the files it references
    │   ├── PinMismatchError       the dataset's sha256 is not the pinned one
    │   ├── RunsFileError          runs.jsonl
    │   ├── ResultsFileError       results.json (own or baseline)
    │   ├── CalibrationError       the judge's calibration file of human labels
    │   ├── InteropError           a file given to ``toolgate import`` or ``export``
    │   ├── McpServerError         a team's MCP server (record, import, drift) cannot
    │                              be reached, listed or called
    │   └── OutputError            the output folder cannot be written (full, read-only,
    │                              a file in its place), or another toolgate writes it
    ├── AgentError                 the agent under test failed one case-sample;
    │   │                          recorded in runs.jsonl, never fatal to the run
    │   ├── AgentFailure           one case-sample failed: its :class:`ErrorKind` and
    │   │                          the ``Run.error`` text the runner records
    │   └── PayloadError           a provider payload not shaped as its API says
    ├── RunAborted                 the run could not finish for a cause outside the agent
    │                              and the input (a scoring worker killed — out of memory,
    │                              a signal — or unable to write): exit code 4, nothing
    │                              decided, the run must be repeated
    ├── GitHubError                the GitHub API failed; reported, never changes the verdict
    │   ├── GitHubApiError         one GitHub operation failed for good (after any retries)
    │   └── TransientGitHubError   one request may succeed when repeated (a 5xx or a dropped
    │                              connection of the artifact download): retried in budget
    └── JudgeError                 the LLM judge failed; reported, never changes the verdict
        └── JudgeCallError         one judge call failed after its retries

The exceptions that carry a result from where it is found to where it is handled, inside
ToolGate; none reaches the top-level handler (one that does is a bug: exit code 3)::

    ValueError
    └── JsonInputError             a JSON text :mod:`gate.jsonio` refuses; the reader
                                   adds the file and the line
    Exception
    ├── FieldError                 one field of the record being read is wrong; the
    │                              reader adds it as a :class:`Problem`
    ├── WorkerBroken               a command agent's worker cannot go on
    ├── StreamTruncated            a streamed reply ended before its end marker; retried
    │                              like a dropped connection
    ├── IncompleteBody             an endpoint hung up before its answer's declared
    │                              length; retried like a dropped connection
    └── ResponseTooLarge           an endpoint's answer is over the size cap
    KeyboardInterrupt
    └── Terminated                 SIGTERM (``docker stop``, a cancelled job), unwound
                                   like Ctrl-C so that workers stop and files close

An ``InputError`` carries one or more :class:`Problem` s, each naming the file, the line
(or CSV row) and the field, so that all problems of one input are reported in one pass.
The single top-level handler in ``gate.cli`` maps them to exit codes (:class:`ExitCode`)
and to ``::error file=…,line=…::`` annotations when running in GitHub Actions.
"""

from __future__ import annotations

import difflib
import enum
from collections.abc import Iterable
from dataclasses import dataclass


class ExitCode(enum.IntEnum):
    """Process exit codes, the same for every command and the Action."""

    PASS = 0
    GATE_FAILED = 1
    BAD_INPUT = 2
    BUG = 3
    RUN_INVALID = 4
    """The verdict is "error": too many case-samples are missing (an infrastructure
    failure that outlasted its retries) or every one failed the same way (the agent cannot
    start). Nothing about the agent was decided; the run must be repeated."""


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


def did_you_mean(word: str, options: Iterable[object]) -> str:
    """`` (did you mean 'x'?)`` for the closest option, or an empty string."""
    close = difflib.get_close_matches(
        word, [o for o in options if isinstance(o, str)], n=1, cutoff=0.6
    )
    return f" (did you mean {close[0]!r}?)" if close else ""


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


class InteropError(InputError):
    """A file given to ``toolgate import`` / ``toolgate export`` is invalid."""


class McpServerError(InputError):
    """An MCP server named in ``agent.servers`` or on the command line cannot be reached,
    listed or called (``toolgate record``, ``import mcp-tools``; the gate's drift check
    reports it as a notice instead)."""

    def __init__(self, message: str, *, hint: str | None = None):
        super().__init__([Problem("toolgate", None, None, message)], hint=hint)


class OutputError(InputError):
    """An output cannot be written (``OUT/results.json: cannot write: No space left on
    device``), or the output folder is locked by another toolgate. Exit code 2."""


class AgentError(ToolGateError):
    """The agent under test failed one case-sample (crash, timeout, bad output)."""


class ErrorKind(enum.StrEnum):
    """The class of a case-sample failure; the prefix of ``Run.error``."""

    TIMEOUT = "timeout"
    CRASH = "crash"
    PROTOCOL = "protocol"
    AGENT_ERROR = "agent_error"
    STEP_BUDGET = "step_budget"
    HTTP = "http"
    PAYLOAD = "payload"
    DEADLINE = "deadline"
    EXCEPTION = "exception"
    NOT_IN_REPLAY = "not_in_replay"
    NOT_RUN = "not_run"
    """Not run on purpose: a ``replay`` agent with ``agent.missing: skip`` whose runs file
    has no run of it. Named in the first line of every report; never a pass or a
    failure, and not counted against ``max_missing``."""
    NOT_ATTEMPTED = "not_attempted"
    """Not tried: the circuit breaker had opened on the endpoint (it kept failing the
    same way)."""
    START = "start"
    """The agent's process could not be started (a worker replaced during the run); one
    that cannot start before the first case-sample is a config error instead."""

    @property
    def error_class(self) -> ErrorClass:
        return ERROR_CLASSES[self]


class ErrorClass(enum.StrEnum):
    """Who failed a case-sample: the agent (the model or the agent's program misbehaved —
    scored, as a failed sample) or the infrastructure around it (the endpoint, the network,
    the global deadline, a missing recording — the sample is *missing*: never scored as a
    failure nor as a pass)."""

    AGENT = "agent"
    INFRASTRUCTURE = "infrastructure"


ERROR_CLASSES: dict[ErrorKind, ErrorClass] = {
    ErrorKind.TIMEOUT: ErrorClass.AGENT,  # the agent's process did not answer in time
    ErrorKind.CRASH: ErrorClass.AGENT,
    ErrorKind.PROTOCOL: ErrorClass.AGENT,
    ErrorKind.AGENT_ERROR: ErrorClass.AGENT,
    ErrorKind.STEP_BUDGET: ErrorClass.AGENT,
    ErrorKind.PAYLOAD: ErrorClass.AGENT,  # a malformed model output is data to score
    ErrorKind.EXCEPTION: ErrorClass.AGENT,
    ErrorKind.HTTP: ErrorClass.INFRASTRUCTURE,  # the endpoint, after its retries
    ErrorKind.DEADLINE: ErrorClass.INFRASTRUCTURE,
    ErrorKind.NOT_IN_REPLAY: ErrorClass.INFRASTRUCTURE,
    ErrorKind.NOT_RUN: ErrorClass.INFRASTRUCTURE,  # no run to score: neither pass nor fail
    ErrorKind.NOT_ATTEMPTED: ErrorClass.INFRASTRUCTURE,
    ErrorKind.START: ErrorClass.INFRASTRUCTURE,  # no agent ran: nothing to score
}
"""The class of every kind (exhaustive: ``tests/test_errors.py`` checks it)."""


def error_kind_of(error: str | None) -> ErrorKind | None:
    """The kind named by a ``Run.error`` text (its first word), or None for a text that
    names none (written by an older release or another tool: counted as the agent's)."""
    if error is None:
        return None
    word = error.split(":", 1)[0].strip()
    try:
        return ErrorKind(word)
    except ValueError:
        return None


ANSWER_KINDS = frozenset({ErrorKind.STEP_BUDGET, ErrorKind.PAYLOAD})
"""Agent errors that are the model's answer however they end (too many tool-calling turns,
a malformed model output): scored like any answer."""


def agent_failed(error: str | None) -> bool:
    """Whether a case-sample ended in the agent's failure rather than an answer — a crash,
    a timeout, a protocol error, an exception, its own ``error`` message: it earns nothing
    (every metric n/a but ``agent_error_rate`` and ``case_passed``) and fails the check
    ``agent_error``. Not the infrastructure's (a *missing* sample) nor an answer
    (:data:`ANSWER_KINDS`)."""
    if error is None:
        return False
    kind = error_kind_of(error)
    if kind is None:
        return True  # an older release's or another tool's text: the agent's
    return kind.error_class is ErrorClass.AGENT and kind not in ANSWER_KINDS


def error_class_of(error: str | None) -> ErrorClass | None:
    """The class of a ``Run.error`` text; None when there is no error."""
    if error is None:
        return None
    kind = error_kind_of(error)
    return kind.error_class if kind is not None else ErrorClass.AGENT


class AgentFailure(AgentError):
    """The agent failed this case-sample; ``str()`` is the ``Run.error`` text."""

    def __init__(self, kind: ErrorKind, message: str, *, detail: str | None = None):
        self.kind = kind
        self.message = message
        self.detail = detail
        text = f"{kind.value}: {message}"
        if detail:
            text += f"\n{detail}"
        super().__init__(text)


class PayloadError(AgentError):
    """A provider payload is not shaped like the provider's API says; names the path."""

    def __init__(self, path: str, message: str):
        self.path = path
        super().__init__(f"{path}: {message}" if path else message)


class RunAborted(ToolGateError):
    """The run could not finish for a cause outside the agent and the input (module
    docstring): exit code 4 (:attr:`ExitCode.RUN_INVALID`), with what happened and what to
    do; never a traceback, never a verdict."""

    def __init__(self, message: str, *, hint: str | None = None):
        super().__init__(message)
        self.hint = hint


class GitHubError(ToolGateError):
    """A GitHub API call failed. Reported as a warning; never changes the verdict."""


class GitHubApiError(GitHubError):
    """One GitHub operation failed for good (after any retries)."""

    def __init__(
        self,
        what: str,
        message: str,
        *,
        status: int | None = None,
        attempts: int = 1,
        rate_limited: bool = False,
    ) -> None:
        self.what = what
        self.status = status
        self.attempts = attempts
        self.rate_limited = rate_limited
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        code = f"HTTP {status}: " if status else ""
        super().__init__(f"{what} failed{tries}: {code}{message}")

    @property
    def forbidden(self) -> bool:
        """A plain 403: the token lacks the permission (e.g. a fork PR's read-only token)."""
        return self.status == 403 and not self.rate_limited


class TransientGitHubError(GitHubError):
    """A request outside PyGithub (the artifact zip from its storage host) failed in a way
    that repeating it may cure: a 5xx, a dropped connection, a timeout. The client retries
    it like PyGithub's own 5xx, within the same time budget."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        self.status = status
        super().__init__(message)


class JudgeError(ToolGateError):
    """The LLM judge failed. Reported; never changes the verdict."""


class JudgeFailureKind(enum.StrEnum):
    """Why a judge call got no answer."""

    TIMEOUT = "timeout"
    HTTP = "http"
    CONNECTION = "connection"
    PROTOCOL = "protocol"


class JudgeCallError(JudgeError):
    """A judge call failed after its retries. Reported per item; never fatal."""

    def __init__(
        self,
        kind: JudgeFailureKind,
        message: str,
        *,
        status: int | None = None,
        attempts: int = 1,
    ):
        self.kind = kind
        self.status = status
        self.attempts = attempts
        super().__init__(message)


# ─── inside ToolGate: found in one place, handled in another ─────────────────


class JsonInputError(ValueError):
    """A JSON text that ToolGate refuses; ``str()`` says why, without location.

    ``line`` is the 1-based line of a syntax error in the text, when the decoder knows it
    (``None`` for problems found after decoding: duplicate keys, depth, numbers)."""

    def __init__(self, message: str, *, line: int | None = None):
        super().__init__(message)
        self.line = line


class FieldError(Exception):
    """A problem at one field of the record being read: ``field`` is relative to the
    record (``""`` for the record itself). The reader of the record catches it and adds a
    :class:`Problem` naming the file, the line and the field."""

    def __init__(self, field: str, message: str):
        self.field = field
        self.message = message
        super().__init__(message)


class WorkerBroken(Exception):
    """A command agent's worker cannot go on; carries the failure to record."""

    def __init__(self, kind: ErrorKind, message: str):
        self.kind = kind
        self.message = message
        super().__init__(message)


class StreamTruncated(Exception):
    """A streamed body that ended before ``data: [DONE]``; retried like a dropped
    connection."""


class IncompleteBody(Exception):
    """An HTTP answer whose connection closed before its declared ``Content-Length``
    (:mod:`gate.replay.http`): never parsed as half a body."""

    def __init__(self, got: int, expected: int) -> None:
        super().__init__(f"{got} of {expected} bytes")
        self.got, self.expected = got, expected


class ResponseTooLarge(Exception):
    """An HTTP answer over :data:`gate.replay.http.MAX_RESPONSE_BYTES`: a flood, not an
    answer."""


class Terminated(KeyboardInterrupt):
    """SIGTERM (``docker stop``, a cancelled CI job, ``timeout``): unwound like Ctrl-C, so
    that agent workers are stopped and files closed instead of left running."""
