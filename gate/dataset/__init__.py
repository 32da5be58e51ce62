"""The dataset: pinned cases with frozen tool responses (docs/dataset.md).

Public API: :func:`load_dataset` (the whole file, validated), :func:`iter_cases` (one
case at a time), :func:`dataset_sha256` (the pin's hash rule).

A dataset is JSONL (one case a line) or CSV (same columns, JSON-encoded cells); every
problem in it is reported in one pass, each naming the file, the line and the field.
The format is documented in ``docs/dataset.md``. One module per stage:

* :mod:`~gate.dataset.read` — the file's rows (strict JSON), hashed as they are read;
* :mod:`~gate.dataset.validate` — a row into a :class:`gate.model.Case`;
* :mod:`~gate.dataset.tools` — tool definitions and ``@file.json`` references, each
  file read and hashed once; :mod:`~gate.dataset.matchers` — the ``args`` syntax;
* :mod:`~gate.dataset.pin` — the hash rule, the pin check and ``toolgate pin``;
* :mod:`~gate.dataset.loader` — the way through, and :class:`Dataset`.
"""

from gate.dataset.columns import COLUMNS, TEXT_COLUMNS
from gate.dataset.digest import dataset_sha256
from gate.dataset.loader import CaseStream, Dataset, iter_cases, load_dataset, slice_keys
from gate.dataset.read import default_display

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
