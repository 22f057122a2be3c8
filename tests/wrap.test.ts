/**
 * dist/wrap.mjs, tested from outside over real pipes: it must pass every byte through unchanged,
 * log every line that crossed, and end as the server it wraps ended. The servers it wraps are
 * dist/server.mjs, tests/fixtures/wrap-child.mjs (a stand-in with one behaviour per mode) and,
 * through the official SDK client, the real thing again.
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { lines, messages, root, runServer, serverPath, start, track, wrapPath } from "./helpers.ts";

/** The stand-in server. */
const childPath = join(root, "tests", "fixtures", "wrap-child.mjs");

/** No test may hang the run: a wrap that never exits fails its test instead. */
const LIMIT = { timeout: 20_000 };

/** One event of a wire.log, its text after the mark kept as raw bytes. */
interface LogEvent {
  time: string;
  mark: string;
  elapsed: number | undefined;
  raw: Buffer;
}

/** One folder for every file these tests write, removed at the end. */
const scratch = mkdtempSync(join(tmpdir(), "wrap-test-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** A fresh folder for one test's files. */
function tempDir(): string {
  return mkdtempSync(join(scratch, "test-"));
}

/** The arguments that make wrap log to `logPath` and run the stand-in server in `mode`. */
function wrapChild(logPath: string, ...mode: string[]): string[] {
  return [wrapPath, "--log", logPath, "--", process.execPath, childPath, ...mode];
}

/** Runs node with `args` and `input` as bytes, and returns how it ended and its stdout and stderr as bytes. */
async function runBytes(args: readonly string[], input: Buffer, options: { cwd?: string } = {}) {
  const child = track(spawn(process.execPath, args, { stdio: "pipe", ...options }));
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
  child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
  child.stdin.end(input);
  const [code, signal] = await once(child, "close");
  return { code, signal, stdout: Buffer.concat(stdout), stderr: Buffer.concat(stderr) };
}

/** Reads a wire.log: every line must be `<ISO time> <mark> <text>`, with `(N ms) ` only on responses. */
function readLog(path: string): LogEvent[] {
  const bytes = readFileSync(path);
  assert.equal(bytes.at(-1), 0x0a, "the log ends with a newline");
  const events: LogEvent[] = [];
  for (let start = 0, end = bytes.indexOf(0x0a); end !== -1; start = end + 1, end = bytes.indexOf(0x0a, start)) {
    const line = bytes.subarray(start, end);
    // The prefix is ASCII and the mark, so decoding a few bytes of it is exact whatever the raw text holds.
    const head = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) ([→←!#]) (?:\((\d+\.\d) ms\) )?(?:\[(?:\d+ bytes|not UTF-8|CRLF|no request|id in use|not JSON-RPC)\] )*/.exec(line.subarray(0, 64).toString());
    assert.ok(head, `not a log line: ${line.subarray(0, 80).toString()}`);
    const [prefix, time = "", mark = "", elapsed] = head;
    events.push({ time, mark, elapsed: elapsed === undefined ? undefined : Number(elapsed), raw: line.subarray(Buffer.byteLength(prefix)) });
  }
  return events;
}

/** The text of a log's events with one mark. */
function texts(events: readonly LogEvent[], mark: string): string[] {
  return events.filter((event) => event.mark === mark).map((event) => event.raw.toString());
}

/** Waits until `read()` holds `text`; fails after five seconds rather than hang the run. */
async function until(read: () => string, text: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!read().includes(text)) {
    if (Date.now() > deadline) assert.fail(`never saw ${JSON.stringify(text)} in ${JSON.stringify(read())}`);
    await delay(10);
  }
}

/** Whether a process with this pid still exists (a reaped child does not). */
function exists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    assert.equal(error instanceof Error && "code" in error ? error.code : error, "ESRCH");
    return false;
  }
}

test("bytes pass through unchanged both ways, and the log holds each line's raw bytes", LIMIT, async () => {
  const logPath = join(tempDir(), "wire.log");
  // The lines as sent, each but the last followed by "\n": so the first ends in CRLF.
  const sent = [
    Buffer.from('{"jsonrpc":"2.0","id":1,"method":"ping"}\r'),
    Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(" is not UTF-8")]),
    Buffer.alloc(1 << 20, "x"),
    Buffer.from("a last line without newline"),
  ];
  const input = Buffer.concat(sent.flatMap((line, index) => (index < sent.length - 1 ? [line, Buffer.from("\n")] : [line])));
  const { code, stdout, stderr } = await runBytes(wrapChild(logPath, "echo"), input);
  assert.equal(code, 0);
  // The echoing server's stdout is not JSON-RPC, which wrap says once.
  assert.match(stderr.toString(), /^wrap: the server wrote a line to stdout that is not JSON-RPC: /);
  assert.ok(stdout.equals(input), "stdout is the input, byte for byte");
  const events = readLog(logPath);
  for (const mark of ["→", "←"]) {
    const raws = events.filter((event) => event.mark === mark).map((event) => event.raw);
    assert.equal(raws.length, sent.length);
    raws.forEach((raw, index) => assert.ok(raw.equals(sent[index] ?? Buffer.alloc(0)), `${mark} line ${index} is raw`));
  }
});

test("the log shows times, marks, round-trip times by id and direction, stderr lines and wrap's own events", LIMIT, async () => {
  const logPath = join(tempDir(), "wire.log");
  const { child, finish, output, errors } = start(process.execPath, wrapChild(logPath, "peer"));
  // The peer opens with a request of its own, id 1, and the client answers it only after its own
  // request with id 1: pairing by id alone would mix the two up.
  await until(output, '"method":"roots/list"');
  child.stdin.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
  await until(output, '"id":1,"result"');
  child.stdin.write('{"jsonrpc":"2.0","id":1,"result":{"roots":[]}}\n');
  // Id "7" is never answered and id 7 is: pairing them as one id would lose the unanswered one.
  child.stdin.write('{"jsonrpc":"2.0","id":"7","method":"never"}\n{"jsonrpc":"2.0","id":7,"method":"ping"}\n');
  await until(output, '"id":7,"result"');
  child.stdin.end('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  const { code } = await finish;
  assert.equal(code, 0);
  assert.equal(errors(), "peer ready\n");

  const events = readLog(logPath);
  for (const { time } of events) assert.equal(new Date(time).toISOString(), time);
  const shown = events.filter((event) => event.mark !== "#").map(({ mark, elapsed, raw }) => `${mark}${elapsed === undefined ? "" : " (time)"} ${raw}`);
  // stdout and stderr are two pipes, so the stderr line may come anywhere among the others.
  assert.deepEqual(shown.filter((line) => !line.startsWith("!")), [
    '← {"jsonrpc":"2.0","id":1,"method":"roots/list"}',
    '→ {"jsonrpc":"2.0","id":1,"method":"ping"}',
    '← (time) {"jsonrpc":"2.0","id":1,"result":{}}',
    '→ (time) {"jsonrpc":"2.0","id":1,"result":{"roots":[]}}',
    '→ {"jsonrpc":"2.0","id":"7","method":"never"}',
    '→ {"jsonrpc":"2.0","id":7,"method":"ping"}',
    '← (time) {"jsonrpc":"2.0","id":7,"result":{}}',
    '→ {"jsonrpc":"2.0","method":"notifications/initialized"}',
  ]);
  assert.deepEqual(texts(events, "!"), ["peer ready"]);
  const [started, ...rest] = texts(events, "#");
  assert.match(started ?? "", /^start pid \d+: /);
  assert.ok(started?.endsWith(`: ${process.execPath} ${childPath} peer`));
  assert.equal(rest.length, 3);
  assert.equal(rest[0], "end of input");
  assert.match(rest[1] ?? "", /^unanswered → "7" "never" \(waited \d+\.\d ms\)$/);
  assert.equal(rest[2], "exit code 0");
  assert.equal(events.at(-1)?.raw.toString(), "exit code 0");
});

test("the server's stderr still reaches wrap's stderr unchanged, and the log", LIMIT, async () => {
  const logPath = join(tempDir(), "wire.log");
  const { code, stdout, stderr } = await runBytes(wrapChild(logPath, "stderr"), Buffer.alloc(0));
  assert.equal(code, 0);
  assert.equal(stdout.length, 0);
  assert.equal(stderr.toString(), "a line on stderr\nlast line without newline");
  assert.deepEqual(texts(readLog(logPath), "!"), ["a line on stderr", "last line without newline"]);
});

test("20,000 pipelined tools/call messages give 20,000 → and 20,000 ← lines, in order, each response timed", LIMIT, async () => {
  const logPath = join(tempDir(), "wire.log");
  const count = 20_000;
  const requests = Array.from({ length: count }, (_, id) =>
    JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "add", arguments: { a: id, b: 1 } } }),
  );
  const { code, stdout } = await runBytes([wrapPath, "--log", logPath, "--", process.execPath, serverPath], Buffer.from(`${requests.join("\n")}\n`));
  assert.equal(code, 0);
  assert.equal(lines(stdout.toString()).length, count);
  const events = readLog(logPath);
  assert.deepEqual(texts(events, "→"), requests);
  // The responses are logged as forwarded, and the server answers in order.
  assert.deepEqual(texts(events, "←"), lines(stdout.toString()));
  assert.deepEqual(
    texts(events, "←").map((text) => Number(/"id":(\d+)/.exec(text)?.[1])),
    requests.map((_, id) => id),
  );
  assert.ok(events.every((event) => (event.mark === "←") === (event.elapsed !== undefined)), "every response, and only they, are timed");
  // The server ends at the end of its input, so no signal was needed and nothing is left unanswered.
  assert.deepEqual(texts(events, "#").slice(1), ["end of input", "exit code 0"]);
});

test("wrap's stdout is exactly what the server writes, and nothing else", LIMIT, async () => {
  const input = ['{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}', "not json", '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'];
  const direct = await runServer(input);
  const wrapped = await runBytes([wrapPath, "--log", join(tempDir(), "wire.log"), "--", process.execPath, serverPath], Buffer.from(`${input.join("\n")}\n`));
  assert.equal(wrapped.code, 0);
  assert.equal(wrapped.stdout.toString(), direct.stdout);
  assert.equal(messages(direct.stdout).length, 3);
  assert.equal(wrapped.stderr.toString(), direct.stderr);
});

test("wrap exits with the server's exit code", LIMIT, async () => {
  for (const exit of ["0", "3"]) {
    const { code, signal } = await runBytes(wrapChild(join(tempDir(), "wire.log"), "exit", exit), Buffer.alloc(0));
    assert.deepEqual({ code, signal }, { code: Number(exit), signal: null });
  }
});

test("a server killed by a signal makes wrap exit with 128 + the signal's number", LIMIT, async () => {
  const logPath = join(tempDir(), "wire.log");
  const { code } = await runBytes(wrapChild(logPath, "kill", "SIGKILL"), Buffer.alloc(0));
  assert.equal(code, 137);
  assert.equal(texts(readLog(logPath), "#").at(-1), "exit signal SIGKILL");
});

for (const [signal, number] of [["SIGINT", 2], ["SIGTERM", 15], ["SIGHUP", 1]] as const) {
  test(`${signal} sent to wrap is passed on to the server, and wrap exits as the server did`, LIMIT, async () => {
    const logPath = join(tempDir(), "wire.log");
    const { child, finish, output } = start(process.execPath, wrapChild(logPath, "trap"));
    await until(output, "ready");
    child.kill(signal);
    const { code, stdout } = await finish;
    assert.equal(code, 128 + number);
    assert.match(stdout, new RegExp(`received ${signal}\\n$`));
    assert.deepEqual(texts(readLog(logPath), "#").slice(1), [`received ${signal}: sending ${signal}`, `exit signal ${signal}`]);
  });
}

test("a server that ignores the end of its input is left to the client, whose SIGTERM ends it", LIMIT, async () => {
  const logPath = join(tempDir(), "wire.log");
  const { child, finish, output } = start(process.execPath, wrapChild(logPath, "trap"));
  await until(output, "ready");
  child.stdin.end();
  // wrap no longer ends the server on a clock of its own: it still runs well after the end of input.
  await delay(2_500);
  assert.equal(child.exitCode, null);
  child.kill("SIGTERM");
  const { code } = await finish;
  assert.equal(code, 143);
  assert.deepEqual(texts(readLog(logPath), "#").slice(1), [
    "end of input", "received SIGTERM: sending SIGTERM", "exit signal SIGTERM",
  ]);
});

test("a server that ignores the end of its input and SIGTERM is killed after the client's SIGTERM", LIMIT, async () => {
  const logPath = join(tempDir(), "wire.log");
  const { child, finish, output } = start(process.execPath, wrapChild(logPath, "stubborn"));
  await until(output, "ready");
  const pid = Number(/ready (\d+)/.exec(output())?.[1]);
  child.stdin.end();
  await until(() => readFileSync(logPath, "utf8"), "end of input");
  child.kill("SIGTERM");
  const { code, stdout } = await finish;
  assert.equal(code, 137);
  assert.match(stdout, /ignoring SIGTERM/);
  assert.equal(exists(pid), false);
  assert.deepEqual(texts(readLog(logPath), "#").slice(1), [
    "end of input",
    "received SIGTERM: sending SIGTERM",
    "still running 1000 ms after SIGTERM: sending SIGKILL",
    "exit signal SIGKILL",
  ]);
});

test("a server that ignores a SIGTERM passed on by wrap is killed a grace period later, and no process is left", LIMIT, async () => {
  const { child, finish, output } = start(process.execPath, wrapChild(join(tempDir(), "wire.log"), "stubborn"));
  await until(output, "ready");
  const pid = Number(/ready (\d+)/.exec(output())?.[1]);
  child.kill("SIGTERM");
  const { code } = await finish;
  assert.equal(code, 137);
  assert.equal(exists(pid), false);
});

test("a process the server left holding its pipes keeps wrap no longer than the grace period", LIMIT, async () => {
  const logPath = join(tempDir(), "wire.log");
  const { code, stdout } = await runBytes(wrapChild(logPath, "leave"), Buffer.alloc(0));
  const left = Number(/left (\d+)/.exec(stdout.toString())?.[1]);
  process.kill(left, "SIGKILL");
  assert.equal(code, 0);
  assert.ok(stdout.toString().endsWith("\npartial"));
  // The server's last line, unterminated, is logged all the same when wrap stops waiting for the pipe.
  assert.deepEqual(texts(readLog(logPath), "←").at(-1), "partial");
  assert.equal(texts(readLog(logPath), "#").at(-1), "exit code 0");
});

test("a method name cannot forge a line in the log: wrap's own events quote it", LIMIT, async () => {
  const logPath = join(tempDir(), "wire.log");
  const forged = '{"jsonrpc":"2.0","id":3,"method":"x\\n2099-01-01T00:00:00.000Z # exit code 0"}\n';
  const { code } = await runBytes([wrapPath, "--log", logPath, "--", process.execPath, "-e", "process.stdin.resume()"], Buffer.from(forged));
  assert.equal(code, 0);
  const lines = readFileSync(logPath, "utf8").trimEnd().split("\n");
  assert.deepEqual(lines.filter((line) => line.startsWith("2099-")), []);
  assert.match(lines.at(-1) ?? "", /^\d{4}-\d\d-\d\dT[\d:.]+Z # exit code 0$/);
  assert.ok(lines.some((line) => /# unanswered → 3 "x\\n2099-01-01T00:00:00\.000Z # exit code 0" \(waited [\d.]+ ms\)$/.test(line)));
});

test("a command that cannot start gives one plain line on stderr and exit code 127", LIMIT, async () => {
  const notExecutable = join(tempDir(), "server.sh");
  writeFileSync(notExecutable, "#!/bin/sh\n", { mode: 0o644 });
  const cases = [
    ["/nonexistent/server", /^wrap: cannot start \/nonexistent\/server: spawn \/nonexistent\/server ENOENT$/],
    [notExecutable, /^wrap: cannot start .*\/server\.sh: spawn .*\/server\.sh EACCES$/],
  ] as const;
  for (const [command, message] of cases) {
    const { code, stdout, stderr } = await runBytes([wrapPath, "--log", join(tempDir(), "wire.log"), "--", command], Buffer.alloc(0));
    assert.equal(code, 127);
    assert.equal(stdout.length, 0);
    assert.equal(lines(stderr.toString()).length, 1);
    assert.match(stderr.toString().trimEnd(), message);
  }
});

test("a log that cannot be opened gives a warning, and traffic still flows", LIMIT, async () => {
  const input = Buffer.from('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
  for (const logPath of [join(tempDir(), "missing", "wire.log"), tempDir()]) {
    const { code, stdout, stderr } = await runBytes(wrapChild(logPath, "echo"), input);
    assert.equal(code, 0);
    assert.ok(stdout.equals(input));
    assert.match(stderr.toString(), new RegExp(`^wrap: cannot write log ${logPath}: .*; traffic still flows\\n$`));
  }
});

test("a new log file is created with mode 0600, and an existing one is appended to", LIMIT, async () => {
  const logPath = join(tempDir(), "wire.log");
  await runBytes(wrapChild(logPath, "echo"), Buffer.from("one\n"));
  assert.equal(statSync(logPath).mode & 0o777, 0o600);
  await runBytes(wrapChild(logPath, "echo"), Buffer.from("two\n"));
  assert.deepEqual(texts(readLog(logPath), "→"), ["one", "two"]);
});

test("a client that stops reading is gone: wrap ends its server, does not crash, and logs why", LIMIT, async () => {
  const logPath = join(tempDir(), "wire.log");
  const child = track(spawn(process.execPath, wrapChild(logPath, "echo"), { stdio: "pipe" }));
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  child.stdout.destroy();
  // wrap may exit before it has read all of this: a write to it then fails with EPIPE.
  child.stdin.on("error", () => {});
  const line = `${"y".repeat(1000)}\n`;
  child.stdin.end(line.repeat(1000));
  const [code] = await once(child, "close");
  // Nobody reads the server any more, so nobody else would end it (MCP lifecycle, Shutdown).
  assert.equal(code, 143);
  assert.equal(lines(stderr).filter((line) => !line.startsWith("wrap: ")).length, 0);
  const events = readLog(logPath);
  assert.ok(texts(events, "←").length > 0);
  const notes = texts(events, "#");
  assert.ok(notes.includes("cannot pass ← on: write EPIPE"));
  assert.ok(notes.includes("the client is gone: wrap's stdout is closed: sending SIGTERM"));
  assert.equal(notes.at(-1), "exit signal SIGTERM");
});

test("with no arguments wrap runs server.mjs beside it and writes wire.log beside it", LIMIT, async () => {
  const folder = tempDir();
  const elsewhere = tempDir();
  mkdirSync(join(folder, "bin"));
  for (const name of ["wrap.mjs", "server.mjs"]) copyFileSync(join(root, "dist", name), join(folder, "bin", name));
  const input = '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\n{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n';
  const { code, stdout } = await runBytes([join(folder, "bin", "wrap.mjs")], Buffer.from(input), { cwd: elsewhere });
  assert.equal(code, 0);
  assert.deepEqual(messages(stdout.toString()).length, 2);
  assert.deepEqual(readdirSync(elsewhere), []);
  const events = readLog(join(folder, "bin", "wire.log"));
  assert.equal(texts(events, "→").length, 2);
  assert.equal(texts(events, "←").length, 2);
  assert.match(texts(events, "#")[0] ?? "", /server\.mjs$/);
});

test("--help prints the usage on stdout and exits 0", LIMIT, async () => {
  const { code, stdout, stderr } = await runBytes([wrapPath, "--help"], Buffer.alloc(0));
  assert.equal(code, 0);
  assert.match(stdout.toString(), /^Usage: wrap \[--log FILE\] \[--\] \[COMMAND \[ARGS\.\.\.\]\]\n/);
  assert.equal(stderr.length, 0);
});

test("a command line wrap cannot read prints the usage on stderr and exits 2", LIMIT, async () => {
  for (const args of [["--bogus"], ["--log"], ["--log", "x.log", "show"], ["show", "x.log", "node"], ["--"], ["--log", "x.log", "--"], ["--", ""], ["--log="]]) {
    const { code, stdout, stderr } = await runBytes([wrapPath, ...args], Buffer.alloc(0));
    assert.equal(code, 2, args.join(" "));
    assert.equal(stdout.length, 0);
    assert.match(stderr.toString(), /^Usage: wrap/);
  }
});

test("the command starts at the first word that is not wrap's own, as with env: `--` is not needed, and the command's own words are its own", LIMIT, async () => {
  const folder = tempDir();
  const logPath = join(folder, "wire.log");
  // The command prints the words it was given; `--log` and `--` after its name are its own.
  const script = "process.stdout.write(JSON.stringify(process.argv.slice(1)) + '\\n')";
  const command = [process.execPath, "-e", script, "--", "--log", join(folder, "other.log")];
  for (const own of [["--log", logPath], [`--log=${logPath}`], ["--log", logPath, "--"]]) {
    const { code, stdout } = await runBytes([wrapPath, ...own, ...command], Buffer.alloc(0));
    assert.equal(code, 0, own.join(" "));
    assert.deepEqual(JSON.parse(stdout.toString()), ["--log", join(folder, "other.log")]);
  }
  const starts = readFileSync(logPath, "utf8").split("\n").filter((line) => / # start /.test(line));
  assert.equal(starts.length, 3);
  for (const start of starts) assert.ok(start.endsWith(`: ${command.join(" ")}`), start);
  assert.deepEqual(readdirSync(folder), ["wire.log"]);
});

test("the official SDK client talks to dist/server.mjs through dist/wrap.mjs, and the log shows the handshake", LIMIT, async () => {
  const logPath = join(tempDir(), "wire.log");
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [wrapPath, "--log", logPath, "--", process.execPath, serverPath],
    stderr: "pipe",
  });
  const client = new Client({ name: "wrap-test", version: "0.0.0" });
  await client.connect(transport);
  try {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((tool) => tool.name), ["add"]);
    const result = await client.callTool({ name: "add", arguments: { a: 19, b: 23 } });
    assert.deepEqual(result.content, [{ type: "text", text: "19 + 23 = 42" }]);
  } finally {
    // The SDK ends its input and waits for wrap to exit, so the log is complete once close resolves.
    await client.close();
  }

  const events = readLog(logPath);
  const methods = texts(events, "→").map((text) => /"method":"([^"]+)"/.exec(text)?.[1]);
  assert.deepEqual(methods, ["initialize", "notifications/initialized", "tools/list", "tools/call"]);
  const received = events.filter((event) => event.mark === "←");
  assert.equal(received.length, 3);
  assert.ok(received.every((event) => event.elapsed !== undefined));
  assert.match(received[0]?.raw.toString() ?? "", /"serverInfo":\{"name":"json-rpc-study"/);
  assert.equal(texts(events, "#").at(-1), "exit code 0");
});
