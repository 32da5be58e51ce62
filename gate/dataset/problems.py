"""Collecting a dataset's problems: every one of the whole file, reported in one error."""

from __future__ import annotations

from dataclasses import replace

from gate.errors import DatasetError, Problem

MAX_PROBLEMS = 200
"""Problems kept in one error; the rest are counted."""


class Problems:
    """Collects problems, keeping the first :data:`MAX_PROBLEMS`."""

    def __init__(self, display: str):
        self.display = display
        self.kept: list[Problem] = []
        self.count = 0
        self._once: dict[str, tuple[Problem, list[int]]] = {}

    def add(self, problem: Problem) -> None:
        self.count += 1
        if len(self.kept) < MAX_PROBLEMS:
            self.kept.append(problem)

    def add_once(self, key: str, problem: Problem) -> None:
        """A problem many cases share (a missing ``@tools.json``): said once, at its first
        line, with how many other cases have it too."""
        if key in self._once:
            self.count += 1
            if problem.line is not None:
                self._once[key][1].append(problem.line)
            return
        self._once[key] = (problem, [])
        self.add(problem)

    def about_file(self, message: str) -> DatasetError:
        """The error for the whole file (it has no line)."""
        return DatasetError(Problem(self.display, None, None, message))

    def error(self) -> DatasetError:
        problems = list(self.kept)
        for first, lines in self._once.values():
            if lines and first in problems:
                n = len(lines)
                more = f"{n} more case" + ("s" if n > 1 else "")
                span = f"line {lines[0]}" if n == 1 else f"lines {lines[0]}–{lines[-1]}"
                said = f"(and {more} {'reference' if n > 1 else 'references'} it, {span})"
                problems[problems.index(first)] = replace(first, message=f"{first.message} {said}")
        kept_count = len(self.kept) + sum(len(lines) for _, lines in self._once.values())
        if self.count > kept_count:
            problems.append(
                Problem(
                    self.display,
                    None,
                    None,
                    f"... and {self.count - kept_count} more problems (showing the first "
                    f"{MAX_PROBLEMS})",
                )
            )
        return DatasetError(problems, hint="Fix these and run `toolgate validate` again.")
