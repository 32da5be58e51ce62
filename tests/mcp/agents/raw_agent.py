"""A test agent that speaks MCP's JSON-RPC by hand: ``raw_agent.py TRANSPORT``.

It sends the bodies a hostile or broken client sends, byte for byte, which no SDK client
would: TRANSPORT is ``legacy`` (streamable HTTP, the 2025 ``initialize`` handshake),
``modern`` (streamable HTTP, the stateless 2026-07-28 revision: its envelope in every
request's ``_meta`` and headers) or ``stdio`` (the ``TOOLGATE_MCP_COMMAND`` server,
launched as a process). Environment:

* ``RAW_BODIES`` — a JSON array of strings: the bodies (lines, on stdio) sent one by one
  after the handshake, each waiting for its answer (a body holding no request gets none);
* ``RAW_FLOOD`` — ``N`` sends the first body ``N`` times at once, from ``N`` threads,
  then exits at once without waiting (on HTTP only).

Then it calls ``lookup_order`` correctly and prints ``done`` (its final answer); what each
body got back goes to stderr.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from typing import Any

MODERN = "2026-07-28"
LEGACY = "2025-06-18"
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
GOOD = {"name": "lookup_order", "arguments": {"order_id": "ord_10482"}}


class Http:
    def __init__(self, modern: bool) -> None:
        self.url = os.environ["TOOLGATE_MCP_URL"]
        self.modern = modern
        self.headers = {"mcp-protocol-version": MODERN if modern else LEGACY}
        if not modern:
            _, headers, _ = self.post(
                json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "initialize",
                        "params": {
                            "protocolVersion": LEGACY,
                            "capabilities": {},
                            "clientInfo": {"name": "raw", "version": "1"},
                        },
                    }
                ).encode(),
                {},
            )
            session = headers.get("mcp-session-id")
            if session:
                self.headers["mcp-session-id"] = session
            self.post(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')

    def post(self, body: bytes, headers: dict[str, str] | None = None) -> tuple[int, Any, str]:
        sent = {**ACCEPT, **(self.headers if headers is None else headers)}
        request = urllib.request.Request(self.url, data=body, headers=sent, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=60) as r:
                return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, {k.lower(): v for k, v in e.headers.items()}, e.read().decode()

    def call(self, params: dict[str, Any], rid: int) -> str:
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": "tools/call"}
        headers = dict(self.headers)
        if self.modern:
            params = {
                **params,
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": MODERN,
                    "io.modelcontextprotocol/clientCapabilities": {},
                },
            }
            headers |= {"mcp-method": "tools/call", "mcp-name": params["name"]}
        body["params"] = params
        return self.post(json.dumps(body).encode(), headers)[2]


class Stdio:
    def __init__(self) -> None:
        argv = json.loads(os.environ["TOOLGATE_MCP_COMMAND_JSON"])
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": LEGACY,
                        "capabilities": {},
                        "clientInfo": {"name": "raw", "version": "1"},
                    },
                }
            ).encode()
        )
        self.receive()
        self.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')

    def send(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def receive(self) -> str:
        assert self.proc.stdout is not None
        return self.proc.stdout.readline().decode()

    def call(self, params: dict[str, Any], rid: int) -> str:
        """Its answer: the line with its id (answers to earlier bodies may come first)."""
        body = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}
        self.send(json.dumps(body).encode())
        while line := self.receive():
            if json.loads(line).get("id") == rid:
                return line
        return "(no answer)"


def main(transport: str) -> None:
    bodies = [b.encode() for b in json.loads(os.environ.get("RAW_BODIES", "[]"))]
    client: Http | Stdio = Stdio() if transport == "stdio" else Http(transport == "modern")
    flood = int(os.environ.get("RAW_FLOOD", "0"))
    if flood and isinstance(client, Http):
        body = bodies[0]
        for _ in range(flood):
            threading.Thread(target=client.post, args=(body,), daemon=True).start()
        print("flooded")
        sys.stdout.flush()
        os._exit(0)
    for body in bodies:
        if isinstance(client, Stdio):
            client.send(body)
            answer = "(answers read with the last call's)"
        else:
            answer = client.post(body)[2]
        print(f"sent {len(body)} bytes, got: {answer[:300]}", file=sys.stderr)
    print(client.call(GOOD, 99)[:300], file=sys.stderr)
    print("done")


if __name__ == "__main__":
    main(sys.argv[1])
