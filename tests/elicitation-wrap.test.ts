/**
 * wrap's readers on elicitation, in both eras. Legacy (2025-06-18, 2025-11-25
 * client/elicitation): the server sends elicitation/create and the client answers with an
 * ElicitResult. Modern (2026-07-28 basic/patterns/mrtr): the server answers tools/call with an
 * input_required result, and the client retries under a new id with the result's requestState.
 * Hand-written logs with fixed times go through dist/wrap.mjs's diagram, show and stats.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ask, lines, mermaidBlocks, root, run, start, tempFolder, wrapPath } from "./helpers.ts";
import { build } from "./fixtures/runtime-tools.ts";

/** The schema every elicitation here asks for: one boolean. */
const SCHEMA = '{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}';

/** A legacy session: elicitations answered accept, decline, cancel, with an error, cancelled. */
const LEGACY = [
  "2026-12-04T10:00:00.000Z # start pid 1: node server.mjs",
  '2026-12-04T10:00:00.100Z → {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"deploy","arguments":{"target":"production"}}}',
  `2026-12-04T10:00:00.110Z ← {"jsonrpc":"2.0","id":"elicitation-1","method":"elicitation/create","params":{"message":"Deploy to production?","requestedSchema":${SCHEMA}}}`,
  '2026-12-04T10:00:00.950Z → (840.2 ms) {"jsonrpc":"2.0","id":"elicitation-1","result":{"action":"accept","content":{"confirm":true}}}',
  '2026-12-04T10:00:00.951Z ← (851.0 ms) {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"Deployed to production"}]}}',
  `2026-12-04T10:00:01.000Z ← {"jsonrpc":"2.0","id":"elicitation-2","method":"elicitation/create","params":{"message":"Really?","requestedSchema":${SCHEMA}}}`,
  '2026-12-04T10:00:01.100Z → (100.0 ms) {"jsonrpc":"2.0","id":"elicitation-2","result":{"action":"decline"}}',
  `2026-12-04T10:00:01.200Z ← {"jsonrpc":"2.0","id":"elicitation-3","method":"elicitation/create","params":{"message":"Sure?","requestedSchema":${SCHEMA}}}`,
  '2026-12-04T10:00:01.300Z → (100.0 ms) {"jsonrpc":"2.0","id":"elicitation-3","result":{"action":"cancel"}}',
  `2026-12-04T10:00:01.400Z ← {"jsonrpc":"2.0","id":"elicitation-4","method":"elicitation/create","params":{"message":"Again?","requestedSchema":${SCHEMA}}}`,
  '2026-12-04T10:00:01.405Z → (5.0 ms) {"jsonrpc":"2.0","id":"elicitation-4","error":{"code":-32601,"message":"Method not found"}}',
  `2026-12-04T10:00:01.500Z ← {"jsonrpc":"2.0","id":"elicitation-5","method":"elicitation/create","params":{"message":"Last?","requestedSchema":${SCHEMA}}}`,
  '2026-12-04T10:00:01.600Z ← {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"elicitation-5","reason":"call cancelled"}}',
  "2026-12-04T10:00:02.000Z # exit code 0",
  "",
].join("\n");

/** The first input_required result's requestState, which the retry sends back byte for byte. */
const STATE_1 = "eyJjYWxsIjoi.abc";
const STATE_2 = "eyJyb3VuZCI6Mn0.def";

/** The `_meta` a modern client sends on every request. */
const META = '"_meta":{"progressToken":5,"io.modelcontextprotocol/protocolVersion":"2026-07-28"}';

/** One elicitation/create input request under a key the server chose. */
function inputRequest(key: string, message: string): string {
  return `"${key}":{"method":"elicitation/create","params":{"message":"${message}","requestedSchema":${SCHEMA}}}`;
}

/** A modern session: three rounds of one call, a retry with an unknown requestState, then a
 * second session that reuses the first one's requestState, which means nothing there. */
const MODERN = [
  "2026-12-04T11:00:00.000Z # start pid 2: node server.mjs",
  `2026-12-04T11:00:00.100Z → {"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"deploy","arguments":{"target":"production"},${META}}}`,
  `2026-12-04T11:00:00.103Z ← (3.1 ms) {"jsonrpc":"2.0","id":5,"result":{"resultType":"input_required","inputRequests":{${inputRequest("elicitation-1", "Deploy to production?")}},"requestState":"${STATE_1}","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"json-rpc-study","version":"0.1.0"}}}}`,
  `2026-12-04T11:00:01.000Z → {"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"deploy","arguments":{"target":"production"},"inputResponses":{"elicitation-1":{"action":"accept","content":{"confirm":true}}},"requestState":"${STATE_1}",${META}}}`,
  `2026-12-04T11:00:01.002Z ← (2.0 ms) {"jsonrpc":"2.0","id":6,"result":{"resultType":"input_required","inputRequests":{${inputRequest("elicitation-2", "Region eu?")},${inputRequest("elicitation-3", "Notify?")}},"requestState":"${STATE_2}"}}`,
  `2026-12-04T11:00:02.000Z → {"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"deploy","arguments":{"target":"production"},"inputResponses":{"elicitation-2":{"action":"accept","content":{"confirm":true}},"elicitation-3":{"action":"decline"}},"requestState":"${STATE_2}",${META}}}`,
  '2026-12-04T11:00:02.002Z ← (2.0 ms) {"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"Deployed to production"}],"resultType":"complete"}}',
  `2026-12-04T11:00:03.000Z → {"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"deploy","arguments":{"target":"staging"},"inputResponses":{"confirm":{"action":"cancel"}},"requestState":"unknown",${META}}}`,
  '2026-12-04T11:00:03.001Z ← (1.0 ms) {"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"text","text":"Cancelled"}],"resultType":"complete"}}',
  "2026-12-04T11:00:04.000Z # exit code 0",
  "2026-12-04T12:00:00.000Z # start pid 3: node server.mjs",
  `2026-12-04T12:00:00.100Z → {"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"deploy","arguments":{"target":"production"},"inputResponses":{"elicitation-1":{"action":"accept","content":{"confirm":true}}},"requestState":"${STATE_1}",${META}}}`,
  "",
].join("\n");

/** A log in a folder of its own. */
function logFile(text: string): string {
  const path = join(tempFolder("elicitation-wrap-"), "wire.log");
  writeFileSync(path, text);
  return path;
}

/** Runs a reader of dist/wrap.mjs, stdout a pipe and no colour. */
function wrap(...args: string[]) {
  return run(process.execPath, [wrapPath, ...args], "", { env: { ...process.env, NO_COLOR: "" } });
}

/** The lines of one session's diagram, from its only block. */
async function diagramLines(log: string): Promise<string[]> {
  const { code, stdout } = await wrap("diagram", logFile(log));
  assert.equal(code, 0);
  const blocks = mermaidBlocks(stdout);
  assert.equal(blocks.length, 1, stdout);
  return (blocks[0] ?? "").split("\n");
}

test("a legacy elicitation is the server's request arrow, and the answer names its action", async () => {
  const statements = await diagramLines(LEGACY);
  const arrows = statements.filter((statement) => /^[CS]-/.test(statement));
  assert.deepEqual(arrows, [
    "C->>S: tools/call deploy",
    "S->>C: elicitation/create Deploy to production?",
    "C-->>S: 840.2 ms accept （'confirm':true）",
    "S-->>C: 851.0 ms Deployed to production",
    "S->>C: elicitation/create Really?",
    "C-->>S: 100.0 ms decline",
    "S->>C: elicitation/create Sure?",
    "C-->>S: 100.0 ms cancel",
    "S->>C: elicitation/create Again?",
    "C-->>S: 5.0 ms error -32601",
    "S->>C: elicitation/create Last?",
    "S-)C: notifications/cancelled",
  ]);
});

test("an input_required result says what it asks, and each retry is drawn with its round", async () => {
  const statements = await diagramLines(MODERN);
  const arrows = statements.filter((statement) => /^[CS]-/.test(statement));
  assert.deepEqual(arrows, [
    "C->>S: tools/call deploy",
    // The questions, without the method they travel in: an arrow holds 50 characters.
    "S-->>C: 3.1 ms input required: Deploy to production?",
    "C->>S: tools/call deploy (round 2)",
    "S-->>C: 2.0 ms input required: Region eu?, Notify?",
    "C->>S: tools/call deploy (round 3)",
    "S-->>C: 2.0 ms Deployed to production",
    "C->>S: tools/call deploy (retry)",
    "S-->>C: 1.0 ms Cancelled",
    // A new session knows none of the last one's requestStates.
    "C->>S: tools/call deploy (retry)",
  ]);
});

test("every statement of an elicitation diagram is one Mermaid statement, its text inert", async () => {
  for (const log of [LEGACY, MODERN]) {
    for (const statement of await diagramLines(log)) {
      assert.match(statement, /^(sequenceDiagram|participant [CS] as |[CS](->>|-->>|-\))[CS]: |Note over C,S: )/, statement);
      const text = statement.replace(/^[^:]*: ?/, "");
      assert.doesNotMatch(text, /[;#<>"%{}&\n]/, statement);
    }
  }
});

test("show gives a legacy elicitation's message, and each answer's action and content", async () => {
  const { code, stdout } = await wrap("show", logFile(LEGACY));
  assert.equal(code, 0);
  assert.deepEqual(lines(stdout), [
    "─── # start pid 1: node server.mjs",
    '+0.100s → tools/call deploy #3 {"target":"production"}',
    '+0.110s ← elicitation/create #"elicitation-1" Deploy to production?',
    '+0.950s → #"elicitation-1" 840.2 ms result accept {"confirm":true}',
    "+0.951s ← #3 851.0 ms result Deployed to production",
    '+1.000s ← elicitation/create #"elicitation-2" Really?',
    '+1.100s → #"elicitation-2" 100.0 ms result decline',
    '+1.200s ← elicitation/create #"elicitation-3" Sure?',
    '+1.300s → #"elicitation-3" 100.0 ms result cancel',
    '+1.400s ← elicitation/create #"elicitation-4" Again?',
    '+1.405s → #"elicitation-4" 5.0 ms error -32601 Method not found',
    '+1.500s ← elicitation/create #"elicitation-5" Last?',
    '+1.600s ← notifications/cancelled #"elicitation-5" call cancelled',
    "+2.000s # exit code 0",
  ]);
});

test("show gives an input_required result's asks, and each retry's round", async () => {
  const { code, stdout } = await wrap("show", logFile(MODERN));
  assert.equal(code, 0);
  assert.deepEqual(lines(stdout), [
    "─── # start pid 2: node server.mjs",
    '+0.100s → tools/call deploy #5 {"target":"production"}',
    '+0.103s ← #5 3.1 ms input_required elicitation/create "Deploy to production?"',
    '+1.000s → tools/call deploy #6 round 2 {"target":"production"}',
    '+1.002s ← #6 2.0 ms input_required elicitation/create "Region eu?", "Notify?"',
    '+2.000s → tools/call deploy #7 round 3 {"target":"production"}',
    "+2.002s ← #7 2.0 ms result Deployed to production",
    '+3.000s → tools/call deploy #8 retry {"target":"staging"}',
    "+3.001s ← #8 1.0 ms result Cancelled",
    "+4.000s # exit code 0",
    "─── # start pid 3: node server.mjs",
    '+0.100s → tools/call deploy #6 retry {"target":"production"}',
  ]);
});

test("show --method tools/call keeps every round of a call and each round's response", async () => {
  const path = logFile(MODERN);
  const { stdout } = await wrap("show", "--method", "tools/call", path);
  // Every message of this log is a call or answers one: only wrap's `# exit` note is left out.
  const whole = lines((await wrap("show", path)).stdout).filter((line) => !/ # exit /.test(line));
  assert.deepEqual(lines(stdout), whole);
  assert.equal(whole.filter((line) => / (round \d|retry) /.test(line)).length, 4);
});

test("show --method elicitation/create keeps the server's requests and the client's answers", async () => {
  const { stdout } = await wrap("show", "--method", "elicitation/create", logFile(LEGACY));
  const shown = lines(stdout).filter((line) => !line.startsWith("───"));
  assert.equal(shown.length, 9, stdout);
  assert.ok(shown.every((line) => line.includes('#"elicitation-')), stdout);
  assert.ok(shown.some((line) => line.endsWith('→ #"elicitation-1" 840.2 ms result accept {"confirm":true}')));
  assert.ok(!shown.some((line) => line.includes("tools/call")), stdout);
});

test("stats counts elicitation/create under ←, and an input_required result is no error", async () => {
  const legacy = JSON.parse((await wrap("stats", "--json", logFile(LEGACY))).stdout);
  const [session] = legacy.sessions;
  const elicit = session.requests.find((figures: { method: string }) => figures.method === "elicitation/create");
  assert.deepEqual([elicit.direction, elicit.count, elicit.errors, elicit.maxMs], ["←", 5, 1, 840.2]);
  assert.equal(session.unanswered, 1, "elicitation-5 was cancelled, never answered");
  const modern = JSON.parse((await wrap("stats", "--json", logFile(MODERN))).stdout);
  const [call] = modern.sessions[0].requests;
  assert.deepEqual([call.direction, call.method, call.tool, call.count, call.errors], ["→", "tools/call", "deploy", 4, 0]);
});

/** A server that answers tools/call by asking the client first, as a legacy server does. */
const ASKING_SERVER = `import { createInterface } from "node:readline";
let call;
const send = (message) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\\n");
createInterface({ input: process.stdin }).on("line", (line) => {
  const message = JSON.parse(line);
  if (message.method === "tools/call") {
    call = message.id;
    send({ id: "elicitation-1", method: "elicitation/create",
      params: { message: "Deploy to production?", requestedSchema: ${SCHEMA} } });
  }
  if (message.id === "elicitation-1") {
    send({ id: call, result: { content: [{ type: "text", text: message.result.action }] } });
  }
});
`;

test("wrap records a client's answer to elicitation/create with its round trip, and show reads it", async () => {
  const folder = tempFolder("elicitation-wrap-record-");
  const server = join(folder, "server.mjs");
  const log = join(folder, "wire.log");
  writeFileSync(server, ASKING_SERVER);
  const wrapped = start(process.execPath, [wrapPath, "--log", log, "--", process.execPath, server]);
  const call = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"deploy","arguments":{}}}';
  assert.match(await ask(wrapped.child, call), /"method":"elicitation\/create"/);
  const answer = '{"jsonrpc":"2.0","id":"elicitation-1","result":{"action":"accept","content":{"confirm":true}}}';
  assert.match(await ask(wrapped.child, answer), /"text":"accept"/);
  wrapped.child.stdin.end();
  assert.equal((await wrapped.finish).code, 0);
  const shown = lines((await wrap("show", log)).stdout).map((line) => line.replace(/^\S+ /, ""));
  assert.deepEqual(shown.slice(1, 5).map((line) => line.replace(/\d+\.\d ms/, "N ms")), [
    "→ tools/call deploy #1 {}",
    '← elicitation/create #"elicitation-1" Deploy to production?',
    '→ #"elicitation-1" N ms result accept {"confirm":true}',
    "← #1 N ms result accept",
  ]);
});

test("replay carries a 2026-07-28 session over: each retry is sent with the requestState the replayed server wrote", { timeout: 60_000 }, async () => {
  const { server, remove } = await build();
  try {
    const log = join(tempFolder("elicitation-replay-"), "wire.log");
    const meta = {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientInfo": { name: "test", version: "1" },
      "io.modelcontextprotocol/clientCapabilities": { elicitation: {} },
    };
    const call = (id: number, extra: object) => JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "ask", arguments: { n: 2 }, ...extra, _meta: meta } });
    const recorder = start(process.execPath, [wrapPath, "--log", log, "--", process.execPath, server]);
    let reply = JSON.parse(await ask(recorder.child, call(1, {})));
    for (const [id, key] of [[2, "elicitation-1"], [3, "elicitation-2"]] as const) {
      const inputResponses = { [key]: { action: "accept", content: { ok: true } } };
      reply = JSON.parse(await ask(recorder.child, call(id, { inputResponses, requestState: reply.result.requestState })));
    }
    assert.equal(reply.result.resultType, "complete");
    recorder.child.stdin.end();
    await recorder.finish;
    const replayed = await run(process.execPath, [wrapPath, "replay", log, "--", process.execPath, server], "");
    assert.equal(replayed.stdout, "replay: 3 responses, 3 match, 0 differ, 0 missing, 0 unexpected\n");
    assert.equal(replayed.code, 0);
  } finally {
    remove();
  }
});

/** README's deploy tool pasted into server.ts, without server/discover: a handshake-era server
 * whose tool asks the user with elicitation/create (tests/claude-code/deploy-server.mjs). */
const LEGACY_DEPLOY = [process.execPath, join(root, "tests", "claude-code", "deploy-server.mjs"), "--legacy"];

test("replay carries a handshake-era session over: each answer to elicitation/create goes once the replayed server has asked", { timeout: 60_000 }, async () => {
  const log = join(tempFolder("elicitation-legacy-replay-"), "wire.log");
  const recorder = start(process.execPath, [wrapPath, "--log", log, "--", ...LEGACY_DEPLOY]);
  try {
    const initialize = { protocolVersion: "2025-11-25", capabilities: { elicitation: {} }, clientInfo: { name: "test", version: "1" } };
    await ask(recorder.child, JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: initialize }));
    recorder.child.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
    const answers = [["production", { action: "accept", content: { confirm: true } }], ["staging", { action: "decline" }]] as const;
    for (const [index, [environment, result]] of answers.entries()) {
      const call = { jsonrpc: "2.0", id: index + 1, method: "tools/call", params: { name: "deploy", arguments: { environment } } };
      const asked = JSON.parse(await ask(recorder.child, JSON.stringify(call)));
      assert.equal(asked.method, "elicitation/create");
      const answered = JSON.parse(await ask(recorder.child, JSON.stringify({ jsonrpc: "2.0", id: asked.id, result })));
      assert.equal(answered.id, index + 1);
    }
  } finally {
    recorder.child.stdin.end();
  }
  assert.equal((await recorder.finish).code, 0);
  const recorded = readFileSync(log, "utf8");
  assert.match(recorded, /← \{"jsonrpc":"2\.0","id":"elicitation-2","method":"elicitation\/create"/);
  assert.match(recorded, /→ \(\d+\.\d ms\) \{"jsonrpc":"2\.0","id":"elicitation-2","result":\{"action":"decline"\}\}/);
  // The replayed server is recorded too, to see the order in which its pipes saw the lines.
  const again = join(tempFolder("elicitation-legacy-again-"), "wire.log");
  const wrapped = [process.execPath, wrapPath, "--log", again, "--", ...LEGACY_DEPLOY];
  const replayed = await run(process.execPath, [wrapPath, "replay", log, "--", ...wrapped], "");
  assert.equal(replayed.stdout, "replay: 3 responses, 3 match, 0 differ, 0 missing, 0 unexpected\n");
  assert.equal(replayed.code, 0);
  const events = readFileSync(again, "utf8").split("\n");
  for (const id of ["elicitation-1", "elicitation-2"]) {
    const asked = events.findIndex((event) => event.includes(`← {"jsonrpc":"2.0","id":"${id}","method"`));
    const answered = events.findIndex((event) => event.includes(`{"jsonrpc":"2.0","id":"${id}","result"`));
    assert.ok(asked !== -1 && asked < answered, `${id}: the answer went before the question`);
  }
});
