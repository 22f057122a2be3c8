/**
 * `wrap stats`: figures per method, each direction apart and per tool, and per session, read
 * from a wire.log as a stream. A hand-written log with fixed times gives exact figures; a
 * session recorded through dist/wrap.mjs gives figures that must match what was sent.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { run, tempFolder, wrapPath } from "./helpers.ts";

/** Two sessions: client requests, a tool error, a server request, progress, tags, stderr. */
const LOG = [
  "2026-12-04T10:00:00.000Z # start pid 1: node server.mjs",
  '2026-12-04T10:00:00.010Z → {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{}}}',
  '2026-12-04T10:00:00.012Z ← (2.0 ms) {"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}',
  '2026-12-04T10:00:00.020Z → {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{}}}',
  '2026-12-04T10:00:00.030Z ← {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}',
  '2026-12-04T10:00:00.040Z ← (20.0 ms) {"jsonrpc":"2.0","id":2,"result":{"content":[]}}',
  '2026-12-04T10:00:00.050Z ← {"jsonrpc":"2.0","id":"s1","method":"roots/list"}',
  '2026-12-04T10:00:00.053Z → (3.0 ms) {"jsonrpc":"2.0","id":"s1","result":{"roots":[]}}',
  '2026-12-04T10:00:00.060Z → {"jsonrpc":"2.0","id":3,"method":"nope"}',
  '2026-12-04T10:00:00.061Z ← (1.0 ms) {"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found: nope"}}',
  '2026-12-04T10:00:00.070Z → [CRLF] {"jsonrpc":"2.0","id":4,"method":"ping"}',
  "2026-12-04T10:00:00.080Z ! [server] a log line",
  "2026-12-04T10:00:01.000Z # exit code 0",
  "a line that is no event",
  "2026-12-04T11:00:00.000Z # start pid 2: node other.mjs",
  '2026-12-04T11:00:00.500Z ← [not JSON-RPC] debug output',
  "",
].join("\n");

/** Runs `wrap stats` with its arguments. */
function stats(...args: string[]) {
  return run(process.execPath, [wrapPath, "stats", ...args], "");
}

/** The hand-written log in a folder of its own. */
function logFile(): string {
  const path = join(tempFolder("stats-"), "wire.log");
  writeFileSync(path, LOG);
  return path;
}

test("stats --json gives each session's figures in the documented shape", async () => {
  const { code, stdout } = await stats("--json", logFile());
  assert.equal(code, 0);
  const { sessions, skipped } = JSON.parse(stdout);
  assert.equal(skipped, 1);
  assert.equal(sessions.length, 2);
  const [first, second] = sessions;
  assert.equal(first.start, "2026-12-04T10:00:00.000Z");
  assert.equal(first.command, "node server.mjs");
  assert.equal(first.lengthMs, 1000);
  const figures = (direction: string, method: string, tool: string | null) => ({ direction, method, tool });
  assert.deepEqual(first.requests, [
    { ...figures("→", "tools/call", "add"), count: 2, errors: 1, p50Ms: 2, p95Ms: 20, maxMs: 20 },
    { ...figures("←", "roots/list", null), count: 1, errors: 0, p50Ms: 3, p95Ms: 3, maxMs: 3 },
    { ...figures("→", "nope", null), count: 1, errors: 1, p50Ms: 1, p95Ms: 1, maxMs: 1 },
    { ...figures("→", "ping", null), count: 1, errors: 0, p50Ms: null, p95Ms: null, maxMs: null },
  ]);
  assert.deepEqual(first.notifications, [{ direction: "←", method: "notifications/progress", count: 1 }]);
  assert.deepEqual(first.messages["→"].count, 5);
  assert.deepEqual(first.messages["←"].count, 5);
  assert.equal(first.unanswered, 1, "the ping was never answered");
  assert.deepEqual(first.tags, { CRLF: 1 });
  assert.equal(first.stderrLines, 1);
  assert.deepEqual(second.tags, { "not JSON-RPC": 1 });
  assert.equal(second.messages["←"].count, 0);
});

test("stats prints the same figures as text, one block per session", async () => {
  const { code, stdout } = await stats(logFile());
  assert.equal(code, 0);
  assert.match(stdout, /^session 1 · 2026-12-04T10:00:00\.000Z · 1\.0 s · node server\.mjs$/m);
  assert.match(stdout, /^ {2}→ tools\/call add +2 +1 +2\.0 +20\.0 +20\.0$/m);
  assert.match(stdout, /^ {2}← roots\/list +1 +0 +3\.0 +3\.0 +3\.0$/m);
  assert.match(stdout, /^ {2}unanswered: 1 · stderr lines: 1 · tags: \[CRLF\] 1$/m);
  assert.match(stdout, /^session 2 · 2026-12-04T11:00:00\.000Z/m);
  assert.match(stdout, /^skipped 1 lines that are not wire\.log events$/m);
});

test("stats of a session recorded through wrap counts what the client sent", async () => {
  const logPath = join(tempFolder("stats-recorded-"), "wire.log");
  const lines = [
    { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "add", arguments: { a: 1, b: 2 } } },
    { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "add", arguments: { a: "1", b: 2 } } },
    { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "nope", arguments: {} } },
    { jsonrpc: "2.0", method: "notifications/initialized" },
  ].map((message) => `${JSON.stringify(message)}\n`).join("");
  await run(process.execPath, [wrapPath, "--log", logPath], lines);
  const { stdout } = await stats("--json", logPath);
  const [session] = JSON.parse(stdout).sessions;
  type Figures = { tool: string; count: number; errors: number };
  const byTool = new Map<string, Figures>(session.requests.map((each: Figures) => [each.tool, each]));
  assert.deepEqual([byTool.get("add")?.count, byTool.get("add")?.errors], [2, 1]);
  assert.deepEqual([byTool.get("nope")?.count, byTool.get("nope")?.errors], [1, 1]);
  assert.equal(session.unanswered, 0);
  assert.ok(session.stderrLines >= 2, "the server's start-up and initialized logs");
  assert.deepEqual(session.notifications, [{ direction: "→", method: "notifications/initialized", count: 1 }]);
});

test("stats of a file that is no wire.log says so, and of a missing file says why in one line", async () => {
  const folder = tempFolder("stats-bad-");
  writeFileSync(join(folder, "notes.txt"), "hello\n\u0000\u0001binary\n");
  const notLog = await stats(join(folder, "notes.txt"));
  assert.equal(notLog.code, 0);
  assert.equal(notLog.stdout, "no session: this file holds no wire.log event\n\nskipped 2 lines that are not wire.log events\n");
  const missing = await stats(join(folder, "missing.log"));
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /^wrap: cannot read .*missing\.log: Error: ENOENT[^\n]*\n$/);
  const misused = await stats("--out", "x", join(folder, "notes.txt"));
  assert.equal(misused.code, 2);
});
