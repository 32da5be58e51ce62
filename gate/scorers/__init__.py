"""Deterministic scorers: pure functions of (case, run) → named scores (docs/scoring.md
documents every metric, the evidence keys and the tallies, and where a metric lives).

One score per failure class, never one blended number. Every metric is one line of
:data:`gate.scorers.registry.REGISTRY`; its function lives in its family module, reads
the sample's :class:`~gate.scorers.facts.Analysis` (which reads only the run's
:class:`~gate.scorers.facts.ScoringView`) and returns ``(value, reason)``. Use::

    ctx = ScoringContext.build(config.scoring, config.dataset.normalize, dataset.tools)
    score = score_sample(case, run, ctx)   # → gate.model.SampleScore
"""

from __future__ import annotations

from gate.scorers.analysis import analyse
from gate.scorers.argmatch import args_match, match_value
from gate.scorers.context import ScoringContext, enabled_checks
from gate.scorers.facts import Analysis, ScoringView
from gate.scorers.normalize import Normalizer
from gate.scorers.registry import REGISTRY, Metric
from gate.scorers.sample import score_sample

__all__ = [
    "REGISTRY",
    "Analysis",
    "Metric",
    "Normalizer",
    "ScoringContext",
    "ScoringView",
    "analyse",
    "args_match",
    "enabled_checks",
    "match_value",
    "score_sample",
]
