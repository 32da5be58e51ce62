"""The fast subset: ``pytest -m quick`` runs the test files ``tests/quick.txt`` lists.

Each listed path (a file or a folder, relative to the repository) marks its tests
``quick``. Asked for exactly ``-m quick``, pytest does not even import the other files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
QUICK_LIST = Path(__file__).resolve().with_name("quick.txt")


def quick_paths() -> list[Path]:
    """The paths tests/quick.txt lists, resolved (comments and blank lines skipped)."""
    out: list[Path] = []
    for raw in QUICK_LIST.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            out.append((ROOT / line).resolve())
    return out


def _is_quick(path: Path, listed: list[Path]) -> bool:
    return any(path == p or p in path.parents for p in listed)


def pytest_ignore_collect(collection_path: Path, config: Any) -> bool | None:
    if (config.option.markexpr or "").strip() != "quick":
        return None
    path = collection_path.resolve()
    listed = quick_paths()
    if _is_quick(path, listed) or any(path in p.parents for p in listed):
        return None
    return True


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    listed = quick_paths()
    for item in items:
        if _is_quick(Path(str(item.path)).resolve(), listed):
            item.add_marker(pytest.mark.quick)
