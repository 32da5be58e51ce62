"""The policy stage: this run's samples against the base history, with extra samples
only for the cases whose test is undecided (:mod:`gate.policy.engine`).

score ─► **test against the base history** (extra samples through the runner) ─► decide

1. every case gets its hash (:func:`case_hashes`): its content, its tools' definitions,
   the agent/model identity and the scoring config;
2. the baseline's history (``gate.results.history_of``; a results file of the previous
   release starts it from its counts);
3. :func:`gate.policy.engine.evaluate`, whose sampler runs the planned extra samples of a
   round through the runner into ``out/sequential/runs.jsonl`` (numbered after the
   case's samples so far, never into the main runs file) and scores them;
4. the extra samples join the run's table and the run is reduced again;
5. the history this run carries forward: the baseline's, extended with this run's counts
   (a changed case starts again).

A ``replay`` agent cannot be asked for more samples: the run is tested on the samples the
runs file holds.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gate.config import Config, OpenAIAgent
from gate.dataset import Dataset
from gate.gcpause import no_gc
from gate.model import Case, Shard
from gate.pipeline.inputs import Baseline, scoring_context
from gate.pipeline.score import Scored
from gate.policy.engine import (
    EngineParams,
    Evaluation,
    GatedMetric,
    HeadCase,
    Sample,
    case_runs,
    evaluate,
)
from gate.policy.history import BaseHistory, case_hash, extend
from gate.policy.reduce import reduce
from gate.policy.sequential import SequentialParams
from gate.policy.suite import Better
from gate.policy.table import SampleRows, assemble
from gate.results import Results
from gate.runsfile import Coverage, RunsIndex, RunsWriter
from gate.scorers.context import NormalizerTable

SEQUENTIAL_DIR = "sequential"
"""Where the extra samples' runs go, under the output folder."""


@dataclasses.dataclass(frozen=True, slots=True)
class Tested:
    """What the policy stage hands on to the decision and the results."""

    scored: Scored
    evaluation: Evaluation
    params: EngineParams
    gated: tuple[GatedMetric, ...]
    hashes: Mapping[str, str]
    history: BaseHistory
    """The history this run carries forward (the baseline's plus this run's counts)."""
    base_history: BaseHistory | None
    """The history the run was tested against."""


def engine_params(config: Config, samples: int) -> EngineParams:
    """The engine's parameters from the config's ``samples`` and ``policy`` keys."""
    pol = config.policy
    extra = pol.max_extra_samples
    if config.agent.kind == "replay":
        extra = 0  # a runs file cannot grow: test on what it holds
    return EngineParams(
        alpha=pol.alpha,
        sequential=SequentialParams(
            initial=samples,
            max_per_case=max(pol.max_samples_per_case, samples),
            max_extra=extra,
        ),
    )


def gated_metrics(config: Config) -> tuple[GatedMetric, ...]:
    """The metrics the suite test watches: those of the dataset-wide gates (a ``min``
    gate means higher is better), once each, in config order."""
    out: dict[str, GatedMetric] = {}
    for g in config.gates:
        if g.slice is None and g.metric not in out:
            out[g.metric] = GatedMetric(
                g.metric, Better.HIGHER if g.min is not None else Better.LOWER
            )
    return tuple(out.values())


def agent_identity(config: Config) -> dict[str, Any]:
    """What identifies the model under test: for an endpoint, the model and its sampling
    settings; for a program (command, python, replay), its kind only — its code is what a
    pull request changes, so it must not make the cases incomparable."""
    agent = config.agent
    if isinstance(agent, OpenAIAgent):
        return {
            "kind": agent.kind,
            "model": agent.model,
            "base_url": agent.base_url,
            "temperature": agent.temperature,
            "params": agent.params,
            "system_prompt_file": agent.system_prompt_file,
        }
    return {"kind": agent.kind}


def case_content(case: Case) -> dict[str, Any]:
    """The case as data, without where it stands in the file (moving a line changes
    nothing) and without its tools (hashed by definition)."""
    doc = dataclasses.asdict(case)
    doc.pop("source", None)
    doc.pop("available_tools", None)
    # Expected calls as the first release hashed them (ExpectedCall.content), so a case
    # that uses no newer form keeps its hash and its base history.
    doc["expected_tool_calls"] = [e.content() for e in case.expected_tool_calls]
    doc["acceptable_alternatives"] = [
        [e.content() for e in alt] for alt in case.acceptable_alternatives
    ]
    return doc


def case_hashes(cases: Sequence[Case], config: Config) -> dict[str, str]:
    """Case id → :func:`gate.policy.history.case_hash`."""
    agent = agent_identity(config)
    scoring = {
        "scoring": config.scoring.model_dump(mode="json"),
        "normalize": config.dataset.normalize.model_dump(mode="json"),
    }
    return {
        c.id: case_hash(
            case=case_content(c),
            tools={t.name: t.definition_hash() for t in c.available_tools},
            agent=agent,
            scoring=scoring,
        )
        for c in cases
    }


def _samples_of(
    rows: SampleRows, case_ids: Sequence[str], names: Sequence[str]
) -> dict[str, list[tuple[int, Sample]]]:
    """Per case id, its (sample number, :class:`Sample`) rows, in row order — but the
    missing ones (:attr:`gate.policy.table.SampleRows.missing`): the infrastructure
    failed them, so the test against the base history sees fewer observations."""
    col = {n: j for j, n in enumerate(rows.names)}
    out: dict[str, list[tuple[int, Sample]]] = {}
    cols = [(n, col.get(n)) for n in names]
    for r in range(len(rows)):
        if r in rows.missing:
            continue
        metrics: dict[str, float | None] = {}
        for n, j in cols:
            v = None if j is None else float(rows.values[r, j])
            metrics[n] = None if v is None or np.isnan(v) else v
        cid = case_ids[int(rows.case[r])]
        out.setdefault(cid, []).append((int(rows.sample[r]), Sample(bool(rows.passed[r]), metrics)))
    return out


class _Sampler:
    """Runs a round's extra samples through the runner and scores them (module doc)."""

    def __init__(
        self,
        head: Scored,
        *,
        config: Config,
        dataset: Dataset,
        runs: RunsIndex,
        out: Path,
        samples: int,
        shard: Shard | None,
        norms: NormalizerTable | None,
        names: Sequence[str],
    ) -> None:
        self.head = head
        self.config = config
        self.dataset = dataset
        self.runs = runs
        self.dir = out / SEQUENTIAL_DIR
        self.samples = samples
        self.shard = shard
        self.norms = norms
        self.names = names
        self.ids = [m.id for m in head.table.metas]
        self.taken: dict[str, int] = {}
        """Case id → samples it has (initial and extra), for the cases seeded here."""
        self.last: Any = None
        """The last round's scored extra runs (every extra sample so far)."""

    def __call__(self, plan: Mapping[str, int]) -> dict[str, list[Sample]]:
        from gate.outdir import write_atomic
        from gate.pipeline._scorepool import ScoreJob, SerialExecutor
        from gate.replay.runner import HEADER_FILE, RUNS_FILE, run_all

        path = self.dir / RUNS_FILE
        new = [cid for cid in plan if cid not in self.taken]
        if new:
            # The seed lines are this run's: its header goes with them, so that the
            # runner's resume accepts them.
            header = self.dir.parent / HEADER_FILE
            if not self.taken and header.is_file():
                self.dir.mkdir(parents=True, exist_ok=True)
                write_atomic(self.dir / HEADER_FILE, [header.read_bytes()])
            assert self.runs.rows is not None
            want = set(new)
            dataset_ids = [c.id for c in self.dataset.cases]
            seed_rows = [k for k, i in enumerate(self.runs.rows.case) if dataset_ids[i] in want]
            with RunsWriter(path, append=bool(self.taken)) as writer:
                for _, run in self.runs.runs(seed_rows):
                    writer.write(run)
            for cid in new:
                self.taken[cid] = self.samples
        recorded = {(cid, s) for cid, n in self.taken.items() for s in range(n)}
        groups: dict[tuple[int, int], list[str]] = {}
        for cid, k in plan.items():
            groups.setdefault((self.taken[cid], k), []).append(cid)
        for (have, k), cids in sorted(groups.items()):
            run_all(
                self.config,
                self.dataset,
                self.dir,
                samples=have + k,
                shard=self.shard,
                resume=True,
                case_ids=cids,
                progress=False,
                recorded=recorded,
                norms=self.norms,
            )
            recorded |= {(cid, s) for cid in cids for s in range(have, have + k)}
        before = dict(self.taken)
        for cid, k in plan.items():
            self.taken[cid] += k
        cases = [c for c in self.dataset.cases if c.id in self.taken]
        with RunsIndex(path) as extra_runs, no_gc():
            coverage = Coverage(
                cases,
                runs_display=extra_runs.display,
                dataset_display=self.dataset.display,
                equal_samples=False,
            )
            job = ScoreJob(
                index=extra_runs,
                coverage=coverage,
                cases=cases,
                ctx=scoring_context(self.config, self.dataset, norms=self.norms),
                metas=self.head.table.metas,
                min_sample=self.samples,
                extra=True,
            )
            self.last = SerialExecutor().score(job)
        got: dict[str, list[tuple[int, Sample]]] = {}
        for batch in self.last.batches:
            for cid, rows in _samples_of(batch, self.ids, self.names).items():
                got.setdefault(cid, []).extend(rows)
        out: dict[str, list[Sample]] = {}
        for cid, k in plan.items():
            rows = sorted(got.get(cid, []), key=lambda r: r[0])
            out[cid] = [s for n, s in rows if before[cid] <= n < before[cid] + k]
        return out


def _no_sampler(plan: Mapping[str, int]) -> dict[str, list[Sample]]:
    raise AssertionError(f"no extra samples may be planned here, got {dict(plan)}")


def policy_stage(
    head: Scored,
    *,
    base: Baseline | None,
    config: Config,
    dataset: Dataset,
    runs: RunsIndex,
    out: Path,
    samples: int,
    shard: Shard | None,
    norms: NormalizerTable | None = None,
) -> Tested:
    """The module docstring's steps 1–5."""
    from gate.results import history_of

    params = engine_params(config, samples)
    gated = gated_metrics(config)
    names = [g.name for g in gated]
    in_scope = {m.id for m in head.table.metas}
    hashes = case_hashes([c for c in dataset.cases if c.id in in_scope], config)
    history = (
        history_of(base.results, hashes, dataset_sha256=dataset.sha256)
        if base is not None
        else None
    )
    initial = _samples_of(head.table.rows, [m.id for m in head.table.metas], names)
    head_cases = [
        HeadCase(
            m.id,
            hashes[m.id],
            tuple(s for _, s in sorted(initial.get(m.id, []), key=lambda r: r[0])),
        )
        for m in head.table.metas
    ]
    sampler = _Sampler(
        head,
        config=config,
        dataset=dataset,
        runs=runs,
        out=out,
        samples=samples,
        shard=shard,
        norms=norms,
        names=names,
    )
    evaluation = evaluate(
        history,
        head_cases,
        sampler if params.sequential.max_extra != 0 else _no_sampler,
        params=params,
        gated=gated,
    )
    scored = head
    if sampler.last is not None:
        extra = sampler.last
        batches = [*head.batches, *extra.batches]
        with no_gc():
            table = assemble(head.table.metas, batches)
            stats = reduce(table, head.stats.header, seed=head.seed, max_extra=evaluation.spend.cap)
        scored = dataclasses.replace(
            head,
            stats=stats,
            table=table,
            batches=batches,
            records=head.records.joined(extra.records).bind(table),
            _results=None,
        )
    carried = extend(history, case_runs(head_cases, evaluation))
    return Tested(scored, evaluation, params, gated, hashes, carried, history)


def detect_sentences(tested: Tested) -> list[str]:
    """What this run could detect, what it spent and what stayed undecided, in words
    (:func:`gate.policy.power.sentences`); without a comparable case, only the spend."""
    from gate.policy.power import detectability, sentences

    bases = [v.base for v in tested.evaluation.cases if v.base is not None]
    detect = detectability(bases, params=tested.params, gated_metrics=len(tested.gated))
    return sentences(tested.evaluation, detect)


@dataclasses.dataclass(frozen=True, slots=True)
class RecordedTests:
    """The tests against the base history on samples already taken (results merged from
    shards): what :func:`gate.results.policy_fields` and the decision need."""

    evaluation: Evaluation
    params: EngineParams
    gated: tuple[GatedMetric, ...]
    hashes: Mapping[str, str]
    history: BaseHistory
    detect: list[str]


def recorded_tests(
    parts: Sequence[Results], baseline: Results | None, config: Config | None
) -> RecordedTests | None:
    """The tests on the shards' samples, initial and extra, as one family over every case
    (no more samples are taken: a merge runs no agent). ``None`` when a part was written
    without case hashes (an earlier release): nothing to test against then."""
    from gate.policy.history import CaseHistory, HistoryEntry, MetricSums
    from gate.policy.power import detectability, sentences
    from gate.results import history_of

    cases = [c for part in parts for c in part.cases]
    if not cases or any(c.hash is None for c in cases):
        return None
    gated = gated_metrics(config) if config is not None else ()
    names = [g.name for g in gated]
    samples = parts[0].samples
    params = EngineParams(
        alpha=config.policy.alpha if config is not None else EngineParams().alpha,
        sequential=SequentialParams(initial=samples, max_per_case=max(samples, 40), max_extra=0),
    )
    hashes = {c.id: c.hash or "" for c in cases}
    head: list[HeadCase] = []
    for part in parts:
        for c in part.cases:

            def sample(s: Any, part: Results = part) -> Sample:
                sc = part.sample_scores(s)
                return Sample(s.passed, {n: sc.get(n) for n in names})

            ordered = sorted(c.samples, key=lambda s: s.sample)
            head.append(
                HeadCase(
                    c.id,
                    hashes[c.id],
                    tuple(sample(s) for s in ordered if not s.extra),
                    tuple(sample(s) for s in ordered if s.extra),
                )
            )
    by_id = {h.case_id: i for i, h in enumerate(head)}
    order = [c.id for c in cases]
    head = [head[by_id[i]] for i in order]
    history = (
        history_of(baseline, hashes, dataset_sha256=parts[0].dataset.sha256)
        if baseline is not None
        else None
    )
    evaluation = evaluate(history, head, _no_sampler, params=params, gated=gated)
    carried = BaseHistory(
        {
            c.id: CaseHistory(
                c.hash or "",
                tuple(
                    HistoryEntry(
                        e.passes,
                        e.samples,
                        {k: MetricSums(int(v[0]), v[1], v[2]) for k, v in e.metrics.items()},
                    )
                    for e in c.history
                ),
            )
            for c in cases
            if c.history
        }
    )
    bases = [v.base for v in evaluation.cases if v.base is not None]
    detect = sentences(evaluation, detectability(bases, params=params, gated_metrics=len(gated)))
    return RecordedTests(evaluation, params, gated, hashes, carried, detect)
