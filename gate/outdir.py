"""The output folder (``--out``): one writer at a time, files that are whole or absent.

* **A lock.** Every command that writes the folder holds an exclusive ``flock`` on
  ``OUT/.toolgate.lock`` for as long as it writes: a second toolgate on the same folder
  stops at once with "another toolgate is writing OUT" (exit code 2) instead of the two
  interleaving their files. The lock goes with the process (a killed run leaves none).
* **Whole files.** Each file is written under a unique temporary name in the same folder
  and renamed over the old one when complete; the temporary file is removed when the
  write fails. A reader sees the old file or the new one, never a mix.
* **No stale outputs.** A run that starts afresh removes the outputs it will rewrite
  before it starts: a run that dies half-way leaves no earlier results.json, report or
  comment that could be taken for its own.
* **Located errors.** A folder that cannot be created or written (a full disk, a
  read-only mount, a file named like the folder, a folder named like a file) is an
  :class:`~gate.errors.OutputError` naming the path and the reason, never a traceback.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from gate.errors import OutputError, Problem

LOCK_FILE = ".toolgate.lock"


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_FILE_MODE = 0o666 & ~_umask()
"""What ``open()`` would have given the file (the process's umask at import)."""

_BUFFER = 1 << 20
"""Bytes :func:`write_atomic` gathers before a write."""

RUN_OUTPUTS = ("results.json", "report.md", "junit.xml", "comment.md")
"""What a scored run writes besides runs.jsonl (removed before a fresh run)."""


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _fault(where: object, message: str) -> OutputError:
    """The error for the path (or name) ``where``."""
    return OutputError(Problem(str(where), None, None, message))


def ensure_dir(out: Path) -> None:
    """Create ``out`` (and its parents) or raise a located :class:`OutputError`."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise _fault(out, "cannot create the output folder: a file has its name") from None
    except OSError as exc:
        raise _fault(out, f"cannot create the output folder: {_why(exc)}") from None
    if not out.is_dir():
        raise _fault(out, "is not a folder")


@contextlib.contextmanager
def locked(out: Path) -> Iterator[None]:
    """Hold the folder's exclusive lock (module docstring) while the block runs."""
    ensure_dir(out)
    path = out / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        raise _fault(path, f"cannot write: {_why(exc)}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise _fault(
                out,
                f"another toolgate is writing {out} (give each run its own --out, or "
                "wait for the other to finish)",
            ) from None
        yield
    finally:
        os.close(fd)  # releases the lock


def remove_stale(out: Path, names: Iterable[str] = RUN_OUTPUTS) -> None:
    """Remove the outputs a fresh run will rewrite (module docstring)."""
    for name in names:
        path = out / name
        try:
            path.unlink(missing_ok=True)
        except IsADirectoryError:
            raise _fault(path, "is a folder; the run writes a file there") from None
        except OSError as exc:
            raise _fault(path, f"cannot remove the old file: {_why(exc)}") from None


def write_atomic(
    path: Path, chunks: Iterable[bytes], *, display: str | None = None, mode: int | None = None
) -> None:
    """Write ``path`` whole or not at all (module docstring) with permission bits ``mode``
    (default: what ``open()`` gives); a failure is an :class:`OutputError` naming
    ``display`` (default: the path)."""
    name = display or str(path)
    ensure_dir(path.parent)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise _fault(name, f"cannot write: {_why(exc)}") from None
    try:
        # mkstemp's 0600 would hide the file from the artifact upload.
        os.fchmod(fd, _FILE_MODE if mode is None else mode)
        # A large buffer: results.json comes a case at a time (a few KB each), and 8 KB
        # would make each chunk its own system call.
        with os.fdopen(fd, "wb", buffering=_BUFFER) as fh:
            for chunk in chunks:
                fh.write(chunk)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, IsADirectoryError) or path.is_dir():
            raise _fault(name, "cannot write: a folder has its name") from None
        raise _fault(name, f"cannot write: {_why(exc)}") from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
