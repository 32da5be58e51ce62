"""A scored sample's results.json record: the reasons it keeps (:func:`kept_reasons`),
written once per scored run as a template (:func:`record_template`) that each sample
fills with its number and usage (:mod:`gate.results.write`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import orjson

from gate import model as m
from gate.model import SampleScore, Tallies
from gate.policy.validity import is_missing
from gate.results.write import RecordTemplate, evidence_json, expected_json, record_parts
from gate.scorers.registry import BY_NAME, COST_METRICS
from gate.scorers.usage import usage_positions

_EXPECTED_SIZE = 4096
_COST = frozenset(COST_METRICS)


def kept_reasons(
    reasons: Mapping[str, str],
    scores: Mapping[str, float | None],
    failed_checks: Iterable[str],
) -> dict[str, str]:
    """The reasons a sample record keeps: of the metrics that missed
    their best value (:attr:`gate.scorers.registry.Metric.ideal`) or do not apply, of any
    other metric, and of failed checks."""
    checks = failed_checks if isinstance(failed_checks, tuple | list) else tuple(failed_checks)
    out: dict[str, str] = {}
    for name, why in reasons.items():
        if name in _COST and name not in checks:
            continue  # what a sample cost is its figure, not a reason
        ideal = _IDEAL.get(name)
        if ideal is None or name in checks:
            out[name] = why
            continue
        value = scores.get(name)
        if value is None or value != ideal:
            out[name] = why
    return out


_IDEAL: dict[str, float] = {name: metric.ideal for name, metric in BY_NAME.items()}


def _lean_tallies_of(t: Tallies) -> dict[str, Any]:
    """:func:`_lean_tallies` of :func:`tallies_json` (the same dict, built directly)."""
    out: dict[str, Any] = {}
    if t.calls:
        out["calls"] = t.calls
    if t.calls_on_no_tool:
        out["calls_on_no_tool"] = t.calls_on_no_tool
    if t.confusion:
        out["confusion"] = [[e, a] for e, a in t.confusion]
    if t.malformed:
        out["malformed"] = dict(t.malformed)
    if t.per_tool:
        out["per_tool"] = {n: [x.expected, x.matched, x.called] for n, x in t.per_tool.items()}
    if t.unrecorded:
        out["unrecorded"] = t.unrecorded
    return out


_EXPECTED: dict[int, tuple[tuple[m.ExpectedCall, ...], orjson.Fragment]] = {}


def _expected_fragment(calls: tuple[m.ExpectedCall, ...]) -> orjson.Fragment:
    """The JSON of an expectation list as a sample's evidence lists it, written once per
    list: every failing sample of a case shows the same one (the same tuple object, the
    compiled case's)."""
    hit = _EXPECTED.get(id(calls))
    if hit is not None and hit[0] is calls:
        return hit[1]
    text = orjson.dumps(expected_json(calls), option=orjson.OPT_NON_STR_KEYS)
    fragment = orjson.Fragment(text)
    if len(_EXPECTED) >= _EXPECTED_SIZE:
        _EXPECTED.clear()
    _EXPECTED[id(calls)] = (calls, fragment)
    return fragment


def record_template(
    score: SampleScore, *, names: Sequence[str], extra: bool = False, reasons_kept: bool = False
) -> RecordTemplate:
    """The record of a scored sample (lean: see the module docstring) as a template.
    ``reasons_kept``: the score's reasons are those a record keeps already (as
    :func:`gate.scorers.score_sample` gives them without ``full``, but a conversation's)."""
    scores = score.scores
    values = list(scores.values())
    if len(values) != len(names) or tuple(scores) != tuple(names):
        values = [scores.get(n) for n in names]
    return record_parts(
        passed=score.passed,
        scores=values,
        failed_checks=score.failed_checks,
        # A conversation's reasons name its turns' (``turn 2 of 2: …``): kept by the
        # sample's own scores, as for every other record.
        reasons=score.reasons
        if reasons_kept and not score.turns
        else kept_reasons(score.reasons, scores, score.failed_checks),
        evidence=evidence_json(score.evidence, expected=_expected_fragment(score.evidence.expected))
        if score.evidence is not None
        else None,
        tallies=_lean_tallies_of(score.tallies),
        error=score.error,
        extra=extra,
        turns=[_turn_json(t, names) for t in score.turns] if score.turns else None,
        usage_at=() if _not_sampled(score) else usage_positions(names),
    )


def _not_sampled(score: SampleScore) -> bool:
    return is_missing(score.error, score.hard_failures)


def _turn_json(t: m.TurnScore, names: Sequence[str]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "called": list(t.called),
        "failed_checks": list(t.failed_checks),
        "passed": t.passed,
        "scores": [t.scores.get(n) for n in names],
        "user": t.user,
    }
    if not t.ran:
        out["ran"] = False
    return out


def sample_record(score: SampleScore, *, names: Sequence[str], extra: bool = False) -> bytes:
    """A scored sample's results.json record (lean: see the module docstring)."""
    return record_template(score, names=names, extra=extra).render(score.sample, score.usage)
