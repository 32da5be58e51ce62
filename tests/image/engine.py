"""A Docker engine for the image test: the one already running, or one started here and
stopped again by its process id.

An engine started here keeps its state (images, build cache) in a folder of its own under
the cache folder and listens on a socket there, so it never touches another engine's
files. It runs without a bridge network and without iptables rules
(``--bridge=none --iptables=false --ip6tables=false``): containers use the host's network
(``--network host``), which is all a machine without those permissions allows. It tries
the ``overlay2`` storage driver first (what hosted runners use) and falls back to ``vfs``
(every container a full copy of its image: slower to start).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO


class EngineError(Exception):
    """No engine is running and none could be started; the message says why."""


@dataclass
class Engine:
    """How to reach the engine, and what was started here (``None``: it was running)."""

    env: dict[str, str]
    """The docker client's environment (``PATH``, ``DOCKER_HOST`` when the socket is ours)."""
    socket: str
    """The engine's socket on this machine (the runner mounts it into every container)."""
    storage_driver: str
    version: str
    process: subprocess.Popen[bytes] | None = None
    log: Path | None = None
    exec_root: Path | None = None
    """The engine's run-time folder, when started here: what it leaves mounted there (its
    network namespace) is unmounted after it stops."""
    notes: list[str] = field(default_factory=list)

    def docker(
        self, *args: str, timeout: float = 120, stdin: IO[bytes] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """``docker ARGS``; stdout and stderr captured as text."""
        if stdin is not None:
            done = subprocess.run(
                ["docker", *args], env=self.env, stdin=stdin, capture_output=True,
                timeout=timeout, check=False,
            )  # fmt: skip
            return subprocess.CompletedProcess(
                done.args, done.returncode, _text(done.stdout), _text(done.stderr)
            )
        return subprocess.run(
            ["docker", *args], env=self.env, capture_output=True, text=True, timeout=timeout,
            check=False,
        )  # fmt: skip

    def describe(self) -> str:
        whose = (
            f"started here (pid {self.process.pid}, {self.storage_driver})"
            if self.process
            else f"already running ({self.storage_driver})"
        )
        return f"Docker engine {self.version}, {whose}"

    def stop(self) -> None:
        """Stop the engine if it was started here: SIGTERM to its process id, then SIGKILL
        after 30 s. An engine that was already running is left alone."""
        proc = self.process
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        if self.exec_root is not None:
            _unmount_under(self.exec_root)


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def _client_env(docker_host: str | None) -> dict[str, str]:
    env = {"PATH": os.environ.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")}
    for key in ("HOME", "DOCKER_CONFIG", "DOCKER_CERT_PATH", "DOCKER_TLS_VERIFY"):
        if key in os.environ:
            env[key] = os.environ[key]
    host = docker_host if docker_host is not None else os.environ.get("DOCKER_HOST")
    if host:
        env["DOCKER_HOST"] = host
    return env


def _server(env: dict[str, str]) -> tuple[str, str] | None:
    """``(version, storage driver)`` of the engine ``env`` reaches, or ``None``."""
    try:
        done = subprocess.run(
            ["docker", "info", "--format", "{{.ServerVersion}} {{.Driver}}"],
            env=env,
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    parts = done.stdout.split()
    if done.returncode != 0 or len(parts) != 2:
        return None
    return parts[0], parts[1]


def _socket_of(env: dict[str, str]) -> str:
    host = env.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    return host.removeprefix("unix://") if host.startswith("unix://") else "/var/run/docker.sock"


def connect(state: Path, *, start_timeout: float = 60) -> Engine:
    """The running engine, else one started here (state under ``state``)."""
    if shutil.which("docker") is None:
        raise EngineError("the docker client is not installed (Debian: apt-get install docker.io)")
    env = _client_env(None)
    running = _server(env)
    if running is not None:
        return Engine(env, _socket_of(env), running[1], running[0])
    # An engine of ours left running by an earlier, interrupted run: use it as it is.
    ours = state / "docker.sock"
    mine_env = _client_env(f"unix://{ours}")
    running = _server(mine_env)
    if running is not None:
        engine = Engine(mine_env, str(ours), running[1], running[0])
        engine.notes.append(f"an engine started by an earlier run answers on {ours}; reused")
        return engine
    dockerd = shutil.which("dockerd") or next(
        (p for p in ("/usr/sbin/dockerd", "/usr/bin/dockerd") if Path(p).is_file()), None
    )
    if dockerd is None:
        raise EngineError(
            "no Docker engine is running and dockerd is not installed "
            "(Debian: apt-get install docker.io)"
        )
    if os.geteuid() != 0:
        raise EngineError("no Docker engine is running, and starting one needs root")
    tried: list[str] = []
    for driver in ("overlay2", "vfs"):
        try:
            return _start(dockerd, state, driver, mine_env, start_timeout)
        except EngineError as exc:
            tried.append(f"{driver}: {exc}")
    raise EngineError("dockerd did not start: " + "; ".join(tried))


def _start(dockerd: str, state: Path, driver: str, env: dict[str, str], timeout: float) -> Engine:
    state.mkdir(parents=True, exist_ok=True)
    sock = state / "docker.sock"
    pidfile = state / "dockerd.pid"
    with contextlib.suppress(FileNotFoundError):
        sock.unlink()
    log = state / f"dockerd-{driver}.log"
    argv = [
        dockerd,
        f"--data-root={state / 'root'}",
        f"--exec-root={state / 'exec'}",
        f"--pidfile={pidfile}",
        f"--host=unix://{sock}",
        f"--storage-driver={driver}",
        "--iptables=false",
        "--ip6tables=false",
        "--bridge=none",
    ]
    with log.open("wb") as out:
        proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT
        )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log.read_text("utf-8", "replace").strip().splitlines()[-3:]
            raise EngineError(f"exited with code {proc.returncode}: {' | '.join(tail)}")
        running = _server(env)
        if running is not None:
            return Engine(
                env, str(sock), running[1], running[0], process=proc, log=log,
                exec_root=state / "exec",
            )  # fmt: skip
        time.sleep(0.5)
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)
    raise EngineError(f"did not answer within {timeout:.0f} s (log: {log})")


def _unmount_under(root: Path) -> None:
    """Unmount whatever is mounted under ``root`` (deepest first)."""
    try:
        lines = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return
    prefix = str(root.resolve()) + "/"
    points = [ln.split()[1] for ln in lines if len(ln.split()) > 1]
    for point in sorted((p for p in points if p.startswith(prefix)), key=len, reverse=True):
        subprocess.run(["umount", "-l", point], capture_output=True, check=False)
