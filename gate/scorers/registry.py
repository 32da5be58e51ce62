"""The one list of metrics.

Every deterministic metric is one line of :data:`REGISTRY`: its results.json name, the
function that scores it (in its family module, returning ``(value, reason)`` from the
sample's :class:`~gate.scorers.facts.Analysis`), its direction (``lower_is_better``),
whether the dataset level pools it (a ratio of sums, never a mean of cases), whether a
gate may use it, and where the per-case CSV shows it.
Everything else derives from this table: the metric names of results.json
(:data:`METRICS`), the arrows of the reports (:data:`LOWER_IS_BETTER`), the config's
gateable names (:data:`GATEABLE`), the pooled ones (:data:`POOLED_METRICS`) and the CSV
columns (:data:`EXPORT_METRICS`).

Adding a metric is one function in a family module and one line here (``docs/scoring.md``
shows a worked example).

:class:`~gate.scorers.facts.ScoringView`, the one declaration of what scoring may read
of a run, is in :mod:`gate.scorers.facts` with the analysis the metric functions read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gate.scorers import (
    arguments,
    errors,
    hygiene,
    outcome,
    selection,
    trajectory,
    usage,
    writes,
)
from gate.scorers.facts import Analysis
from gate.scorers.prose import Scored

MetricFn = Callable[["Analysis"], Scored]


@dataclass(frozen=True, slots=True)
class Metric:
    """One deterministic metric (see the module docstring).

    * ``lower_is_better``: a rise is a regression (counts and failure rates);
    * ``pooled``: the dataset-level value is a ratio of sums over every sample (the
      policy layer computes it from the tallies), never a mean of per-case means;
    * ``gateable``: a ``gates:`` entry may name it;
    * ``export``: its rank among the per-case metric columns of ``toolgate export``;
    * ``cost``: what a sample cost rather than how well it did (:mod:`gate.scorers.usage`):
      never a reason a sample fails, compared with the base history in the reports' Cost
      group, gateable with ``max`` and with ``max_increase`` (relative to the base
      history), left out of the variance guard (its scale is not [0, 1]);
    * ``additive``: a conversation's value is the sum over its user turns, not the mean;
    * ``per_sample``: its value comes from each sample's own usage, not from the scoring
      view (identical runs are scored once; their usage may differ);
    * ``effects``: n/a, one stock sentence, for a case judged by its calls.
    """

    name: str
    score: MetricFn
    lower_is_better: bool = False
    pooled: bool = False
    gateable: bool = True
    export: int | None = None
    cost: bool = False
    additive: bool = False
    per_sample: bool = False
    effects: bool = False

    @property
    def ideal(self) -> float:
        """The best value: 0 for a count or a failure rate, 1 for everything else."""
        return 0.0 if self.lower_is_better else 1.0


# fmt: off
REGISTRY: tuple[Metric, ...] = (
    Metric("tool_selection_precision", selection.score_tool_selection_precision, export=1),
    Metric("tool_selection_recall", selection.score_tool_selection_recall, export=2),
    Metric("tool_selection_f1", selection.score_tool_selection_f1, export=3),
    Metric("tool_set_iou", selection.score_tool_set_iou),
    Metric("call_accuracy", arguments.score_call_accuracy, export=4),
    Metric("partial_credit_accuracy", selection.score_partial_credit_accuracy),
    Metric("schema_validity", errors.score_schema_validity, export=6),
    Metric("parse_failure_rate", errors.score_parse_failure_rate, lower_is_better=True, export=7),
    Metric("required_args_match", arguments.score_required_args_match, export=5),
    Metric("order_score", trajectory.score_order_score, export=8),
    Metric("trajectory_match", trajectory.score_trajectory_match),
    Metric("name_sequence_similarity", trajectory.score_name_sequence_similarity),
    Metric("batching", trajectory.score_batching),
    Metric("unnecessary_call_rate", selection.score_unnecessary_call_rate, lower_is_better=True, pooled=True),  # noqa: E501
    Metric("no_tool_respected", selection.score_no_tool_respected, export=9),
    Metric("must_not_call_violations", hygiene.score_must_not_call_violations, lower_is_better=True),  # noqa: E501
    Metric("step_budget_exceeded", trajectory.score_step_budget_exceeded, lower_is_better=True),
    Metric("duplicate_calls", hygiene.score_duplicate_calls, lower_is_better=True),
    Metric("repeated_failing_calls", hygiene.score_repeated_failing_calls, lower_is_better=True),
    Metric("required_step_missing", hygiene.score_required_step_missing, lower_is_better=True),
    Metric("tool_error_rate", errors.score_tool_error_rate, lower_is_better=True, export=10),
    Metric("malformed_call_rate", errors.score_malformed_call_rate, lower_is_better=True),
    Metric("execution_failure_rate", errors.score_execution_failure_rate, lower_is_better=True),
    Metric("recovery_rate", errors.score_recovery_rate),
    Metric("composite_clean_rate", outcome.score_composite_clean_rate),
    Metric("risk_weighted_precision", selection.score_risk_weighted_precision),
    Metric("write_precision", writes.score_write_precision, effects=True),
    Metric("write_recall", writes.score_write_recall, effects=True),
    Metric("extra_writes", writes.score_extra_writes, lower_is_better=True, effects=True),
    Metric("missing_writes", writes.score_missing_writes, lower_is_better=True, effects=True),
    Metric("free_text_similarity", arguments.score_free_text_similarity),
    Metric("agent_error_rate", outcome.score_agent_error_rate, lower_is_better=True),
    Metric("case_passed", outcome.score_case_passed),
    Metric("tool_calls", usage.score_tool_calls, lower_is_better=True, export=11, cost=True, additive=True),  # noqa: E501
    Metric("steps", usage.score_steps, lower_is_better=True, export=12, cost=True, additive=True),
    Metric("prompt_tokens", usage.score_prompt_tokens, lower_is_better=True, export=13, cost=True, per_sample=True),  # noqa: E501
    Metric("completion_tokens", usage.score_completion_tokens, lower_is_better=True, export=14, cost=True, per_sample=True),  # noqa: E501
    Metric("total_tokens", usage.score_total_tokens, lower_is_better=True, export=15, cost=True, per_sample=True),  # noqa: E501
    Metric("cost", usage.score_cost, lower_is_better=True, export=16, cost=True, per_sample=True),
)
"""Every deterministic metric, in the order the full report lists them."""
# fmt: on

BY_NAME: dict[str, Metric] = {m.name: m for m in REGISTRY}
METRICS: tuple[str, ...] = tuple(m.name for m in REGISTRY)
"""Every deterministic metric by its name in results.json."""
POOLED_METRICS: frozenset[str] = frozenset(m.name for m in REGISTRY if m.pooled)
"""Metrics computed over the whole dataset (a ratio of sums), never as a mean of cases."""
LOWER_IS_BETTER: frozenset[str] = frozenset(m.name for m in REGISTRY if m.lower_is_better)
"""Metrics where a rise is a regression (arrows and deltas in reports use this)."""
GATEABLE: tuple[str, ...] = tuple(m.name for m in REGISTRY if m.gateable)
"""The metrics a ``gates:`` entry may name (the config checks gate names against it)."""
COST_METRICS: tuple[str, ...] = tuple(m.name for m in REGISTRY if m.cost)
"""What a sample cost (the reports' Cost group; ``max_increase`` gates name these)."""
ADDITIVE_METRICS: frozenset[str] = frozenset(m.name for m in REGISTRY if m.additive)
"""Summed over a conversation's user turns."""
PER_SAMPLE_METRICS: tuple[str, ...] = tuple(m.name for m in REGISTRY if m.per_sample)
"""Filled in from each sample's usage (``gate.scorers.usage.USAGE_METRICS``, that order)."""
assert PER_SAMPLE_METRICS == usage.USAGE_METRICS
EXPORT_METRICS: tuple[str, ...] = tuple(
    m.name for m in sorted(REGISTRY, key=lambda m: m.export or 0) if m.export is not None
)
"""The per-case metric columns of ``toolgate export --format cases-csv``, in order."""
