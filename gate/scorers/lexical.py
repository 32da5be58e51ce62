"""The free-text metric: ``free_text_similarity``, the mean token-set ratio
(:func:`gate.scorers.textsim.token_set_ratio`) of the free-text arguments of the paired
calls, which the analysis computes."""

from __future__ import annotations

from gate.scorers.facts import Analysis
from gate.scorers.prose import Scored, plural


def score_free_text_similarity(an: Analysis) -> Scored:
    """Mean token-set ratio of free-text arguments over paired calls; n/a without any."""
    if not an.free_text:
        return None, "n/a: no free-text argument compared"
    v = sum(an.free_text) / len(an.free_text)
    return v, lambda: f"mean text similarity over {plural(len(an.free_text), 'free-text argument')}"
