/**
 * The tool runtime over real pipes: tools whose handlers are async, throw, report progress and
 * are cancelled (tests/fixtures/runtime-tools.ts), pasted into a copy of server.ts and built.
 * What the spec asks (2025-11-25 basic/utilities/cancellation and progress, server/tools
 * §Error Handling): requests do not wait for each other; a cancelled request gets no
 * response; progress carries the request's own token, rises, and stops with the call; a
 * failing tool is a result the model reads; the end of input answers what is in flight.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { messages, run, start, waitUntil, type Finished } from "./helpers.ts";
import { build } from "./fixtures/runtime-tools.ts";

/** A test that waits for slow calls: generous, on a loaded 2-core machine. */
const SLOW = { timeout: 30_000 };

let server = "";
let remove = () => {};

before(async () => {
  ({ server, remove } = await build());
});
after(() => remove());

/** One JSON-RPC message as a line. */
function line(message: object): string {
  return `${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`;
}

/** A tools/call request; `token` puts a progressToken in its `_meta`. */
function call(id: number | string, name: string, args: object, token?: string | number): string {
  const params = token === undefined ? { name, arguments: args } : { name, arguments: args, _meta: { progressToken: token } };
  return line({ id, method: "tools/call", params });
}

/** A notifications/cancelled for a request id (or whatever params a test gives). */
function cancelled(params: object): string {
  return line({ method: "notifications/cancelled", params });
}

/** A ping request. */
function ping(id: number): string {
  return line({ id, method: "ping" });
}

/** Starts the built server and returns it with a way to wait for its `count`-th stdout line. */
function session() {
  const peer = start(process.execPath, [server]);
  const linesSoFar = () => peer.output().split("\n").filter((text) => text !== "");
  const waitForLines = async (count: number): Promise<unknown[]> => {
    await waitUntil(() => linesSoFar().length >= count, `${count} lines on stdout`, 20_000);
    return linesSoFar().map((text) => JSON.parse(text));
  };
  const waitForLog = async (pattern: RegExp): Promise<void> => {
    await waitUntil(() => pattern.test(peer.errors()), `${pattern} on stderr`, 20_000);
  };
  return { ...peer, waitForLines, waitForLog };
}

/** The ids of the responses among messages, in order. */
function ids(written: readonly unknown[]): unknown[] {
  return written.flatMap((message) => (isResponse(message) ? [message.id] : []));
}

/** Whether a message is a response (it has an id and no method). */
function isResponse(message: unknown): message is { id: unknown; result?: unknown; error?: unknown } {
  return typeof message === "object" && message !== null && "id" in message && !("method" in message);
}

/** The progress notifications among messages, by their params. */
function progressOf(written: readonly unknown[]): unknown[] {
  return written.flatMap((message) => {
    const isProgress = typeof message === "object" && message !== null && "method" in message && message.method === "notifications/progress";
    return isProgress && "params" in message ? [message.params] : [];
  });
}

test("a ping sent after a slow call is answered first, and the call's result follows", SLOW, async () => {
  const { stdout, code }: Finished = await run(process.execPath, [server], call(1, "slow", { ms: 300 }) + ping(2));
  const written = messages(stdout);
  assert.deepEqual(ids(written), [2, 1]);
  assert.deepEqual(written[1], { jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "slept 300 ms" }] } });
  assert.equal(code, 0);
});

test("at the end of input every call in flight is answered before the server exits", SLOW, async () => {
  const input = [1, 2, 3].map((id) => call(id, "slow", { ms: 200 * id })).join("");
  const { stdout, code } = await run(process.execPath, [server], input);
  assert.deepEqual(ids(messages(stdout)), [1, 2, 3]);
  assert.equal(code, 0);
});

test("progress carries the request's own token, in steps that rise, then the result", SLOW, async () => {
  const { stdout } = await run(process.execPath, [server], call(7, "slow", { ms: 300, steps: 3 }, "tok-7"));
  const written = messages(stdout);
  assert.deepEqual(progressOf(written), [1, 2, 3].map((progress) => ({ progressToken: "tok-7", progress, total: 3, message: `step ${progress}` })));
  assert.deepEqual(ids(written), [7], "the result comes last");
  assert.ok(isResponse(written.at(-1)));
});

test("a call without a progressToken gets no progress notifications", SLOW, async () => {
  const { stdout } = await run(process.execPath, [server], call(1, "slow", { ms: 200, steps: 4 }));
  assert.deepEqual(progressOf(messages(stdout)), []);
  assert.deepEqual(ids(messages(stdout)), [1]);
});

test("progress that does not rise is dropped, and none is sent after the response", SLOW, async () => {
  const peer = session();
  peer.child.stdin.write(call(1, "progress_misuse", {}, 42));
  const written = await peer.waitForLines(3);
  await new Promise((go) => setTimeout(go, 300));
  peer.child.stdin.end();
  const { stdout } = await peer.finish;
  assert.deepEqual(progressOf(written), [{ progressToken: 42, progress: 1 }, { progressToken: 42, progress: 2, total: 2, message: "done" }]);
  assert.equal(messages(stdout).length, 3, `nothing after the response:\n${stdout}`);
});

test("a cancelled call gets no response, its signal aborts, and its progress stops", SLOW, async () => {
  const peer = session();
  peer.child.stdin.write(call(5, "slow", { ms: 20_000, steps: 100 }, "p5"));
  await peer.waitForLines(1);
  peer.child.stdin.write(cancelled({ requestId: 5, reason: "User requested cancellation" }));
  await peer.waitForLog(/tool "slow" stopped/);
  const before = peer.output();
  await new Promise((go) => setTimeout(go, 600));
  peer.child.stdin.end(ping(6));
  const { stdout, stderr, code } = await peer.finish;
  assert.equal(stdout.slice(before.length), line({ id: 6, result: {} }), "only the ping's answer after the cancellation");
  assert.deepEqual(ids(messages(stdout)), [6]);
  assert.match(stderr, /cancelled request 5: "User requested cancellation"/);
  assert.match(stderr, /tool "slow" stopped: The operation was aborted\n/);
  assert.equal(code, 0);
});

test("a cancelled call whose handler ignores its signal is not waited for at the end of input", SLOW, async () => {
  const began = Date.now();
  const input = call(1, "stubborn", { ms: 15_000 }) + cancelled({ requestId: 1 }) + ping(2);
  const { stdout, code } = await run(process.execPath, [server], input);
  assert.deepEqual(ids(messages(stdout)), [2]);
  assert.equal(code, 0);
  assert.ok(Date.now() - began < 10_000, "the server exited without waiting out the handler");
});

test("cancellations of unknown, malformed and finished ids are ignored, never answered", SLOW, async () => {
  const input = [
    call(1, "add", { a: 1, b: 2 }),
    call(2, "slow", { ms: 50 }),
    cancelled({ requestId: 1, reason: "finished already" }),
    cancelled({ requestId: 99, reason: "never sent" }),
    cancelled({ requestId: "2" }),
    cancelled({ requestId: { id: 2 } }),
    cancelled({}),
    line({ method: "notifications/cancelled" }),
    ping(3),
  ].join("");
  const { stdout, stderr, code } = await run(process.execPath, [server], input);
  const written = messages(stdout);
  assert.deepEqual(ids(written).sort(), [1, 2, 3], "call 2 was not cancelled by a string id or an object");
  assert.equal(written.filter((message) => isResponse(message) && message.error !== undefined).length, 0);
  assert.equal(stderr.match(/ignored a cancellation of request/g)?.length, 6);
  assert.match(stderr, /ignored a cancellation of request 99: "never sent"/);
  assert.equal(code, 0);
});

test("a handler that throws or rejects is a tool error the model reads, its stack on stderr", SLOW, async () => {
  const input = call(1, "fail_sync", {}) + call(2, "fail_async", {}) + ping(3);
  const { stdout, stderr, code } = await run(process.execPath, [server], input);
  const byId = new Map(messages(stdout).filter(isResponse).map((message) => [message.id, message]));
  const toolError = (text: string) => ({ content: [{ type: "text", text }], isError: true });
  assert.deepEqual(byId.get(1)?.result, toolError("sync failure"));
  assert.deepEqual(byId.get(2)?.result, toolError("async failure"));
  assert.deepEqual(byId.get(3)?.result, {});
  assert.match(stderr, /tool "fail_sync" failed: Error: sync failure\n\s+at /);
  assert.match(stderr, /tool "fail_async" failed: TypeError: async failure\n\s+at /);
  assert.equal(code, 0);
});

test("a method that throws or rejects gets -32603 Internal error, and the session goes on", async () => {
  const input = line({ id: 1, method: "debug/throw" }) + line({ id: 3, method: "debug/reject" }) + ping(2);
  const { stdout, stderr, code } = await run(process.execPath, [server], input);
  const internal = { code: -32603, message: "Internal error" };
  assert.deepEqual(messages(stdout), [
    { jsonrpc: "2.0", id: 1, error: internal },
    { jsonrpc: "2.0", id: 2, result: {} },
    { jsonrpc: "2.0", id: 3, error: internal },
  ]);
  assert.match(stderr, /"debug\/throw" failed: Error: a bug\n\s+at /);
  assert.match(stderr, /"debug\/reject" failed: Error: a later bug\n\s+at /);
  assert.equal(code, 0);
});

test("a batch with a slow call is answered with one array once every entry is done", SLOW, async () => {
  const batch = `[${[call(1, "slow", { ms: 200 }), line({ method: "notifications/initialized" }), ping(2)].map((text) => text.trim()).join(",")}]\n`;
  const { stdout } = await run(process.execPath, [server], batch + ping(3));
  const written = messages(stdout);
  assert.deepEqual(written[0], { jsonrpc: "2.0", id: 3, result: {} }, "the lone ping is not held by the batch");
  assert.ok(Array.isArray(written[1]));
  assert.deepEqual(ids(written[1]), [1, 2]);
  assert.equal(written.length, 2);
});

test("a batch whose slow call is cancelled is answered with its other entries", SLOW, async () => {
  const batch = `[${[call(1, "stubborn", { ms: 15_000 }), ping(2)].map((text) => text.trim()).join(",")}]\n`;
  const { stdout } = await run(process.execPath, [server], batch + cancelled({ requestId: 1 }));
  assert.deepEqual(messages(stdout), [[{ jsonrpc: "2.0", id: 2, result: {} }]]);
});

test("a handler can take signal and progress out of its context", SLOW, async () => {
  const { stdout } = await run(process.execPath, [server], call(1, "destructured", {}, "d"));
  assert.deepEqual(messages(stdout), [
    { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "d", progress: 1, total: 1 } },
    { jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "aborted: false" }] } },
  ]);
});

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  test(`${signal} ends the server at once, even with a call in flight`, SLOW, async () => {
    const peer = session();
    peer.child.stdin.write(call(1, "slow", { ms: 20_000 }) + ping(2));
    await peer.waitForLines(1);
    peer.child.kill(signal);
    const ended = await peer.finish;
    assert.equal(ended.signal, signal);
    assert.deepEqual(ids(messages(ended.stdout)), [2]);
  });
}
