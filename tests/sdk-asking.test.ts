/**
 * Asking the client with the official SDK clients as peers (server.ts, "Asking the client";
 * docs/tools.md's project_roots, summarize and checked_sum tools): SDK v1 in the handshake era,
 * SDK v2 in the handshake era and in 2026-07-28, each over stdio and over Streamable HTTP. A
 * client that declares roots and sampling answers with handlers of its own (in 2026-07-28 the
 * SDK answers the input_required result through the same handlers and retries); one that declares
 * neither is never asked. Log messages reach the client's notification handler.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as StdioClientTransportV1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport as StreamableHTTPClientTransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { Client as ClientV2, type VersionNegotiationMode } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioClientTransportV2 } from "@modelcontextprotocol/client/stdio";
import { StreamableHTTPClientTransport as StreamableHTTPClientTransportV2 } from "@modelcontextprotocol/client";
import { bundle } from "../build.mjs";
import { block } from "./documents.ts";
import { root, toolText as textOf, withEntries } from "./helpers.ts";
import { startHttpServer, type HttpServer } from "./fixtures/http-recorder.ts";

const SUITE = { timeout: 60_000 };

const ROOTS = [{ uri: "file:///work/project", name: "project" }];
const COMPLETION = { role: "assistant" as const, content: { type: "text" as const, text: "A short summary." }, model: "stand-in" };

let server = "";
let folder = "";
let http: HttpServer | undefined;

before(async () => {
  folder = mkdtempSync(join(tmpdir(), "sdk-asking-"));
  const entries = ["ts project_roots", "ts summarize", "ts checked_sum"].map((info) => block("docs/tools.md", info));
  writeFileSync(join(folder, "server.ts"), withEntries(readFileSync(join(root, "server.ts"), "utf8"), entries, ""));
  server = join(folder, "server.mjs");
  assert.deepEqual(await bundle(join(folder, "server.ts"), server), []);
  http = await startHttpServer(server);
});
after(async () => {
  await http?.stop();
  rmSync(folder, { recursive: true, force: true });
});

/** What the tests ask of either SDK's client, and what its handlers saw. */
interface Peer {
  call(name: string, args: object, meta?: { [key: string]: unknown }): Promise<unknown>;
  setLevel(level: "debug" | "info" | "warning"): Promise<unknown>;
  logs: unknown[];
  asked: string[];
  close(): Promise<void>;
}

type Transport = "stdio" | "http";

async function connectV1(transport: Transport, capable: boolean): Promise<Peer> {
  const capabilities = capable ? { roots: {}, sampling: {} } : {};
  const client = new ClientV1({ name: "sdk-v1-asking", version: "1.0.0" }, { capabilities });
  const peer = { logs: [] as unknown[], asked: [] as string[] };
  if (capable) {
    client.setRequestHandler(ListRootsRequestSchema, () => (peer.asked.push("roots/list"), { roots: ROOTS }));
    client.setRequestHandler(CreateMessageRequestSchema, () => (peer.asked.push("sampling/createMessage"), COMPLETION));
  }
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void peer.logs.push(notification.params));
  const url = new URL(http?.url ?? "http://127.0.0.1:1/mcp");
  await client.connect(transport === "stdio"
    ? new StdioClientTransportV1({ command: process.execPath, args: [server], stderr: "ignore" })
    : new StreamableHTTPClientTransportV1(url));
  return {
    ...peer,
    call: (name, args) => client.callTool({ name, arguments: { ...args } }),
    setLevel: (level) => client.setLoggingLevel(level),
    close: () => client.close(),
  };
}

async function connectV2(transport: Transport, capable: boolean, mode: VersionNegotiationMode): Promise<Peer> {
  const capabilities = capable ? { roots: {}, sampling: {} } : {};
  const client = new ClientV2({ name: "sdk-v2-asking", version: "2.0.0" }, { capabilities, versionNegotiation: { mode } });
  const peer = { logs: [] as unknown[], asked: [] as string[] };
  if (capable) {
    client.setRequestHandler("roots/list", () => (peer.asked.push("roots/list"), { roots: ROOTS }));
    client.setRequestHandler("sampling/createMessage", () => (peer.asked.push("sampling/createMessage"), COMPLETION));
  }
  client.setNotificationHandler("notifications/message", (notification) => void peer.logs.push(notification.params));
  const url = new URL(http?.url ?? "http://127.0.0.1:1/mcp");
  await client.connect(transport === "stdio"
    ? new StdioClientTransportV2({ command: process.execPath, args: [server], stderr: "ignore" })
    : new StreamableHTTPClientTransportV2(url));
  return {
    ...peer,
    call: (name, args, meta) => client.callTool({ name, arguments: { ...args }, ...(meta === undefined ? {} : { _meta: meta }) }),
    setLevel: (level) => client.setLoggingLevel(level),
    close: () => client.close(),
  };
}

const peers: { name: string; modern: boolean; connect: (transport: Transport, capable: boolean) => Promise<Peer> }[] = [
  { name: "SDK v1 client (2025-11-25)", modern: false, connect: connectV1 },
  { name: "SDK v2 client, legacy era", modern: false, connect: (transport, capable) => connectV2(transport, capable, "legacy") },
  { name: "SDK v2 client, 2026-07-28", modern: true, connect: (transport, capable) => connectV2(transport, capable, { pin: "2026-07-28" }) },
];

for (const transport of ["stdio", "http"] as const) {
  for (const { name, modern, connect } of peers) {
    describe(`${name}, ${transport}`, SUITE, () => {
      test("a client that declares roots and sampling is asked through its handlers, and gets log messages", async (t) => {
        const peer = await connect(transport, true);
        t.after(() => peer.close());
        assert.deepEqual(textOf(await peer.call("project_roots", {})), { text: "file:///work/project", isError: undefined });
        assert.deepEqual(textOf(await peer.call("summarize", { text: "A long text." })), { text: "A short summary.", isError: undefined });
        assert.deepEqual(peer.asked, ["roots/list", "sampling/createMessage"]);
        // Legacy: every level until logging/setLevel. 2026-07-28: only with a level in _meta.
        if (!modern) await peer.setLevel("info");
        const meta = modern ? { "io.modelcontextprotocol/logLevel": "info" } : undefined;
        assert.deepEqual(textOf(await peer.call("checked_sum", { numbers: [1, 2] }, meta)).text, "3");
        assert.deepEqual(peer.logs, [{ level: "info", logger: "checked_sum", data: "the sum is 3" }]);
      });

      test("a client that declares neither is never asked: summarize says so, and project_roots fails", async (t) => {
        const peer = await connect(transport, false);
        t.after(() => peer.close());
        assert.deepEqual(textOf(await peer.call("summarize", { text: "x" })), { text: "This client does not offer sampling", isError: true });
        const listed = peer.call("project_roots", {});
        // 2026-07-28 basic/index: a handler that lets the refusal pass answers -32021 (MUST).
        if (modern) await assert.rejects(listed, /does not offer roots/);
        else assert.deepEqual(textOf(await listed), { text: "This client does not offer roots", isError: true });
        if (modern) {
          await peer.call("checked_sum", { numbers: [1] });
          assert.deepEqual(peer.logs, [], "no level in _meta: no log message");
        }
      });
    });
  }
}
