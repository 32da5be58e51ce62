"""Orchestration: the stages of a gate run, wired from the pure layers and the I/O layers.

``check`` (``toolgate check``, the CI job) runs them in order, each in its own module:
:mod:`~gate.pipeline.inputs` (config, dataset, pin, baseline; the agent's
:mod:`~gate.pipeline.preflight`) → the runner →
:mod:`~gate.pipeline.score` → :mod:`~gate.pipeline.sequential` (the tests against the base
history, extra samples for undecided cases) → the judge (:func:`gate.judge.run_judge`)
→ :func:`gate.policy.decide.decide` → :mod:`~gate.pipeline.publish` (results, reports and
publishing). The score stage's parallel reader is private (``_scorepool``).
"""

from gate.pipeline.check import check
from gate.pipeline.inputs import load_baseline, load_inputs, redactor_for, scoring_context
from gate.pipeline.options import CheckOptions, CheckOutcome
from gate.pipeline.score import Scored, score_file, score_runs, score_stage, unrecorded_calls
from gate.pipeline.sequential import Tested, policy_stage

__all__ = [
    "CheckOptions",
    "CheckOutcome",
    "Scored",
    "Tested",
    "check",
    "load_baseline",
    "load_inputs",
    "policy_stage",
    "redactor_for",
    "score_file",
    "score_runs",
    "score_stage",
    "scoring_context",
    "unrecorded_calls",
]
