/**
 * Elicitation over real pipes, in both eras, with the `ask` tool of tests/fixtures/runtime-tools.ts
 * (n yes-or-no questions, in turn or all at once) pasted into a copy of server.ts and built.
 *
 * Legacy (2025-06-18, 2025-11-25 client/elicitation): the server sends its own
 * `elicitation/create` request and pairs the client's response to it by id. Modern (2026-07-28
 * basic/patterns/mrtr): the server answers `input_required` with the requests and a signed
 * `requestState`, and the client retries the call under a new id with `inputResponses`.
 * Every bad input gets a clear answer, and nothing is lost.
 */
import { after, afterEach, before, test } from "node:test";
import assert from "node:assert/strict";
import { start, waitUntil } from "./helpers.ts";
import { build } from "./fixtures/runtime-tools.ts";

const SLOW = { timeout: 30_000 };

let server = "";
let remove = () => {};

before(async () => {
  ({ server, remove } = await build());
});
after(() => remove());

/** Servers a test started: a failed test's server is killed, so that the file can end. */
const running = new Set<{ kill: () => boolean }>();
afterEach(() => {
  for (const child of running) child.kill();
  running.clear();
});

/** A message off the wire, as the tests read it. */
type Wire = {
  id?: string | number | null;
  method?: string;
  params?: { [key: string]: unknown };
  result?: { [key: string]: unknown; content?: { text: string }[]; isError?: boolean };
  error?: { code: number; message: string };
};

/** What a modern request carries in `_meta`, with the client capabilities given. */
function modernMeta(capabilities: object) {
  return {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": { name: "test", version: "1" },
    "io.modelcontextprotocol/clientCapabilities": capabilities,
  };
}

/** The built server, with a way to write messages and to wait for the next one it writes. */
function session() {
  const peer = start(process.execPath, [server]);
  running.add(peer.child);
  let read = 0;
  const written = () => peer.output().split("\n").filter((text) => text !== "");
  const send = (...messages: object[]) => {
    peer.child.stdin.write(messages.map((message) => `${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`).join(""));
  };
  const next = async (): Promise<Wire> => {
    await waitUntil(() => written().length > read, "a message on stdout", 20_000);
    read += 1;
    return JSON.parse(written()[read - 1] ?? "");
  };
  const waitForLog = (pattern: RegExp) => waitUntil(() => pattern.test(peer.errors()), `${pattern} on stderr`, 20_000);
  const end = async () => {
    peer.child.stdin.end();
    return peer.finish;
  };
  return { send, next, waitForLog, end, written, errors: peer.errors };
}

/** A modern tools/call of `ask`, with whatever else its params carry. */
function askCall(id: number, args: object, extra: object = {}, capabilities: object = { elicitation: {} }) {
  return { id, method: "tools/call", params: { name: "ask", arguments: args, ...extra, _meta: modernMeta(capabilities) } };
}

/** The text of a tool result. */
function textOf(message: Wire): string {
  return message.result?.content?.[0]?.text ?? "";
}

const FORM = { type: "object", properties: { ok: { type: "boolean" } } };
const YES = { action: "accept", content: { ok: true } };

/** The elicitation/create request the ask tool makes for question `n`, as a modern inputRequests entry. */
function question(n: number) {
  return { method: "elicitation/create", params: { message: `Question ${n}?`, requestedSchema: FORM } };
}

test("modern: a call that asks is answered input_required, with the request and a requestState", SLOW, async () => {
  const peer = session();
  peer.send(askCall(1, { n: 1 }));
  const reply = await peer.next();
  const { resultType, inputRequests, requestState, _meta, ...rest } = reply.result ?? {};
  assert.equal(resultType, "input_required");
  assert.deepEqual(inputRequests, { "elicitation-1": question(1) }, "a form request, with no mode (it means form)");
  assert.equal(typeof requestState, "string");
  assert.deepEqual(_meta, { "io.modelcontextprotocol/serverInfo": { name: "json-rpc-study", version: "0.1.0" } });
  assert.deepEqual(rest, {}, "no content: it is not a CallToolResult");
  await peer.end();
});

test("modern: each retry answers one more question, the handler runs from the start, and the last round completes", SLOW, async () => {
  const peer = session();
  peer.send(askCall(1, { n: 2 }));
  const first = await peer.next();
  peer.send(askCall(2, { n: 2 }, { inputResponses: { "elicitation-1": YES }, requestState: first.result?.requestState }));
  const second = await peer.next();
  assert.equal(second.id, 2);
  assert.deepEqual(second.result?.inputRequests, { "elicitation-2": question(2) }, "only what is still unanswered");
  peer.send(askCall(3, { n: 2 }, { inputResponses: { "elicitation-2": { action: "decline" } }, requestState: second.result?.requestState }));
  const third = await peer.next();
  assert.equal(third.id, 3);
  assert.equal(third.result?.resultType, "complete");
  assert.deepEqual(JSON.parse(textOf(third)), { answers: [YES, { action: "decline" }], starts: 3 });
  const { code } = await peer.end();
  assert.equal(code, 0);
});

test("modern: questions asked together go out together in one round", SLOW, async () => {
  const peer = session();
  peer.send(askCall(1, { n: 2, together: true }));
  const first = await peer.next();
  assert.deepEqual(first.result?.inputRequests, { "elicitation-1": question(1), "elicitation-2": question(2) });
  const inputResponses = { "elicitation-1": YES, "elicitation-2": { action: "cancel" } };
  peer.send(askCall(2, { n: 2, together: true }, { inputResponses, requestState: first.result?.requestState }));
  assert.deepEqual(JSON.parse(textOf(await peer.next())), { answers: [YES, { action: "cancel" }], starts: 2 });
  await peer.end();
});

test("modern: a retry without the answer is asked again, and an answer to a key never asked is ignored and logged", SLOW, async () => {
  const peer = session();
  peer.send(askCall(1, { n: 1 }));
  const first = await peer.next();
  peer.send(askCall(2, { n: 1 }, { requestState: first.result?.requestState, inputResponses: { "elicitation-7": YES } }));
  const again = await peer.next();
  assert.equal(again.result?.resultType, "input_required");
  assert.deepEqual(again.result?.inputRequests, { "elicitation-1": question(1) });
  await peer.waitForLog(/ignored inputResponses\["elicitation-7"\]: it answers nothing we asked/);
  peer.send(askCall(3, { n: 1 }, { inputResponses: { "elicitation-1": YES } }));
  const unasked = await peer.next();
  assert.equal(unasked.result?.resultType, "input_required", "without a requestState nothing was asked yet");
  await peer.end();
});

test("modern: a requestState that is changed, for another call, not a string or from another run is -32602", SLOW, async () => {
  const peer = session();
  peer.send(askCall(1, { n: 1 }));
  const state = String((await peer.next()).result?.requestState);
  const [body = "", tag = ""] = state.split(".");
  const forged = Buffer.from(JSON.stringify({ asked: [], answers: { "elicitation-1": YES } })).toString("base64url");
  const other = session();
  other.send(askCall(1, { n: 1 }));
  const otherState = String((await other.next()).result?.requestState);
  await other.end();
  const bad = [`${body}x.${tag}`, `${forged}.${tag}`, `${body}.${tag}.${tag}`, body, 42, otherState];
  for (const [index, requestState] of bad.entries()) {
    peer.send(askCall(10 + index, { n: 1 }, { requestState, inputResponses: { "elicitation-1": YES } }));
    const reply = await peer.next();
    assert.deepEqual(reply.error, { code: -32602, message: 'Invalid params: "requestState" is not one we wrote for this call' }, `requestState ${JSON.stringify(requestState)}`);
  }
  peer.send(askCall(20, { n: 2 }, { requestState: state, inputResponses: { "elicitation-1": YES } }));
  assert.equal((await peer.next()).error?.code, -32602, "the state of a call with other arguments");
  peer.send(askCall(21, { n: 1 }, { requestState: state, inputResponses: { "elicitation-1": YES } }));
  assert.equal((await peer.next()).result?.resultType, "complete", "the state itself still works");
  await peer.end();
});

test("modern: inputResponses that is not an object, or an answer that is not an ElicitResult, is -32602", SLOW, async () => {
  const peer = session();
  peer.send(askCall(1, { n: 1 }));
  const requestState = (await peer.next()).result?.requestState;
  const answers = [{ action: "maybe" }, "yes", null, { action: "accept", content: "ok" }];
  for (const [index, answer] of answers.entries()) {
    peer.send(askCall(10 + index, { n: 1 }, { requestState, inputResponses: { "elicitation-1": answer } }));
    assert.deepEqual((await peer.next()).error, { code: -32602, message: 'Invalid params: inputResponses["elicitation-1"] is not an ElicitResult' });
  }
  peer.send(askCall(20, { n: 1 }, { requestState, inputResponses: [YES] }));
  assert.deepEqual((await peer.next()).error, { code: -32602, message: 'Invalid params: "inputResponses" must be an object' });
  peer.send(askCall(21, { n: 1 }, { requestState, inputResponses: { "elicitation-1": { action: "accept", content: { ok: "yes" } } } }));
  const misfit = await peer.next();
  assert.equal(misfit.result?.isError, true, "an answer that does not fit the form is the tool's error");
  assert.equal(textOf(misfit), 'The answer does not fit: "ok" must be a boolean');
  const { stderr } = await peer.end();
  assert.match(stderr, /tool "ask" failed: The answer does not fit: "ok" must be a boolean\n/, "one line, no stack");
});

test("modern: a client that did not declare elicitation, or only URL mode, is never asked: a handler that lets the refusal pass answers -32021", SLOW, async () => {
  const peer = session();
  peer.send(askCall(1, { n: 1 }, {}, {}), askCall(2, { n: 1 }, {}, { elicitation: { url: {} } }));
  const replies = [await peer.next(), await peer.next()];
  assert.deepEqual(replies.map((reply) => reply.id).sort(), [1, 2]);
  for (const reply of replies) {
    // 2026-07-28 basic/index: a request that needs a capability the client did not declare
    // MUST get MissingRequiredClientCapabilityError, naming it.
    const data = { requiredCapabilities: { elicitation: {} } };
    assert.deepEqual(reply.error, { code: -32021, message: "This client does not offer elicitation", data });
  }
  peer.send(askCall(3, { n: 1 }, {}, { elicitation: { form: {}, url: {} } }));
  assert.equal((await peer.next()).result?.resultType, "input_required");
  await peer.end();
});

/** A legacy session: initialize with these capabilities, then the caller's messages. */
function legacySession(capabilities: object) {
  const peer = session();
  const params = { protocolVersion: "2025-11-25", capabilities, clientInfo: { name: "test", version: "1" } };
  peer.send({ id: 0, method: "initialize", params }, { method: "notifications/initialized" });
  return peer;
}

/** A legacy tools/call of `ask`. */
function legacyAsk(id: number, n: number) {
  return { id, method: "tools/call", params: { name: "ask", arguments: { n } } };
}

test("legacy: the server asks with its own elicitation/create request, and the client's answers complete the call", SLOW, async () => {
  const peer = legacySession({ elicitation: {} });
  assert.equal((await peer.next()).id, 0);
  peer.send(legacyAsk(1, 2));
  const first = await peer.next();
  assert.deepEqual(first, { jsonrpc: "2.0", id: "elicitation-1", ...question(1) });
  peer.send({ id: "elicitation-1", result: YES });
  const second = await peer.next();
  assert.deepEqual(second, { jsonrpc: "2.0", id: "elicitation-2", ...question(2) });
  peer.send({ id: "elicitation-2", result: { action: "decline" } });
  const done = await peer.next();
  assert.equal(done.id, 1);
  assert.deepEqual(JSON.parse(textOf(done)), { answers: [YES, { action: "decline" }], starts: 1 }, "one run: legacy never re-runs");
  assert.equal(done.result?.resultType, undefined);
  await peer.end();
});

test("legacy: an error response, or an answer that is not an ElicitResult, is the tool's error", SLOW, async () => {
  const peer = legacySession({ elicitation: { form: {} } });
  await peer.next();
  peer.send(legacyAsk(1, 1));
  const asked = await peer.next();
  peer.send({ id: asked.id, error: { code: -32600, message: "User rejected" } });
  const failed = await peer.next();
  assert.equal(failed.result?.isError, true);
  assert.equal(textOf(failed), 'The client answered with an error: "User rejected"');
  peer.send(legacyAsk(2, 1));
  const again = await peer.next();
  assert.equal(again.id, "elicitation-2");
  peer.send({ id: "elicitation-2", result: { action: "yes" } });
  assert.equal(textOf(await peer.next()), "The answer is not an ElicitResult");
  const { stderr } = await peer.end();
  assert.doesNotMatch(stderr, /    at /, "no stack: these are the client's failures, not bugs");
});

test("legacy: a response that no request waits for is logged and dropped, and nothing is written", SLOW, async () => {
  const peer = legacySession({ elicitation: {} });
  await peer.next();
  peer.send(legacyAsk(1, 1));
  await peer.next();
  peer.send({ id: "elicitation-1", result: YES }, { id: "elicitation-1", result: YES }, { id: 99, result: {} }, { id: null, error: { code: -32700, message: "Parse error" } });
  await peer.waitForLog(/ignored a response to null/);
  const { stdout, stderr } = await peer.end();
  assert.match(stderr, /ignored a response to "elicitation-1": no request of ours waits for it/);
  assert.match(stderr, /ignored a response to 99: no request of ours waits for it/);
  assert.equal(stdout.split("\n").filter((text) => text !== "").length, 3, "initialize, the request, the call's result");
});

test("legacy: cancelling the call cancels its elicitation, and the call gets no response", SLOW, async () => {
  const peer = legacySession({ elicitation: {} });
  await peer.next();
  peer.send(legacyAsk(1, 1));
  await peer.next();
  peer.send({ method: "notifications/cancelled", params: { requestId: 1, reason: "User pressed Esc" } });
  const cancelled = await peer.next();
  assert.deepEqual(cancelled, { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "elicitation-1", reason: "The tool call was cancelled" } });
  peer.send({ id: "elicitation-1", result: YES }, { id: 2, method: "ping" });
  assert.deepEqual(await peer.next(), { jsonrpc: "2.0", id: 2, result: {} }, "the late answer is dropped; no result for call 1");
  const { stderr, code } = await peer.end();
  assert.match(stderr, /tool "ask" stopped: This operation was aborted\n/);
  assert.equal(code, 0);
});

test("legacy: at the end of input a call that waits for an answer is answered with a tool error", SLOW, async () => {
  const peer = legacySession({ elicitation: {} });
  await peer.next();
  peer.send(legacyAsk(1, 1));
  await peer.next();
  const { stdout, code } = await peer.end();
  const last: Wire = JSON.parse(stdout.trim().split("\n").at(-1) ?? "");
  assert.equal(last.id, 1);
  assert.equal(textOf(last), "The client closed its input before it answered");
  assert.equal(code, 0);
});

test("legacy: a call on a last line with no newline asks its question, and the end of input then answers it with a tool error", SLOW, async () => {
  const peer = start(process.execPath, [server]);
  running.add(peer.child);
  const initialize = { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: { elicitation: {} }, clientInfo: { name: "test", version: "1" } } };
  // The end of input answers the unfinished last line first, then gives up the questions that wait.
  peer.child.stdin.end(`${JSON.stringify(initialize)}\n${JSON.stringify({ jsonrpc: "2.0", ...legacyAsk(1, 1) })}`);
  const { stdout, code } = await peer.finish;
  assert.equal(code, 0);
  const messages: Wire[] = stdout.trim().split("\n").map((text) => JSON.parse(text));
  assert.deepEqual(messages.map(({ id, method }) => method ?? id), [0, "elicitation/create", 1], stdout);
  assert.equal(textOf(messages[2] ?? {}), "The client closed its input before it answered");
});

test("legacy: a client that declared no elicitation gets a tool error and no request", SLOW, async () => {
  const peer = legacySession({ roots: {} });
  await peer.next();
  peer.send(legacyAsk(1, 1));
  const reply = await peer.next();
  assert.equal(reply.id, 1);
  assert.equal(textOf(reply), "This client does not offer elicitation");
  await peer.end();
});

test("a handler that never awaits its elicit does not bring the server down, in either era", SLOW, async () => {
  const modern = session();
  modern.send({ id: 1, method: "tools/call", params: { name: "ask_and_forget", arguments: {}, _meta: modernMeta({}) } });
  assert.equal(textOf(await modern.next()), "asked, and did not wait");
  await modern.waitForLog(/unhandled rejection: ClientError: This client does not offer elicitation/);
  modern.send(askCall(2, { n: 1 }, {}, {}));
  assert.equal((await modern.next()).id, 2, "the server goes on");
  assert.equal((await modern.end()).code, 0);
  const legacy = legacySession({ elicitation: {} });
  await legacy.next();
  legacy.send({ id: 1, method: "tools/call", params: { name: "ask_and_forget", arguments: {} } });
  const written = [await legacy.next(), await legacy.next()];
  assert.deepEqual(written.map((message) => message.id).sort(), [1, "elicitation-1"]);
  // At the end of input its question is rejected with no one to catch it, as the server exits.
  const { code, stdout } = await legacy.end();
  assert.equal(stdout.split("\n").filter((text) => text !== "").length, 3, "initialize, the question, the result");
  assert.equal(code, 0);
});

test("legacy: a call cancelled before its handler asks sends no question at all", SLOW, async () => {
  const peer = legacySession({ elicitation: {} });
  await peer.next();
  peer.send({ id: 1, method: "tools/call", params: { name: "ask_later", arguments: { ms: 200 } } });
  peer.send({ method: "notifications/cancelled", params: { requestId: 1, reason: "never mind" } });
  await peer.waitForLog(/tool "ask_later" stopped: This operation was aborted/);
  peer.send({ id: 2, method: "ping" });
  assert.deepEqual(await peer.next(), { jsonrpc: "2.0", id: 2, result: {} }, "no elicitation/create before the ping's answer");
  const { stdout, code } = await peer.end();
  assert.doesNotMatch(stdout, /elicitation\/create/);
  assert.equal(code, 0);
});

test("legacy: questions that wait for the client are bounded: past 1,000, elicit rejects and nothing is sent", SLOW, async () => {
  const peer = legacySession({ elicitation: {} });
  await peer.next();
  // One call that asks 1,001 questions at once: the first 1,000 go out, the last is refused.
  peer.send({ id: 1, method: "tools/call", params: { name: "ask", arguments: { n: 1001, together: true } } });
  await waitUntil(() => peer.written().length >= 1 + 1000, "1,000 questions", 20_000);
  const { stdout, code } = await peer.end();
  const written: Wire[] = stdout.trim().split("\n").map((text) => JSON.parse(text));
  assert.equal(written.filter((message) => message.method === "elicitation/create").length, 1000);
  const last = written.at(-1);
  assert.equal(last?.id, 1);
  assert.equal(textOf(last ?? {}), "1000 questions already wait for the client");
  assert.equal(code, 0);
});
