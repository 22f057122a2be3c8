/**
 * The article's experiment over Streamable HTTP: dist/server.mjs serves `--http 127.0.0.1:0`,
 * Claude Code is told of it with its own registration line, and one print-mode turn has the
 * model (the stand-in on loopback, messages-api.ts) call add:
 *
 *     claude mcp add --transport http json-rpc-study http://127.0.0.1:PORT/mcp
 *     claude -p "addツールで100と111を足して" --allowedTools mcp__json-rpc-study__add \
 *       --output-format json
 *
 * A recording proxy (tests/fixtures/http-recorder.ts) sits between the two, so that the test
 * sees each HTTP request as Claude Code sent it. Claude Code stays in 2026-07-28 the whole
 * session: `server/discover`, then `subscriptions/listen`, which it keeps open, then
 * `tools/list` and `tools/call`, each a POST with `MCP-Protocol-Version`, `Mcp-Method` and, on
 * the call, `Mcp-Name`; no `Origin`, no GET, no DELETE, and never `initialize`.
 *
 * .ci/run installs Claude Code (`npm ci --prefix tests/claude-code`) and runs this folder.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { serverPath } from "../helpers.ts";
import {
  exchangesText,
  header,
  isObject,
  methodOf,
  methodsOf,
  startHttpServer,
  startRecorder,
  type Exchange,
  type HttpServer,
  type Recorder,
} from "../fixtures/http-recorder.ts";
import { claude, claudeVersion, isolatedEnv, requireClaude, scratch } from "./claude.ts";
import { ADD_INPUT, ADD_TOOL, TOOL_USE_ID, lastToolResults, startMessagesApi, type MessagesApi } from "./messages-api.ts";

/** The prompt, in the article's words. */
const PROMPT = "addツールで100と111を足して";

/** The name the server is registered under, and so the middle of the tool's name. */
const SERVER_NAME = "json-rpc-study";

/** What the add tool answers for the model's call. */
const SUM_TEXT = "100 + 111 = 211";

/** The era Claude Code speaks to a server that answers its probe. */
const MODERN = "2026-07-28";

/** Registration, one turn and its end, on a loaded 2-core machine. */
const SESSION_TIMEOUT = { timeout: 300_000 };

/** What the one session left behind. */
interface Session {
  added: { code: number | null; stdout: string; stderr: string };
  code: number | null;
  stderr: string;
  /** The final JSON object that `--output-format json` prints. */
  output: unknown;
  /** The tool results each model request carried, for those that carried any. */
  toolResults: string[][];
  /** Every HTTP request Claude Code made to the server, with the answer. */
  exchanges: Exchange[];
}

let api: MessagesApi | undefined;
let server: HttpServer | undefined;
let recorder: Recorder | undefined;

before(async () => {
  requireClaude();
  api = await startMessagesApi();
  server = await startHttpServer(serverPath);
  recorder = await startRecorder(server.url);
});

after(async () => {
  await recorder?.close();
  await server?.stop();
  await api?.close();
});

/** Registers the server with `claude mcp add --transport http` (local scope) and runs one turn. */
async function runSession(): Promise<Session> {
  if (api === undefined || recorder === undefined) throw new Error("The session runs only inside this file's tests");
  const home = scratch("http-home");
  const project = scratch("http-project");
  const env = isolatedEnv(home, api.url);
  const added = await claude(["mcp", "add", "--transport", "http", SERVER_NAME, recorder.url], env, project);
  const args = ["-p", PROMPT, "--allowedTools", ADD_TOOL, "--output-format", "json"];
  const finished = await claude(args, env, project);
  let output: unknown;
  try {
    output = JSON.parse(finished.stdout);
  } catch {
    output = finished.stdout;
  }
  const toolResults = api.requests.map((request) => lastToolResults(request.body)).filter((found) => found.length > 0);
  return { added, code: finished.code, stderr: finished.stderr, output, toolResults, exchanges: [...recorder.exchanges] };
}

/** The session, run once, however many tests read it. */
let session: Promise<Session> | undefined;
function recorded(): Promise<Session> {
  session ??= runSession();
  return session;
}

/** The params of a POST's JSON-RPC message; an empty object when it has none. */
function paramsOf(exchange: Exchange): { [key: string]: unknown } {
  const message = exchange.message;
  return isObject(message) && isObject(message.params) ? message.params : {};
}

/** The first POST that carried `method`; fails the test when there is none. */
function sent(exchanges: readonly Exchange[], method: string): Exchange {
  const found = exchanges.find((exchange) => exchange.method === "POST" && methodOf(exchange) === method);
  assert.ok(found !== undefined, `Claude Code sent no ${method}:\n${exchangesText(exchanges)}`);
  return found;
}

/** The JSON-RPC messages of an event stream's `data:` lines, in order. */
function streamMessages(text: string): unknown[] {
  return text.split("\n").filter((line) => line.startsWith("data: ")).map((line) => JSON.parse(line.slice(6)));
}

/** The JSON-RPC response to a POST: its JSON body, or the last message of its event stream. */
function answerOf(exchange: Exchange): unknown {
  const streamed = /^text\/event-stream/.test(String(exchange.responseHeaders["content-type"]));
  return streamed ? streamMessages(exchange.responseBody).at(-1) : JSON.parse(exchange.responseBody);
}

test("claude mcp add --transport http registers the URL, and the turn's model gets 100 + 111 = 211 from add", SESSION_TIMEOUT, async () => {
  const { added, code, stderr, output, toolResults } = await recorded();
  assert.equal(added.code, 0, `claude mcp add failed:\n${added.stderr}`);
  assert.match(added.stdout, new RegExp(`Added HTTP MCP server ${SERVER_NAME} with URL: http://127\\.0\\.0\\.1:\\d+/mcp`));
  assert.equal(code, 0, `claude exited ${code}:\n${stderr}`);
  assert.ok(isObject(output), `no JSON result on stdout: ${String(output)}`);
  assert.equal(output.is_error, false, JSON.stringify(output));
  assert.deepEqual(toolResults, [[SUM_TEXT]], "the model got the tool's text back as the tool_result");
  assert.match(String(output.result), /\b211\b/, "Claude's answer carries 211");
});

test("Claude Code sends server/discover, subscriptions/listen, tools/list and tools/call, and never initialize", SESSION_TIMEOUT, async () => {
  const { exchanges } = await recorded();
  const methods = methodsOf(exchanges);
  // The probe comes first; the listen stream and the listing go out side by side after it.
  assert.equal(methods[0], "server/discover", exchangesText(exchanges));
  const expected = ["server/discover", "subscriptions/listen", "tools/call", "tools/list"];
  assert.deepEqual([...new Set(methods)].sort(), expected, exchangesText(exchanges));
  assert.ok(methods.indexOf("tools/list") < methods.indexOf("tools/call"), "the tool is listed before it is called");

  const probe = sent(exchanges, "server/discover");
  assert.equal(probe.status, 200, exchangesText([probe]));
  const call = sent(exchanges, "tools/call");
  assert.equal(paramsOf(call).name, "add");
  assert.deepEqual(paramsOf(call).arguments, ADD_INPUT);
  const meta = paramsOf(call)._meta;
  assert.ok(isObject(meta) && isObject(meta["io.modelcontextprotocol/clientInfo"]));
  assert.equal(meta["io.modelcontextprotocol/clientInfo"].version, claudeVersion());
  assert.equal(meta["claudecode/toolUseId"], TOOL_USE_ID);
  const answer = answerOf(call);
  assert.ok(isObject(answer) && isObject(answer.result), exchangesText([call]));
  assert.deepEqual(answer.result.content, [{ type: "text", text: SUM_TEXT }]);
});

test("every request names 2026-07-28 in _meta and MCP-Protocol-Version, its method in Mcp-Method, and the tool in Mcp-Name", SESSION_TIMEOUT, async () => {
  const { exchanges } = await recorded();
  for (const exchange of exchanges.filter((each) => methodOf(each) !== undefined)) {
    const method = methodOf(exchange);
    const params = paramsOf(exchange);
    const meta = isObject(params._meta) ? params._meta : {};
    assert.equal(meta["io.modelcontextprotocol/protocolVersion"], MODERN, `${method} _meta`);
    assert.equal(header(exchange, "mcp-protocol-version"), MODERN, `${method} MCP-Protocol-Version`);
    assert.equal(header(exchange, "mcp-method"), method, `${method} Mcp-Method`);
    if (method === "tools/call") assert.equal(header(exchange, "mcp-name"), "add");
    assert.notEqual(exchange.status, 400, exchangesText([exchange]));
  }
});

test("Claude Code sends no Origin, no GET and no DELETE", SESSION_TIMEOUT, async () => {
  const { exchanges } = await recorded();
  assert.ok(exchanges.length > 0);
  assert.deepEqual(
    exchanges.filter((exchange) => exchange.method !== "POST").map((exchange) => `${exchange.method} ${exchange.path}`),
    [],
  );
  assert.deepEqual(
    exchanges.filter((exchange) => header(exchange, "origin") !== undefined).map((exchange) => header(exchange, "origin")),
    [],
  );
});

test("the subscriptions/listen stream opens with its acknowledgement, under the request's id", SESSION_TIMEOUT, async () => {
  const { exchanges } = await recorded();
  const listen = sent(exchanges, "subscriptions/listen");
  assert.equal(listen.status, 200, exchangesText([listen]));
  assert.match(String(listen.responseHeaders["content-type"]), /^text\/event-stream/);
  const [first] = streamMessages(listen.responseBody);
  assert.ok(isObject(first) && isObject(first.params), exchangesText([listen]));
  assert.equal(first.method, "notifications/subscriptions/acknowledged");
  const message = listen.message;
  assert.ok(isObject(message));
  assert.deepEqual(first.params._meta, { "io.modelcontextprotocol/subscriptionId": message.id });
});
