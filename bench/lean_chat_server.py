"""A lean chat-completions server for ``bench/runner_bench.py``: the least work per request.

The runner benchmark measures what the runner adds on top of the agent's latency; the
server's own CPU shares the machine's two cores with the runner, so it should cost as
little as possible. This one is plain sockets and one thread per keep-alive connection:
it reads a request (request line, headers, ``Content-Length`` body), decodes the JSON
body, and answers ``POST …/chat/completions`` exactly ``latency`` seconds after the
request arrived — counted from the kernel's receive timestamp (``SO_TIMESTAMPNS``), so the
time this process takes to wake up is not added to the agent's latency — with a
``lookup_order`` tool call when the conversation has no tool message yet, else with a
final answer. Other paths get 404. It prints its base URL on
stdout and runs until its stdin closes::

    python bench/lean_chat_server.py 0.05
"""

from __future__ import annotations

import gc
import json
import socket
import struct
import sys
import threading
import time
from pathlib import Path

# The payloads are built once, with the helpers the scripted test server uses.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.servers.openai_server import chat_completion, tool_call

TOOL_CALL = json.dumps(
    chat_completion(
        tool_calls=[tool_call("lookup_order", {"order_id": "ord_1"}, id="call_1")], model="bench"
    )
).encode()
FINAL = json.dumps(chat_completion(content="done", model="bench")).encode()
_SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)  # Linux's value; Python 3.11 lacks the name
_ANC = socket.CMSG_SPACE(16)  # room for one struct timespec


def _respond(status: str, body: bytes) -> bytes:
    return (
        f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body


def _recv(conn: socket.socket) -> tuple[bytes, float]:
    """One chunk, and when the kernel received it (``time.time()`` clock): the latency is
    counted from there, so this server's own wake-up delay is not charged to the client."""
    data, ancdata, _flags, _addr = conn.recvmsg(65536, _ANC)
    for level, kind, raw in ancdata:
        if level == socket.SOL_SOCKET and kind == _SO_TIMESTAMPNS and len(raw) >= 16:
            sec, nsec = struct.unpack("qq", raw[:16])
            return data, sec + nsec / 1e9
    return data, time.time()


def serve(conn: socket.socket, latency: float) -> None:
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    conn.setsockopt(socket.SOL_SOCKET, _SO_TIMESTAMPNS, 1)
    buf = b""
    with conn:
        while True:
            arrived = time.time()  # a request already buffered arrived no later than now
            while b"\r\n\r\n" not in buf:
                chunk, arrived = _recv(conn)
                if not chunk:
                    return
                buf += chunk
            head, _, buf = buf.partition(b"\r\n\r\n")
            lines = head.split(b"\r\n")
            length = 0
            for line in lines[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            while len(buf) < length:
                chunk, arrived = _recv(conn)
                if not chunk:
                    return
                buf += chunk
            body, buf = buf[:length], buf[length:]
            parts = lines[0].split()
            if len(parts) < 2 or not parts[1].endswith(b"/chat/completions"):
                conn.sendall(_respond("404 Not Found", b'{"error": {"message": "not found"}}'))
                continue
            request = json.loads(body)
            answered = any(m.get("role") == "tool" for m in request.get("messages", []))
            payload = _respond("200 OK", FINAL if answered else TOOL_CALL)
            left = arrived + latency - time.time()
            if left > 0:
                time.sleep(left)
            conn.sendall(payload)


def main() -> None:
    latency = float(sys.argv[1])
    gc.disable()  # nothing cyclic is kept; a collection would pause every connection
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(256)
    print(f"http://127.0.0.1:{sock.getsockname()[1]}/v1", flush=True)

    def accept() -> None:
        while True:
            conn, _ = sock.accept()
            threading.Thread(target=serve, args=(conn, latency), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    sys.stdin.read()  # until the benchmark closes our stdin


if __name__ == "__main__":
    main()
