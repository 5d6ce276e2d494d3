// Interoperability test: an independent MCP client (the official TypeScript SDK) spawns
// equinix-mcp on its simulator, lists tools, calls a read-only tool, and runs propose -> confirm
// with an elicitation handler that accepts. Usage: node client.mjs [path/to/equinix-mcp]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const binary = process.argv[2] ?? new URL("../../target/debug/equinix-mcp", import.meta.url).pathname;
const scratch = mkdtempSync(join(tmpdir(), "equinix-mcp-interop-"));
let passed = 0;
let failed = 0;
const check = (name, ok, detail = "") => {
  if (ok) passed++;
  else failed++;
  console.log(`${ok ? "ok  " : "FAIL"} ${name}${ok ? "" : ` ${detail}`}`);
};

const transport = new StdioClientTransport({
  command: binary,
  args: ["serve", "--fabric-sim", "--toolsets", "all,mutate", "--audit-log", join(scratch, "audit.jsonl"), "--cache-dir", join(scratch, "cache")],
  env: { PATH: process.env.PATH ?? "", RUST_LOG: "warn" },
  stderr: "inherit",
});
const client = new Client({ name: "interop-ts", version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } });
const prompts = [];
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  prompts.push(request.params.message);
  return { action: "accept", content: { confirm: true } };
});

try {
  await client.connect(transport);
  check("initialize", client.getServerVersion()?.name === "equinix-mcp", JSON.stringify(client.getServerVersion()));

  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  check("tools/list serves the catalog and the broker", names.includes("fabric_list_metros") && names.includes("fabric_confirm_change"), names.join(","));
  const metros = tools.find((t) => t.name === "fabric_list_metros");
  check("read-only tools carry readOnlyHint", metros?.annotations?.readOnlyHint === true);

  const list = await client.callTool({ name: "fabric_list_metros", arguments: { limit: 3 } });
  check("read-only tool call", !list.isError && list.structuredContent?.metros?.length === 3 && list.structuredContent?.next_offset === 3, JSON.stringify(list));

  const spec = {
    type: "EVPL_VC", name: "interop-ts", bandwidth: 100,
    aSide: { accessPoint: { type: "COLO", port: { uuid: "c4d9350e-783c-83cd-1ce0-306a5c00a600" }, linkProtocol: { type: "DOT1Q", vlanTag: 3500 } } },
    zSide: { accessPoint: { type: "COLO", port: { uuid: "c4d9350e-783c-83cd-1ce0-306a5c00a610" }, linkProtocol: { type: "DOT1Q", vlanTag: 3500 } } },
    notifications: [{ type: "ALL", emails: ["noc@example.com"] }],
  };
  const proposal = await client.callTool({ name: "fabric_propose_change", arguments: { change_type: "connection_create", spec } });
  const token = proposal.structuredContent?.confirm_token;
  check("propose returns a confirm token", !proposal.isError && /^chg-[0-9a-f]{32}$/.test(token ?? ""), JSON.stringify(proposal));

  const confirmed = await client.callTool({ name: "fabric_confirm_change", arguments: { confirm_token: token } });
  const out = confirmed.structuredContent ?? {};
  check("confirm executes after the elicitation is accepted", !confirmed.isError && out.executed === true && out.human_confirmation?.status === "accepted", JSON.stringify(out));
  check("the prompt showed the request hash", prompts.length === 1 && prompts[0].includes(proposal.structuredContent.request_sha256));

  const replay = await client.callTool({ name: "fabric_confirm_change", arguments: { confirm_token: token } });
  check("a replayed token is refused", replay.isError === true && replay.structuredContent?.error?.kind === "replayed_token", JSON.stringify(replay));
} catch (e) {
  check("no exception", false, String(e?.stack ?? e));
} finally {
  await client.close().catch(() => {});
  rmSync(scratch, { recursive: true, force: true });
}
console.log(`interop: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
