"""Lexical similarity of free-text arguments: the token-set ratio (the metric
``free_text_similarity`` is in :mod:`gate.scorers.arguments`).

Search queries, email bodies and summaries are never compared for equality (seed 003,
"Layer 3"); ToolGate stays deterministic and offline, so instead of embeddings it uses the
**token-set ratio** of fuzzy string matching:

1. each text is lower-cased (``casefold``), every character that is not a letter or digit
   becomes a space, and the text is split into a *set* of tokens;
2. with ``I`` the sorted intersection, ``D1``/``D2`` the sorted tokens only in the first /
   second text, and ``s_I = " ".join(I)``, ``s_1 = s_I + " " + " ".join(D1)``,
   ``s_2 = s_I + " " + " ".join(D2)`` (stripped),
3. ``token_set_ratio = max(r(s_I, s_1), r(s_I, s_2), r(s_1, s_2))`` where
   ``r(a, b) = 2·LCS(a, b) / (|a| + |b|)`` is the normalised Indel similarity
   (LCS = longest common subsequence of characters); when one token set contains the
   other (and they share a token) the ratio is 1.0.

Word order and repeated words do not matter ("refund order 7281" ≈ "order 7281 refund");
both texts empty give 1.0, exactly one empty gives 0.0. The LCS is computed bit-parallel
(Hyyrö's algorithm) in O(|a|·|b| / word size), so long email bodies stay cheap.
"""

from __future__ import annotations

import re
from functools import lru_cache

_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)


def tokens(text: str) -> frozenset[str]:
    """The token set of a text (rule 1 of the module docstring)."""
    return frozenset(_NON_WORD.sub(" ", text.casefold()).split())


def lcs_length(a: str, b: str) -> int:
    """Length of the longest common subsequence of two strings (bit-parallel)."""
    if not a or not b:
        return 0
    if len(a) < len(b):
        a, b = b, a  # masks over the longer string: fewer big-int iterations
    masks: dict[str, int] = {}
    for i, ch in enumerate(a):
        masks[ch] = masks.get(ch, 0) | (1 << i)
    full = (1 << len(a)) - 1
    v = full
    for ch in b:
        u = v & masks.get(ch, 0)
        v = ((v + u) | (v - u)) & full
    return len(a) - v.bit_count()


def indel_ratio(a: str, b: str) -> float:
    """``2·LCS(a, b) / (|a| + |b|)``; 1.0 for two empty strings."""
    total = len(a) + len(b)
    if total == 0:
        return 1.0
    return 2.0 * lcs_length(a, b) / total


@lru_cache(maxsize=16384)
def token_set_ratio(a: str, b: str) -> float:
    """Token-set ratio in [0, 1] (formula in the module docstring)."""
    ta, tb = tokens(a), tokens(b)
    if not ta and not tb:
        return 1.0
    if not ta or not tb:
        return 0.0
    inter = ta & tb
    d1 = ta - tb
    d2 = tb - ta
    if inter and (not d1 or not d2):
        return 1.0
    s_i = " ".join(sorted(inter))
    s_1 = (s_i + " " + " ".join(sorted(d1))).strip()
    s_2 = (s_i + " " + " ".join(sorted(d2))).strip()
    best = indel_ratio(s_1, s_2)
    if s_i:
        best = max(best, indel_ratio(s_i, s_1), indel_ratio(s_i, s_2))
    return best
