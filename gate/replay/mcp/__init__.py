"""``agent.kind: mcp``: ToolGate is the MCP server of the agent under test.

* :mod:`.agent` — the adapter: one agent process per case-sample, with
  ``TOOLGATE_MCP_URL``, ``TOOLGATE_MCP_COMMAND`` and ``TOOLGATE_CASE``;
* :mod:`.endpoint` — one case-sample's MCP server: its tools, answered from the frozen
  responses, every call recorded at the tool boundary, overlapping calls batched;
* :mod:`.host` — the HTTP server on 127.0.0.1 hosting every endpoint at a path token;
* :mod:`.bridge` — the stdio transport (``TOOLGATE_MCP_COMMAND``), relaying to the endpoint;
* :mod:`.content` — frozen values ↔ MCP tool results;
* :mod:`.upstream` — a client of the team's real MCP servers (record mode, tool lists).
"""
