"""How the Actions runner starts a Docker container action, emulated — and the runner's
own parsers of what the step leaves behind, ported.

Read from the runner's source (repository ``actions/runner``):

* ``src/Runner.Worker/Handlers/ContainerActionHandler.cs`` — the mounts
  (``RUNNER_TEMP`` → ``/github/runner_temp``, ``_github_home`` → ``/github/home``,
  ``_github_workflow`` → ``/github/workflow``, ``_runner_file_commands`` →
  ``/github/file_commands``, the workspace → ``/github/workspace``), the working directory
  ``/github/workspace``, ``HOME``, the ``ACTIONS_*`` variables, and every variable's value
  passed through ``TranslateToContainerPath``;
* ``src/Runner.Worker/Container/DockerCommandManager.cs`` — ``DockerRun``: the
  ``docker run`` command line (``--name``, ``--label``, ``--workdir``, ``--rm``, ``-e NAME``
  with the value in the client's environment, ``-e GITHUB_ACTIONS=true``, ``-e CI=true``,
  ``--network``, ``-v`` for the Docker socket and each folder, the image, no entrypoint
  override and no arguments for an action.yml without ``entrypoint``/``args``);
* ``src/Runner.Worker/Container/ContainerInfo.cs`` — ``TranslateToContainerPath`` /
  ``TranslateToHostPath``: the most recently added mapping first, an exact match or a
  prefix followed by ``/``;
* ``src/Runner.Worker/Handlers/Handler.cs`` — ``AddInputsToEnvironment``:
  ``INPUT_`` + the input's name with spaces as ``_``, upper-cased (hyphens kept);
* ``src/Runner.Worker/GitHubContext.cs`` — the allow-list of ``github`` context keys
  exported as ``GITHUB_<KEY>``;
* ``src/Runner.Worker/FileCommandManager.cs`` — the file commands (``set_output_``,
  ``step_summary_``, ``set_env_``, ``add_path_``, ``save_state_`` + a GUID in
  ``_runner_file_commands``), ``EnvFileKeyValuePairs`` (``NAME=VALUE`` and the heredoc form
  ``NAME<<DELIM``), and the step summary's 1 MiB limit (``AttachmentSizeLimit``);
* ``src/Runner.Common/ActionCommand.cs`` — ``TryParseV2``, the ``::name k=v,…::data``
  workflow-command parser and its unescaping;
* ``src/Runner.Worker/ActionCommandManager.cs`` — ``IssueCommandExtension``: an
  annotation's ``file`` is translated back to the host and made relative to the workspace;
  ``::stop-commands::TOKEN`` turns command processing off until a line ``::TOKEN::``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parents[2]
ACTION = YAML(typ="safe").load((ROOT / "action.yml").read_text("utf-8"))
CONTAINER_ROOT = "/github"

#: GitHubContext.cs, ``_contextEnvAllowlist``: the context keys exported as GITHUB_<KEY>.
GITHUB_ENV_ALLOWLIST = (
    "action_path", "action_ref", "action_repository", "action", "actor", "actor_id",
    "api_url", "artifacts", "artifacts_list", "base_ref", "env", "event_name",
    "event_path", "graphql_url", "head_ref", "job", "output", "path", "ref_name",
    "ref_protected", "ref_type", "ref", "repository", "repository_id", "repository_owner",
    "repository_owner_id", "retention_days", "run_attempt", "run_id", "run_number",
    "server_url", "sha", "state", "step_summary", "triggering_actor", "workflow",
    "workflow_ref", "workflow_sha", "workspace",
)  # fmt: skip

#: FileCommandManager.cs: each file command's context key and file prefix.
FILE_COMMANDS = {
    "output": "set_output_",
    "step_summary": "step_summary_",
    "env": "set_env_",
    "path": "add_path_",
    "state": "save_state_",
}
STEP_SUMMARY_LIMIT = 1024 * 1024  # CreateStepSummaryCommand.AttachmentSizeLimit
ISSUE_COMMANDS = ("error", "warning", "notice")
REGISTERED_COMMANDS = {
    *ISSUE_COMMANDS, "debug", "group", "endgroup", "add-mask", "echo", "add-matcher",
    "remove-matcher", "stop-commands",
}  # fmt: skip


# ─── path translation (ContainerInfo.cs) ──────────────────────────────────────


@dataclass
class PathMap:
    """``AddPathTranslateMapping`` inserts at the front: the last added is tried first."""

    mappings: list[tuple[str, str]] = field(default_factory=list)

    def add(self, host: str, container: str) -> None:
        self.mappings.insert(0, (host.rstrip("/"), container.rstrip("/")))

    def to_container(self, path: str) -> str:
        for host, cont in self.mappings:
            if path == host:
                return cont
            if path.startswith(host + "/"):
                return cont + path[len(host) :]
        return path

    def to_host(self, path: str) -> str:
        for host, cont in self.mappings:
            if path == cont:
                return host
            if path.startswith(cont + "/"):
                return host + path[len(cont) :]
        return path


# ─── the file commands' parser (EnvFileKeyValuePairs) ────────────────────────


def _read_line(text: str, index: int) -> tuple[str | None, int, str | None]:
    """``ReadLine``: the line at ``index`` without its newline, the next index, and the
    newline that ended it (``None`` at the end of the text)."""
    if index >= len(text):
        return None, index, None
    lf = text.find("\n", index)
    if lf < 0:
        return text[index:], len(text), None
    return text[index:lf], lf + 1, "\n"


def parse_key_values(text: str) -> list[tuple[str, str]]:
    """The runner's ``EnvFileKeyValuePairs`` (Linux): every ``(name, value)`` in order;
    raises ``ValueError`` with the runner's message where the runner fails the step."""
    pairs: list[tuple[str, str]] = []
    line, index, _ = _read_line(text, 0)
    while line is not None:
        if line:
            eq, hd = line.find("="), line.find("<<")
            if eq >= 0 and (hd < 0 or eq < hd):
                key, value = line.split("=", 1)
            elif hd >= 0 and (eq < 0 or hd < eq):
                key, delimiter = line.split("<<", 1)
                if not key or not delimiter:
                    raise ValueError(
                        f"Invalid format '{line}'. Name must not be empty and delimiter "
                        "must not be empty"
                    )
                start = end = index
                temp, index, newline = _read_line(text, index)
                while temp != delimiter:
                    if temp is None:
                        raise ValueError(
                            f"Invalid value. Matching delimiter not found '{delimiter}'"
                        )
                    if newline is None:
                        raise ValueError("Invalid value. EOF marker missing new line.")
                    end = index - len(newline)
                    temp, index, newline = _read_line(text, index)
                value = text[start:end] if end > start else ""
            else:
                raise ValueError(f"Invalid format '{line}'")
            pairs.append((key, value))
        line, index, _ = _read_line(text, index)
    return pairs


# ─── the workflow-command parser (ActionCommand.TryParseV2) ──────────────────


def _unescape(value: str, mappings: tuple[tuple[str, str], ...]) -> str:
    for token, replacement in mappings:
        value = value.replace(replacement, token)
    return value


_DATA = (("\r", "%0D"), ("\n", "%0A"), ("%", "%25"))
_PROPERTY = (("\r", "%0D"), ("\n", "%0A"), (":", "%3A"), (",", "%2C"), ("%", "%25"))


@dataclass(frozen=True)
class Command:
    name: str
    properties: dict[str, str]
    data: str


def parse_command(line: str) -> Command | None:
    """``TryParseV2``: ``::name key=value,key=value::data``, or ``None`` for a line the
    runner does not take as a command."""
    message = line.lstrip()
    if not message.startswith("::"):
        return None
    end = message.find("::", 2)
    if end < 0:
        return None
    info = message[2:end]
    space = info.find(" ")
    name = info if space < 0 else info[:space]
    if name not in REGISTERED_COMMANDS:
        return None
    props: dict[str, str] = {}
    if space > 0:
        for prop in (p for p in info[space + 1 :].strip().split(",") if p):
            pair = [x for x in prop.split("=", 1) if x]
            if len(pair) == 2:
                props[pair[0]] = _unescape(pair[1], _PROPERTY)
    return Command(name, props, _unescape(message[end + 2 :], _DATA))


@dataclass(frozen=True)
class Annotation:
    level: str
    file: str | None
    """As the runner records it: translated back to the host, relative to the workspace
    when it is inside it (``IssueCommandExtension``)."""
    line: str | None
    title: str | None
    message: str


# ─── the step: mounts, environment, run ───────────────────────────────────────


@dataclass
class StepResult:
    code: int
    stdout: str
    stderr: str
    outputs: dict[str, str]
    output_names: list[str]
    summary: bytes
    annotations: list[Annotation]
    workspace: Path


@dataclass
class RunnerHost:
    """The runner machine's folders for one job (``_work/<repo>/<repo>`` and ``_temp``)."""

    root: Path
    workspace: Path = field(init=False)
    temp: Path = field(init=False)

    def __post_init__(self) -> None:
        self.workspace = self.root / "_work" / "agent" / "agent"
        self.temp = self.root / "_work" / "_temp"
        for d in (
            self.workspace,
            self.temp / "_github_home",
            self.temp / "_github_workflow",
            self.temp / "_runner_file_commands",
        ):
            d.mkdir(parents=True, exist_ok=True)

    def mounts(self) -> list[tuple[str, str]]:
        """``(host, container)`` in ContainerActionHandler's order (``MountVolumes`` and
        ``AddPathTranslateMapping`` alike); the Docker socket, mounted first by the runner
        as well, is :func:`docker_run_command`'s."""
        return [
            (str(self.temp), f"{CONTAINER_ROOT}/runner_temp"),
            (str(self.temp / "_github_home"), f"{CONTAINER_ROOT}/home"),
            (str(self.temp / "_github_workflow"), f"{CONTAINER_ROOT}/workflow"),
            (str(self.temp / "_runner_file_commands"), f"{CONTAINER_ROOT}/file_commands"),
            (str(self.workspace), f"{CONTAINER_ROOT}/workspace"),
        ]

    def path_map(self) -> PathMap:
        m = PathMap()
        for host_path, container_path in self.mounts():
            m.add(host_path, container_path)
        return m


@dataclass
class Step:
    """One step of a container action, prepared as the runner prepares it: the files it
    will read back, and the environment it hands the container (paths translated)."""

    host: RunnerHost
    paths: PathMap
    env: dict[str, str]
    """The runner's ``Environment`` after ``TranslateToContainerPath``: what ``docker run``
    passes as ``-e NAME`` (``GITHUB_ACTIONS`` and ``CI`` are added by the command itself)."""
    files: dict[str, Path]
    """Each file command's file on the host (:data:`FILE_COMMANDS`)."""

    def container_env(self) -> dict[str, str]:
        """Everything the runner passes: :attr:`env`, then ``-e GITHUB_ACTIONS=true`` and
        ``-e CI=true`` unless the environment sets ``CI`` (DockerCommandManager.DockerRun)."""
        env = {**self.env, "GITHUB_ACTIONS": "true"}
        env.setdefault("CI", "true")
        return env


def action_inputs(with_: dict[str, str], token: str) -> dict[str, str]:
    """Every input of action.yml, the step's ``with:`` over the defaults (the runner
    evaluates ``${{ github.token }}``), as ``INPUT_<NAME>`` variables."""
    env: dict[str, str] = {}
    for name, spec in ACTION["inputs"].items():
        default = str(spec.get("default", ""))
        value = with_.get(name, default.replace("${{ github.token }}", token))
        env[f"INPUT_{name.replace(' ', '_').upper()}"] = value
    unknown = set(with_) - set(ACTION["inputs"])
    assert not unknown, f"not inputs of the action: {unknown}"
    return env


def prepare_step(
    host: RunnerHost,
    *,
    with_: dict[str, str],
    event_name: str,
    event: dict[str, Any],
    api_url: str,
    token: str,
    repository: str,
    sha: str,
    step_env: dict[str, str] | None = None,
) -> Step:
    """The event payload and empty file-command files written where the runner writes
    them, and the environment it gives the container: the ``github`` context's allow-list
    as ``GITHUB_*``, the inputs, ``HOME``, the ``RUNNER_*`` and ``ACTIONS_*`` variables,
    the step's ``env:`` (``step_env``), every value through ``TranslateToContainerPath``."""
    paths = host.path_map()
    (host.temp / "_github_workflow" / "event.json").write_text(json.dumps(event), "utf-8")
    suffix = str(uuid.uuid4())
    context: dict[str, str] = {}
    files: dict[str, Path] = {}
    for key, prefix in FILE_COMMANDS.items():
        f = host.temp / "_runner_file_commands" / f"{prefix}{suffix}"
        f.write_text("", "utf-8")
        files[key] = f
        context[key] = paths.to_container(str(f))
    owner = repository.split("/")[0]
    is_pr = event_name.startswith("pull_request")
    context |= {
        "action": "__toolgate_toolgate",
        "action_ref": "v0",
        "action_repository": "toolgate/toolgate",
        "actor": "octocat",
        "actor_id": "583231",
        "api_url": api_url,
        "base_ref": "main" if is_pr else "",
        "event_name": event_name,
        "event_path": str(host.temp / "_github_workflow" / "event.json"),
        "graphql_url": api_url + "/graphql",
        "head_ref": "feature" if is_pr else "",
        "job": "toolgate",
        "ref": "refs/pull/7/merge" if is_pr else "refs/heads/main",
        "ref_name": "7/merge" if is_pr else "main",
        "ref_protected": "false",
        "ref_type": "branch",
        "repository": repository,
        "repository_id": "1",
        "repository_owner": owner,
        "repository_owner_id": "2",
        "retention_days": "90",
        "run_attempt": "1",
        "run_id": "9001",
        "run_number": "12",
        "server_url": "https://github.test",
        "sha": sha,
        "triggering_actor": "octocat",
        "workflow": "ToolGate",
        "workflow_ref": f"{repository}/.github/workflows/toolgate.yml@refs/heads/main",
        "workflow_sha": sha,
        "workspace": str(host.workspace),
    }
    assert set(context) <= set(GITHUB_ENV_ALLOWLIST)
    env = {f"GITHUB_{k.upper()}": v for k, v in context.items()}
    env |= action_inputs(with_, token)
    env |= {
        "HOME": str(host.temp / "_github_home"),
        "RUNNER_OS": "Linux",
        "RUNNER_ARCH": "X64",
        "RUNNER_NAME": "GitHub Actions 2",
        "RUNNER_ENVIRONMENT": "github-hosted",
        "RUNNER_TEMP": str(host.temp),
        "ACTIONS_RUNTIME_URL": "https://runtime.github.test/",
        "ACTIONS_RUNTIME_TOKEN": "runtime-token-not-for-toolgate",
        "ACTIONS_RESULTS_URL": "https://results.github.test/",
        "TOOLGATE_GITHUB_BUDGET_S": "20",
        **(step_env or {}),
    }
    env = {k: paths.to_container(v) for k, v in env.items()}  # as docker run -e gets them
    return Step(host, paths, env, files)


def read_step(step: Step, code: int, stdout: str, stderr: str) -> StepResult:
    """What the runner reads back once the container exits: the outputs (its
    ``EnvFileKeyValuePairs`` parser), the step summary, the annotations in the log."""
    pairs = parse_key_values(step.files["output"].read_text("utf-8"))
    return StepResult(
        code=code,
        stdout=stdout,
        stderr=stderr,
        outputs=dict(pairs),
        output_names=[k for k, _ in pairs],
        summary=step.files["step_summary"].read_bytes(),
        annotations=_annotations(stdout, step.paths, step.host.workspace),
        workspace=step.host.workspace,
    )


def docker_run_command(
    step: Step,
    image: str,
    *,
    name: str,
    label: str,
    network: str | None = None,
    docker_socket: str = "/var/run/docker.sock",
) -> tuple[list[str], dict[str, str]]:
    """The runner's ``docker run`` for the step (DockerCommandManager.DockerRun) and the
    environment to start it with: ``--name``, ``--label``, ``--workdir
    /github/workspace``, ``--rm``, ``-e NAME`` for every variable (the value travels in
    the docker client's own environment, never on its command line), ``-e
    GITHUB_ACTIONS=true``, ``-e CI=true``, ``--network`` when the job has one, the Docker
    socket and the five folders as ``-v``, the image, and no ``--entrypoint`` and no
    arguments (action.yml sets neither): the image's ENTRYPOINT runs as it is.

    The returned environment is the step's variables only; the caller adds what the
    docker client itself needs (``PATH``, ``DOCKER_HOST``)."""
    argv = ["docker", "run", "--name", name, "--label", label]
    argv += ["--workdir", f"{CONTAINER_ROOT}/workspace", "--rm"]
    for key in step.env:
        argv += ["-e", key]
    argv += ["-e", "GITHUB_ACTIONS=true"]
    if "CI" not in step.env:
        argv += ["-e", "CI=true"]
    if network:
        argv += ["--network", network]
    argv += ["-v", f"{docker_socket}:/var/run/docker.sock"]
    for host_path, container_path in step.host.mounts():
        argv += ["-v", f"{host_path}:{container_path}"]
    argv.append(image)
    return argv, dict(step.env)


def run_container_action(
    host: RunnerHost,
    *,
    with_: dict[str, str],
    event_name: str,
    event: dict[str, Any],
    api_url: str,
    token: str,
    repository: str,
    sha: str,
    timeout: float = 180,
    step_env: dict[str, str] | None = None,
) -> StepResult:
    """Start ``python -P -m gate.action`` as ``docker run`` would start the image's
    entrypoint: in a private mount namespace with the runner's five mounts under
    ``/github``, working directory ``/github/workspace``, only the variables the runner
    passes (paths translated) — the step's ``env:`` (``step_env``) among them —, then read
    the step's files back as the runner does. (``tests/image`` starts the real image with
    :func:`docker_run_command` from the same :class:`Step`.)"""
    step = prepare_step(
        host,
        with_=with_,
        event_name=event_name,
        event=event,
        api_url=api_url,
        token=token,
        repository=repository,
        sha=sha,
        step_env=step_env,
    )
    # What the image provides itself (ENV in the Dockerfile): the interpreter is this
    # venv's, so its PATH; LANG as python images set it; pip's settings as the
    # Dockerfile's ENV sets them.
    env = step.container_env() | {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "PIP_NO_CACHE_DIR": "1",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    mounts = " && ".join(
        f"mkdir -p {cont} && mount --bind {host_path} {cont}"
        for host_path, cont in sorted(host.mounts(), key=lambda hc: hc[1].count("/"))
    )
    script = (
        f"mount --make-rprivate / && mkdir -p {CONTAINER_ROOT} && "
        f"mount -t tmpfs toolgate-github {CONTAINER_ROOT} && {mounts} && "
        f'cd {CONTAINER_ROOT}/workspace && exec env -i "$@"'
    )
    argv = [
        shutil.which("unshare") or "unshare",
        "--mount",
        "--propagation",
        "private",
        "sh",
        "-c",
        script,
        "sh",
        *(f"{k}={v}" for k, v in env.items()),
        sys.executable,
        "-P",
        "-m",
        "gate.action",
    ]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    return read_step(step, proc.returncode, proc.stdout, proc.stderr)


def _annotations(stdout: str, paths: PathMap, workspace: Path) -> list[Annotation]:
    found = []
    stopped: str | None = None  # ActionCommandManager: ``::stop-commands::TOKEN`` … ``::TOKEN::``
    for line in stdout.splitlines():
        if stopped is not None:
            if line.strip() == f"::{stopped}::":
                stopped = None
            continue
        if line.lstrip().startswith("::stop-commands::"):
            stopped = line.lstrip()[len("::stop-commands::") :].strip()
            continue
        cmd = parse_command(line)
        if cmd is None or cmd.name not in ISSUE_COMMANDS:
            continue
        file = cmd.properties.get("file")
        if file:
            file = paths.to_host(file)
            # IOUtil.MakeRelative: outside the workspace (or relative already) it stays.
            if Path(file).is_relative_to(workspace):
                file = Path(file).relative_to(workspace).as_posix()
        found.append(
            Annotation(
                cmd.name, file, cmd.properties.get("line"), cmd.properties.get("title"), cmd.data
            )
        )
    return found


def namespaces_available() -> str | None:
    """Why the mount-namespace emulation cannot run here, or ``None`` when it can."""
    if sys.platform != "linux":
        return "mount namespaces are Linux-only"
    if os.geteuid() != 0:
        return "needs root for unshare --mount and bind mounts (CI runs as root)"
    if shutil.which("unshare") is None:
        return "unshare (util-linux) is not installed"
    probe = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c",
         "mount -t tmpfs probe /mnt && umount /mnt"],
        capture_output=True,
        text=True,
        check=False,
    )  # fmt: skip
    if probe.returncode != 0:
        return f"this machine refuses private mounts: {probe.stderr.strip()[:200]}"
    return None
