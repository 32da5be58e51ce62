"""``python -m gate.results > gate/schemas/results.schema.json``: the schema, generated."""

import sys

from gate import jsonio
from gate.results.schema import json_schema

sys.stdout.write(jsonio.dumps(json_schema(), indent=True).decode())
