"""The judge cache: re-judging an unchanged item costs nothing (docs/judge.md, "The cache").

Key = sha256 of the canonical JSON of ``{rubric, prompt_sha256, model, inputs}``
(:attr:`gate.judge.rubrics.Rubric.prompt_sha256`). The endpoint's URL is not part of the
key: the same model name is taken to be the same judge. Only real answers are stored;
a cache entry that cannot be read or does not fit is ignored and overwritten — a cache
never fails a run.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gate import jsonio
from gate.errors import OutputError
from gate.model import JsonValue
from gate.outdir import write_atomic

CACHE_DIR = "judge-cache"
_STATUSES = frozenset({"ok", "unparsable"})


def cache_key(
    *, rubric: str, prompt_sha256: str, model: str, inputs: Mapping[str, JsonValue]
) -> str:
    data = {
        "rubric": rubric,
        "prompt_sha256": prompt_sha256,
        "model": model,
        "inputs": dict(inputs),
    }
    return hashlib.sha256(jsonio.canonical(data).encode()).hexdigest()


class JudgeCache:
    """Answers on disk by key (see the module docstring). Thread safe for distinct keys."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str, scale: tuple[str, ...]) -> dict[str, Any] | None:
        """The stored answer for ``key``, or None when absent or not usable."""
        try:
            data = jsonio.loads_strict(self.path(key).read_bytes())
        except (OSError, jsonio.JsonInputError):
            return None
        if (
            not isinstance(data, dict)
            or data.get("key") != key
            or data.get("status") not in _STATUSES
        ):
            return None
        if data["status"] == "ok" and data.get("label") not in scale:
            return None
        usage = data.get("usage")
        if usage is not None and not (
            isinstance(usage, dict)
            and all(isinstance(v, int) and not isinstance(v, bool) for v in usage.values())
        ):
            return None
        return data

    def put(self, key: str, entry: Mapping[str, Any]) -> None:
        """Store an answer atomically; a failure to write only costs a future cache hit."""
        if entry.get("status") not in _STATUSES:
            return
        with contextlib.suppress(OutputError):
            write_atomic(self.path(key), [jsonio.dumps({**entry, "key": key}, indent=True)])
