"""``kind: openai``: any OpenAI-compatible chat-completions endpoint; the runner is the
agent loop (:mod:`gate.replay.openai_agent`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field

from gate.agents.interface import AgentSettings, Finding, Show

DEFAULT_BREAKER_AFTER = 5
"""``agent.breaker_after`` unless the config sets it."""


class OpenAIAgent(AgentSettings):
    kind: Literal["openai"]
    model: str
    base_url: str = "https://api.openai.com/v1"
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = 0.0
    params: dict[str, Any] = Field(default_factory=dict)
    system_prompt_file: str | None = None
    max_retries: Annotated[int, Field(ge=0, le=20)] = 4
    breaker_after: Annotated[int, Field(ge=0, le=100_000)] = DEFAULT_BREAKER_AFTER
    """The circuit breaker's threshold: after this many case-samples in a row gave up on
    the endpoint the same way (the same status or transport error, after their retries),
    the rest are recorded ``not_attempted`` without being sent. ``0``: never opens."""

    adapter: ClassVar[str] = "gate.replay.openai_agent:OpenAIChatAgent"

    def preflight(self, root: Path, show: Show) -> list[Finding]:
        if not self.system_prompt_file:
            return []
        path = (root / self.system_prompt_file).resolve()
        return [] if path.is_file() else [("system_prompt_file", f"no such file {show(path)}")]

    def secret_env_names(self) -> list[str]:
        return [self.api_key_env]

    def legacy_identity(self, base: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "model": base.get("model"),
            "base_url": base.get("base_url"),
            "temperature": base.get("temperature"),
            "params": base.get("params"),
            # the previous release hashed the prompt's path, which results do not keep:
            # this run's path is the best guess
            "system_prompt_file": self.system_prompt_file,
        }
