"""A minimal ToolGate agent for the command adapter (JSON Lines on stdin/stdout).

Per case: call the first tool once with {"query": <the user's message>}, then answer with
what it returned; with no tools, echo the message. See docs/agent-protocol.md.
"""

import json
import sys


ids = {}  # the case-sample being answered: every reply names it


def send(message):
    print(json.dumps({**message, **ids}), flush=True)  # one JSON object per line, flushed


for line in sys.stdin:  # one message per line; EOF means ToolGate is done
    msg = json.loads(line)
    if msg["type"] == "start":
        ids = {"case_id": msg["case_id"], "sample": msg["sample"]}
        text = msg["messages"][-1]["content"]
        if not msg["tools"]:
            send({"type": "final", "content": text})
            continue
        name = msg["tools"][0]["function"]["name"]
        call = {"id": "call_1", "name": name, "arguments": {"query": text}}
        send({"type": "tool_calls", "calls": [call], "usage": {"prompt_tokens": len(text)}})
    elif msg["type"] == "tool_results":
        result = msg["results"][0]
        prefix = "the tool failed: " if result["is_error"] else "the tool said: "
        send({"type": "final", "content": prefix + json.dumps(result["content"])})
