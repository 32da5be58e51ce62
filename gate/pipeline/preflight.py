"""What ``check`` refuses before the first case, and ``validate`` reports: an agent that
cannot start. A program that is not there, a script the command names that is missing, an
unreadable ``system_prompt_file``, a Python ``callable`` that cannot be imported, a replay
``runs`` file that is missing — each a located problem (the config's file, line, field),
never a run whose every case-sample fails the same way.

What to check is the agent kind's own answer (:mod:`gate.agents`); this module places its
findings in the config file and, for ``validate``, starts the agent on the first case."""

from __future__ import annotations

from pathlib import Path

from gate.config import Config
from gate.dataset import default_display
from gate.errors import ErrorKind, Problem
from gate.model import DatasetLike
from gate.yamlio import YamlDoc


def agent_problems(config: Config, doc: YamlDoc) -> list[Problem]:
    """What ``check`` would refuse before the first case, and ``validate`` reports: the
    agent kind's own preflight (:meth:`gate.agents.interface.AgentSettings.preflight`) —
    a program that is not there, a script the command names that is missing, an
    interpreter ``agent.python`` names that is not there, an unreadable
    ``system_prompt_file``, a replay ``runs`` file that is missing — each at its key's line.

    A Python ``callable`` is checked by starting it: ``validate`` runs the first case
    (:func:`first_case_problems`), and the commands that run the agent start its workers
    before the first case and refuse one that cannot import the callable at the same line
    — the agent's module is imported once per worker, never twice."""
    return [
        Problem(doc.file, doc.line_of(("agent", key)), f"agent.{key}", message)
        for key, message in config.agent.preflight(config.root, default_display)
    ]


START_FAILURES = frozenset(
    {ErrorKind.CRASH, ErrorKind.PROTOCOL, ErrorKind.TIMEOUT, ErrorKind.EXCEPTION, ErrorKind.START}
)
"""How a first case-sample fails when the agent cannot start or cannot speak the protocol
(its own ``error`` message, a step budget overrun or a malformed output are answers)."""

FIRST_ERROR_LINES = 12
"""How many lines of the first case-sample's error a start failure quotes."""


def first_case_problems(config: Config, doc: YamlDoc, dataset: DatasetLike) -> list[Problem]:
    """Start the agent once — the dataset's first case, one sample, in a scratch folder,
    nothing scored (``toolgate validate``), when its kind says so
    (:attr:`~gate.agents.interface.AgentSettings.validate_starts`) — and report a start
    failure at the agent's config line with its first error lines."""
    import tempfile

    from gate.errors import ConfigError, error_kind_of
    from gate.policy.validity import agents_words
    from gate.replay.runner import run_all
    from gate.runsfile import iter_runs

    key = config.agent.validate_starts
    if key is None or not dataset.cases:
        return []
    field = f"agent.{key}"
    first = dataset.cases[0]
    with tempfile.TemporaryDirectory(prefix="toolgate-validate-") as scratch:
        try:
            summary = run_all(
                config,
                dataset,
                Path(scratch),
                samples=1,
                shard=None,
                resume=False,
                case_ids=[first.id],
                progress=False,
            )
        except ConfigError as exc:  # a python callable that cannot be imported
            return list(exc.problems)
        runs = [run for _, run in iter_runs(summary.runs_path)]
    error = runs[0].error if runs else None
    if error is None or error_kind_of(error) not in START_FAILURES:
        return []
    lines = [ln for ln in error.strip().splitlines() if ln.strip()][:FIRST_ERROR_LINES]
    return [
        Problem(
            doc.file,
            doc.line_of(("agent", key)),
            field,
            f"the agent could not start on the first case ({first.id!r}): "
            f"{agents_words(error)}\n" + "\n".join(f"    {ln}" for ln in lines),
        )
    ]
