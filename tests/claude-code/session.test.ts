/**
 * The article's experiment, for real: Claude Code is asked "addツールで100と111を足して",
 * the model (a stand-in on loopback, see messages-api.ts) calls our add tool, and wrap
 * records every line between Claude Code and the server.
 *
 * Each test runs the pinned `claude` in print mode as a user would:
 *
 *     claude -p "addツールで100と111を足して" --mcp-config FILE --strict-mcp-config \
 *       --allowedTools mcp__json-rpc-study__add --output-format json
 *
 * with the server registered through dist/wrap.mjs (`--log` in a temporary folder), once
 * for dist/server.mjs, which speaks both protocol eras, and once for the article's own
 * server.mjs (tests/fixtures/article-server.mjs), which knows only the legacy handshake.
 * `--allowedTools` allows the one tool in advance, since print mode cannot show a prompt.
 *
 * To re-record docs/claude-code.md's excerpts, set CLAUDE_CODE_EXCERPT to a file: each test appends its
 * wire.log there, with this clone's path written as /absolute/path/, ready to paste:
 *
 *     npm ci --prefix tests/claude-code
 *     CLAUDE_CODE_EXCERPT=/tmp/excerpt.txt node --import tsx --test tests/claude-code/session.test.ts
 *     cat /tmp/excerpt.txt
 *
 * .ci/run installs Claude Code (`npm ci --prefix tests/claude-code`) and runs this folder.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { root } from "../helpers.ts";
import { takeCut } from "../fixtures/cut.ts";
import {
  claude,
  claudeVersion,
  isObject,
  isolatedEnv,
  metaOf,
  requestOf,
  requireClaude,
  responseTo,
  scratch,
  saveExcerpt,
  settledLog,
  wrappedConfig,
  type LogEvent,
} from "./claude.ts";
import {
  ADD_INPUT,
  ADD_TOOL,
  TOOL_USE_ID,
  lastToolResults,
  offeredTools,
  startMessagesApi,
  type MessagesApi,
  type OfferedTool,
} from "./messages-api.ts";

/** Everything one `claude -p` run left behind. */
interface Turn {
  code: number | null;
  stderr: string;
  /** The final JSON object that `--output-format json` prints. */
  output: unknown;
  /** The Messages API requests the model stand-in received. */
  requests: MessagesApi["requests"];
  /** wrap's log of the session, read into events. */
  events: LogEvent[];
}

/** The prompt, in the article's words. */
const PROMPT = "addツールで100と111を足して";

/** The name Claude Code gives the server in its config, and so in the tool's name. */
const SERVER_NAME = "json-rpc-study";

/** What the add tool answers, in both servers. */
const SUM_TEXT = "100 + 111 = 211";

/** The article's server, which answers server/discover with -32601 and knows only initialize. */
const articleServer = join(root, "tests", "fixtures", "article-server.mjs");

/** The id Claude Code gives its server/discover probe. */
const PROBE_ID = "server-discover-probe-1";

// ---- Pure functions: read what was recorded ----

/** The JSON-RPC requests Claude Code sent, in order, with the event each came in. */
function sentRequests(events: readonly LogEvent[]): { request: { [key: string]: unknown }; event: LogEvent }[] {
  return events.flatMap((event) => {
    const request = event.mark === "→" ? requestOf(event) : undefined;
    return request === undefined ? [] : [{ request, event }];
  });
}

/** The methods Claude Code sent, in order. */
function methods(events: readonly LogEvent[]): unknown[] {
  return sentRequests(events).map(({ request }) => request.method);
}

/** The one request of a method; fails the test when there is none. */
function sent(events: readonly LogEvent[], method: string): { [key: string]: unknown } {
  const found = sentRequests(events).find(({ request }) => request.method === method);
  assert.ok(found !== undefined, `Claude Code sent no ${method}:\n${texts(events)}`);
  return found.request;
}

/** The result of the response to a request; fails the test when there is none. */
function resultOf(events: readonly LogEvent[], request: { [key: string]: unknown }): { [key: string]: unknown } {
  const response = responseTo(events, request.id, "←");
  assert.ok(response !== undefined, `no response to ${String(request.method)}:\n${texts(events)}`);
  const message = response.message;
  assert.ok(isObject(message) && isObject(message.result), `${String(request.method)} failed: ${response.text}`);
  return message.result;
}

/** The log as text, for a failure message. */
function texts(events: readonly LogEvent[]): string {
  return events.map((event) => `${event.mark} ${event.text}`).join("\n");
}

/** The model request that offered our tool; fails the test when none did. */
function offeredAdd(turn: Turn): OfferedTool {
  const tool = turn.requests.flatMap((request) => offeredTools(request.body)).find((offered) => offered.name === ADD_TOOL);
  assert.ok(tool !== undefined, `no model request offered ${ADD_TOOL}`);
  return tool;
}

/** The text of every user message the model received, joined. */
function userTexts(body: unknown): string {
  if (!isObject(body) || !Array.isArray(body.messages)) return "";
  return JSON.stringify(body.messages.filter((message: unknown) => isObject(message) && message.role === "user"));
}

// ---- I/O: run one turn ----

let api: MessagesApi | undefined;

before(async () => {
  requireClaude();
  api = await startMessagesApi();
});

after(async () => {
  await api?.close();
});

/** Runs `claude -p PROMPT` with one MCP server, `serverArgs` after `wrap.mjs --log LOG`. */
async function turn(label: string, serverArgs: readonly string[]): Promise<Turn> {
  if (api === undefined) throw new Error("The stand-in runs only inside this file's tests");
  const home = scratch(`${label}-home`);
  const project = scratch(`${label}-project`);
  const logPath = join(project, "wire.log");
  const configPath = wrappedConfig(project, SERVER_NAME, logPath, serverArgs);
  const from = api.requests.length;
  const args = ["-p", PROMPT, "--mcp-config", configPath, "--strict-mcp-config", "--allowedTools", ADD_TOOL, "--output-format", "json"];
  const finished = await claude(args, isolatedEnv(home, api.url), project);
  const events = await settledLog(logPath);
  saveExcerpt(label, logPath, [project, home]);
  let output: unknown;
  try {
    output = JSON.parse(finished.stdout);
  } catch {
    output = finished.stdout;
  }
  return { code: finished.code, stderr: finished.stderr, output, requests: api.requests.slice(from), events };
}

/** Checks what every passing turn shares: the model saw the prompt and our tool, and answered with 211. */
function assertTurn(turn: Turn, description: string): void {
  assert.equal(turn.code, 0, `claude exited ${turn.code}:\n${turn.stderr}`);
  assert.ok(isObject(turn.output), `no JSON result on stdout: ${String(turn.output)}`);
  assert.equal(turn.output.is_error, false, JSON.stringify(turn.output));
  assert.ok(turn.requests.some((request) => userTexts(request.body).includes(PROMPT)), "the model never saw the prompt");
  assert.deepEqual(offeredAdd(turn), {
    name: ADD_TOOL,
    description,
    input_schema: toolSchema(turn.events),
  });
  const results = turn.requests.map((request) => lastToolResults(request.body)).filter((found) => found.length > 0);
  assert.deepEqual(results, [[SUM_TEXT]], "the model got the tool's text back as the tool_result");
  assert.equal(typeof turn.output.result, "string");
  assert.match(String(turn.output.result), /\b211\b/, "Claude's answer carries 211");
}

/** The inputSchema of the add tool, as the server listed it in the recorded tools/list. */
function toolSchema(events: readonly LogEvent[]): unknown {
  const result = resultOf(events, sent(events, "tools/list"));
  const tools = Array.isArray(result.tools) ? result.tools : [];
  const add: unknown = tools.find((tool: unknown) => isObject(tool) && tool.name === "add");
  assert.ok(isObject(add), "the server listed no add tool");
  return add.inputSchema;
}

/** Checks the tools/call Claude Code sent and the server's answer to it. */
function assertCall(events: readonly LogEvent[]): { [key: string]: unknown } {
  const call = sent(events, "tools/call");
  assert.ok(isObject(call.params));
  assert.equal(call.params.name, "add");
  assert.deepEqual(call.params.arguments, ADD_INPUT);
  const content = resultOf(events, call).content;
  assert.deepEqual(content, [{ type: "text", text: SUM_TEXT }]);
  return call;
}

/** Checks that every request Claude Code sent was answered, each answer with its round-trip time. */
function assertTimed(events: readonly LogEvent[]): void {
  for (const { request } of sentRequests(events)) {
    if (!Object.hasOwn(request, "id")) continue;
    const response = responseTo(events, request.id, "←");
    assert.ok(response !== undefined, `no response to ${String(request.method)}`);
    assert.equal(typeof response.roundTripMs, "number", `no round-trip time on: ${response.text}`);
  }
}

/** Checks that Claude Code ended the server with SIGINT and wrap logged it. */
function assertSigint(events: readonly LogEvent[]): void {
  const ends = events.filter((event) => event.mark === "#" && /SIGINT/.test(event.text));
  assert.ok(ends.length > 0, `no SIGINT in the log:\n${texts(events)}`);
}

test("Claude Code calls our add tool through wrap and answers 211, in the 2026-07-28 era", { timeout: 180_000 }, async () => {
  const recorded = await turn("modern", []);
  assertTurn(recorded, "Add two numbers");
  const version = claudeVersion();
  const events = recorded.events;

  // The probe first, with the client's version, info and capabilities in _meta; no handshake.
  assert.deepEqual(methods(events), ["server/discover", "tools/list", "tools/call"]);
  const probe = sent(events, "server/discover");
  assert.equal(probe.id, PROBE_ID);
  assert.ok(Array.isArray(resultOf(events, probe).supportedVersions), "the server answered the probe");
  for (const { request } of sentRequests(events)) {
    const meta = metaOf(request);
    assert.ok(meta !== undefined, `no _meta on ${String(request.method)}`);
    assert.equal(meta["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
    assert.ok(isObject(meta["io.modelcontextprotocol/clientCapabilities"]));
    const clientInfo = meta["io.modelcontextprotocol/clientInfo"];
    assert.ok(isObject(clientInfo), `no clientInfo on ${String(request.method)}`);
    assert.equal(clientInfo.name, "claude-code");
    assert.equal(clientInfo.version, version);
  }
  // The model's tool_use id travels on to the server.
  const call = assertCall(events);
  assert.equal(metaOf(call)?.["claudecode/toolUseId"], TOOL_USE_ID);
  assertTimed(events);
  assertSigint(events);
});

test("Against the article's legacy-only server, Claude Code falls back to initialize and the call still works", { timeout: 180_000 }, async () => {
  const recorded = await turn("legacy", ["--", process.execPath, articleServer]);
  assertTurn(recorded, "2つの数値を足し算する");
  const events = recorded.events;

  assert.deepEqual(methods(events), ["server/discover", "initialize", "notifications/initialized", "tools/list", "tools/call"]);
  const probe = sent(events, "server/discover");
  const refusal = responseTo(events, probe.id, "←")?.message;
  assert.ok(isObject(refusal) && isObject(refusal.error), "the article's server refuses the probe");
  assert.equal(refusal.error.code, -32601);

  const initialize = sent(events, "initialize");
  assert.ok(isObject(initialize.params));
  assert.equal(initialize.params.protocolVersion, "2025-11-25");
  assert.ok(isObject(initialize.params.clientInfo));
  assert.equal(initialize.params.clientInfo.version, claudeVersion());
  // The article's server always answers 2025-06-18, and Claude Code goes on with it.
  assert.equal(resultOf(events, initialize).protocolVersion, "2025-06-18");

  // A legacy session carries no era in _meta, only Claude Code's own keys.
  const call = assertCall(events);
  assert.equal(metaOf(call)?.["claudecode/toolUseId"], TOOL_USE_ID);
  assert.equal(metaOf(call)?.["io.modelcontextprotocol/protocolVersion"], undefined);
  assertTimed(events);
  assertSigint(events);
});

test("Against server.ts cut at its stop line, Claude Code falls back to initialize and calls add", { timeout: 180_000 }, async () => {
  // README's command takes the cut: the article's server in TypeScript, with no 2026-07-28 era.
  const { cut } = takeCut();
  const recorded = await turn("cut", ["--", process.execPath, cut]);
  assertTurn(recorded, "Add two numbers");
  const events = recorded.events;
  assert.deepEqual(methods(events), ["server/discover", "initialize", "notifications/initialized", "tools/list", "tools/call"]);
  const refusal = responseTo(events, sent(events, "server/discover").id, "←")?.message;
  assert.ok(isObject(refusal) && isObject(refusal.error), "the cut refuses the probe");
  assert.equal(refusal.error.code, -32601);
  // The cut speaks the version Claude Code asks for.
  const initialize = sent(events, "initialize");
  assert.ok(isObject(initialize.params));
  assert.equal(resultOf(events, initialize).protocolVersion, initialize.params.protocolVersion);
  assertCall(events);
  assertTimed(events);
  assertSigint(events);
});
