"""An MCP server whose tools say their effect in MCP's tool annotations, for the effects
tests: ``booking_server.py stdio``. Built with the official SDK's ``MCPServer``."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("booking")


@server.tool(
    description="Look up a reservation.",
    annotations=ToolAnnotations(readOnlyHint=True),
)
def get_reservation(reservation_id: str) -> dict[str, str]:
    return {"reservation_id": reservation_id, "status": "confirmed"}


@server.tool(
    description="Cancel a reservation: refunds it and frees the seats.",
    annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True),
)
def cancel_reservation(reservation_id: str) -> str:
    return f"cancelled {reservation_id}"


@server.tool(
    description="Set the number of checked bags of a reservation.",
    annotations=ToolAnnotations(destructiveHint=False, idempotentHint=True),
)
def update_baggages(reservation_id: str, bags: int) -> str:
    return f"{reservation_id}: {bags} bags"


if __name__ == "__main__":
    server.run("stdio")
