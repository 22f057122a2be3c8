/**
 * What GitHub Copilot CLI does with an MCP server, measured: the real `copilot` (pinned in
 * tests/agents/package.json), offline, its model the stand-in of copilot.ts on 127.0.0.1, and
 * agents-server.mjs (server.ts with docs/tools.md's tools) registered with README's line
 * through dist/wrap.mjs. Each suite runs one prompt,
 *
 *     copilot -p PROMPT --allow-all-tools --no-auto-update --disable-builtin-mcps --no-ask-user
 *
 * in a HOME of its own, and reads wrap's log and what the model was sent. Where Copilot does
 * something the spec would not have it do, the test asserts what it does and says so.
 *
 * To record the logs for the docs, set COPILOT_EXCERPT to a file:
 *
 *     COPILOT_EXCERPT=/tmp/excerpt.txt node --import tsx --test tests/agents/copilot.test.ts
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { root, wrapPath } from "../helpers.ts";
import {
  isObject, logText, metaOf, requestOf, responseTo, versionOf, type LogEvent,
} from "../claude-code/claude.ts";
import { QUESTION, methodsSent, paramsOf, resultFor, withMethod } from "../claude-code/deploy.ts";
import type { JSONObject } from "../claude-code/deploy.ts";
import {
  SERVER_NAME, agentsServer, callsOf, endProcessesOf, killServerAtFirstProgress, notes,
  registration, scratch, startedPids, stderrOf, toolsCalled,
} from "./agents.ts";
import {
  COPILOT, configEntry, copilot, register, runSession, startChatCompletionsApi, toolName,
  type Registration, type Session, type ToolCall,
} from "./copilot.ts";
import { offeredTools, toolResults } from "./stand-in.ts";

/** How Copilot names itself to a server. */
const CLIENT_INFO = {
  name: "copilot-cli",
  version: versionOf(join(root, "tests", "agents", "node_modules", "@github", "copilot")),
};

/** The capabilities Copilot declares, in both eras: sampling, and elicitation in both modes. */
const CAPABILITIES = { sampling: {}, elicitation: { form: {}, url: {} } };

/** The article's call. */
const ADD: ToolCall = { tool: toolName("add"), arguments: { a: 100, b: 111 } };

/** What the server answers to the article's call. */
const SUM = "100 + 111 = 211";

/** Arguments that break add's inputSchema: "a" is not a number. */
const NOT_A_NUMBER = { a: "x", b: 1 };

/** A file that is not there, for count_lines. */
const MISSING = "/nonexistent/json-rpc-study/nope.txt";

/** What count_lines answers for it: the error's message. */
const ENOENT = `ENOENT: no such file or directory, open '${MISSING}'`;

/** A call of wait that reports progress each second for 10 seconds. */
const WAIT_10: ToolCall = { tool: toolName("wait"), arguments: { seconds: 10 } };

/** A call of wait longer than any timeout the suites set. */
const WAIT_20: ToolCall = { tool: toolName("wait"), arguments: { seconds: 20 } };

/** The call of deploy that asks "Deploy to production?". */
const DEPLOY: ToolCall = { tool: toolName("deploy"), arguments: { environment: "production" } };

/** What Copilot puts before the text of a result that has `isError: true`. */
const ERROR_PREFIX = `MCP server '${SERVER_NAME}': `;

/** What a call of a tool Copilot does not offer is told, before the list of those it does. */
const NO_SUCH_TOOL = /^Tool '([^']+)' does not exist\. Available tools that can be called are /;

/** What the deploy tool answers to a decline. */
const DECLINED = "Not deployed: the user said no";

/** The prompt; the stand-in does not read it, it is there for the reader. */
const PROMPT = "Use the json-rpc-study tools";

/** A base URL for the commands that never reach the model (`mcp add`, `mcp list`). */
const NO_MODEL = "http://127.0.0.1:9/v1";

// ---- Reading the log ----

/** wrap's notes (`#` lines) after the server's last response. */
function notesAtTheEnd(events: readonly LogEvent[]): string[] {
  const answers = (event: LogEvent) => isObject(event.message) && "result" in event.message;
  const last = events.findLastIndex((event) => event.mark === "←" && answers(event));
  return events.slice(last + 1).filter((event) => event.mark === "#").map((event) => event.text);
}

/** The text of a result's single text block. */
function textOf(result: JSONObject): unknown {
  const [block] = Array.isArray(result.content) ? result.content : [];
  return isObject(block) ? block.text : undefined;
}

/** The tool results the model was sent by the last request: all of the session's, in order. */
function toldModel(session: Session): string[] {
  return toolResults(session.requests.at(-1)?.body);
}

/** The tools a "does not exist" message lists as available. */
function availableIn(told: string): string {
  return told.split("Available tools that can be called are ")[1] ?? "";
}

/**
 * Starts a stand-in whose model follows `script`, runs one session against it before the
 * suite's tests, and stops the stand-in after them.
 */
function sessionOf(label: string, script: readonly ToolCall[], registered: Registration = {},
  during?: (logPath: string) => Promise<void>): () => Session {
  let session: Session | undefined;
  let close = async (): Promise<void> => {};
  before(async () => {
    const api = await startChatCompletionsApi(script);
    close = api.close;
    session = await runSession(label, api, PROMPT, registered, during);
    const { code, stderr } = session.finished;
    assert.equal(code, 0, `copilot exited ${code}:\n${stderr}`);
  });
  after(() => close());
  return () => {
    if (session === undefined) throw new Error("The session runs only inside its suite");
    return session;
  };
}

// ---- Registration ----

test("README's wrap line, run by copilot mcp add, writes a user entry to ~/.copilot/mcp-config.json, and copilot mcp list lists it without starting it", async () => {
  const home = scratch("copilot-list-home");
  const logPath = join(home, "wire.log");
  try {
    const added = await register(home, home, NO_MODEL, logPath);
    assert.equal(added.code, 0, added.stderr);
    assert.match(added.stdout, /^Added server "json-rpc-study"/);
    // No --timeout: the entry has none, and Copilot's default (180 s) applies.
    const args = [wrapPath, "--log", logPath, "node", agentsServer];
    assert.deepEqual(configEntry(home), { tools: ["*"], type: "local", command: "node", args });
    const listed = await copilot(["mcp", "list"], home, home, NO_MODEL);
    assert.equal(listed.code, 0, listed.stderr);
    assert.equal(listed.stdout, "User servers:\n  json-rpc-study (local)\n\n");
    assert.equal(existsSync(logPath), false, "copilot mcp list started the server");
  } finally {
    await endProcessesOf(home);
  }
});

test("README's plain line registers the server on its own, and without -- copilot mcp add refuses wrap's line, taking --log for an option of its own", async () => {
  const home = scratch("copilot-lines-home");
  try {
    const plain = registration(COPILOT, "register", { server: agentsServer });
    const added = await copilot(plain, home, home, NO_MODEL);
    assert.equal(added.code, 0, added.stderr);
    const entry = { tools: ["*"], type: "local", command: "node", args: [agentsServer] };
    assert.deepEqual(configEntry(home), entry);
    const log = join(home, "wire.log");
    const line = registration(COPILOT, "register-wrap", { server: agentsServer, log });
    const refused = await copilot(line.filter((word) => word !== "--"), home, home, NO_MODEL);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /error: unexpected argument '--log' found/);
  } finally {
    await endProcessesOf(home);
  }
});

// ---- 1 and 5: the article's call, the era, the end of the session ----

describe("a prompt in which the model calls add with 100 and 111", () => {
  const session = sessionOf("add", [ADD]);

  test("Copilot opens with server/discover in 2026-07-28 and declares sampling and elicitation (form and url) on every request", () => {
    const { events } = session();
    const sent = events.flatMap((event) => (event.mark === "→" ? [requestOf(event) ?? {}] : []));
    assert.equal(sent[0]?.method, "server/discover", logText(events));
    assert.equal(sent[0]?.id, 0);
    assert.ok(isObject(responseTo(events, 0, "←")?.message), "server/discover got no answer");
    assert.ok(!methodsSent(events).includes("initialize"), "Copilot fell back to initialize");
    for (const request of sent) {
      const meta = metaOf(request);
      assert.equal(meta?.["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
      assert.deepEqual(meta?.["io.modelcontextprotocol/clientInfo"], CLIENT_INFO);
      assert.deepEqual(meta?.["io.modelcontextprotocol/clientCapabilities"], CAPABILITIES);
    }
  });

  test("the call reaches the server with a progressToken, and the model's next request carries its result, 100 + 111 = 211, as the tool message", () => {
    const { events, requests } = session();
    const [call] = callsOf(events, "add");
    assert.ok(call !== undefined, `no tools/call for add:\n${logText(events)}`);
    assert.deepEqual(paramsOf(call).arguments, ADD.arguments);
    assert.equal(typeof metaOf(call)?.progressToken, "number");
    assert.equal(textOf(resultFor(events, call.id, "←")), SUM);
    assert.ok(offeredTools(requests[0]?.body).includes(ADD.tool), `${ADD.tool} was not offered`);
    assert.deepEqual(requests.map((request) => toolResults(request.body)), [[], [SUM]]);
  });

  // Copilot ends the session itself: it finds the processes under its child with `pgrep -P`,
  // sends each SIGTERM with `kill -s TERM`, the deepest first (the server, then wrap), and
  // SIGKILL to wrap about a millisecond after wrap's SIGTERM (seen with strace). So the end of
  // wrap's log varies from run to run: nothing, or wrap's note of the SIGTERM, or the server's
  // exit by SIGTERM, and never an exit code. Once, on a loaded machine, Copilot's own exit
  // closed wrap's input after the SIGTERM and before the SIGKILL: an end of input, but never
  // before the SIGTERM.
  test("at the end of the session Copilot ends the server with SIGTERM, without closing its input first, and leaves nothing running", () => {
    const { events, left } = session();
    assert.deepEqual(left, [], "processes of the session were still running 10 s after Copilot");
    assert.equal(startedPids(events).length, 1);
    const ending = /^(received SIGTERM: sending SIGTERM|exit signal SIGTERM|end of input)$/;
    const atTheEnd = notesAtTheEnd(events);
    for (const note of atTheEnd) assert.match(note, ending, logText(events));
    const closed = notes(events).indexOf("end of input");
    const terminated = notes(events).indexOf("received SIGTERM: sending SIGTERM");
    const first = closed !== -1 && (terminated === -1 || closed < terminated);
    assert.ok(!first, `Copilot closed the server's input first:\n${logText(events)}`);
  });
});

// ---- 2: errors, as the model reads them ----

describe("a prompt in which the model makes one call that succeeds and three that fail", () => {
  const session = sessionOf("errors", [
    ADD,
    { tool: toolName("add"), arguments: NOT_A_NUMBER },
    { tool: toolName("count_lines"), arguments: { path: MISSING } },
    { tool: toolName("nope"), arguments: {} },
  ]);

  test("add with a: \"x\" is sent to the server as it is, and its isError result reaches the model as its text behind the server's name", () => {
    const { events } = session();
    const calls = callsOf(events, "add");
    const wrong = calls.find((call) => isDeepStrictEqual(paramsOf(call).arguments, NOT_A_NUMBER));
    assert.ok(wrong !== undefined, `Copilot did not send add with "x":\n${logText(events)}`);
    const result = resultFor(events, wrong.id, "←");
    assert.equal(result.isError, true);
    assert.equal(textOf(result), 'Invalid arguments: "a" must be a number');
    const told = toldModel(session())[1];
    assert.equal(told, `${ERROR_PREFIX}Invalid arguments: "a" must be a number`);
  });

  test("an isError result (count_lines on a missing file) reaches the model behind the server's name, its only mark: a success comes bare", () => {
    const { events } = session();
    const [call] = callsOf(events, "count_lines");
    assert.ok(call !== undefined, `no tools/call for count_lines:\n${logText(events)}`);
    const result = resultFor(events, call.id, "←");
    assert.deepEqual([result.isError, result.content], [true, [{ type: "text", text: ENOENT }]]);
    const told = toldModel(session());
    assert.equal(told[0], SUM);
    assert.equal(told[2], `${ERROR_PREFIX}${ENOENT}`);
  });

  test("a call of an unknown tool never reaches the server, and the model is told the tool does not exist, with the list of those that do", () => {
    const { events } = session();
    assert.deepEqual(toolsCalled(events), ["add", "add", "count_lines"]);
    const told = toldModel(session())[3] ?? "";
    assert.equal(NO_SUCH_TOOL.exec(told)?.[1], toolName("nope"), told);
    const ours = ["add", "count_lines", "deploy", "wait"].map(toolName).join(", ");
    assert.ok(availableIn(told).includes(ours), told);
  });
});

// ---- 3: a slow tool, under a short timeout ----

describe("a prompt in which the model calls wait for 10 seconds, registered with mcp add --timeout 3000", () => {
  const session = sessionOf("progress", [WAIT_10], { timeoutMs: 3000 });

  test("each progress notification resets Copilot's timeout, so the call runs to its end, three times longer than the timeout", () => {
    const { events, home } = session();
    const entry = configEntry(home);
    assert.ok(isObject(entry), "no entry in ~/.copilot/mcp-config.json");
    assert.equal(entry.timeout, 3000);
    const [call] = callsOf(events, "wait");
    assert.ok(call !== undefined, `no tools/call for wait:\n${logText(events)}`);
    const token = metaOf(call)?.progressToken;
    const progress = withMethod(events, "←", "notifications/progress").map(paramsOf);
    assert.equal(progress.length, 10);
    assert.ok(progress.every((params) => params.progressToken === token));
    assert.deepEqual(withMethod(events, "→", "notifications/cancelled"), []);
    assert.equal(textOf(resultFor(events, call.id, "←")), "Waited 10 seconds");
    assert.deepEqual(toldModel(session()), ["Waited 10 seconds"]);
  });
});

describe("a prompt in which the model calls wait for 20 seconds, then add, registered with mcp add --timeout 500", () => {
  const session = sessionOf("timeout", [WAIT_20, ADD], { timeoutMs: 500 });

  // The 2026-07-28 schema asks for `_meta` (protocolVersion, clientCapabilities) on requests;
  // on a notification `_meta` is optional, and the spec's own cancellation example has none.
  // Claude Code sends it anyway; Copilot does not.
  test("a call with no progress within the timeout is cancelled with notifications/cancelled, reason \"request timeout\" and no _meta, and is never answered", () => {
    const { events } = session();
    const [call] = callsOf(events, "wait");
    assert.ok(call !== undefined, `no tools/call for wait:\n${logText(events)}`);
    const [cancelled] = withMethod(events, "→", "notifications/cancelled");
    const params = { requestId: call.id, reason: "request timeout" };
    assert.deepEqual(cancelled, { jsonrpc: "2.0", method: "notifications/cancelled", params });
    assert.equal(responseTo(events, call.id, "←"), undefined, "the cancelled call got an answer");
    const stopped = '[server] tool "wait" stopped: The operation was aborted';
    assert.ok(stderrOf(events).includes(stopped), stderrOf(events).join("\n"));
  });

  test("the model is told the call timed out, with error -32001, and the next call goes to the same server, which Copilot kept", () => {
    const { events } = session();
    assert.equal(startedPids(events).length, 1, logText(events));
    const [call] = callsOf(events, "add");
    assert.ok(call !== undefined, `no tools/call for add after the timeout:\n${logText(events)}`);
    assert.equal(textOf(resultFor(events, call.id, "←")), SUM);
    const timedOut = `${ERROR_PREFIX}McpError: MCP error -32001: Request timed out`;
    assert.deepEqual(toldModel(session()), [timedOut, SUM]);
  });
});

// ---- 4: a tool that asks the user, in both eras ----

describe("a prompt in which the model calls deploy for production, in a 2026-07-28 session", () => {
  const session = sessionOf("deploy", [DEPLOY]);

  test("Copilot retries the input_required call at once under a new id, with a decline and the same requestState, and the model reads that nothing was deployed", () => {
    const { events } = session();
    const [first, retry] = callsOf(events, "deploy");
    assert.ok(first !== undefined && retry !== undefined, `no retry:\n${logText(events)}`);
    assert.deepEqual(metaOf(first)?.["io.modelcontextprotocol/clientCapabilities"], CAPABILITIES);
    assert.deepEqual(withMethod(events, "←", "elicitation/create"), []);
    const asked = resultFor(events, first.id, "←");
    assert.equal(asked.resultType, "input_required");
    const question = { method: "elicitation/create", params: QUESTION };
    assert.deepEqual(asked.inputRequests, { "elicitation-1": question });
    const state = asked.requestState;
    assert.ok(typeof state === "string" && state !== "", `no state: ${JSON.stringify(asked)}`);
    assert.notEqual(retry.id, first.id);
    assert.deepEqual(paramsOf(retry).arguments, DEPLOY.arguments);
    assert.deepEqual(paramsOf(retry).inputResponses, { "elicitation-1": { action: "decline" } });
    const retryLine = events.find((event) => event.message === retry);
    const sameState = retryLine?.text.includes(`"requestState":${JSON.stringify(state)}`);
    assert.ok(sameState, "the requestState was re-encoded");
    const done = resultFor(events, retry.id, "←");
    assert.deepEqual([done.resultType, textOf(done)], ["complete", DECLINED]);
    assert.deepEqual(toldModel(session()), [DECLINED]);
  });
});

describe("a prompt in which the model calls deploy for production, against a server without server/discover", () => {
  const session = sessionOf("deploy-legacy", [DEPLOY], { serverArgs: ["--legacy"] });

  test("Copilot falls back to initialize 2025-11-25, answers the server's elicitation/create with decline, and the model reads that nothing was deployed", () => {
    const { events } = session();
    const opening = ["server/discover", "initialize", "notifications/initialized", "tools/list"];
    assert.deepEqual(methodsSent(events).slice(0, 4), opening);
    const [initialize] = withMethod(events, "→", "initialize");
    assert.ok(initialize !== undefined);
    const handshake = { protocolVersion: "2025-11-25", capabilities: CAPABILITIES };
    assert.deepEqual(paramsOf(initialize), { ...handshake, clientInfo: CLIENT_INFO });
    const [call] = callsOf(events, "deploy");
    assert.ok(call !== undefined, `no tools/call for deploy:\n${logText(events)}`);
    const id = "elicitation-1";
    const asked = withMethod(events, "←", "elicitation/create");
    const request = { jsonrpc: "2.0", id, method: "elicitation/create", params: QUESTION };
    assert.deepEqual(asked, [request]);
    const answer = responseTo(events, id, "→")?.message;
    assert.deepEqual(answer, { jsonrpc: "2.0", id, result: { action: "decline" } });
    assert.equal(textOf(resultFor(events, call.id, "←")), DECLINED);
    assert.deepEqual(toldModel(session()), [DECLINED]);
  });
});

// ---- 6: the server killed in the middle of a call ----

/** What a call of add is told when its turn was given the server's tools but they went since. */
const CATALOG_CHANGED = "json-rpc-study-add has no native execution backend: it is not a"
  + " built-in native tool, and the MCP invocation failed (MCP tool catalog changed before tool"
  + ' "json-rpc-study-add" could be invoked).';

describe("a prompt in which the server is killed while wait runs, and the model then calls add twice", () => {
  // Copilot drops the server's tools a moment (about 0.3 s) after the call in flight fails, but
  // a turn keeps the tool list it was given. The stand-in waits 3 s before the first add, so it
  // comes after the drop; whether its turn's list was taken before the drop varies, and so does
  // what it is told (the catalog changed, or the tool does not exist). The second add has a turn
  // of its own, after the drop. An add made at once is told "MCP request failed: Transport
  // closed" instead.
  const script = [WAIT_10, { ...ADD, delayMs: 3_000 }, ADD];
  const killServer = (logPath: string) => killServerAtFirstProgress(logPath, "SIGKILL");
  const session = sessionOf("killed", script, {}, killServer);

  test("Copilot does not restart the server: the call in flight fails, the server's tools vanish, and a later call is told the tool does not exist", () => {
    const { events, requests } = session();
    assert.equal(startedPids(events).length, 1, `a second start:\n${logText(events)}`);
    assert.ok(notes(events).includes("exit signal SIGKILL"), logText(events));
    assert.deepEqual(toolsCalled(events), ["wait"]);
    const [killed, first, second = ""] = toldModel(session());
    const closed = "MCP request failed: MCP transport closed before the tool responded";
    assert.equal(killed, `${ERROR_PREFIX}${closed}`);
    assert.ok(first === CATALOG_CHANGED || NO_SUCH_TOOL.test(first ?? ""), first);
    assert.equal(NO_SUCH_TOOL.exec(second)?.[1], ADD.tool, second);
    assert.ok(!availableIn(second).includes(`${SERVER_NAME}-`), second);
    const offered = offeredTools(requests.at(-1)?.body);
    assert.deepEqual(offered.filter((name) => name.startsWith(`${SERVER_NAME}-`)), []);
  });
});
