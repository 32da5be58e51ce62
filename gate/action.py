"""The GitHub Action's entrypoint: ``python -m gate.action`` (action.yml, Dockerfile).

This module only wires parts together, one way through:

1. **settings** — :meth:`gate.github.context.GitHubContext.from_environ` reads every
   ``INPUT_*``, ``GITHUB_*`` and ``TOOLGATE_*`` variable once (the token hidden from
   ``repr``); a bad input or variable is an input error (exit 2) naming it;
2. **where** — ``GITHUB_WORKSPACE`` + ``working-directory`` (never outside the workspace),
   marked a git ``safe.directory`` for this process and its children;
2b. **the agent's environment** — ``install`` (a requirements file, into a virtualenv of
   its own) and ``setup`` (a shell command), before the gate starts
   (:mod:`gate.replay.agentenv`);
3. **what** — :func:`gate.github.activity.plan` decides from the context alone:

   * ``check`` — the baseline (``baseline: auto`` → :mod:`gate.github.artifacts`), then
     :func:`gate.pipeline.check`, then publishing (:func:`gate.github.publish.publish`:
     step summary, annotations, the sticky comment);
   * ``run`` — one shard: :func:`gate.pipeline.shard.run_shard` (no gate, no comment);
   * ``merge`` — :func:`gate.pipeline.merge.merge_and_decide` over every shard folder
     under ``merge``, with the baseline found as for ``check``, then publishing;
   * ``comment`` — the fork-PR ``workflow_run`` pattern
     (:func:`gate.github.workflow_run.relay_comment`);

   every stage is called in this process with typed options and returns a typed value;
4. **finish** — :func:`finish` writes the outputs action.yml promises, once, from that
   value (:func:`outputs_of`), appends the rest of the step summary, applies ``fail-on``
   and returns the exit code: 0 pass, 1 the gate failed (0 with a warning under
   ``fail-on: never``), 2 bad input, 3 a bug.

One handler (:func:`run_guarded`) turns every error into an exit code and an ``::error``
annotation, so the outputs are written whatever happened (``verdict: error``).
Collaborators from outside — the GitHub client, the clock, the log streams
(:class:`Collaborators`) — are passed in, so every path is tested without the network.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import tempfile
import threading
import traceback
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, TextIO, assert_never

from gate.errors import ExitCode, InputError, Problem, RunAborted, ToolGateError
from gate.github.activity import (
    AutoBaseline,
    BaselinePlan,
    Check,
    FileBaseline,
    Merge,
    NoBaseline,
    PostComment,
    RelayComment,
    RunShard,
    SkipComment,
    plan,
)
from gate.github.client import ClientFactory, client_for
from gate.github.context import INPUTS_FILE, FailOn, GitHubContext
from gate.github.stepfiles import StepSeal
from gate.github.workflow import annotation

if TYPE_CHECKING:
    from gate.config import Config
    from gate.github.artifacts import BaselineChoice
    from gate.results import Results

OUTPUTS: tuple[str, ...] = (
    "verdict",
    "passed",
    "regressions",
    "likely-regressions",
    "undecided",
    "must-not-call-violations",
    "compared",
    "results-path",
    "report-path",
)
"""The outputs action.yml declares (a test checks the two agree); gated runs also get
``hard-failures``, ``summary`` and one ``metric-<name>`` per gated metric."""

RESULTS_FILE = "results.json"
REPORT_FILE = "report.md"


# ─── collaborators ────────────────────────────────────────────────────────────


@dataclass
class Collaborators:
    """What the action uses from outside itself; tests pass their own."""

    client: ClientFactory
    """A :class:`gate.github.client.GitHubClient` for the context's token, API URL and
    budget; one per GitHub operation (the baseline search, the comment)."""
    now: Callable[[], datetime]
    out: TextIO
    """The step's log: workflow commands (``::warning::``), the console report."""
    err: TextIO
    """Error details (input problems, a traceback)."""
    seal: StepSeal | None = None
    """Ends the step's processes and keeps the runner's files ToolGate's
    (:mod:`gate.github.stepfiles`); set by :func:`main` for the real entrypoint only."""

    @classmethod
    def default(cls) -> Collaborators:
        return cls(client=client_for, now=lambda: datetime.now(UTC), out=sys.stdout, err=sys.stderr)


# ─── what a mode returns ──────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class Outcome:
    """What an activity produced: the outputs, the rest of the summary, the exit code."""

    exit_code: int
    gated: bool
    """``check`` and ``merge`` decide a verdict; ``run`` and ``comment`` do not."""
    results: Results | None = None
    results_path: Path | None = None
    report_path: Path | None = None
    summary_notes: tuple[str, ...] = field(default=())
    """Markdown still to be appended to the step summary by :func:`finish`."""


# ─── the run ──────────────────────────────────────────────────────────────────


def main(
    environ: Mapping[str, str] | None = None, collaborators: Collaborators | None = None
) -> int:
    """Run the action; returns the exit code."""
    env = os.environ if environ is None else environ
    deps = collaborators or Collaborators.default()
    if collaborators is None:  # the step itself: its processes and files are ours to seal
        deps.seal = StepSeal.start(env)
    ctx = GitHubContext.from_environ(env)
    with _sigterm_unwinds():
        outcome = run_guarded(ctx, env, deps)
    return finish(ctx, deps, outcome)


def seal_step(deps: Collaborators) -> None:
    """Once the gate is over, before the step's summary, comment or outputs are written:
    end every process the step started and cut back whatever else wrote to the runner's
    files (:class:`gate.github.stepfiles.StepSeal`); each thing it did is a warning."""
    if deps.seal is None:
        return
    for text in deps.seal.close():
        _log(deps, "warning", text)


def run_guarded(ctx: GitHubContext, environ: Mapping[str, str], deps: Collaborators) -> Outcome:
    """:func:`run`, with the one top-level error handler: bad input → 2, a run aborted
    (:class:`~gate.errors.RunAborted`) → 4, an interrupt → 130, anything else → 3 (a bug),
    each with an ``::error`` annotation."""
    try:
        return run(ctx, environ, deps)
    except InputError as exc:
        report_input_error(exc, deps)
        return Outcome(ExitCode.BAD_INPUT, gated=False)
    except RunAborted as exc:
        hint = f" {exc.hint}" if exc.hint else ""
        _log(deps, "error", f"{exc}. Nothing was decided: run the job again.{hint}")
        return Outcome(ExitCode.RUN_INVALID, gated=False)
    except KeyboardInterrupt:
        _log(deps, "error", "ToolGate was interrupted (the job was cancelled or timed out).")
        return Outcome(130, gated=False)
    except Exception as exc:
        traceback.print_exc(file=deps.err)
        _log(
            deps,
            "error",
            f"internal error ({type(exc).__name__}: {exc}): a bug in ToolGate, not in your "
            "input; please report it with the log of this step.",
        )
        return Outcome(ExitCode.BUG, gated=False)


class _Step(NamedTuple):
    """What every activity runs with."""

    ctx: GitHubContext
    environ: Mapping[str, str]
    deps: Collaborators
    workdir: Path
    agent_python: str | None


def run(ctx: GitHubContext, environ: Mapping[str, str], deps: Collaborators) -> Outcome:
    """Settings checked, the working directory, the plan, then the activity."""
    ctx.require_valid()
    require_runner_temp(ctx)
    for text in ctx.warnings:
        _log(deps, "warning", text)
    workspace = ctx.workspace or Path.cwd()
    workdir = resolve_workdir(workspace, ctx.inputs.working_directory)
    os.chdir(workdir)
    mark_safe_directory(workspace)
    activity = plan(ctx, ctx.inputs)
    agent_python = prepare_agent(ctx, workspace, workdir, deps)
    step = _Step(ctx, environ, deps, workdir, agent_python)
    match activity:
        case Check():
            return do_check(activity, step)
        case RunShard():
            return do_run_shard(activity, step)
        case Merge():
            return do_merge(activity, step)
        case RelayComment():
            return do_relay_comment(activity, step)
        case _:
            assert_never(activity)


def require_runner_temp(ctx: GitHubContext) -> None:
    """``RUNNER_TEMP``, where ToolGate keeps the agent's environment and a fetched
    baseline, must name a folder: an input error otherwise (never a traceback)."""
    temp = ctx.runner_temp
    if temp is not None and not temp.is_dir():
        raise InputError(
            Problem(
                "environment",
                None,
                "RUNNER_TEMP",
                f"{temp} is not a folder: the runner sets RUNNER_TEMP to its temporary "
                "folder; unset it, or point it at a folder that exists",
            ),
            hint="The gate did not start.",
        )


def prepare_agent(
    ctx: GitHubContext, workspace: Path, workdir: Path, deps: Collaborators
) -> str | None:
    """The ``install`` and ``setup`` inputs, before the gate starts
    (:mod:`gate.replay.agentenv`); the interpreter of the agent's environment ``install``
    made, or ``None``. A failure is an input error naming the input: the gate never
    starts."""
    inputs = ctx.inputs
    if not inputs.install and not inputs.setup:
        return None
    from gate.replay.agentenv import prepare

    made = prepare(
        install=inputs.install,
        setup=inputs.setup,
        workdir=workdir,
        workspace=workspace,
        scratch=ctx.runner_temp,
        log=deps.out,
    )
    return str(made.python) if made is not None else None


def do_check(activity: Check, step: _Step) -> Outcome:
    from gate.pipeline import CheckOptions, check
    from gate.pipeline.inputs import load_inputs

    ctx, environ, deps, workdir, agent_python = step
    # Read once here (the output folder and the baseline depend on the config) and
    # handed to the pipeline, which then reads no input file again.
    inputs = load_inputs(
        Path(activity.config), activity.config, agent=True, agent_python=agent_python
    )
    config = inputs.config
    out = _out_folder(ctx, workdir, activity.out, config)
    assert out is not None
    baseline, note = resolve_baseline(activity.baseline, ctx, deps, config)
    opts = CheckOptions(
        config_path=Path(activity.config),
        config_display=activity.config,
        out=out,
        baseline=str(baseline.path) if baseline.path is not None else "none",
        baseline_source=baseline.source,
        baseline_missing=_missing_why(baseline, activity.base_run),
        require_baseline=activity.require_baseline,
        samples=activity.samples,
        shard=activity.shard,
        base_run=activity.base_run,
        github=ctx,  # the pipeline reads no environment for GitHub; publishing is below
        inputs=inputs,
    )
    with _group(deps, "ToolGate check"):
        done = check(opts, environ, deps.out, log=deps.err)
    return _publish(done.results, done.exit_code, step, config, activity, note, done.out)


def do_run_shard(activity: RunShard, step: _Step) -> Outcome:
    from gate.github.publish import write_step_summary
    from gate.pipeline.inputs import redactor_for
    from gate.pipeline.shard import run_shard

    ctx, environ, deps, workdir, agent_python = step
    with _group(deps, "ToolGate run"):
        done = run_shard(
            Path(activity.config),
            config_display=activity.config,
            out=_out_folder(ctx, workdir, activity.out, None),
            samples=activity.samples,
            shard=activity.shard,
            stream=deps.out,
            agent_python=agent_python,
        )
    seal_step(deps)
    problem = write_step_summary(done.results, ctx, redactor=redactor_for(done.config, environ))
    if problem is not None:
        _log(deps, "warning", problem)
    return Outcome(ExitCode.PASS, gated=False, results=done.results, results_path=done.results_path)


def do_merge(activity: Merge, step: _Step) -> Outcome:
    from gate.config import load_config
    from gate.pipeline.inputs import redactor_for
    from gate.pipeline.merge import merge_and_decide
    from gate.results import read_results

    ctx, environ, deps, workdir, _ = step
    config = load_config(Path(activity.config), display=activity.config)
    out = _out_folder(ctx, workdir, activity.out, config)
    assert out is not None
    parts = [
        (_display(folder, workdir), folder / RESULTS_FILE)
        for folder in shard_folders(workdir / activity.folder)
    ]
    baseline, note = resolve_baseline(activity.baseline, ctx, deps, config)
    base = baseline.results
    if base is None and baseline.path is not None:
        base = read_results(baseline.path, display=str(baseline.path))
    with _group(deps, "ToolGate merge"):
        done = merge_and_decide(
            parts,
            config=config,
            baseline=base,
            baseline_source=baseline.source,
            baseline_missing=_missing_why(baseline, ctx.base_run_branch is not None),
            require_baseline=activity.require_baseline,
            out=out,
            redactor=redactor_for(config, environ),
            report_url=ctx.run_url,
            stream=deps.out,
        )
    return _publish(done.results, done.exit_code, step, config, activity, note, out)


def do_relay_comment(activity: RelayComment, step: _Step) -> Outcome:
    from gate.github.workflow_run import relay_comment
    from gate.report.redact import Redactor

    ctx, environ, deps, workdir, _ = step
    seal_step(deps)
    done = relay_comment(
        activity,
        ctx,
        workdir=workdir,
        redactor=Redactor.from_environ([], environ),
        client_factory=deps.client,
        stream=deps.out,
    )
    if done.error is not None:  # the notice is posted; the bad results.json is bad input
        report_input_error(done.error, deps)
        return Outcome(ExitCode.BAD_INPUT, gated=False, summary_notes=done.summary_notes)
    return Outcome(ExitCode.PASS, gated=False, summary_notes=done.summary_notes)


def _publish(
    results: Results,
    exit_code: int,
    step: _Step,
    config: Config,
    activity: Check | Merge,
    note: str,
    out: Path,
) -> Outcome:
    """After a gated activity (``check``, ``merge``): the step sealed, then its summary
    (the report, then the baseline's ``note``), annotations and the comment; the outputs
    are :func:`finish`'s, from the outcome returned. Never raises for a GitHub failure."""
    from gate.github.publish import publish
    from gate.pipeline.inputs import redactor_for

    ctx, environ, deps, _, _ = step
    seal_step(deps)
    comment = activity.comment
    if isinstance(comment, PostComment) and not config.reporting.comment:
        comment = SkipComment("not commenting: reporting.comment is false")
    publish(
        results,
        ctx,
        comment=comment,
        redactor=redactor_for(config, environ),
        results_path=_rel(ctx, out / RESULTS_FILE),
        annotations=config.reporting.annotations,
        outputs=False,
        summary_notes=(note,),
        client_factory=deps.client,
        stream=deps.out,
    )
    return Outcome(
        exit_code,
        gated=True,
        results=results,
        results_path=out / RESULTS_FILE,
        report_path=out / REPORT_FILE,
    )


# ─── the working directory ────────────────────────────────────────────────────


def resolve_workdir(workspace: Path, working_directory: str) -> Path:
    """``workspace`` + ``working-directory``; refused outside the workspace."""
    root = workspace.resolve()
    wd = (root / working_directory).resolve()
    if wd != root and root not in wd.parents:
        raise _bad_input(
            "working-directory", f"{working_directory!r} leaves the workspace ({root})"
        )
    if not wd.is_dir():
        raise _bad_input(
            "working-directory", f"{working_directory!r} is not a folder of the workspace"
        )
    return wd


def _bad_input(name: str, message: str) -> InputError:
    """The error for the ``with:`` input ``name``."""
    return InputError(Problem(INPUTS_FILE, None, name, message))


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


def shard_folders(root: Path) -> list[Path]:
    """Every folder under ``root`` (itself included) holding a results.json, sorted —
    where actions/download-artifact puts one folder per shard artifact."""
    if not root.is_dir():
        raise _bad_input("merge", f"{root} is not a folder")
    found = sorted({p.parent for p in root.rglob(RESULTS_FILE) if p.is_file()})
    if not found:
        raise _bad_input("merge", f"no {RESULTS_FILE} under {root}")
    return found


def _out_folder(
    ctx: GitHubContext, workdir: Path, out: str | None, config: Config | None
) -> Path | None:
    """The results folder: the ``out`` input, else the config's ``reporting.out``; refused
    outside the workspace. The runner mounts only the workspace (and the temp folders
    under other paths) into the container, so a folder elsewhere — ``${{ runner.temp }}``
    becomes ``/github/runner_temp`` in here — would give ``results-path`` and
    ``report-path`` that do not exist for the next step."""
    workspace = (ctx.workspace or Path.cwd()).resolve()
    if out:
        path = (workdir / out).resolve()
        where, name = INPUTS_FILE, "out"
    elif config is not None:
        path = config.resolve(config.reporting.out).resolve()
        where, name = str(config.source or "toolgate.yml"), "reporting.out"
    else:
        return None
    if path != workspace and workspace not in path.parents:
        raise InputError(
            Problem(
                where,
                None,
                name,
                f"{path} is outside the workspace ({workspace}): the next step could not "
                "find results-path there. Use a folder of the repository (e.g. "
                "`toolgate-out`) and upload it from there.",
            )
        )
    return path


# ─── the baseline ─────────────────────────────────────────────────────────────


def _missing_why(baseline: BaselineChoice, base_run: bool) -> str | None:
    """Why a run has no baseline, for its first line (``None``: it has one)."""
    if baseline.path is not None or baseline.results is not None:
        return None
    why = baseline.missing or "no baseline"
    return f"{why} (this base run starts its history)" if base_run else why


def resolve_baseline(
    baseline: BaselinePlan, ctx: GitHubContext, deps: Collaborators, config: Config
) -> tuple[BaselineChoice, str]:
    """The baseline to compare with, and the step summary's line about it."""
    from gate.github.artifacts import BaselineChoice

    match baseline:
        case NoBaseline():
            none = BaselineChoice(
                None,
                None,
                "none (`baseline: none`)",
                missing="no baseline (the baseline input is none)",
            )
            return none, f"**Baseline:** {none.source}."
        case FileBaseline(path=path):
            return BaselineChoice(Path(path), None, f"file {path}"), f"**Baseline:** file `{path}`."
        case AutoBaseline():
            return _auto_baseline(baseline, ctx, deps, config)
        case _:
            assert_never(baseline)


def _auto_baseline(
    baseline: AutoBaseline, ctx: GitHubContext, deps: Collaborators, config: Config
) -> tuple[BaselineChoice, str]:
    """``baseline: auto`` (:func:`gate.github.artifacts.find_baseline`); its warnings and
    notices logged as annotations and quoted in the summary line."""
    from gate.github.artifacts import find_baseline, search_for

    search = (
        search_for(ctx, deps.client, now=deps.now, artifact_name=config.baseline.artifact)
        if baseline.searchable
        else None
    )
    # Outside the workspace: a fetched baseline is scratch, not part of the repository.
    scratch = tempfile.mkdtemp(prefix="toolgate-baseline-", dir=ctx.runner_temp)
    choice = find_baseline(
        config,
        dest=Path(scratch) / RESULTS_FILE,
        pr=baseline.pr,
        dataset_sha256=_dataset_sha(config),
        search=search,
        now=deps.now,
    )
    for text in choice.warnings:
        _log(deps, "warning", text, title="ToolGate baseline")
    for text in choice.notices:
        _log(deps, "notice", text, title="ToolGate baseline")
    lines = [f"**Baseline:** {choice.source}."]
    lines += [f"> {t}" for t in (*choice.warnings, *choice.notices)]
    return choice, "\n".join(lines)


def _dataset_sha(config: Config) -> str | None:
    """The head's dataset hash: the pin when there is one (a run refuses a dataset that
    differs from it), else computed; ``None`` when it cannot be read (the run says why)."""
    if config.dataset.sha256:
        return str(config.dataset.sha256)
    try:
        from gate.dataset import load_dataset

        path = config.resolve(config.dataset.path)
        return str(load_dataset(path, root=config.root).sha256)
    except ToolGateError:
        return None


# ─── finishing the step ───────────────────────────────────────────────────────


def finish(ctx: GitHubContext, deps: Collaborators, outcome: Outcome) -> int:
    """The outputs (once), the rest of the step summary, ``fail-on``; the exit code."""
    from gate.github.workflow import write_outputs

    seal_step(deps)  # (the activity sealed it already, unless it failed)
    if ctx.output_path is not None:
        try:
            write_outputs(ctx.output_path, outputs_of(ctx, outcome))
        except OSError as exc:
            _log(deps, "warning", f"could not write the outputs: {exc.strerror or exc}")
    summary = list(outcome.summary_notes)
    code = outcome.exit_code
    if code == ExitCode.GATE_FAILED and ctx.inputs.fail_on is FailOn.NEVER:
        text = (
            "The gate failed, but `fail-on: never` keeps this step green (report-only "
            "rollout). Set `fail-on: gate` to block merges."
        )
        _log(deps, "warning", text)
        summary.append(f"> ⚠️ {text}")
        code = ExitCode.PASS
    problem = append_summary(
        ctx.step_summary_path, "\n\n".join(s.rstrip() for s in summary if s.strip())
    )
    if problem is not None:
        _log(deps, "warning", problem)
    return int(code)


def outputs_of(ctx: GitHubContext, outcome: Outcome) -> dict[str, str]:
    """Every output, from the outcome alone: action.yml's nine (``verdict`` is ``error``
    unless the activity finished; ``not-gated`` for ``run`` and ``comment``) and, with
    results, :func:`gate.github.workflow.outputs_for`'s."""
    from gate.github.workflow import outputs_for

    values = dict.fromkeys(OUTPUTS, "0") | {"verdict": "error", "passed": "false"}
    values |= {"compared": "false", "results-path": "", "report-path": ""}
    results = outcome.results
    invalid = outcome.exit_code == ExitCode.RUN_INVALID and results is not None
    if outcome.exit_code not in (ExitCode.PASS, ExitCode.GATE_FAILED) and not invalid:
        return values
    if results is None:
        values["verdict"] = "error" if outcome.gated else "not-gated"
        return values
    values.update(outputs_for(results, _rel(ctx, outcome.results_path)))
    values["report-path"] = _rel(ctx, outcome.report_path)
    if (outcome.gated and results.verdict is None) or invalid:
        # a run that decided nothing: its reports are there (results-path, report-path,
        # summary says what happened), its verdict is "error"
        values["verdict"] = "error"
        values["passed"] = "false"
    return values


def append_summary(path: Path | None, text: str) -> str | None:
    """Append Markdown to the step summary, within the runner's 1 MiB limit; returns what
    went wrong, if anything."""
    if path is None or not text.strip():
        return None
    from gate.github.workflow import append_step_summary, step_summary_room

    room = step_summary_room(path) - 256
    data = text.encode("utf-8")
    if len(data) > room:
        note = "\n\n> ✂️ The rest did not fit the step summary; see report.md.\n"
        keep = max(0, room - len(note.encode("utf-8")))
        text = data[:keep].decode("utf-8", "ignore") + note
    # A blank line first: what is there may end in an HTML block (</details>).
    why = append_step_summary(path, "\n" + text)
    return None if why is None else f"could not write the step summary: {why}"


def _rel(ctx: GitHubContext, path: Path | None) -> str:
    """``path`` relative to the repository root (the workspace), as the next step needs it."""
    if path is None or not path.is_file():
        return ""
    workspace = (ctx.workspace or Path.cwd()).resolve()
    try:
        return path.resolve().relative_to(workspace).as_posix()
    except ValueError:
        return path.resolve().as_posix()


def _display(path: Path, workdir: Path) -> str:
    try:
        return path.resolve().relative_to(workdir.resolve()).as_posix()
    except ValueError:
        return str(path)


# ─── the log ──────────────────────────────────────────────────────────────────


def report_input_error(exc: InputError, deps: Collaborators) -> None:
    """Every problem on stderr; the first ten as ``::error`` annotations."""
    deps.err.write(f"toolgate: error:\n{exc.render()}\n")
    deps.err.flush()
    for p in exc.problems[:10]:
        msg = f"{p.field}: {p.message}" if p.field else p.message
        if p.file not in (INPUTS_FILE, "environment"):
            msg = f"{p.file}{f':{p.line}' if p.line else ''}: {msg}"
        _log(deps, "error", msg, title="ToolGate input error")


def _log(deps: Collaborators, level: str, text: str, *, title: str = "ToolGate") -> None:
    print(annotation(level, text, title=title), file=deps.out, flush=True)


@contextmanager
def _group(deps: Collaborators, title: str) -> Iterator[None]:
    print(f"::group::{title}", file=deps.out, flush=True)
    try:
        yield
    finally:
        print("::endgroup::", file=deps.out, flush=True)


@contextmanager
def _sigterm_unwinds() -> Iterator[None]:
    """SIGTERM (a cancelled job, ``docker stop``) unwinds like Ctrl-C, so agent workers
    are stopped and the outputs still written."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


# ─── the supervisor: the step's exit comes from a run that finished ───────────

CHILD_ENV = "TOOLGATE_ACTION_DONE_FD"
"""Set by :func:`supervise` for the process that does the work: the pipe it writes its
exit code to once :func:`main` has returned (a file descriptor it alone holds)."""


def supervise() -> int:
    """The container's entrypoint: run :func:`main` in a child process and exit with its
    code only when it finished. Code from the pull request (a ``python`` agent calling
    ``os._exit(0)``, a crashing C extension) runs in that process and can end it at any
    moment; a child that ended without finishing — whatever its exit code — gives
    ``verdict: error`` and exit code 4 here, never a green step without results."""
    import subprocess

    if os.environ.get(CHILD_ENV):
        # The variable goes before anything else runs, and the pipe is not inherited by
        # what the gate starts: the agent under test cannot say "finished" for it.
        done_fd = int(os.environ.pop(CHILD_ENV))
        os.set_inheritable(done_fd, False)
        code = main()
        with contextlib.suppress(OSError):
            os.write(done_fd, str(code).encode())
            os.close(done_fd)
        return code
    seal = StepSeal.start(os.environ)  # the parent adopts whatever outlives the child
    read_fd, write_fd = os.pipe()
    child = subprocess.Popen(
        [sys.executable, "-P", "-m", "gate.action"],
        env={**os.environ, CHILD_ENV: str(write_fd)},
        pass_fds=(write_fd,),
    )
    os.close(write_fd)

    def forward(signum: int, frame: object) -> None:
        child.send_signal(signum)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, forward)
    code = child.wait()
    os.set_blocking(read_fd, False)  # a process the child forked may hold the other end
    try:
        said = os.read(read_fd, 64)
    except OSError:
        said = b""
    finally:
        os.close(read_fd)
    finished = said.strip() == str(code).encode()
    if finished or code in (130, 128 + signal.SIGTERM):  # (cancelled: the child said so)
        from gate.replay.reaper import end_all

        end_all()  # what a fork of the child left running (the child ended its own)
        return code
    for text in seal.close():
        print(annotation("warning", text, title="ToolGate"), flush=True)
    ctx = GitHubContext.from_environ(os.environ)
    text = (
        f"ToolGate ended without finishing (exit code {code}): something in its process - "
        "the agent under test, a native extension - ended it. The run is not valid."
    )
    print(annotation("error", text, title="ToolGate"), flush=True)
    if ctx.output_path is not None:
        from gate.github.workflow import write_outputs

        with contextlib.suppress(OSError):
            write_outputs(
                ctx.output_path,
                outputs_of(ctx, Outcome(ExitCode.RUN_INVALID, gated=True)),
            )
    return int(ExitCode.RUN_INVALID)


if __name__ == "__main__":
    raise SystemExit(supervise())
