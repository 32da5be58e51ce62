"""The flip rule on arrays of pass rates (numpy stays in the policy layer; the comparison
itself — which cases, which reasons — is :mod:`gate.baseline.diff`).

Per case, with pass rates b (base) and h (head), each passed samples ÷ samples run:

* b = 1 and h = 0 (stable pass → stable fail): ``REGRESSION``;
* b = 0 and h = 1 (stable fail → stable pass): ``FIX``;
* b = h: ``SAME`` (not a flip);
* any other change (one side or both flaky, 0 < rate < 1): ``NOISE``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

REGRESSION, FIX, NOISE, SAME = 0, 1, 2, 3


def classify(base_rate: NDArray[np.float64], head_rate: NDArray[np.float64]) -> NDArray[np.int8]:
    """The flip rule, vectorised: per case REGRESSION, FIX, NOISE or SAME."""
    kinds = np.full(base_rate.shape, NOISE, dtype=np.int8)
    kinds[base_rate == head_rate] = SAME
    kinds[(base_rate == 1.0) & (head_rate == 0.0)] = REGRESSION
    kinds[(base_rate == 0.0) & (head_rate == 1.0)] = FIX
    return kinds


def classify_rates(base_rates: Sequence[float], head_rates: Sequence[float]) -> list[int]:
    """:func:`classify` for plain sequences (callers outside the policy layer)."""
    b = np.asarray(base_rates, dtype=np.float64)
    h = np.asarray(head_rates, dtype=np.float64)
    return [int(k) for k in classify(b, h)]
