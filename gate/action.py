"""The GitHub Action's entrypoint: ``python -m gate.action`` (action.yml, Dockerfile).

The runner hands a Docker action its inputs as ``INPUT_<NAME>`` variables — the input's
name upper-cased, hyphens kept (``INPUT_GITHUB-TOKEN``, ``INPUT_FAIL-ON``) — together with
the ``GITHUB_*`` variables of the run. :meth:`ActionSettings.from_environ` reads all of
them once into one typed object (the token hidden from ``repr``); everything after that
takes the settings and its collaborators (:class:`Collaborators`: the CLI entry, the
GitHub access, the clock) as arguments, so every path is tested without the network.

What a run does, in order:

1. settings; bad inputs are an input error (exit 2) naming the input;
2. move to ``GITHUB_WORKSPACE`` + ``working-directory`` (never outside the workspace) and
   mark the workspace a git ``safe.directory`` for this process and its children (the
   image also trusts every directory in its system git config);
3. drop the token from the environment the agent under test inherits (the agent is the
   PR's code; the token stays in this process's memory only);
4. by ``mode``:

   * ``check`` — find the baseline (``baseline: auto`` → :mod:`gate.github.artifacts`),
     then ``toolgate check``;
   * ``run`` — one shard: ``toolgate run`` then ``toolgate score`` (no gate, no comment);
   * ``merge`` — ``toolgate merge`` over the shard folders under ``merge``, baseline as
     for ``check``;
   * ``comment`` — post a comment body left by an earlier run (the fork-PR
     ``workflow_run`` pattern, :func:`comment_mode`);

   the CLI runs in this process (``gate.cli.main``) as the computing part only: the
   action, not the CLI, writes the step's outputs and summary and posts the comment, so
   nothing is written twice;
5. publish: outputs (``verdict``, ``passed``, ``regressions``,
   ``must-not-call-violations``, ``results-path``, ``report-path``), the step summary
   (the full report, then the baseline's provenance), the sticky PR comment (a token
   that may not comment — fork PRs — falls back to the summary with a warning; a GitHub
   failure never changes the verdict or the exit code);
6. exit with the gate's code: 0 pass, 1 the gate failed (0 with a warning under
   ``fail-on: never``), 2 bad input, 3 a bug.
"""

from __future__ import annotations

import enum
import json
import os
import re
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from gate.errors import ExitCode, GitHubError, InputError, Problem, ToolGateError
from gate.github.workflow import annotation

# ─── inputs ───────────────────────────────────────────────────────────────────

INPUT_DEFAULTS: dict[str, str] = {
    "mode": "check",
    "config": "toolgate.yml",
    "github-token": "",  # action.yml: ${{ github.token }}; empty here falls back to GITHUB_TOKEN
    "comment": "true",
    "baseline": "auto",
    "samples": "",
    "shard": "",
    "merge": "",
    "fail-on": "gate",
    "out": "",
    "working-directory": ".",
}
"""Every input of action.yml with the default the entrypoint applies when the variable is
missing (``uses: docker://…`` passes no defaults). A test checks this table against
action.yml."""

OUTPUTS: tuple[str, ...] = (
    "verdict",
    "passed",
    "regressions",
    "must-not-call-violations",
    "results-path",
    "report-path",
)

TOKEN_VARIABLES = ("INPUT_GITHUB-TOKEN", "INPUT_GITHUB_TOKEN")
"""Where the token arrives; removed from the environment the agent under test inherits."""

COMMENT_FILE = "comment.md"
REPORT_FILE = "report.md"
RESULTS_FILE = "results.json"
MAX_COMMENT_BYTES = 256 * 1024
"""Largest comment body taken from an earlier run's artifact (``mode: comment``)."""
GITHUB_COMMENT_LIMIT = 65_536
STEP_SUMMARY_LIMIT = 1024 * 1024
"""The runner refuses a step summary over 1 MiB."""


class Mode(enum.StrEnum):
    CHECK = "check"
    RUN = "run"
    MERGE = "merge"
    COMMENT = "comment"


class FailOn(enum.StrEnum):
    GATE = "gate"
    NEVER = "never"


class Verdict(enum.StrEnum):
    """The ``verdict`` output."""

    PASS = "pass"
    FAIL = "fail"
    NOT_GATED = "not-gated"
    ERROR = "error"


def input_value(environ: Mapping[str, str], name: str) -> str:
    """The input ``name`` as the runner passes it (``INPUT_FAIL-ON``), also accepting the
    underscore spelling some runners use (``INPUT_FAIL_ON``); stripped; default if unset."""
    key = "INPUT_" + name.replace(" ", "_").upper()
    for k in (key, key.replace("-", "_")):
        if k in environ:
            return environ[k].strip()
    return INPUT_DEFAULTS[name]


@dataclass(frozen=True, slots=True)
class ActionSettings:
    """Everything the action reads from its environment, validated, in one place."""

    mode: Mode
    config: str
    github_token: str | None = field(repr=False)
    comment: bool
    baseline: str
    """``auto``, ``none``, or a path relative to the working directory."""
    samples: int | None
    shard: str | None
    """``i/n`` as given (validated: 1 ≤ i ≤ n)."""
    merge: str | None
    fail_on: FailOn
    out: str | None
    working_directory: str
    # the run (GITHUB_* variables)
    workspace: Path
    event_name: str | None
    event_path: Path | None
    repository: str | None
    api_url: str
    server_url: str
    run_id: int | None
    workflow_ref: str | None
    sha: str | None
    output_file: Path | None
    summary_file: Path | None
    in_actions: bool

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> ActionSettings:
        """Read and check every input; all problems are reported together."""
        problems: list[Problem] = []

        def bad(name: str, message: str) -> None:
            problems.append(Problem("action inputs", None, name, message))

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
        samples: int | None = None
        if s := get("samples"):
            if re.fullmatch(r"[0-9]{1,3}", s) and 1 <= int(s) <= 100:
                samples = int(s)
            else:
                bad("samples", f"must be a whole number from 1 to 100, not {s!r}")
        shard = get("shard") or None
        if shard is not None and not _valid_shard(shard):
            bad("shard", f"must be `i/n` with 1 <= i <= n (e.g. `2/4`), not {shard!r}")
        merge = get("merge") or None
        if mode is Mode.MERGE and merge is None:
            bad("merge", "`mode: merge` needs `merge:`, the folder holding the shard results")
        if mode is not Mode.MERGE and merge is not None:
            bad("merge", f"is only read by `mode: merge` (mode is {mode.value!r})")
        if mode is Mode.MERGE and shard is not None:
            bad("shard", "`mode: merge` joins every shard; drop `shard:`")
        baseline = get("baseline") or "auto"
        for name in ("config", "working-directory"):
            if not get(name):
                bad(name, "must not be empty")

        workspace = Path(environ.get("GITHUB_WORKSPACE") or os.getcwd())
        token = get("github-token") or environ.get("GITHUB_TOKEN") or None
        run_id_raw = environ.get("GITHUB_RUN_ID", "")
        if problems:
            raise InputError(problems, hint="Fix the `with:` inputs of the ToolGate step.")
        return cls(
            mode=mode,
            config=get("config"),
            github_token=token,
            comment=comment,
            baseline=baseline,
            samples=samples,
            shard=shard,
            merge=merge,
            fail_on=fail_on,
            out=get("out") or None,
            working_directory=get("working-directory"),
            workspace=workspace,
            event_name=environ.get("GITHUB_EVENT_NAME") or None,
            event_path=_path_or_none(environ.get("GITHUB_EVENT_PATH")),
            repository=environ.get("GITHUB_REPOSITORY") or None,
            api_url=(environ.get("GITHUB_API_URL") or "https://api.github.com").rstrip("/"),
            server_url=(environ.get("GITHUB_SERVER_URL") or "https://github.com").rstrip("/"),
            run_id=int(run_id_raw) if run_id_raw.isdigit() else None,
            workflow_ref=environ.get("GITHUB_WORKFLOW_REF") or None,
            sha=environ.get("GITHUB_SHA") or None,
            output_file=_path_or_none(environ.get("GITHUB_OUTPUT")),
            summary_file=_path_or_none(environ.get("GITHUB_STEP_SUMMARY")),
            in_actions=environ.get("GITHUB_ACTIONS") == "true",
        )

    @property
    def workdir(self) -> Path:
        """``GITHUB_WORKSPACE`` + ``working-directory``; refused outside the workspace."""
        root = self.workspace.resolve()
        wd = (root / self.working_directory).resolve()
        if wd != root and root not in wd.parents:
            raise InputError(
                Problem(
                    "action inputs",
                    None,
                    "working-directory",
                    f"{self.working_directory!r} leaves the workspace ({root})",
                )
            )
        if not wd.is_dir():
            raise InputError(
                Problem(
                    "action inputs",
                    None,
                    "working-directory",
                    f"{self.working_directory!r} is not a folder of the workspace",
                )
            )
        return wd

    @property
    def workflow_file(self) -> str | None:
        """The running workflow's file name, from ``GITHUB_WORKFLOW_REF``
        (``owner/repo/.github/workflows/<file>@<ref>``)."""
        if not self.workflow_ref:
            return None
        m = re.search(r"\.github/workflows/([^@/]+)@", self.workflow_ref)
        return m.group(1) if m else None

    @property
    def run_url(self) -> str | None:
        if self.repository and self.run_id is not None:
            return f"{self.server_url}/{self.repository}/actions/runs/{self.run_id}"
        return None


def _boolean(raw: str, name: str, bad: Callable[[str, str], None]) -> bool:
    # The YAML 1.2 core-schema booleans, as actions/toolkit's getBooleanInput reads them.
    if raw in ("true", "True", "TRUE"):
        return True
    if raw in ("false", "False", "FALSE"):
        return False
    bad(name, f"must be `true` or `false`, not {raw!r}")
    return True


def _valid_shard(text: str) -> bool:
    m = re.fullmatch(r"([0-9]{1,4})/([0-9]{1,4})", text)
    return bool(m) and 1 <= int(m.group(1)) <= int(m.group(2))  # type: ignore[union-attr]


def _path_or_none(value: str | None) -> Path | None:
    return Path(value) if value else None


# ─── the event ────────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class EventInfo:
    """What the action needs from ``GITHUB_EVENT_PATH`` (written by GitHub: trusted)."""

    pr_number: int | None = None
    base_ref: str | None = None
    base_sha: str | None = None
    head_sha: str | None = None
    triggering_run_number: int | None = None
    """For ``workflow_run`` events: the run whose artifact is commented."""
    triggering_run_url: str | None = None
    triggering_event: str | None = None


def read_event(settings: ActionSettings) -> EventInfo:
    """The PR (``pull_request``/``pull_request_target``) or the triggering run
    (``workflow_run``) from the event payload; empty for other events."""
    if settings.event_path is None or not settings.event_path.is_file():
        return EventInfo()
    try:
        payload = json.loads(settings.event_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return EventInfo()
    if not isinstance(payload, dict):
        return EventInfo()
    pr = payload.get("pull_request")
    if settings.event_name in ("pull_request", "pull_request_target") and isinstance(pr, dict):
        base, head = pr.get("base") or {}, pr.get("head") or {}
        return EventInfo(
            pr_number=_int(pr.get("number")),
            base_ref=_str(base.get("ref")),
            base_sha=_str(base.get("sha")),
            head_sha=_str(head.get("sha")),
        )
    wr = payload.get("workflow_run")
    if settings.event_name == "workflow_run" and isinstance(wr, dict):
        return EventInfo(
            head_sha=_str(wr.get("head_sha")),
            triggering_run_number=_int(wr.get("run_number")),
            triggering_run_url=_str(wr.get("html_url")),
            triggering_event=_str(wr.get("event")),
        )
    return EventInfo()


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) and v else None


# ─── collaborators ────────────────────────────────────────────────────────────


class Publisher:
    """Posts the sticky comment. The default uses :mod:`gate.github.comments`; tests and
    other hosts pass their own."""

    def post(self, settings: ActionSettings, pr_number: int, gate_name: str, body: str) -> str:
        """Create or update the comment; returns its URL. Raises :class:`CommentForbidden`
        when the token may not comment, :class:`GitHubError` on other failures."""
        raise NotImplementedError


class CommentForbidden(GitHubError):
    """The token may not comment (HTTP 403/404 on write): fork PRs get read-only tokens."""


@dataclass
class Collaborators:
    cli: Callable[[Sequence[str]], int]
    repo: Callable[[ActionSettings], Any]
    """PyGithub ``Repository`` for the settings' token, API URL and repository."""
    publisher: Publisher
    now: Callable[[], datetime]
    out: TextIO

    @classmethod
    def default(cls) -> Collaborators:
        from gate.cli import main as cli_main

        return cls(
            cli=cli_main,
            repo=_pygithub_repo,
            publisher=_DefaultPublisher(),
            now=lambda: datetime.now(UTC),
            out=sys.stdout,
        )


def _pygithub_repo(settings: ActionSettings) -> Any:
    if not settings.github_token or not settings.repository:
        raise GitHubError("no token or repository")
    from github import Auth, Github, GithubRetry

    # Bounded: a few retries with backoff, a 15 s timeout per request; the gate's time on
    # GitHub must stay bounded (PyGithub's default retry waits rate limits out unbounded).
    client = Github(
        auth=Auth.Token(settings.github_token),
        base_url=settings.api_url,
        timeout=15,
        retry=GithubRetry(total=3, backoff_factor=1.0, secondary_rate_wait=10),
        seconds_between_requests=None,
        seconds_between_writes=None,
        user_agent="toolgate-action",
    )
    return client.get_repo(settings.repository, lazy=True)


class _DefaultPublisher(Publisher):
    def post(self, settings: ActionSettings, pr_number: int, gate_name: str, body: str) -> str:
        from github import GithubException

        repo = _pygithub_repo(settings)
        mark = _marker(gate_name)
        text = body if body.startswith(mark) else f"{mark}\n{body}"
        try:
            issue = repo.get_issue(pr_number)
            mine: Any = None
            me = _token_login(repo)
            for c in issue.get_comments():
                if c.body.startswith(mark) and (me is None or c.user.login == me):
                    mine = c
                    break
            if mine is not None:
                mine.edit(text)
                return str(mine.html_url)
            created = issue.create_comment(text)
            return str(created.html_url)
        except GithubException as exc:
            if exc.status in (403, 404) and _is_write_denied(exc):
                raise CommentForbidden(_gh_message(exc)) from exc
            raise GitHubError(_gh_message(exc)) from exc


def _token_login(repo: Any) -> str | None:
    # GITHUB_TOKEN is an installation token: /user answers 403 and its comments are
    # authored by github-actions[bot].
    from github import GithubException

    try:
        return str(repo.requester.requestJsonAndCheck("GET", "/user")[1]["login"])
    except GithubException:
        return "github-actions[bot]"


def _is_write_denied(exc: Any) -> bool:
    msg = _gh_message(exc).lower()
    return "not accessible" in msg or "forbidden" in msg or "must have" in msg or exc.status == 403


def _gh_message(exc: Any) -> str:
    data = getattr(exc, "data", None)
    if isinstance(data, dict) and data.get("message"):
        return f"HTTP {exc.status}: {data['message']}"
    return f"HTTP {getattr(exc, 'status', '?')}: {exc}"


def _marker(gate_name: str) -> str:
    try:
        from gate.report import marker

        return str(marker(gate_name))
    except ImportError:  # the reports package is not part of this build
        from urllib.parse import quote

        return f"<!-- toolgate:comment name={quote(gate_name, safe='._-')} -->"


# ─── the runner's files ───────────────────────────────────────────────────────


def write_outputs(path: Path | None, values: Mapping[str, str]) -> None:
    """Append ``name<<delimiter`` blocks to ``GITHUB_OUTPUT`` (safe for any value)."""
    if path is None:
        return
    with path.open("a", encoding="utf-8") as fh:
        for name, value in values.items():
            delim = f"ghadelimiter_{uuid.uuid4()}"
            fh.write(f"{name}<<{delim}\n{value}\n{delim}\n")


def append_summary(path: Path | None, text: str) -> None:
    """Append Markdown to the step summary, kept under the runner's 1 MiB limit."""
    if path is None or not text:
        return
    used = path.stat().st_size if path.exists() else 0
    room = STEP_SUMMARY_LIMIT - used - 256
    data = text.encode("utf-8")
    if len(data) > room:
        note = "\n\n> ✂️ The rest of the report did not fit the step summary; see report.md.\n"
        data = (
            data[: max(0, room - len(note.encode()))].decode("utf-8", "ignore").encode()
            + note.encode()
        )
    with path.open("ab") as fh:
        fh.write(data if data.endswith(b"\n") else data + b"\n")


# ─── the run ──────────────────────────────────────────────────────────────────


@dataclass
class Outcome:
    """What a mode produced, for the outputs, the summary and the exit code."""

    exit_code: int
    results_path: Path | None = None
    report_path: Path | None = None
    results: Any = None  # gate.results.Results
    gate_name: str = "toolgate"
    comment_path: Path | None = None
    summary_notes: list[str] = field(default_factory=list)
    gated: bool = True


def main(
    environ: Mapping[str, str] | None = None, collaborators: Collaborators | None = None
) -> int:
    """Run the action; returns the exit code."""
    env = os.environ if environ is None else environ
    deps = collaborators or Collaborators.default()
    try:
        settings = ActionSettings.from_environ(env)
    except InputError as exc:
        _report_input_error(exc, deps.out)
        write_outputs(_path_or_none(env.get("GITHUB_OUTPUT")), _error_outputs())
        return ExitCode.BAD_INPUT
    try:
        return run(settings, deps)
    except InputError as exc:
        _report_input_error(exc, deps.out)
        write_outputs(settings.output_file, _error_outputs())
        return ExitCode.BAD_INPUT


def run(settings: ActionSettings, deps: Collaborators) -> int:
    workdir = settings.workdir
    os.chdir(workdir)
    mark_safe_directory(settings.workspace)
    for var in TOKEN_VARIABLES:
        os.environ.pop(var, None)
    event = read_event(settings)

    if settings.mode is Mode.COMMENT:
        outcome = comment_mode(settings, deps, event, workdir)
    else:
        outcome = gate_mode(settings, deps, event, workdir)
    return publish(settings, deps, event, outcome)


def mark_safe_directory(workspace: Path) -> None:
    """Trust the workspace for git in this process and every child, without writing any
    git config file: ``GIT_CONFIG_COUNT``/``KEY``/``VALUE`` are git's command-line scope,
    which ``safe.directory`` honours. (The image also has ``safe.directory '*'`` in its
    system config; this covers running the entrypoint outside the image.)"""
    n = int(os.environ.get("GIT_CONFIG_COUNT", "0") or 0)
    for i in range(n):
        if os.environ.get(f"GIT_CONFIG_KEY_{i}") == "safe.directory" and os.environ.get(
            f"GIT_CONFIG_VALUE_{i}"
        ) == str(workspace):
            return
    os.environ[f"GIT_CONFIG_KEY_{n}"] = "safe.directory"
    os.environ[f"GIT_CONFIG_VALUE_{n}"] = str(workspace)
    os.environ["GIT_CONFIG_COUNT"] = str(n + 1)


@contextmanager
def computing_only() -> Iterator[None]:
    """The CLI computes; the action publishes. While the CLI runs, it does not see the
    step's output and summary files, so nothing is written twice."""
    hidden = {
        k: os.environ.pop(k) for k in ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY") if k in os.environ
    }
    try:
        yield
    finally:
        os.environ.update(hidden)


def gate_mode(
    settings: ActionSettings, deps: Collaborators, event: EventInfo, workdir: Path
) -> Outcome:
    """``check``, ``run`` and ``merge``: the CLI, with the baseline found first."""
    from gate.config import load_config

    config_path = Path(settings.config)
    config = load_config(config_path, display=settings.config)
    out = (
        (workdir / settings.out).resolve() if settings.out else config.resolve(config.reporting.out)
    )
    notes: list[str] = []
    common = ["--config", settings.config]

    baseline_args: list[str] = []
    if settings.mode in (Mode.CHECK, Mode.MERGE):
        command = "check" if settings.mode is Mode.CHECK else "merge"
        baseline_args, note = resolve_baseline(settings, deps, event, config, command)
        notes.append(note)

    if settings.mode is Mode.CHECK:
        argv = ["check", *common, "--out", str(out), *baseline_args]
        argv += _opt("--samples", settings.samples) + _opt("--shard", settings.shard)
        argv += _flag_if_supported("check", "--no-comment")
        rc = _call_cli(deps, argv)
    elif settings.mode is Mode.RUN:
        rc = _call_cli(
            deps,
            [
                "run",
                *common,
                "--out",
                str(out),
                *_opt("--samples", settings.samples),
                *_opt("--shard", settings.shard),
            ],
        )
        if rc == ExitCode.PASS:
            rc = _call_cli(
                deps,
                [
                    "score",
                    *common,
                    "--runs",
                    str(out / "runs.jsonl"),
                    "--out",
                    str(out),
                    *_opt("--shard", settings.shard),
                ],
            )
    else:
        assert settings.merge is not None
        parts = shard_folders(workdir / settings.merge)
        argv = ["merge", *[str(p) for p in parts], "--out", str(out)]
        argv += _flag_if_supported("merge", "--config", settings.config)
        argv += baseline_args
        rc = _call_cli(deps, argv)

    results = _read_results_quietly(out / RESULTS_FILE)
    return Outcome(
        exit_code=rc,
        results_path=out / RESULTS_FILE if (out / RESULTS_FILE).is_file() else None,
        report_path=out / REPORT_FILE if (out / REPORT_FILE).is_file() else None,
        results=results,
        gate_name=config.name,
        comment_path=out / COMMENT_FILE if (out / COMMENT_FILE).is_file() else None,
        summary_notes=[n for n in notes if n],
        gated=settings.mode is not Mode.RUN,
    )


def shard_folders(root: Path) -> list[Path]:
    """Every folder under ``root`` (itself included) holding a results.json, sorted —
    where actions/download-artifact put one folder per shard artifact."""
    if not root.is_dir():
        raise InputError(Problem("action inputs", None, "merge", f"{root} is not a folder"))
    found = sorted({p.parent for p in root.rglob(RESULTS_FILE) if p.is_file()})
    if not found:
        raise InputError(Problem("action inputs", None, "merge", f"no {RESULTS_FILE} under {root}"))
    return found


def resolve_baseline(
    settings: ActionSettings, deps: Collaborators, event: EventInfo, config: Any, command: str
) -> tuple[list[str], str]:
    """The CLI's baseline arguments, and one summary line on where the baseline came from."""
    from gate.github.artifacts import ArtifactSearch, PullRequestRef, find_baseline

    choice_value = settings.baseline
    if choice_value.lower() == "none":
        return [], "**Baseline:** none (`baseline: none`)."
    if choice_value.lower() != "auto":
        path = Path(choice_value)
        args = _baseline_args(command, path, f"file {choice_value}")
        return args, f"**Baseline:** file `{choice_value}`."

    pr: PullRequestRef | None = None
    if event.pr_number is not None and event.base_ref and event.base_sha and event.head_sha:
        pr = PullRequestRef(event.pr_number, event.base_ref, event.base_sha, event.head_sha)

    search: Callable[[PullRequestRef], ArtifactSearch] | None = None
    if settings.github_token and settings.repository:

        def search(p: PullRequestRef) -> ArtifactSearch:
            return ArtifactSearch(
                repo=deps.repo(settings),
                pr=p,
                artifact_name=config.baseline.artifact,
                workflow_file=settings.workflow_file,
                run_id=settings.run_id,
                now=deps.now,
                token=settings.github_token,
            )

    # Outside the workspace: the fetched baseline is scratch, not part of the repository.
    scratch = tempfile.mkdtemp(
        prefix="toolgate-baseline-", dir=os.environ.get("RUNNER_TEMP") or None
    )
    dest = Path(scratch) / RESULTS_FILE
    choice = find_baseline(
        config,
        dest=dest,
        pr=pr,
        dataset_sha256=_dataset_sha(config),
        search=search,
        now=deps.now,
    )
    for text in choice.notices:
        print(annotation("notice", text, title="ToolGate baseline"), file=deps.out)
    for text in choice.warnings:
        print(annotation("warning", text, title="ToolGate baseline"), file=deps.out)
    lines = [f"**Baseline:** {choice.source}."] + [
        f"> {t}" for t in (*choice.warnings, *choice.notices)
    ]
    if choice.path is None:
        return [], "\n".join(lines)
    return _baseline_args(command, choice.path, choice.source), "\n".join(lines)


def _baseline_args(command: str, path: Path, source: str) -> list[str]:
    if not _cli_accepts(command, "--baseline"):
        return []
    return ["--baseline", str(path), *_flag_if_supported(command, "--baseline-source", source)]


def _dataset_sha(config: Any) -> str | None:
    """The head's dataset hash: the pin when there is one (the run refuses a dataset
    that differs from it), else computed; ``None`` when the dataset cannot be read (the
    CLI reports why)."""
    if config.dataset.sha256:
        return str(config.dataset.sha256)
    try:
        from gate.dataset import load_dataset

        return str(load_dataset(config.resolve(config.dataset.path), root=config.root).sha256)
    except (ImportError, ToolGateError):
        return None


def comment_mode(
    settings: ActionSettings, deps: Collaborators, event: EventInfo, workdir: Path
) -> Outcome:
    """Post the comment an earlier run left in ``out`` — the fork-PR ``workflow_run``
    pattern. The folder came from an artifact the PR's own code could write, so it is
    untrusted: the body is size-capped and must be UTF-8, any sticky marker in it is
    dropped (ours is added), @-mentions are neutralised, and the PR number is looked up
    from the API by the head SHA GitHub put in the event — never read from the artifact."""
    folder = (workdir / (settings.out or "toolgate-out")).resolve()
    body_path = folder / COMMENT_FILE
    outcome = Outcome(exit_code=ExitCode.PASS, gated=False, comment_path=None)
    if not body_path.is_file():
        raise InputError(
            Problem(
                "action inputs",
                None,
                "out",
                f"no {COMMENT_FILE} in {folder}: download the earlier run's artifact there",
            )
        )
    raw = body_path.read_bytes()[: MAX_COMMENT_BYTES + 1]
    if len(raw) > MAX_COMMENT_BYTES:
        raise InputError(
            Problem(
                str(body_path),
                None,
                None,
                f"the comment body is over {MAX_COMMENT_BYTES // 1024} KiB; refused",
            )
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(Problem(str(body_path), None, None, f"not UTF-8 ({exc.reason})")) from None
    gate_name = _gate_name_from(text)
    body = untrusted_body(text, event)
    staged = folder.parent / f".{folder.name}-comment.md"
    staged.write_text(body, encoding="utf-8")
    outcome.comment_path = staged
    outcome.gate_name = gate_name
    return outcome


_MARKER = re.compile(r"<!--\s*toolgate:comment\b[^>]*-->\n?")
_NAME_IN_MARKER = re.compile(r"<!--\s*toolgate:comment name=([A-Za-z0-9._%-]{1,200})\s*-->")
_MENTION = re.compile(r"(?<![\w`/])@(?=[A-Za-z0-9])")


def _gate_name_from(text: str) -> str:
    from urllib.parse import unquote

    m = _NAME_IN_MARKER.search(text[:500])
    name = unquote(m.group(1)) if m else "toolgate"
    return name if re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", name) else "toolgate"


def untrusted_body(text: str, event: EventInfo) -> str:
    """The artifact's comment made safe to post: no forged marker, no pings, within the
    limit, with a footer saying where it came from."""
    body = _MARKER.sub("", text)
    body = _MENTION.sub("@\u200b", body)
    origin = (
        f"run [#{event.triggering_run_number}]({event.triggering_run_url})"
        if event.triggering_run_number and event.triggering_run_url
        else "an earlier run"
    )
    footer = (
        f"\n\n<sub>Posted by the `workflow_run` job from the results of {origin}; "
        "the verdict of record is that run's check.</sub>\n"
    )
    room = GITHUB_COMMENT_LIMIT - 200 - len(footer)
    if len(body) > room:
        body = body[:room] + "\n\n… (shortened to fit GitHub's comment limit)"
    return body.rstrip("\n") + footer


def find_pr_by_head_sha(repo: Any, head_sha: str) -> int | None:
    """The open PR whose head is ``head_sha``: GitHub's "pulls of a commit" first, then
    the open PRs themselves (that list may be empty for a fork's commit)."""
    for pr in _take(repo.get_commit(head_sha).get_pulls(), 50):
        if pr.state == "open" and pr.head.sha == head_sha:
            return int(pr.number)
    for pr in _take(repo.get_pulls(state="open", sort="updated", direction="desc"), 300):
        if pr.head.sha == head_sha:
            return int(pr.number)
    return None


def _take(items: Any, limit: int) -> Iterator[Any]:
    for n, item in enumerate(items):
        if n >= limit:
            return
        yield item


# ─── publishing ───────────────────────────────────────────────────────────────


def publish(
    settings: ActionSettings, deps: Collaborators, event: EventInfo, outcome: Outcome
) -> int:
    """Outputs, summary and comment first, then the exit code: a failing gate never loses
    its report."""
    results = outcome.results
    verdict = _verdict(outcome)
    write_outputs(
        settings.output_file,
        {
            "verdict": verdict.value,
            "passed": "true" if verdict is Verdict.PASS else "false",
            "regressions": str(_regressions(results)) if results is not None else "0",
            "must-not-call-violations": str(_violations(results)) if results is not None else "0",
            "results-path": _rel(settings.workspace, outcome.results_path),
            "report-path": _rel(settings.workspace, outcome.report_path),
        },
    )

    summary: list[str] = []
    if outcome.report_path is not None and settings.mode is not Mode.COMMENT:
        summary.append(outcome.report_path.read_text(encoding="utf-8", errors="replace"))
    elif results is not None and outcome.gated:
        rendered = _render_markdown(results)
        if rendered:
            summary.append(rendered)
    summary += outcome.summary_notes

    comment_note = _comment(settings, deps, event, outcome, verdict)
    if comment_note:
        summary.append(comment_note)

    code = outcome.exit_code
    if code == ExitCode.GATE_FAILED and settings.fail_on is FailOn.NEVER:
        text = (
            "The gate failed, but `fail-on: never` keeps this step green "
            "(report-only rollout). Set `fail-on: gate` to block merges."
        )
        print(annotation("warning", text, title="ToolGate"), file=deps.out)
        summary.append(f"> ⚠️ {text}")
        code = ExitCode.PASS
    append_summary(settings.summary_file, "\n\n".join(s.rstrip() for s in summary if s))
    return int(code)


def _comment(
    settings: ActionSettings,
    deps: Collaborators,
    event: EventInfo,
    outcome: Outcome,
    verdict: Verdict,
) -> str:
    """Post the comment when asked and possible; returns a summary line (or '')."""
    if not settings.comment or outcome.comment_path is None:
        return ""
    if settings.mode is Mode.RUN or verdict is Verdict.ERROR:
        return ""
    body = outcome.comment_path.read_text(encoding="utf-8")
    if not settings.github_token or not settings.repository:
        print(
            annotation(
                "notice",
                "No GitHub token: the PR comment was skipped; the report is "
                "in this step's summary.",
                title="ToolGate comment",
            ),
            file=deps.out,
        )
        return ""
    try:
        number = event.pr_number
        if settings.mode is Mode.COMMENT and number is None:
            if not event.head_sha:
                print(
                    annotation(
                        "notice",
                        f"`mode: comment` on a {settings.event_name} event "
                        "has no head SHA to find the PR by; nothing posted.",
                        title="ToolGate comment",
                    ),
                    file=deps.out,
                )
                return ""
            number = find_pr_by_head_sha(deps.repo(settings), event.head_sha)
            if number is None:
                print(
                    annotation(
                        "notice",
                        f"No open PR has head {event.head_sha[:7]}; nothing posted.",
                        title="ToolGate comment",
                    ),
                    file=deps.out,
                )
                return ""
        if number is None:
            print(
                annotation(
                    "notice",
                    f"Not a pull request ({settings.event_name or 'no event'}): "
                    "no PR comment; the report is in this step's summary.",
                    title="ToolGate comment",
                ),
                file=deps.out,
            )
            return ""
        url = deps.publisher.post(settings, number, outcome.gate_name, body)
        return f"PR comment: {url}" if url else ""
    except CommentForbidden as exc:
        text = (
            f"This token may not comment on the PR ({exc}); the report is in this step's "
            "summary instead. PRs from forks get a read-only token: use the `workflow_run` "
            "pattern (docs/action.md, fork-safe.yml) to post the comment from a trusted run."
        )
        print(annotation("warning", text, title="ToolGate comment"), file=deps.out)
        fallback = f"> ⚠️ {text}"
        if settings.mode is Mode.COMMENT:
            fallback += "\n\n" + body
        return fallback
    except Exception as exc:  # a GitHub failure never changes the verdict
        text = f"Posting the PR comment failed: {_short(exc)}. The verdict is unchanged."
        print(annotation("warning", text, title="ToolGate comment"), file=deps.out)
        return f"> ⚠️ {text}"


def _verdict(outcome: Outcome) -> Verdict:
    if outcome.exit_code not in (ExitCode.PASS, ExitCode.GATE_FAILED):
        return Verdict.ERROR
    if not outcome.gated:
        return Verdict.NOT_GATED
    v = getattr(outcome.results, "verdict", None)
    if v is None:
        return Verdict.PASS if outcome.exit_code == ExitCode.PASS else Verdict.FAIL
    return Verdict.PASS if v.passed and outcome.exit_code == ExitCode.PASS else Verdict.FAIL


def _regressions(results: Any) -> int:
    v = getattr(results, "verdict", None)
    if v is not None:
        return int(v.regressions)
    comp = getattr(results, "comparison", None)
    return sum(1 for f in comp.flips if f.kind == "regression") if comp is not None else 0


def _violations(results: Any) -> int:
    return sum(1 for h in results.hard_failures if h.kind == "must_not_call")


def _rel(workspace: Path, path: Path | None) -> str:
    if path is None:
        return ""
    try:
        return path.resolve().relative_to(workspace.resolve()).as_posix()
    except ValueError:
        return path.resolve().as_posix()


def _read_results_quietly(path: Path) -> Any:
    if not path.is_file():
        return None
    from gate.results import read_results

    try:
        return read_results(path)
    except InputError:
        return None


def _render_markdown(results: Any) -> str:
    try:
        from gate.report import render_markdown
    except ImportError:
        return ""
    return str(render_markdown(results))


def _error_outputs() -> dict[str, str]:
    return {
        "verdict": Verdict.ERROR.value,
        "passed": "false",
        "regressions": "0",
        "must-not-call-violations": "0",
        "results-path": "",
        "report-path": "",
    }


def _report_input_error(exc: InputError, out: TextIO) -> None:
    sys.stderr.write(f"toolgate: error:\n{exc.render()}\n")
    for p in exc.problems[:10]:
        msg = f"{p.field}: {p.message}" if p.field else p.message
        print(annotation("error", msg, title="ToolGate input error"), file=out)


# ─── the CLI ──────────────────────────────────────────────────────────────────


def _call_cli(deps: Collaborators, argv: list[str]) -> int:
    print(f"toolgate {' '.join(argv)}", file=deps.out, flush=True)
    with computing_only():
        try:
            return int(deps.cli(argv))
        except SystemExit as exc:  # argparse exits on usage errors
            return int(exc.code) if isinstance(exc.code, int) else ExitCode.BAD_INPUT


def _opt(flag: str, value: object | None) -> list[str]:
    return [] if value is None else [flag, str(value)]


def _cli_accepts(command: str, flag: str) -> bool:
    """Whether ``toolgate <command>`` takes ``flag``: the action passes optional flags
    (``--no-comment``, ``--baseline-source``) only to a CLI that knows them."""
    from gate.cli import build_parser

    parser = build_parser()
    for action in parser._subparsers._group_actions if parser._subparsers else ():
        choices = getattr(action, "choices", None) or {}
        sub = choices.get(command)
        if sub is not None:
            return flag in sub._option_string_actions
    return False


def _flag_if_supported(command: str, flag: str, value: str | None = None) -> list[str]:
    if not _cli_accepts(command, flag):
        return []
    return [flag] if value is None else [flag, value]


def _short(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:300]


if __name__ == "__main__":
    raise SystemExit(main())
