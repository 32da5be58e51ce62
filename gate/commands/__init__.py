"""One module per subcommand: ``add_arguments(parser)`` and ``run(args) -> int``."""

from __future__ import annotations

from pathlib import Path


def require_config(path: Path) -> None:
    """Refuse a config file that is not there, with the one hint every command gives."""
    if path.exists():
        return
    from gate.dataset import default_display
    from gate.errors import UsageError

    raise UsageError(
        f"no config file {default_display(path)}",
        hint="Pass --config FILE, or create one with `toolgate init`.",
    )
