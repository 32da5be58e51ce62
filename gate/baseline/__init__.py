"""The baseline: comparing this run with the base branch's results (flips, metric
deltas, setup changes, tool-definition drift). :func:`gate.baseline.diff.compare` is the
entry point."""

from gate.baseline.diff import HISTORY_RULE, compare, setup_changes

__all__ = ["HISTORY_RULE", "compare", "setup_changes"]
