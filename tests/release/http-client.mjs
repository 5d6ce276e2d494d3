// The image's server over HTTP, as a team's client reaches it: without the bearer token it is
// refused (401); with it the MCP TypeScript SDK initializes, lists the tools and calls one read.
// Usage: node http-client.mjs URL TOKEN
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token] = process.argv.slice(2);
const fail = (what) => {
  console.error(`FAIL ${what}`);
  process.exit(1);
};
const timer = setTimeout(() => fail("no answer within 60 s"), 60_000);
const anonymous = await fetch(url, {
  method: "POST",
  headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
  body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } } }),
});
if (anonymous.status !== 401) fail(`a request without the token answered ${anonymous.status}`);

const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
const client = new Client({ name: "image-check", version: "1.0.0" });
await client.connect(transport);
if (client.getServerVersion()?.name !== "equinix-mcp") fail(`initialize: ${JSON.stringify(client.getServerVersion())}`);
const { tools } = await client.listTools();
if (!tools.some((t) => t.name === "fabric_list_metros")) fail(`tools/list: ${tools.map((t) => t.name)}`);
const read = await client.callTool({ name: "fabric_list_metros", arguments: { limit: 2 } });
if (read.isError || read.structuredContent?.metros?.length !== 2) fail(`the read: ${JSON.stringify(read)}`);
await client.close();
clearTimeout(timer);
console.log(`ok over HTTP: 401 without the token; initialize, ${tools.length} tools, one read with it`);
