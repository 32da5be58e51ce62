"""A ``command``-protocol agent that sends what a script says, byte for byte.

``SCRIPT`` names a JSON file: ``{"replies": [...]}``. For every start (and every user
turn of a conversation) the agent sends the replies in order, each as one line:

* an object is sent with the running case-sample's ``case_id`` and ``sample`` added
  (unless it names them itself); after a ``tool_calls`` reply it reads the results;
* a string is sent as it is (its raw text: numbers too large for JSON libraries, lines
  nested deeper than they parse);
* ``{"read": true}`` reads one message from stdin without sending anything;
* ``{"sleep": s}`` waits ``s`` seconds.

A ``final`` ends the turn; in a conversation the next user turn starts the replies again.
"""

from __future__ import annotations

import json
import os
import sys
import time

with open(os.environ["SCRIPT"], encoding="utf-8") as fh:
    REPLIES = json.load(fh)["replies"]


def read() -> dict:
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    return json.loads(line)


def main() -> None:
    msg = read()
    ids: dict[str, object] = {}
    while True:
        if msg.get("type") == "start":
            ids = {"case_id": msg["case_id"], "sample": msg["sample"]}
        for reply in REPLIES:
            if isinstance(reply, str):
                sys.stdout.write(reply.rstrip("\n") + "\n")
                sys.stdout.flush()
                continue
            if reply.get("read"):
                read()
                continue
            if "sleep" in reply:
                time.sleep(reply["sleep"])
                continue
            sys.stdout.write(json.dumps({**ids, **reply}) + "\n")
            sys.stdout.flush()
            if reply.get("type") == "tool_calls":
                read()
        msg = read()


if __name__ == "__main__":
    main()
