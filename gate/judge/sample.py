"""Which case-samples the judge sees: a deterministic, seeded choice under a budget.

``judge.sample`` keeps the first ``ceil(sample × N)`` case-samples in the order of their
:func:`priority`, which depends on nothing but the seed and the ids (a case keeps its place
when others are added); ``judge.max_evaluations`` then takes their items in that order
(docs/judge.md, "Sampling against a budget"). Cached answers count against the budget
too, so the selection never depends on what is in the cache.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from gate.judge.rubrics import JudgeItem


def _natural(key: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that orders ``web_search#2.q`` before ``web_search#10.q``."""
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in re.split(r"(\d+)", key) if p)


def priority(seed: int, case_id: str, sample: int) -> int:
    digest = hashlib.sha256(f"{seed}\x00{case_id}\x00{sample}".encode()).hexdigest()
    return int(digest[:16], 16)


@dataclass(frozen=True, slots=True)
class Selection:
    """The outcome of :func:`select`: the items to judge, in judging order, and per rubric
    how many items were left out by the rate and by the budget."""

    chosen: tuple[JudgeItem, ...]
    sampled_case_samples: int
    total_case_samples: int
    not_sampled: Mapping[str, int]
    skipped_for_budget: Mapping[str, int]


def select(
    case_samples: Iterable[tuple[str, int]],
    items: Sequence[JudgeItem],
    *,
    rubric_order: Sequence[str],
    rate: float,
    max_evaluations: int,
    seed: int,
) -> Selection:
    """Choose the items to judge (see the module docstring for the rule)."""
    keys = sorted(set(case_samples), key=lambda cs: (priority(seed, cs[0], cs[1]), cs[0], cs[1]))
    k = min(len(keys), math.ceil(rate * len(keys)))
    sampled = keys[:k]
    rank = {name: i for i, name in enumerate(rubric_order)}
    by_cs: dict[tuple[str, int], list[JudgeItem]] = {}
    for item in items:
        by_cs.setdefault((item.case_id, item.sample), []).append(item)
    not_sampled = dict.fromkeys(rubric_order, 0)
    skipped = dict.fromkeys(rubric_order, 0)
    sampled_set = set(sampled)
    for cs, its in by_cs.items():
        if cs not in sampled_set:
            for it in its:
                not_sampled[it.rubric] += 1
    chosen: list[JudgeItem] = []
    for cs in sampled:
        for it in sorted(by_cs.get(cs, ()), key=lambda i: (rank[i.rubric], _natural(i.item))):
            if len(chosen) < max_evaluations:
                chosen.append(it)
            else:
                skipped[it.rubric] += 1
    return Selection(
        chosen=tuple(chosen),
        sampled_case_samples=k,
        total_case_samples=len(keys),
        not_sampled=not_sampled,
        skipped_for_budget=skipped,
    )
