"""The dataset's pinned hash: one rule, computed from the digests the loader takes while it
reads the dataset and its tool files (the pin in :mod:`gate.dataset.pin` compares it with
the config's ``dataset.sha256``)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

HASH_HEADER = "toolgate-dataset-sha256-v1\n"


def dataset_sha256(dataset_digest: str, references: Mapping[str, str]) -> str:
    """The pinned hash of a dataset: sha256 of a small manifest text, UTF-8::

        toolgate-dataset-sha256-v1\\n
        dataset\\0<sha256 hex of the dataset file's bytes>\\n
        <relative path>\\0<sha256 hex of its bytes>\\n     one line per referenced file,
                                                        sorted by relative path

    where the relative path is the ``@file`` target relative to the dataset's folder,
    POSIX separators. Renaming the dataset file does not change the hash; editing any
    byte of it or of a referenced file does, as does pointing at another file.
    """
    text = HASH_HEADER + f"dataset\0{dataset_digest}\n"
    text += "".join(f"{rel}\0{sha}\n" for rel, sha in sorted(references.items()))
    return hashlib.sha256(text.encode()).hexdigest()
