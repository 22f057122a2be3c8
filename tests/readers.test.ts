/**
 * wrap's readers, run as dist/wrap.mjs from outside: `diagram` turns a wire.log into Mermaid,
 * `replay` plays a log's client lines to a server and compares the answers, `redact` masks
 * secrets. Their logs are written by hand (tests/fixtures/wire-logs.ts) or recorded by wrap.
 * tests/browser/render.test.ts renders the diagrams in a real browser.
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mermaidBlocks, root, run, serverPath, wrapPath } from "./helpers.ts";
import { sessions } from "./fixtures/wire-logs.ts";

const LIMIT = { timeout: 60_000 };
const scratch = mkdtempSync(join(tmpdir(), "readers-test-"));
after(() => rmSync(scratch, { recursive: true, force: true }));
const articleServer = join(root, "tests", "fixtures", "article-server.mjs");

/** Writes a log to a fresh file and returns its path. */
function logFile(name: string, text: string): string {
  const path = join(scratch, `${name}-${Math.random().toString(36).slice(2)}.log`);
  writeFileSync(path, text);
  return path;
}

/** Runs a reader of dist/wrap.mjs. */
function wrap(...args: string[]) {
  return run(process.execPath, [wrapPath, ...args], "");
}

/** A session recorded by wrap from our own server, with an error, a tool error and a parse error. */
async function recordSession(): Promise<string> {
  const path = join(scratch, `recorded-${Math.random().toString(36).slice(2)}.log`);
  const input = [
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"manual-test","version":"0.0.1"}}}',
    '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":"1","b":2}}}',
    '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nope","arguments":{}}}',
    "this is not json",
    '{"jsonrpc":"2.0","id":4,"method":"toString"}',
  ];
  const recorded = await run(process.execPath, [wrapPath, "--log", path, "--", process.execPath, serverPath], input.map((line) => `${line}\n`).join(""));
  assert.equal(recorded.code, 0);
  return path;
}

test("a legacy session's diagram names both sides and labels each arrow", LIMIT, async () => {
  const { code, stdout } = await wrap("diagram", logFile("legacy", sessions.legacy));
  assert.equal(code, 0);
  const [block = ""] = mermaidBlocks(stdout);
  assert.ok(block.startsWith("sequenceDiagram\nparticipant C as inspector-cli\nparticipant S as json-rpc-study\n"), block);
  assert.match(block, /^C->>S: initialize$/m);
  assert.match(block, /^S-->>C: 25\.7 ms result$/m);
  assert.match(block, /^C-\)S: notifications\/initialized$/m);
  assert.match(block, /^C->>S: tools\/call add$/m);
  assert.match(block, /^S-->>C: 0\.7 ms 100 \+ 111 = 211$/m);
  assert.match(block, /^Note right of S: \[server\] stdio server started$/m);
  assert.match(block, /^Note over C,S: exit code 0$/m);
  assert.doesNotMatch(block, /"a":100/, "payloads are summarised, never dumped");
});

test("a modern session's diagram takes both names from _meta", LIMIT, async () => {
  const { stdout } = await wrap("diagram", logFile("modern", sessions.modern));
  assert.match(stdout, /participant C as modern-client\nparticipant S as modern-server\n/);
  assert.match(stdout, /^S-->>C: 22\.0 ms result$/m);
});

test("errors, notifications, server requests and hygiene tags all show in the diagram", LIMIT, async () => {
  const { stdout } = await wrap("diagram", logFile("eventful", sessions.eventful));
  assert.match(stdout, /participant S as node other-server\.mjs\n/, "no serverInfo: the command");
  assert.match(stdout, /^S-->>C: 1\.2 ms error -32601$/m);
  assert.match(stdout, /^S-->>C: 0\.9 ms isError bad a$/m);
  assert.match(stdout, /^S-\)C: notifications\/message$/m);
  assert.match(stdout, /^S->>C: roots\/list$/m);
  assert.match(stdout, /^C-->>S: 3\.1 ms result$/m);
  for (const tag of ["CRLF", "no request", "id in use", "not JSON-RPC"]) {
    assert.match(stdout, new RegExp(`^Note over C,S: ${tag}$`, "m"));
  }
  assert.match(stdout, /^C->>S: not JSON-RPC this is not json$/m);
  assert.match(stdout, /^Note over C,S: unanswered → 4 'ping' \(waited 2004\.1 ms\)$/m);
});

test("no message text in a hostile log reaches the diagram as Mermaid syntax", LIMIT, async () => {
  const { stdout } = await wrap("diagram", logFile("hostile", sessions.hostile));
  const [block = ""] = mermaidBlocks(stdout);
  const statements = block.split("\n");
  // Every line is one statement we wrote: a header, a participant, an arrow or a note.
  for (const statement of statements) {
    assert.match(statement, /^(sequenceDiagram|participant [CS] as |[CS](->>|-->>|-\))[CS]: |Note (over C,S|right of S): )/, statement);
    const text = statement.replace(/^[^:]*: ?/, "");
    assert.doesNotMatch(text, /[;#<>"%{}&\n]/, statement);
  }
  assert.equal(statements.filter((line) => line.startsWith("Note")).length, 4);
});

test("a long session is split into numbered blocks of at most 2,000 characters", LIMIT, async () => {
  const { stdout } = await wrap("diagram", logFile("long", sessions.long));
  const found = [...stdout.matchAll(/```mermaid\n[\s\S]*?\n```/g)].map((match) => match[0]);
  assert.ok(found.length >= 2, `${found.length} blocks`);
  for (const block of found) assert.ok(block.length <= 2_000, `a block of ${block.length} characters`);
  assert.match(stdout, /^Part 1$/m);
  assert.match(found[1] ?? "", /Note over C,S: part 2, continued from part 1/);
  assert.equal(found.join("").match(/^C->>S: tools\/call add$/gm)?.length, 60, "no call is lost");
});

test("diagram --out writes the Markdown to a file, redacted unless --no-redact", LIMIT, async () => {
  const secretLog = logFile("secret", "2026-12-02T15:24:06.863Z ! token=abc123secret\n");
  const out = join(scratch, "diagram.md");
  assert.equal((await wrap("diagram", "--out", out, secretLog)).code, 0);
  assert.match(readFileSync(out, "utf8"), /token=\[redacted\]/);
  assert.match((await wrap("diagram", "--no-redact", secretLog)).stdout, /token=abc123secret/);
});

test("a session recorded from our server replays clean against it", LIMIT, async () => {
  const path = await recordSession();
  const { code, stdout } = await wrap("replay", path, "--", process.execPath, serverPath);
  assert.equal(stdout, "replay: 5 responses, 5 match, 0 differ, 0 missing, 0 unexpected\n");
  assert.equal(code, 0);
});

test("the same session replayed against the article's server reports the error table's rows", LIMIT, async () => {
  const path = await recordSession();
  const { code, stdout } = await wrap("replay", path, "--", process.execPath, articleServer);
  assert.equal(code, 1);
  assert.match(stdout, /^✗ 2 "tools\/call"\n {2}result\.content\.0\.text: strings part at character 0: expected "Invalid arguments: \\"a\\" must be a number", got "1 \+ 2 = 12"\n {2}result\.isError: expected true, got nothing$/m);
  assert.match(stdout, /^✗ 3 "tools\/call"\n {2}result: expected nothing, got .*"unknown tool: nope".*\n {2}error: expected \{"code":-32602/m);
  assert.match(stdout, /^✗ 4 "toString"\n {2}result: expected nothing, got "\[object Undefined\]"/m);
  // The whole server offers logging (server.ts section 7); the article's server offers tools alone.
  assert.match(stdout, /^✗ 1 "initialize"\n {2}result\.capabilities\.logging: expected \{\}, got nothing$/m);
  assert.match(stdout, /^replay: 5 responses, 1 match, 4 differ, 0 missing, 0 unexpected$/m);
});

test("replay --ignore skips the fields it names, * matching any key", LIMIT, async () => {
  const path = await recordSession();
  const { code, stdout } = await wrap("replay", "--ignore", "result.content.*.text", "--ignore", "result.isError",
    "--ignore", "result", "--ignore", "error", path, "--", process.execPath, articleServer);
  assert.equal(stdout, "replay: 5 responses, 5 match, 0 differ, 0 missing, 0 unexpected\n");
  assert.equal(code, 0);
});

test("replay reports responses that never come and responses nobody asked for", LIMIT, async () => {
  const T = "2026-12-02T15:24:06.863Z";
  const path = logFile("drift", [
    `${T} → {"jsonrpc":"2.0","id":1,"method":"ping"}`,
    `${T} ← (1.0 ms) {"jsonrpc":"2.0","id":1,"result":{}}`,
    `${T} → null`,
    `${T} ← (1.0 ms) {"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: not a JSON object"}}`,
    `${T} → {"jsonrpc":"2.0","id":2,"method":"ping"}`,
    `${T} ← (1.0 ms) {"jsonrpc":"2.0","id":2,"result":{}}`,
    "",
  ].join("\n"));
  // The article's server crashes on `null`: the rest of the session is missing.
  const { code, stdout } = await wrap("replay", "--timeout", "3000", path, "--", process.execPath, articleServer);
  assert.equal(code, 1);
  assert.match(stdout, /^✗ null: missing$/m);
  assert.match(stdout, /^✗ 2 "ping": missing$/m);
  assert.match(stdout, /^replay: 3 responses, 1 match, 0 differ, 2 missing, 0 unexpected$/m);
  const extra = logFile("extra", `${T} → {"jsonrpc":"2.0","id":1,"method":"ping"}\n`);
  const unexpected = await wrap("replay", extra, "--", process.execPath, serverPath);
  assert.match(unexpected.stdout, /^✗ 1: unexpected\nreplay: 0 responses, 0 match, 0 differ, 0 missing, 1 unexpected\n$/);
  assert.equal(unexpected.code, 1);
});

test("redact replaces every kind of secret and keeps each message valid JSON", LIMIT, async () => {
  const T = "2026-12-02T15:24:06.863Z";
  const params = {
    Authorization: "x", cookie: "c", PASSWORD: "p", secret: "s", token: "t", api_key: "k", apiKey: "k2",
    github_token: "g", private_key: { nested: true },
    text: "Bearer abc.def-123 and sk-abcdefghijklmnopqrst and ghp_abcdefghijklmnopqrstuv and xoxb-123456789-abc",
    // Near-misses that must stay: counts of tokens, keyboard, a task id, a short sk-.
    max_tokens: 1024, keyboard: "qwerty", note: "task-abcdefghijklmnopqrst sk-short bearer",
  };
  const message = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params });
  const path = logFile("secrets", [
    `${T} → ${message}`,
    `${T} ! [server] login password=hunter2 with Bearer xyz.789 api_key: "abc"`,
    `${T} # start pid 1: node server.mjs --token=s3cr3t`,
    `${T} ← (1.0 ms) [CRLF] {"jsonrpc":"2.0","id":1,"result":{"session_key":"zz"}}\r`,
    `${T} ← (1.0 ms) {"jsonrpc":"2.0","id":2,"result":{"kept": 1.0}}`,
    "",
  ].join("\n"));
  const { code, stdout } = await wrap("redact", path);
  assert.equal(code, 0);
  const [sent = "", stderrLine, startLine, tagged, untouched] = stdout.split("\n");
  const redacted = JSON.parse(sent.slice(`${T} → `.length));
  const expected = { ...params, Authorization: "[redacted]", cookie: "[redacted]", PASSWORD: "[redacted]",
    secret: "[redacted]", token: "[redacted]", api_key: "[redacted]", apiKey: "[redacted]",
    github_token: "[redacted]", private_key: "[redacted]",
    text: "[redacted] and [redacted] and [redacted] and [redacted]" };
  assert.deepEqual(redacted.params, expected);
  assert.equal(stderrLine, `${T} ! [server] login password=[redacted] with [redacted] api_key: "[redacted]"`);
  assert.equal(startLine, `${T} # start pid 1: node server.mjs --token=[redacted]`);
  assert.equal(tagged, `${T} ← (1.0 ms) [CRLF] {"jsonrpc":"2.0","id":1,"result":{"session_key":"[redacted]"}}`);
  assert.equal(untouched, `${T} ← (1.0 ms) {"jsonrpc":"2.0","id":2,"result":{"kept": 1.0}}`, "no secret: kept byte for byte");
});

test("a reader's command line that cannot be read prints the usage and exits 2", LIMIT, async () => {
  for (const args of [["diagram"], ["replay", "x.log"], ["redact", "a.log", "b.log"], ["replay", "--timeout", "0", "x.log", "--", "node"]]) {
    const { code, stderr } = await wrap(...args);
    assert.equal(code, 2, args.join(" "));
    assert.match(stderr, /wrap replay \[--ignore PATH\]/);
  }
});

test("a reader that cannot read, write or start gives one plain line, never a stack", LIMIT, async () => {
  const path = logFile("plain", `2026-12-02T15:24:06.863Z → {"jsonrpc":"2.0","id":1,"method":"ping"}\n`);
  const cases: [string[], number, RegExp][] = [
    [["diagram", join(scratch, "nope.log")], 1, /^wrap: cannot read .*nope\.log: .*ENOENT.*\n$/],
    [["diagram", "--out", join(scratch, "no", "such", "o.md"), path], 1, /^wrap: cannot write .*o\.md: .*ENOENT.*\n$/],
    [["replay", path, "--", join(scratch, "no-such-server")], 127, /^wrap: cannot start .*no-such-server: .*ENOENT\n$/],
    [["replay", path, "--", ""], 2, /^Usage: wrap/],
    // spawn throws these rather than emit them.
    [["replay", path, "--", "/etc/passwd/x"], 127, /^wrap: cannot start \/etc\/passwd\/x: spawn ENOTDIR\n$/],
    [["--log", join(scratch, "r.log"), "--", "/etc/passwd/x"], 127, /^wrap: cannot start \/etc\/passwd\/x: spawn ENOTDIR\n$/],
    [["diagram", ""], 2, /^Usage: wrap/],
    [["diagram", "--out=", path], 2, /^Usage: wrap/],
    [["replay", "--timeout", "1.5", path, "--", "node"], 2, /^Usage: wrap/],
    [["replay", "--timeout", "Infinity", path, "--", "node"], 2, /^Usage: wrap/],
  ];
  for (const [args, expected, message] of cases) {
    const { code, stderr } = await wrap(...args);
    assert.equal(code, expected, args.join(" "));
    assert.match(stderr, message, args.join(" "));
  }
});

test("a reader whose stdout closes early (| head -1) stops quietly, as SIGPIPE would end it", LIMIT, async () => {
  const lines = Array.from({ length: 20_000 }, (_, index) => {
    return `2026-12-02T15:24:06.863Z → {"jsonrpc":"2.0","id":${index},"method":"ping"}`;
  });
  const path = logFile("long", `${lines.join("\n")}\n`);
  const script = `"$0" "$1" redact "$2" | head -1; echo "\${PIPESTATUS[0]}"`;
  const { stdout, stderr, code } = await run("bash", ["-c", script, process.execPath, wrapPath, path], "");
  assert.equal(stdout, `${lines[0]}\n141\n`, "128 + SIGPIPE's 13");
  assert.equal(stderr, "");
  assert.equal(code, 0);
});

test("replay stops waiting for a server whose own child holds its stdout open", { timeout: 30_000 }, async () => {
  const path = logFile("held", [
    `2026-12-02T15:24:06.863Z → {"jsonrpc":"2.0","id":1,"method":"ping"}`,
    `2026-12-02T15:24:06.864Z ← (1.0 ms) {"jsonrpc":"2.0","id":1,"result":{}}`,
    "",
  ].join("\n"));
  // The shell outlives its input, and the sleep it starts next would hold stdout for a minute.
  // (Its stderr goes nowhere: it is wrap's, and this test waits for it to close.)
  const held = `"${process.execPath}" "${serverPath}"; sleep 60 2>/dev/null`;
  const { code, stdout } = await wrap("replay", "--timeout", "1000", path, "--", "sh", "-c", held);
  assert.equal(stdout, "replay: 1 responses, 1 match, 0 differ, 0 missing, 0 unexpected\n");
  assert.equal(code, 0);
});

test("a batch's round-trip time goes on its responses, not on a request in the same line", LIMIT, async () => {
  const batch = '[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":"r","method":"roots/list"}]';
  const path = logFile("batch", [
    `2026-12-02T15:24:06.863Z → {"jsonrpc":"2.0","id":1,"method":"ping"}`,
    `2026-12-02T15:24:06.864Z ← (1.5 ms) ${batch}`,
    "",
  ].join("\n"));
  const { code, stdout } = await wrap("diagram", path);
  assert.equal(code, 0);
  assert.match(stdout, /^S-->>C: 1\.5 ms result$/m);
  assert.match(stdout, /^S->>C: roots\/list$/m);
});

test("redact takes a bearer token whole in a header line that is not JSON", LIMIT, async () => {
  const path = logFile("header", "2026-12-02T15:24:06.863Z ! Authorization: Bearer xyz.789 token=abc\n");
  const { code, stdout } = await wrap("redact", path);
  assert.equal(code, 0);
  assert.equal(stdout, "2026-12-02T15:24:06.863Z ! Authorization: [redacted] token=[redacted]\n");
});

/** A server that answers every request with the same result, whatever it was asked. */
const FIXED_SERVER = String.raw`
const result = JSON.parse(process.argv[1]);
let rest = "";
process.stdin.on("data", (chunk) => {
  const lines = (rest + chunk).split("\n");
  rest = lines.pop();
  for (const line of lines) {
    const { id } = JSON.parse(line);
    process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id, result }) + "\n");
  }
});`;

test("replay points at where two long strings part, in a short report that is redacted", LIMIT, async () => {
  const T = "2026-12-02T15:24:06.863Z";
  const long = (middle: string) => `${"a".repeat(500)}${middle}${"b".repeat(500)} Bearer secret-${middle}`;
  const recorded = { text: long("X"), token: "tok-1", many: Object.fromEntries(Array.from({ length: 9 }, (_, n) => [`k${n}`, n])) };
  const served = { text: long("Y"), token: "tok-2", many: Object.fromEntries(Array.from({ length: 9 }, (_, n) => [`k${n}`, n + 1])) };
  const path = logFile("long", [
    `${T} → {"jsonrpc":"2.0","id":1,"method":"ping"}`,
    `${T} ← (1.0 ms) ${JSON.stringify({ jsonrpc: "2.0", id: 1, result: recorded })}`,
    "",
  ].join("\n"));
  const server = [process.execPath, "-e", FIXED_SERVER, JSON.stringify(served)];
  const redacted = await wrap("replay", path, "--", ...server);
  assert.equal(redacted.code, 1);
  const [report = ""] = redacted.stdout.split("\nreplay: ");
  const reportLines = report.split("\n");
  assert.ok(reportLines.length <= 6 && report.length <= 1_000, report);
  assert.equal(reportLines[0], '✗ 1 "ping"');
  const part = `  result.text: strings part at character 500: expected …"${"a".repeat(40)}X${"b".repeat(39)}"…, got …"${"a".repeat(40)}Y${"b".repeat(39)}"…`;
  assert.equal(reportLines[1], part);
  assert.equal(reportLines[2], "  result.token: differs, in a redacted value");
  assert.match(reportLines.at(-1) ?? "", /^ {2}\(\d+ more\)$/);
  assert.doesNotMatch(redacted.stdout, /tok-|secret-/);
  const open = await wrap("replay", "--no-redact", path, "--", ...server);
  assert.match(open.stdout, /^ {2}result\.token: strings part at character 4: expected "tok-1", got "tok-2"$/m);
});
