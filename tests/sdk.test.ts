/**
 * Real MCP clients as peers: the official TypeScript SDKs spawn dist/server.mjs over
 * stdio, exactly as a host application would, and must get on with it without a single
 * client-side error.
 *
 * - SDK v1 (`@modelcontextprotocol/sdk`) speaks only the handshake era: `initialize`
 *   with 2025-11-25, which the server must answer with 2025-11-25.
 * - SDK v2 (`@modelcontextprotocol/client`) negotiates: in `"legacy"` mode (its default)
 *   it runs the same handshake; in `"auto"` mode it probes with `server/discover` and
 *   must land in the modern era; pinned to 2026-07-28 it must land there directly.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as StdioClientTransportV1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { Client as ClientV2, type VersionNegotiationMode } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioClientTransportV2 } from "@modelcontextprotocol/client/stdio";
import { serverPath } from "./helpers.ts";

/** Who the server says it is. */
const SERVER_INFO = { name: "json-rpc-study", version: "0.1.0" };

/** A reply that never comes fails its suite after this long, instead of hanging the whole run. */
const SUITE = { timeout: 60_000 };

/** Whether a process is still running. */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Wraps a transport so that every message in either direction is also kept in `log`. */
function recording(inner: Transport, log: JSONRPCMessage[]): Transport {
  const outer: Transport = {
    start: () => inner.start(),
    send: (message, options) => {
      log.push(message);
      return inner.send(message, options);
    },
    close: () => inner.close(),
  };
  inner.onmessage = (message, extra) => {
    log.push(message);
    outer.onmessage?.(message, extra);
  };
  inner.onerror = (error) => outer.onerror?.(error);
  inner.onclose = () => outer.onclose?.();
  return outer;
}

describe("SDK v1 client", SUITE, () => {
  const wire: JSONRPCMessage[] = [];
  const errors: Error[] = [];
  let stderr = "";
  let client: ClientV1;

  before(async () => {
    client = new ClientV1({ name: "sdk-v1-test", version: "1.0.0" });
    client.onerror = (error) => errors.push(error);
    const transport = new StdioClientTransportV1({ command: process.execPath, args: [serverPath], stderr: "pipe" });
    transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk));
    await client.connect(recording(transport, wire));
  });
  after(async () => {
    await client.close();
  });

  test("connects and reports the server's name and version", () => {
    assert.deepEqual(client.getServerVersion(), SERVER_INFO);
    assert.deepEqual(client.getServerCapabilities(), { tools: {}, logging: {} });
  });

  test("negotiates 2025-11-25, the version it asks for", () => {
    const answer = wire.find((message) => "result" in message && "protocolVersion" in message.result);
    assert.ok(answer && "result" in answer, "an initialize result went by");
    assert.equal(answer.result.protocolVersion, "2025-11-25");
    assert.match(stderr, /sdk-v1-test.*2025-11-25/);
  });

  test("lists the add tool", async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((tool) => [tool.name, tool.inputSchema.required]),
      [["add", ["a", "b"]]],
    );
  });

  test("calls add and gets the sum", async () => {
    const result = await client.callTool({ name: "add", arguments: { a: 100, b: 111 } });
    assert.deepEqual(result, { content: [{ type: "text", text: "100 + 111 = 211" }] });
  });

  test("pings", async () => {
    assert.deepEqual(await client.ping(), {});
  });

  test("gets a bad argument back as an isError result, not a thrown error", async () => {
    const result = await client.callTool({ name: "add", arguments: { a: "100", b: 111 } });
    assert.equal(result.isError, true);
  });

  test("never sees an error from the server's messages", () => {
    assert.deepEqual(errors, []);
  });
});

test("closing an SDK v1 client ends the server through its stdin, before the SDK's SIGTERM", { timeout: 5_000 }, async (t) => {
  const client = new ClientV1({ name: "sdk-v1-close", version: "1.0.0" });
  const transport = new StdioClientTransportV1({ command: process.execPath, args: [serverPath], stderr: "ignore" });
  // Should a check fail before the close below, the server is still ended; a second close does nothing.
  t.after(() => client.close());
  await client.connect(transport);
  const pid = transport.pid;
  assert.ok(pid !== null && isRunning(pid));
  const started = Date.now();
  await client.close();
  // The SDK waits 2 s for an exit after closing stdin, then sends SIGTERM.
  assert.ok(Date.now() - started < 2000, `close took ${Date.now() - started} ms`);
  assert.equal(isRunning(pid), false);
});

describe("SDK v2 client", SUITE, () => {
  const modes: { mode: VersionNegotiationMode; era: "legacy" | "modern"; version: string }[] = [
    { mode: "legacy", era: "legacy", version: "2025-11-25" },
    { mode: "auto", era: "modern", version: "2026-07-28" },
    { mode: { pin: "2026-07-28" }, era: "modern", version: "2026-07-28" },
  ];

  for (const { mode, era, version } of modes) {
    test(`with versionNegotiation ${JSON.stringify(mode)} it ends in the ${era} era and calls add`, { timeout: 10_000 }, async () => {
      const client = new ClientV2({ name: "sdk-v2-test", version: "2.0.0" }, { versionNegotiation: { mode } });
      const errors: Error[] = [];
      client.onerror = (error) => errors.push(error);
      const transport = new StdioClientTransportV2({ command: process.execPath, args: [serverPath], stderr: "pipe" });
      let stderr = "";
      transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk));
      await client.connect(transport);
      try {
        assert.equal(client.getProtocolEra(), era);
        assert.equal(client.getNegotiatedProtocolVersion(), version);
        assert.deepEqual(client.getServerVersion(), SERVER_INFO);

        const { tools } = await client.listTools();
        assert.deepEqual(
          tools.map((tool) => tool.name),
          ["add"],
        );
        const sum = await client.callTool({ name: "add", arguments: { a: 19, b: 23 } });
        assert.deepEqual(sum.content, [{ type: "text", text: "19 + 23 = 42" }]);
        const bad = await client.callTool({ name: "add", arguments: { a: 19, b: "23" } });
        assert.equal(bad.isError, true);
        if (era === "legacy") assert.deepEqual(await client.ping(), {});

        // Only the legacy era opens with the handshake; the modern one never initializes.
        assert.equal(/initialize: client=\{"name":"sdk-v2-test"/.test(stderr), era === "legacy", stderr);
        assert.deepEqual(errors, []);
      } finally {
        await client.close();
      }
    });
  }
});
