"""Scoring one sample: (case, run) → :class:`~gate.model.SampleScore`.

:func:`score_sample` takes the run's :class:`~gate.scorers.facts.ScoringView`, has
:func:`gate.scorers.analysis.analyse` compute what the metrics share, then scores every
metric of :data:`gate.scorers.registry.REGISTRY` from that analysis (formulas in the
family modules), and adds the evidence the reports show, the tallies the dataset level
pools and the hard failures. A sample without an answer — the agent failed it, or the
infrastructure did — earns nothing (:func:`_no_answer`).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import replace

from gate.config import PassCheck
from gate.errors import ErrorClass, agent_failed, error_class_of
from gate.model import (
    ActualCall,
    ArgDiff,
    Case,
    EffectsEvidence,
    Evidence,
    ExpectedCall,
    ExtraCall,
    HardFailure,
    HardFailureKind,
    MalformedCall,
    MissingCall,
    MissingWhy,
    Run,
    SampleScore,
    Tallies,
    ToolTally,
    Turn,
    Violation,
)
from gate.scorers import selection as sel
from gate.scorers import writes
from gate.scorers.analysis import analyse
from gate.scorers.argmatch import arg_diffs, match_flags
from gate.scorers.context import ScoringContext
from gate.scorers.conversation import score_conversation
from gate.scorers.errors import malformed_detail
from gate.scorers.facts import Analysis, Call, EffectsMatch, ScoringView
from gate.scorers.prose import reason_text
from gate.scorers.registry import COST_METRICS, REGISTRY
from gate.scorers.usage import USAGE_METRICS, usage_values

_PLAN = tuple((m.name, m.score, None if m.cost else m.ideal) for m in REGISTRY)
"""The registry as (name, function, best value), looked up once; a cost metric has no
best value (its sentence is kept only when every one is asked for). Without that, a
per-sample metric is left to :func:`_fill_usage` and, for a case judged by its calls, an
effects metric is n/a with one stock sentence: neither is called."""
_NAMES = tuple(name for name, _, _ in _PLAN)
_BY_EFFECTS = tuple(p for p, m in zip(_PLAN, REGISTRY, strict=True) if not m.per_sample)
_BY_CALLS = tuple(p for p, m in zip(_PLAN, REGISTRY, strict=True) if not m.per_sample | m.effects)
_BY_CALLS_REASONS = {m.name: writes.BY_CALLS for m in REGISTRY if m.effects}


def _fill_usage(scores: dict[str, float | None], run: Run, ctx: ScoringContext) -> None:
    """The usage metrics of ``run`` (:func:`gate.scorers.usage.usage_values`)."""
    price = ctx.pricing.price_of_run(run.meta) if ctx.pricing is not None else None
    scores.update(zip(USAGE_METRICS, usage_values(run.usage, price), strict=True))


def earns_nothing(run: Run, hard: Sequence[object]) -> bool:
    """Whether ``run`` is a sample without an answer to score (:func:`_no_answer`): the
    agent failed it, or the infrastructure did and it recorded no hard failure. Such a
    sample has no usage metrics either (a crash would make the head look cheaper per
    sample); the tokens it reported still count in the run's totals."""
    return run.error is not None and (
        agent_failed(run.error)
        or (not hard and error_class_of(run.error) is ErrorClass.INFRASTRUCTURE)
    )


def _with_usage(score: SampleScore, run: Run, ctx: ScoringContext) -> SampleScore:
    """A conversation's whole score with the run's usage metrics (its turns have none: the
    usage is the conversation's); one that ended without an answer has none, and its
    counts of calls and steps are n/a too (:func:`earns_nothing`)."""
    scores = dict(score.scores)
    if earns_nothing(run, score.hard_failures):
        scores.update((k, None) for k in COST_METRICS if k in scores)
    else:
        _fill_usage(scores, run, ctx)
    return replace(score, scores=scores)


def score_sample(
    case: Case,
    run: Run,
    ctx: ScoringContext,
    *,
    full: bool = False,
    prior: Sequence[Turn] = (),
) -> SampleScore:
    """Every deterministic metric for one run of one case (module docstring).

    The reasons kept are those of the metrics that missed their best value or do not
    apply, and the evidence is that of a sample that did not pass (what results.json
    keeps; a passing sample needs no "expected vs actual"); ``full`` keeps every reason
    and the evidence of a passing sample too (``gate.assert_tool_calls``). A conversation
    case is scored turn by turn (:mod:`gate.scorers.conversation`); ``prior``: the calls
    of the earlier user turns of a conversation (what a ``required_before`` step may
    have been made in)."""
    if case.conversation:
        whole = score_conversation(
            case,
            run,
            lambda c, r, *, full, prior: score_sample(c, r, ctx, full=full, prior=prior),
            full=full,
        )
        return _with_usage(whole, run, ctx)
    an = analyse(case, ScoringView.of(run), ctx, prior=prior)
    if earns_nothing(run, an.hard):
        return _no_answer(case, run, an)
    scores: dict[str, float | None] = dict.fromkeys(_NAMES)  # in the registry's order
    reasons: dict[str, str] = {} if full or an.effects is not None else dict(_BY_CALLS_REASONS)
    for name, score, ideal in _PLAN if full else _BY_CALLS if an.effects is None else _BY_EFFECTS:
        v, why = score(an)
        scores[name] = v
        if full or (ideal is not None and (v is None or v != ideal)):
            reasons[name] = reason_text(why)
    _fill_usage(scores, run, ctx)
    passed = not an.failed
    return SampleScore(
        case_id=case.id,
        sample=run.sample,
        passed=passed,
        scores=scores,
        failed_checks=tuple(an.failed),
        reasons=reasons,
        evidence=_evidence(an) if full or not passed else None,
        tallies=_tallies(an),
        hard_failures=_hard_failures(case, run, an),
        error=run.error,
        latency_ms=run.latency_ms,
        usage=run.usage,
    )


_HARD_CHECKS = frozenset({"must_not_call", "arg_scope", "required_before"})
"""The checks a call fails by being made, whatever came after it."""


def _no_answer(case: Case, run: Run, an: Analysis) -> SampleScore:
    """A sample without an answer to score: the agent failed it (a crash, a timeout, a
    protocol error, its own error — :func:`gate.errors.agent_failed`), or the
    infrastructure did (a *missing* sample). It earns nothing: every metric is n/a — no
    ``no_tool_respected`` for making no call, no selection score from an empty run — but
    ``agent_error_rate`` (1.0) and ``case_passed`` (0.0) for the agent's failure, which
    fails the check ``agent_error`` (a hard failure in the calls it made before stands).
    A missing sample fails no check and has no value at all: *not sampled*."""
    assert run.error is not None
    missing = not agent_failed(run.error)
    scores: dict[str, float | None] = dict.fromkeys(_NAMES)
    why = (
        "n/a: not sampled (the infrastructure failed this case-sample)"
        if missing
        else "n/a: the agent failed before answering: " + run.error.splitlines()[0][:200]
    )
    reasons = dict.fromkeys(_NAMES, why)
    failed: tuple[str, ...] = ()
    if not missing:
        # Its usage metrics are n/a too (a crash would otherwise make the head look
        # cheaper per sample); the tokens it reported still count in the run's totals.
        scores["agent_error_rate"] = 1.0
        scores["case_passed"] = 0.0
        reasons["agent_error_rate"] = reasons["case_passed"] = why.removeprefix("n/a: ")
        failed = (PassCheck.AGENT_ERROR.value, *(c for c in an.failed if c in _HARD_CHECKS))
    tallies = _tallies(an)
    return SampleScore(
        case_id=case.id,
        sample=run.sample,
        passed=False,
        scores=scores,
        failed_checks=failed,
        reasons=reasons,
        evidence=_evidence(an),
        # The calls it made are facts (the pooled counts keep them); no credit for the
        # expected calls of an answer it never gave.
        tallies=Tallies(
            calls=tallies.calls,
            calls_on_no_tool=tallies.calls_on_no_tool,
            malformed=tallies.malformed,
            unrecorded=tallies.unrecorded,
        ),
        hard_failures=_hard_failures(case, run, an),
        error=run.error,
        latency_ms=run.latency_ms,
        usage=run.usage,
    )


def _hard_failures(case: Case, run: Run, an: Analysis) -> tuple[HardFailure, ...]:
    return tuple(HardFailure(kind, case.id, run.sample, c, msg) for kind, c, msg in an.hard)


def _evidence(an: Analysis) -> Evidence:
    calls = an.calls
    lst = an.best.lst
    pairs = an.best.pairs
    by_orig = sorted(calls, key=_orig)  # run order (the analysis sorts inside batches)
    actual = tuple(ActualCall(c.call, c.turn) for c in by_orig)
    missing: list[MissingCall] = []
    arg_diff: list[ArgDiff] = []
    extra: tuple[ExtraCall, ...] = ()
    if an.m < an.n_e:
        matched_e = {i for i, _ in pairs}
        paired = dict(an.name_pairs)
        for i, e in enumerate(lst.calls):
            if i in matched_e:
                continue
            j = paired.get(i)
            if j is None:
                why = MissingWhy.NOT_CALLED
            elif not calls[j].parse_ok:
                why = MissingWhy.UNPARSED
            else:
                why = MissingWhy.OTHER_ARGS
            missing.append(MissingCall(i, e.name, why))
            if j is not None and calls[j].parse_ok and calls[j].entry is not None:
                arg_diff.append(_arg_diff(i, e, calls[j]))
    if an.m < an.n_a:
        matched_a = {j for _, j in pairs}
        extra = tuple(
            sorted(
                (ExtraCall(c.orig, c.name) for j, c in enumerate(calls) if j not in matched_a),
                key=_by_index,
            )
        )
    malformed: tuple[MalformedCall, ...] = ()
    if an.malformed:
        malformed = tuple(
            sorted(
                (
                    MalformedCall(c.orig, c.name, c.malformed, malformed_detail(c))
                    for c in calls
                    if c.malformed is not None
                ),
                key=_by_index,
            )
        )
    violations = [
        Violation(kind, c.orig, c.name, msg)
        for kind, hits in (
            (
                HardFailureKind.MUST_NOT_CALL,
                [(c, f"{c.name!r} must not be called") for c in an.mnc_hits],
            ),
            (HardFailureKind.ARG_SCOPE, an.scope_hits),
            (HardFailureKind.REQUIRED_BEFORE, an.required_missing),
        )
        for c, msg in hits
    ]
    return Evidence(
        expected=lst.calls,
        actual=actual,
        alternative=an.best.index,
        matched=tuple(sorted((i, calls[j].orig) for i, j in pairs)),
        summary=sel.summary(an) if an.effects is None else writes.summary(an.effects),
        missing=tuple(missing),
        extra=extra,
        arg_diffs=tuple(arg_diff),
        malformed=malformed,
        violations=tuple(violations),
        unrecorded=tuple(sorted(c.orig for c in an.unrecorded)),
        agent_error=an.view.error,
        batching=an.batch_problems,
        effects=None if an.effects is None else _effects_evidence(an.effects, an.calls),
    )


def _effects_evidence(fx: EffectsMatch, calls: list[Call]) -> EffectsEvidence:
    """What the run wrote (:class:`~gate.model.EffectsEvidence`), indices into the
    evidence's ``actual`` (run order) and ``expected`` (the list judged)."""
    lst = fx.lst
    matched: list[tuple[int, int]] = []
    missing: list[MissingCall] = []
    diffs: list[ArgDiff] = []
    taken: set[int] = set()
    groups = [(fx.lm, lst.write_at, fx.writes, True)]
    if fx.rlm is not None:
        groups.append((fx.rlm, lst.read_at, fx.reads, False))
    for lm, at, made, is_write in groups:
        pairs = dict(lm.pairs)
        for i, k in pairs.items():
            matched.append((at[i], calls[made[k]].orig))
            taken.add(made[k])
        for i, e in enumerate(lm.lst.calls):
            if i in pairs:
                continue
            same = [j for j in made if j not in taken and calls[j].name == e.name]
            parsed = [j for j in same if calls[j].parse_ok]
            if parsed:
                why = MissingWhy.OTHER_ARGS
                j = parsed[0]
                taken.add(j)  # one diff per made call
                if calls[j].entry is not None and is_write:
                    diffs.append(_arg_diff(at[i], e, calls[j]))
            elif same:
                why = MissingWhy.UNPARSED
            elif any(calls[j].name == e.name for j in fx.failed):
                why = MissingWhy.FAILED
            else:
                why = MissingWhy.NOT_CALLED
            missing.append(MissingCall(at[i], e.name, why))
    matched_writes = {fx.writes[k] for _, k in fx.lm.pairs}
    extra = tuple(
        sorted(
            (ExtraCall(calls[j].orig, calls[j].name) for j in fx.writes if j not in matched_writes),
            key=_by_index,
        )
    )
    return EffectsEvidence(
        made=tuple(sorted(calls[j].orig for j in fx.writes)),
        failed=tuple(sorted(calls[j].orig for j in fx.failed)),
        matched=tuple(sorted(matched)),
        missing=tuple(sorted(missing, key=lambda m: m.index)),
        extra=extra,
        arg_diffs=tuple(diffs),
        order=fx.order_ok,
        repeated=tuple(sorted(calls[j].orig for j in fx.repeated)),
    )


def _arg_diff(index: int, e: ExpectedCall, c: Call) -> ArgDiff:
    """Why the made call ``c`` (of a known tool) does not meet expected call ``e``."""
    assert c.entry is not None
    exact, defaults = match_flags(e.args_match)
    diffs = arg_diffs(e.args, c.args, exact=exact, norm=c.entry.norm, except_defaults=defaults)
    return ArgDiff(index, c.orig, e.name, diffs)


_orig = operator.attrgetter("orig")
_by_index = operator.attrgetter("index")


def _tallies(an: Analysis) -> Tallies:
    per_tool = {n: [k, 0, 0] for n, k in an.e_counts.items()}
    for n, k in an.a_counts.items():
        per_tool.setdefault(n, [0, 0, 0])[2] = k
    for i, _ in an.best.pairs:
        per_tool[an.e_names[i]][1] += 1
    confusion: tuple[tuple[str, str | None], ...] = ()
    if an.n_e == 1:
        confusion = (sel.confusion_pair(an.e_names[0], [c.name for c in an.calls]),)
    return Tallies(
        calls=an.n_a,
        calls_on_no_tool=sel.unneeded_calls(an) if an.cc.no_tool else 0,
        per_tool={n: ToolTally(e, m, k) for n, (e, m, k) in per_tool.items()},
        confusion=confusion,
        malformed=dict(an.malformed_counts),
        unrecorded=len(an.unrecorded),
    )
