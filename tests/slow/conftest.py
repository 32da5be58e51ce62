"""The slow suites run only when asked for: ``pytest -m slow tests/slow``.

In a plain ``pytest`` run they are skipped (the fast subset in ``tests/reliability`` runs
instead), so the normal test run stays quick while CI runs the full counts as its own job.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.reliability.conftest import pytest_terminal_summary  # noqa: F401 - re-exported


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    if "slow" in (config.option.markexpr or ""):
        return
    skip = pytest.mark.skip(reason="slow suite: run with `pytest -m slow tests/slow`")
    for item in items:
        if item.get_closest_marker("slow") is not None:
            item.add_marker(skip)
