"""The Action's image, built from the Dockerfile and run exactly as the Actions runner runs
a Docker container action; every check names what broke.

    python -m tests.image.check_image [--dockerfile PATH] [--image REF]
        [--base auto|official|stand-in] [--build-cache] [--keep] [--start-runs N]
        [--report FILE]

``--dockerfile`` builds another Dockerfile (a broken copy, to see what the test says);
``--image`` tests an image built elsewhere (the release workflow's, pulled by digest).

1. **Engine** — the running Docker engine, else one started here and stopped at the end
   by its process id (:mod:`tests.image.engine`).
2. **Base** — the Dockerfile's ``FROM``, pulled; when no registry answers, a stand-in made
   with debootstrap on the same Debian release (:mod:`tests.image.base`). The output says
   which.
3. **Build** — ``docker build`` of the Dockerfile, unchanged (``--no-cache``: the time is a
   cold build's, the base already present). A failed build names its step and the lines
   that say why.
4. **The image** — its ENTRYPOINT (absolute exec form running ``-P -m gate.action``, no
   CMD, no USER, no WORKDIR), its Python against ``pyproject.toml``'s ``requires-python``,
   ToolGate's packages at the lock's versions (``pip check`` clean), ``gate`` in
   ``/opt/toolgate``, git with ``safe.directory`` in the system config (on a repository
   owned by another uid), and neither a compiler nor test or bench files.
5. **Steps** — ``docker run`` as the runner builds it (:func:`tests.action.runner_contract.
   docker_run_command`: its five folders mounted, the Docker socket, ``-e NAME`` for the
   runner's environment with its paths translated, ``INPUT_*`` with hyphens kept, working
   directory ``/github/workspace``, the workspace owned by uid 1001), against a local fake
   of the GitHub API:

   * a push on ``examples/support-agent`` (``fail-on: never``; ``--start-runs`` of them,
     3 by default, for the start-up figures): exit 0, the outputs, the results uploaded as
     the base branch's artifact (the base history);
   * a pull request on the regressed build of it (``baseline: auto``): exit 1, the
     artifact found and compared with, comment.md written and the comment posted, the step
     summary and the outputs through the file commands, an annotation on the dataset;
   * ``install: requirements.txt`` and ``setup:`` with an agent that imports packages of
     its own: exit 0, git working in the step, ToolGate's environment unchanged;
   * the same agent without ``install``: exit 4, the agent's ModuleNotFoundError.

6. **Figures** — the build time, the image's size (and its layers'), a bare container's
   start, and the time from ``docker run`` to the first sample of the push run: the first
   line of ``toolgate-out/runs.jsonl`` (written and flushed as each case-sample finishes)
   seen on the host through the workspace mount.

The containers use the host's network (``--network host``): the engine started here has
no bridge, and the fake GitHub API listens on the loopback address. Everything else is the
runner's command line. ``TOOLGATE_SKIP_IMAGE=1`` skips the test, saying so (for a machine
without Docker; CI never sets it). Exit code 0 when every check passed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version
from ruamel.yaml import YAML

from tests.action.dockerfile import BaseImage, base_image, entrypoint, instructions
from tests.action.harness import BASE_SHA, HEAD_SHA, REPOSITORY, agent_repo, pr_event, push_event
from tests.action.runner_contract import (
    ACTION,
    RunnerHost,
    StepResult,
    docker_run_command,
    prepare_step,
    read_step,
)
from tests.image.base import STAND_IN_LABEL, BaseError, provide
from tests.image.engine import Engine, EngineError, connect
from tests.servers import github_actions_routes as routes
from tests.servers.github_server import GitHubServer

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "support-agent"
TOKEN = "ghs_image_test_token"
LABEL = "toolgate-image-test"
WORKSPACE_UID = 1001
"""The runner's user on GitHub-hosted runners: the checked-out workspace belongs to it."""
STEP_TIMEOUT_S = 300.0
SETUP = (
    'python -c "import acme_phrasing" && echo ok > setup-ran.txt'
    " && git rev-parse HEAD > setup-git-head.txt"
    " && {python} -m pip list --format=freeze > toolgate-env.txt"
)
"""The ``setup`` input of the install run: the agent's environment is active, git works in
the workspace, and ToolGate's interpreter (``{python}``) lists its packages after the
install, to compare with a fresh container's."""


# ─── checks and their messages ────────────────────────────────────────────────


@dataclass
class Report:
    """Every check's outcome, and the figures."""

    passed: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)

    def check(self, name: str, ok: bool, why: str = "") -> bool:
        """Record ``name``; ``why`` is the failure's message (what broke)."""
        if ok:
            self.passed.append(name)
            say(f"  ok    {name}")
        else:
            self.failed.append(f"{name}: {why}" if why else name)
            say(f"  FAIL  {name}: {why}")
        return ok

    def fail(self, name: str, why: str) -> None:
        self.check(name, False, why)


def say(text: str) -> None:
    print(text, flush=True)


# ─── the image's configuration ────────────────────────────────────────────────


def check_config(
    config: dict[str, Any], dockerfile_entrypoint: list[str] | None, r: Report
) -> None:
    """ENTRYPOINT, CMD, USER, WORKDIR and PYTHONPATH as GitHub's rules and the Dockerfile
    say."""
    ep = config.get("Entrypoint") or []
    r.check(
        "the ENTRYPOINT starts gate.action",
        entrypoint_problem(ep) is None,
        f"the image's ENTRYPOINT {ep!r} {entrypoint_problem(ep)}",
    )
    if dockerfile_entrypoint is not None:
        r.check(
            "the image's ENTRYPOINT is the Dockerfile's",
            ep == dockerfile_entrypoint,
            f"the image runs {ep!r}, the Dockerfile says {dockerfile_entrypoint!r}",
        )
    cmd = config.get("Cmd") or []
    r.check(
        "no CMD (no arguments added to the entrypoint)",
        not cmd,
        f"the image has CMD {cmd!r}, which the runner passes to the ENTRYPOINT",
    )
    user = config.get("User") or ""
    r.check(
        "runs as root (no USER)",
        user in ("", "root", "0", "0:0"),
        f"USER {user!r}: only root can write the runner's workspace",
    )
    workdir = config.get("WorkingDir") or ""
    r.check(
        "no WORKDIR",
        workdir in ("", "/"),
        f"WORKDIR {workdir!r}: the runner mounts the workspace over it",
    )
    env = dict(e.split("=", 1) for e in config.get("Env") or [] if "=" in e)
    r.check(
        "PYTHONPATH=/opt/toolgate",
        env.get("PYTHONPATH") == "/opt/toolgate",
        f"PYTHONPATH is {env.get('PYTHONPATH')!r}: gate.action cannot be imported",
    )


def entrypoint_problem(argv: list[str]) -> str | None:
    """Why ``argv`` is not an entrypoint that starts ToolGate, or ``None``."""
    if not argv:
        return "is missing: the runner would start the base image's CMD, not ToolGate"
    if not argv[0].startswith("/"):
        return "does not start gate.action by an absolute path (exec form, no shell)"
    if not Path(argv[0]).name.startswith("python"):
        return f"does not start gate.action: {argv[0]} is not a Python interpreter"
    if argv[-2:] != ["-m", "gate.action"]:
        return "does not start gate.action (`-m gate.action` must end it)"
    if "-P" not in argv[1:-2]:
        return "starts gate.action without -P: the repository could shadow the gate package"
    return None


# ─── what is inside the image ─────────────────────────────────────────────────

FACTS = r"""
py="$1"
fact() { printf '%s=%s\n' "$1" "$(sh -c "$2" "$py" 2>&1 | tail -n 1)"; }
fact python_version '"$0" -c "import sys; print(\"%d.%d.%d\" % sys.version_info[:3])"'
fact gate_file 'cd / && "$0" -P -c "import gate.action; print(gate.action.__file__)"'
echo "opt_toolgate=$(ls -A /opt/toolgate 2>&1 | tr '\n' ' ')"
find /opt/toolgate \( -name tests -o -name bench -o -name 'test_*.py' -o -name conftest.py \) \
    2>/dev/null | sed 's/^/test_file=/'
fact git_version 'git --version'
echo "git_safe=$(git config --system --get-all safe.directory 2>&1 | tr '\n' ' ')"
fact git_head 'git rev-parse HEAD'
for c in gcc cc c++ g++ clang tcc; do p="$(command -v "$c")" && echo "compiler=$p"; done
ls /usr/bin/*-gcc /usr/bin/*-gcc-[0-9]* /usr/bin/*-g++ 2>/dev/null | sed 's/^/compiler=/'
"$py" -m pip list --format=freeze 2>/dev/null | sed 's/^/pkg=/'
if out="$("$py" -m pip check 2>&1)"; then echo pip_check=ok
else echo "pip_check=$(echo "$out" | head -n 3 | tr '\n' ' ')"; fi
"""


def facts(engine: Engine, image: str, python: str, repo: Path) -> dict[str, list[str]]:
    """Run :data:`FACTS` in a container of ``image`` (its shell, not its entrypoint), with
    ``repo`` (owned by another uid) mounted as the workspace: ``key → values``."""
    done = engine.docker(
        "run",
        "--rm",
        "--network",
        "none",
        "--entrypoint",
        "/bin/sh",
        "-v",
        f"{repo}:/github/workspace",
        "-w",
        "/github/workspace",
        image,
        "-c",
        FACTS,
        "sh",
        python,
        timeout=180,
    )
    found: dict[str, list[str]] = {}
    for line in done.stdout.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            found.setdefault(key, []).append(value)
    if done.returncode != 0 and not found:
        found["error"] = [done.stderr.strip()[-500:] or f"exit code {done.returncode}"]
    return found


def check_facts(
    f: dict[str, list[str]],
    *,
    base: BaseImage,
    official: bool,
    repo_head: str,
    lock: dict[str, str],
    requires_python: SpecifierSet,
    ci_pythons: list[str],
    r: Report,
) -> None:
    def one(key: str) -> str:
        return (f.get(key) or [""])[0].strip()

    if "error" in f:
        r.fail("a shell runs in the image", f["error"][0])
        return
    version = one("python_version")
    ok_version = bool(re.fullmatch(r"\d+\.\d+\.\d+", version))
    r.check(
        f"the image's Python ({version or 'none'}) is in requires-python {requires_python}",
        ok_version and Version(version) in requires_python,
        f"the ENTRYPOINT's interpreter says {version!r}",
    )
    if ok_version:
        minor = ".".join(version.split(".")[:2])
        r.check(
            f"the CI suite runs on Python {minor}",
            minor in ci_pythons,
            f"no job of .github/workflows/ci.yml runs Python {minor} ({ci_pythons})",
        )
        if official:
            wanted = f"{base.python[0]}.{base.python[1]}"
            r.check(
                f"the image's Python is the FROM's {wanted}",
                minor == wanted,
                f"FROM {base.reference} but the image runs Python {version}",
            )
    gate_file = one("gate_file")
    r.check(
        "the gate package is in /opt/toolgate",
        gate_file == "/opt/toolgate/gate/action.py",
        f"gate package missing from /opt/toolgate (the Dockerfile's COPY of gate): "
        f"/opt/toolgate holds [{one('opt_toolgate')}]; importing gate.action gave {gate_file!r}",
    )
    extra = sorted(set(one("opt_toolgate").split()) - {"gate", "requirements.lock"})
    tests = f.get("test_file", [])
    r.check(
        "no test or bench files in the image",
        not tests and not extra,
        f"/opt/toolgate holds {tests or extra} (.dockerignore must keep them out)",
    )
    git = one("git_version")
    r.check(
        "git is installed",
        git.startswith("git version"),
        f"git is missing from the image (`git --version`: {git!r})",
    )
    safe = one("git_safe").split()
    r.check(
        "safe.directory '*' in the system git config",
        "*" in safe,
        f"`git config --system safe.directory` is {safe!r}",
    )
    head = one("git_head")
    r.check(
        "git reads a workspace owned by another uid",
        head == repo_head,
        f"`git rev-parse HEAD` in the mounted workspace gave {head!r}",
    )
    compilers = f.get("compiler", [])
    r.check("no compiler in the image", not compilers, f"found {compilers}")
    installed: dict[str, str] = {}
    for line in f.get("pkg", []):
        name, _, version_ = line.partition("==")
        installed[canonicalize_name(name)] = version_
    wrong = [
        f"{name}=={want} (installed: {installed.get(name, 'none')})"
        for name, want in lock.items()
        if installed.get(name) is None or Version(installed[name]) != Version(want)
    ]
    r.check("ToolGate's packages are the lock's", not wrong, f"not as locked: {wrong}")
    r.check("pip check", one("pip_check") == "ok", one("pip_check"))


# ─── the steps ────────────────────────────────────────────────────────────────


@dataclass
class Run:
    result: StepResult
    seconds: float
    first_sample_s: float | None


def git_repo(ws: Path) -> str:
    """Commit ``ws`` as the checkout would leave it; its HEAD."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(ws.parent),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "octocat",
        "GIT_AUTHOR_EMAIL": "octocat@example.com",
        "GIT_COMMITTER_NAME": "octocat",
        "GIT_COMMITTER_EMAIL": "octocat@example.com",
    }
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "base"]):
        subprocess.run(["git", *args], cwd=ws, env=env, check=True, capture_output=True)
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ws, env=env, check=True, capture_output=True, text=True
    )
    return head.stdout.strip()


def give_to_runner_user(root: Path) -> None:
    """The runner's folders belong to the runner's user (uid 1001 on hosted runners), not
    to the container's root. Not root here: they are this user's already."""
    if os.geteuid() != 0:
        return
    for path in [root, *root.rglob("*")]:
        os.lchown(path, WORKSPACE_UID, WORKSPACE_UID)


def example_host(tmp: Path, name: str) -> tuple[RunnerHost, str]:
    host = RunnerHost(tmp / name)
    for item in EXAMPLE.iterdir():
        if item.name in ("toolgate-out", "__pycache__"):
            continue
        if item.is_dir():
            shutil.copytree(item, host.workspace / item.name)
        else:
            shutil.copy2(item, host.workspace / item.name)
    head = git_repo(host.workspace)
    give_to_runner_user(host.root)
    return host, head


def agent_host(tmp: Path, name: str) -> tuple[RunnerHost, str]:
    host = RunnerHost(tmp / name)
    agent_repo(host.workspace)
    head = git_repo(host.workspace)
    give_to_runner_user(host.root)
    return host, head


@contextmanager
def first_line(path: Path) -> Iterator[Callable[[], float | None]]:
    """Watch ``path`` from now on; yields a function giving the monotonic time its first
    complete line was seen (``None``: never)."""
    seen: list[float] = []
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            try:
                with path.open("rb") as f:
                    if b"\n" in f.read(1 << 20):
                        seen.append(time.monotonic())
                        return
            except OSError:
                pass
            time.sleep(0.005)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    try:
        yield lambda: seen[0] if seen else None
    finally:
        stop.set()
        thread.join(timeout=2)


def run_step(
    engine: Engine,
    image: str,
    host: RunnerHost,
    gh: GitHubServer,
    *,
    with_: dict[str, str],
    event_name: str,
    event: dict[str, Any],
    sha: str,
    watch: Path | None = None,
) -> Run:
    """The step in a container of ``image``, started with the runner's ``docker run``."""
    step = prepare_step(
        host,
        with_=with_,
        event_name=event_name,
        event=event,
        api_url=gh.api_url,
        token=TOKEN,
        repository=REPOSITORY,
        sha=sha,
    )
    give_to_runner_user(host.root)
    name = f"{LABEL}-{uuid.uuid4().hex[:8]}"
    argv, step_env = docker_run_command(
        step, image, name=name, label=LABEL, network="host", docker_socket=engine.socket
    )
    # The client's own settings, then the step's variables, whose values `-e NAME` passes.
    client_env = {**engine.env, "DOCKER_CONFIG": client_config(engine), **step_env}
    with first_line(watch or host.root / ".never") as first:
        t0 = time.monotonic()
        try:
            proc = subprocess.run(
                argv, env=client_env, capture_output=True, text=True, timeout=STEP_TIMEOUT_S
            )
            code, out, err = proc.returncode, proc.stdout, proc.stderr
        except subprocess.TimeoutExpired as exc:
            engine.docker("kill", name)
            code = -1
            out = _text(exc.stdout)
            err = _text(exc.stderr) + f"\n(stopped after {STEP_TIMEOUT_S:.0f} s)"
        seconds = time.monotonic() - t0
        seen = first()
    return Run(read_step(step, code, out, err), seconds, None if seen is None else seen - t0)


def client_config(engine: Engine) -> str:
    """The docker client's config folder: the step's ``HOME`` is a container path."""
    if "DOCKER_CONFIG" in engine.env:
        return engine.env["DOCKER_CONFIG"]
    return str(Path(engine.env.get("HOME") or Path.home()) / ".docker")


def _text(data: bytes | str | None) -> str:
    if data is None:
        return ""
    return data if isinstance(data, str) else data.decode("utf-8", "replace")


def tail(run: Run, n: int = 12) -> str:
    lines = [ln for ln in (run.result.stdout + "\n" + run.result.stderr).splitlines() if ln]
    return " | ".join(lines[-n:])


def check_outputs(run: Run, r: Report, what: str, *, paths: tuple[str, ...] = ()) -> None:
    """Every output of action.yml written once; the path outputs exist for the next step."""
    res = run.result
    missing = sorted(set(ACTION["outputs"]) - set(res.outputs))
    twice = sorted({n for n in res.output_names if res.output_names.count(n) > 1})
    r.check(
        f"{what}: every output of action.yml, once, through GITHUB_OUTPUT",
        not missing and not twice,
        f"missing {missing}, written twice {twice}",
    )
    for name in paths:
        value = res.outputs.get(name, "")
        r.check(
            f"{what}: {name} exists for the next step",
            bool(value) and not value.startswith("/") and (res.workspace / value).is_file(),
            f"{name}={value!r}",
        )
    r.check(f"{what}: no traceback", "Traceback" not in res.stderr + res.stdout, tail(run))


def steps(
    engine: Engine,
    image: str,
    python: str,
    tmp: Path,
    packages: list[str],
    r: Report,
    *,
    start_runs: int = 3,
) -> None:
    owner, repo = REPOSITORY.split("/")
    gh = GitHubServer(owner=owner, repo=repo, register=[routes.register])
    gh.add_token(TOKEN, "github-actions[bot]", kind="app")
    gh.add_pull(7, base_sha=BASE_SHA, head_sha=HEAD_SHA)
    with gh:
        # 1. push to main: the base branch's results, kept as its artifact; the start-up
        #    figures are the median over `start_runs` such pushes, each in a fresh workspace
        pushes: list[Run] = []
        for i in range(max(1, start_runs)):
            host, _ = example_host(tmp, f"push-{i}")
            out = host.workspace / "toolgate-out"
            say(f"push run {i + 1}/{start_runs} (examples/support-agent, fail-on: never) ...")
            pushes.append(
                run_step(
                    engine,
                    image,
                    host,
                    gh,
                    with_={"fail-on": "never"},
                    event_name="push",
                    event=push_event(BASE_SHA),
                    sha=BASE_SHA,
                    watch=out / "runs.jsonl",
                )
            )
        push = pushes[0]
        out = push.result.workspace / "toolgate-out"
        firsts = [p.first_sample_s for p in pushes if p.first_sample_s is not None]
        r.figures["push_step_s"] = round(statistics.median(p.seconds for p in pushes), 2)
        r.figures["run_to_first_sample_s"] = round(statistics.median(firsts), 2) if firsts else None
        r.figures["run_to_first_sample_all_s"] = [round(x, 2) for x in firsts]
        res = push.result
        r.check("push: exit code 0", res.code == 0, f"exit code {res.code}: {tail(push)}")
        r.check(
            "push: verdict passed",
            res.outputs.get("verdict") == "passed",
            f"verdict {res.outputs.get('verdict')!r}",
        )
        check_outputs(push, r, "push", paths=("results-path", "report-path"))
        r.check(
            "push: a first sample was recorded",
            len(firsts) == len(pushes),
            f"runs.jsonl got a line in {len(firsts)} of {len(pushes)} push runs",
        )
        results = out / "results.json"
        if results.is_file():
            st = routes.state(gh)
            wf = st.add_workflow("toolgate.yml", "ToolGate")
            run = st.add_run(wf, head_sha=BASE_SHA, now=int(time.time()))
            st.add_artifact(run, "toolgate-results", {"results.json": results.read_bytes()})

        # 2. the pull request, on the regressed agent, against that history
        host, _ = example_host(tmp, "pull-request")
        say("pull-request run (toolgate.regressed.yml, baseline: auto) ...")
        pr = run_step(
            engine,
            image,
            host,
            gh,
            with_={"config": "toolgate.regressed.yml"},
            event_name="pull_request",
            event=pr_event(),
            sha=HEAD_SHA,
        )
        r.figures["pr_step_s"] = round(pr.seconds, 2)
        res = pr.result
        r.check(
            "pull request: exit code 1 (the gate failed)",
            res.code == 1,
            f"exit code {res.code}: {tail(pr)}",
        )
        r.check(
            "pull request: verdict failed",
            res.outputs.get("verdict") == "failed",
            f"verdict {res.outputs.get('verdict')!r}",
        )
        mnc = res.outputs.get("must-not-call-violations", "0")
        r.check(
            "pull request: the must-not-call violation counted",
            mnc not in ("", "0"),
            f"must-not-call-violations={mnc!r}",
        )
        check_outputs(pr, r, "pull request", paths=("results-path", "report-path"))
        summary = res.summary.decode("utf-8", "replace")
        r.check(
            "pull request: the step summary through GITHUB_STEP_SUMMARY",
            "ToolGate" in summary,
            f"{len(res.summary)} bytes",
        )
        r.check(
            "pull request: compared with the push run's artifact",
            "**Baseline:** artifact toolgate-results" in summary,
            "the step summary has no artifact baseline line: "
            + next((ln for ln in summary.splitlines() if "Baseline" in ln), "none"),
        )
        comment_md = host.workspace / "toolgate-out" / "comment.md"
        body = comment_md.read_text("utf-8") if comment_md.is_file() else ""
        r.check(
            "pull request: comment.md written",
            body.startswith("<!-- toolgate:comment"),
            f"{comment_md.relative_to(host.root)}: {body[:80]!r}",
        )
        posted = gh.comments_on(7)
        r.check(
            "pull request: the comment posted, once",
            len(posted) == 1,
            f"{len(posted)} comments on the pull request",
        )
        files = {a.file for a in res.annotations if a.level == "error" and a.file}
        r.check(
            "pull request: an ::error annotation on dataset.jsonl",
            "dataset.jsonl" in files,
            f"annotation files: {sorted(files)}",
        )

        # 3. install and setup: the agent's own packages, ToolGate's environment unchanged
        host, head = agent_host(tmp, "install")
        say("install + setup run (an agent importing packages of its own) ...")
        inst = run_step(
            engine,
            image,
            host,
            gh,
            with_={
                "config": "toolgate.agent.yml",
                "baseline": "none",
                "install": "requirements.txt",
                "setup": SETUP.format(python=python),
            },
            event_name="pull_request",
            event=pr_event(),
            sha=HEAD_SHA,
        )
        res = inst.result
        ws = host.workspace
        r.check("install: exit code 0", res.code == 0, f"exit code {res.code}: {tail(inst)}")
        r.check(
            "install: the agent's packages installed",
            "Successfully installed acme-phrasing-2.0 acme-support-sdk-1.0" in res.stdout,
            tail(inst),
        )
        r.check("setup: ran before the gate", (ws / "setup-ran.txt").is_file(), tail(inst))
        git_head = _read(ws / "setup-git-head.txt")
        r.check(
            "setup: git works in the mounted workspace",
            git_head == head,
            f"`git rev-parse HEAD` in the step gave {git_head!r}, expected {head}",
        )
        after = sorted(_read(ws / "toolgate-env.txt").splitlines())
        agents = [p for p in after if p.lower().startswith("acme")]
        r.check(
            "install: ToolGate's environment unchanged",
            bool(after) and after == sorted(packages) and not agents,
            "setup did not list ToolGate's packages (it failed: see above)"
            if not after
            else f"after the install ToolGate's interpreter lists {len(after)} packages "
            f"(a fresh container: {len(packages)}); the agent's there: {agents}; "
            f"differences: {sorted(set(after) ^ set(packages))[:6]}",
        )
        check_outputs(inst, r, "install")

        # 4. the same agent without install: the run is not valid
        host, _ = agent_host(tmp, "no-install")
        say("run without install (the agent cannot import its packages) ...")
        bare = run_step(
            engine,
            image,
            host,
            gh,
            with_={"config": "toolgate.agent.yml", "baseline": "none"},
            event_name="pull_request",
            event=pr_event(),
            sha=HEAD_SHA,
        )
        res = bare.result
        r.check(
            "without install: exit code 4", res.code == 4, f"exit code {res.code}: {tail(bare)}"
        )
        r.check(
            "without install: verdict error",
            res.outputs.get("verdict") == "error",
            f"verdict {res.outputs.get('verdict')!r}",
        )
        r.check(
            "without install: the agent's ModuleNotFoundError in the log",
            "ModuleNotFoundError: No module named 'acme_phrasing'" in res.stdout,
            tail(bare),
        )


def _read(path: Path) -> str:
    return path.read_text("utf-8").strip() if path.is_file() else ""


# ─── build and figures ────────────────────────────────────────────────────────


class BuildError(Exception):
    pass


@dataclass
class Built:
    seconds: float
    steps: list[tuple[str, float]]
    """Each step of the build (``Step N/M : INSTRUCTION``) and its seconds."""


def build(engine: Engine, dockerfile: Path, tag: str, *, cache: bool) -> Built:
    """``docker build`` as the runner does (``-t TAG -f Dockerfile <its folder>``; the
    context is the repository root, where this Dockerfile is), on the host's network,
    with the classic builder (whose log names each step: timed here as it streams).
    :class:`BuildError` names the failed step and why."""
    argv = ["build", "--network", "host", "-t", tag, "-f", str(dockerfile)]
    if not cache:
        argv.append("--no-cache")
    argv.append(str(ROOT))
    env = {**engine.env, "DOCKER_BUILDKIT": "0"}
    t0 = time.monotonic()
    marks: list[tuple[str, float]] = []
    out: list[str] = []
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(
            ["docker", *argv], env=env, stdout=subprocess.PIPE, stderr=err, text=True
        )
        assert proc.stdout is not None
        for line in proc.stdout:
            out.append(line)
            if re.match(r"Step \d+/\d+ : ", line):
                marks.append((line.strip(), time.monotonic()))
        code = proc.wait(timeout=1800)
        err.seek(0)
        stderr = err.read()
    end = time.monotonic()
    if code != 0:
        raise BuildError(build_failure("".join(out), stderr))
    times = [m[1] for m in marks[1:]] + [end]
    steps = [(step, t1 - t_) for (step, t_), t1 in zip(marks, times, strict=True)]
    return Built(end - t0, steps)


def compressed(engine: Engine, image: str, own: int) -> tuple[int, int]:
    """What a registry would send: every layer of ``image`` gzip-compressed (level 6, as
    ``docker push`` compresses), in all and for the ``own`` newest layers."""
    import gzip
    import tarfile

    proc = subprocess.Popen(
        ["docker", "save", image], env=engine.env, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.stdout is not None
    sizes: dict[str, int] = {}
    order: list[str] = []
    with tarfile.open(fileobj=proc.stdout, mode="r|") as tar:
        for member in tar:
            f = tar.extractfile(member) if member.isfile() else None
            if f is None:
                continue
            if member.name != "manifest.json":  # a layer (<id>/layer.tar, blobs/sha256/…)
                zipped = _Counter()
                with gzip.GzipFile(fileobj=zipped, mode="wb", compresslevel=6, mtime=0) as gz:
                    shutil.copyfileobj(f, gz, 1 << 20)
                sizes[member.name] = zipped.n
            else:
                order = json.loads(f.read())[0]["Layers"]
    proc.wait(timeout=60)
    layers_ = [sizes.get(name, 0) for name in order]
    return sum(layers_), sum(layers_[-own:]) if own else 0


class _Counter:
    """A write-only file that counts the bytes written to it."""

    def __init__(self) -> None:
        self.n = 0

    def write(self, data: bytes) -> int:
        self.n += len(data)
        return len(data)

    def flush(self) -> None:
        pass


BUILD_CAUSES = (
    ("/opt/toolgate/gate", "the gate package is missing from /opt/toolgate (the COPY of gate)"),
    ("git: not found", "git is missing from the image"),
    ("No matching distribution found", "requirements.lock does not install on the image's Python"),
    ("COPY failed", "a file the Dockerfile copies is not in the build context"),
    ("Could not open requirements file", "requirements.lock is not in the image (its COPY)"),
)
"""Causes named when their words appear in a failed build's log."""


def build_failure(stdout: str, stderr: str) -> str:
    """The failed step of the classic builder's log, and the lines that say why."""
    lines = stdout.splitlines()
    step_at = max((i for i, ln in enumerate(lines) if re.match(r"Step \d+/\d+ : ", ln)), default=-1)
    step = re.sub(r"\s+", " ", lines[step_at]) if step_at >= 0 else "before the first step"
    after = [
        _plain(ln)
        for ln in lines[step_at + 1 :]
        if ln.strip() and not re.match(r"^( ---> |Removing intermediate container )", ln)
    ]
    error = " ".join(
        re.sub(r"\s+", " ", _plain(ln))
        for ln in stderr.splitlines()
        if ln.strip() and not ln.startswith(("DEPRECATED", " ", "Install the buildx"))
    )
    why = " | ".join(after[-4:])
    text = f"{step[:160]} failed: {error}" + (f" (its last lines: {why})" if why else "")
    causes = [cause for words, cause in BUILD_CAUSES if words in stdout + stderr]
    return "the image does not build" + (f" — {'; '.join(causes)}" if causes else "") + f": {text}"


def _plain(line: str) -> str:
    """A log line without terminal colours."""
    return re.sub(r"\x1b\[[0-9;]*m", "", line).strip()


def layers(engine: Engine, image: str, own: int) -> tuple[int, list[tuple[int, str]]]:
    """The base's size and the ``own`` newest layers' ``(bytes, instruction)``."""
    done = engine.docker(
        "history", "--no-trunc", "--human=false", "--format", "{{.Size}}\t{{.CreatedBy}}", image
    )
    rows = []
    for line in done.stdout.splitlines():
        size, _, created = line.partition("\t")
        rows.append((int(size) if size.isdigit() else 0, created))
    mine = rows[:own]
    base = sum(s for s, _ in rows[own:])
    named = [(s, _instruction(c)) for s, c in reversed(mine) if s > 0]
    return base, named


def _instruction(created_by: str) -> str:
    text = re.sub(r"^/bin/sh -c (#\(nop\) )?", "", created_by).strip()
    text = re.sub(r"\s+", " ", text)
    return text if len(text) <= 70 else text[:67] + "..."


def start_times(engine: Engine, image: str, n: int = 3) -> float:
    """A bare container's start and exit (``/bin/true``), the median of ``n``."""
    times = []
    for _ in range(n):
        t0 = time.monotonic()
        engine.docker("run", "--rm", "--network", "none", "--entrypoint", "/bin/true", image)
        times.append(time.monotonic() - t0)
    return statistics.median(times)


def mb(n: float) -> str:
    return f"{n / 1e6:.1f} MB"


# ─── main ─────────────────────────────────────────────────────────────────────


def project_facts() -> tuple[SpecifierSet, list[str], dict[str, str]]:
    """``requires-python``, the CI suite's Python versions, and the lock's pins."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    ci = YAML(typ="safe").load((ROOT / ".github" / "workflows" / "ci.yml").read_text("utf-8"))
    pythons = [str(v) for v in ci["jobs"]["tests"]["strategy"]["matrix"]["python-version"]]
    pins: dict[str, str] = {}
    for raw in (ROOT / "requirements.lock").read_text("utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            pins[canonicalize_name(name)] = version
    return SpecifierSet(project["requires-python"]), pythons, pins


def cache_dir() -> Path:
    if os.environ.get("TOOLGATE_IMAGE_CACHE"):
        return Path(os.environ["TOOLGATE_IMAGE_CACHE"])
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "toolgate-image"


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m tests.image.check_image",
        description="Build the Action's image and run it as the Actions runner does.",
    )
    p.add_argument(
        "--dockerfile",
        type=Path,
        default=ROOT / "Dockerfile",
        help="the Dockerfile to build (default: the repository's)",
    )
    p.add_argument("--image", help="test this image (local or pulled) instead of building one")
    p.add_argument(
        "--base",
        choices=("auto", "official", "stand-in"),
        default="auto",
        help="auto: pull the FROM, else make the stand-in",
    )
    p.add_argument(
        "--build-cache",
        action="store_true",
        help="let docker build reuse cached layers (the build time is then not a cold build's)",
    )
    p.add_argument("--keep", action="store_true", help="keep the built image")
    p.add_argument(
        "--start-runs",
        type=int,
        default=3,
        help="push runs timed for the start-up figures (their median; default 3)",
    )
    p.add_argument("--report", type=Path, help="write the figures and checks as JSON here")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if os.environ.get("TOOLGATE_SKIP_IMAGE") == "1":
        say(
            "image test: SKIPPED because TOOLGATE_SKIP_IMAGE=1 — nothing was built or run. "
            "Unset it wherever Docker can run; CI never sets it."
        )
        return 0
    t_all = time.monotonic()
    cache = cache_dir()
    try:
        engine = connect(cache / "engine")
    except EngineError as exc:
        say(f"image test: FAILED — the Docker engine cannot run here: {exc}.")
        say(
            "The image was neither built nor run. On a machine without Docker, "
            "TOOLGATE_SKIP_IMAGE=1 skips this test (never in CI)."
        )
        return 1
    say(f"image test: {engine.describe()}")
    for note in engine.notes:
        say(f"  {note}")
    r = Report()
    built: str | None = None
    try:
        built = run(args, engine, cache, r)
    except (BaseError, BuildError) as exc:
        r.fail("the image", str(exc))
    finally:
        if built and not args.keep:
            engine.docker("image", "rm", "--force", built)
        if engine.process is not None:  # an engine of our own: no dangling layers left
            engine.docker("image", "prune", "--force")
        engine.stop()
    r.figures["image_test_s"] = round(time.monotonic() - t_all, 1)
    finish(r, args.report)
    return 0 if not r.failed else 1


def run(args: argparse.Namespace, engine: Engine, cache: Path, r: Report) -> str | None:
    """Everything after the engine; the tag of the image built here (to remove), if any."""
    dockerfile = args.dockerfile.resolve()
    steps_ = instructions(dockerfile.read_text("utf-8"))
    try:
        base = base_image(steps_)
    except ValueError as exc:
        r.fail("the Dockerfile's FROM", str(exc))
        return None
    requires_python, ci_pythons, lock = project_facts()
    built: str | None = None
    if args.image:
        image = args.image
        if engine.docker("image", "inspect", image).returncode != 0:
            pulled = engine.docker("pull", "--quiet", image, timeout=900)
            if pulled.returncode != 0:
                raise BaseError(f"cannot pull {image}: {pulled.stderr.strip()[-300:]}")
        r.figures["build_s"] = None
        say(f"image: {image} (given; not built here)")
    else:
        log: list[str] = []
        say(f"base: {base.reference} ...")
        got = provide(engine, base.reference, base.debian, cache / "base", mode=args.base, log=log)
        for line in log:
            say(f"  {line}")
        say(f"base: {got.how} [{got.seconds:.0f} s]")
        r.figures["base"] = got.how
        image = built = f"{LABEL}:{uuid.uuid4().hex[:12]}"
        how = "cached layers allowed" if args.build_cache else "--no-cache"
        say(f"build: docker build -f {_shown(dockerfile)} ({how}) ...")
        done = build(engine, dockerfile, image, cache=args.build_cache)
        r.figures["build_s"] = round(done.seconds, 1)
        r.figures["build_cached"] = bool(args.build_cache)
        r.figures["build_steps"] = [
            {"step": _instruction(step), "s": round(t, 1)} for step, t in done.steps if t >= 0.5
        ]
        say(f"build: {done.seconds:.1f} s")
    inspect = json.loads(engine.docker("image", "inspect", image).stdout or "[{}]")[0]
    config = inspect.get("Config") or {}
    stand_in = (config.get("Labels") or {}).get(STAND_IN_LABEL)
    official = stand_in is None
    r.figures["base_kind"] = "official" if official else f"stand-in ({stand_in})"
    size = int(inspect.get("Size") or 0)
    own = sum(1 for w, _ in steps_ if w != "FROM")
    base_size, own_layers = layers(engine, image, own)
    r.figures["image_bytes"] = size
    r.figures["base_bytes"] = base_size
    r.figures["layers"] = [{"bytes": s, "instruction": i} for s, i in own_layers]
    own_fs = sum(1 for w, _ in steps_ if w in ("RUN", "COPY", "ADD"))
    r.figures["compressed_bytes"], r.figures["compressed_own_bytes"] = compressed(
        engine, image, own_fs
    )
    say("the image:")
    check_config(config, entrypoint(steps_), r)
    # ToolGate's interpreter: the ENTRYPOINT's when it is one (the official image's path else)
    first = (config.get("Entrypoint") or [""])[0]
    python = first if Path(first).name.startswith("python") else "/usr/local/bin/python"
    # What the containers write there is root's: not removable without root.
    with tempfile.TemporaryDirectory(prefix="toolgate-image-", ignore_cleanup_errors=True) as tmp_:
        tmp = Path(tmp_)
        probe, head = example_host(tmp, "facts")
        found = facts(engine, image, python, probe.workspace)
        check_facts(
            found,
            base=base,
            official=official,
            repo_head=head,
            lock=lock,
            requires_python=requires_python,
            ci_pythons=ci_pythons,
            r=r,
        )
        r.figures["python"] = (found.get("python_version") or ["?"])[0]
        r.figures["bare_start_s"] = round(start_times(engine, image), 2)
        say("the steps, as the runner starts them:")
        steps(engine, image, python, tmp, found.get("pkg", []), r, start_runs=args.start_runs)
    return built


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def finish(r: Report, report: Path | None) -> None:
    fig = r.figures
    lines = [
        f"base: {fig.get('base', fig.get('base_kind', '?'))}",
        f"Python in the image: {fig.get('python', '?')}",
        "build: "
        + (
            "not built here"
            if fig.get("build_s") is None
            else f"{fig['build_s']} s (docker build{' with cached layers' if fig.get('build_cached') else ' --no-cache'}, base present)"  # noqa: E501
        ),
    ]
    if "image_bytes" in fig:
        own = ", ".join(f"{mb(x['bytes'])} {x['instruction']}" for x in fig["layers"])
        lines.append(
            f"image size: {mb(fig['image_bytes'])} (base {mb(fig['base_bytes'])}; "
            f"the Dockerfile's layers: {own})"
        )
    if fig.get("build_steps"):
        lines.append(
            "build steps: " + ", ".join(f"{x['step']} {x['s']} s" for x in fig["build_steps"])
        )
    if "compressed_bytes" in fig:
        lines.append(
            f"compressed (gzip, as pushed): {mb(fig['compressed_bytes'])} in all, "
            f"{mb(fig['compressed_own_bytes'])} of it the Dockerfile's layers"
        )
    if "bare_start_s" in fig:
        lines.append(f"a bare container's start and exit: {fig['bare_start_s']} s (median of 3)")
    if "run_to_first_sample_s" in fig:
        each = ", ".join(f"{x}" for x in fig.get("run_to_first_sample_all_s", []))
        lines.append(
            f"docker run → first sample: {fig['run_to_first_sample_s']} s, the median of "
            f"{each} (push runs on examples/support-agent; the whole step "
            f"{fig.get('push_step_s')} s)"
        )
    lines.append(f"image test: {fig.get('image_test_s')} s in all")
    say("")
    for line in lines:
        say(line)
    if r.failed:
        say("")
        say("what broke:")
        for f in r.failed:
            say(f"  - {f if len(f) <= 400 else f[:397] + '...'}")
    say(f"image test: {len(r.passed)} passed, {len(r.failed)} failed")
    data = {"passed": r.passed, "failed": r.failed, "figures": fig}
    if report is not None:
        report.parent.mkdir(parents=True, exist_ok=True)
        report.write_text(json.dumps(data, indent=2) + "\n", "utf-8")
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as out:
            out.write("### The Action's image\n\n")
            out.write("".join(f"- {line}\n" for line in lines))
            out.write(f"- checks: {len(r.passed)} passed, {len(r.failed)} failed\n")
            out.write("".join(f"  - ❌ {x}\n" for x in r.failed))


if __name__ == "__main__":
    raise SystemExit(main())
