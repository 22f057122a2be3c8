/**
 * `wrap show`: the log as a person reads it, one line per message, fitted to 80 columns when
 * stdout is not a terminal, redacted by default, filtered by method or errors; and
 * `--follow`, which goes on printing as wrap appends, until SIGINT.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { appendFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { lines, run, start, tempFolder, waitUntil, wrapPath } from "./helpers.ts";

/** A session by hand, with fixed times: a tool error, progress, a server request, stderr. */
const LOG = [
  "2026-12-04T10:00:00.000Z # start pid 1: node server.mjs",
  '2026-12-04T10:00:00.010Z → {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"token":"sk-0123456789abcdefghij"}}}',
  '2026-12-04T10:00:00.012Z ← (2.0 ms) {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"no"}],"isError":true}}',
  '2026-12-04T10:00:00.030Z ← {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2,"total":3}}',
  '2026-12-04T10:00:00.050Z ← {"jsonrpc":"2.0","id":"s1","method":"roots/list"}',
  '2026-12-04T10:00:00.053Z → (3.0 ms) {"jsonrpc":"2.0","id":"s1","result":{"roots":[]}}',
  '2026-12-04T10:00:00.060Z → [CRLF] {"jsonrpc":"2.0","id":2,"method":"ping"}',
  '2026-12-04T10:00:00.061Z ← (1.0 ms) {"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found: ping"}}',
  "2026-12-04T10:00:00.080Z ! [server] a log line",
  "2026-12-04T10:00:01.000Z # exit code 0",
  "",
].join("\n");

/** The hand-written log in a folder of its own. */
function logFile(): string {
  const path = join(tempFolder("show-"), "wire.log");
  writeFileSync(path, LOG);
  return path;
}

/** Runs `wrap show` with its arguments, stdout a pipe. */
function show(...args: string[]) {
  return run(process.execPath, [wrapPath, "show", ...args], "", { env: { ...process.env, NO_COLOR: "" } });
}

test("show prints one line per message: time, direction, what it is, redacted", async () => {
  const { code, stdout } = await show(logFile());
  assert.equal(code, 0);
  assert.deepEqual(lines(stdout), [
    "─── # start pid 1: node server.mjs",
    '+0.010s → tools/call add #1 {"a":1,"token":"[redacted]"}',
    '+0.012s ← #1 2.0 ms isError no',
    "+0.030s ← notifications/progress 2/3",
    '+0.050s ← roots/list #"s1"',
    '+0.053s → #"s1" 3.0 ms result {"roots":[]}',
    "+0.060s → [CRLF] ping #2",
    "+0.061s ← #2 1.0 ms error -32601 Method not found: ping",
    "+0.080s ! [server] a log line",
    "+1.000s # exit code 0",
  ]);
  for (const line of lines(stdout)) assert.ok(Array.from(line).length <= 80, line);
});

test("--no-redact shows the secret, and a long line is cut to 80 columns with …", async () => {
  const { stdout } = await show("--no-redact", logFile());
  const call = lines(stdout)[1] ?? "";
  assert.match(call, /sk-0123456789abcdefghij/);
  const long = join(tempFolder("show-long-"), "wire.log");
  writeFileSync(long, `2026-12-04T10:00:00.000Z ! ${"x".repeat(200)}\n`);
  const [line] = lines((await show(long)).stdout);
  assert.equal(Array.from(line ?? "").length, 80);
  assert.ok(line?.endsWith("…"));
});

test("--method keeps a method's requests and their responses, --errors the failures", async () => {
  const byMethod = await show("--method", "tools/call", logFile());
  assert.deepEqual(lines(byMethod.stdout).slice(1).map((line) => line.slice(0, 20)), [
    "+0.010s → tools/call",
    "+0.012s ← #1 2.0 ms ",
  ]);
  const errors = await show("--errors", logFile());
  assert.deepEqual(lines(errors.stdout).slice(1).map((line) => line.slice(8, 14)), ["← #1 2", "← #2 1"]);
});

test("show --follow prints what wrap appends as it records, and ends at SIGINT with 0", { timeout: 30_000 }, async () => {
  const logPath = join(tempFolder("show-follow-"), "wire.log");
  const recorder = start(process.execPath, [wrapPath, "--log", logPath]);
  const call = (id: number) => `${JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "add", arguments: { a: id, b: 1 } } })}\n`;
  recorder.child.stdin.write(call(1));
  await waitUntil(() => recorder.output().includes('"id":1'), "the first answer", 20_000);
  const follower = start(process.execPath, [wrapPath, "show", "--follow", logPath]);
  await waitUntil(() => follower.output().includes(`← #1`), "the first answer shown", 20_000);
  recorder.child.stdin.write(call(2));
  await waitUntil(() => follower.output().includes("tools/call add #2"), "a request made later", 20_000);
  await waitUntil(() => follower.output().includes("result 2 + 1 = 3"), "its answer", 20_000);
  recorder.child.stdin.end();
  await recorder.finish;
  await waitUntil(() => follower.output().includes("# exit code 0"), "the server's exit", 20_000);
  follower.child.kill("SIGINT");
  const ended = await follower.finish;
  assert.equal(ended.code, 0);
  assert.equal(ended.stderr, "");
});

test("show --follow waits for a half-written line, and says so when the log is cut", { timeout: 30_000 }, async () => {
  const logPath = join(tempFolder("show-partial-"), "wire.log");
  writeFileSync(logPath, "2026-12-04T10:00:00.000Z # start pid 1: node server.mjs\n");
  const follower = start(process.execPath, [wrapPath, "show", "--follow", logPath]);
  await waitUntil(() => follower.output().includes("start pid 1"), "the start line", 20_000);
  appendFileSync(logPath, "2026-12-04T10:00:00.500Z ! [server] half");
  await new Promise((go) => setTimeout(go, 1_500));
  assert.doesNotMatch(follower.output(), /half/);
  appendFileSync(logPath, " and whole\n");
  await waitUntil(() => follower.output().includes("+0.500s ! [server] half and whole"), "the whole line", 20_000);
  writeFileSync(logPath, "2026-12-04T11:00:00.000Z # start pid 2: node again.mjs\n");
  await waitUntil(() => follower.output().includes("start pid 2"), "the new log", 20_000);
  assert.match(follower.output(), /the log was cut or replaced/);
  follower.child.kill("SIGINT");
  assert.equal((await follower.finish).code, 0);
});

test("show --follow waits for a log that does not exist yet, saying so once, and reads each new log from its start", { timeout: 60_000 }, async () => {
  const folder = tempFolder("show-absent-");
  const logPath = join(folder, "wire.log");
  const follower = start(process.execPath, [wrapPath, "show", "--follow", logPath]);
  try {
    const waiting = () => follower.errors().split("\n").filter((line) => line.startsWith("wrap: no log at")).length;
    await waitUntil(() => waiting() === 1, "the word that it waits", 20_000);
    // Longer than the one-second look: still said once, as tail -F says it.
    await new Promise((go) => setTimeout(go, 2_500));
    assert.equal(follower.errors(), `wrap: no log at ${logPath} yet: waiting for it\n`);
    writeFileSync(logPath, "2026-12-04T10:00:00.000Z # start pid 1: node first.mjs\n");
    await waitUntil(() => follower.output().includes("start pid 1"), "the log once it exists", 20_000);
    // Replaced by another, longer file, moved over it.
    const other = join(folder, "other.log");
    writeFileSync(other, "2026-12-04T11:00:00.000Z # start pid 2: node second.mjs\n2026-12-04T11:00:00.500Z ! [server] up\n");
    renameSync(other, logPath);
    await waitUntil(() => follower.output().includes("+0.500s ! [server] up"), "the log that replaced it", 20_000);
    // Removed, then made again: it waits, says so once more, and reads the new one whole.
    unlinkSync(logPath);
    await waitUntil(() => waiting() === 2, "the word that it waits again", 20_000);
    writeFileSync(logPath, "2026-12-04T12:00:00.000Z # start pid 3: node third.mjs\n");
    await waitUntil(() => follower.output().includes("start pid 3"), "the new log", 20_000);
    assert.equal(follower.output().match(/the log was cut or replaced/g)?.length, 2);
    assert.equal(waiting(), 2);
  } finally {
    follower.child.kill("SIGINT");
  }
  assert.equal((await follower.finish).code, 0);
});

test("show of a missing log says why in one line, and misuse exits 2", async () => {
  const missing = await show(join(tempFolder("show-missing-"), "nope.log"));
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /^wrap: cannot read .*nope\.log: Error: ENOENT[^\n]*\n$/);
  assert.equal((await show("--json", logFile())).code, 2);
});
