/**
 * The server against input and output of any size: nothing it holds grows without bound, and it
 * neither crashes nor stops answering. A chunk's replies go out in pieces, so 600 pipelined
 * results of 1 MiB are all answered (one string of them all would pass V8's longest); a stderr
 * that the client never reads holds at most a bounded backlog of log lines, and the server says
 * how many it dropped once stderr drains; and its log escapes what could drive a terminal.
 * Memory under a million such lines is measured by bench/server-stress.ts, not here.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bundle } from "../build.mjs";
import { root, run, serverPath, track, withEntries } from "./helpers.ts";

/** A tool whose result is one mebibyte of text, and two whose results JSON cannot hold: a
 * BigInt, returned at once, and an object that holds itself, through a Promise. */
const TOOLS = `  {
    name: "big",
    description: "Return a mebibyte of text",
    inputSchema: { type: "object", properties: {} },
    handler: () => toolResult("x".repeat(1024 * 1024), false),
  },
  {
    name: "bigint",
    description: "Return a BigInt, as some database drivers do",
    inputSchema: { type: "object", properties: {} },
    handler: () => ({ ...toolResult("n", false), structuredContent: { n: 10n ** 20n } }),
  },
  {
    name: "cycle",
    description: "Return an object that holds itself",
    inputSchema: { type: "object", properties: {} },
    handler: async () => {
      const looped: { [key: string]: unknown } = {};
      looped.self = looped;
      return { ...toolResult("x", false), structuredContent: looped };
    },
  },`;

let folder = "";
let bigServer = "";

before(async () => {
  folder = mkdtempSync(join(tmpdir(), "sizes-"));
  const source = withEntries(readFileSync(join(root, "server.ts"), "utf8"), [TOOLS], "");
  writeFileSync(join(folder, "server.ts"), source);
  bigServer = join(folder, "server.mjs");
  assert.deepEqual(await bundle(join(folder, "server.ts"), bigServer), []);
});
after(() => rmSync(folder, { recursive: true, force: true }));

test("600 pipelined calls of a tool that returns 1 MiB are all answered, and the server exits 0", { timeout: 60_000 }, async () => {
  const child = track(spawn(process.execPath, [bigServer], { stdio: ["pipe", "pipe", "ignore"] }));
  try {
    const calls = Array.from({ length: 600 }, (_, id) =>
      `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"big","arguments":{}}}\n`);
    child.stdin.end(calls.join(""));
    // Counted as they come, never held: 600 MiB would pass V8's longest string here too.
    let answers = 0;
    let bytes = 0;
    child.stdout.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
      for (let at = chunk.indexOf(0x0a); at !== -1; at = chunk.indexOf(0x0a, at + 1)) answers += 1;
    });
    const [code] = await once(child, "exit");
    assert.equal(answers, 600);
    assert.ok(bytes > 600 * 1024 * 1024, `${bytes} bytes`);
    assert.equal(code, 0);
  } finally {
    child.kill();
  }
});

test("a result that JSON cannot hold is answered -32603 in place, and the session goes on", async () => {
  const call = (id: number, name: string) =>
    `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${name}","arguments":{}}}`;
  const input = [call(1, "bigint"), call(2, "cycle"), '{"jsonrpc":"2.0","id":3,"method":"ping"}'];
  const { stdout, stderr, code } = await run(process.execPath, [bigServer], `${input.join("\n")}\n`);
  const internal = { code: -32603, message: "Internal error" };
  assert.deepEqual(stdout.trim().split("\n").map((line) => JSON.parse(line)), [
    { jsonrpc: "2.0", id: 1, error: internal },
    { jsonrpc: "2.0", id: 3, result: {} },
    { jsonrpc: "2.0", id: 2, error: internal },
  ]);
  assert.match(stderr, /a reply could not be written as JSON: TypeError: Do not know how to serialize a BigInt/);
  assert.match(stderr, /a reply could not be written as JSON: TypeError: Converting circular structure/);
  assert.equal(code, 0);
});

test("a stderr nobody reads holds a bounded backlog: lines past it are dropped, and then counted", { timeout: 60_000 }, async () => {
  const child = track(spawn(process.execPath, [serverPath], { stdio: "pipe" }));
  try {
    // Not read yet: the pipe fills, and what the server logs waits in its memory.
    child.stderr.pause();
    let stdout = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    // Each response that no request waits for is logged, and answered with nothing.
    const unasked = '{"jsonrpc":"2.0","id":"nobody","result":{}}\n'.repeat(100_000);
    child.stdin.write(`${unasked}{"jsonrpc":"2.0","id":1,"method":"ping"}\n`);
    await waitFor(() => stdout.includes('"id":1'));
    // The server answered with its stderr full; now it is read, and the count comes.
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.stderr.resume();
    await waitFor(() => /\[server\] dropped \d+ log lines: stderr was not read\n/.test(stderr));
    const dropped = Number(/dropped (\d+) log lines/.exec(stderr)?.[1]);
    const kept = stderr.split("\n").filter((line) => line.includes('ignored a response to "nobody"'));
    assert.equal(kept.length + dropped, 100_000, "every line is either written or counted");
    assert.ok(dropped > 50_000, `${dropped} dropped`);
    child.stdin.end();
    const [code] = await once(child, "exit");
    assert.equal(code, 0);
  } finally {
    child.kill();
  }
});

test("the log escapes C1, bidi and other controls that could drive a terminal", async () => {
  const name = "a\u202eb\u009b2Jc\u2066d\u001b]0;title\u0007e";
  const line = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { clientInfo: { name } } });
  const { stderr, code } = await run(process.execPath, [serverPath], `${line}\n`);
  assert.match(stderr, /client=\{"name":"a\\u202eb\\u009b2Jc\\u2066d\\u001b\]0;title\\u0007e"\}/);
  assert.doesNotMatch(stderr, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
  assert.equal(code, 0);
});

/** Resolves once `check()` holds, looking every 10 ms; fails after 30 s. */
async function waitFor(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((go) => setTimeout(go, 10));
  }
}
