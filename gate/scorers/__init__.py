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

from gate.scorers.context import ScoringContext
from gate.scorers.sample import score_sample

__all__ = ["ScoringContext", "score_sample"]
