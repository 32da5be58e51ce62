"""GitHub Actions expressions (``${{ … }}``), evaluated as the runner evaluates the ones
ToolGate's workflows use, so a test can run a workflow file's steps as written.

The subset: string literals (``'…'``, ``''`` for a quote), ``true``/``false``/``null``,
numbers, context paths (``github.event_name``, ``steps.toolgate.outputs.results-path``),
``==``/``!=`` (case-insensitive for strings, as GitHub compares them), ``!``, ``&&`` and
``||`` (which return an operand, not a boolean: ``cond && 'a' || 'b'`` is the idiom),
parentheses, and the status functions ``always()``, ``success()``, ``failure()``,
``cancelled()``. Falsy values: ``false``, ``0``, ``''``, ``null``. A string with several
``${{ }}`` parts is interpolated; an ``if:`` is one expression with or without them
(docs: "Evaluate expressions in workflows and actions").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_TOKEN = re.compile(
    r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>-?\d+(?:\.\d+)?)|(?P<op>==|!=|&&|\|\||!|\(|\))"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_\-]*(?:\.[A-Za-z_][A-Za-z0-9_\-]*)*)(?P<call>\(\))?)"
)
_EXPR = re.compile(r"\$\{\{(.*?)\}\}", re.S)


def truthy(value: Any) -> bool:
    return value not in (False, 0, "", None)


class _Parser:
    def __init__(self, text: str, context: Mapping[str, Any], status: str) -> None:
        self.tokens: list[tuple[str, Any]] = []
        pos = 0
        text = text.strip()
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None or m.end() == pos:
                raise ValueError(f"cannot read the expression at {text[pos:]!r}")
            pos = m.end()
            if m.group("str") is not None:
                self.tokens.append(("lit", m.group("str")[1:-1].replace("''", "'")))
            elif m.group("num") is not None:
                self.tokens.append(("lit", float(m.group("num"))))
            elif m.group("op") is not None:
                self.tokens.append(("op", m.group("op")))
            elif m.group("call") is not None:
                self.tokens.append(("call", m.group("name")))
            else:
                self.tokens.append(("name", m.group("name")))
        self.i = 0
        self.context = context
        self.status = status

    def peek(self) -> tuple[str, Any] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> tuple[str, Any]:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def parse(self) -> Any:
        value = self.or_()
        if self.peek() is not None:
            raise ValueError(f"unexpected {self.peek()!r}")
        return value

    def or_(self) -> Any:
        left = self.and_()
        while self.peek() == ("op", "||"):
            self.take()
            right = self.and_()
            left = left if truthy(left) else right
        return left

    def and_(self) -> Any:
        left = self.cmp()
        while self.peek() == ("op", "&&"):
            self.take()
            right = self.cmp()
            left = right if truthy(left) else left
        return left

    def cmp(self) -> Any:
        left = self.unary()
        while self.peek() in (("op", "=="), ("op", "!=")):
            _, op = self.take()
            right = self.unary()
            same = (
                left.lower() == right.lower()
                if isinstance(left, str) and isinstance(right, str)
                else left == right
            )
            left = same if op == "==" else not same
        return left

    def unary(self) -> Any:
        if self.peek() == ("op", "!"):
            self.take()
            return not truthy(self.unary())
        return self.atom()

    def atom(self) -> Any:
        kind, value = self.take()
        if kind == "lit":
            return value
        if (kind, value) == ("op", "("):
            inner = self.or_()
            if self.take() != ("op", ")"):
                raise ValueError("unbalanced parentheses")
            return inner
        if kind == "call":
            return {
                "always": True,
                "success": self.status == "success",
                "failure": self.status == "failure",
                "cancelled": self.status == "cancelled",
            }[value]
        if kind == "name":
            if value in ("true", "false"):
                return value == "true"
            if value == "null":
                return None
            node: Any = self.context
            for part in value.split("."):
                node = node.get(part) if isinstance(node, Mapping) else None
            return node
        raise ValueError(f"unexpected {value!r}")


def evaluate(expression: str, context: Mapping[str, Any], *, status: str = "success") -> Any:
    """One expression, with or without its ``${{ }}``."""
    m = _EXPR.fullmatch(expression.strip())
    return _Parser(m.group(1) if m else expression, context, status).parse()


def render(value: str, context: Mapping[str, Any], *, status: str = "success") -> str:
    """A ``with:`` value: every ``${{ }}`` replaced by its value as a string."""

    def one(m: re.Match[str]) -> str:
        got = _Parser(m.group(1), context, status).parse()
        if got is None:
            return ""
        if isinstance(got, bool):
            return "true" if got else "false"
        if isinstance(got, float) and got.is_integer():
            return str(int(got))
        return str(got)

    return _EXPR.sub(one, value)


def step_runs(step: Mapping[str, Any], context: Mapping[str, Any], status: str) -> bool:
    """Whether a step runs: its ``if:`` (default ``success()``), as the runner decides."""
    cond = step.get("if", "success()")
    if isinstance(cond, bool):
        return cond
    return truthy(evaluate(str(cond), context, status=status))
