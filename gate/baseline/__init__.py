"""The baseline: comparing this run with the base branch's results (flips, metric
deltas, tool-definition drift). :func:`gate.baseline.diff.compare` is the entry point."""

from gate.baseline.diff import compare, flip_kind, stable_rule

__all__ = ["compare", "flip_kind", "stable_rule"]
