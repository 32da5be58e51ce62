"""The argument metrics: call accuracy, required-argument match and free-text similarity.

The first two read the maximum matching of the sample's
:class:`~gate.scorers.facts.Analysis`, whose pairs hold when names are equal and the
expected arguments match the actual ones (:mod:`gate.scorers.argmatch` says what "match"
means); ``free_text_similarity`` reads the token-set ratios
(:func:`gate.scorers.textsim.token_set_ratio`) the analysis computed for the free-text
arguments of the paired calls.
"""

from __future__ import annotations

from gate.scorers.facts import Analysis
from gate.scorers.prose import Scored, plural


def score_call_accuracy(an: Analysis) -> Scored:
    """``M / |E|``, M the maximum matching (name equal, expected args ⊆ actual args after
    normalisation); n/a when E is empty."""
    if an.n_e == 0:
        return None, "n/a: no call expected"
    return (
        an.m / an.n_e,
        lambda: f"{an.m} of {plural(an.n_e, 'expected call')} matched by name and arguments",
    )


def score_required_args_match(an: Analysis) -> Scored:
    """Matched ÷ name-paired expected calls with parsed arguments, i.e. ``M / Σ_n
    min(e_n, parsed_n)``: argument correctness where the right tool was called; n/a when
    E is empty or no expected tool was called with parsed arguments."""
    if an.n_e == 0:
        return None, "n/a: no call expected"
    if an.parsed_pairs == 0:
        return None, "n/a: no expected tool was called with parsed arguments"
    v = an.m / an.parsed_pairs
    return (
        v,
        lambda: f"{an.m} of {an.parsed_pairs} calls of an expected tool had the expected arguments",
    )


def score_free_text_similarity(an: Analysis) -> Scored:
    """Mean token-set ratio of free-text arguments over paired calls; n/a without any."""
    if not an.free_text:
        return None, "n/a: no free-text argument compared"
    v = sum(an.free_text) / len(an.free_text)
    return v, lambda: f"mean text similarity over {plural(len(an.free_text), 'free-text argument')}"
