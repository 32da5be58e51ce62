"""What a run was compared with, in words, for every report: "not compared" and why
(:func:`not_compared`, the box under the heading), the cases the dataset added, changed
and removed since the baseline (:func:`case_changes_sentence`), and the removed and
retired cases' sections (:func:`removed_sections`). Nothing compared is never green: the
renderers take the first line's "not compared" and the ⚠️ from here. Words only, as
:mod:`gate.report.parts`."""

from __future__ import annotations

from gate.model import NotCompared, NotComparedWhy, RemovedCase
from gate.policy.decide import removed_words
from gate.report.lookup import codes, join, plural
from gate.report.parts import Box, Fixed, Item, Key, Lazy, Para, Row, Section, Table
from gate.report.sentences import Code, Sentence
from gate.results import Results


def not_compared(results: Results) -> NotCompared | None:
    """Why a gated run was compared with nothing (``None``: it was compared): the
    verdict's own word, or — for results of a release that did not record it — what the
    comparison shows."""
    v = results.verdict
    if v is None:
        return None
    if v.not_compared is not None:
        return v.not_compared
    cmp = results.comparison
    if cmp is None:
        return NotCompared(NotComparedWhy.NO_BASELINE, "no baseline")
    if not cmp.comparable:
        return cmp.not_compared or NotCompared(
            NotComparedWhy.NO_COMPARABLE_CASE, cmp.note or "no case is comparable"
        )
    return None


def not_compared_paras(results: Results) -> list[Para]:
    """The box under the heading of a run compared with nothing: what that means, and
    what makes a baseline (the first line says "not compared" and why)."""
    v = results.verdict
    assert v is not None
    if v.require_baseline:
        then: Sentence = [
            "a baseline is required (",
            Code("require-baseline"),
            "), so the gate fails.",
        ]
    elif results.policy is not None and results.policy.base_run:
        then = ["the next run is compared with this base run's results."]
    else:
        then = [
            "no regression could be caught, only the absolute gates were checked. A push to "
            "the base branch makes the baseline; ",
            Code("require-baseline: true"),
            " fails such a run.",
        ]
    out = [Para(["Not compared (the first line says why): ", *then], Box.WARNING)]
    cmp = results.comparison
    if cmp is not None:
        out.append(Para([f"Baseline: {cmp.source}."], Box.NOTE))
    return out


def case_changes_sentence(results: Results) -> Sentence:
    """ "The dataset changed since the baseline: 1 case added (`a`), 2 changed (…), 2
    removed (…), each compared by its own hash": the cases named, a few each."""
    cmp = results.comparison
    if cmp is None or not cmp.comparable:
        return []
    ch = cmp.changes
    groups = [
        ("added", list(ch.added)),
        ("changed", list(ch.changed)),
        ("removed", [r.case_id for r in ch.removed]),
    ]
    parts: list[Sentence] = []
    for word, ids in groups:
        if not ids:
            continue
        part: Sentence = [f"{plural(len(ids), 'case')} {word} (", *codes(ids[:SHOW_CHANGED])]
        if len(ids) > SHOW_CHANGED:
            part.append(f", … +{len(ids) - SHOW_CHANGED}")
        part.append(")")
        parts.append(part)
    if not parts:
        return []
    said = "; every other case is compared by its own hash."
    return ["The dataset changed since the baseline: ", *join(parts, ", "), said]


SHOW_CHANGED = 5
"""Case ids named per kind of change in the first lines (the rest counted)."""


def removed_sections(results: Results) -> list[Section]:
    """The cases the baseline holds and this run's dataset does not: those not retired
    fail the gate (listed with their base counts and how to retire one); the retired
    ones are listed with the reason the config gives."""
    cmp = results.comparison
    if cmp is None or not cmp.comparable or not cmp.changes.removed:
        return []
    out: list[Section] = []
    unretired = cmp.changes.unretired
    if unretired:
        failed = results.verdict is not None and results.verdict.removed > 0
        intro = Para(
            [
                "A case the baseline holds and this run's dataset does not fails the gate, "
                "unless the config retires it: ",
                Code("dataset.retired: [{id: <case id>, reason: <why>}]"),
                ".",
            ]
        )
        table = Table(
            ("Case", "Passing samples (base)"),
            Lazy(
                unretired, lambda r: Row(([Code(r.case_id)], [f"{r.base_passes}/{r.base_samples}"]))
            ),
            keep=5,
            cut=4,
            what="cases",
        )
        title = f"{'❌' if failed else '⚠️'} Removed cases ({removed_words(unretired)})"
        out.append(Section(Key.REMOVED, [title], intro=(intro,), table=table))
    retired = cmp.changes.retired
    if retired:
        out.append(
            Section(
                Key.RETIRED,
                [
                    f"Retired cases ({len(retired)}) — removed on purpose (",
                    Code("dataset.retired"),
                    ")",
                ],
                items=[_retired(r) for r in retired],
                keep=3,
                cut=4,
                what="cases",
            )
        )
    return out


def _retired(r: RemovedCase) -> Item:
    return Item(
        [
            Code(r.case_id),
            f" — {r.retired or ''}",
            Fixed(f" (base {r.base_passes}/{r.base_samples})"),
        ]
    )
