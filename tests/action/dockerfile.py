"""The Action's Dockerfile read as Docker reads it, for the tests that check it
(``test_dockerfile.py``, ``test_release.py``) and the image test (``tests/image``)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"


def instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs: comments dropped, ``\\`` continuations joined."""
    out: list[tuple[str, str]] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if pending and line.startswith("#"):
            continue  # a comment inside a continued instruction
        if line.endswith("\\"):
            pending += line[:-1].strip() + " "
            continue
        full = (pending + line).strip()
        pending = ""
        word, _, rest = full.partition(" ")
        out.append((word.upper(), rest.strip()))
    assert not pending, "the Dockerfile ends inside a continued line"
    return out


@dataclass(frozen=True)
class BaseImage:
    """The ``FROM`` of an official ``python:X.Y.Z-slim-<debian>`` image."""

    reference: str
    """As written, e.g. ``python:3.12.12-slim-bookworm`` (a ``@sha256:`` digest kept)."""
    python: tuple[int, int]
    debian: str


BASE = re.compile(
    r"python:(?P<major>\d+)\.(?P<minor>\d+)\.\d+-slim-(?P<debian>[a-z]+)(?:@sha256:[0-9a-f]{64})?"
)


def base_image(steps: list[tuple[str, str]]) -> BaseImage:
    """The one ``FROM``; ``ValueError`` when it is not an official slim Python image."""
    froms = [a for w, a in steps if w == "FROM"]
    if len(froms) != 1:
        raise ValueError(f"expected one FROM, found {len(froms)}")
    m = BASE.fullmatch(froms[0])
    if not m:
        raise ValueError(f"FROM {froms[0]!r} is not python:X.Y.Z-slim-<debian release>")
    return BaseImage(froms[0], (int(m["major"]), int(m["minor"])), m["debian"])


def entrypoint(steps: list[tuple[str, str]]) -> list[str] | None:
    """The last ``ENTRYPOINT`` in exec form (a JSON array of strings), ``None`` when there is
    none or it is in shell form."""
    entries = [a for w, a in steps if w == "ENTRYPOINT"]
    if not entries:
        return None
    try:
        argv = json.loads(entries[-1])
    except json.JSONDecodeError:
        return None
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        return None
    return argv
