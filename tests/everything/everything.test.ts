/**
 * wrap against a server no one here wrote: server-everything, the reference server that
 * exercises every MCP feature, driven by the official SDK client through dist/wrap.mjs
 * (tests/fixtures/everything-session.ts). Two sessions are recorded once, before the tests:
 * `full`, where the client offers roots and sampling and the server asks for both, and
 * `plain`, where it offers nothing. Each test reads a log back: first what the log holds, then
 * what wrap's readers make of it. A reader's check is one more test at the end, over
 * `recorded("full").logPath` or `recorded("plain").logPath`.
 *
 * Run by .ci/run after `npm ci --prefix tests/everything`:
 *   node --import tsx --test tests/everything/*.test.ts
 * Everything stays on this machine: the server's transport is stdio, and no tool called
 * reaches the network. The one folder the suite writes is removed at its end, pass or fail.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mermaidBlocks, run, start, waitUntil, wrapPath } from "../helpers.ts";
import {
  everythingCommand, everythingPath, LONG_RUN, recordSession, ROOT, ROOTS_TOOL, SAMPLED, SAMPLING_TOOL,
  type Recorded,
} from "../fixtures/everything-session.ts";

/** One event of a wire.log: its time, mark, round-trip note, tags, and its text as JSON. */
interface LogEvent {
  time: number;
  mark: string;
  elapsed: string | undefined;
  tags: string[];
  text: string;
  message: unknown;
}

/** A server cold start and a session of a few seconds, on a loaded two-core machine. */
const LIMIT = { timeout: 120_000 };

/** An event's head: time, mark, a response's round-trip time, the tags (wrap.ts's header). */
const EVENT = /^(\S+) ([→←!#]) (?:\((\d+\.\d) ms\) )?((?:\[[^\]]+\] )*)(.*)$/;

/** The server's requests to the client, each with the tool whose result shows the answer. */
const SERVER_REQUESTS = [
  ["roots/list", ROOTS_TOOL], ["sampling/createMessage", SAMPLING_TOOL],
] as const;

const scratch = mkdtempSync(join(tmpdir(), "everything-test-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

const sessions = new Map<"full" | "plain", Recorded>();
before(async () => {
  if (!existsSync(everythingPath)) {
    throw new Error("server-everything is missing: run npm ci --prefix tests/everything");
  }
  const [full, plain] = await Promise.all([
    recordSession(mkdtempSync(join(scratch, "full-")), true),
    recordSession(mkdtempSync(join(scratch, "plain-")), false),
  ]);
  sessions.set("full", full);
  sessions.set("plain", plain);
}, LIMIT);

/** A session recorded before the tests; a test of a session that failed to record fails. */
function recorded(name: "full" | "plain"): Recorded {
  const session = sessions.get(name);
  if (session === undefined) throw new Error(`the ${name} session was not recorded`);
  return session;
}

/** The value at a path of own keys, or undefined. */
function dig(value: unknown, ...keys: string[]): unknown {
  const [key, ...rest] = keys;
  if (key === undefined) return value;
  const holds = typeof value === "object" && value !== null && Object.hasOwn(value, key);
  return holds ? dig(Reflect.get(value, key), ...rest) : undefined;
}

/** JSON text's value, or undefined for text that is not JSON (a note, a stderr line). */
function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Reads a wire.log: every line must be an event. */
function readLog(path: string): LogEvent[] {
  return readFileSync(path, "utf8").trimEnd().split("\n").map((line) => {
    const head = EVENT.exec(line);
    assert.ok(head, `not an event: ${line.slice(0, 80)}`);
    const [, time = "", mark = "", elapsed, tags = "", text = ""] = head;
    const tagList = tags.split("] ").filter((tag) => tag !== "").map((tag) => `${tag}]`);
    return { time: Date.parse(time), mark, elapsed, tags: tagList, text, message: parsed(text) };
  });
}

/** The events of a log with a mark whose message has `method`. */
function withMethod(events: readonly LogEvent[], mark: string, method: string): LogEvent[] {
  return events.filter((event) => event.mark === mark && dig(event.message, "method") === method);
}

/** The response in the log that answers the request `asked`, sent the other way. */
function answerTo(events: readonly LogEvent[], asked: LogEvent): LogEvent | undefined {
  const id = dig(asked.message, "id");
  const mark = asked.mark === "←" ? "→" : "←";
  return events.find((event) => {
    const answers = dig(event.message, "result") !== undefined;
    return event.mark === mark && answers && dig(event.message, "id") === id;
  });
}

/** The text of a tool result's first content item. */
function firstText(session: Recorded, tool: string): unknown {
  return dig(session.results.get(tool), "content", "0", "text");
}

test("the long-running operation's progress notifications reach the client, and the log has each",
  LIMIT, () => {
  const { logPath, progress } = recorded("full");
  const events = readLog(logPath);
  const [call] = events.filter((event) => {
    return event.mark === "→" && dig(event.message, "params", "name") === LONG_RUN.name;
  });
  const token = dig(call?.message, "params", "_meta", "progressToken");
  assert.notEqual(token, undefined, "the SDK asks for progress when onprogress is given");
  const logged = withMethod(events, "←", "notifications/progress")
    .filter((event) => dig(event.message, "params", "progressToken") === token)
    .map((event) => dig(event.message, "params"));
  const steps = Array.from({ length: LONG_RUN.steps }, (_, step) => step + 1);
  assert.deepEqual(logged, steps.map((step) => ({ progress: step, total: LONG_RUN.steps,
    progressToken: token })));
  // The SDK runs a notification's handler a microtask late but settles a response at once, so
  // the last step, sent just before the result, may come too late for onprogress.
  assert.ok(progress.length >= LONG_RUN.steps - 1, JSON.stringify(progress));
  assert.deepEqual(progress, steps.slice(0, progress.length)
    .map((step) => ({ progress: step, total: LONG_RUN.steps })));
  assert.match(String(firstText(recorded("full"), LONG_RUN.name)), /Steps: 3\.$/);
  assert.ok(call !== undefined && answerTo(events, call)?.elapsed !== undefined, "result timed");
});

for (const [method, tool] of SERVER_REQUESTS) {
  const name = `the server's ${method} request is answered by the client, and the log pairs it`;
  test(name, LIMIT, () => {
    const session = recorded("full");
    const events = readLog(session.logPath);
    const asked = withMethod(events, "←", method);
    assert.equal(asked.length, 1, `one ${method} from the server`);
    const [request] = asked;
    const answer = request === undefined ? undefined : answerTo(events, request);
    assert.ok(request && answer, `the client's answer to ${method} is in the log`);
    // Both sides count ids from 0, so the client sent a request with this id too; pairing by id
    // alone would time the answer from that one.
    const id = dig(request.message, "id");
    assert.ok(events.some((event) => event.mark === "→" && dig(event.message, "id") === id));
    // The round-trip time is from the server's request: the events' times (ms, cut) agree.
    const between = answer.time - request.time;
    assert.ok(Math.abs(Number(answer.elapsed) - between) <= 1.5, `${answer.elapsed} vs ${between}`);
    assert.deepEqual(answer.tags, []);
    const expected = method === "roots/list" ? { roots: [ROOT] } : SAMPLED;
    assert.deepEqual(dig(answer.message, "result"), expected);
    assert.deepEqual(session.asked, { roots: 1, sampling: 1 });
    // The server used the answer: its tool's result quotes it.
    const quoted = method === "roots/list" ? ROOT.uri : "a sampled answer";
    assert.ok(String(firstText(session, tool)).includes(quoted), String(firstText(session, tool)));
  });
}

test("each log has no hygiene tag, nothing unanswered, and ends as the server did", LIMIT, () => {
  for (const session of [recorded("full"), recorded("plain")]) {
    const events = readLog(session.logPath);
    assert.deepEqual(events.flatMap((event) => event.tags), []);
    const notes = events.filter((event) => event.mark === "#").map((event) => event.text);
    assert.deepEqual(notes.filter((note) => note.startsWith("unanswered")), []);
    // server-everything exits 0 at the end of its input, well before the SDK's SIGTERM.
    assert.deepEqual(notes.slice(-2), ["end of input", "exit code 0"]);
    const stderr = events.filter((event) => event.mark === "!").map((event) => event.text);
    assert.deepEqual(stderr, ["Starting default (STDIO) server..."]);
    assert.ok(session.stderr.startsWith(`${stderr[0]}\n`), "and wrap passed it on");
  }
  assert.deepEqual(recorded("plain").asked, { roots: 0, sampling: 0 });
});

test("wrap diagram draws the progress, the server's requests and their timed answers", LIMIT,
  async () => {
  const { code, stdout } = await run(process.execPath,
    [wrapPath, "diagram", recorded("full").logPath], "");
  assert.equal(code, 0);
  const blocks = mermaidBlocks(stdout);
  assert.ok(blocks.length > 0);
  const statements = blocks.join("\n").split("\n");
  assert.ok(statements.includes("participant C as everything-test"));
  assert.ok(statements.includes("participant S as mcp-servers/everything"));
  const progress = statements.filter((line) => line === "S-)C: notifications/progress");
  assert.equal(progress.length, LONG_RUN.steps);
  for (const method of ["roots/list", "sampling/createMessage"]) {
    const at = statements.indexOf(`S->>C: ${method}`);
    assert.ok(at !== -1, method);
    assert.ok(statements.slice(at + 1).some((line) => /^C-->>S: \d+\.\d ms result$/.test(line)));
  }
  // tests/browser/render.test.ts renders this session's diagram in Mermaid 8.10, 11 and 12.
});

test("wrap replay of the plain session passes against the same server", LIMIT, async () => {
  const { code, stdout } = await run(process.execPath,
    [wrapPath, "replay", recorded("plain").logPath, "--", ...everythingCommand], "");
  assert.equal(stdout, "replay: 2 responses, 2 match, 0 differ, 0 missing, 0 unexpected\n");
  assert.equal(code, 0);
});

// The client's answers to roots/list and sampling/createMessage are sent only once the
// replayed server has asked, as the client sent them.
test("wrap replay of the full session passes against the same server", LIMIT, async () => {
  const { code, stdout } = await run(process.execPath,
    [wrapPath, "replay", "--timeout", "3000", recorded("full").logPath, "--",
      ...everythingCommand], "");
  assert.equal(stdout, "replay: 4 responses, 4 match, 0 differ, 0 missing, 0 unexpected\n");
  assert.equal(code, 0);
});

/** One request's figures as `wrap stats --json` prints them. */
interface RequestFigures {
  direction: string;
  method: string;
  tool: string | null;
  count: number;
  errors: number;
  maxMs: number | null;
}

test("wrap stats counts each tool call and the server's requests, with the errors the client saw", LIMIT, async () => {
  const session = recorded("full");
  const { code, stdout } = await run(process.execPath, [wrapPath, "stats", "--json", session.logPath], "");
  assert.equal(code, 0);
  const [figures] = JSON.parse(stdout).sessions;
  const requests: RequestFigures[] = figures.requests;
  const calls = requests.filter((each) => each.method === "tools/call");
  assert.deepEqual(calls.map((each) => each.tool).sort(), [...session.results.keys()].sort());
  for (const call of calls) {
    const seen = session.results.get(call.tool ?? "");
    assert.equal(call.count, 1);
    assert.equal(call.errors, seen?.isError === true ? 1 : 0, `${call.tool}: errors as the client saw them`);
    assert.equal(typeof call.maxMs, "number");
  }
  const fromServer = requests.filter((each) => each.direction === "←").map((each) => each.method).sort();
  assert.deepEqual(fromServer, ["roots/list", "sampling/createMessage"]);
  const progress = figures.notifications.find((each: { method: string }) => each.method === "notifications/progress");
  assert.equal(progress?.count, LONG_RUN.steps);
  assert.equal(figures.unanswered, 0);
});

test("wrap show prints the session's calls, progress and server requests, one line each", LIMIT, async () => {
  const { code, stdout } = await run(process.execPath, [wrapPath, "show", recorded("full").logPath], "");
  assert.equal(code, 0);
  const shown = stdout.split("\n");
  assert.ok(shown.every((line) => Array.from(line).length <= 80), "fitted to 80 columns");
  assert.ok(shown.some((line) => line.includes(`→ tools/call ${LONG_RUN.name}`)));
  assert.equal(shown.filter((line) => / ← notifications\/progress \d+\/\d+/.test(line)).length, LONG_RUN.steps);
  assert.ok(shown.some((line) => / ← roots\/list #/.test(line)));
  assert.ok(shown.some((line) => / ← sampling\/createMessage #/.test(line)));
  const errorsOnly = await run(process.execPath, [wrapPath, "show", "--errors", recorded("full").logPath], "");
  assert.equal(errorsOnly.stdout.split("\n").filter((line) => line.startsWith("+")).length, 0, "no call failed");
});

test("wrap replay against a changed server gives a short report, redacted", LIMIT, async () => {
  // The same server with a token in its environment: get-env's answer now differs, and holds it.
  const changed = `${"sk-"}${"0123456789abcdefghijklmnop"}`;
  const path = join(scratch, "env.log");
  const record = [wrapPath, "--log", path, "--", ...everythingCommand];
  const input = [
    { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } } },
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "get-env", arguments: {} } },
  ].map((message) => `${JSON.stringify(message)}\n`).join("");
  const recorder = start(process.execPath, record);
  recorder.child.stdin.write(input);
  await waitUntil(() => recorder.output().includes('"id":1'), "get-env's answer", 60_000);
  recorder.child.stdin.end();
  await recorder.finish;
  const env = { ...process.env, T: changed };
  const replayed = await run(process.execPath,
    [wrapPath, "replay", "--timeout", "10000", path, "--", ...everythingCommand], "", { env });
  assert.equal(replayed.code, 1);
  const [report = ""] = replayed.stdout.split("\nreplay: ");
  assert.ok(report.split("\n").length <= 6 && report.length <= 1_000, report);
  assert.match(report, /^✗ 1 "tools\/call"\n {2}result\.content\.0\.text: strings part at character \d+/);
  assert.doesNotMatch(replayed.stdout, /sk-0123/);
  const open = await run(process.execPath,
    [wrapPath, "replay", "--no-redact", "--timeout", "10000", path, "--", ...everythingCommand], "",
    { env });
  assert.match(open.stdout, /sk-0123456789abcdef/, "the token is there to be redacted");
});
