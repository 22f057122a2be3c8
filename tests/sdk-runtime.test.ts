/**
 * The tool runtime with the official SDK clients as peers: progress reaches `onprogress`, and
 * an AbortSignal that fires mid-call makes the SDK send notifications/cancelled, which the
 * server acts on. SDK v1 speaks the handshake era; SDK v2 runs once in each era.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as StdioClientTransportV1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import { Client as ClientV2, type VersionNegotiationMode } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioClientTransportV2 } from "@modelcontextprotocol/client/stdio";
import { build } from "./fixtures/runtime-tools.ts";
import { waitUntil } from "./helpers.ts";

/** A suite that waits for slow calls: generous, on a loaded 2-core machine. */
const SUITE = { timeout: 60_000 };

/** What either SDK's client offers these tests: a call with progress and a signal, and close. */
interface Peer {
  call(name: string, args: object, options: { onprogress?: (progress: Progress) => void; signal?: AbortSignal }): Promise<unknown>;
  close(): Promise<void>;
  stderr(): string;
}

/** One progress update as the SDKs hand it to `onprogress`. */
interface Progress {
  progress: number;
  total?: number | undefined;
  message?: string | undefined;
}

let server = "";
let remove = () => {};

before(async () => {
  ({ server, remove } = await build());
});
after(() => remove());

/** An SDK v1 client connected to the built server. */
async function connectV1(): Promise<Peer> {
  const client = new ClientV1({ name: "sdk-v1-runtime", version: "1.0.0" });
  const transport = new StdioClientTransportV1({ command: process.execPath, args: [server], stderr: "pipe" });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk));
  await client.connect(transport);
  return {
    call: (name, args, options) => client.callTool({ name, arguments: { ...args } }, undefined, options),
    close: () => client.close(),
    stderr: () => stderr,
  };
}

/** An SDK v2 client connected to the built server, in the era the mode leads to. */
async function connectV2(mode: VersionNegotiationMode): Promise<Peer> {
  const client = new ClientV2({ name: "sdk-v2-runtime", version: "2.0.0" }, { versionNegotiation: { mode } });
  const transport = new StdioClientTransportV2({ command: process.execPath, args: [server], stderr: "pipe" });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk));
  await client.connect(transport);
  return {
    call: (name, args, options) => client.callTool({ name, arguments: { ...args } }, options),
    close: () => client.close(),
    stderr: () => stderr,
  };
}

/** Waits until the server's stderr matches, as it logs what it did. */
async function logged(peer: Peer, pattern: RegExp): Promise<void> {
  await waitUntil(() => pattern.test(peer.stderr()), `${pattern} on the server's stderr`, 20_000);
}

/**
 * The SDKs under test. Both hand a notification to its handler a microtask late (SDK v1
 * shared/protocol.js and SDK v2 Protocol._onnotification: `Promise.resolve().then(...)`) but
 * a response at once, and the response removes the call's progress handler: a last progress
 * notification that comes in the same chunk as the result, as the server writes them one
 * after the other, is dropped by the client. The server's wire order is checked in
 * runtime.test.ts.
 */
const peers: { name: string; connect: () => Promise<Peer> }[] = [
  { name: "SDK v1 client", connect: connectV1 },
  { name: "SDK v2 client, legacy era", connect: () => connectV2("legacy") },
  { name: "SDK v2 client, modern era", connect: () => connectV2({ pin: "2026-07-28" }) },
];

for (const { name, connect } of peers) {
  describe(name, SUITE, () => {
    let peer: Peer;
    before(async () => {
      peer = await connect();
    });
    after(async () => {
      await peer.close();
    });

    test("onprogress receives the steps of a slow call in order, then the result", async () => {
      const updates: Progress[] = [];
      const result = await peer.call("slow", { ms: 300, steps: 3 }, { onprogress: (update) => updates.push(update) });
      const expected = [1, 2, 3].map((step) => ({ progress: step, total: 3, message: `step ${step}` }));
      const received = updates.map(({ progress, total, message }) => ({ progress, total, message }));
      const dropped = received.length === 2;
      assert.deepEqual(received, dropped ? expected.slice(0, 2) : expected);
      assert.ok(typeof result === "object" && result !== null && "content" in result);
      assert.deepEqual(result.content, [{ type: "text", text: "slept 300 ms" }]);
    });

    test("an AbortSignal that fires mid-call cancels it on the server, and the next call works", async () => {
      const controller = new AbortController();
      const first = new Promise<void>((resolve) => {
        const call = peer.call("slow", { ms: 20_000, steps: 100 }, { onprogress: () => resolve(), signal: controller.signal });
        call.catch(() => {});
      });
      await first;
      const aborted = peer.call("slow", { ms: 20_000, steps: 100 }, { signal: controller.signal });
      controller.abort("the user gave up");
      await assert.rejects(aborted);
      await logged(peer, /cancelled request \S+: "[^"]*the user gave up[^"]*"/);
      await logged(peer, /tool "slow" stopped: The operation was aborted/);
      const after = await peer.call("add", { a: 1, b: 2 }, {});
      assert.ok(typeof after === "object" && after !== null && "content" in after);
      assert.deepEqual(after.content, [{ type: "text", text: "1 + 2 = 3" }]);
    });
  });
}
