"""``python -m gate`` is the ``toolgate`` command."""

from gate.cli import main

raise SystemExit(main())
