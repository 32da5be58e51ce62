"""The ``replay`` agent adapter: runs produced elsewhere; no agent is run.

What the file must hold, and ``agent.missing`` (:meth:`ReplayRunsAgent.check_scope`), are
written once in docs/agent-protocol.md ("``replay``"); samples the file holds beyond
``samples`` are kept too, and the same case-sample twice is an input error naming the line.

The adapter keeps where each run is, not the run: every line is parsed when the adapter
is built (a bad line is refused before anything runs) and read again, by its offset, when
its case-sample runs — so a file of 300,000 runs costs a few arrays, not the runs.

A stored run is held to what a live agent may record (the step budget applies to replay
too, :func:`gate.replay.session.within_budget`): its turns past the case's step budget and
its calls past :data:`gate.replay.session.MAX_BATCH_CALLS` in one turn are not kept, and
it ends with a ``step_budget`` error; the file's reader keeps at most
:data:`gate.runsfile.MAX_RUN_CALLS` calls of a line, so a line of a million calls costs
what the kept ones cost.
"""

from __future__ import annotations

import sys
from collections.abc import Collection, Sequence
from typing import Any

from gate.agents.replay import MissingRuns, ReplayAgent
from gate.config import Config
from gate.errors import Problem, RunsFileError
from gate.model import Case, Run
from gate.replay.interface import Agent
from gate.replay.session import AgentFailure, ErrorKind, Job, Session, within_budget
from gate.runsfile import RunRows, open_runs, parse_run_line, read_at


class ReplayRunsAgent(Agent):
    """The ``replay`` adapter (module docstring)."""

    kind = "replay"
    max_parallel: int | None = 1
    """Nothing to wait for: no parallelism needed."""

    def __init__(self, config: Config, cfg: ReplayAgent):
        self._cfg = cfg
        self._display = cfg.runs
        # Where each run is, not the run (module docstring).
        self._rows: dict[tuple[str, int], int] = {}
        self._where = RunRows()
        self._samples: dict[str, set[int]] = {}
        self._skipped: set[tuple[str, int]] = set()
        self._fh = open_runs(config.resolve(cfg.runs), self._display)
        try:
            self._index()
        except BaseException:
            self._fh.close()
            raise

    def _index(self) -> None:
        start = 0
        for lineno, line in enumerate(self._fh, start=1):
            at, start = start, start + len(line)
            if not line.strip():
                continue
            run = parse_run_line(line, file=self._display, lineno=lineno)
            key = (sys.intern(run.case_id), run.sample)
            first = self._rows.get(key)
            if first is not None:
                raise RunsFileError(
                    Problem(
                        self._display,
                        lineno,
                        "sample",
                        f"case {run.case_id!r} sample {run.sample} appears twice "
                        f"(first on line {self._where.line[first]})",
                    )
                )
            self._rows[key] = len(self._where)
            self._where.line.append(lineno)
            self._where.start.append(at)
            self._where.length.append(len(line))
            self._samples.setdefault(key[0], set()).add(run.sample)

    def check_cases(self, known: Collection[str]) -> None:
        """Every run must be for a case of the dataset."""
        unknown = sorted(
            (self._where.line[row], cid) for (cid, _), row in self._rows.items() if cid not in known
        )
        if unknown:
            raise RunsFileError(
                [
                    Problem(self._display, line, "case_id", f"{cid!r} is not a case of the dataset")
                    for line, cid in unknown[:20]
                ],
                hint=f"{len(unknown)} run(s) for unknown cases: is the runs file for this dataset?",
            )

    def check_scope(self, cases: Sequence[Case], samples: int) -> None:
        """The file must hold every planned case-sample of ``cases``: those it lacks are
        bad input naming them (the first few and a count), or — with ``agent.missing:
        skip`` — not run."""
        absent = [
            (c, [s for s in self.samples_for(c.id, samples) if (c.id, s) not in self._rows])
            for c in cases
        ]
        absent = [(c, ss) for c, ss in absent if ss]
        if not absent:
            return
        if self._cfg.missing is MissingRuns.SKIP:
            self._skipped = {(c.id, s) for c, ss in absent for s in ss}
            return
        whole = [c for c, ss in absent if not self._samples.get(c.id)]
        part = [(c, ss) for c, ss in absent if self._samples.get(c.id)]
        problems = []
        if whole:
            problems.append(
                Problem(
                    self._display,
                    None,
                    "case_id",
                    f"no run of {len(whole)} of the {len(cases)} cases: {_ids(whole)}",
                )
            )
        if part:
            shown = ", ".join(
                f"{c.id!r} sample {', '.join(map(str, ss[:3]))}{', …' if len(ss) > 3 else ''}"
                for c, ss in part[:SHOW_ABSENT]
            )
            more = f", … (+{len(part) - SHOW_ABSENT} more cases)" if len(part) > SHOW_ABSENT else ""
            problems.append(
                Problem(
                    self._display,
                    None,
                    "sample",
                    f"no run of {sum(len(ss) for _, ss in part)} sample(s) of {len(part)} "
                    f"case(s) it holds: {shown}{more}",
                )
            )
        present = len(cases) - len(whole)
        raise RunsFileError(
            problems,
            hint=(
                "Record the missing runs, or set agent.missing: skip to gate on the "
                f"{present:,} case(s) present; the others are listed as not run."
            ),
        )

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "runs": self._display, **self._cfg.declared()}

    def samples_for(self, case_id: str, samples: int) -> Sequence[int]:
        return sorted(set(range(samples)) | self._samples.get(case_id, set()))

    def close(self) -> None:
        self._fh.close()

    def run(self, job: Job, session: Session) -> Run | None:
        row = self._rows.get((job.case.id, job.sample))
        if row is None and (job.case.id, job.sample) in self._skipped:
            raise AgentFailure(
                ErrorKind.NOT_RUN,
                f"{self._display} has no run for case {job.case.id!r} sample {job.sample} "
                "(agent.missing: skip)",
            )
        if row is None:
            raise AgentFailure(
                ErrorKind.NOT_IN_REPLAY,
                f"{self._display} has no run for case {job.case.id!r} sample {job.sample}",
            )
        at = self._where
        line = read_at(self._fh.fileno(), at.start[row], at.length[row], display=self._display)
        stored = parse_run_line(line, file=self._display, lineno=at.line[row])
        return within_budget(stored, job.step_budget)


SHOW_ABSENT = 5
"""Cases a runs file lacks that its error names (the rest are counted)."""


def _ids(cases: Sequence[Case]) -> str:
    shown = ", ".join(repr(c.id) for c in cases[:SHOW_ABSENT])
    more = len(cases) - SHOW_ABSENT
    return shown + (f", … (+{more} more)" if more > 0 else "")
