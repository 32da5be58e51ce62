"""The GitHub Action's entrypoint: ``python -m gate.action`` (action.yml, Dockerfile).

The runner hands a Docker action its inputs as ``INPUT_<NAME>`` variables — the input's
name upper-cased, hyphens kept (``INPUT_GITHUB-TOKEN``, ``INPUT_FAIL-ON``) — together with
the ``GITHUB_*`` variables of the run. :meth:`ActionSettings.from_environ` reads them all
once into one typed object (the token hidden from ``repr``); everything after that takes
the settings and its collaborators (:class:`Collaborators`: the CLI entry, the GitHub
client, the clock, the log stream) as arguments, so every path is tested without the
network. The entrypoint only wires parts together; the work is the CLI's
(``gate.cli.main``, called in this process) and the GitHub modules'.

What a run does, in order:

1. settings; a bad input is an input error (exit 2) naming the input;
2. move to ``GITHUB_WORKSPACE`` + ``working-directory`` (never outside the workspace) and
   mark the workspace a git ``safe.directory`` for this process and its children;
3. by ``mode``:

   * ``check`` — the baseline first (``baseline: auto`` → :mod:`gate.github.artifacts`),
     then ``toolgate check``, which scores, gates, writes every report and publishes them
     (outputs, step summary, annotations, the sticky comment: :mod:`gate.github.publish`);
   * ``run`` — one shard: ``toolgate run`` then ``toolgate score`` (no gate, no comment);
   * ``merge`` — ``toolgate merge`` over every shard folder under ``merge``, with the
     baseline found as for ``check``;
   * ``comment`` — the fork-PR ``workflow_run`` pattern (:func:`comment_mode`);

4. complete the step: the outputs action.yml promises (``results-path`` and
   ``report-path`` relative to the repository root; ``verdict`` ``error`` when the CLI
   stopped on bad input), the baseline's provenance in the step summary (and the report
   itself when the CLI did not write one, as for a shard), and ``fail-on``;
5. exit with the gate's code: 0 pass, 1 the gate failed (0 with a warning under
   ``fail-on: never``), 2 bad input, 3 a bug.
"""

from __future__ import annotations

import enum
import json
import os
import re
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
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

COMMENT_FILE = "comment.md"
REPORT_FILE = "report.md"
RESULTS_FILE = "results.json"
MAX_COMMENT_BYTES = 256 * 1024
"""Largest comment.md taken from an earlier run's artifact (``mode: comment``)."""
MAX_ARTIFACT_RESULTS_BYTES = 256 * 1024 * 1024
"""Largest results.json taken from an earlier run's artifact (``mode: comment``)."""
GITHUB_COMMENT_LIMIT = 65_536


class Mode(enum.StrEnum):
    CHECK = "check"
    RUN = "run"
    MERGE = "merge"
    COMMENT = "comment"


class FailOn(enum.StrEnum):
    GATE = "gate"
    NEVER = "never"


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
    github_budget_s: float = 60.0
    """Most seconds all GitHub calls of one operation may take (``TOOLGATE_GITHUB_BUDGET_S``)."""
    comment_login: str | None = None
    """The login the token comments as when ``GET /user`` is refused
    (``TOOLGATE_COMMENT_LOGIN``; default ``github-actions[bot]``)."""

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
        budget = 60.0
        if raw_budget := environ.get("TOOLGATE_GITHUB_BUDGET_S"):
            try:
                budget = float(raw_budget)
            except ValueError:
                budget = -1.0
            if not budget > 0:
                problems.append(
                    Problem(
                        "environment",
                        None,
                        "TOOLGATE_GITHUB_BUDGET_S",
                        f"must be a positive number of seconds, not {raw_budget!r}",
                    )
                )
                budget = 60.0
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
            github_budget_s=budget,
            comment_login=environ.get("TOOLGATE_COMMENT_LOGIN") or None,
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
    """For ``workflow_run`` events: the run whose output is commented."""
    triggering_run_url: str | None = None


def read_event(settings: ActionSettings) -> EventInfo:
    """The PR (``pull_request``, ``pull_request_target``) or the triggering run
    (``workflow_run``) from the event payload; empty for other events or a bad file."""
    if settings.event_path is None:
        return EventInfo()
    try:
        payload = json.loads(settings.event_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return EventInfo()
    if not isinstance(payload, dict):
        return EventInfo()
    pr = payload.get("pull_request")
    if settings.event_name in ("pull_request", "pull_request_target") and isinstance(pr, dict):
        base: dict[str, Any] = pr["base"] if isinstance(pr.get("base"), dict) else {}
        head: dict[str, Any] = pr["head"] if isinstance(pr.get("head"), dict) else {}
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
        )
    return EventInfo()


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) and v else None


# ─── collaborators ────────────────────────────────────────────────────────────


@dataclass
class Collaborators:
    """What the action uses from outside itself; tests pass their own."""

    cli: Callable[[Sequence[str]], int]
    """``gate.cli.main``: runs one ``toolgate`` command in this process."""
    client: Callable[[ActionSettings], Any]
    """A :class:`gate.github.client.GitHubClient` for the settings' token and API URL."""
    now: Callable[[], datetime]
    out: TextIO
    """Where workflow commands (``::warning::``) and the log go."""

    @classmethod
    def default(cls) -> Collaborators:
        from gate.cli import main as cli_main

        return cls(cli=cli_main, client=_client, now=lambda: datetime.now(UTC), out=sys.stdout)


def _client(settings: ActionSettings) -> Any:
    from gate.github.client import GitHubClient, RetryPolicy

    assert settings.github_token is not None
    return GitHubClient(
        token=settings.github_token,
        api_url=settings.api_url,
        policy=RetryPolicy(budget_s=settings.github_budget_s),
    )


# ─── the runner's files ───────────────────────────────────────────────────────


def write_outputs(path: Path | None, values: Mapping[str, str]) -> None:
    """Append outputs to ``GITHUB_OUTPUT`` (a later value of a name wins)."""
    if path is None:
        return
    from gate.github.workflow import write_outputs as _write

    _write(path, values)


def append_summary(path: Path | None, text: str) -> None:
    """Append Markdown to the step summary, within the runner's 1 MiB limit."""
    if path is None or not text.strip():
        return
    from gate.github.workflow import append_step_summary, step_summary_room

    room = step_summary_room(path) - 256
    data = text.encode("utf-8")
    if len(data) > room:
        note = "\n\n> ✂️ The rest did not fit the step summary; see report.md.\n"
        keep = max(0, room - len(note.encode("utf-8")))
        text = data[:keep].decode("utf-8", "ignore") + note
    # A blank line first: what the CLI wrote may end in an HTML block (</details>).
    append_step_summary(path, "\n" + text)


def _size(path: Path | None) -> int:
    try:
        return path.stat().st_size if path is not None else 0
    except OSError:
        return 0


# ─── the run ──────────────────────────────────────────────────────────────────


@dataclass
class Outcome:
    """What a mode produced, for the outputs, the summary and the exit code."""

    exit_code: int
    results_path: Path | None = None
    report_path: Path | None = None
    results: Any = None
    """``gate.results.Results`` when results.json was written and reads back."""
    gated: bool = True
    cli_wrote_summary: bool = False
    summary_notes: list[str] = field(default_factory=list)


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
    event = read_event(settings)
    if settings.mode is Mode.COMMENT:
        outcome = comment_mode(settings, deps, event, workdir)
    else:
        outcome = gate_mode(settings, deps, event, workdir)
    return finish(settings, deps, outcome)


def mark_safe_directory(workspace: Path) -> None:
    """Trust the workspace for git in this process and every child, without writing any
    git config file: ``GIT_CONFIG_COUNT``/``KEY_n``/``VALUE_n`` are git's command-line
    scope, which ``safe.directory`` honours. (The image also has ``safe.directory '*'`` in
    its system config; this covers the entrypoint run outside the image.)"""
    n = int(os.environ.get("GIT_CONFIG_COUNT", "0") or 0)
    for i in range(n):
        if (os.environ.get(f"GIT_CONFIG_KEY_{i}"), os.environ.get(f"GIT_CONFIG_VALUE_{i}")) == (
            "safe.directory",
            str(workspace),
        ):
            return
    os.environ[f"GIT_CONFIG_KEY_{n}"] = "safe.directory"
    os.environ[f"GIT_CONFIG_VALUE_{n}"] = str(workspace)
    os.environ["GIT_CONFIG_COUNT"] = str(n + 1)


def gate_mode(
    settings: ActionSettings, deps: Collaborators, event: EventInfo, workdir: Path
) -> Outcome:
    """``check``, ``run`` and ``merge``: the baseline, then the CLI."""
    from gate.config import load_config

    config = load_config(Path(settings.config), display=settings.config)
    out = (
        (workdir / settings.out).resolve() if settings.out else config.resolve(config.reporting.out)
    )
    cfg = ["--config", settings.config]
    notes: list[str] = []
    summary_before = _size(settings.summary_file)

    if settings.mode is Mode.RUN:
        sample_shard = _opt("--samples", settings.samples) + _opt("--shard", settings.shard)
        rc = _call_cli(deps, ["run", *cfg, "--out", str(out), *sample_shard])
        if rc == ExitCode.PASS:
            runs = str(out / "runs.jsonl")
            rc = _call_cli(
                deps,
                [
                    "score",
                    *cfg,
                    "--runs",
                    runs,
                    "--out",
                    str(out),
                    *_opt("--shard", settings.shard),
                ],
            )
    else:
        command = "check" if settings.mode is Mode.CHECK else "merge"
        baseline, note = resolve_baseline(settings, deps, event, config, command)
        notes.append(note)
        if settings.mode is Mode.CHECK:
            argv = ["check", *cfg, "--out", str(out), *baseline]
            argv += _opt("--samples", settings.samples) + _opt("--shard", settings.shard)
        else:
            assert settings.merge is not None
            parts = [str(p) for p in shard_folders(workdir / settings.merge)]
            argv = ["merge", *parts, "--out", str(out), *baseline]
            argv += ["--config", settings.config]
        if settings.mode is Mode.CHECK and not settings.comment:
            argv.append("--no-comment")  # merge's comment is posted by publish_results
        rc = _call_cli(deps, argv)

    results_file = out / RESULTS_FILE
    report_file = out / REPORT_FILE
    results = _read_results_quietly(results_file)
    published = _size(settings.summary_file) > summary_before
    if settings.mode is not Mode.RUN and results is not None and not published:
        # A command that computes but does not publish (merge): publish its results here,
        # the way `toolgate check` does itself.
        publish_results(settings, deps, results, results_file)
        published = True
    return Outcome(
        exit_code=rc,
        results_path=results_file if results_file.is_file() else None,
        report_path=report_file if report_file.is_file() else None,
        results=results,
        gated=settings.mode is not Mode.RUN,
        cli_wrote_summary=published,
        summary_notes=[n for n in notes if n],
    )


def publish_results(
    settings: ActionSettings, deps: Collaborators, results: Any, results_file: Path
) -> None:
    """Outputs, step summary, annotations and the sticky comment for ``results``
    (:func:`gate.github.publish.publish`; a GitHub failure is a warning, never fatal)."""
    from gate.commands.report import build_redactor
    from gate.github.context import GitHubContext
    from gate.github.publish import publish

    publish(
        results,
        GitHubContext.from_environ(os.environ),
        redactor=build_redactor(settings.config, [], os.environ),
        results_path=_rel(settings.workspace, results_file),
        comment=settings.comment,
        stream=deps.out,
    )


def shard_folders(root: Path) -> list[Path]:
    """Every folder under ``root`` (itself included) holding a results.json, sorted —
    where actions/download-artifact puts one folder per shard artifact."""
    if not root.is_dir():
        raise InputError(Problem("action inputs", None, "merge", f"{root} is not a folder"))
    found = sorted({p.parent for p in root.rglob(RESULTS_FILE) if p.is_file()})
    if not found:
        raise InputError(Problem("action inputs", None, "merge", f"no {RESULTS_FILE} under {root}"))
    return found


def resolve_baseline(
    settings: ActionSettings, deps: Collaborators, event: EventInfo, config: Any, command: str
) -> tuple[list[str], str]:
    """The CLI's baseline arguments, and a step-summary line saying where the baseline
    came from (``auto``: see :mod:`gate.github.artifacts`)."""
    from gate.github.artifacts import ArtifactSearch, PullRequestRef, find_baseline

    if settings.baseline.lower() == "none":
        return _no_baseline(command), "**Baseline:** none (`baseline: none`)."
    if settings.baseline.lower() != "auto":
        path = Path(settings.baseline)
        args = _baseline_args(path, f"file {settings.baseline}")
        return args, f"**Baseline:** file `{settings.baseline}`."

    pr: PullRequestRef | None = None
    if event.pr_number is not None and event.base_ref and event.base_sha and event.head_sha:
        pr = PullRequestRef(event.pr_number, event.base_ref, event.base_sha, event.head_sha)
    search: Callable[[PullRequestRef], ArtifactSearch] | None = None
    if settings.github_token and settings.repository:

        def search(p: PullRequestRef) -> ArtifactSearch:
            client = deps.client(settings)
            repository = settings.repository
            return ArtifactSearch(
                repo=client.call("GET repository", lambda: client.gh.get_repo(repository)),
                pr=p,
                artifact_name=config.baseline.artifact,
                workflow_file=settings.workflow_file,
                run_id=settings.run_id,
                now=deps.now,
                token=settings.github_token,
                call=client.call,
            )

    # Outside the workspace: a fetched baseline is scratch, not part of the repository.
    scratch = tempfile.mkdtemp(
        prefix="toolgate-baseline-", dir=os.environ.get("RUNNER_TEMP") or None
    )
    choice = find_baseline(
        config,
        dest=Path(scratch) / RESULTS_FILE,
        pr=pr,
        dataset_sha256=_dataset_sha(config),
        search=search,
        now=deps.now,
    )
    for text in choice.warnings:
        print(annotation("warning", text, title="ToolGate baseline"), file=deps.out)
    for text in choice.notices:
        print(annotation("notice", text, title="ToolGate baseline"), file=deps.out)
    lines = [f"**Baseline:** {choice.source}."]
    lines += [f"> {t}" for t in (*choice.warnings, *choice.notices)]
    if choice.path is None:
        return _no_baseline(command), "\n".join(lines)
    return _baseline_args(choice.path, choice.source), "\n".join(lines)


def _no_baseline(command: str) -> list[str]:
    # `toolgate check` falls back to the config's baseline.path without --baseline; the
    # search above has already looked there, so say "none" explicitly.
    return ["--baseline", "none"] if command == "check" else []


def _baseline_args(path: Path, source: str) -> list[str]:
    return ["--baseline", str(path), "--baseline-source", source]


def _dataset_sha(config: Any) -> str | None:
    """The head's dataset hash: the pin when there is one (a run refuses a dataset that
    differs from it), else computed; ``None`` when it cannot be read (the CLI says why)."""
    if config.dataset.sha256:
        return str(config.dataset.sha256)
    try:
        from gate.dataset import load_dataset

        path = config.resolve(config.dataset.path)
        return str(load_dataset(path, root=config.root).sha256)
    except (ImportError, ToolGateError):
        return None


# ─── mode: comment (the fork-PR workflow_run pattern) ─────────────────────────


def comment_mode(
    settings: ActionSettings, deps: Collaborators, event: EventInfo, workdir: Path
) -> Outcome:
    """Post the comment for a run that could not post it itself.

    A PR from a fork runs with a read-only token, so its workflow uploads its output
    folder as an artifact; a second workflow, on ``workflow_run`` (trusted code, a write
    token), downloads it into ``out`` and runs this mode. The folder came from code the
    PR controls, so it is untrusted:

    * the PR number is looked up from the API by the head SHA GitHub put in the
      ``workflow_run`` event — never read from the artifact — and the PR's head must
      still be that commit;
    * ``results.json`` (preferred) is size-capped, validated, and the comment rendered
      from it by this (trusted) code, so every string in it is escaped; without it,
      ``comment.md`` is size-capped, must be UTF-8, any sticky marker in it is dropped and
      @-mentions are neutralised (:func:`untrusted_body`);
    * a footer says which run the comment came from.
    """
    folder = (workdir / (settings.out or "toolgate-out")).resolve()
    outcome = Outcome(exit_code=ExitCode.PASS, gated=False)
    results_file, body_file = folder / RESULTS_FILE, folder / COMMENT_FILE
    if not results_file.is_file() and not body_file.is_file():
        raise InputError(
            Problem(
                "action inputs",
                None,
                "out",
                f"neither {RESULTS_FILE} nor {COMMENT_FILE} in {folder}: download the "
                "earlier run's artifact there",
            )
        )
    if not settings.comment:
        return outcome
    if not settings.github_token or not settings.repository:
        _log(
            deps, "warning", "`mode: comment` needs a token and GITHUB_REPOSITORY; nothing posted."
        )
        return outcome
    if event.head_sha is None:
        _log(
            deps,
            "notice",
            f"`mode: comment` runs on workflow_run events (this is {settings.event_name!r}): "
            "there is no triggering run's head SHA to find the PR by; nothing posted.",
        )
        return outcome
    try:
        client = deps.client(settings)
        number = find_pr_by_head_sha(client, settings.repository, event.head_sha)
    except GitHubError as exc:
        _log(deps, "warning", f"Looking up the PR of {event.head_sha[:7]} failed: {exc}")
        return outcome
    if number is None:
        _log(deps, "notice", f"No open PR has head {event.head_sha[:7]}; nothing posted.")
        return outcome

    if results_file.is_file():
        if _size(results_file) > MAX_ARTIFACT_RESULTS_BYTES:
            raise InputError(
                Problem(
                    str(results_file),
                    None,
                    None,
                    f"over {MAX_ARTIFACT_RESULTS_BYTES // (1024 * 1024)} MiB; refused",
                )
            )
        outcome.exit_code = _call_cli(
            deps, ["comment", "--results", str(results_file), "--pr", str(number)]
        )
    else:
        text = _read_capped_text(body_file)
        _post_body(
            settings, deps, event, client, number, _gate_name(text), untrusted_body(text, event)
        )
    origin = f"run #{event.triggering_run_number}" if event.triggering_run_number else "the run"
    outcome.summary_notes.append(
        f"**Comment:** for PR #{number} (found by its head {event.head_sha[:7]}), from the "
        f"output of {origin}, rendered from its "
        f"{RESULTS_FILE if results_file.is_file() else COMMENT_FILE}."
    )
    return outcome


def find_pr_by_head_sha(client: Any, repository: str, head_sha: str) -> int | None:
    """The open PR whose head is ``head_sha``: the commit's pulls first, then the open
    PRs themselves (the first list can be empty for a fork's commit)."""
    repo = client.call("GET repository", lambda: client.gh.get_repo(repository))

    def by_commit() -> int | None:
        for pr in _take(repo.get_commit(head_sha).get_pulls(), 50):
            if pr.state == "open" and pr.head.sha == head_sha:
                return int(pr.number)
        return None

    def by_listing() -> int | None:
        for pr in _take(repo.get_pulls(state="open", sort="updated", direction="desc"), 300):
            if pr.head.sha == head_sha:
                return int(pr.number)
        return None

    found: int | None = client.call(f"GET pulls of commit {head_sha[:7]}", by_commit)
    if found is None:
        found = client.call("GET open pull requests", by_listing)
    return found


def _read_capped_text(path: Path) -> str:
    with path.open("rb") as fh:
        raw = fh.read(MAX_COMMENT_BYTES + 1)
    if len(raw) > MAX_COMMENT_BYTES:
        raise InputError(
            Problem(str(path), None, None, f"over {MAX_COMMENT_BYTES // 1024} KiB; refused")
        )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(Problem(str(path), None, None, f"not UTF-8 ({exc.reason})")) from None


_MARKER = re.compile(r"<!--\s*toolgate:comment\b.*?-->\n?", re.DOTALL)
_NAME_IN_MARKER = re.compile(r"\A\s*<!--\s*toolgate:comment name=([A-Za-z0-9._%-]{1,200})\s*-->")
_MENTION = re.compile(r"(?<![\w`/@])@(?=[A-Za-z0-9])")


def untrusted_body(text: str, event: EventInfo) -> str:
    """An artifact's ``comment.md`` made safe to post: no sticky marker of its own (ours
    is added), no @-mentions that ping (a zero-width space follows the ``@``), within
    GitHub's size limit, and a footer saying where it came from."""
    body = _MENTION.sub("@\u200b", _MARKER.sub("", text))
    origin = (
        f"run [#{event.triggering_run_number}]({event.triggering_run_url})"
        if event.triggering_run_number and event.triggering_run_url
        else "an earlier run"
    )
    footer = (
        f"\n\n<sub>Posted by the `workflow_run` job from the output of {origin}; the verdict "
        "of record is that run's check.</sub>\n"
    )
    room = GITHUB_COMMENT_LIMIT - 512 - len(footer)
    if len(body) > room:
        body = body[:room] + "\n\n… (shortened to fit GitHub's comment limit)"
    return body.rstrip("\n") + footer


def _gate_name(text: str) -> str:
    from urllib.parse import unquote

    m = _NAME_IN_MARKER.match(text)
    name = unquote(m.group(1)) if m else "toolgate"
    return name if re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", name) else "toolgate"


def _post_body(
    settings: ActionSettings,
    deps: Collaborators,
    event: EventInfo,
    client: Any,
    number: int,
    gate_name: str,
    body: str,
) -> None:
    from gate.github.client import GitHubApiError
    from gate.github.comments import upsert_comment
    from gate.report import marker

    mark = marker(gate_name)
    assert settings.repository is not None
    try:
        result = upsert_comment(
            client,
            settings.repository,
            number,
            f"{mark}\n{body}",
            marker=mark,
            login_fallback=settings.comment_login,
            expected_head_sha=event.head_sha,
        )
    except GitHubApiError as exc:
        _log(deps, "warning", f"Posting the PR comment failed: {exc}. Nothing else changes.")
        return
    print(f"PR comment {result.action} on #{number} ({result.url})", file=deps.out)


def _take(items: Any, limit: int) -> Iterator[Any]:
    for n, item in enumerate(items):
        if n >= limit:
            return
        yield item


# ─── finishing the step ───────────────────────────────────────────────────────


def finish(settings: ActionSettings, deps: Collaborators, outcome: Outcome) -> int:
    """The outputs and the summary the action owes, then the exit code."""
    write_outputs(settings.output_file, outputs_of(settings, outcome))
    summary: list[str] = []
    if outcome.results is not None and not outcome.cli_wrote_summary:
        summary.append(_report_text(outcome))
    summary += outcome.summary_notes
    code = outcome.exit_code
    if code == ExitCode.GATE_FAILED and settings.fail_on is FailOn.NEVER:
        text = (
            "The gate failed, but `fail-on: never` keeps this step green (report-only "
            "rollout). Set `fail-on: gate` to block merges."
        )
        _log(deps, "warning", text)
        summary.append(f"> ⚠️ {text}")
        code = ExitCode.PASS
    append_summary(settings.summary_file, "\n\n".join(s.rstrip() for s in summary if s.strip()))
    return int(code)


def outputs_of(settings: ActionSettings, outcome: Outcome) -> dict[str, str]:
    """The six outputs of action.yml (the CLI may have written these and more already;
    a later value of a name wins, and these agree with its values)."""
    results = outcome.results
    if outcome.exit_code not in (ExitCode.PASS, ExitCode.GATE_FAILED):
        verdict = "error"
    elif not outcome.gated or results is None or results.verdict is None:
        verdict = "not-gated" if not outcome.gated else "error"
    else:
        verdict = "passed" if results.verdict.passed else "failed"
    regressions = 0
    violations = 0
    if results is not None:
        if results.verdict is not None:
            regressions = results.verdict.regressions
        elif results.comparison is not None:
            regressions = sum(1 for f in results.comparison.flips if f.kind == "regression")
        violations = sum(1 for h in results.hard_failures if h.kind == "must_not_call")
    return {
        "verdict": verdict,
        "passed": "true" if verdict == "passed" else "false",
        "regressions": str(regressions),
        "must-not-call-violations": str(violations),
        "results-path": _rel(settings.workspace, outcome.results_path),
        "report-path": _rel(settings.workspace, outcome.report_path),
    }


def _report_text(outcome: Outcome) -> str:
    if outcome.report_path is not None:
        return outcome.report_path.read_text(encoding="utf-8", errors="replace")
    from gate.report import render_markdown

    return str(render_markdown(outcome.results))


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


def _error_outputs() -> dict[str, str]:
    return {
        "verdict": "error",
        "passed": "false",
        "regressions": "0",
        "must-not-call-violations": "0",
        "results-path": "",
        "report-path": "",
    }


def _log(deps: Collaborators, level: str, text: str) -> None:
    print(annotation(level, text, title="ToolGate"), file=deps.out, flush=True)


def _report_input_error(exc: InputError, out: TextIO) -> None:
    sys.stderr.write(f"toolgate: error:\n{exc.render()}\n")
    for p in exc.problems[:10]:
        msg = f"{p.field}: {p.message}" if p.field else p.message
        print(annotation("error", msg, title="ToolGate input error"), file=out)


# ─── the CLI ──────────────────────────────────────────────────────────────────


def _call_cli(deps: Collaborators, argv: list[str]) -> int:
    print(f"::group::toolgate {' '.join(argv)}", file=deps.out, flush=True)
    try:
        return int(deps.cli(argv))
    except SystemExit as exc:  # argparse exits on a usage error
        return int(exc.code) if isinstance(exc.code, int) else ExitCode.BAD_INPUT
    finally:
        print("::endgroup::", file=deps.out, flush=True)


def _opt(flag: str, value: object | None) -> list[str]:
    return [] if value is None else [flag, str(value)]


if __name__ == "__main__":
    raise SystemExit(main())
