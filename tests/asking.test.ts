/**
 * Asking the client (server.ts section 8) and log messages (section 7), with the example tools of
 * docs/tools.md, "Asking the client" (project_roots, summarize, checked_sum), pasted into a copy
 * of server.ts as the chapter says and built; then spoken to over real pipes and over Streamable
 * HTTP, in both eras, by a client that declares each capability and by one that does not.
 *
 * Legacy (2025-11-25): roots/list and sampling/createMessage are requests of the server's own,
 * paired by id; log messages follow logging/setLevel. Modern (2026-07-28): each question is an
 * input_required result under its key, answered by a retry; a capability the client did not
 * declare is -32021 (HTTP 400) when the handler lets the refusal pass, and a log message goes
 * only to a request whose `_meta` names a level.
 */
import { after, afterEach, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bundle } from "../build.mjs";
import { block } from "./documents.ts";
import { root, start, waitUntil, withEntries } from "./helpers.ts";

const SLOW = { timeout: 30_000 };

let server = "";
let folder = "";

before(async () => {
  folder = mkdtempSync(join(tmpdir(), "asking-"));
  const entries = ["ts project_roots", "ts summarize", "ts checked_sum"]
    .map((info) => block("docs/tools.md", info));
  const source = withEntries(readFileSync(join(root, "server.ts"), "utf8"), entries, "");
  writeFileSync(join(folder, "server.ts"), source);
  server = join(folder, "server.mjs");
  assert.deepEqual(await bundle(join(folder, "server.ts"), server), []);
});
after(() => rmSync(folder, { recursive: true, force: true }));

/** Processes a test started: a failed test's are killed, so that the file can end. */
const running = new Set<{ kill: (signal?: NodeJS.Signals) => boolean }>();
afterEach(() => {
  for (const child of running) child.kill("SIGKILL");
  running.clear();
});

type Wire = {
  id?: string | number | null;
  method?: string;
  params?: { [key: string]: unknown };
  result?: { [key: string]: unknown; content?: { text: string }[]; isError?: boolean };
  error?: { code: number; message: string; data?: unknown };
};

const ROOTS = { roots: [{ uri: "file:///work/project", name: "project" }] };
const COMPLETION = { role: "assistant", content: { type: "text", text: "A short summary." }, model: "stand-in" };

function meta(capabilities: object, extra: object = {}) {
  return {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": { name: "test", version: "1" },
    "io.modelcontextprotocol/clientCapabilities": capabilities,
    ...extra,
  };
}

function call(id: number, name: string, args: object, params: object = {}) {
  return { jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args, ...params } };
}

/** The built copy over stdio: write messages, read the next one it writes. */
function stdio() {
  const peer = start(process.execPath, [server]);
  running.add(peer.child);
  let read = 0;
  const written = () => peer.output().split("\n").filter((text) => text !== "");
  return {
    send: (...messages: object[]) => peer.child.stdin.write(messages.map((m) => `${JSON.stringify(m)}\n`).join("")),
    next: async (): Promise<Wire> => {
      await waitUntil(() => written().length > read, "a message on stdout", 20_000);
      read += 1;
      return JSON.parse(written()[read - 1] ?? "");
    },
    end: async () => {
      peer.child.stdin.end();
      return peer.finish;
    },
  };
}

function textOf(message: Wire): string {
  return message.result?.content?.[0]?.text ?? "";
}

test("legacy, stdio: roots and sampling are requests of the server's own, paired by id; log follows logging/setLevel", SLOW, async () => {
  const peer = stdio();
  const capabilities = { roots: {}, sampling: {} };
  peer.send({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities, clientInfo: { name: "t", version: "1" } } });
  assert.deepEqual((await peer.next()).result?.capabilities, { tools: {}, logging: {} });
  peer.send(call(1, "project_roots", {}));
  const asked = await peer.next();
  assert.equal(asked.method, "roots/list");
  assert.equal(asked.id, "roots-1");
  peer.send({ jsonrpc: "2.0", id: asked.id, result: ROOTS });
  assert.equal(textOf(await peer.next()), "file:///work/project");
  peer.send(call(2, "summarize", { text: "A long text." }));
  const sampling = await peer.next();
  assert.equal(sampling.method, "sampling/createMessage");
  assert.deepEqual(sampling.params, { messages: [{ role: "user", content: { type: "text", text: "A long text." } }], systemPrompt: "Summarize the user's text in one sentence.", maxTokens: 200 });
  peer.send({ jsonrpc: "2.0", id: sampling.id, result: COMPLETION });
  assert.equal(textOf(await peer.next()), "A short summary.");
  // Every level until the client sets one; then only at or above it.
  peer.send(call(3, "checked_sum", { numbers: [1, 2] }));
  const logged = [await peer.next(), await peer.next()];
  assert.deepEqual(logged.map((message) => message.params?.level), ["debug", "info"]);
  assert.deepEqual(logged[1]?.params, { level: "info", logger: "checked_sum", data: "the sum is 3" });
  assert.equal(textOf(await peer.next()), "3");
  peer.send({ jsonrpc: "2.0", id: 4, method: "logging/setLevel", params: { level: "info" } });
  assert.deepEqual((await peer.next()).result, {});
  peer.send({ jsonrpc: "2.0", id: 5, method: "logging/setLevel", params: { level: "loud" } });
  assert.deepEqual((await peer.next()).error, { code: -32602, message: 'Invalid params: "level" is not a log level' });
  peer.send(call(6, "checked_sum", { numbers: [1, 2] }));
  assert.equal((await peer.next()).params?.level, "info");
  assert.equal(textOf(await peer.next()), "3");
  // A roots answer that is not a ListRootsResult is the tool's error.
  peer.send(call(7, "project_roots", {}));
  const again = await peer.next();
  peer.send({ jsonrpc: "2.0", id: again.id, result: { roots: "nope" } });
  assert.equal(textOf(await peer.next()), "The answer is not a ListRootsResult");
  await peer.end();
});

test("legacy, stdio: a client that declared neither roots nor sampling is never asked: each is a tool error", SLOW, async () => {
  const peer = stdio();
  peer.send({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } } });
  await peer.next();
  peer.send(call(1, "summarize", { text: "x" }));
  const sampled = await peer.next();
  assert.equal(sampled.result?.isError, true);
  assert.equal(textOf(sampled), "This client does not offer sampling");
  // project_roots does not catch: its call is the tool's error all the same.
  peer.send(call(2, "project_roots", {}));
  const listed = await peer.next();
  assert.equal(listed.result?.isError, true);
  assert.equal(textOf(listed), "This client does not offer roots");
  await peer.end();
});

test("modern, stdio: each question is input_required under its key, the retry completes it; undeclared roots is -32021; log needs a level in _meta", SLOW, async () => {
  const peer = stdio();
  const capabilities = { roots: {}, sampling: {} };
  peer.send(call(1, "project_roots", {}, { _meta: meta(capabilities) }));
  const first = await peer.next();
  assert.equal(first.result?.resultType, "input_required");
  assert.deepEqual(first.result?.inputRequests, { "roots-1": { method: "roots/list", params: {} } });
  peer.send(call(2, "project_roots", {}, { _meta: meta(capabilities), requestState: first.result?.requestState, inputResponses: { "roots-1": ROOTS } }));
  const done = await peer.next();
  assert.equal(done.result?.resultType, "complete");
  assert.equal(textOf(done), "file:///work/project");
  peer.send(call(3, "project_roots", {}, { _meta: meta(capabilities), requestState: first.result?.requestState, inputResponses: { "roots-1": { roots: 1 } } }));
  assert.deepEqual((await peer.next()).error, { code: -32602, message: 'Invalid params: inputResponses["roots-1"] is not a ListRootsResult' });
  peer.send(call(4, "project_roots", {}, { _meta: meta({ sampling: {} }) }));
  assert.deepEqual((await peer.next()).error, { code: -32021, message: "This client does not offer roots", data: { requiredCapabilities: { roots: {} } } });
  // summarize catches its refusal: a tool error, as the handler chose.
  peer.send(call(5, "summarize", { text: "x" }, { _meta: meta({}) }));
  assert.equal(textOf(await peer.next()), "This client does not offer sampling");
  peer.send(call(6, "checked_sum", { numbers: [2] }, { _meta: meta({}) }));
  assert.equal(textOf(await peer.next()), "2", "no level in _meta: no log message first");
  peer.send(call(7, "checked_sum", { numbers: [2] }, { _meta: meta({}, { "io.modelcontextprotocol/logLevel": "info" }) }));
  assert.deepEqual((await peer.next()).params, { level: "info", logger: "checked_sum", data: "the sum is 2" });
  assert.equal(textOf(await peer.next()), "2");
  peer.send({ jsonrpc: "2.0", id: 8, method: "logging/setLevel", params: { level: "info", _meta: meta({}) } });
  assert.equal((await peer.next()).error?.code, -32601, "2026-07-28 removed logging/setLevel");
  await peer.end();
});

/** The built copy over Streamable HTTP, and POST as a client makes it. */
async function http() {
  const peer = start(process.execPath, [server, "--http", "127.0.0.1:0"]);
  running.add(peer.child);
  await waitUntil(() => /http:\/\/\S+\/mcp/.test(peer.errors()), "the endpoint on stderr", 20_000);
  const url = /(http:\/\/\S+\/mcp)/.exec(peer.errors())?.[1] ?? "";
  const post = async (message: { [key: string]: unknown }, version?: string) => {
    const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    if (version !== undefined) headers["mcp-protocol-version"] = version;
    const { params } = message;
    const name = typeof params === "object" && params !== null && "name" in params ? String(params.name) : "";
    if (version === "2026-07-28") Object.assign(headers, { "mcp-method": String(message.method), "mcp-name": name });
    const response = await fetch(url, { method: "POST", headers, body: JSON.stringify(message) });
    return { status: response.status, type: response.headers.get("content-type") ?? "", body: await response.text() };
  };
  return { post, url, stop: () => peer.child.kill("SIGTERM") };
}

/** The messages of an event stream's body, in order. */
function events(body: string): Wire[] {
  return body.split("\n").filter((line) => line.startsWith("data: ")).map((line) => JSON.parse(line.slice(6)));
}

test("modern, HTTP: roots through input_required and a retry; -32021 is HTTP 400; a log message goes on the call's own stream", SLOW, async () => {
  const { post, stop } = await http();
  try {
    const capabilities = { roots: {} };
    const first = await post(call(1, "project_roots", {}, { _meta: meta(capabilities) }), "2026-07-28");
    const asked = JSON.parse(first.body);
    assert.deepEqual(asked.result.inputRequests, { "roots-1": { method: "roots/list", params: {} } });
    const retry = call(2, "project_roots", {}, { _meta: meta(capabilities), requestState: asked.result.requestState, inputResponses: { "roots-1": ROOTS } });
    assert.equal(textOf(JSON.parse((await post(retry, "2026-07-28")).body)), "file:///work/project");
    const refused = await post(call(3, "project_roots", {}, { _meta: meta({}) }), "2026-07-28");
    assert.equal(refused.status, 400);
    assert.equal(JSON.parse(refused.body).error.code, -32021);
    const logged = await post(call(4, "checked_sum", { numbers: [5] }, { _meta: meta({}, { "io.modelcontextprotocol/logLevel": "debug" }) }), "2026-07-28");
    assert.match(logged.type, /text\/event-stream/);
    const sent = events(logged.body);
    assert.deepEqual(sent.map((message) => message.method ?? message.id), ["notifications/message", "notifications/message", 4]);
  } finally {
    stop();
  }
});

test("legacy, HTTP: sampling/createMessage goes out on the call's stream, and the client's POSTed answer completes the call", SLOW, async () => {
  const { post, url, stop } = await http();
  try {
    const initialize = { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: { sampling: {} }, clientInfo: { name: "t", version: "1" } } };
    assert.equal((await post(initialize)).status, 200);
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" };
    const response = await fetch(url, { method: "POST", headers, body: JSON.stringify(call(1, "summarize", { text: "A long text." })) });
    assert.match(response.headers.get("content-type") ?? "", /text\/event-stream/);
    const reader = response.body?.getReader();
    assert.ok(reader !== undefined);
    let text = "";
    while (!/\n\n/.test(text)) text += new TextDecoder().decode((await reader.read()).value);
    const [question] = events(text);
    assert.equal(question?.method, "sampling/createMessage");
    assert.match(String(question?.id), /^sampling-1-[0-9a-f-]{36}$/, "an id no other client can guess");
    const answer = await post({ jsonrpc: "2.0", id: question?.id, result: COMPLETION, params: {} }, "2025-11-25");
    assert.equal(answer.status, 202);
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += new TextDecoder().decode(chunk.value);
    const sent = events(text);
    assert.equal(textOf(sent[sent.length - 1] ?? {}), "A short summary.");
  } finally {
    stop();
  }
});
