// The official MCP TypeScript SDK (pinned by package-lock.json) as a client that declares only
// URL-mode elicitation (MCP 2025-11-25): it proposes a change, confirms it, and when the server
// sends the approval page's link it prints the link for the test (which plays the person in a
// real browser) and accepts, as a client does once it opened the link.
//
//   EQUINIX_MCP_TEST_TOKEN=<bearer> node tests/oauth/url-client.mjs <mcp-url> '<propose arguments JSON>'
//
// stdout, one JSON line each:
//   {"link": URL, "elicitationId": ID}             when the server asks (URL mode)
//   {"result": <confirm structuredContent>, "isError": bool, "completed": [ID, ...]}   at the end
// `completed` lists the notifications/elicitation/complete received. Exit 0 on success; 1 with a
// message on stderr otherwise (including after a 60 s overall timeout).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, ElicitationCompleteNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

console.log = console.info = console.debug = (...args) => console.error(...args);

const fail = (message) => {
  console.error(`url-client.mjs: ${message}`);
  process.exit(1);
};
setTimeout(() => fail('no result within 60 s'), 60_000).unref();

const [url, proposeText] = process.argv.slice(2);
const token = process.env.EQUINIX_MCP_TEST_TOKEN;
if (!url || !proposeText || !token) fail("usage: EQUINIX_MCP_TEST_TOKEN=... url-client.mjs <mcp-url> '<propose JSON>'");
const say = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);

const client = new Client({ name: 'equinix-mcp-url-client', version: '1' }, { capabilities: { elicitation: { url: {} } } });
const completed = [];
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  if (request.params.mode !== 'url') return { action: 'decline' };
  say({ link: request.params.url, elicitationId: request.params.elicitationId });
  return { action: 'accept' };
});
client.setNotificationHandler(ElicitationCompleteNotificationSchema, async (notification) => {
  completed.push(notification.params.elicitationId);
});

try {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  const proposed = await client.callTool({ name: 'fabric_propose_change', arguments: JSON.parse(proposeText) });
  if (proposed.isError) fail(`the propose failed: ${JSON.stringify(proposed.structuredContent ?? proposed.content)}`);
  const confirmToken = proposed.structuredContent.confirm_token;
  const confirmed = await client.callTool(
    { name: 'fabric_confirm_change', arguments: { confirm_token: confirmToken } },
    undefined,
    { timeout: 55_000 },
  );
  // the completion notification may trail the result by a moment
  for (let i = 0; i < 20 && completed.length === 0; i += 1) await new Promise((r) => setTimeout(r, 50));
  say({ result: confirmed.structuredContent, isError: confirmed.isError ?? false, completed });
  await client.close();
  process.exit(0);
} catch (err) {
  fail(String(err?.stack ?? err));
}
