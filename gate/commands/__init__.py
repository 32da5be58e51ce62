"""One module per subcommand: ``add_arguments(parser)`` and ``run(args) -> int``."""

from __future__ import annotations

import argparse
from pathlib import Path

DEFAULT_CONFIG = "toolgate.yml"


def add_config_argument(
    parser: argparse.ArgumentParser, default: str | None = DEFAULT_CONFIG
) -> None:
    """``--config FILE``, as every command that reads the config takes it."""
    parser.add_argument(
        "--config", default=default, metavar="FILE", help="the config file (default: toolgate.yml)"
    )


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
