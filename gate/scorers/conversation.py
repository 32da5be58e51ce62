"""Scoring a conversation: each user turn where it happened, then the sample as a whole
(docs/dataset.md, "Conversations", says how it is scored).

:func:`split` cuts the run at each recorded user message (:attr:`gate.model.Turn.user`);
each user turn is scored as a one-turn case is (:meth:`gate.model.Case.turn_case`), with
the calls of the earlier turns as what came before. :func:`score_conversation` makes the
sample: its pass, the means over the turns that ran (sums for
:data:`gate.scorers.registry.ADDITIVE_METRICS`), the tallies and hard failures of every
turn, and the reasons and evidence of the first failing turn, which the evidence names.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from gate.errors import ErrorClass, agent_failed, error_class_of
from gate.model import (
    Case,
    Run,
    SampleScore,
    Tallies,
    ToolTally,
    Turn,
    TurnRef,
    TurnScore,
)
from gate.scorers.registry import ADDITIVE_METRICS

ScoreFn = Callable[..., SampleScore]

_TURN_CASES: dict[int, tuple[Case, tuple[Case, ...]]] = {}
_TURN_CASES_SIZE = 4096


def turn_cases(case: Case) -> tuple[Case, ...]:
    """The user turns of a conversation case as one-turn cases
    (:meth:`gate.model.Case.turn_case`), built once per case object: the scoring context
    compiles each once."""
    hit = _TURN_CASES.get(id(case))
    if hit is not None and hit[0] is case:
        return hit[1]
    built = tuple(case.turn_case(k) for k in range(len(case.conversation)))
    if len(_TURN_CASES) >= _TURN_CASES_SIZE:
        _TURN_CASES.clear()
    _TURN_CASES[id(case)] = (case, built)
    return built


def split(run: Run, n: int) -> list[tuple[tuple[Turn, ...], str | None]]:
    """The run's user turns, at most ``n``: each its assistant turns that made calls and
    its answer (the content of its last turn without calls). A new user turn starts at a
    turn carrying ``user``; turns before the first such mark belong to the first user
    turn, and turns past the ``n``-th user turn to the last."""
    groups: list[list[Turn]] = []
    for t in run.turns:
        if not groups or (t.user is not None and len(groups) < n):
            groups.append([])
        groups[-1].append(t)
    if not groups:  # nothing at all: the first user turn got no answer
        groups.append([])
    out: list[tuple[tuple[Turn, ...], str | None]] = []
    for i, g in enumerate(groups):
        answer = next((t.content for t in reversed(g) if not t.calls), None)
        if i == len(groups) - 1 and answer is None:
            answer = run.final
        out.append((tuple(t for t in g if t.calls), answer))
    return out


def score_conversation(case: Case, run: Run, score: ScoreFn, *, full: bool) -> SampleScore:
    """Every turn of one conversation sample, and the sample (module docstring). ``score``
    scores one turn: ``score(turn case, sub-run, full=…, prior=…)``."""
    n = len(case.conversation)
    groups = split(run, n)
    turns: list[TurnScore] = []
    scored: list[SampleScore] = []
    prior: list[Turn] = []
    for k, (calls, answer) in enumerate(groups):
        sub = Run(
            case_id=run.case_id,
            sample=run.sample,
            turns=calls,
            final=answer,
            error=run.error if k == len(groups) - 1 else None,
            latency_ms=run.latency_ms,
        )  # no usage: the conversation's is not split by turn
        s = score(turn_cases(case)[k], sub, full=full, prior=tuple(prior))
        scored.append(s)
        turns.append(
            TurnScore(
                s.passed,
                dict(s.scores),
                s.failed_checks,
                user=case.conversation[k].user,
                called=tuple(c.name for t in calls for c in t.calls),
            )
        )
        prior.extend(calls)
    if run.error is not None and not agent_failed(run.error):
        hard = [h for s in scored for h in s.hard_failures]
        if not hard and error_class_of(run.error) is ErrorClass.INFRASTRUCTURE:
            # the infrastructure failed it: the whole conversation is not sampled
            return replace(scored[-1], turns=tuple(turns))
    never = None
    if len(groups) < n:
        # The run ends before the conversation does: the turns it never reached fail
        # unscored; the first is what the reports show if no earlier turn failed.
        turns += [
            TurnScore(False, {}, (NOT_REACHED,), ran=False, user=case.conversation[k].user)
            for k in range(len(groups), n)
        ]
        k = len(groups)
        empty = Run(case_id=run.case_id, sample=run.sample)
        never = score(turn_cases(case)[k], empty, full=full, prior=tuple(prior))
    return _whole(case, run, scored, turns, never)


NOT_REACHED = "turn_reached"
"""The failed check of a user turn the conversation never reached."""


def _whole(
    case: Case,
    run: Run,
    scored: Sequence[SampleScore],
    turns: Sequence[TurnScore],
    never: SampleScore | None,
) -> SampleScore:
    n = len(turns)
    passed = all(t.passed and t.ran for t in turns)
    names = list(scored[0].scores) if scored else []
    scores: dict[str, float | None] = {}
    for name in names:
        values = [v for s in scored if (v := s.scores.get(name)) is not None]
        if name in ADDITIVE_METRICS:  # what it cost adds up over the turns
            scores[name] = float(sum(values)) if values else None
        else:
            scores[name] = sum(values) / len(values) if values else None
    if "case_passed" in scores:
        scores["case_passed"] = 1.0 if passed else 0.0
    if "agent_error_rate" in scores:
        scores["agent_error_rate"] = 1.0 if run.error and agent_failed(run.error) else 0.0
    failing = next((i for i, t in enumerate(turns) if not t.passed), None)
    failed: list[str] = []
    for t in turns:
        failed += [c for c in t.failed_checks if c not in failed]
    reasons: dict[str, str] = {}
    for name, value in scores.items():
        if value is None:  # n/a in every turn: any turn's reason says why
            why = next((s.reasons[name] for s in scored if name in s.reasons), None)
            if why is not None:
                reasons[name] = why
    evidence = scored[-1].evidence if scored else None
    if failing is not None:
        lead = scored[failing] if failing < len(scored) else never
        assert lead is not None
        where = f"turn {failing + 1} of {n}"
        if failing >= len(scored):
            reasons[NOT_REACHED] = f"{where}: the conversation ended before it" + (
                f" (after turn {failing})" if failing else ""
            )
        else:
            for name, why in lead.reasons.items():
                if scores.get(name) is not None:
                    reasons[name] = f"{where}: {why}"
        evidence = lead.evidence
        if evidence is not None:
            evidence = replace(
                evidence, turn=TurnRef(failing + 1, n, case.conversation[failing].user)
            )
    hard = tuple(
        replace(h, message=f"{TurnRef(k + 1, n, case.conversation[k].user).label()}: {h.message}")
        for k, s in enumerate(scored)
        for h in s.hard_failures
    )
    return SampleScore(
        case_id=case.id,
        sample=run.sample,
        passed=passed,
        scores=scores,
        failed_checks=tuple(failed),
        reasons=reasons,
        evidence=evidence,
        tallies=_sum_tallies([s.tallies for s in scored]),
        hard_failures=hard,
        error=run.error,
        latency_ms=run.latency_ms,
        usage=run.usage,
        turns=tuple(turns),
    )


def _sum_tallies(all_: Sequence[Tallies]) -> Tallies:
    per_tool: dict[str, list[int]] = {}
    malformed: dict[str, int] = {}
    for t in all_:
        for name, tt in t.per_tool.items():
            acc = per_tool.setdefault(name, [0, 0, 0])
            acc[0] += tt.expected
            acc[1] += tt.matched
            acc[2] += tt.called
        for kind, k in t.malformed.items():
            malformed[kind] = malformed.get(kind, 0) + k
    return Tallies(
        calls=sum(t.calls for t in all_),
        calls_on_no_tool=sum(t.calls_on_no_tool for t in all_),
        per_tool={n: ToolTally(e, m, k) for n, (e, m, k) in per_tool.items()},
        confusion=tuple(c for t in all_ for c in t.confusion),
        malformed=malformed,
        unrecorded=sum(t.unrecorded for t in all_),
    )
