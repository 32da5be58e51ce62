"""Deterministic scorers: pure functions of (case, run) → named scores (DESIGN §6).

One score per failure class, never one blended number. Each metric is registered by its
results.json name in :data:`SCORERS` (a plain dict: name → function of the per-sample
:class:`~gate.scorers.sample.Analysis` returning ``(value, reason)``); its formula is in
its docstring and in the family module that holds the maths:

=========================  ==========================================================
family                     metrics
=========================  ==========================================================
``selection``              tool_selection_precision / recall / f1, tool_set_iou,
                           partial_credit_accuracy, risk_weighted_precision, the
                           per-tool rollup and the confusion pairs
``arguments``              call_accuracy, required_args_match (with ``matching`` and
                           ``normalize``), free_text_similarity (``lexical``)
``schema`` / ``errors``    schema_validity, parse_failure_rate, malformed_call_rate,
                           execution_failure_rate, tool_error_rate, recovery_rate
``trajectory``             order_score, trajectory_match, name_sequence_similarity,
                           step_budget_exceeded
``hygiene``                duplicate_calls, repeated_failing_calls, required_step_missing
``safety``                 must_not_call_violations (+ argument-scope and required-before
                           rules, all hard failures), tool-name skeletons, risk weights
(pass rule)                no_tool_respected, unnecessary_call_rate, composite_clean_rate,
                           case_passed
=========================  ==========================================================

Use::

    ctx = ScoringContext.build(config.scoring, config.dataset.normalize, dataset.tools)
    score = score_sample(case, run, ctx)   # → gate.model.SampleScore

``docs/scoring.md`` documents every metric, the evidence keys and the tallies.
"""

from __future__ import annotations

from gate.scorers.arguments import args_match, match_value
from gate.scorers.context import ScoringContext, enabled_checks
from gate.scorers.normalize import Normalizer
from gate.scorers.sample import SCORERS, Analysis, analyse, score_sample

__all__ = [
    "SCORERS",
    "Analysis",
    "Normalizer",
    "ScoringContext",
    "analyse",
    "args_match",
    "enabled_checks",
    "match_value",
    "score_sample",
]
