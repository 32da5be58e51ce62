"""What every metric function returns, and the small wording helpers their reasons share.

A metric function (one per metric, in its family module, listed in
:mod:`gate.scorers.registry`) takes the sample's :class:`~gate.scorers.facts.Analysis`
and returns :data:`Scored`: the value (``None`` = not applicable) and one plain-language
sentence saying why.
"""

from __future__ import annotations

Scored = tuple[float | None, str]
"""(value, reason) of one metric for one sample."""


def plural(n: int, word: str) -> str:
    """``1 call``, ``2 calls``."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"
