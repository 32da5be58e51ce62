"""Deterministic scorers: pure functions of (case, run) → named scores (docs/scoring.md).

One score per failure class, never one blended number. Every metric is one line of
:data:`gate.scorers.registry.REGISTRY` (name, function, direction, pooled or not,
gateable or not); its function lives in its family module with the maths, reads the
sample's :class:`~gate.scorers.facts.Analysis` and returns ``(value, reason)``:

=========================  ==========================================================
family                     metrics
=========================  ==========================================================
``selection``              tool_selection_precision / recall / f1, tool_set_iou,
                           partial_credit_accuracy, risk_weighted_precision,
                           no_tool_respected, unnecessary_call_rate, the per-tool
                           rollup and the confusion pairs
``arguments``              call_accuracy, required_args_match (with ``matching`` and
                           ``normalize``)
``lexical``                free_text_similarity
``errors``                 schema_validity (with ``schema``), parse_failure_rate,
                           malformed_call_rate, execution_failure_rate, tool_error_rate,
                           recovery_rate
``trajectory``             order_score, trajectory_match, name_sequence_similarity,
                           step_budget_exceeded
``hygiene``                duplicate_calls, repeated_failing_calls, required_step_missing
``safety``                 must_not_call_violations (+ argument-scope and required-before
                           rules, all hard failures), tool-name skeletons, risk weights
``writes``                 write_precision, write_recall, extra_writes,
                           missing_writes: cases judged by their effects (each
                           tool's effect, read / write / irreversible: ``effects``)
``outcome``                the case-pass rule: case_passed, composite_clean_rate
=========================  ==========================================================

The analysis (:mod:`gate.scorers.analysis`) reads only the run's
:class:`~gate.scorers.facts.ScoringView`. Use::

    ctx = ScoringContext.build(config.scoring, config.dataset.normalize, dataset.tools)
    score = score_sample(case, run, ctx)   # → gate.model.SampleScore

``docs/scoring.md`` documents every metric, the evidence keys and the tallies.
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
