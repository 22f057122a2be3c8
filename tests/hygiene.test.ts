/**
 * wrap's hygiene tags, one test per kind: each crafted line goes through dist/wrap.mjs
 * unchanged, and the log marks it as the tag format says, `<time> <mark> [(rtt) ][tag] line`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { run, wrapPath, tempFolder } from "./helpers.ts";

/** A server that writes the given bytes to stdout, then echoes stdin until it ends. */
function serverWriting(bytes: Buffer): string {
  const folder = tempFolder("hygiene-");
  const path = join(folder, "server.mjs");
  writeFileSync(path, `process.stdout.write(Buffer.from(${JSON.stringify(bytes.toString("base64"))},
    "base64")); process.stdin.resume();\n`);
  return path;
}

/** Runs wrap around a server that writes `output`, with `input` from the client; returns the log. */
async function logOf(output: Buffer, input: string) {
  const logPath = join(tempFolder("hygiene-log-"), "wire.log");
  const finished = await run(process.execPath,
    [wrapPath, "--log", logPath, "--", process.execPath, serverWriting(output)], input);
  const events = readFileSync(logPath, "utf8").split("\n")
    .map((line) => line.replace(/^\S+ /, ""));
  return { ...finished, events };
}

test("a debug line on the server's stdout is tagged [not JSON-RPC], and wrap warns once", async () => {
  const { code, stdout, stderr, events } = await logOf(Buffer.from("debug: one\ndebug: two\n"), "");
  assert.equal(code, 0);
  assert.equal(stdout, "debug: one\ndebug: two\n");
  assert.ok(events.includes("← [not JSON-RPC] debug: one"));
  assert.ok(events.includes("← [not JSON-RPC] debug: two"));
  assert.equal(stderr.match(/not JSON-RPC/g)?.length, 1);
  assert.match(stderr, /"debug: one"/);
});

test("JSON that is not a message is [not JSON-RPC]; a notification and a batch (2025-03-26) are not", async () => {
  const output = '{"debug":1}\n[{"jsonrpc":"2.0","method":"x"}]\n{"jsonrpc":"2.0","method":"x"}\n';
  const { events } = await logOf(Buffer.from(output), "");
  assert.ok(events.includes('← [not JSON-RPC] {"debug":1}'));
  assert.ok(events.includes('← [{"jsonrpc":"2.0","method":"x"}]'));
  assert.ok(events.includes('← {"jsonrpc":"2.0","method":"x"}'));
});

test("CRLF, bytes that are not UTF-8 and a line over 1 MiB are tagged, in the format's order", async () => {
  const big = `{"jsonrpc":"2.0","method":"x","params":"${"y".repeat(1 << 20)}"}`;
  const output = Buffer.concat([Buffer.from('{"jsonrpc":"2.0","method":"x"}\r\n'),
    Buffer.from('{"jsonrpc":"2.0","method":"\xff"}\n', "latin1"), Buffer.from(`${big}\n`)]);
  const { stdout, events } = await logOf(output, "");
  assert.ok(stdout.endsWith(`${big}\n`));
  assert.ok(events.includes('← [CRLF] {"jsonrpc":"2.0","method":"x"}\r'));
  assert.ok(events.includes('← [not UTF-8] {"jsonrpc":"2.0","method":"\ufffd"}'));
  assert.ok(events.some((event) => event.startsWith(`← [${big.length} bytes] {"jsonrpc"`)));
});

test("a response to no request is [no request]; a reused id is [id in use]", async () => {
  const input = '{"jsonrpc":"2.0","id":5,"method":"ping"}\n{"jsonrpc":"2.0","id":5,"method":"ping"}\n';
  const { events } = await logOf(Buffer.from('{"jsonrpc":"2.0","id":9,"result":{}}\n'), input);
  assert.ok(events.includes('← [no request] {"jsonrpc":"2.0","id":9,"result":{}}'));
  assert.ok(events.includes('→ [id in use] {"jsonrpc":"2.0","id":5,"method":"ping"}'));
  assert.ok(events.some((event) => /^# unanswered → 5 "ping" \(waited \d+\.\d ms\)$/.test(event)));
});

test("pairing takes the top-level id, not one nested or inside an escaped string", async () => {
  const input = '{"params":{"id":7,"s":"\\"id\\":8"},"jsonrpc":"2.0","method":"x","id":3}\n';
  const { events } = await logOf(Buffer.from('{"id":3,"result":{"id":7},"jsonrpc":"2.0"}\n'), input);
  assert.ok(events.some((event) => /^← \(\d+\.\d ms\) \{"id":3,/.test(event)));
  assert.ok(!events.some((event) => event.startsWith("# unanswered")));
});
