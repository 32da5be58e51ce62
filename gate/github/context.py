"""Everything ToolGate reads from the Actions environment, read once into one typed object.

``GitHubContext.from_environ(environ)`` is the only reader of these variables in ToolGate
(tests pass a dict). Each setting has one rule, whoever asks for it — the Action, ``toolgate
check`` publishing its results, ``toolgate comment``. docs/action.md ("Environment
variables") gives the token's and the ``TOOLGATE_*`` variables' rules; besides them:

* ``INPUT_<NAME>``: every input of action.yml (:class:`ActionInputs`), named as the
  runner passes it (``INPUT_FAIL-ON``; ``INPUT_FAIL_ON`` is also read), stripped; unset
  means action.yml's default (``uses: docker://…`` passes no defaults);
* ``GITHUB_EVENT_NAME``, ``GITHUB_EVENT_PATH``: the payload, read once — the PR
  (``pull_request``, ``pull_request_target``), the triggering run (``workflow_run``), the
  queue's base and group commits (``merge_group``); unreadable is a warning (no PR);
* ``GITHUB_RUN_ID``, ``GITHUB_RUN_ATTEMPT``: whole numbers, anything else unknown; the
  other ``GITHUB_*`` and ``RUNNER_TEMP`` are taken as given.

:meth:`GitHubContext.from_environ` never raises: what is wrong is collected in
``problems`` (located :class:`~gate.errors.Problem` s, all of them at once) and
:meth:`GitHubContext.require_valid` raises them as one :class:`~gate.errors.InputError`
(exit code 2), so the caller still knows where the outputs file is when it reports them.
"""

from __future__ import annotations

import enum
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gate.errors import InputError, Problem, UsageError
from gate.model import Shard

PR_EVENTS = frozenset({"pull_request", "pull_request_target"})
DEFAULT_API_URL = "https://api.github.com"
DEFAULT_SERVER_URL = "https://github.com"
ACTIONS_BOT_LOGIN = "github-actions[bot]"
DEFAULT_BUDGET_S = 60.0
DEFAULT_ARTIFACT_MAX_MB = 256
"""A results.json of 100,000 case-samples is about 600 MB; a PR gate's is far smaller
(71 cases × 3 samples: 1.4 MB)."""
MAX_ARTIFACT_MAX_MB = 4096
INPUTS_FILE = "action inputs"
"""How a problem with an input names where it is (the ``with:`` of the step)."""
ENVIRONMENT = "environment"
"""How a problem with a ``TOOLGATE_*`` variable names where it is (the step's ``env:``)."""


class Mode(enum.StrEnum):
    """The ``mode`` input: what one invocation of the Action does."""

    CHECK = "check"
    RUN = "run"
    MERGE = "merge"
    COMMENT = "comment"


class FailOn(enum.StrEnum):
    """The ``fail-on`` input: ``gate`` fails the step when the gate fails; ``never`` keeps
    it green (report-only rollout)."""

    GATE = "gate"
    NEVER = "never"


class BaselineKind(enum.StrEnum):
    """The ``baseline`` input: ``auto`` (searched), ``none``, or a file."""

    AUTO = "auto"
    NONE = "none"
    FILE = "file"


@dataclass(frozen=True, slots=True)
class BaselineInput:
    kind: BaselineKind = BaselineKind.AUTO
    path: str | None = None
    """For :attr:`BaselineKind.FILE`: the results.json, relative to the working directory."""


class TokenSource(enum.StrEnum):
    """Where the token came from (the rule: docs/action.md, "Environment variables")."""

    INPUT = "the github-token input"
    TOOLGATE_GITHUB_TOKEN = "TOOLGATE_GITHUB_TOKEN"
    GITHUB_TOKEN = "GITHUB_TOKEN"


INPUT_DEFAULTS: dict[str, str] = {
    "mode": "check",
    "config": "toolgate.yml",
    "github-token": "",  # action.yml: ${{ github.token }}; empty falls back to the environment
    "comment": "true",
    "baseline": "auto",
    "samples": "",
    "shard": "",
    "merge": "",
    "fail-on": "gate",
    "require-baseline": "false",
    "out": "",
    "working-directory": ".",
    "install": "",
    "setup": "",
}
"""Every input of action.yml with the default applied when its variable is missing. A test
checks this table against action.yml."""


@dataclass(frozen=True, slots=True)
class ActionInputs:
    """The ``with:`` inputs of the ToolGate step, validated (action.yml documents each)."""

    mode: Mode = Mode.CHECK
    config: str = "toolgate.yml"
    comment: bool = True
    baseline: BaselineInput = BaselineInput()
    samples: int | None = None
    shard: Shard | None = None
    """``(i, n)``, 1 <= i <= n."""
    merge: str | None = None
    fail_on: FailOn = FailOn.GATE
    require_baseline: bool = False
    """A pull request compared with nothing fails (a base run never does)."""
    out: str | None = None
    working_directory: str = "."
    install: str | None = None
    """A requirements file installed into the agent's own environment (a virtualenv)."""
    setup: str | None = None
    """A shell command run in the container before the gate starts."""


@dataclass(frozen=True, slots=True)
class PullRequestEvent:
    """A ``pull_request`` or ``pull_request_target`` payload (GitHub wrote it: trusted)."""

    number: int
    base_ref: str | None = None
    base_sha: str | None = None
    head_sha: str | None = None


@dataclass(frozen=True, slots=True)
class WorkflowRunEvent:
    """A ``workflow_run`` payload: the run that triggered this one."""

    head_sha: str
    run_number: int | None = None
    html_url: str | None = None
    conclusion: str | None = None


@dataclass(frozen=True, slots=True)
class MergeGroupEvent:
    """A ``merge_group`` payload (a merge queue's ``checks_requested``): the group's
    commit and the commit the queue built it on."""

    base_ref: str
    """The target branch, e.g. ``main`` (the payload's ``refs/heads/main``)."""
    base_sha: str
    head_sha: str


Event = PullRequestEvent | WorkflowRunEvent | MergeGroupEvent | None


@dataclass(frozen=True, slots=True)
class GitHubContext:
    """The Actions environment (the rules: the module docstring and docs/action.md)."""

    inputs: ActionInputs = ActionInputs()
    in_actions: bool = False
    token: str | None = field(default=None, repr=False)
    token_source: TokenSource | None = None
    repository: str | None = None
    api_url: str = DEFAULT_API_URL
    server_url: str = DEFAULT_SERVER_URL
    event_name: str | None = None
    event: Event = None
    run_id: int | None = None
    run_attempt: int | None = None
    sha: str | None = None
    ref: str | None = None
    """``GITHUB_REF`` (``refs/heads/main`` on a push to main)."""
    workflow_ref: str | None = None
    workspace: Path | None = None
    runner_temp: Path | None = None
    output_path: Path | None = None
    step_summary_path: Path | None = None
    comment_login: str | None = None
    budget_s: float = DEFAULT_BUDGET_S
    artifact_max_bytes: int = DEFAULT_ARTIFACT_MAX_MB * 1024 * 1024
    problems: tuple[Problem, ...] = ()
    """What is wrong with the inputs and the ``TOOLGATE_*`` variables (see
    :meth:`require_valid`)."""
    warnings: tuple[str, ...] = ()
    """What could not be read but does not stop anything (an unreadable event payload)."""

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> GitHubContext:
        """Read every variable once; never raises (see :meth:`require_valid`)."""
        problems: list[Problem] = []
        warnings: list[str] = []
        inputs = _read_inputs(environ, problems)
        token, source = _token(environ)
        event_name = environ.get("GITHUB_EVENT_NAME") or None
        event = _read_event(event_name, environ.get("GITHUB_EVENT_PATH"), warnings)
        return cls(
            inputs=inputs,
            in_actions=environ.get("GITHUB_ACTIONS") == "true",
            token=token,
            token_source=source,
            repository=environ.get("GITHUB_REPOSITORY") or None,
            api_url=(environ.get("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/"),
            server_url=(environ.get("GITHUB_SERVER_URL") or DEFAULT_SERVER_URL).rstrip("/"),
            event_name=event_name,
            event=event,
            run_id=_whole(environ.get("GITHUB_RUN_ID")),
            run_attempt=_whole(environ.get("GITHUB_RUN_ATTEMPT")),
            sha=environ.get("GITHUB_SHA") or None,
            ref=environ.get("GITHUB_REF") or None,
            workflow_ref=environ.get("GITHUB_WORKFLOW_REF") or None,
            workspace=_path(environ.get("GITHUB_WORKSPACE")),
            runner_temp=_path(environ.get("RUNNER_TEMP")),
            output_path=_path(environ.get("GITHUB_OUTPUT")),
            step_summary_path=_path(environ.get("GITHUB_STEP_SUMMARY")),
            comment_login=environ.get("TOOLGATE_COMMENT_LOGIN") or None,
            budget_s=_budget(environ.get("TOOLGATE_GITHUB_BUDGET_S"), problems),
            artifact_max_bytes=_artifact_max(environ.get("TOOLGATE_ARTIFACT_MAX_MB"), problems),
            problems=tuple(problems),
            warnings=tuple(warnings),
        )

    def require_valid(self) -> None:
        """Raise every problem found at once (:class:`~gate.errors.InputError`, exit 2)."""
        if not self.problems:
            return
        where = {p.file for p in self.problems}
        hints = []
        if INPUTS_FILE in where:
            hints.append("Fix the `with:` inputs of the ToolGate step.")
        if ENVIRONMENT in where:
            hints.append("Fix the `env:` of the ToolGate step.")
        raise InputError(self.problems, hint=" ".join(hints) or None)

    # ── views of the event ──────────────────────────────────────────────────

    @property
    def pull_request(self) -> PullRequestEvent | None:
        return self.event if isinstance(self.event, PullRequestEvent) else None

    @property
    def merge_group(self) -> MergeGroupEvent | None:
        return self.event if isinstance(self.event, MergeGroupEvent) else None

    @property
    def workflow_run(self) -> WorkflowRunEvent | None:
        return self.event if isinstance(self.event, WorkflowRunEvent) else None

    @property
    def base_run_branch(self) -> str | None:
        """The branch this run records, when it is a run *of* a branch (a push, a
        schedule, a manual dispatch) rather than of a pull request: such a run is a base
        run, and ``baseline: auto`` extends the branch's own latest results."""
        if self.event_name not in {"push", "schedule", "workflow_dispatch"}:
            return None
        if self.ref is None or not self.ref.startswith("refs/heads/"):
            return None
        return self.ref.removeprefix("refs/heads/") or None

    @property
    def pr_number(self) -> int | None:
        pr = self.pull_request
        return pr.number if pr is not None else None

    # ── derived ─────────────────────────────────────────────────────────────

    @property
    def run_url(self) -> str | None:
        """The Actions run page (where the step summary and artifacts are)."""
        if not self.repository or self.run_id is None:
            return None
        return f"{self.server_url}/{self.repository}/actions/runs/{self.run_id}"

    @property
    def workflow_file(self) -> str | None:
        """The running workflow's file name, from ``GITHUB_WORKFLOW_REF``
        (``owner/repo/.github/workflows/<file>@<ref>``)."""
        if not self.workflow_ref:
            return None
        m = re.search(r"\.github/workflows/([^@/]+)@", self.workflow_ref)
        return m.group(1) if m else None


# ─── the rules ────────────────────────────────────────────────────────────────


def input_value(environ: Mapping[str, str], name: str) -> str:
    """The input ``name`` as the runner passes it (``INPUT_FAIL-ON``), also accepting the
    underscore spelling (``INPUT_FAIL_ON``); stripped; action.yml's default when unset."""
    key = "INPUT_" + name.replace(" ", "_").upper()
    for k in (key, key.replace("-", "_")):
        if k in environ:
            return environ[k].strip()
    return INPUT_DEFAULTS[name]


def _read_inputs(environ: Mapping[str, str], problems: list[Problem]) -> ActionInputs:
    def bad(name: str, message: str) -> None:
        problems.append(Problem(INPUTS_FILE, None, name, message))

    def get(name: str) -> str:
        return input_value(environ, name)

    mode_raw = get("mode").lower()
    try:
        mode = Mode(mode_raw)
    except ValueError:
        bad("mode", f"must be one of {', '.join(m.value for m in Mode)}, not {mode_raw!r}")
        mode = Mode.CHECK
    fail_raw = get("fail-on").lower()
    try:
        fail_on = FailOn(fail_raw)
    except ValueError:
        bad("fail-on", f"must be `gate` or `never`, not {fail_raw!r}")
        fail_on = FailOn.GATE
    comment = _boolean(get("comment"), "comment", bad)
    require_baseline = _boolean(get("require-baseline"), "require-baseline", bad)
    samples: int | None = None
    if s := get("samples"):
        if re.fullmatch(r"[0-9]{1,3}", s) and 1 <= int(s) <= 100:
            samples = int(s)
        else:
            bad("samples", f"must be a whole number from 1 to 100, not {s!r}")
    shard: Shard | None = None
    if text := get("shard"):
        try:
            shard = Shard.parse(text)
        except UsageError:
            bad("shard", f"must be `i/n` with 1 <= i <= n (e.g. `2/4`), not {text!r}")
    merge = get("merge") or None
    if mode is Mode.MERGE and merge is None:
        bad("merge", "`mode: merge` needs `merge:`, the folder holding the shard results")
    if mode is not Mode.MERGE and merge is not None:
        bad("merge", f"is only read by `mode: merge` (mode is {mode.value!r})")
    if mode is Mode.MERGE and get("shard"):
        bad("shard", "`mode: merge` joins every shard; drop `shard:`")
    raw_baseline = get("baseline") or "auto"
    if raw_baseline.lower() == "auto":
        baseline = BaselineInput(BaselineKind.AUTO)
    elif raw_baseline.lower() == "none":
        baseline = BaselineInput(BaselineKind.NONE)
    else:
        baseline = BaselineInput(BaselineKind.FILE, raw_baseline)
    for name in ("config", "working-directory"):
        if not get(name):
            bad(name, "must not be empty")
    runs_agent = mode in (Mode.CHECK, Mode.RUN)
    for name in ("install", "setup"):
        if get(name) and not runs_agent:
            bad(
                name,
                f"is only used when the agent runs (mode check or run; mode is {mode.value!r})",
            )
    return ActionInputs(
        mode=mode,
        config=get("config"),
        comment=comment,
        baseline=baseline,
        samples=samples,
        shard=shard,
        merge=merge,
        fail_on=fail_on,
        require_baseline=require_baseline,
        out=get("out") or None,
        working_directory=get("working-directory"),
        install=get("install") or None,
        setup=get("setup") or None,
    )


def _boolean(raw: str, name: str, bad: Any) -> bool:
    # The YAML 1.2 core-schema booleans, as actions/toolkit's getBooleanInput reads them.
    if raw in ("true", "True", "TRUE"):
        return True
    if raw in ("false", "False", "FALSE"):
        return False
    bad(name, f"must be `true` or `false`, not {raw!r}")
    return True


def _token(environ: Mapping[str, str]) -> tuple[str | None, TokenSource | None]:
    if value := input_value(environ, "github-token"):
        return value, TokenSource.INPUT
    for source in (TokenSource.TOOLGATE_GITHUB_TOKEN, TokenSource.GITHUB_TOKEN):
        if value := environ.get(source.value, "").strip():
            return value, source
    return None, None


def _budget(raw: str | None, problems: list[Problem]) -> float:
    if raw is None or not raw.strip():
        return DEFAULT_BUDGET_S
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    # `inf` (or 1e999) would lift the bound on time spent on GitHub altogether.
    if not (math.isfinite(value) and value > 0):
        problems.append(
            Problem(
                ENVIRONMENT,
                None,
                "TOOLGATE_GITHUB_BUDGET_S",
                f"must be a finite number of seconds above 0 (default {DEFAULT_BUDGET_S:g}), "
                f"not {raw!r}",
            )
        )
        return DEFAULT_BUDGET_S
    return value


def _artifact_max(raw: str | None, problems: list[Problem]) -> int:
    if raw is None or not raw.strip():
        return DEFAULT_ARTIFACT_MAX_MB * 1024 * 1024
    text = raw.strip()
    if re.fullmatch(r"[0-9]{1,4}", text) and 1 <= int(text) <= MAX_ARTIFACT_MAX_MB:
        return int(text) * 1024 * 1024
    problems.append(
        Problem(
            ENVIRONMENT,
            None,
            "TOOLGATE_ARTIFACT_MAX_MB",
            f"must be a whole number of MiB from 1 to {MAX_ARTIFACT_MAX_MB} "
            f"(default {DEFAULT_ARTIFACT_MAX_MB}), not {raw!r}",
        )
    )
    return DEFAULT_ARTIFACT_MAX_MB * 1024 * 1024


def _read_event(event_name: str | None, event_path: str | None, warnings: list[str]) -> Event:
    if not event_path:
        return None
    try:
        loaded = json.loads(Path(event_path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        warnings.append(f"cannot read the event payload {event_path}: {exc}")
        return None
    payload: Mapping[str, Any] = loaded if isinstance(loaded, Mapping) else {}
    if event_name in PR_EVENTS:
        pr = _mapping(payload.get("pull_request"))
        number = _int(pr.get("number", payload.get("number")))
        if number is None or number <= 0:
            warnings.append(f"the {event_name} event payload has no pull request number")
            return None
        base, head = _mapping(pr.get("base")), _mapping(pr.get("head"))
        return PullRequestEvent(
            number=number,
            base_ref=_str(base.get("ref")),
            base_sha=_str(base.get("sha")),
            head_sha=_str(head.get("sha")),
        )
    if event_name == "merge_group":
        group = _mapping(payload.get("merge_group"))
        ref, base_sha, head_sha = (_str(group.get(k)) for k in ("base_ref", "base_sha", "head_sha"))
        if not (ref and base_sha and head_sha):
            warnings.append(
                "the merge_group event payload lacks base_ref, base_sha or head_sha: "
                "no baseline can be looked for"
            )
            return None
        return MergeGroupEvent(
            base_ref=ref.removeprefix("refs/heads/"), base_sha=base_sha, head_sha=head_sha
        )
    if event_name == "workflow_run":
        run = payload.get("workflow_run")
        if isinstance(run, Mapping) and (head_sha := _str(run.get("head_sha"))):
            return WorkflowRunEvent(
                head_sha=head_sha,
                run_number=_int(run.get("run_number")),
                html_url=_str(run.get("html_url")),
                conclusion=_str(run.get("conclusion")),
            )
    return None


def _mapping(v: Any) -> Mapping[str, Any]:
    return v if isinstance(v, Mapping) else {}


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) and v else None


def _whole(value: str | None) -> int | None:
    return int(value) if value and value.isdigit() else None


def _path(value: str | None) -> Path | None:
    return Path(value) if value else None
