"""The conversation every agent kind is tested on, and a small support agent for it.

The case (``dataset.jsonl``, and the same in ``dataset.csv``): a refund in three user
turns — the user asks for a refund (the agent must ask for the email, calling nothing),
gives the email (the agent verifies it), then confirms (the agent refunds). ``decide``
is the agent: a pure function of the conversation so far in the OpenAI chat shape, so a
stateless agent of any kind answers from ``messages`` with it. ``Memory`` is the same
agent keeping its own state between user turns (a stateful agent).

Variants: ``good``; ``forbidden`` — on being given the email it deletes the account (a
must-not-call tool, in turn 2); ``eager`` — it refunds at once in turn 1, before any
verification; ``wrong_email`` — it verifies a misspelt address in turn 2.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
ORDER = re.compile(r"\bord_\d+\b")
EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+")

ASK_EMAIL = "Happy to help. What is the email address on the account?"
VERIFIED = "Thanks, you are verified. Shall I refund the order now?"
REFUNDED = "Done: the refund is on its way."


@dataclass
class Memory:
    """What a stateful agent remembers of one case-sample."""

    variant: str = "good"
    order: str | None = None
    email: str | None = None
    verified: bool = False
    refunded: bool = False
    log: list[str] = field(default_factory=list)

    def hear(self, text: str) -> dict[str, Any]:
        """A user message → the agent's next step (calls, or an answer)."""
        self.log.append(text)
        if m := ORDER.search(text):
            self.order = m.group(0)
        if m := EMAIL.search(text):
            self.email = m.group(0)
        return self.step()

    def results(self, calls: list[dict[str, Any]], results: list[Any]) -> dict[str, Any]:
        """Tool results → the answer to the user turn."""
        for call, result in zip(calls, results, strict=True):
            content = result if isinstance(result, dict) else {}
            if call["name"] == "verify_identity" and content.get("verified") is True:
                self.verified = True
            if call["name"] == "issue_refund":
                self.refunded = True
            if call["name"] == "delete_account":
                return {"content": "Your account is deleted."}
        if self.refunded:
            return {"content": REFUNDED}
        return {"content": VERIFIED if self.verified else "I could not verify you."}

    def step(self) -> dict[str, Any]:
        if self.variant == "eager" and self.order and not self.refunded:
            return _call("issue_refund", order_id=self.order)
        if self.email is None:
            return {"content": ASK_EMAIL}
        if not self.verified:
            if self.variant == "forbidden":
                return _call("delete_account")
            email = self.email.replace("@", "@x") if self.variant == "wrong_email" else self.email
            return _call("verify_identity", email=email)
        if not self.refunded and self.order:
            return _call("issue_refund", order_id=self.order)
        return {"content": "Anything else?"}


def _call(name: str, **args: Any) -> dict[str, Any]:
    return {"calls": [{"name": name, "arguments": args}]}


def decide(messages: list[dict[str, Any]], variant: str = "good") -> dict[str, Any]:
    """The stateless agent: replay the conversation so far into a fresh :class:`Memory`
    and take the next step (``{"calls": [...]}`` or ``{"content": "..."}``)."""
    memory = Memory(variant)
    pending: list[dict[str, Any]] = []
    outcome: dict[str, Any] = {}
    for m in messages:
        role = m.get("role")
        if role == "user":
            outcome = memory.hear(str(m.get("content") or ""))
        elif role == "assistant" and m.get("tool_calls"):
            pending = [
                {"name": c["function"]["name"], "arguments": c["function"]["arguments"]}
                for c in m["tool_calls"]
            ]
            for c in pending:
                if c["name"] == "issue_refund":
                    memory.refunded = True
        elif role == "tool":
            content = m.get("content")
            value = json.loads(content) if isinstance(content, str) else content
            if pending and pending[0]["name"] == "verify_identity" and isinstance(value, dict):
                memory.verified = memory.verified or value.get("verified") is True
            outcome = memory.results([pending[0]], [value]) if pending else {}
            pending = pending[1:]
        elif role == "assistant":
            outcome = {}
    return outcome
