/**
 * wrap against hostile bytes, from a client, a server or a crafted log: nothing it prints for a
 * person reaches a terminal raw, every line reads back as the bytes that crossed whatever it
 * looks like, and no line is too long for it. Each test runs dist/wrap.mjs from outside.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { closeSync, openSync, readFileSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { lines, mermaidBlocks, run, serverPath, tempFolder, track, wrapPath } from "./helpers.ts";

/** What a terminal must never get raw: C0 but tab and newline, DEL, C1, the line and paragraph
 * separators and the bidi controls. */
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;

/** Text that drives a terminal: a window title (OSC 0), a screen clear, a clipboard write
 * (OSC 52), a CSI in one character (U+009B), a right-to-left override (U+202E), a line
 * separator, NEL and DEL. */
const HOSTILE = ["\u001b]0;pwned\u0007", "\u001b[2J\u001b[H", "\u001b]52;c;cm0gLXJmIH4=\u0007",
  "\u009b31m", "\u202egnp.exe", "\u2028", "\u0085", "\u007f"].join("");

const T = "2026-12-04T10:00:00.000Z";

/** A log with HOSTILE wherever a message or a line can carry it. JSON escapes C0 in a string,
 * as a client must; the stderr line and the line that is no message hold it raw. */
const HOSTILE_LOG = [
  `${T} # start pid 1: node ${HOSTILE}server.mjs`,
  `${T} → ${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize",
    params: { clientInfo: { name: HOSTILE, version: "1" } } })}`,
  `${T} ← (1.0 ms) ${JSON.stringify({ jsonrpc: "2.0", id: 1,
    result: { serverInfo: { name: HOSTILE, version: "1" } } })}`,
  `${T} → ${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call",
    params: { name: HOSTILE, arguments: { text: HOSTILE } } })}`,
  `${T} ← (1.0 ms) ${JSON.stringify({ jsonrpc: "2.0", id: 2,
    result: { content: [{ type: "text", text: HOSTILE }], isError: true } })}`,
  `${T} → ${JSON.stringify({ jsonrpc: "2.0", id: 3, method: HOSTILE })}`,
  `${T} ← (1.0 ms) ${JSON.stringify({ jsonrpc: "2.0", id: 3,
    error: { code: -32601, message: HOSTILE } })}`,
  `${T} ← ${JSON.stringify({ jsonrpc: "2.0", method: HOSTILE })}`,
  `${T} ! ${HOSTILE}`,
  `${T} ← [not JSON-RPC] ${HOSTILE}`,
  `${T} # exit code 0`,
  "",
].join("\n");

/** Runs dist/wrap.mjs with its arguments, stdout a pipe and no colour. */
function wrap(...args: string[]) {
  return run(process.execPath, [wrapPath, ...args], "", { env: { ...process.env, NO_COLOR: "" } });
}

/** Fails on the first character a terminal must not get raw, naming where it was. */
function assertPrintable(text: string, where: string): void {
  const found = RAW.exec(text);
  const around = found === null ? "" : JSON.stringify(text.slice(found.index - 20, found.index + 20));
  assert.equal(found, null, `${where} printed a raw control character: ${around}`);
}

/** A log file in a folder of its own. */
function logFile(text: string | Buffer): string {
  const path = join(tempFolder("hostile-"), "wire.log");
  writeFileSync(path, text);
  return path;
}

test("no reader prints a control, C1 or bidi character raw, and stats --json stays JSON", async () => {
  const path = logFile(HOSTILE_LOG);
  for (const args of [["show"], ["show", "--no-redact"], ["stats"], ["diagram"]]) {
    const { code, stdout, stderr } = await wrap(...args, path);
    assert.equal(code, 0, args.join(" "));
    assertPrintable(stdout + stderr, `wrap ${args.join(" ")}`);
    // The text is there all the same, escaped: a person can see what the log holds.
    assert.match(stdout, /\\u001b/, args.join(" "));
  }
  const { stdout } = await wrap("stats", "--json", path);
  assertPrintable(stdout, "wrap stats --json");
  const [session] = JSON.parse(stdout).sessions;
  assert.equal(session.command, `node ${HOSTILE}server.mjs`, "JSON's escapes read back as the text");
  assert.ok(session.requests.some((each: { method: string }) => each.method === HOSTILE));
});

test("replay's report of a hostile difference is printable", async () => {
  const path = logFile([
    `${T} → {"jsonrpc":"2.0","id":1,"method":"ping"}`,
    `${T} ← (1.0 ms) ${JSON.stringify({ jsonrpc: "2.0", id: 1, result: { [HOSTILE]: HOSTILE } })}`,
    "",
  ].join("\n"));
  const server = "process.stdin.on('data', () => process.stdout.write(" +
    `${JSON.stringify(`${JSON.stringify({ jsonrpc: "2.0", id: 1, result: { text: HOSTILE } })}\n`)}))`;
  const { code, stdout } = await wrap("replay", path, "--", process.execPath, "-e", server);
  assert.equal(code, 1);
  assert.match(stdout, /^✗ 1 "ping"/m);
  assertPrintable(stdout, "wrap replay");
});

test("wrap's own words on stderr are printable: the pollution warning, a command, a log path",
  async () => {
    const folder = tempFolder("hostile-wrap-");
    const polluter = `process.stdout.write(${JSON.stringify(`${HOSTILE}\n`)}); process.stdin.resume()`;
    const polluted = await run(process.execPath, [wrapPath, "--log", join(folder, "a.log"), "--",
      process.execPath, "-e", polluter], "");
    assert.equal(polluted.code, 0);
    // wrap's stdout is the server's, byte for byte; its own lines are what it says itself.
    assert.equal(polluted.stdout, `${HOSTILE}\n`);
    assert.match(polluted.stderr, /^wrap: the server wrote a line to stdout that is not JSON-RPC/);
    assertPrintable(polluted.stderr, "the pollution warning");
    const started = await run(process.execPath, [wrapPath, "--log", join(folder, "b.log"), "--",
      join(folder, HOSTILE)], "");
    assert.equal(started.code, 127);
    assertPrintable(started.stderr, "wrap's cannot start");
    const logged = await run(process.execPath, [wrapPath, "--log", join(folder, HOSTILE, "c.log"),
      "--", process.execPath, "-e", "process.stdin.resume()"], "{}\n");
    assert.match(logged.stderr, /^wrap: cannot write log /);
    assertPrintable(logged.stderr, "wrap's cannot write log");
  });

/** A server that writes lines that look like wrap's notes, on stdout and stderr, then answers
 * each request with an empty result. */
const MIMIC = String.raw`
process.stdout.write('(1.0 ms) {"jsonrpc":"2.0","id":1,"result":{}}\n' +
  '[no request] {"jsonrpc":"2.0","id":2,"result":{}}\n| [CRLF] plain\n');
process.stderr.write('[id in use] {"jsonrpc":"2.0","id":1,"method":"ping"}\n' +
  '(5.0 ms) {"jsonrpc":"2.0","id":7,"result":{}}\n');
require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
  const id = (() => { try { return JSON.parse(line).id; } catch { return undefined; } })();
  if (id !== undefined) process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id, result: {} }) + "\n");
});`;

/** The client's lines that look like wrap's notes, and its real requests. */
const MIMICKING_CLIENT = [
  '(5.0 ms) {"jsonrpc":"2.0","id":7,"method":"ping"}',
  '{"jsonrpc":"2.0","id":8,"method":"ping"}',
  '[id in use] {"jsonrpc":"2.0","id":9,"method":"ping"}',
  '| {"jsonrpc":"2.0","id":10,"method":"ping"}',
  "[not JSON-RPC] [CRLF] [1048577 bytes] | (1.0 ms) x",
  '[{"jsonrpc":"2.0","id":11,"method":"ping"}]',
  '{"jsonrpc":"2.0","id":12,"method":"ping"}',
];

test("a line that looks like wrap's notes reads back as it crossed, from either side and on stderr",
  { timeout: 60_000 }, async () => {
    const folder = tempFolder("hostile-mimic-");
    const logPath = join(folder, "wire.log");
    const server = [process.execPath, "-e", MIMIC];
    const recorded = await run(process.execPath, [wrapPath, "--log", logPath, "--", ...server],
      MIMICKING_CLIENT.map((line) => `${line}\n`).join(""));
    assert.equal(recorded.code, 0);
    const log = readFileSync(logPath, "utf8");
    // Each line is in the log after its notes, whole: a bar ends the notes before one that could
    // be read as a note.
    for (const line of MIMICKING_CLIENT) assert.ok(log.includes(` ${line}\n`), line);
    assert.ok(log.includes(" → [not JSON-RPC] | (5.0 ms) {"), log);
    assert.ok(log.includes(" ← [not JSON-RPC] | | [CRLF] plain\n"), log);
    assert.ok(log.includes(' ! [id in use] {"jsonrpc":"2.0","id":1,"method":"ping"}\n'), log);

    // show: the ping that only looks like one is no request, and no note is made up.
    const { stdout } = await wrap("show", "--no-redact", logPath);
    assert.doesNotMatch(stdout, /^skipped/m);
    const shown = lines(stdout);
    assert.ok(!shown.some((line) => / → ping #7$/.test(line)), shown.join("\n"));
    // A line that is no message is shown quoted, so that its text is never taken for a tag.
    assert.ok(shown.some((line) => line.includes('→ [not JSON-RPC] "(5.0 ms) {')), shown.join("\n"));
    assert.ok(shown.some((line) => / ! \[id in use\] \{"jsonrpc"/.test(line)));
    // stats: a stderr line is never read for notes, and only the real requests are counted.
    const [figures] = JSON.parse((await wrap("stats", "--json", logPath)).stdout).sessions;
    assert.equal(figures.tags["id in use"], undefined);
    assert.equal(figures.requests.find((each: { method: string }) => each.method === "ping").count, 3);
    // diagram: a request's arrow for each real ping (8, 11 in a batch, and 12).
    const drawn = mermaidBlocks((await wrap("diagram", "--no-redact", logPath)).stdout).join("\n");
    assert.equal(drawn.match(/^C->>S: ping$/gm)?.length, 3);
    // replay against the same server: no difference.
    const replayed = await wrap("replay", logPath, "--", ...server);
    assert.match(replayed.stdout, /^replay: (\d+) responses, \1 match, 0 differ, 0 missing, 0 unexpected\n$/);
    assert.equal(replayed.code, 0);
    // redact: nothing secret, so the copy is the log, byte for byte.
    assert.equal((await wrap("redact", logPath)).stdout, log);
  });

test("a client's line that only looks like a timed ping gets a parse error, and replays clean",
  async () => {
    // The issue's own: `(5.0 ms) ` before a request is bytes the server cannot parse.
    const logPath = join(tempFolder("hostile-amb-"), "amb.log");
    const input = '(5.0 ms) {"jsonrpc":"2.0","id":7,"method":"ping"}\n{"jsonrpc":"2.0","id":8,"method":"ping"}\n';
    const recorded = await run(process.execPath, [wrapPath, "--log", logPath, process.execPath, serverPath], input);
    assert.equal(recorded.code, 0);
    const shown = (await wrap("show", logPath)).stdout;
    assert.doesNotMatch(shown, /→ ping #7/);
    assert.match(shown, /← #null error -32700/);
    const replayed = await wrap("replay", logPath, "--", process.execPath, serverPath);
    assert.equal(replayed.stdout, "replay: 2 responses, 2 match, 0 differ, 0 missing, 0 unexpected\n");
  });

/** A server that answers each ping with the size of the first line it read, and reads every
 * line without holding it. */
const COUNTER = String.raw`
let size = 0;
let first;
let head = "";
process.stdin.on("data", (chunk) => {
  let start = 0;
  for (let end = chunk.indexOf(10); end !== -1; end = chunk.indexOf(10, start)) {
    const line = head + chunk.subarray(start, Math.min(end, start + 100)).toString();
    first ??= size + end - start;
    [size, head, start] = [0, "", end + 1];
    if (!line.includes('"ping"')) continue;
    const { id } = JSON.parse(line);
    process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id, result: { first } }) + "\n");
  }
  size += chunk.length - start;
  if (head.length < 100) head += chunk.subarray(start, start + 100).toString();
});`;

test("a client line of 520 MiB passes to the server whole, is logged cut with a note, and the next request is answered",
  { timeout: 120_000 }, async () => {
    const size = 520 * 2 ** 20;
    const logPath = join(tempFolder("hostile-long-"), "wire.log");
    const child = track(spawn(process.execPath, [wrapPath, "--log", logPath, "--", process.execPath, "-e", COUNTER],
      { stdio: ["pipe", "pipe", "pipe"] }));
    try {
      let stdout = "";
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
      const opening = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"';
      const closing = '"}}}';
      child.stdin.write(opening);
      const megabyte = Buffer.alloc(2 ** 20, "x");
      for (let left = size - opening.length - closing.length; left > 0; left -= megabyte.length) {
        const piece = left >= megabyte.length ? megabyte : megabyte.subarray(0, left);
        if (!child.stdin.write(piece)) await once(child.stdin, "drain");
      }
      child.stdin.end(`${closing}\n{"jsonrpc":"2.0","id":2,"method":"ping"}\n`);
      const [code] = await once(child, "close");
      assert.equal(code, 0);
      // The server read the whole line, then answered the ping.
      assert.equal(stdout, `{"jsonrpc":"2.0","id":2,"result":{"first":${size}}}\n`);
      const log = readFileSync(logPath);
      assert.ok(log.length < 17 * 2 ** 20, `the log is ${log.length} bytes`);
      const events = log.toString().split("\n").map((line) => line.replace(/^\S+ /, ""));
      const cut = events.findIndex((event) => event.startsWith(`→ [${size} bytes] ${opening}xxx`));
      assert.equal(events[cut - 1], `# the next → line is cut: the log keeps 16777216 of ${size} bytes`);
      assert.equal(events[cut]?.length, `→ [${size} bytes] `.length + 16 * 2 ** 20);
      assert.ok(events.includes('→ {"jsonrpc":"2.0","id":2,"method":"ping"}'));
      assert.ok(events.some((event) => /^← \(\d+\.\d ms\) \{"jsonrpc":"2\.0","id":2,/.test(event)));
    } finally {
      child.kill("SIGKILL");
    }
  });

test("every reader reads a log whose line is longer than a string can hold, and goes on past it",
  { timeout: 120_000 }, async () => {
    // A crafted log: no wrap writes a line this long, but a reader must not die of one.
    const path = join(tempFolder("hostile-huge-"), "wire.log");
    const file = openSync(path, "w");
    writeSync(file, `${T} # start pid 1: node server.mjs\n${T} → `);
    const megabyte = Buffer.alloc(2 ** 20, "y");
    for (let written = 0; written < 530; written++) writeSync(file, megabyte);
    writeSync(file, `\n${T} → {"jsonrpc":"2.0","id":1,"method":"ping"}\n` +
      `${T} ← (1.0 ms) {"jsonrpc":"2.0","id":1,"result":{}}\n`);
    closeSync(file);
    for (const args of [["show"], ["stats", "--json"], ["diagram"]]) {
      const { code, stdout, stderr } = await wrap(...args, path);
      assert.equal(code, 0, `${args.join(" ")}: ${stderr}`);
      assert.match(stdout, /ping/, args.join(" "));
    }
    const script = `"$0" "$1" redact "$2" | tail -c 100`;
    const redacted = await run("bash", ["-c", script, process.execPath, wrapPath, path], "");
    assert.match(redacted.stdout, /"id":1,"result":\{\}\}\n$/);
    const replayed = await wrap("replay", path, "--", process.execPath, serverPath);
    assert.match(replayed.stdout, /^replay: 1 responses, 1 match,/m);
  });

test("requests never answered are paired up to 50,000: past that the oldest tenth goes, said once, and stats holds the same limit",
  { timeout: 120_000 }, async () => {
    const logPath = join(tempFolder("hostile-pending-"), "wire.log");
    const count = 50_005;
    const input = Array.from({ length: count }, (_, id) => `{"jsonrpc":"2.0","id":${id},"method":"ping"}\n`).join("");
    const recorded = await run(process.execPath, [wrapPath, "--log", logPath, "--", process.execPath, "-e", "process.stdin.resume()"], input);
    assert.equal(recorded.code, 0);
    const notes = readFileSync(logPath, "utf8").split("\n").filter((line) => / # /.test(line)).map((line) => line.replace(/^\S+ # /, ""));
    const over = notes.filter((note) => note.startsWith("over 50000 requests in flight"));
    assert.deepEqual(over, ["over 50000 requests in flight: from here on the oldest are dropped from pairing, and their responses show [no request]"]);
    // The 50,001st request made the oldest 5,001 go: the newest 45,000 and the 4 after them stay.
    const unanswered = notes.filter((note) => note.startsWith("unanswered "));
    assert.equal(unanswered.length, 45_004);
    assert.match(unanswered[0] ?? "", /^unanswered → 5001 "ping"/);
    assert.match(unanswered.at(-1) ?? "", /^unanswered → 50004 "ping"/);
    const [session] = JSON.parse((await wrap("stats", "--json", logPath)).stdout).sessions;
    assert.equal(session.unanswered, 45_004);
    assert.equal(session.requests[0].count, count);
  });
