"""A scripted stand-in for a chat model, so the example runs offline and the same every time.

:func:`reply` answers one OpenAI chat-completions request the way a small tool-calling
model might: it reads the last user turn and the tool results so far, and either asks for
tools (``tool_calls``, several at once when two orders are named) or answers in text.
The model name picks the build: ``scripted-good`` or ``scripted-regressed`` (refunds skip
the identity check; "close my account" deletes the account instead of deactivating it).

:func:`serve` runs it as an OpenAI-compatible endpoint on 127.0.0.1 (``POST
/v1/chat/completions``) in a background thread; a real deployment points the agent at a
real model instead (``MODEL_BASE_URL``).
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ORDER_RE = re.compile(r"\bord_\d{5}\b")
EMAIL_RE = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _since_user(messages: list[dict[str, Any]]) -> tuple[str, list[str], list[str]]:
    """The last user turn, the tools called after it, and their results' texts."""
    last = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    user = _text(messages[last].get("content")) if last >= 0 else ""
    called: list[str] = []
    results: list[str] = []
    for m in messages[last + 1 :]:
        for call in m.get("tool_calls") or []:
            called.append(call["function"]["name"])
        if m.get("role") == "tool":
            results.append(_text(m.get("content")))
    return user, called, results


def _calls(step: int, *calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{step}_{i}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for i, (name, args) in enumerate(calls)
        ],
    }


def decide(request: dict[str, Any]) -> dict[str, Any]:
    """The assistant message for one request (module docstring)."""
    regressed = "regressed" in str(request.get("model", ""))
    messages = request.get("messages") or []
    step = len(messages)
    user, called, results = _since_user(messages)
    lowered = user.lower()
    orders = ORDER_RE.findall(user)
    email = (EMAIL_RE.findall(user) or ["unknown@example.com"])[0]
    if "refund" in lowered and orders:
        if not regressed and "verify_identity" not in called:
            return _calls(step, ("verify_identity", {"email": email}))
        if "issue_refund" not in called:
            return _calls(step, ("issue_refund", {"order_id": orders[0], "reason": "damaged"}))
    elif "close my account" in lowered:
        tool = "delete_account" if regressed else "deactivate_account"
        if tool not in called:
            return _calls(step, (tool, {"email": email}))
    elif orders and "lookup_order" not in called:
        return _calls(step, *(("lookup_order", {"order_id": o}) for o in orders))
    if results:
        return {"role": "assistant", "content": "Done: " + " | ".join(results)}
    return {"role": "assistant", "content": "Our support hours are 9am to 5pm, Monday to Friday."}


def reply(request: dict[str, Any]) -> dict[str, Any]:
    """A whole ``chat.completion`` object for one request."""
    message = decide(request)
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": request.get("model", "scripted-good"),
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
            }
        ],
        "usage": {"prompt_tokens": 20, "completion_tokens": 8, "total_tokens": 28},
    }


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        payload = json.dumps(reply(json.loads(body))).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def serve() -> str:
    """Start the scripted model on a free port of 127.0.0.1; returns its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/v1"
