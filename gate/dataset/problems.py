"""Collecting a dataset's problems: every one of the whole file, reported in one error."""

from __future__ import annotations

from gate.errors import DatasetError, Problem

MAX_PROBLEMS = 200
"""Problems kept in one error; the rest are counted."""


class Problems:
    """Collects problems, keeping the first :data:`MAX_PROBLEMS`."""

    def __init__(self, display: str):
        self.display = display
        self.kept: list[Problem] = []
        self.count = 0

    def add(self, problem: Problem) -> None:
        self.count += 1
        if len(self.kept) < MAX_PROBLEMS:
            self.kept.append(problem)

    def error(self) -> DatasetError:
        problems = list(self.kept)
        if self.count > len(self.kept):
            problems.append(
                Problem(
                    self.display,
                    None,
                    None,
                    f"... and {self.count - len(self.kept)} more problems (showing the first "
                    f"{MAX_PROBLEMS})",
                )
            )
        return DatasetError(problems, hint="Fix these and run `toolgate validate` again.")
