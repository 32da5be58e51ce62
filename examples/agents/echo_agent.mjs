// A minimal ToolGate agent in Node (command adapter, JSON Lines on stdin/stdout).
//
// Run by ToolGate as a long-lived worker: `agent: {kind: command, command: [node, echo_agent.mjs]}`.
// For each case it calls the first tool once with {"query": <the user's message>} and
// answers with what the tool returned; with no tools it echoes the message.
import { createInterface } from "node:readline";

let ids = {}; // the case-sample being answered: every reply names it
const send = (message) => process.stdout.write(JSON.stringify({ ...message, ...ids }) + "\n");

// One message per line; the stream ends when ToolGate is done.
for await (const line of createInterface({ input: process.stdin })) {
  const msg = JSON.parse(line);
  if (msg.type === "start") {
    ids = { case_id: msg.case_id, sample: msg.sample };
    const userText = msg.messages.at(-1).content;
    if (msg.tools.length === 0) {
      send({ type: "final", content: userText });
      continue;
    }
    const name = msg.tools[0].function.name;
    send({ type: "tool_calls", usage: { prompt_tokens: userText.length },
           calls: [{ id: "call_1", name, arguments: { query: userText } }] });
  } else if (msg.type === "tool_results") {
    const result = msg.results[0];
    const prefix = result.is_error ? "the tool failed: " : "the tool said: ";
    send({ type: "final", content: prefix + JSON.stringify(result.content) });
  }
}
