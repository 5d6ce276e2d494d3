// The official MCP TypeScript SDK (pinned by package-lock.json) signing in to equinix-mcp's HTTP
// transport the way an MCP client does: the SDK's own ClientCredentialsProvider, driven by the
// transport's 401 handling (WWW-Authenticate resource_metadata -> RFC 9728 protected resource
// metadata -> authorization server metadata -> client_credentials token request with the
// metadata's `resource` -> retry with the Bearer token).
//
//   node tests/oauth/mcp-client.mjs <mcp-url> <client-id> <client-secret> [tool-name]
//       [--scope "<scopes>"] [--expected-issuer <issuer-url>]
//
// --scope is the ClientCredentialsProvider `scope` option. It is the only scope the SDK sends in a
// client_credentials token request (the WWW-Authenticate scope and the metadata's
// scopes_supported are not used for this grant); without it the request has no scope parameter.
// --expected-issuer is the provider's `expectedIssuer` option: the SDK then refuses to send the
// credentials to any other authorization server (without it the SDK warns on stderr).
//
// It lists the tools, calls [tool-name] (default fabric_list_ports) with {} and prints one JSON
// line to stdout:
//   {"tools":[...],"call":{"isError":bool,"text":"<first text content, at most 2000 chars>"},
//    "requests":[{"method","url","status","auth"?,"form"?}, ...]}
// `requests` is every HTTP request the SDK made, in order; `auth` is the Authorization scheme
// only ("Bearer"/"Basic"), `form` the token request's form fields with client_secret and
// client_assertion redacted. Tokens and secrets are never printed. Exit 0 on success; 1 with a
// message on stderr otherwise (including after a 10 s overall timeout).
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

// stdout carries only the result line.
console.log = console.info = console.debug = (...args) => console.error(...args);

const TIMEOUT_MS = 10_000;
const REDACTED_FIELDS = new Set(['client_secret', 'client_assertion']);

function fail(message) {
  console.error(`mcp-client.mjs: ${message}`);
  process.exit(1);
}

function parseArgs(argv) {
  const positional = [];
  const options = {};
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    const m = /^--(scope|expected-issuer)(?:=(.*))?$/s.exec(arg);
    if (m) {
      const value = m[2] ?? argv[(i += 1)];
      if (value === undefined) fail(`${arg} needs a value`);
      options[m[1]] = value;
    } else if (arg.startsWith('--')) {
      fail(`unknown option ${arg}`);
    } else {
      positional.push(arg);
    }
  }
  if (positional.length < 3 || positional.length > 4) {
    fail('usage: mcp-client.mjs <mcp-url> <client-id> <client-secret> [tool-name] [--scope S] [--expected-issuer URL]');
  }
  const [url, clientId, clientSecret, toolName = 'fabric_list_ports'] = positional;
  return { url, clientId, clientSecret, toolName, ...options };
}

const args = parseArgs(process.argv.slice(2));
let serverUrl;
try {
  serverUrl = new URL(args.url);
} catch {
  fail(`not a URL: ${args.url}`);
}

const timer = setTimeout(() => fail(`timed out after ${TIMEOUT_MS / 1000} s`), TIMEOUT_MS);

const requests = [];

function describeBody(body) {
  if (!(body instanceof URLSearchParams)) return undefined;
  const form = {};
  for (const [name, value] of body) {
    form[name] = REDACTED_FIELDS.has(name) ? '<redacted>' : value;
  }
  return form;
}

// Every request the transport and the auth flow make goes through here (the SDK passes the
// transport's `fetch` option on to its OAuth discovery and token requests).
async function recordingFetch(input, init = {}) {
  const method = init.method ?? (input instanceof Request ? input.method : 'GET');
  const url = input instanceof Request ? input.url : String(input);
  const entry = { method, url, status: null };
  const authorization = new Headers(init.headers ?? (input instanceof Request ? input.headers : undefined)).get('authorization');
  if (authorization) entry.auth = authorization.split(' ')[0];
  const form = describeBody(init.body);
  if (form) entry.form = form;
  requests.push(entry);
  try {
    const response = await fetch(input, init);
    entry.status = response.status;
    return response;
  } catch (err) {
    entry.error = String(err?.cause?.code ?? err?.cause?.message ?? err?.message ?? err);
    throw err;
  }
}

const authProvider = new ClientCredentialsProvider({
  clientId: args.clientId,
  clientSecret: args.clientSecret,
  ...(args.scope !== undefined ? { scope: args.scope } : {}),
  ...(args['expected-issuer'] !== undefined ? { expectedIssuer: args['expected-issuer'] } : {}),
});

const newTransport = () => new StreamableHTTPClientTransport(serverUrl, { authProvider, fetch: recordingFetch });

function describeError(err) {
  let text = String(err?.stack ?? err);
  if (err?.cause) text += `\ncause: ${err.cause?.stack ?? err.cause}`;
  // Belt and braces: never echo a credential the SDK might have put in a message.
  return text.split(args.clientSecret).join('<redacted>');
}

async function main() {
  const client = new Client({ name: 'equinix-mcp-oauth-test', version: '1.0.0' }, { capabilities: {} });
  try {
    await client.connect(newTransport());
  } catch (err) {
    if (!(err instanceof UnauthorizedError)) throw err;
    // Interactive SDK flows finish with transport.finishAuth(code) and a fresh transport; for
    // client credentials the token is already saved in authProvider, so reconnect once.
    console.error('mcp-client.mjs: connect raised UnauthorizedError; reconnecting once');
    await client.connect(newTransport());
  }

  const { tools } = await client.listTools();
  const result = await client.callTool({ name: args.toolName, arguments: {} });
  const first = (result.content ?? []).find((c) => c.type === 'text');
  const out = {
    tools: tools.map((t) => t.name),
    call: { isError: result.isError === true, text: first ? first.text.slice(0, 2000) : null },
    requests,
  };
  await client.close().catch(() => {});
  clearTimeout(timer);
  process.stdout.write(`${JSON.stringify(out)}\n`, () => process.exit(0));
}

main().catch((err) => {
  console.error(`mcp-client.mjs: requests so far: ${JSON.stringify(requests)}`);
  fail(describeError(err));
});
