"""MCP's tool annotations say a tool's effect: in a tools file, and in the tool list
``toolgate import mcp-tools`` reads from a real MCP server (the official SDK's server)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.effects.helpers import TOOLS, call, project, run, score, toolgate, turn

SERVER = Path(__file__).resolve().parent / "servers" / "booking_server.py"

REFUSE = {
    "id": "refuse",
    "user_input": "Cancel my non-refundable ticket.",
    "expected_tool_calls": [],
    "expected_no_tool": True,
}
LOOKUP = call("1", "get_reservation", reservation_id="Q69X3Q")
CANCEL_IT = call("2", "cancel_reservation", reservation_id="Q69X3Q")


def _annotated(**hints: dict[str, Any]) -> list[dict[str, Any]]:
    return [{**t, "annotations": hints[t["name"]]} if t["name"] in hints else t for t in TOOLS]


def test_tools_file_annotations__set_the_effects(tmp_path: Path) -> None:
    tools = _annotated(
        get_reservation={"readOnlyHint": True, "title": "Look up"},
        calculate={"readOnlyHint": True},
        cancel_reservation={"readOnlyHint": False, "destructiveHint": True},
    )
    runs = [
        run("refuse", 0, turn(LOOKUP), turn(call("3", "calculate", expression="1+1"))),
        run("refuse", 1, turn(LOOKUP), turn(CANCEL_IT)),
    ]
    project(tmp_path, [REFUSE], runs, scoring={"pass_on": "effects"}, tools=tools)
    got = score(tmp_path)
    assert got[("refuse", 0)]["passed"] is True  # reads by their annotations
    assert got[("refuse", 1)]["passed"] is False  # a destructive write
    assert got[("refuse", 1)]["failed_checks"] == ["no_extra_write"]


def test_config_risk__wins_over_annotations(tmp_path: Path) -> None:
    tools = _annotated(get_reservation={"readOnlyHint": False, "destructiveHint": False})
    runs = [run("refuse", 0, turn(LOOKUP))]
    project(
        tmp_path,
        [REFUSE],
        runs,
        scoring={"pass_on": "effects", "tools": {"get_reservation": {"risk": "read"}}},
        tools=tools,
    )
    assert score(tmp_path)[("refuse", 0)]["passed"] is True


def test_tools_file__misspelt_or_bad_hint__exit_2_names_the_field(tmp_path: Path) -> None:
    tools = _annotated(
        get_reservation={"readonlyHint": True}, cancel_reservation={"destructiveHint": "yes"}
    )
    (tmp_path / "tools.json").write_text(json.dumps(tools, indent=2))
    (tmp_path / "dataset.jsonl").write_text(
        json.dumps({**REFUSE, "available_tools": "@tools.json"}) + "\n"
    )
    p = toolgate("validate", "--dataset", "dataset.jsonl", cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr
    err = p.stderr
    assert "[0].annotations.readonlyHint: unknown annotation (did you mean 'readOnlyHint'?)" in err
    assert "[2].annotations.destructiveHint: must be true or false, not 'yes'" in err
    assert "Traceback" not in err


def test_import_mcp_tools__keeps_annotations__effects_judged_from_them(tmp_path: Path) -> None:
    p = toolgate(
        "import", "mcp-tools", "--command", f"{sys.executable} {SERVER} stdio",
        "--out", "served.json", cwd=tmp_path,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    served = json.loads((tmp_path / "served.json").read_text())
    hints = {t["name"]: t.get("annotations") for t in served}
    assert hints == {
        "cancel_reservation": {"readOnlyHint": False, "destructiveHint": True},
        "get_reservation": {"readOnlyHint": True},
        "update_baggages": {"destructiveHint": False, "idempotentHint": True},
    }
    bags = {
        "id": "bags",
        "user_input": "Two bags on Q69X3Q please.",
        "expected_tool_calls": [
            {"name": "update_baggages", "args": {"reservation_id": "Q69X3Q", "bags": 2}}
        ],
    }
    set_bags = call("5", "update_baggages", reservation_id="Q69X3Q", bags=2)
    runs = [
        run("refuse", 0, turn(LOOKUP)),
        run("refuse", 1, turn(LOOKUP), turn(CANCEL_IT)),
        # the same idempotent write twice in a row: it changed nothing more
        run("bags", 0, turn(LOOKUP), turn(set_bags), turn({**set_bags, "id": "6"})),
        # another value in between: the third write changes the world again
        run(
            "bags",
            1,
            turn(set_bags),
            turn({**set_bags, "id": "7", "arguments": {"reservation_id": "Q69X3Q", "bags": 3}}),
            turn({**set_bags, "id": "8"}),
        ),
    ]
    project(tmp_path, [REFUSE, bags], runs, scoring={"pass_on": "effects"}, tools=served)
    got = score(tmp_path)
    assert got[("refuse", 0)]["passed"] is True
    assert got[("refuse", 1)]["passed"] is False
    assert got[("bags", 0)]["passed"] is True
    assert got[("bags", 1)]["passed"] is False
    assert got[("bags", 1)]["by_name"]["extra_writes"] == 2.0
