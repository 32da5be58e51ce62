// A test agent on the official MCP TypeScript SDK: `node agent.mjs http|stdio SCENARIO`.
// It connects to ToolGate's MCP server (TOOLGATE_MCP_URL, or launches
// TOOLGATE_MCP_COMMAND_JSON over stdio), calls the case's tools and prints its answer.
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [transportName, scenario] = process.argv.slice(2);
const kase = JSON.parse(readFileSync(process.env.TOOLGATE_CASE, "utf8"));
const order = kase.user_input.split(" ").at(-1).replace("?", "");

const transport =
  transportName === "stdio"
    ? (() => {
        const [command, ...args] = JSON.parse(process.env.TOOLGATE_MCP_COMMAND_JSON);
        return new StdioClientTransport({ command, args });
      })()
    : new StreamableHTTPClientTransport(new URL(process.env.TOOLGATE_MCP_URL));

const client = new Client({ name: "node-test-agent", version: "1.0.0" });
await client.connect(transport);
const text = (r) => (r.isError ? "error: " : "") + r.content[0].text;

const { tools } = await client.listTools();
if (scenario === "parallel") {
  const [a, b] = await Promise.all([
    client.callTool({ name: "lookup_order", arguments: { order_id: order } }),
    client.callTool({ name: "issue_refund", arguments: { order_id: order, amount: 5 } }),
  ]);
  console.log(`${text(a)} / ${text(b)}`);
} else {
  const result = await client.callTool({ name: tools[0].name, arguments: { order_id: order } });
  console.log(`order ${order}: ${text(result)}`);
}
await client.close();
