"""The ``replay`` agent adapter: runs produced elsewhere; no agent is run.

``agent.runs`` (relative to the config) is a runs.jsonl written by another tool or an
earlier ``toolgate run``. Each planned case-sample gets its stored run as is; a planned
case-sample the file lacks gets a ``not_in_replay`` error record (never silently
dropped), and samples the file holds beyond ``samples`` are kept too. A run for a case id
the dataset does not have, or the same case-sample twice, is an input error naming the
line — the file does not fit the dataset.

A stored run is held to what a live agent may record (the step budget applies to replay
too, :func:`gate.replay.session.within_budget`): its turns past the case's step budget and
its calls past :data:`gate.replay.session.MAX_BATCH_CALLS` in one turn are not kept, and
it ends with a ``step_budget`` error; the file's reader keeps at most
:data:`gate.runsfile.MAX_RUN_CALLS` calls of a line, so a line of a million calls costs
what the kept ones cost.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from gate.agents.replay import ReplayAgent
from gate.config import Config
from gate.errors import Problem, RunsFileError
from gate.model import Run
from gate.replay.session import AgentFailure, ErrorKind, Job, Session, within_budget
from gate.runsfile import iter_runs


class ReplayRunsAgent:
    """The ``replay`` adapter (module docstring)."""

    kind = "replay"
    max_parallel: int | None = 1
    """Nothing to wait for: no parallelism needed."""

    def __init__(self, config: Config, cfg: ReplayAgent):
        self._cfg = cfg
        self._path = config.resolve(cfg.runs)
        self._display = cfg.runs
        self._runs: dict[tuple[str, int], Run] = {}
        self._lines: dict[tuple[str, int], int] = {}
        self._samples: dict[str, set[int]] = {}
        for lineno, run in iter_runs(self._path, display=self._display):
            key = (run.case_id, run.sample)
            if key in self._runs:
                raise RunsFileError(
                    Problem(
                        self._display,
                        lineno,
                        "sample",
                        f"case {run.case_id!r} sample {run.sample} appears twice "
                        f"(first on line {self._lines[key]})",
                    )
                )
            self._runs[key] = run
            self._lines[key] = lineno
            self._samples.setdefault(run.case_id, set()).add(run.sample)

    def check_cases(self, known: Collection[str]) -> None:
        """Every run must be for a case of the dataset."""
        unknown = sorted((line, cid) for (cid, _), line in self._lines.items() if cid not in known)
        if unknown:
            raise RunsFileError(
                [
                    Problem(self._display, line, "case_id", f"{cid!r} is not a case of the dataset")
                    for line, cid in unknown[:20]
                ],
                hint=f"{len(unknown)} run(s) for unknown cases: is the runs file for this dataset?",
            )

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "runs": self._display, **self._cfg.declared()}

    def samples_for(self, case_id: str, samples: int) -> Sequence[int]:
        return sorted(set(range(samples)) | self._samples.get(case_id, set()))

    def prepare(self, jobs: int) -> None:
        return None

    def close(self) -> None:
        return None

    def run(self, job: Job, session: Session) -> Run | None:
        stored = self._runs.get((job.case.id, job.sample))
        if stored is None:
            raise AgentFailure(
                ErrorKind.NOT_IN_REPLAY,
                f"{self._display} has no run for case {job.case.id!r} sample {job.sample}",
            )
        return within_budget(stored, job.step_budget)
