// A real OAuth 2.1 authorization server (oidc-provider, pinned by package-lock.json) on loopback,
// for the Rust end-to-end tests of equinix-mcp's OAuth resource-server mode. It issues JWT access
// tokens for the client-credentials grant with RFC 8707 resource indicators, and adds test-only
// routes to forge tokens, publish a key later and count requests.
//
//   node tests/oauth/provider.mjs [--port N] [--keys FILE] [--until-signalled]
//                                         (N = 0, the default, picks a free port)
//   node tests/oauth/provider.mjs --make-keys FILE            (writes FILE and exits)
//
// Once listening it prints exactly one line to stdout,
//   {"issuer":"http://127.0.0.1:PORT","token_endpoint":"...","jwks_uri":"..."}
// and nothing else (oidc-provider's notices go to stderr). It exits on SIGTERM, SIGINT, and when
// stdin closes, so a test that dies never leaves it behind: start it with a piped stdin (with
// stdin at /dev/null it exits at once). With --until-signalled (scripts/trial, which starts it in
// the background) only a signal stops it.
//
// Signing keys: rsa-1 (RS256), ec-1 (ES256), ed-1 (EdDSA, Ed25519), all three published at /jwks
// and used by the provider; ed-2 (EdDSA) is an "outsider" that only /__test/sign uses until
// /__test/publish adds it to /jwks. They are read from --keys FILE (private JWKs, as --make-keys
// writes them), or made at start without it. Making the RSA key is a search for two random
// primes: 0.06 s typically on Node 24, 0.3 s on Node 20, with a long tail, and many times that on
// a machine as busy as the test suite makes it; the tests make the keys once per run.
//
// Clients (client_secret_basic or client_secret_post, secret "secret-" + id, grant
// client_credentials only): full-rs256, full-es256, full-eddsa (all scopes, TTL 600 s, tokens
// signed RS256/ES256/EdDSA), reader (fabric:read only, ES256), short (all scopes, ES256, TTL 2 s),
// mcp-sdk (all scopes, ES256, TTL 600 s), trial-agent (all scopes, ES256, TTL 12 h: the agent of
// scripts/trial, whose token lasts the trial).
//
// The approval page signs people in as the client approval-page (a native, public client: PKCE,
// no secret; any loopback port of http://127.0.0.1/approve/callback, RFC 8252 7.3). The login
// page at /interaction/UID takes any login name as the account id (its `sub`) with the password
// "pw-" + the login; the ID token carries `groups` from GROUPS below (none for other logins) and
// `oid`, the account id again (none for a login beginning `no-oid-`). Consent is given at once.
// The client approval-page-pairwise is the same page under pairwise subjects: its ID tokens'
// `sub` is a hash of the client and the login (another `sub` than any access token's), their
// `oid` the login. Client-credentials access tokens carry `oid` = the client id.
//
// A token request with resource=<absolute http(s) URL> gets a JWT (typ at+jwt) whose aud is that
// URL and whose scope is the requested scopes (a scope the client is not allowed is refused with
// invalid_scope). Without resource it gets an opaque token (no JWT; useless to equinix-mcp).
//
// Test-only routes:
//   POST /__test/sign     {"kid","header"?,"payload"} -> {"jwt"}: header {alg: key's, kid, typ:
//                         "at+jwt"} overlaid with `header` (a null value removes the field);
//                         alg "none" signs with an empty signature, "HS256" with HMAC-SHA256 keyed
//                         by the JSON text of the key's public JWK as /jwks serves it, any other
//                         alg with the key's own algorithm. A string payload is used verbatim.
//   POST /__test/publish  {"kid":"ed-2"} -> {}: adds the key to /jwks.
//   POST /__test/withdraw {"kid":"ed-2"} -> {}: takes it out again.
//   GET  /__test/stats    -> {"jwks_requests": N, "tokens_issued": M, "sign_ins": K}
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';

import Provider, { errors } from 'oidc-provider';

// oidc-provider prints notices with console.info; stdout carries only the one JSON line.
console.log = console.info = console.debug = (...args) => console.error(...args);

const flag = (name) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
};

const port = (() => {
  const value = flag('--port') ?? '0';
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) {
    console.error(`provider.mjs: bad --port ${value}`);
    process.exit(2);
  }
  return n;
})();

const SCOPES = ['fabric:read', 'fabric:propose', 'fabric:confirm'];
const ALL = SCOPES.join(' ');

// The private JWKs of every kid, with kid, alg and use.
function makeJwks() {
  const made = [
    ['rsa-1', 'RS256', 'rsa', { modulusLength: 2048 }],
    ['ec-1', 'ES256', 'ec', { namedCurve: 'P-256' }],
    ['ed-1', 'EdDSA', 'ed25519'],
    ['ed-2', 'EdDSA', 'ed25519'],
  ];
  return made.map(([kid, alg, type, options]) => ({
    ...crypto.generateKeyPairSync(type, options).privateKey.export({ format: 'jwk' }),
    kid,
    alg,
    use: 'sig',
  }));
}

const makeKeys = flag('--make-keys');
if (makeKeys !== undefined) {
  // written whole or not at all: a reader never sees half a file
  fs.writeFileSync(`${makeKeys}.tmp`, JSON.stringify(makeJwks()), { mode: 0o600 });
  fs.renameSync(`${makeKeys}.tmp`, makeKeys);
  process.exit(0);
}
const keysFile = flag('--keys');

// kid -> { alg, privateKey (KeyObject), privateJwk, publicJwk }
const keys = new Map();
for (const privateJwk of keysFile === undefined ? makeJwks() : JSON.parse(fs.readFileSync(keysFile, 'utf8'))) {
  const { kid, alg, use } = privateJwk;
  const privateKey = crypto.createPrivateKey({ key: privateJwk, format: 'jwk' });
  const publicJwk = { ...crypto.createPublicKey(privateKey).export({ format: 'jwk' }), kid, alg, use };
  keys.set(kid, { alg, privateKey, privateJwk, publicJwk });
}

const published = new Set(['rsa-1', 'ec-1', 'ed-1']);
const providerKids = ['rsa-1', 'ec-1', 'ed-1'];

// client_id -> allowed scope, access token signing alg, access token TTL
const clients = {
  'full-rs256': { scope: ALL, alg: 'RS256', ttl: 600 },
  'full-es256': { scope: ALL, alg: 'ES256', ttl: 600 },
  'full-eddsa': { scope: ALL, alg: 'EdDSA', ttl: 600 },
  reader: { scope: 'fabric:read', alg: 'ES256', ttl: 600 },
  short: { scope: ALL, alg: 'ES256', ttl: 2 },
  'mcp-sdk': { scope: ALL, alg: 'ES256', ttl: 600 },
  'trial-agent': { scope: ALL, alg: 'ES256', ttl: 12 * 3600 },
};

const stats = { jwks_requests: 0, tokens_issued: 0, sign_ins: 0 };

// login -> groups in the ID token
const GROUPS = {
  alice: ['netops'],
  bob: ['netops'],
  carol: ['finance'],
  sam: ['security'],
  sasha: ['security'],
  'full-es256': ['netops'],
  'trial-agent': ['netops'],
  '<img src=x onerror="window.__hostile=1">': ['<b onmouseover="window.__hostile=2">netops</b>'],
};

const escapeHtml = (text) =>
  String(text).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);

function loginPage(uid, error) {
  return `<!doctype html><html><head><meta charset="utf-8"><title>Sign in</title></head><body>
<h1>Sign in to the test identity provider</h1>${error ? `<p id="error">${escapeHtml(error)}</p>` : ''}
<form method="post" action="/interaction/${uid}/login">
<label>Login <input id="login" name="login" autocomplete="off"></label>
<label>Password <input id="password" name="password" type="password"></label>
<button id="submit" type="submit">Sign in</button></form></body></html>`;
}

async function readForm(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

const b64url = (data) => Buffer.from(data).toString('base64url');

function signJws(kid, headerOverlay, payload) {
  const key = keys.get(kid);
  if (!key) throw new Error(`unknown kid ${JSON.stringify(kid)}`);
  const header = { alg: key.alg, kid, typ: 'at+jwt', ...headerOverlay };
  for (const [name, value] of Object.entries(header)) {
    if (value === null) delete header[name];
  }
  const body = typeof payload === 'string' ? payload : JSON.stringify(payload ?? {});
  const input = `${b64url(JSON.stringify(header))}.${b64url(body)}`;
  let signature;
  if (header.alg === 'none') {
    signature = Buffer.alloc(0);
  } else if (header.alg === 'HS256' && key.alg !== 'HS256') {
    signature = crypto.createHmac('sha256', JSON.stringify(key.publicJwk)).update(input).digest();
  } else if (key.alg === 'RS256') {
    signature = crypto.sign('sha256', Buffer.from(input), key.privateKey);
  } else if (key.alg === 'ES256') {
    signature = crypto.sign('sha256', Buffer.from(input), { key: key.privateKey, dsaEncoding: 'ieee-p1363' });
  } else {
    signature = crypto.sign(null, Buffer.from(input), key.privateKey);
  }
  return `${input}.${b64url(signature)}`;
}

async function readJson(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : {};
}

const server = http.createServer();
server.listen(port, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;

  const provider = new Provider(issuer, {
    jwks: { keys: providerKids.map((kid) => keys.get(kid).privateJwk) },
    // `groups` releases the groups claim, as Okta, Dex and Authelia do: a sign-in that asks only
    // for `openid` gets no groups
    scopes: [...SCOPES, 'groups', 'profile', 'email'],
    clientAuthMethods: ['client_secret_basic', 'client_secret_post', 'none'],
    clients: [
      ...Object.entries(clients).map(([clientId, { scope }]) => ({
        client_id: clientId,
        client_secret: `secret-${clientId}`,
        token_endpoint_auth_method: 'client_secret_basic',
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        scope,
      })),
      // the same page under a provider that gives each client its own `sub` for one person (as
      // Entra ID does): the stable id is `oid`, which every token of this provider carries
      {
        client_id: 'approval-page-pairwise',
        application_type: 'native',
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code'],
        response_types: ['code'],
        redirect_uris: ['http://127.0.0.1/approve/callback'],
        id_token_signed_response_alg: 'ES256',
        subject_type: 'pairwise',
      },
      {
        client_id: 'approval-page',
        application_type: 'native',
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code'],
        response_types: ['code'],
        // localhost too: WebAuthn takes a host name, never an IP address (the passkey tests)
        redirect_uris: ['http://127.0.0.1/approve/callback', 'http://localhost/approve/callback'],
        id_token_signed_response_alg: 'ES256',
      },
    ],
    // `profile` and `email` release a person's name and address, which the page shows (never the
    // clients': those are no people)
    claims: { openid: ['sub', 'oid'], groups: ['groups'], profile: ['name'], email: ['email'] },
    conformIdTokenClaims: false,
    subjectTypes: ['public', 'pairwise'],
    pairwiseIdentifier: async (ctx, accountId, client) =>
      crypto.createHash('sha256').update(`${client.clientId}/${accountId}`).digest('base64url'),
    async findAccount(ctx, id) {
      // a login beginning `no-oid-` gets no `oid`: a person the provider names by `sub` alone
      const oid = id.startsWith('no-oid-') ? undefined : id;
      // a person's name: their login, capitalised ("alice" is "Alice Example")
      const name = `${id.charAt(0).toUpperCase()}${id.slice(1)} Example`;
      const email = `${id}@example.com`;
      return { accountId: id, claims: async () => ({ sub: id, oid, groups: GROUPS[id] ?? [], name, email }) };
    },
    // a client's access tokens carry its `oid` too (its client id), as the people's ID tokens do
    extraTokenClaims: async (ctx, token) => (token.kind === 'ClientCredentials' ? { oid: token.clientId } : undefined),
    interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
    routes: { jwks: '/jwks' },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo(ctx, resourceIndicator, client) {
          const url = URL.parse(resourceIndicator);
          if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
            throw new errors.InvalidTarget('resource must be an http(s) URL');
          }
          const { alg, ttl } = clients[client.clientId];
          return {
            scope: ALL,
            audience: resourceIndicator,
            accessTokenFormat: 'jwt',
            accessTokenTTL: ttl,
            jwt: { sign: { alg } },
          };
        },
      },
    },
    ttl: {
      ClientCredentials: (ctx, token) => token.resourceServer?.accessTokenTTL ?? 600,
    },
  });

  provider.on('grant.success', () => {
    stats.tokens_issued += 1;
  });
  provider.on('server_error', (ctx, err) => console.error('provider server_error:', err));

  provider.use(async (ctx, next) => {
    const { method, path } = ctx;
    if (path === '/jwks' && method === 'GET') {
      stats.jwks_requests += 1;
      ctx.type = 'application/jwk-set+json';
      ctx.body = { keys: [...published].map((kid) => keys.get(kid).publicJwk) };
      return;
    }
    if (path.startsWith('/interaction/')) {
      const details = await provider.interactionDetails(ctx.req, ctx.res);
      const { uid, prompt, params } = details;
      if (method === 'POST' && path === `/interaction/${uid}/login`) {
        const form = await readForm(ctx.req);
        const login = form.get('login') ?? '';
        if (!login || form.get('password') !== `pw-${login}`) {
          ctx.type = 'html';
          ctx.body = loginPage(uid, 'wrong login or password');
          return;
        }
        stats.sign_ins += 1;
        const to = await provider.interactionResult(ctx.req, ctx.res, { login: { accountId: login } }, { mergeWithLastSubmission: false });
        ctx.redirect(to);
        return;
      }
      if (method === 'GET' && prompt.name === 'login') {
        ctx.type = 'html';
        ctx.body = loginPage(uid);
        return;
      }
      if (method === 'GET' && prompt.name === 'consent') {
        const grant = details.grantId
          ? await provider.Grant.find(details.grantId)
          : new provider.Grant({ accountId: details.session.accountId, clientId: params.client_id });
        const missing = prompt.details;
        if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
        if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
        const grantId = await grant.save();
        const to = await provider.interactionResult(ctx.req, ctx.res, { consent: { grantId } }, { mergeWithLastSubmission: true });
        ctx.redirect(to);
        return;
      }
      ctx.status = 400;
      ctx.body = { error: `no interaction for ${method} ${path} (${prompt.name})` };
      return;
    }
    if (path.startsWith('/__test/')) {
      try {
        if (path === '/__test/sign' && method === 'POST') {
          const { kid, header, payload } = await readJson(ctx.req);
          ctx.body = { jwt: signJws(kid, header, payload) };
        } else if (path === '/__test/publish' && method === 'POST') {
          const { kid } = await readJson(ctx.req);
          if (!keys.has(kid)) throw new Error(`unknown kid ${JSON.stringify(kid)}`);
          published.add(kid);
          ctx.body = {};
        } else if (path === '/__test/withdraw' && method === 'POST') {
          const { kid } = await readJson(ctx.req);
          published.delete(kid);
          ctx.body = {};
        } else if (path === '/__test/stats' && method === 'GET') {
          ctx.body = { ...stats };
        } else {
          ctx.status = 404;
          ctx.body = { error: 'no such test route' };
        }
      } catch (err) {
        ctx.status = 400;
        ctx.body = { error: String(err?.message ?? err) };
      }
      return;
    }
    await next();
  });

  server.on('request', provider.callback());

  process.stdout.write(`${JSON.stringify({
    issuer,
    token_endpoint: provider.urlFor('token'),
    jwks_uri: provider.urlFor('jwks'),
  })}\n`);
});

server.on('error', (err) => {
  console.error('provider.mjs:', err.message);
  process.exit(1);
});

const quit = () => process.exit(0);
process.on('SIGTERM', quit);
process.on('SIGINT', quit);
if (!process.argv.includes('--until-signalled')) {
  process.stdin.on('end', quit);
  process.stdin.on('close', quit);
  process.stdin.resume();
}
