"""Workflow commands for the Actions runner: annotations, outputs, step summary.

Escaping follows the runner's rules: in a message ``%``, CR and LF are escaped; in a
property value also ``:`` and ``,``.
"""

from __future__ import annotations

from collections.abc import Mapping


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(
    level: str,
    message: str,
    *,
    file: str | None = None,
    line: int | None = None,
    title: str | None = None,
) -> str:
    """One ``::error …::message`` line (level: error, warning, notice)."""
    props: dict[str, str] = {}
    if file:
        props["file"] = file
    if line:
        props["line"] = str(line)
    if title:
        props["title"] = title
    return _command(level, props, message)


def _command(name: str, props: Mapping[str, str], message: str) -> str:
    rendered = ",".join(f"{k}={escape_property(v)}" for k, v in props.items())
    return f"::{name}{' ' + rendered if rendered else ''}::{escape_data(message)}"
