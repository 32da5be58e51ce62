"""``kind: python``: ``module:callable``, sync or async, called in worker processes with
the messages, the tools and a ``call_tool`` the runner answers
(:mod:`gate.replay.python_agent`)."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field

from gate.agents.interface import Interpreted


class PythonAgent(Interpreted):
    kind: Literal["python"]
    callable: Annotated[str, Field(pattern=r"^[\w.]+:[\w.]+$")]
    path: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    """Added to the worker processes' environment."""

    adapter: ClassVar[str] = "gate.replay.python_agent:PythonCallableAgent"
    validate_starts: ClassVar[str | None] = "callable"
    # The callable is imported by starting a worker — never into ToolGate's process: the
    # adapter does so before the first case, and `validate` runs the first case.
