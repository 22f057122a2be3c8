/**
 * Elicitation with the official SDK clients as peers, each with an `elicitation/create`
 * handler that plays the user: SDK v1 in the handshake era, where the server sends its own
 * request; SDK v2 in both eras, and in 2026-07-28 it answers `input_required` by calling the
 * same handler and retrying the call with `inputResponses` and the `requestState`
 * (basic/patterns/mrtr). The server is server.ts with the `ask` tool of
 * tests/fixtures/runtime-tools.ts, which asks n yes-or-no questions and tells the answers.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as StdioClientTransportV1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { Client as ClientV2, type VersionNegotiationMode } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioClientTransportV2 } from "@modelcontextprotocol/client/stdio";
import { build } from "./fixtures/runtime-tools.ts";
import { toolText as textOf } from "./helpers.ts";

const SUITE = { timeout: 60_000 };

/** What the user answers: one ElicitResult per question, in order, and the questions seen. */
interface User {
  answers: { action: "accept" | "decline" | "cancel"; content?: { ok: boolean } }[];
  asked: string[];
}

/** What either SDK's client offers these tests. */
interface Peer {
  call(name: string, args: object): Promise<unknown>;
  close(): Promise<void>;
}

let server = "";
let remove = () => {};

before(async () => {
  ({ server, remove } = await build());
});
after(() => remove());

/** Plays the user: records the question, and gives the next answer. */
function answer(user: User, message: string) {
  user.asked.push(message);
  const next = user.answers[user.asked.length - 1];
  if (next === undefined) throw new Error(`the user has no answer for ${message}`);
  return next;
}

/** An SDK v1 client connected to the built server; `elicitation` says whether it can ask. */
async function connectV1(user: User, elicitation: boolean): Promise<Peer> {
  const capabilities = elicitation ? { elicitation: {} } : {};
  const client = new ClientV1({ name: "sdk-v1-elicitation", version: "1.0.0" }, { capabilities });
  if (elicitation) client.setRequestHandler(ElicitRequestSchema, (request) => answer(user, request.params.message));
  await client.connect(new StdioClientTransportV1({ command: process.execPath, args: [server], stderr: "ignore" }));
  return { call: (name, args) => client.callTool({ name, arguments: { ...args } }), close: () => client.close() };
}

/** An SDK v2 client connected to the built server, in the era the mode leads to. */
async function connectV2(user: User, elicitation: boolean, mode: VersionNegotiationMode): Promise<Peer> {
  const capabilities = elicitation ? { elicitation: { form: {} } } : {};
  const client = new ClientV2({ name: "sdk-v2-elicitation", version: "2.0.0" }, { capabilities, versionNegotiation: { mode } });
  if (elicitation) client.setRequestHandler("elicitation/create", (request) => answer(user, request.params.message));
  await client.connect(new StdioClientTransportV2({ command: process.execPath, args: [server], stderr: "ignore" }));
  return { call: (name, args) => client.callTool({ name, arguments: { ...args } }), close: () => client.close() };
}

const peers: { name: string; connect: (user: User, elicitation: boolean) => Promise<Peer>; starts: (n: number) => number }[] = [
  // The handshake era asks while the handler runs: it starts once. 2026-07-28 runs it again
  // from the start for each round, and each round here asks one more question.
  { name: "SDK v1 client (2025-11-25)", connect: connectV1, starts: () => 1 },
  { name: "SDK v2 client, legacy era", connect: (user, elicitation) => connectV2(user, elicitation, "legacy"), starts: () => 1 },
  { name: "SDK v2 client, 2026-07-28", connect: (user, elicitation) => connectV2(user, elicitation, { pin: "2026-07-28" }), starts: (n) => n + 1 },
];

for (const { name, connect, starts } of peers) {
  describe(name, SUITE, () => {
    test("the client's handler is asked each question in turn, and the tool gets every answer", async (t) => {
      const user: User = { answers: [{ action: "accept", content: { ok: true } }, { action: "decline" }], asked: [] };
      const peer = await connect(user, true);
      t.after(() => peer.close());
      const result = textOf(await peer.call("ask", { n: 2 }));
      assert.deepEqual(user.asked, ["Question 1?", "Question 2?"]);
      assert.deepEqual(JSON.parse(String(result.text)), { answers: user.answers, starts: starts(2) });
      assert.equal(result.isError, undefined);
    });

    test("a client that declares no elicitation is never asked, and the tool's error says why", async (t) => {
      const user: User = { answers: [], asked: [] };
      const peer = await connect(user, false);
      t.after(() => peer.close());
      const asked = peer.call("ask", { n: 1 });
      // 2026-07-28 basic/index: a handler that lets the refusal pass answers -32021 (MUST).
      if (name.includes("2026-07-28")) return void (await assert.rejects(asked, /does not offer elicitation/));
      assert.deepEqual(textOf(await asked), { text: "This client does not offer elicitation", isError: true });
    });
  });
}

test("SDK v1: a handler that throws answers the server's request with an error, and the tool says so", SUITE, async (t) => {
  const client = new ClientV1({ name: "sdk-v1-elicitation", version: "1.0.0" }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, () => {
    throw new Error("no one is at the keyboard");
  });
  t.after(() => client.close());
  await client.connect(new StdioClientTransportV1({ command: process.execPath, args: [server], stderr: "ignore" }));
  const result = textOf(await client.callTool({ name: "ask", arguments: { n: 1 } }));
  assert.equal(result.isError, true);
  assert.match(String(result.text), /^The client answered with an error: ".*no one is at the keyboard.*"$/);
});
