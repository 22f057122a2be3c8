/**
 * The article's experiment over Streamable HTTP: dist/server.mjs serves `--http 127.0.0.1:0`,
 * Claude Code is told of it with its own registration line (local scope), and one print-mode
 * turn has the model (the stand-in on loopback, messages-api.ts) call add:
 *
 *     claude mcp add --transport http json-rpc-study http://127.0.0.1:PORT/mcp
 *     claude -p "addツールで100と111を足して" --allowedTools mcp__json-rpc-study__add \
 *       --output-format json
 *
 * A recording proxy (tests/fixtures/http-recorder.ts) sits between the two, so that the test
 * sees each HTTP request as Claude Code sent it. Claude Code stays in 2026-07-28 the whole
 * session: `server/discover`, then `tools/list` and `tools/call`, each a POST with
 * `MCP-Protocol-Version`, `Mcp-Method` and, on the call, `Mcp-Name`; no `Origin`, no GET, no
 * DELETE, and never `initialize`.
 *
 * Claude Code opens a `subscriptions/listen` stream only for a server whose `server/discover`
 * offers `tools.listChanged`. Ours does not (its tools never change), so a second session runs
 * against a copy of server.ts that offers it, to see the stream acknowledged first and held
 * open until Claude Code closes it.
 *
 * .ci/run installs Claude Code (`npm ci --prefix tests/claude-code`) and runs this folder.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { parseBody, serverPath, waitUntil } from "../helpers.ts";
import { httpRegistration } from "../documents.ts";
import {
  exchangesText,
  header,
  isObject,
  methodOf,
  methodsOf,
  startHttpServer,
  startRecorder,
  type Exchange,
} from "../fixtures/http-recorder.ts";
import { buildListChanged, claude, claudeVersion, isolatedEnv, requireClaude, scratch } from "./claude.ts";
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

/** How long the proxy may take to see Claude Code's connections close once it has exited. */
const CLOSE_MS = 10_000;

/** What one session left behind. */
interface Session {
  added: { code: number | null; stdout: string; stderr: string };
  code: number | null;
  stderr: string;
  /** The final JSON object that `--output-format json` prints (its text when it is not JSON). */
  output: unknown;
  /** The tool results each model request carried, for those that carried any. */
  toolResults: string[][];
  /** Every HTTP request Claude Code made to the server, with the answer. */
  exchanges: Exchange[];
}

let api: MessagesApi | undefined;

before(async () => {
  requireClaude();
  api = await startMessagesApi();
});

after(async () => {
  await api?.close();
});

/**
 * Serves `file` over HTTP behind a recorder, registers it with `claude mcp add --transport
 * http` (local scope, as README's line) and runs one turn; server and recorder end with it.
 */
async function runSession(label: string, file: string): Promise<Session> {
  if (api === undefined) throw new Error("The session runs only inside this file's tests");
  const home = scratch(`http-${label}-home`);
  const project = scratch(`http-${label}-project`);
  const env = isolatedEnv(home, api.url);
  const server = await startHttpServer(file);
  const recorder = await startRecorder(server.url);
  try {
    const from = api.requests.length;
    // docs/http.md's own line (its ```sh register-http block), with this server's URL.
    const added = await claude(httpRegistration("claude", recorder.url), env, project);
    const args = ["-p", PROMPT, "--allowedTools", ADD_TOOL, "--output-format", "json"];
    const finished = await claude(args, env, project);
    // Claude Code has exited; its last connections close a moment later.
    const exchanges = recorder.exchanges;
    await waitUntil(() => exchanges.every((exchange) => exchange.endedBy !== undefined), "every answer to end", CLOSE_MS)
      .catch(() => {});
    const toolResults = api.requests.slice(from).map((request) => lastToolResults(request.body));
    return {
      added,
      code: finished.code,
      stderr: finished.stderr,
      output: parseBody(finished.stdout),
      toolResults: toolResults.filter((found) => found.length > 0),
      exchanges,
    };
  } finally {
    await recorder.close();
    await server.stop();
  }
}

/** Runs a session once, however many tests read it. */
function shared(run: () => Promise<Session>): () => Promise<Session> {
  let started: Promise<Session> | undefined;
  return () => {
    started ??= run();
    return started;
  };
}

/** The session against dist/server.mjs. */
const plainSession = shared(() => runSession("plain", serverPath));

/** The session against the copy that offers tools.listChanged. */
const listenSession = shared(async () => runSession("listen", await buildListChanged("http-list-changed")));

// ---- Reading a session ----

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

/** Checks the turn: registered, exited 0, and the model got the sum as its tool result. */
function assertTurn(session: Session): void {
  const { added, code, stderr, output, toolResults } = session;
  assert.equal(added.code, 0, `claude mcp add failed:\n${added.stderr}`);
  assert.match(added.stdout, new RegExp(`Added HTTP MCP server ${SERVER_NAME} with URL: http://127\\.0\\.0\\.1:\\d+/mcp`));
  assert.equal(code, 0, `claude exited ${code}:\n${stderr}`);
  assert.ok(isObject(output), `no JSON result on stdout: ${String(output)}`);
  assert.equal(output.is_error, false, JSON.stringify(output));
  assert.deepEqual(toolResults, [[SUM_TEXT]], "the model got the tool's text back as the tool_result");
  assert.match(String(output.result), /\b211\b/, "Claude's answer carries 211");
}

/** Checks that every POST names 2026-07-28 in _meta and headers, and mirrors method and name. */
function assertModernHeaders(exchanges: readonly Exchange[]): void {
  for (const exchange of exchanges.filter((each) => methodOf(each) !== undefined)) {
    const method = methodOf(exchange);
    const params = paramsOf(exchange);
    const meta = isObject(params._meta) ? params._meta : {};
    assert.equal(meta["io.modelcontextprotocol/protocolVersion"], MODERN, `${method} _meta`);
    assert.equal(header(exchange, "mcp-protocol-version"), MODERN, `${method} MCP-Protocol-Version`);
    assert.equal(header(exchange, "mcp-method"), method, `${method} Mcp-Method`);
    if (method === "tools/call") assert.equal(header(exchange, "mcp-name"), "add");
    assert.equal(exchange.status, 200, exchangesText([exchange]));
  }
}

/** Checks that Claude Code sent POSTs only, and no Origin on any of them. */
function assertPostsOnly(exchanges: readonly Exchange[]): void {
  assert.ok(exchanges.length > 0);
  const others = exchanges.filter((exchange) => exchange.method !== "POST");
  assert.deepEqual(others.map((exchange) => `${exchange.method} ${exchange.path}`), [], "no GET, no DELETE");
  const origins = exchanges.flatMap((exchange) => header(exchange, "origin") ?? []);
  assert.deepEqual(origins, [], "no Origin");
}

// ---- The tests ----

test("claude mcp add --transport http registers the URL, and the turn's model gets 100 + 111 = 211 from add", SESSION_TIMEOUT, async () => {
  assertTurn(await plainSession());
});

test("Claude Code sends server/discover, then tools/list and tools/call, and never initialize", SESSION_TIMEOUT, async () => {
  const { exchanges } = await plainSession();
  // No subscriptions/listen: the server's probe answer offers no tools.listChanged.
  assert.deepEqual(methodsOf(exchanges), ["server/discover", "tools/list", "tools/call"], exchangesText(exchanges));
  const probe = answerOf(sent(exchanges, "server/discover"));
  assert.ok(isObject(probe) && isObject(probe.result), "the server answered the probe");
  assert.deepEqual(probe.result.capabilities, { tools: {}, logging: {} });

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
  assertModernHeaders((await plainSession()).exchanges);
});

test("Claude Code sends no Origin, no GET and no DELETE", SESSION_TIMEOUT, async () => {
  assertPostsOnly((await plainSession()).exchanges);
});

test("offered tools.listChanged, Claude Code also opens subscriptions/listen, acknowledged first and held until it closes it", SESSION_TIMEOUT, async () => {
  const session = await listenSession();
  assertTurn(session);
  const { exchanges } = session;
  const methods = methodsOf(exchanges);
  // The probe comes first; the listen stream and the listing go out side by side after it.
  assert.equal(methods[0], "server/discover", exchangesText(exchanges));
  const expected = ["server/discover", "subscriptions/listen", "tools/call", "tools/list"];
  assert.deepEqual([...methods].sort(), expected, exchangesText(exchanges));
  assertModernHeaders(exchanges);
  assertPostsOnly(exchanges);

  const listen = sent(exchanges, "subscriptions/listen");
  assert.match(String(listen.responseHeaders["content-type"]), /^text\/event-stream/);
  const [first, ...more] = streamMessages(listen.responseBody);
  assert.ok(isObject(first) && isObject(first.params), exchangesText([listen]));
  assert.equal(first.method, "notifications/subscriptions/acknowledged");
  const message = listen.message;
  assert.ok(isObject(message));
  assert.deepEqual(first.params._meta, { "io.modelcontextprotocol/subscriptionId": message.id });
  assert.deepEqual(more, [], "nothing but the acknowledgement: the tools never change");
  assert.equal(listen.endedBy, "client", "the server holds the stream open until Claude Code closes it");
});
