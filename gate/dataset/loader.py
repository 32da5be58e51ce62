"""Loading a dataset: read the file, validate each row, and build :class:`Dataset`.

One way through, each stage in its own module: :mod:`gate.dataset.read` yields the
file's rows (JSONL or CSV) and hashes the bytes as it reads them;
:mod:`gate.dataset.validate` turns each row into a :class:`gate.model.Case`, resolving
tools through :mod:`gate.dataset.tools` (each ``@file.json`` read and hashed once);
:mod:`gate.dataset.problems` collects every problem of the file for one error. The
dataset's hash (the pin) follows :func:`gate.dataset.pin.dataset_sha256`, from the
digests taken while reading.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from gate.dataset.digest import dataset_sha256
from gate.dataset.problems import Problems
from gate.dataset.read import Format, Rows, default_display
from gate.dataset.tools import ToolResolver
from gate.dataset.validate import CaseBuilder
from gate.errors import Problem
from gate.jsonio import no_gc
from gate.model import Case, ToolSpec

# ─── the result ──────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class Dataset:
    """A validated dataset. ``tools`` holds every tool by name across cases; when two
    cases define one name differently, the first definition is kept here (scorers that
    need the exact schema a case saw use ``case.tool(name)``)."""

    path: Path
    display: str
    cases: tuple[Case, ...]
    sha256: str
    files: tuple[Path, ...] = ()
    tools: dict[str, ToolSpec] = field(default_factory=dict)
    cases_sha256: str | None = None
    """sha256 of the dataset file's bytes alone, without the tool files it references
    (computed from the bytes read, never by reading the file again)."""
    _index: dict[str, Case] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_index", {c.id: c for c in self.cases})
        if not self.tools:
            tools: dict[str, ToolSpec] = {}
            for c in self.cases:
                for t in c.available_tools:
                    tools.setdefault(t.name, t)
            object.__setattr__(self, "tools", tools)

    def case(self, id: str) -> Case:
        """The case with this id (KeyError if none)."""
        return self._index[id]

    def __len__(self) -> int:
        return len(self.cases)

    def __iter__(self) -> Iterator[Case]:
        return iter(self.cases)

    def __contains__(self, id: object) -> bool:
        return id in self._index

    @property
    def tags(self) -> frozenset[str]:
        return frozenset(t for c in self.cases for t in c.tags)

    def slice_counts(self) -> dict[str, int]:
        """Cases per slice, keyed as gates name slices (``difficulty=hard``,
        ``tag=refund``, ``no_tool=true``, ``must_not_call=true``)."""
        counts: dict[str, int] = {}
        for c in self.cases:
            for key in slice_keys(c):
                counts[key] = counts.get(key, 0) + 1
        return dict(sorted(counts.items()))


def slice_keys(case: Case) -> list[str]:
    """The slices a case belongs to, in the ``key=value`` form gates use."""
    keys = [f"no_tool={'true' if case.expected_no_tool else 'false'}"]
    keys.append(f"must_not_call={'true' if case.must_not_call else 'false'}")
    keys.extend(f"must_not_call={name}" for name in case.must_not_call)
    if case.difficulty is not None:
        keys.append(f"difficulty={case.difficulty.value}")
    keys.extend(f"tag={t}" for t in case.tags)
    return keys


# ─── entry points ────────────────────────────────────────────────────────────


class CaseStream:
    """Iterate a dataset's cases one at a time (memory: one case, the referenced tool
    files, and — unless ``check_duplicates=False`` — the set of ids seen).

    Cases are yielded while the file is valid. At the first problem the stream stops
    yielding but keeps reading to collect every problem, then raises
    :class:`DatasetError` with all of them. After a full iteration, ``sha256``,
    ``files``, ``tools`` and ``count`` describe the dataset.
    """

    def __init__(
        self,
        path: Path,
        *,
        root: Path | None = None,
        display: str | None = None,
        check_duplicates: bool = True,
    ):
        self.path = Path(path)
        self.display = display or default_display(self.path)
        self.root = Path(root) if root is not None else self.path.parent
        self.check_duplicates = check_duplicates
        self.sha256: str | None = None
        self.cases_sha256: str | None = None
        self.files: tuple[Path, ...] = ()
        self.tools: dict[str, ToolSpec] = {}
        self.count = 0

    def __iter__(self) -> Iterator[Case]:
        problems = Problems(self.display)
        fmt = Format.of(self.path)
        if fmt is None:
            raise problems.about_file(
                f"unknown dataset format {self.path.suffix!r}: use .jsonl (one JSON case "
                "per line) or .csv"
            )
        try:
            fh = self.path.open("rb")
        except OSError as exc:
            raise problems.about_file(f"cannot read: {exc.strerror or exc}") from None
        display_dir = str(Path(self.display).parent.as_posix())
        resolver = ToolResolver(self.path.parent, self.root, display_dir)
        builder = CaseBuilder(self.display, resolver, problems, self.check_duplicates)
        with fh:
            rows = Rows(fh, fmt, self.display, problems)
            for line, row in rows:
                case = builder.build(line, row)
                if case is not None:
                    self.count += 1
                    if not problems.count:
                        yield case
        if not problems.count and self.count == 0:
            problems.add(Problem(self.display, None, None, "the dataset has no cases"))
        if problems.count:
            raise problems.error()
        self.tools = builder.tools
        self.files = (
            self.path,
            *(
                self.path.parent / rel
                for rel in sorted(tf.relpath for tf in resolver.files.values())
            ),
        )
        refs = {tf.relpath: tf.sha256 for tf in resolver.files.values()}
        self.cases_sha256 = rows.sha256
        self.sha256 = dataset_sha256(self.cases_sha256, refs)


iter_cases = CaseStream
"""Stream a dataset's cases (the name callers use for :class:`CaseStream`)."""


def load_dataset(path: Path, *, root: Path | None = None, display: str | None = None) -> Dataset:
    """Read and validate a whole dataset. Raises :class:`DatasetError` listing every
    problem (file:line: field: message). ``@file`` references resolve against the
    dataset's folder and may not leave ``root`` (default: that folder)."""
    stream = CaseStream(Path(path), root=root, display=display)
    # Every object built here survives the load, so the cyclic GC would rescan a growing
    # heap again and again for garbage that is not there (2x the load time at 40,000
    # cases, bench/load_bench.py). Loading creates no reference cycles: pause it, and
    # freeze what it built (gate.jsonio: else one full collection follows over it all).
    with no_gc():
        cases = tuple(stream)
    assert stream.sha256 is not None
    return Dataset(
        path=stream.path,
        display=stream.display,
        cases=cases,
        sha256=stream.sha256,
        files=stream.files,
        tools=stream.tools,
        cases_sha256=stream.cases_sha256,
    )
