"""A module that imports once: the second import (a replacement worker) fails — a worker
that cannot start in the middle of a run. The marker file is named by an environment
variable."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

_MARKER = Path(os.environ["TOOLGATE_TEST_ONCE"])
if _MARKER.exists():
    os._exit(0)  # the interpreter ends while importing: the worker never says "ready"
_MARKER.write_text("imported", "utf-8")


def crash_first(messages: Any, tools: Any, call_tool: Any, case_id: str) -> str:
    if case_id == "bad":
        os._exit(0)
    return "ok"
