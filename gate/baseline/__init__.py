"""The baseline: comparing this run with the base branch's results (flips, metric
deltas, tool-definition drift). :func:`gate.baseline.diff.compare` is the entry point."""

from gate.baseline.diff import compare, stable_rule

__all__ = ["compare", "stable_rule"]
