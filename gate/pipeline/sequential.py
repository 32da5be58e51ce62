"""The policy stage: this run's samples against the base history, with extra samples
only for the cases whose test is undecided (:mod:`gate.policy.engine`).

score ─► **test against the base history** (extra samples through the runner) ─► decide

1. every case gets its hash (:func:`case_hashes`): its content and the scoring config —
   what defines the test; and its setup (:func:`setup_hashes`): the agent identity and
   its tools' definitions — what a pull request tests, compared, never a reason not to;
2. the baseline's history (``gate.pipeline.typed.history_of``; a results file of the previous
   release starts it from its counts);
3. :func:`gate.policy.engine.evaluate`, whose sampler runs the planned extra samples of a
   round through the runner into ``out/sequential/runs.jsonl`` (numbered after the
   case's samples so far, never into the main runs file) and scores them;
4. the extra samples join the run's table and the run is reduced again;
5. the history this run carries forward: the baseline's, extended with this run's counts
   (a changed case starts again).

An agent whose samples are recorded (``replay``) cannot be asked for more: the run is
tested on the samples the runs file holds.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gate.config import Config
from gate.dataset import Dataset
from gate.jsonio import no_gc
from gate.model import Case, CaseOutcome, Comparison, CostDelta, RunBill, Shard, SuiteStats
from gate.pipeline.inputs import Baseline, scoring_context
from gate.pipeline.score import Scored
from gate.pipeline.typed import (
    ALPHAS,
    ENGINE_PARAMS,
    SUITE_FIELDS,
    CaseFields,
    history_entry,
    history_info,
)
from gate.policy.engine import (
    EngineParams,
    Evaluation,
    GatedMetric,
    HeadCase,
    Sample,
    Spend,
    case_runs,
    evaluate,
    kept,
    seeding_of,
)
from gate.policy.history import (
    CASE_HASH_VERSION,
    IDENTITY_KEYS,
    LEGACY_IDENTITY_KEYS,
    BaseHistory,
    Comparability,
    agent_identity,
    case_hash,
    extend,
    legacy_case_hash,
    lookup,
    setup_hash,
)
from gate.policy.power import Detectability
from gate.policy.reduce import in_slice, reduce
from gate.policy.sequential import SequentialParams, seed_plan
from gate.policy.suite import Better
from gate.policy.table import CaseMeta, SampleRows, assemble
from gate.results import (
    CaseResult,
    PolicyFields,
    PolicyInfo,
    PolicyParams,
    Results,
    SpendInfo,
    SuiteTestResult,
)
from gate.runsfile import Coverage, RunsIndex, RunsWriter
from gate.scorers.context import NormalizerTable
from gate.scorers.registry import COST_METRICS

SEQUENTIAL_DIR = "sequential"
"""Where the extra samples' runs go, under the output folder."""


@dataclasses.dataclass(frozen=True, slots=True)
class Tests:
    """The tests against the base history: what the decision and results.json's policy
    fields (:meth:`fields`) need."""

    evaluation: Evaluation
    params: EngineParams
    gated: tuple[GatedMetric, ...]
    hashes: Mapping[str, str]
    history: BaseHistory
    """The history this run carries forward (the baseline's plus this run's counts)."""
    recorded: bool
    """The runs were recorded elsewhere (a ``replay`` agent): no sample can be added."""
    hash_version: int
    """What the case hashes cover (``Results.case_hash_version``)."""

    def fields(self, *, base_run: bool = False, bill: RunBill | None = None) -> PolicyFields:
        """These tests as results.json's policy fields, with what this run could detect,
        what it spent and what stayed undecided, in words
        (:func:`gate.policy.power.sentences`; without a comparable case, only the spend)."""
        from gate.policy.power import sentences

        ev, seq = self.evaluation, self.params.sequential
        detection = detection_of(ev, self.params, sum(g.gated for g in self.gated))
        spent = {f.name: getattr(ev.spend, f.name) for f in dataclasses.fields(Spend)}
        # the spend's fields by name, but the cases held back named, not counted
        spent["held_back"] = [i for i in ev.cases if i in ev.held_back]
        outcomes = Counter(v.outcome.value for v in ev.cases.values())
        info = PolicyInfo(
            params=PolicyParams(
                **{k: getattr(self.params, k) for k in (*ENGINE_PARAMS, *ALPHAS)},
                initial_samples=seq.initial,
                max_extra_samples=seq.max_extra,
                max_samples_per_case=seq.max_per_case,
                history_window=self.history.window,
                min_history=seq.min_history,
                max_seed_samples=seq.max_seed,
            ),
            blocked=ev.blocked,
            reasons=[r.value for r in ev.reasons],
            outcomes=dict(sorted(outcomes.items())),
            suite=[
                SuiteTestResult(
                    **{k: getattr(t, k) for k in SUITE_FIELDS},
                    typical=t.cost.typical if t.cost is not None else None,
                    typical_p_value=t.cost.typical_p_rise if t.cost is not None else None,
                )
                for t in ev.suite
            ],
            flakiness=ev.flakiness,
            spend=SpendInfo(**spent),
            detect=sentences(ev, detection, recorded=self.recorded),
            history=history_info(ev, seq.min_history, detection),
            base_run=base_run,
            recorded=self.recorded,
            bill=bill,
        )
        return PolicyFields(info, CaseFields(ev, self.hashes, self.history), self.hash_version)


@dataclasses.dataclass(frozen=True, slots=True)
class Tested(Tests):
    """What the policy stage hands on to the decision and the results: the tests, and
    the run with their extra samples."""

    scored: Scored


def engine_params(config: Config, samples: int, *, more: bool = True) -> EngineParams:
    """The engine's parameters from the config's ``samples`` and ``policy`` keys;
    ``more`` false: no extra or seeding sample at all."""
    pol = config.policy
    extra, seed = pol.max_extra_samples, pol.max_seed_samples
    if not more or config.agent.samples_recorded:
        extra = seed = 0  # (a runs file cannot grow: test on what it holds)
    return EngineParams(
        alpha=pol.alpha,
        sequential=SequentialParams(
            initial=samples,
            max_per_case=max(pol.max_samples_per_case, samples),
            max_extra=extra,
            min_history=pol.min_history,
            max_seed=seed,
        ),
    )


def gated_metrics(
    config: Config | None, cases: Iterable[CaseMeta | CaseResult] = ()
) -> tuple[GatedMetric, ...]:
    """The metrics the suite test watches, in config order: the quality metrics of the
    dataset-wide gates (a ``min`` gate means higher is better), once each; each
    ``max_increase`` gate on a cost metric (on its slice's ``cases`` when it names one);
    then every cost metric not gated so at the dataset level, reported only (the Cost
    group). A ``max`` gate on a cost metric is a bound on its value, not a suite test."""
    listed = list(cases)
    out: dict[tuple[str, str | None], GatedMetric] = {}
    for g in config.gates if config is not None else ():
        if g.max_increase is not None:
            members = (
                None
                if g.slice is None
                else frozenset(
                    c.id
                    for c in listed
                    if in_slice(
                        g.slice, difficulty=c.difficulty, tags=c.tags,
                        no_tool=c.expected_no_tool, must_not_call=bool(c.must_not_call),
                    )
                )
            )  # fmt: skip
            out.setdefault(
                (g.metric, g.slice),
                GatedMetric(
                    g.metric,
                    Better.LOWER,
                    max_increase=g.max_increase,
                    slice=g.slice,
                    cases=members,
                    cost=True,
                ),
            )
        elif g.slice is None and g.metric not in COST_METRICS:
            out.setdefault(
                (g.metric, None),
                GatedMetric(g.metric, Better.HIGHER if g.min is not None else Better.LOWER),
            )
    for name in COST_METRICS:
        out.setdefault((name, None), GatedMetric(name, Better.LOWER, gated=False, cost=True))
    return tuple(out.values())


def case_content(case: Case) -> dict[str, Any]:
    """The case as data, without where it stands in the file (moving a line changes
    nothing) and without its tools (what a pull request tests, not the test)."""
    doc = dataclasses.asdict(case)
    doc.pop("source", None)
    doc.pop("available_tools", None)
    # Expected calls as the first release hashed them (ExpectedCall.content), so a case
    # that uses no newer form keeps its hash and its base history.
    doc["expected_tool_calls"] = [e.content() for e in case.expected_tool_calls]
    doc["acceptable_alternatives"] = [
        [e.content() for e in alt] for alt in case.acceptable_alternatives
    ]
    if case.conversation:
        doc["conversation"] = [
            {
                **dataclasses.asdict(t),
                "expected_tool_calls": [e.content() for e in t.expected_tool_calls],
                "acceptable_alternatives": [
                    [e.content() for e in alt] for alt in t.acceptable_alternatives
                ],
            }
            for t in case.conversation
        ]
    else:
        doc.pop("conversation", None)  # one-turn cases keep the hash they had
    if case.pass_on is None:
        doc.pop("pass_on", None)  # a case that does not choose keeps the hash it had
    return doc


def _scoring_doc(config: Config) -> dict[str, Any]:
    return {
        "scoring": config.scoring.model_dump(mode="json"),
        "normalize": config.dataset.normalize.model_dump(mode="json"),
    }


def case_hashes(cases: Sequence[Case], config: Config) -> dict[str, str]:
    """Case id → :func:`gate.policy.history.case_hash` (its content and the scoring)."""
    scoring = _scoring_doc(config)
    return {c.id: case_hash(case=case_content(c), scoring=scoring) for c in cases}


def setup_hashes(
    cases: Sequence[Case], agent: Mapping[str, Any], keys: Sequence[str] = IDENTITY_KEYS
) -> dict[str, str]:
    """Case id → :func:`gate.policy.history.setup_hash`: the agent identity (from its
    description, the ``keys`` of it) and the definitions of the case's tools."""
    identity = agent_identity(agent, keys)
    return {
        c.id: setup_hash(
            agent=identity, tools={t.name: t.definition_hash() for t in c.available_tools}
        )
        for c in cases
    }


def legacy_hashes(cases: Sequence[Case], config: Config, base: Results) -> dict[str, str]:
    """Case id → the previous release's hash of the case as ``base`` saw it (this
    content and scoring, the base run's tool definitions and agent): a history of that
    release whose hash equals it is the same test, and takes the current hash. A case
    offering a tool the base run did not know has none (it is not comparable, once)."""
    scoring = _scoring_doc(config)
    agent: dict[str, Any] = {"kind": base.agent.get("kind")}
    if base.agent.get("kind") == config.agent.kind:
        agent.update(config.agent.legacy_identity(base.agent))
    out: dict[str, str] = {}
    for c in cases:
        names = [t.name for t in c.available_tools]
        if any(n not in base.tools for n in names):
            continue
        out[c.id] = legacy_case_hash(
            case=case_content(c),
            tools={n: base.tools[n].hash for n in names},
            agent=agent,
            scoring=scoring,
        )
    return out


def _samples_of(
    rows: SampleRows, case_ids: Sequence[str], names: Sequence[str]
) -> dict[str, list[tuple[int, Sample]]]:
    """Per case id, its (sample number, :class:`Sample`) rows, in row order — but the
    missing ones (:attr:`gate.policy.table.SampleRows.missing`): the infrastructure
    failed them, so the test against the base history sees fewer observations."""
    col = {n: j for j, n in enumerate(rows.names)}
    hard = {r for r, _ in rows.hard}
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
        out.setdefault(cid, []).append(
            (int(rows.sample[r]), Sample(bool(rows.passed[r]), metrics, r in hard))
        )
    return out


@dataclasses.dataclass(slots=True)
class _Sampler:
    """Runs a round's extra samples through the runner into ``dir`` and scores them
    (module doc)."""

    head: Scored
    config: Config
    dataset: Dataset
    runs: RunsIndex
    dir: Path
    samples: int
    shard: Shard | None
    norms: NormalizerTable | None
    names: Sequence[str]
    progress: bool = False
    announce: Callable[[str], None] | None = None
    seeding: bool = False
    """A base run's seeding is its first plan."""
    calls: int = 0
    """Plans run so far."""
    taken: dict[str, int] = dataclasses.field(default_factory=dict)
    """Case id → samples it has (initial and extra), for the cases seeded here."""
    last: Any = None
    """The last round's scored extra runs (every extra sample so far)."""

    def _seeding_note(self, n: int) -> str:
        """What the seeding about to start costs: at this run's own cost per agent run
        (its first samples, scored with the config's prices) when it has one."""
        cost = self.head.stats.metrics.get("cost")
        per_run = cost.mean if cost is not None else None
        what = f"toolgate: seeding the base histories now: {n:,} agent runs"
        if per_run is None:
            return what + "."
        return (
            f"{what}, estimated cost {_money(per_run * n)} at this run's own cost per "
            f"agent run ({_money(per_run)}, at the prices of pricing)."
        )

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
                # The lines as they are (read and checked once, by the score stage).
                for line in self.runs.lines(seed_rows):
                    writer.write_line(line if line.endswith(b"\n") else line + b"\n")
            for cid in new:
                self.taken[cid] = self.samples
        recorded = {(cid, s) for cid, n in self.taken.items() for s in range(n)}
        groups: dict[tuple[int, int], list[str]] = {}
        for cid, k in plan.items():
            groups.setdefault((self.taken[cid], k), []).append(cid)
        what = (
            "case-samples seeding the base history"
            if self.seeding and self.calls == 0
            else f"extra case-samples (round {self.calls + (0 if self.seeding else 1)})"
        )
        if self.seeding and self.calls == 0 and self.announce is not None:
            self.announce(self._seeding_note(sum(plan.values())))
        self.calls += 1
        for (have, k), cids in sorted(groups.items()):
            run_all(
                self.config,
                self.dataset,
                self.dir,
                samples=have + k,
                shard=self.shard,
                resume=True,
                case_ids=cids,
                progress=self.progress,
                progress_label=what,
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
        ids = [m.id for m in self.head.table.metas]
        for batch in self.last.batches:
            for cid, rows in _samples_of(batch, ids, self.names).items():
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
    seed: bool = False,
    progress: bool = False,
    sample_more: bool = True,
    announce: Callable[[str], None] | None = None,
) -> Tested:
    """The module docstring's steps 1–5. ``seed``: a base run, which also brings every
    case's history up to ``policy.min_history`` samples; ``sample_more`` false: no extra
    sample at all (a run that is not valid whatever they show)."""
    params = engine_params(config, samples, more=sample_more)
    gated = gated_metrics(config, head.table.metas)
    names = list(dict.fromkeys(g.name for g in gated))
    in_scope = {m.id for m in head.table.metas}
    cases = [c for c in dataset.cases if c.id in in_scope]
    hashes, history, bare = _against_history(cases, config, dataset, base, head.stats.header.agent)
    initial = _samples_of(head.table.rows, [m.id for m in head.table.metas], names)
    head_cases = [
        dataclasses.replace(
            bare[m.id],
            samples=tuple(s for _, s in sorted(initial.get(m.id, []), key=lambda r: r[0])),
        )
        for m in head.table.metas
    ]
    sampler = _Sampler(
        head=head,
        config=config,
        dataset=dataset,
        runs=runs,
        dir=out / SEQUENTIAL_DIR,
        samples=samples,
        shard=shard,
        norms=norms,
        names=names,
        progress=progress,
        announce=announce,
        seeding=seed and bool(seeding_of(history, head_cases, params.sequential)),
    )
    evaluation = evaluate(
        history,
        head_cases,
        sampler if params.sequential.max_extra != 0 or seed else _no_sampler,
        params=params,
        gated=gated,
        seed=seed,
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
    carried = extend(history, case_runs(head_cases, evaluation, gated))
    recorded = config.agent.samples_recorded
    return Tested(evaluation, params, gated, hashes, carried, recorded, CASE_HASH_VERSION, scored)


def _against_history(
    cases: Sequence[Case],
    config: Config,
    dataset: Dataset,
    base: Baseline | None,
    agent: Mapping[str, Any],
) -> tuple[dict[str, str], BaseHistory | None, dict[str, HeadCase]]:
    """The cases' hashes, the baseline's history as this run reads it, and each case as a
    :class:`HeadCase` without samples (its hash and setup under ``agent``, the agent's
    description): what the test against the history and the bill both start from."""
    from gate.pipeline.typed import history_of

    hashes = case_hashes(cases, config)
    setups = setup_hashes(cases, agent)
    legacy_setups = setup_hashes(cases, agent, LEGACY_IDENTITY_KEYS)
    history = (
        history_of(
            base.results,
            hashes,
            dataset_sha256=dataset.sha256,
            legacy=legacy_hashes(cases, config, base.results),
        )
        if base is not None
        else None
    )
    bare = {
        c.id: HeadCase(c.id, hashes[c.id], (), setup=setups[c.id], legacy_setup=legacy_setups[c.id])
        for c in cases
    }
    return hashes, history, bare


def run_bill(
    config: Config,
    dataset: Dataset,
    cases: Sequence[Case],
    *,
    base: Baseline | None,
    samples: int,
    agent: Mapping[str, Any],
    base_run: bool,
) -> RunBill:
    """What a check of ``cases`` will spend on the agent, before it starts: the initial
    samples, the seeding a base run plans (``policy.min_history`` within
    ``policy.max_seed_samples``: :func:`gate.policy.sequential.seed_plan`, as the engine
    plans it) and the cap on extra samples; with ``pricing``, the cost of one agent run
    from the tokens the base history recorded (:func:`_cost_per_run`)."""
    params = engine_params(config, samples)
    seq = params.sequential
    _, history, bare = _against_history(cases, config, dataset, base, agent)
    seeding: dict[str, int] = {}
    if base_run and seq.min_history and seq.max_seed != 0:
        need = [(c.id, seq.min_history - kept(history, bare[c.id]) - samples) for c in cases]
        seeding = seed_plan(need, seq.max_seed)
    comparable = sum(
        1
        for c in cases
        if lookup(history, c.id, bare[c.id].case_hash)[0] is Comparability.COMPARABLE
    )
    extra_cap = 0 if seq.max_extra == 0 else seq.cap(comparable, base_run=base_run)
    cost, basis = _cost_per_run(config, history)
    return RunBill(
        cases=len(cases),
        samples=samples,
        initial=len(cases) * samples,
        seeding=sum(seeding.values()),
        seeded_cases=len(seeding),
        extra_cap=extra_cap,
        min_history=seq.min_history,
        max_seed=seq.max_seed,
        base_run=base_run,
        cost_per_run=cost,
        cost_basis=basis,
    )


def _cost_per_run(config: Config, history: BaseHistory | None) -> tuple[float | None, str | None]:
    """The estimated cost of one agent run at the config's prices, from the prompt and
    completion tokens each base sample recorded (pooled over every case's history), and
    how it was estimated — or why it cannot be (``(None, None)`` without ``pricing``)."""
    from gate.pipeline.inputs import pricing_of

    pricing = pricing_of(config)
    if pricing is None:
        return None, None
    price = pricing.price_for(pricing.model)
    if price is None:
        return None, (
            f"no price in pricing for the model {pricing.model!r}"
            if pricing.model
            else "no price in pricing for an agent without agent.model (add a `default` price)"
        )
    cases = history.cases.values() if history is not None else ()
    prompts = [v for case in cases for v in case.values("prompt_tokens")]
    completions = [v for case in cases for v in case.values("completion_tokens")]
    p_sum, p_n, c_sum, c_n = sum(prompts), len(prompts), sum(completions), len(completions)
    if not p_n or not c_n:
        return None, (
            "no earlier run recorded the tokens an agent run uses (a base run's seeding is "
            "estimated from its first samples, before it starts)"
        )
    per_run = (p_sum / p_n) * price.input_per_mtok / 1e6 + (c_sum / c_n) * (
        price.output_per_mtok / 1e6
    )
    return per_run, (
        f"{p_sum / p_n:,.0f} prompt and {c_sum / c_n:,.0f} completion tokens per run in the "
        f"base history, priced as {pricing.model or 'default'}"
    )


def bill_lines(bill: RunBill, subject: str | None = None) -> list[str]:
    """The bill in words, printed before the agent's first run (``subject``: what makes
    the runs, "this run" or "this base run" by default)."""
    what = subject or ("this base run" if bill.base_run else "this run")
    line = (
        f"toolgate: {what} makes {bill.runs:,} agent runs: {bill.cases:,} cases × "
        f"{bill.samples} sample{'s' if bill.samples != 1 else ''}"
    )
    if bill.seeding:
        whose = (
            "each case's" if bill.seeded_cases == bill.cases else (f"{bill.seeded_cases:,} cases'")
        )
        cap = (
            f"capped by policy.max_seed_samples: {bill.max_seed:,}"
            if bill.max_seed is not None
            else "policy.max_seed_samples caps it"
        )
        line += (
            f" ({bill.initial:,}), and {bill.seeding:,} more to seed {whose} base history "
            f"to {bill.min_history} samples (policy.min_history; {cap})"
        )
    if bill.extra_cap:
        line += f", and at most {bill.extra_cap:,} more for undecided cases"
    lines = [line + "."]
    if bill.cost_basis is not None:
        if bill.cost_per_run is None:
            lines.append(f"toolgate: its cost cannot be estimated: {bill.cost_basis}.")
        else:
            lines.append(
                f"toolgate: estimated cost {_money(bill.cost_per_run * bill.runs)} "
                f"(at most {_money(bill.cost_per_run * bill.most)}) at the prices of "
                f"pricing: {bill.cost_basis}."
            )
    return lines


def _money(x: float) -> str:
    """An amount at the prices of ``pricing`` (their currency)."""
    return f"{x:,.2f}" if x >= 1 else f"{x:.2g}"


def detection_of(evaluation: Evaluation, params: EngineParams, gated: int) -> Detectability:
    """What this run could detect (:func:`gate.policy.power.detectability`), for its
    histories, its cap as the cases that needed samples shared it, and the threshold its
    regressions set (e-BH rejects cases together)."""
    from gate.policy.power import detectability

    bases = [v.base for v in evaluation.cases.values() if v.base is not None]
    rejected = sum(1 for v in evaluation.cases.values() if v.outcome is CaseOutcome.REGRESSED)
    return detectability(
        bases,
        params=params,
        gated_metrics=gated,
        needed=evaluation.spend.needed,
        rejected=rejected,
    )


def recorded_params(part: Results, config: Config | None) -> EngineParams:
    """The parameters the tests on recorded samples use: the config's when given, else
    the ones the part's own run recorded (``policy.params``), else the defaults."""
    if config is not None:
        return engine_params(config, part.samples, more=False)
    rec = part.policy.params if part.policy is not None else None
    seq = SequentialParams()
    return EngineParams(
        **({k: getattr(rec, k) for k in ENGINE_PARAMS} if rec is not None else {}),
        sequential=SequentialParams(
            initial=part.samples,
            max_per_case=max(rec.max_samples_per_case if rec else seq.max_per_case, part.samples),
            max_extra=0,
            min_history=rec.min_history if rec else seq.min_history,
            max_seed=0,
        ),
    )


def _recorded_hash(part: Results, baseline: Results | None, case_id: str) -> str:
    """The hash of a recorded case written without one (a score-only run, an earlier
    release): the baseline's, when both files come from the same cases (the same dataset,
    or one that differs only in its tool files) and scoring, else one no history holds."""
    same = (
        baseline is not None
        and (
            baseline.dataset.sha256 == part.dataset.sha256
            or (
                baseline.dataset.cases_sha256 is not None
                and baseline.dataset.cases_sha256 == part.dataset.cases_sha256
            )
        )
        and (
            baseline.scoring_sha256 is None
            or part.scoring_sha256 is None
            or baseline.scoring_sha256 == part.scoring_sha256
        )
    )
    if same and baseline is not None:
        return next((c.hash or "" for c in baseline.cases if c.id == case_id), "")
    return f"unhashed:{case_id}"


def recorded_tests(
    parts: Sequence[Results], baseline: Results | None, config: Config | None
) -> Tests:
    """The tests on recorded samples, initial and extra, as one family over every case
    (no more samples are taken): the shards of a merge, or the head of ``toolgate diff``
    and ``toolgate report --baseline``. With the same histories and counts they give
    what the ``check`` that took the samples gave."""
    from gate.pipeline.typed import history_of
    from gate.policy.history import CaseHistory
    from gate.policy.validity import is_missing

    cases = [c for part in parts for c in part.cases]
    gated = gated_metrics(config, cases)
    names = list(dict.fromkeys(g.name for g in gated))
    params = recorded_params(parts[0], config)
    hashes: dict[str, str] = {}
    head: list[HeadCase] = []
    held: set[str] = set()
    for part in parts:
        hard = {(h.case_id, h.sample) for h in part.hard_failures}
        if part.policy is not None:
            held.update(part.policy.spend.held_back)
        for c in part.cases:
            hashes[c.id] = c.hash if c.hash is not None else _recorded_hash(part, baseline, c.id)

            def sample(
                s: Any, part: Results = part, cid: str = c.id, hard: set[Any] = hard
            ) -> Sample:
                sc = part.sample_scores(s)
                return Sample(s.passed, {n: sc.get(n) for n in names}, (cid, s.sample) in hard)

            ordered = sorted(
                (
                    s
                    for s in c.samples
                    if not is_missing(s.error, (True,) if (c.id, s.sample) in hard else ())
                ),
                key=lambda s: s.sample,
            )
            head.append(
                HeadCase(
                    c.id,
                    hashes[c.id],
                    tuple(sample(s) for s in ordered if not s.extra),
                    tuple(sample(s) for s in ordered if s.extra),
                    setup=c.setup,
                )
            )
    history = (
        history_of(baseline, hashes, dataset_sha256=parts[0].dataset.sha256)
        if baseline is not None
        else None
    )
    evaluation = evaluate(history, head, _no_sampler, params=params, gated=gated)
    if any(p.policy is not None for p in parts):
        evaluation = dataclasses.replace(evaluation, held_back=frozenset(held))
    carried = BaseHistory(
        {
            c.id: CaseHistory(c.hash or "", tuple(history_entry(e) for e in c.history), c.setup)
            for c in cases
            if c.history
        }
    )
    # runs a replay agent scored cannot be sampled again: say how to get a history
    recorded = _recorded(parts[0].agent)
    return Tests(evaluation, params, gated, hashes, carried, recorded, parts[0].case_hash_version)


def comparison_of(
    base: SuiteStats,
    head: SuiteStats,
    evaluation: Evaluation,
    params: EngineParams,
    *,
    source: str,
    retired: Mapping[str, str] | None = None,
) -> Comparison:
    """The comparison of a run with its baseline from the tests against the base
    history: the flips (:func:`gate.policy.flips.evaluation_flips`), the comparable
    cases, the changed ones, and the metrics a suite test found significant.
    ``retired``: the config's ``dataset.retired`` (case id → reason)."""
    from gate.baseline.diff import compare
    from gate.policy.flips import evaluation_flips

    cases = evaluation.cases.items()
    return compare(
        base,
        head,
        flips=evaluation_flips(evaluation, params),
        tested=[i for i, v in cases if v.outcome is not CaseOutcome.NOT_COMPARABLE],
        source=source,
        significant=[t.name for t in evaluation.suite if t.blocked],
        cost=cost_deltas(evaluation),
        changed=[i for i, v in cases if v.comparability is Comparability.CHANGED],
        retired=retired,
    )


def cost_deltas(evaluation: Evaluation) -> list[CostDelta]:
    """The cost metrics against the base history (the dataset-level suite tests of the
    cost metrics with a case on both sides), in the registry's order."""
    tests = {
        t.name: t
        for t in evaluation.suite
        if t.name in COST_METRICS and t.slice is None and t.cases > 0
    }
    return [
        CostDelta(
            metric=name,
            base=t.base_mean,
            head=t.head_mean,
            change=t.change,
            relative=t.relative,
            p_value=t.p_value,
            beyond_noise=t.beyond_noise,
            cases=t.cases,
            typical=t.cost.typical if t.cost is not None else None,
        )
        for name in COST_METRICS
        if (t := tests.get(name)) is not None
    ]


def recorded_comparison(
    base: Results, head: Results, *, source: str, config: Config | None = None
) -> Comparison:
    """``head`` compared with ``base`` on the samples ``head`` recorded (``toolgate
    diff``, ``toolgate report --baseline``): the same flips as the check that wrote it."""
    from gate.pipeline.typed import stats_of

    tests = recorded_tests([head], base, config)
    return comparison_of(
        stats_of(base),
        stats_of(head),
        tests.evaluation,
        tests.params,
        source=source,
        retired=config.dataset.retired_reasons() if config is not None else None,
    )


def _recorded(agent: Mapping[str, Any]) -> bool:
    """The agent of a results file's ``agent`` block replays recorded runs (no sample can
    be added)."""
    from gate.agents import settings_of

    settings = settings_of(agent.get("kind"))
    return settings is not None and settings.samples_recorded
