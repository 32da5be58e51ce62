"""Every process the Action's step started ends before ToolGate writes what the step leaves.

The agent under test and ``setup`` run code from the pull request. Their processes can
detach — ``&``, ``nohup``, ``setsid``, a double fork, ``disown`` — outlive the worker or
the shell ToolGate started, and write to the runner's files after ToolGate has (the
runner keeps an output's last value). So, in the Action's container (Linux):

* :func:`track`, at the start, makes ToolGate the *child subreaper* of everything it
  starts (``PR_SET_CHILD_SUBREAPER``: a detached process whose parent ended is re-parented
  to ToolGate, not to init), and puts a random token in the environment
  (:data:`TOKEN_ENV`), which every process started from it inherits;
* :func:`end_all`, once the gate is over and before the outputs and the summary are
  written, kills every process that descends from ToolGate or carries the token — and
  the process groups they lead — round after round until none is left (bounded by
  :data:`END_S`).

A process that both leaves the process tree and clears its environment before its parent
ends is out of reach; SECURITY.md says what else an agent in the same container can reach.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import secrets
import signal
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass

TOKEN_ENV = "TOOLGATE_STEP_TOKEN"
"""The environment variable that marks every process of the step (its value random)."""
END_S = 5.0
"""Most time :func:`end_all` spends killing and waiting."""
_PR_SET_CHILD_SUBREAPER = 36


@dataclass(frozen=True, slots=True)
class _Proc:
    pid: int
    ppid: int
    pgid: int
    state: str


def track() -> str:
    """Adopt the step's orphans (Linux) and mark the environment (module docstring);
    returns the token (the one already set, when a parent ToolGate set it)."""
    if sys.platform == "linux":
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    token = os.environ.get(TOKEN_ENV) or secrets.token_hex(16)
    os.environ[TOKEN_ENV] = token
    return token


def _procs() -> Iterator[_Proc]:
    try:
        names = os.listdir("/proc")
    except OSError:
        return
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        # "pid (comm) state ppid pgrp …": the command may hold spaces and parentheses
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) < 3:
            continue
        yield _Proc(int(name), int(fields[1]), int(fields[2]), fields[0].decode("ascii", "replace"))


def _carries(pid: int, mark: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            return mark in fh.read().split(b"\0")
    except OSError:
        return False


def _targets(token: str | None) -> tuple[list[_Proc], list[int]]:
    """The live processes to end — the descendants of this one and every process with
    the token, never this one or its ancestors — and this one's zombie children."""
    me = os.getpid()
    procs = {p.pid: p for p in _procs()}
    ancestors = {me}
    up = procs.get(me)
    while up is not None and up.ppid not in ancestors and up.ppid > 0:
        ancestors.add(up.ppid)
        up = procs.get(up.ppid)
    children: dict[int, list[int]] = {}
    for p in procs.values():
        children.setdefault(p.ppid, []).append(p.pid)
    ours: set[int] = set()
    todo = list(children.get(me, ()))
    while todo:
        pid = todo.pop()
        if pid not in ours:
            ours.add(pid)
            todo.extend(children.get(pid, ()))
    if token:
        mark = f"{TOKEN_ENV}={token}".encode()
        ours.update(
            pid
            for pid, p in procs.items()
            if p.state != "Z" and pid not in ours and _carries(pid, mark)
        )
    ours -= ancestors
    live = [procs[pid] for pid in sorted(ours) if procs[pid].state != "Z"]
    zombies = [pid for pid in sorted(ours) if procs[pid].state == "Z" and procs[pid].ppid == me]
    return live, zombies


def end_all(timeout: float = END_S) -> int:
    """Kill every process of the step but this one and its ancestors (module docstring);
    returns how many were found alive. Linux only (elsewhere: 0)."""
    if sys.platform != "linux":
        return 0
    token = os.environ.get(TOKEN_ENV)
    own_group = os.getpgrp()
    seen: set[int] = set()
    end = time.monotonic() + timeout
    while True:
        live, zombies = _targets(token)
        for pid in zombies:  # adopted orphans that ended: let them go
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, os.WNOHANG)
        if not live or time.monotonic() > end:
            return len(seen)
        for p in live:
            seen.add(p.pid)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(p.pid, signal.SIGKILL)
            if p.pgid == p.pid and p.pgid != own_group:  # a group it leads, whoever is in it
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(p.pgid, signal.SIGKILL)
        time.sleep(0.02)
