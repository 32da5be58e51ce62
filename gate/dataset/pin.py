"""The pin: the config names the dataset's sha256; a run refuses any other dataset.

The hash rule (:func:`gate.dataset.digest.dataset_sha256`) is computed from the digests
the loader takes while it reads the dataset and its tool files. :func:`check_pin` compares
the config's ``dataset.sha256`` with the dataset's hash and raises
:class:`PinMismatchError` naming both hashes and the exact command that re-pins.

:func:`pin_config` writes a new hash (and optionally a version) into toolgate.yml by
splicing the text at the character offsets :mod:`gate.yamlio` records for each scalar:
every other byte of the file — comments, key order, quoting, blank lines, CRLF line
ends — stays as it was. A missing key is inserted under ``dataset:`` after ``version``
or ``path``, with that key's indentation (or as ``, key: value`` in a flow mapping). The
result is parsed back and compared with the intended data before it is written.
"""

from __future__ import annotations

import json
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gate.dataset.read import default_display
from gate.errors import ConfigError, PinMismatchError, Problem
from gate.outdir import write_atomic
from gate.yamlio import YamlDoc, load_yaml, parse_yaml

if TYPE_CHECKING:
    from gate.config import Config
    from gate.dataset.loader import Dataset

_SHA = re.compile(r"^[0-9a-f]{64}$")


def repin_command(config_display: str) -> str:
    """The command a user runs to accept the current dataset."""
    return f"toolgate pin --config {config_display}"


def check_pin(config: Config, dataset: Dataset, *, config_display: str | None = None) -> None:
    """Raise :class:`PinMismatchError` unless the config pins exactly this dataset."""
    shown = config_display or _display(config.source)
    pinned = config.dataset.sha256
    if pinned == dataset.sha256:
        return
    line = _line(config.source, ("dataset", "sha256") if pinned else ("dataset",))
    command = repin_command(shown)
    if pinned is None:
        message = (
            f"the dataset is not pinned: {dataset.display} has sha256 {dataset.sha256}; "
            f"pin it with `{command}` and commit the config"
        )
    else:
        message = (
            f"the pin and the dataset disagree: {dataset.display} (with the files it "
            f"references) has sha256 {dataset.sha256}, but the config pins {pinned} — the "
            "dataset or the pin was changed. If the dataset's change is intended, re-pin with "
            f"`{command}` and commit the config (bump dataset.version when cases changed "
            "meaning); if the pin was edited, restore it"
        )
    raise PinMismatchError(Problem(shown, line, "dataset.sha256", message))


@dataclass(frozen=True, slots=True)
class PinResult:
    changed: bool
    old_sha256: str | None
    new_sha256: str
    old_version: str | None


def pin_config(
    config_path: Path, sha256: str, version: str | None = None, *, display: str | None = None
) -> PinResult:
    """Write ``sha256`` (and ``version`` when given) into the config file in place,
    leaving every other byte unchanged. Returns what changed."""
    if not _SHA.match(sha256):
        raise ValueError(f"not a sha256 hex digest: {sha256!r}")
    shown = display or _display(config_path)
    doc = load_yaml(config_path, display=shown)
    text = config_path.read_bytes().decode("utf-8")
    new_text = pin_text(text, doc, sha256, version)
    dataset = doc.data["dataset"]
    old_sha = dataset.get("sha256")
    old_version = dataset.get("version")
    result = PinResult(
        changed=new_text != text,
        old_sha256=old_sha if isinstance(old_sha, str) else None,
        new_sha256=sha256,
        old_version=None if old_version is None else str(old_version),
    )
    if result.changed:
        # The config keeps its permission bits.
        mode = stat.S_IMODE(config_path.stat().st_mode)
        write_atomic(config_path, [new_text.encode("utf-8")], display=shown, mode=mode)
    return result


def pin_text(text: str, doc: YamlDoc, sha256: str, version: str | None = None) -> str:
    """The config text with the pin updated (see the module docstring)."""
    data = doc.data
    if not isinstance(data, dict) or not isinstance(data.get("dataset"), dict):
        line = doc.lines.get(("dataset",)) if isinstance(data, dict) else 1
        raise doc.error(
            line, "dataset", "needs a `dataset:` mapping with `path:` before it can be pinned"
        )
    edits = [_edit(text, doc, "sha256", sha256, _sha_scalar)]
    if version is not None:
        edits.append(_edit(text, doc, "version", version, _version_scalar))
    # Apply from the end so earlier offsets stay valid (sorting is stable, so of two
    # inserts at one place sha256 goes in first and version lands before it).
    out = text
    for start, end, new in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        out = out[:start] + new + out[end:]
    _verify(out, doc, sha256, version)
    return out


# ─── edits ───────────────────────────────────────────────────────────────────


def _sha_scalar(value: str, old: str) -> str:
    quote = old[:1] if old[:1] in ("'", '"') else ""
    return f"{quote}{value}{quote}"


def _version_scalar(value: str, old: str) -> str:
    if old[:1] == "'":
        return "'" + value.replace("'", "''") + "'"
    if old[:1] != '"' and _plain_ok(value):
        return value
    return json.dumps(value, ensure_ascii=False)


def _plain_ok(value: str) -> bool:
    """True when ``value`` written unquoted reads back as the same string."""
    if not value or value != value.strip() or "\n" in value:
        return False
    try:
        doc = parse_yaml(f"k: {value}\n", "<pin>")
    except ConfigError:
        return False
    return isinstance(doc.data, dict) and doc.data.get("k") == value


def _edit(text: str, doc: YamlDoc, key: str, value: str, render: Any) -> tuple[int, int, str]:
    path = ("dataset", key)
    dataset = doc.data["dataset"]
    if key in dataset:
        start, end = doc.spans.get(path, (0, 0))
        if path not in doc.spans:
            raise doc.error(
                doc.lines.get(path), f"dataset.{key}", "must be a plain value to be pinned"
            )
        if start == end:
            # An empty value (`sha256:` and nothing after): ruamel marks it at the next
            # token, so insert right after the key's colon instead.
            colon = _key_colon(text, doc.lines[path], key)
            return colon, colon, " " + render(value, "")
        return start, end, render(value, text[start:end])
    anchor = (
        ("dataset", "version") if "version" in dataset and key != "version" else ("dataset", "path")
    )
    if anchor not in doc.spans:
        raise doc.error(
            doc.lines.get(("dataset",)),
            "dataset.path",
            "needs a plain `path:` value before it can be pinned",
        )
    _, end = doc.spans[anchor]
    after = text[end:].lstrip(" \t")
    if after[:1] in (",", "}"):
        return end, end, f", {key}: {render(value, '')}"
    eol = "\r\n" if "\r\n" in text else "\n"
    line_start = text.rfind("\n", 0, end) + 1
    key_line = text[line_start:]
    indent = key_line[: len(key_line) - len(key_line.lstrip(" "))]
    if anchor == ("dataset", "path") and doc.lines[anchor] != text.count("\n", 0, end) + 1:
        raise doc.error(
            doc.lines[anchor], "dataset.path", "a multi-line path cannot anchor an inserted key"
        )
    stop = text.find("\n", end)
    if stop == -1:
        return len(text), len(text), f"{eol}{indent}{key}: {render(value, '')}"
    if stop > 0 and text[stop - 1] == "\r":
        stop -= 1
    return stop, stop, f"{eol}{indent}{key}: {render(value, '')}"


def _key_colon(text: str, line: int, key: str) -> int:
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    line_text_start = starts[line - 1]
    m = re.compile(rf"{re.escape(key)}\s*:").search(text, line_text_start)
    assert m is not None
    return m.end()


def _verify(new_text: str, doc: YamlDoc, sha256: str, version: str | None) -> None:
    """Parse the result back: only the pinned values may differ."""
    new = parse_yaml(new_text, doc.file).data
    expected = json.loads(json.dumps(doc.data))
    expected["dataset"]["sha256"] = sha256
    if version is not None:
        expected["dataset"]["version"] = version
    got = json.loads(json.dumps(new))
    if got != expected:  # pragma: no cover - a bug in the splice, never the user's input
        raise RuntimeError(
            "pinning would change more than dataset.sha256/version; the config was not written"
        )


def _display(path: Path | None) -> str:
    if path is None:
        return "toolgate.yml"
    return default_display(path)


def _line(path: Path | None, key: tuple[str, ...]) -> int | None:
    if path is None:
        return None
    try:
        return load_yaml(path).line_of(key)
    except ConfigError:
        return None
