// Starts an unpacked MCPB bundle exactly as its manifest says, the way Claude Desktop does: the
// official @anthropic-ai/mcpb's getMcpConfigForManifest resolves the command, arguments and
// environment for the platform and the user's configuration (here the simulator switch on and
// the rest left at their defaults), then the MCP TypeScript SDK initializes over stdio, lists the
// tools and calls one read. Usage: node bundle-client.mjs DIR PLATFORM [RUNNER], where PLATFORM
// is linux or win32 and RUNNER runs a foreign binary here (qemu-aarch64-static, wine64).
import { getMcpConfigForManifest } from "@anthropic-ai/mcpb";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [dir, platform, runner] = process.argv.slice(2);
const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"));
const home = mkdtempSync(join(tmpdir(), "equinix-mcp-bundle-"));
// the platform the manifest's overrides are chosen for (a Windows bundle is checked on Linux)
Object.defineProperty(process, "platform", { value: platform });
const config = await getMcpConfigForManifest({
  manifest,
  extensionPath: dir,
  systemDirs: { HOME: home, DATA: home, DOCUMENTS: home, DOWNLOADS: home, DESKTOP: home },
  userConfig: { fabric_sim: true },
  pathSeparator: "/",
});
if (!config) throw new Error("the manifest yields no server configuration for this user configuration");
const leftover = JSON.stringify(config).match(/\$\{[^}]*\}/);
if (leftover) throw new Error(`the manifest leaves ${leftover[0]} unresolved: ${JSON.stringify(config)}`);

const command = runner ? runner : config.command;
const args = runner ? [config.command, ...config.args] : config.args;
const transport = new StdioClientTransport({
  command,
  args,
  // what Claude Desktop passes: the manifest's environment; HOME and the state folders point at a
  // scratch folder so the check writes nothing of the person running it
  env: { ...config.env, PATH: process.env.PATH ?? "", HOME: home, XDG_STATE_HOME: home, XDG_CACHE_HOME: home, WINEPREFIX: process.env.WINEPREFIX ?? "", WINEDEBUG: "-all", RUST_LOG: "warn" },
  stderr: "inherit",
});
const client = new Client({ name: "bundle-check", version: "1.0.0" });
const fail = (what) => {
  console.error(`FAIL ${what}`);
  process.exit(1);
};
const timer = setTimeout(() => fail("no answer within 120 s"), 120_000);
await client.connect(transport);
if (client.getServerVersion()?.name !== "equinix-mcp") fail(`initialize: ${JSON.stringify(client.getServerVersion())}`);
const { tools } = await client.listTools();
const names = tools.map((t) => t.name);
if (!names.includes("fabric_list_metros") || !names.includes("fabric_confirm_change")) fail(`tools/list: ${names}`);
const read = await client.callTool({ name: "fabric_list_metros", arguments: { limit: 2 } });
if (read.isError || read.structuredContent?.metros?.length !== 2) fail(`the read: ${JSON.stringify(read)}`);
await client.close();
clearTimeout(timer);
console.log(`ok ${manifest.name} ${manifest.version} (${platform}): ${config.command} ${config.args.join(" ")}; ${names.length} tools; one read`);
