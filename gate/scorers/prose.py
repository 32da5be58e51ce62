"""What every metric function returns, and the small wording helpers their reasons share.

A metric function (one per metric, in its family module, listed in
:mod:`gate.scorers.registry`) takes the sample's :class:`~gate.scorers.facts.Analysis`
and returns :data:`Scored`: the value (``None`` = not applicable) and one plain-language
sentence saying why — as a string, or as a function of no argument that writes it
(:data:`Reason`). A record keeps the sentences of the metrics that missed their best value
or do not apply, so most samples never need the others: a sentence that has to be
formatted is returned as a ``lambda`` and written only when kept (:func:`reason_text`).
"""

from __future__ import annotations

from collections.abc import Callable

Reason = str | Callable[[], str]
"""A metric's sentence: written already, or a function that writes it when asked."""

Scored = tuple[float | None, Reason]
"""(value, reason) of one metric for one sample."""


def reason_text(reason: Reason) -> str:
    """The sentence of ``reason`` (written now if it was deferred)."""
    return reason if isinstance(reason, str) else reason()


def plural(n: int, word: str) -> str:
    """``1 call``, ``2 calls``."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"
