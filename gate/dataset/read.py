"""Reading a dataset file: its rows, from JSONL or CSV, each with its line.

The file is read once, as bytes, and hashed as it is read (:attr:`Rows.sha256`): the
dataset's digest never needs a second read. Values are decoded with
:func:`gate.jsonio.loads_strict` (no ``NaN``/``Infinity``, no duplicate keys, bounded
nesting). A problem in the text — not JSON, not UTF-8, malformed CSV — is reported with
the file and line, and reading goes on so that one pass finds every problem.

Both formats carry the same columns (:mod:`gate.dataset.columns`). In CSV, the text
columns are raw cell text and the others hold JSON (arrays, objects, booleans, numbers);
``available_tools`` may also be a raw ``@file.json`` reference; an empty cell means the
column is absent. A CSV row's line is the physical line it starts on (rows may span
lines inside quotes).
"""

from __future__ import annotations

import csv
import enum
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from gate import jsonio
from gate.dataset.columns import COLUMNS, ENUM_COLUMNS, TEXT_COLUMNS
from gate.dataset.matchers import did_you_mean
from gate.dataset.problems import Problems
from gate.errors import Problem


class Format(enum.Enum):
    """A dataset file's format, by its suffix."""

    JSONL = "jsonl"
    CSV = "csv"

    @classmethod
    def of(cls, path: Path) -> Format | None:
        """``.jsonl``/``.ndjson`` or ``.csv`` (any case); None for any other suffix."""
        suffix = path.suffix.lower()
        if suffix in (".jsonl", ".ndjson"):
            return cls.JSONL
        if suffix == ".csv":
            return cls.CSV
        return None


class Rows:
    """The rows of one open dataset file as ``(line, decoded row)``, read once; after
    iterating, :attr:`sha256` is the digest of every byte read."""

    def __init__(self, fh: BinaryIO, fmt: Format, display: str, problems: Problems):
        self._fh = fh
        self._fmt = fmt
        self._display = display
        self._problems = problems
        self._digest = hashlib.sha256()
        self._done = False

    def __iter__(self) -> Iterator[tuple[int, Any]]:
        read = _jsonl_rows if self._fmt is Format.JSONL else _csv_rows
        yield from read(self._fh, self._digest, self._display, self._problems)
        self._done = True

    @property
    def sha256(self) -> str:
        """sha256 hex of the file's bytes (only once every row was read)."""
        assert self._done, "the digest is known once every row was read"
        return self._digest.hexdigest()


def _lines(fh: BinaryIO, digest: Any) -> Iterator[tuple[int, bytes]]:
    """The file's numbered lines, each hashed as read; the first without its BOM."""
    for lineno, raw in enumerate(fh, start=1):
        digest.update(raw)
        yield lineno, raw[3:] if lineno == 1 and raw.startswith(b"\xef\xbb\xbf") else raw


def _jsonl_rows(
    fh: BinaryIO, digest: Any, display: str, problems: Problems
) -> Iterator[tuple[int, Any]]:
    for lineno, raw in _lines(fh, digest):
        if not raw.strip():
            continue
        try:
            obj = jsonio.loads_strict(raw)
        except jsonio.JsonInputError as exc:
            text = raw.strip()
            wrapped = not (text.startswith(b"{") and text.endswith(b"}"))
            hint = (
                " — each case must be one whole line (JSON Lines: one case per line); a case "
                "wrapped over several lines cannot be read"
                if wrapped
                else ""
            )
            problems.add(Problem(display, lineno, None, f"{exc}{hint}"))
            continue
        yield lineno, obj


def _text_lines(fh: BinaryIO, digest: Any, display: str, problems: Problems) -> Iterator[str]:
    for lineno, raw in _lines(fh, digest):
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            problems.add(
                Problem(display, lineno, None, f"not valid UTF-8 (byte {exc.start} of the line)")
            )
            yield raw.decode("utf-8", errors="replace")


def _csv_rows(
    fh: BinaryIO, digest: Any, display: str, problems: Problems
) -> Iterator[tuple[int, Any]]:
    # A large inline `available_tools` cell can pass the default 128 KiB field limit.
    csv.field_size_limit(max(csv.field_size_limit(), 64 * 1024 * 1024))
    lines = _text_lines(fh, digest, display, problems)
    reader = csv.reader(lines, strict=True)
    header: list[str] | None = None
    columns: list[str | None] = []

    def report(field: str | None, message: str) -> None:
        problems.add(Problem(display, start, field, message))

    while True:
        start = reader.line_num + 1
        try:
            cells = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            report(None, f"malformed CSV: {exc}")
            # The reader cannot resynchronise reliably after a quoting error: stop here,
            # but read (and hash) the remaining lines without it — it would raise again.
            for _ in lines:
                pass
            break
        if not cells or (len(cells) == 1 and not cells[0].strip()):
            continue
        if header is None:
            header = cells
            seen: set[str] = set()
            for i, name in enumerate(cells):
                name = name.strip()
                if name in seen:
                    report(name, f"column {i + 1} repeats the column {name!r}")
                    columns.append(None)
                elif name not in COLUMNS:
                    report(
                        name or f"column {i + 1}", f"unknown column{did_you_mean(name, COLUMNS)}"
                    )
                    columns.append(None)
                else:
                    seen.add(name)
                    columns.append(name)
            continue
        if len(cells) != len(columns):
            report(None, f"row has {len(cells)} cells; the header has {len(columns)}")
            continue
        row: dict[str, Any] = {}
        bad = False
        for column, cell in zip(columns, cells, strict=True):
            if column is None or cell == "":
                continue
            name = column
            if name in ENUM_COLUMNS and len(cell) >= 2 and cell[0] == cell[-1] == '"':
                # `"strict"` as a JSON string is as clear as raw `strict`: take both
                # (docs/dataset.md lists neither enum column among the JSON or the text columns).
                try:
                    row[name] = jsonio.loads_strict(cell)
                    continue
                except jsonio.JsonInputError:
                    pass
            if name in TEXT_COLUMNS or (
                name == "available_tools" and cell.lstrip().startswith("@")
            ):
                row[name] = cell.strip() if name == "available_tools" else cell
                continue
            try:
                row[name] = jsonio.loads_strict(cell)
            except jsonio.JsonInputError as exc:
                hint = ""
                if (
                    cell.strip().lower() in ("true", "false", "yes", "no")
                    and name == "expected_no_tool"
                ):
                    hint = " (write true or false)"
                report(
                    name,
                    f"cell is not JSON ({exc}); CSV cells of arrays, objects, booleans and "
                    f"numbers are JSON-encoded{hint}",
                )
                bad = True
        if not bad:
            yield start, row


def default_display(path: Path) -> str:
    """``path`` as shown in messages: relative to the working directory when inside it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return Path(rel).as_posix() if not rel.startswith("..") else str(path)
