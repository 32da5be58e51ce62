"""The ``python`` agent adapter: ``module:callable``, sync or async, in worker processes.

The callable's contract, and where it runs, are written once in docs/agent-protocol.md
(section "``python``: a function in your package"). The workers
(:mod:`gate.replay.python_worker`) serve the ``command`` protocol through
:class:`gate.replay.command.WorkerPoolAgent`: the same bounded reads and writes,
process-group kills and replacement.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from gate.agents.python import PythonAgent
from gate.config import Config
from gate.errors import WorkerBroken
from gate.replay.command import Worker, WorkerPoolAgent, agent_environ
from gate.replay.session import AgentFailure, ErrorKind

_RUN_WORKER_FILE = "import runpy, sys; runpy.run_path(sys.argv.pop(1), run_name='__main__')"
"""How another interpreter runs :mod:`gate.replay.python_worker`: by its file's path
(``runpy.run_path`` of a file leaves ``sys.path`` as it is: the worker's folder, with its
``http.py``, is never put on it)."""

_WORKER_FILE = Path(__file__).with_name("python_worker.py")

STARTUP_S = 60.0
"""Most time a worker may take to import the callable (at least ``timeout_s``)."""


class PythonCallableAgent(WorkerPoolAgent):
    """The ``python`` adapter (module docstring)."""

    kind = "python"
    field = "agent.callable"
    silence = "the callable did not call a tool or return"
    error_kinds: ClassVar[Mapping[str, ErrorKind]] = {
        "exception": ErrorKind.EXCEPTION,
        "protocol": ErrorKind.PROTOCOL,
    }
    kept_after = frozenset({ErrorKind.AGENT_ERROR, ErrorKind.EXCEPTION, ErrorKind.PROTOCOL})
    """The worker reported these itself, between case-samples (an exception of the
    callable, a return that is not an answer): it stays."""

    def __init__(self, config: Config, cfg: PythonAgent):
        self._cfg = cfg
        self._startup_s = max(STARTUP_S, cfg.timeout_s)
        paths = [str(config.resolve(p)) for p in cfg.path]
        interpreter = config.agent_python() or shutil.which("python3") or "python3"
        env = {**agent_environ(os.environ), "PYTHONUNBUFFERED": "1", **cfg.env}
        if interpreter == sys.executable:
            argv = [interpreter, "-m", "gate.replay.python_worker"]
            env.update(_importable())
        else:
            # Another environment (``agent.python``, the Action's ``install:``) has no
            # ToolGate: the worker's file runs by its path (it imports only the standard
            # library), and nothing of ToolGate's environment is put on its sys.path.
            argv = [interpreter, "-c", _RUN_WORKER_FILE, str(_WORKER_FILE)]
        super().__init__(
            argv=[*argv, cfg.callable, *paths],
            cwd=os.getcwd(),
            env=env,
            workers=config.concurrency,
            file=str(config.source) if config.source else "toolgate.yml",
            line=config.agent_lines.get("agent.callable"),
        )

    def describe(self) -> dict[str, Any]:
        path = {"path": list(self._cfg.path)} if self._cfg.path else {}
        return {"kind": self.kind, "callable": self._cfg.callable, **path, **self._cfg.declared()}

    def _check_started(self, worker: Worker) -> None:
        """The worker's first line says whether it imported the callable."""
        try:
            message = worker.receive(self._startup_s, 0)
        except WorkerBroken as broken:
            worker.kill()
            tail = worker.stderr_tail.text()
            raise AgentFailure(
                ErrorKind.START,
                f"the worker importing {self._cfg.callable!r} did not start: {broken.message}"
                + (f"; its stderr ends: {tail.splitlines()[-1]}" if tail else ""),
                detail=f"--- stderr (last lines) ---\n{tail}" if tail else None,
            ) from None
        if message.get("type") == "ready":
            return
        text = message.get("message")
        raise AgentFailure(
            ErrorKind.START,
            text if isinstance(text, str) else f"the worker did not start: {message!r:.200}",
        )


def _importable() -> dict[str, str]:
    """``PYTHONPATH`` with the folder ToolGate is imported from first when it is not an
    installed package (a source checkout), so that the worker finds :mod:`gate`."""
    import site

    root = str(Path(__file__).resolve().parents[2])
    if root in {*site.getsitepackages(), site.getusersitepackages()}:
        return {}  # installed: found like any package (never put ahead of the stdlib)
    rest = os.environ.get("PYTHONPATH")
    return {"PYTHONPATH": root + (os.pathsep + rest if rest else "")}
