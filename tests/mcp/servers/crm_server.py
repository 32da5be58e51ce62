"""A team's real MCP server, for tests: ``crm_server.py stdio`` or ``crm_server.py http PORT``.

Built with the official SDK's ``MCPServer``. Its tools have side effects on purpose: each
call is appended to the file named by ``CRM_CALL_LOG`` (when set), so a test can tell
which calls reached the real server. ``CRM_VARIANT=v2`` advertises a drifted tool list
(a changed description, a new required argument, a removed and an added tool).
"""

from __future__ import annotations

import json
import os
import sys

from mcp.server.mcpserver import MCPServer

V2 = os.environ.get("CRM_VARIANT") == "v2"
server = MCPServer("crm")


def _log(name: str, args: dict[str, object]) -> None:
    path = os.environ.get("CRM_CALL_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"name": name, "args": args}) + "\n")


if V2:

    @server.tool(description="Look up an order by its id, with its shipping events.")
    def lookup_order(order_id: str, include_events: bool) -> dict[str, object]:
        _log("lookup_order", {"order_id": order_id})
        return {"order_id": order_id, "status": "shipped", "events": []}

    @server.tool(description="Cancel an order that has not shipped yet.")
    def cancel_order(order_id: str) -> str:
        return f"cancelled {order_id}"

else:

    @server.tool(description="Look up an order by its id.")
    def lookup_order(order_id: str) -> dict[str, object]:
        _log("lookup_order", {"order_id": order_id})
        return {"order_id": order_id, "status": "shipped" if order_id.endswith("1") else "lost"}

    @server.tool(description="Refund an order.")
    def issue_refund(order_id: str, amount: float) -> str:
        _log("issue_refund", {"order_id": order_id, "amount": amount})
        if amount > 100:
            raise ValueError("refunds over 100 need a supervisor")
        return f"refunded {amount} on {order_id}"


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
