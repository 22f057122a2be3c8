/**
 * `wrap check`, black-box: dist/wrap.mjs reviews a server for five agent CLIs, live (`check --
 * COMMAND`, which opens the server as each CLI does and records that to a log) and from a session
 * recorded through wrap (`check LOG`). The server under test is tests/fixtures/defects-server.mjs,
 * one defect per word on its command line. The table each test holds check to is the one that
 * tests/agents/rules.test.ts and tests/claude-code/rules.test.ts measured against the pinned CLIs
 * (docs/clients.md): a finding for exactly the CLIs it names, with the rule and severity given.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { root, run, serverPath, tempFolder, wrapPath, type Finished } from "./helpers.ts";

/** The server with defects on demand. */
const defectsServer = join(root, "tests", "fixtures", "defects-server.mjs");

/** The five CLIs, as --json keys them. */
const CLIENTS = ["claude-code", "codex", "gemini", "qwen", "copilot"];

/** The rules check knows (issue 37). */
const RULES = ["slow-start", "stdout-noise", "tool-name", "input-schema", "description",
  "era-fallback", "result-content", "structured-content"];

/** Each CLI's findings in brief, `severity rule tool`, sorted, each once; `-` for no tool. */
type Brief = { [client: string]: string[] };

/** The two 70-character tool names of the `long-names` defect. */
const LONG = "count_every_line_of_every_file_in_the_folder_and_in_each_subfolder";
const [LONG_ONE, LONG_TWO] = [`${LONG}_one`, `${LONG}_two`];

/** How long a live check of a slow server may wait for each answer. */
const PATIENT = ["--timeout", "15000"];

/** Room for three sessions of a slow server on a loaded 2-core machine. */
const SLOW = { timeout: 90_000 };

/** A plain JSON object, narrowed from unknown. */
function isObject(value: unknown): value is { [key: string]: unknown } {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Runs `wrap check` with `args`; stdin is closed at once. */
function check(args: readonly string[]): Promise<Finished> {
  return run(process.execPath, [wrapPath, "check", ...args], "");
}

/** Runs check live on defects-server.mjs with `defects`, recording to a new log; --json. */
async function checkLive(defects: readonly string[], options: readonly string[] = []) {
  const logPath = join(tempFolder("check-live-"), "check.log");
  const args = ["--json", "--log", logPath, ...options, "--", process.execPath, defectsServer];
  const finished = await check([...args, ...defects]);
  return { finished, logPath, brief: briefOf(finished.stdout) };
}

/** The findings of check's --json output in brief, after checking the output's shape. */
function briefOf(stdout: string): Brief {
  const output: unknown = JSON.parse(stdout);
  assert.ok(isObject(output) && isObject(output.clients), stdout);
  assert.deepEqual(Object.keys(output), ["clients"]);
  assert.deepEqual(Object.keys(output.clients), CLIENTS);
  const brief: Brief = {};
  for (const [client, verdict] of Object.entries(output.clients)) {
    assert.ok(isObject(verdict) && Array.isArray(verdict.findings), JSON.stringify(verdict));
    assert.deepEqual(Object.keys(verdict), ["ok", "findings"]);
    const findings = verdict.findings.map((finding: unknown) => {
      assert.ok(isObject(finding), JSON.stringify(finding));
      const keys = Object.keys(finding).filter((key) => key !== "tool");
      assert.deepEqual(keys, ["rule", "severity", "message"]);
      assert.ok(RULES.includes(String(finding.rule)), String(finding.rule));
      assert.ok(finding.severity === "error" || finding.severity === "warning");
      assert.equal(typeof finding.message, "string");
      return `${String(finding.severity)} ${String(finding.rule)} ${String(finding.tool ?? "-")}`;
    });
    // ok is false exactly when a finding is an error.
    assert.equal(verdict.ok, !findings.some((each: string) => each.startsWith("error ")));
    brief[client] = [...new Set(findings)].sort();
  }
  return brief;
}

/** A brief with no finding for any CLI, then `findings` for some. */
function expect(findings: Brief): Brief {
  const none = Object.fromEntries(CLIENTS.map((client) => [client, []]));
  return { ...none, ...Object.fromEntries(Object.entries(findings).map(([client, each]) =>
    [client, [...each].sort()])) };
}

/** The findings the tool defects give, live or recorded: the table's name, schema and
 * description rows. */
const TOOL_FINDINGS = expect({
  "claude-code": ["warning tool-name my.tool", "warning tool-name my tool",
    "error tool-name my.tool", "error tool-name my tool", `error tool-name ${LONG_ONE}`,
    `error tool-name ${LONG_TWO}`, "warning description long_description",
    "error input-schema untyped"],
  codex: ["warning tool-name my.tool", "warning tool-name my tool",
    "warning input-schema formats", "warning input-schema untyped"],
  gemini: ["warning tool-name my tool", `warning tool-name ${LONG_ONE}`,
    `warning tool-name ${LONG_TWO}`, "error input-schema untyped"],
  qwen: ["warning tool-name my.tool", "warning tool-name my tool",
    `warning tool-name ${LONG_ONE}`, `warning tool-name ${LONG_TWO}`,
    "error input-schema untyped"],
  copilot: ["warning tool-name my.tool", "warning tool-name my tool", "error tool-name my.tool",
    "error tool-name my tool", `warning tool-name ${LONG_ONE}`, `warning tool-name ${LONG_TWO}`,
    "warning input-schema formats", "warning input-schema untyped"],
});

/** The tool defects, one tool each. */
const TOOL_DEFECTS = ["dotted-name", "spaced-name", "long-names", "formats", "long-description",
  "untyped-schema"];

/** A line of JSON-RPC, as a client writes it. */
function line(message: object): string {
  return JSON.stringify({ jsonrpc: "2.0", ...message });
}

/** What a client sends to open a session in the handshake era and list the tools, then calls. */
function session(calls: readonly string[]): string {
  const initialize = { protocolVersion: "2025-06-18", capabilities: {},
    clientInfo: { name: "test", version: "1" } };
  const lines = [line({ id: 1, method: "initialize", params: initialize }),
    line({ method: "notifications/initialized" }), line({ id: 2, method: "tools/list" }),
    ...calls.map((name, index) => line({ id: 3 + index, method: "tools/call",
      params: { name, arguments: {} } }))];
  return `${lines.join("\n")}\n`;
}

/** Records a session of `input` with defects-server.mjs and `defects` through wrap; the log. */
async function record(input: string, defects: readonly string[]): Promise<string> {
  const logPath = join(tempFolder("check-recorded-"), "wire.log");
  const args = [wrapPath, "--log", logPath, "--", process.execPath, defectsServer, ...defects];
  const finished = await run(process.execPath, args, input);
  assert.equal(finished.code, 0, finished.stderr);
  return logPath;
}

test("check passes dist/server.mjs for all five CLIs, live, and exits 0", SLOW, async () => {
  const logPath = join(tempFolder("check-server-"), "check.log");
  const { code, stdout, stderr } = await check(["--log", logPath, "--", process.execPath,
    serverPath]);
  assert.equal(code, 0, stdout);
  // The server's stderr passes through, and check says where it recorded the sessions.
  assert.ok(stderr.endsWith(`wrap: check recorded it in ${logPath}\n`), stderr);
  assert.deepEqual(stdout.split("\n"), [
    "✓ Claude Code takes it as it is",
    "✓ Codex       takes it as it is",
    "✓ Gemini CLI  takes it as it is",
    "✓ Qwen Code   takes it as it is",
    "✓ Copilot CLI takes it as it is",
    "5 of 5 would connect, see every tool and get every result.",
    "",
  ]);
});

test("live, check opens the server three ways, calls no tool, and its log reads back", SLOW,
  async () => {
    const { logPath } = await checkLive([]);
    const log = readFileSync(logPath, "utf8");
    const sent = log.split("\n").flatMap((text) => {
      const method = / → (\{.*)$/.exec(text)?.[1];
      return method === undefined ? [] : [String(JSON.parse(method).method)];
    });
    // Claude Code and Copilot CLI, then Codex and Gemini CLI, then Qwen Code.
    assert.deepEqual(sent, ["server/discover", "tools/list",
      "initialize", "notifications/initialized", "tools/list",
      "initialize", "notifications/initialized", "tools/list"]);
    assert.match(log, /"protocolVersion":"2025-06-18"/);
    assert.match(log, /"protocolVersion":"2025-11-25"/);
    assert.match(log, /"io.modelcontextprotocol\/protocolVersion":"2026-07-28"/);
    const stats = await run(process.execPath, [wrapPath, "stats", "--json", logPath], "");
    const sessions: unknown = JSON.parse(stats.stdout).sessions;
    assert.ok(Array.isArray(sessions) && sessions.length === 3, stats.stdout);
    const show = await run(process.execPath, [wrapPath, "show", logPath], "");
    assert.equal(show.code, 0);
    assert.match(show.stdout, /→ tools\/list #2/);
  });

test("live, each tool defect is flagged for exactly the CLIs the table names", SLOW, async () => {
  const { finished, brief } = await checkLive(TOOL_DEFECTS);
  assert.equal(finished.code, 1);
  assert.deepEqual(brief, TOOL_FINDINGS);
});

test("from a recorded session, the tool defects are flagged the same", SLOW, async () => {
  const logPath = await record(session([]), TOOL_DEFECTS);
  const finished = await check(["--json", logPath]);
  assert.equal(finished.code, 1);
  assert.deepEqual(briefOf(finished.stdout), TOOL_FINDINGS);
});

test("from a recorded session, an unknown content block fails the call in all five, and "
  + "structuredContent alone in Claude Code and Gemini CLI", SLOW, async () => {
  const logPath = await record(session(["mixed", "structured", "add"]),
    ["mixed-result", "structured-only"]);
  const finished = await check(["--json", logPath]);
  assert.equal(finished.code, 1);
  const mixed = "error result-content mixed";
  assert.deepEqual(briefOf(finished.stdout), expect({
    "claude-code": [mixed, "error structured-content structured"],
    codex: [mixed], gemini: [mixed, "error structured-content structured"],
    qwen: [mixed], copilot: [mixed],
  }));
});

test("live, a stdout line after tools/list is flagged for Gemini CLI, and a server/discover "
  + "answered {} or -32601 for Claude Code and Copilot CLI", SLOW, async () => {
  const fallback = "warning era-fallback -";
  const table = expect({ "claude-code": [fallback], copilot: [fallback] });
  const refused = await checkLive(["discover-refused", "noise-before"]);
  assert.deepEqual(refused.brief, table);
  assert.equal(refused.finished.code, 0, "a warning alone leaves the exit code 0");
  const empty = await checkLive(["discover-empty", "noise-after-list"]);
  assert.deepEqual(empty.brief, { ...table, gemini: ["error stdout-noise -"] });
  assert.equal(empty.finished.code, 1);
  const text = await check([empty.logPath]);
  const noise = /^✗ Gemini CLI {2}error {3}stdout-noise {7}line (\d+), not JSON-RPC, after tools\/list: /m;
  const line = Number(noise.exec(text.stdout)?.[1]);
  // The line it names is the stray line, in the log check wrote.
  assert.match(readFileSync(empty.logPath, "utf8").split("\n")[line - 1] ?? "", / ← .*debug: /);
});

test("live, a first answer after 2.5 s is flagged for Codex and Claude Code", SLOW, async () => {
  const { brief } = await checkLive(["slow-2500"], PATIENT);
  const slow = "error slow-start -";
  assert.deepEqual(brief, expect({ "claude-code": [slow], codex: [slow] }));
});

test("from a recorded session, a first answer after 1.5 s is flagged for Codex alone, and one "
  + "after 5 s for Claude Code as well", async () => {
  const logPath = await record(session([]), []);
  // The log's round trips, as wrap writes them: `(1.9 ms)` after the mark.
  const original = readFileSync(logPath, "utf8");
  const answeredAfter = (ms: string) => original.replace(/ ← \(\d+\.\d ms\) /, ` ← (${ms} ms) `);
  const slow = "error slow-start -";
  writeFileSync(logPath, answeredAfter("1500.0"));
  assert.deepEqual(briefOf((await check(["--json", logPath])).stdout), expect({ codex: [slow] }));
  writeFileSync(logPath, answeredAfter("5000.0"));
  const late = expect({ "claude-code": [slow], codex: [slow] });
  assert.deepEqual(briefOf((await check(["--json", logPath])).stdout), late);
  writeFileSync(logPath, answeredAfter("900.0"));
  assert.deepEqual(briefOf((await check(["--json", logPath])).stdout), expect({}));
});

test("a server that never answers is one no CLI can list, and check says so", SLOW, async () => {
  const silent = join(tempFolder("check-silent-"), "silent.mjs");
  writeFileSync(silent, "process.stdin.resume();\n");
  const logPath = join(tempFolder("check-silent-log-"), "check.log");
  const finished = await check(["--json", "--timeout", "500", "--log", logPath, "--",
    process.execPath, silent]);
  assert.equal(finished.code, 1);
  const none = "error slow-start -";
  assert.deepEqual(briefOf(finished.stdout), expect(Object.fromEntries(CLIENTS.map((client) =>
    [client, [none]]))));
});

/** A server, in a new file, that answers initialize, and tools/list with `tools` as given. */
function serverListing(tools: unknown): string {
  const path = join(tempFolder("check-listing-"), "server.mjs");
  writeFileSync(path, [
    'import { createInterface } from "node:readline";',
    "createInterface({ input: process.stdin }).on(\"line\", (text) => {",
    "  const { id, method } = JSON.parse(text);",
    "  if (id === undefined) return;",
    `  const result = method === "tools/list" ? ${JSON.stringify({ tools })}`,
    '    : { protocolVersion: "2025-06-18", capabilities: { tools: {} } };',
    '  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id, result }) + "\\n");',
    "});",
  ].join("\n"));
  return path;
}

test("a tools/list result with no list holds no tool to judge", SLOW, async () => {
  const logPath = join(tempFolder("check-no-list-"), "check.log");
  const finished = await check(["--json", "--log", logPath, "--", process.execPath,
    serverListing(undefined)]);
  // Its answer to server/discover, which is no DiscoverResult, leaves two CLIs in 2025-11-25.
  const fallback = "warning era-fallback -";
  assert.deepEqual(briefOf(finished.stdout), expect({ "claude-code": [fallback],
    copilot: [fallback] }));
  assert.equal(finished.code, 0);
});

test("a tool's name is printed escaped: no control or bidi character reaches the terminal, "
  + "and --json stays valid JSON with the name intact", SLOW, async () => {
  const name = "evil\u001b]0;pwned\u0007\u202e\u009b";
  const hostile = serverListing([{ name, inputSchema: { type: "object" } }]);
  const logPath = join(tempFolder("check-hostile-log-"), "check.log");
  const live = ["--log", logPath, "--", process.execPath, hostile];
  const text = await check(live);
  assert.doesNotMatch(text.stdout, /[\u001b\u0007\u202e\u009b]/);
  assert.match(text.stdout, /evil\\u001b\]0;pwned\\u0007\\u202e\\u009b/);
  const json = await check(["--json", logPath]);
  assert.doesNotMatch(json.stdout, /[\u001b\u0007\u202e\u009b]/);
  const named = JSON.parse(json.stdout).clients.codex.findings.map((each: { tool: string }) =>
    each.tool);
  assert.ok(named.includes(name), json.stdout);
});

test("check exits 2 and prints its usage when given neither a log nor a command, or both, "
  + "or an option it does not take", async () => {
  const logPath = join(tempFolder("check-usage-"), "wire.log");
  writeFileSync(logPath, "");
  for (const args of [[], [logPath, "--", process.execPath, serverPath], ["--follow", logPath],
    ["--"]]) {
    const { code, stderr } = await check(args);
    assert.equal(code, 2, args.join(" "));
    assert.match(stderr, /wrap check \[--json\] WIRE_LOG \| /);
  }
});

test("check exits 1 with one plain line for a log it cannot read", async () => {
  const missing = join(tempFolder("check-missing-"), "no.log");
  const { code, stdout, stderr } = await check([missing]);
  assert.equal(code, 1);
  assert.equal(stdout, "");
  assert.match(stderr, /^wrap: cannot read .*no\.log: /);
  assert.equal(stderr.split("\n").length, 2);
});
