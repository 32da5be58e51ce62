"""The statistics and policy layer (numpy lives here and nowhere else).

Three layers (STYLE habit 4): the scorers score one sample; :mod:`gate.policy.reduce`
reduces sample scores over samples and cases into a :class:`gate.results.Results`;
:mod:`gate.policy.decide` applies the config's gates, the variance guards
(:mod:`gate.policy.guards`) and the baseline comparison (:mod:`gate.baseline.diff`) to
produce the verdict. :mod:`gate.policy.confirm` plans adaptive confirmation samples and
:mod:`gate.policy.advisor` says what the samples can detect.
"""

import os as _os

# One BLAS thread: the few matrix products here are small, a second thread only contends
# with the rest of the run (measured: slower on 2 busy cores), and one thread keeps the
# summation order — hence the last bits of every figure — the same on every machine.
# OpenBLAS reads the variable once, when numpy loads it, so it is set only around that
# import and removed again: agents the runner starts later inherit the user's environment
# untouched. An explicit setting in the environment wins.
if "OPENBLAS_NUM_THREADS" not in _os.environ:
    _os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        import numpy as _numpy  # noqa: F401
    finally:
        del _os.environ["OPENBLAS_NUM_THREADS"]
