"""Reading the record files importers take: JSON Lines, one JSON array, or one JSON value.

Exports come in all three shapes (a collector's file exporter writes JSON Lines, an API
dump is one array or one object with the records under a key). :func:`read_records`
accepts each and remembers where every record stood — its line in a JSON Lines file, or
its index in an array — so that a problem can name the record exactly.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gate import jsonio
from gate.errors import Problem
from gate.interop import InteropError

MAX_FILE_BYTES = 512 * 1024 * 1024
"""Largest file an importer reads (a sanity bound, not a format limit)."""


@dataclass(frozen=True, slots=True)
class Record:
    """One decoded record and where it came from."""

    value: Any
    line: int | None
    """1-based line in a JSON Lines file; the first line of the file for a single JSON value."""
    pointer: str
    """Path to the record inside its file ("" for a JSON Lines line, ``[3]`` for an array
    element, ``data[3]`` for an element under a wrapping key)."""

    def field(self, *parts: str | int) -> str:
        """The dotted field name of ``parts`` inside this record (``[0].turns[2].name``)."""
        out = self.pointer
        for p in parts:
            if isinstance(p, int):
                out += f"[{p}]"
            elif p.startswith("["):
                out += p
            else:
                out = f"{out}.{p}" if out else p
        return out


class Locator:
    """Builds :class:`Problem` s for one file; importers raise them in one batch."""

    def __init__(self, display: str):
        self.display = display
        self.problems: list[Problem] = []

    def add(self, record: Record | None, field: str | None, message: str) -> None:
        line = record.line if record is not None else None
        self.problems.append(Problem(self.display, line, field or None, message))

    def note(self, field: str | None, message: str) -> None:
        """A problem named by its field alone (no record line)."""
        self.add(None, field, message)

    def fail(self, record: Record | None, field: str | None, message: str) -> InteropError:
        self.add(record, field, message)
        return self.error()

    def error(self, hint: str | None = None) -> InteropError:
        return InteropError(self.problems[:50], hint=hint)

    def raise_if_any(self, hint: str | None = None) -> None:
        if self.problems:
            raise self.error(hint)


def refuse_existing(paths: Iterable[Path], force: bool) -> None:
    """An importer never overwrites a file without ``--force``: every one that exists is
    named at once."""
    existing = [] if force else [p for p in paths if p.exists()]
    if existing:
        raise InteropError(
            [Problem(str(p), None, None, "already exists") for p in existing],
            hint="pass --force to overwrite",
        )


def write_cases(path: Path, cases: Iterable[Mapping[str, Any]]) -> None:
    """Dataset cases → a JSON Lines file."""
    path.write_bytes(b"".join(jsonio.dumps_line(c) for c in cases))


def read_bytes(path: Path, display: str) -> bytes:
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise InteropError(Problem(display, None, None, f"larger than {MAX_FILE_BYTES} bytes"))
        return path.read_bytes()
    except OSError as exc:
        raise InteropError(
            Problem(display, None, None, f"cannot read: {exc.strerror or exc}")
        ) from None


def read_records(
    path: Path,
    *,
    display: str | None = None,
    unwrap: Sequence[str] = (),
) -> list[Record]:
    """Every record of ``path``.

    * JSON Lines (one value per non-blank line) → one record per line;
    * one JSON array → one record per element;
    * one JSON object holding an array under one of the ``unwrap`` keys (e.g. an API dump
      ``{"data": [...]}``) → one record per element of that array;
    * any other single JSON value → one record.

    A line that is not valid JSON is an :class:`InteropError` naming the line.
    """
    name = display or str(path)
    raw = read_bytes(path, name)
    text = _decode(raw, name)
    stripped = text.lstrip()
    if not stripped:
        raise InteropError(Problem(name, None, None, "the file is empty"))
    lines = text.splitlines()
    first_line = next(i for i, ln in enumerate(lines, start=1) if ln.strip())
    # A file whose first non-blank line is a complete JSON value is JSON Lines; otherwise
    # it is one (pretty-printed) JSON value.
    try:
        jsonio.loads_strict(lines[first_line - 1])
        is_jsonl = True
    except jsonio.JsonInputError:
        is_jsonl = False
    if is_jsonl:
        records: list[Record] = []
        loc = Locator(name)
        for lineno, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                value = jsonio.loads_strict(line)
            except jsonio.JsonInputError as exc:
                loc.add(Record(None, lineno, ""), None, str(exc))
                continue
            records.append(Record(value, lineno, ""))
        loc.raise_if_any()
        if len(records) == 1:
            return _spread(records[0].value, name, first_line, unwrap)
        return records
    try:
        value = jsonio.loads_strict(text, max_depth=128)
    except jsonio.JsonInputError as exc:
        # The line of a syntax error when the decoder knows it, else the line the value
        # starts on: a problem always names a line.
        raise InteropError(
            Problem(
                name, exc.line or first_line, None, f"neither JSON Lines nor one JSON value: {exc}"
            )
        ) from None
    return _spread(value, name, first_line, unwrap)


def _spread(value: Any, name: str, line: int, unwrap: Sequence[str]) -> list[Record]:
    if isinstance(value, list):
        return [Record(v, line, f"[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        for key in unwrap:
            inner = value.get(key)
            if isinstance(inner, list):
                return [Record(v, line, f"{key}[{i}]") for i, v in enumerate(inner)]
    return [Record(value, line, "")]


def _decode(raw: bytes, name: str) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InteropError(
            Problem(name, None, None, f"not valid UTF-8 (byte {exc.start})")
        ) from None
