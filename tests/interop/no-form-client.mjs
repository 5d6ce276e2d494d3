// The official MCP TypeScript SDK (pinned by package-lock.json) as a client that declares no
// elicitation, as Claude Desktop does: it spawns equinix-mcp over stdio, proposes a change and
// confirms it; the server answers approval_pending with the approval page's link. The test plays
// the person (a real browser) and says "approved" on stdin; the client confirms again.
//
//   node tests/interop/no-form-client.mjs <equinix-mcp> '<propose arguments JSON>' [server args...]
//
// The server gets this process's environment. stdout, one JSON line each:
//   {"proposed": <propose structuredContent>}
//   {"first": <confirm structuredContent>}
//   {"result": <second confirm's structuredContent>, "isError": bool}   after the "approved" line
// Exit 0 on success; 1 with a message on stderr otherwise (including after a 90 s overall timeout).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { createInterface } from 'node:readline';

console.log = console.info = console.debug = (...args) => console.error(...args);

const fail = (message) => {
  console.error(`no-form-client.mjs: ${message}`);
  process.exit(1);
};
setTimeout(() => fail('no result within 90 s'), 90_000).unref();

const [binary, proposeText, ...serverArgs] = process.argv.slice(2);
if (!binary || !proposeText) fail("usage: no-form-client.mjs <equinix-mcp> '<propose JSON>' [server args...]");
const say = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

const transport = new StdioClientTransport({
  command: binary,
  args: ['serve', ...serverArgs],
  env: { ...process.env },
  stderr: 'inherit',
});
// no `elicitation` capability at all: this client shows no form and follows no URL request
const client = new Client({ name: 'equinix-mcp-no-form-client', version: '1' }, { capabilities: {} });

try {
  await client.connect(transport);
  const proposal = await client.callTool({ name: 'fabric_propose_change', arguments: JSON.parse(proposeText) });
  if (proposal.isError) fail(`the proposal failed: ${JSON.stringify(proposal)}`);
  say({ proposed: proposal.structuredContent });
  const token = proposal.structuredContent.confirm_token;
  const confirm = () => client.callTool({ name: 'fabric_confirm_change', arguments: { confirm_token: token } });
  const first = await confirm();
  say({ first: first.structuredContent, isError: first.isError === true });
  const heard = await lines.next();
  if (heard.done || heard.value.trim() !== 'approved') fail(`expected "approved" on stdin, got ${JSON.stringify(heard)}`);
  const second = await confirm();
  say({ result: second.structuredContent, isError: second.isError === true });
  await client.close();
  process.exit(0);
} catch (error) {
  fail(error?.stack ?? String(error));
}
