"""Deterministic scorers: pure functions of (case, run) → named scores (DESIGN §6).

(The registry and ``score_sample`` land in the next commit; ``gate.scorers.arguments``
is usable on its own: ``args_match`` and ``Normalizer.from_config``.)
"""
