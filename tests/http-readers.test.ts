/**
 * wrap's readers on a session over Streamable HTTP (issue 42): show, stats, diagram and check,
 * run as dist/wrap.mjs on the hand-written HTTP log of tests/fixtures/wire-logs.ts, in the
 * format `wrap --listen` records. Each exchange is numbered `<N>`, and a response pairs with
 * the request of its own exchange: several clients there send id 1 at once. The stdio logs
 * read as before (readers, show, stats and check tests). tests/browser/render.test.ts renders
 * the HTTP diagram in a real browser.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { lines, mermaidBlocks, run, tempFolder, wrapPath } from "./helpers.ts";
import { sessions } from "./fixtures/wire-logs.ts";

/** Writes a log to a fresh file and returns its path. */
function logFile(text: string): string {
  const path = join(tempFolder("http-readers-"), "wire.log");
  writeFileSync(path, text);
  return path;
}

/** Runs a reader of dist/wrap.mjs. */
function wrap(...args: string[]) {
  return run(process.execPath, [wrapPath, ...args], "");
}

test("show prints an HTTP session as a stdio one, wrap's HTTP notes as # lines, each response with its request", async () => {
  const { code, stdout } = await wrap("show", logFile(sessions.http));
  assert.equal(code, 0);
  const shown = lines(stdout);
  assert.equal(shown[0], "─── # listen http://127.0.0.1:41234/mcp → http://127.0.0.1:8081/mcp");
  assert.ok(shown.includes("+0.000s → tools/call add #1 {\"a\":1,\"b\":2}"), stdout);
  assert.ok(shown.includes("+0.000s ← #1 1.4 ms result 19 + 23 = 42"), stdout);
  assert.ok(shown.includes("+0.000s ← notifications/progress 2/2"), stdout);
  assert.ok(shown.includes("+0.000s # <12> 502 upstream failed: ECONNREFUSED"), stdout);
  assert.ok(shown.includes("+0.000s # <2> closed by the client"), stdout);
  assert.ok(shown.some((line) => line.startsWith("+0.000s # <4> POST /mcp from 127.0.0.1:53420 ·")));
  const filtered = await wrap("show", "--method", "tools/call add", logFile(sessions.http));
  assert.deepEqual(lines(filtered.stdout), [
    "─── # listen http://127.0.0.1:41234/mcp → http://127.0.0.1:8081/mcp",
    "+0.000s → tools/call add #1 {\"a\":1,\"b\":2}",
    "+0.000s → tools/call add #1 {\"a\":19,\"b\":23}",
    "+0.000s ← #1 1.4 ms result 19 + 23 = 42",
    "+0.000s ← #1 2.6 ms result 1 + 2 = 3",
    "+0.000s → tools/call add #4 {\"a\":2,\"b\":2}",
  ]);
});

test("stats pairs each response over HTTP with the request of its own exchange, never by id alone", async () => {
  const { code, stdout } = await wrap("stats", "--json", logFile(sessions.http));
  assert.equal(code, 0);
  const [session] = JSON.parse(stdout).sessions;
  assert.equal(session.command, "http://127.0.0.1:41234/mcp → http://127.0.0.1:8081/mcp",
    "the # listen note begins the session");
  const figures = (direction: string, method: string, tool: string | null = null) =>
    session.requests.find((each: { direction: string; method: string; tool: string | null }) =>
      each.direction === direction && each.method === method && each.tool === tool);
  // Three requests with id 1 were in flight at once: listen's stream, and two calls.
  assert.deepEqual(figures("→", "subscriptions/listen"), { direction: "→",
    method: "subscriptions/listen", tool: null, count: 1, errors: 0, p50Ms: null, p95Ms: null,
    maxMs: null });
  assert.deepEqual(figures("→", "tools/call", "add"), { direction: "→", method: "tools/call",
    tool: "add", count: 3, errors: 0, p50Ms: 1.4, p95Ms: 2.6, maxMs: 2.6 });
  assert.equal(figures("→", "tools/call", "wait").p50Ms, 2004.3, "the response after progress");
  assert.equal(figures("→", "initialize").p50Ms, 2.0, "a fourth id 1");
  // A server's request on an event stream, answered in a POST of its own: by id.
  assert.equal(figures("←", "elicitation/create").p50Ms, 812.5);
  assert.equal(figures("→", "tools/call", "deploy").p50Ms, 815.0);
  assert.deepEqual(session.notifications, [
    { direction: "←", method: "notifications/progress", count: 2 },
    { direction: "→", method: "notifications/initialized", count: 1 },
  ]);
  // The listen stream the client closed, and the call the upstream never took (502).
  assert.equal(session.unanswered, 2);
  assert.deepEqual(session.tags, {}, "an exchange number is no tag");
});

test("diagram draws an HTTP session's event streams and ends as notes, never a note per exchange", async () => {
  const { code, stdout } = await wrap("diagram", logFile(sessions.http));
  assert.equal(code, 0);
  const [block = "", ...more] = mermaidBlocks(stdout);
  assert.equal(more.length, 0);
  assert.ok(block.startsWith("sequenceDiagram\nparticipant C as claude-code\n" +
    "participant S as json-rpc-study\n"), block);
  const notes = block.split("\n").filter((line) => line.startsWith("Note"));
  assert.deepEqual(notes, [
    "Note over C,S: listen http://127.0.0.1:41234/mcp → http://127.0.0.1:8081/mcp",
    "Note over C,S: subscriptions/listen: 200 text/event-stream",
    "Note over C,S: tools/call wait: 200 text/event-stream",
    "Note over C,S: GET /mcp: 200 text/event-stream",
    "Note over C,S: tools/call deploy: 200 text/event-stream",
    "Note over C,S: tools/call add: 502 upstream failed: ECONNREFUSED",
    "Note over C,S: DELETE /mcp: 405 application/json",
    "Note over C,S: subscriptions/listen: closed by the client",
    "Note over C,S: GET /mcp: closed by the client",
    "Note over C,S: exit signal SIGTERM",
  ]);
  assert.match(block, /^S-->>C: 2004\.3 ms Waited 2 seconds$/m);
  assert.match(block, /^S->>C: elicitation\/create Deploy to production\?$/m);
  assert.match(block, /^C-->>S: 812\.5 ms accept （'confirm':true）$/m);
  assert.equal(block.match(/^S-->>C: \d/gm)?.length, 7, "every response that came, with its time");
  assert.doesNotMatch(block, /‹\d+›|POST|Mcp-/, "no exchange number, POST head or header");
});

test("check holds an HTTP log to the rules that apply to it, and names the two that do not", async () => {
  // A slow probe and a stray body after tools/list: findings on stdio, none over HTTP.
  const stray = "2026-12-02T15:24:06.863Z ← [not JSON-RPC] <html>Bad gateway</html>";
  const log = sessions.http.replace("(3.2 ms)", "(6000.0 ms)")
    .replace(/^.*# exit signal SIGTERM$/m, (exit) => `${stray}\n${exit}`);
  const { code, stdout } = await wrap("check", logFile(log));
  assert.equal(code, 0, stdout);
  assert.match(stdout, /^5 of 5 would connect, see every tool and get every result\.$/m);
  assert.match(stdout, /^Over HTTP, not applied: slow-start \(its wait for a first answer, measured for a server the CLI starts\), stdout-noise \(there is no stdout over HTTP\)\.$/m);
  const json = JSON.parse((await wrap("check", "--json", logFile(log))).stdout);
  assert.deepEqual(json.notApplied.map((each: { rule: string }) => each.rule), ["slow-start", "stdout-noise"]);
  // What still applies: a probe that does not offer 2026-07-28, and a tool without a type.
  const refused = log.replace('"supportedVersions":["2025-11-25","2026-07-28"]', '"supportedVersions":["2025-11-25"]')
    .replace('{"name":"add","inputSchema":{"type":"object"}}', '{"name":"add","inputSchema":{}}');
  const findings = JSON.parse((await wrap("check", "--json", logFile(refused))).stdout).clients["claude-code"].findings;
  assert.deepEqual(findings.map((each: { rule: string }) => each.rule).sort(), ["era-fallback", "input-schema"]);
  // A stdio log names no rule that does not apply.
  const stdio = JSON.parse((await wrap("check", "--json", logFile(sessions.legacy))).stdout);
  assert.equal(stdio.notApplied, undefined);
  assert.doesNotMatch((await wrap("check", logFile(sessions.legacy))).stdout, /Over HTTP/);
});
