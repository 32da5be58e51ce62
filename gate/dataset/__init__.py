"""The dataset: pinned cases with frozen tool responses (DESIGN §3).

Public API::

    load_dataset(path, *, root=None, display=None) -> Dataset    # whole file, validated
    iter_cases(path, *, root=None, display=None) -> CaseStream   # one case at a time
    dataset_sha256(dataset_digest, references) -> str            # the pin's hash rule

A dataset is JSONL (one case a line) or CSV (same columns, JSON-encoded cells); every
problem in it is reported in one pass, each naming the file, the line and the field.
The format is documented in ``docs/dataset.md``; pinning lives in
:mod:`gate.dataset.pin`.
"""

from gate.dataset.loader import (
    COLUMNS,
    TEXT_COLUMNS,
    CaseStream,
    Dataset,
    dataset_sha256,
    default_display,
    iter_cases,
    load_dataset,
    slice_keys,
)

__all__ = [
    "COLUMNS",
    "TEXT_COLUMNS",
    "CaseStream",
    "Dataset",
    "dataset_sha256",
    "default_display",
    "iter_cases",
    "load_dataset",
    "slice_keys",
]
