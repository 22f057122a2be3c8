/**
 * The facts of issue 30's table for Claude Code that the rest of this folder does not check yet.
 * session.test.ts checks the first requests (server/discover, then 2026-07-28, or initialize
 * 2025-11-25 against the article's server) and that the session ends with SIGINT;
 * elicitation.test.ts checks `deploy` answered "cancel" in print mode, in both eras;
 * slow-tool.test.ts checks MCP_TOOL_TIMEOUT, notifications/cancelled, and that progress does not
 * extend the timeout. This file adds, against tests/agents/agents-server.mjs (server.ts with
 * docs/tools.md's tools) registered through dist/wrap.mjs with Claude Code's own `mcp add`:
 *
 * - what the model receives for an `isError` result, for `add` with `{"a":"x"}` and for a tool
 *   name the server does not have, and what of it reaches the server;
 * - how the session ends: which signal, and whether stdin is closed first;
 * - the server killed in the middle of a call, then a second call in the same session;
 * - the first requests against agents-server.mjs --legacy, which refuses the probe.
 *
 * Each session is one `claude -p` turn whose model (the stand-in on loopback, messages-api.ts)
 * makes the calls of a script, one after each tool result:
 *
 *     claude mcp add json-rpc-study -- node /absolute/path/dist/wrap.mjs \
 *       --log LOG node /absolute/path/tests/agents/agents-server.mjs
 *     claude -p "Try the json-rpc-study tools" --allowedTools TOOLS --output-format json
 *
 * To record the sessions' logs, set CLAUDE_CODE_EXCERPT to a file, as for session.test.ts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { waitUntil, wrapPath } from "../helpers.ts";
import { agentsServer, endProcessesOf, processesOf, SERVER_NAME } from "../agents/agents.ts";
import {
  claude,
  eventOf,
  isObject,
  isolatedEnv,
  logText,
  requireClaude,
  responseTo,
  saveExcerpt,
  scratch,
  settledLog,
  type LogEvent,
} from "./claude.ts";
import { methodsSent, paramsOf, resultFor, withMethod } from "./deploy.ts";
import {
  lastToolResults,
  startMessagesApi,
  type MessagesApi,
  type RecordedRequest,
  type ToolScript,
} from "./messages-api.ts";

/** A tool_result block as the model receives it: the two fields that say what happened. */
interface ToolResultBlock {
  content: unknown;
  is_error: unknown;
}

/** What one session left behind. */
interface Session {
  events: LogEvent[];
  /** The tool_result blocks the model received, by tool_use id. */
  results: Map<string, ToolResultBlock>;
  /** The pids still running with the session's HOME once the log has settled. */
  left: number[];
}

/** What a session runs besides `claude`: a server argument, a step taken while it runs. */
interface SessionOptions {
  serverArgs?: readonly string[];
  during?: (logPath: string, api: MessagesApi) => Promise<void>;
}

/** The prompt. The stand-in does not read it; it is there for the log and the reader. */
const PROMPT = "Try the json-rpc-study tools";

/** How long a test waits for something it watches in a running session. */
const WATCH_MS = 60_000;

/** How long the processes of a finished session may take to be gone. */
const GONE_MS = 5_000;

/** Room for two `claude` commands on a loaded 2-core machine. */
const SESSION_TIMEOUT = { timeout: 300_000 };

/** The name Claude Code shows the model for a tool of our server: mcp__<server>__<tool>. */
function toolName(tool: string): string {
  return `mcp__${SERVER_NAME}__${tool}`;
}

/** count_lines on a file that is not there: the handler fails, a result with isError. */
const COUNT_MISSING: ToolScript = {
  tool: toolName("count_lines"),
  input: { path: "no-such-file.txt" },
  toolUseId: "toolu_01JsonRpcStudyCountMissing",
};

/** add with a string where the schema says number. */
const ADD_X: ToolScript = {
  tool: toolName("add"),
  input: { a: "x", b: 1 },
  toolUseId: "toolu_01JsonRpcStudyAddX",
};

/** A tool the server never listed. */
const NOPE: ToolScript = {
  tool: toolName("nope"),
  input: {},
  toolUseId: "toolu_01JsonRpcStudyNope",
};

/** The article's call. */
const ADD: ToolScript = {
  tool: toolName("add"),
  input: { a: 100, b: 111 },
  toolUseId: "toolu_01JsonRpcStudyAdd100111",
};

/** A call long enough to kill the server in the middle of it. */
const WAIT: ToolScript = {
  tool: toolName("wait"),
  input: { seconds: 20 },
  toolUseId: "toolu_01JsonRpcStudyWait20",
};

/** docs/tools.md's answer of count_lines for a missing file. */
const MISSING_TEXT = "ENOENT: no such file or directory, open 'no-such-file.txt'";

// ---- Pure functions: read what was recorded ----

/** A message of the user's role, where the tool results come back to the model. */
function isUserMessage(message: unknown): boolean {
  return isObject(message) && message.role === "user";
}

/** The tool_result blocks of the last user message of each request, by tool_use id. */
function toolResultsOf(requests: readonly RecordedRequest[]): Map<string, ToolResultBlock> {
  const results = new Map<string, ToolResultBlock>();
  for (const { body } of requests) {
    const messages = isObject(body) && Array.isArray(body.messages) ? body.messages : [];
    const users = messages.filter(isUserMessage);
    const last: unknown = users.at(-1);
    const blocks: unknown[] = isObject(last) && Array.isArray(last.content) ? last.content : [];
    for (const block of blocks) {
      if (!isObject(block) || block.type !== "tool_result") continue;
      results.set(String(block.tool_use_id), { content: block.content, is_error: block.is_error });
    }
  }
  return results;
}

/** The tool_result the model received for a call of the script; fails the test without. */
function resultFrom(session: Session, script: ToolScript): ToolResultBlock {
  const block = session.results.get(script.toolUseId);
  assert.ok(block !== undefined, `the model got no tool_result for ${script.tool}`);
  return block;
}

/** wrap's own events (`#` lines), as text. */
function notes(events: readonly LogEvent[]): string[] {
  return events.filter((event) => event.mark === "#").map((event) => event.text);
}

/** The pids of the servers wrap started, in order, from its `# start pid N: …` lines. */
function startedPids(events: readonly LogEvent[]): number[] {
  return notes(events).flatMap((text) => {
    const pid = /^start pid (\d+): /.exec(text)?.[1];
    return pid === undefined ? [] : [Number(pid)];
  });
}

/** The events of a log as it stands now; none while the file is not there yet. */
function eventsNow(logPath: string): LogEvent[] {
  if (!existsSync(logPath)) return [];
  return readFileSync(logPath, "utf8").split("\n").filter((line) => line !== "").map(eventOf);
}

// ---- I/O: one session ----

/**
 * Registers agents-server.mjs through wrap with `claude mcp add` (README's line for wrapping
 * another server, local scope) and runs one `claude -p` turn whose model makes `calls`.
 */
async function session(label: string, calls: readonly ToolScript[],
  { serverArgs = [], during }: SessionOptions = {}): Promise<Session> {
  requireClaude();
  const [first, ...next] = calls;
  if (first === undefined) throw new Error("A session needs a call");
  const api = await startMessagesApi(first, next);
  const home = scratch(`facts-${label}-home`);
  const project = scratch(`facts-${label}-project`);
  const logPath = join(project, "wire.log");
  const env = isolatedEnv(home, api.url);
  try {
    const server = ["node", wrapPath, "--log", logPath, "node", agentsServer, ...serverArgs];
    const added = await claude(["mcp", "add", SERVER_NAME, "--", ...server], env, project);
    assert.equal(added.code, 0, `claude mcp add failed:\n${added.stderr}`);
    const allowed = [...new Set(calls.map((call) => call.tool))].join(",");
    const args = ["-p", PROMPT, "--allowedTools", allowed, "--output-format", "json"];
    const [finished] = await Promise.all([claude(args, env, project), during?.(logPath, api)]);
    assert.equal(finished.code, 0, `claude exited ${finished.code}:\n${finished.stderr}`);
    const events = await settledLog(logPath);
    saveExcerpt(`facts, ${label}`, logPath, [project, home]);
    // Past the wait, `left` names what stayed, for the test to judge.
    await waitUntil(() => processesOf(home).length === 0, "the session's processes", GONE_MS)
      .catch(() => {});
    return { events, results: toolResultsOf(api.requests), left: processesOf(home) };
  } finally {
    await endProcessesOf(home);
    await api.close();
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

/** The server's argument that takes server/discover out of it. */
const LEGACY = ["--legacy"];

/** The model calls count_lines on a missing file, add with "x", then a tool that is not there. */
const errorsSession = shared(() => session("errors", [COUNT_MISSING, ADD_X, NOPE]));

/** The same server without server/discover; the model calls count_lines on a missing file. */
const legacySession = shared(() => session("legacy", [COUNT_MISSING], { serverArgs: LEGACY }));

// ---- The tests ----

test("an isError result reaches the model marked is_error: true, its text one plain string",
  SESSION_TIMEOUT, async () => {
  const recorded = await errorsSession();
  const events = recorded.events;
  const [call] = withMethod(events, "→", "tools/call");
  assert.ok(call !== undefined, `Claude Code sent no tools/call:\n${logText(events)}`);
  assert.equal(paramsOf(call).name, "count_lines");
  const answered = resultFor(events, call.id, "←");
  assert.deepEqual(answered.content, [{ type: "text", text: MISSING_TEXT }]);
  assert.equal(answered.isError, true);
  // The content list becomes one string, and isError the API's own error mark.
  assert.deepEqual(resultFrom(recorded, COUNT_MISSING), { content: MISSING_TEXT, is_error: true });
});

test("add with a: \"x\" is sent to the server, and the model reads its refusal marked is_error",
  SESSION_TIMEOUT, async () => {
  const recorded = await errorsSession();
  const [, call] = withMethod(recorded.events, "→", "tools/call");
  assert.ok(call !== undefined, `no second tools/call:\n${logText(recorded.events)}`);
  // No schema check of Claude Code's own: the arguments reach the server untouched.
  assert.equal(paramsOf(call).name, "add");
  assert.deepEqual(paramsOf(call).arguments, ADD_X.input);
  const refusal = 'Invalid arguments: "a" must be a number';
  const answered = resultFor(recorded.events, call.id, "←");
  assert.deepEqual(answered.content, [{ type: "text", text: refusal }]);
  assert.deepEqual(resultFrom(recorded, ADD_X), { content: refusal, is_error: true });
});

test("a tool name the server does not have is refused by Claude Code, and nothing reaches it",
  SESSION_TIMEOUT, async () => {
  const recorded = await errorsSession();
  const sent = methodsSent(recorded.events);
  assert.deepEqual(sent, ["server/discover", "tools/list", "tools/call", "tools/call"]);
  const names = withMethod(recorded.events, "→", "tools/call").map((call) => paramsOf(call).name);
  assert.deepEqual(names, ["count_lines", "add"], "only the two listed tools were called");
  const told = `<tool_use_error>Error: No such tool available: ${NOPE.tool}</tool_use_error>`;
  assert.deepEqual(resultFrom(recorded, NOPE), { content: told, is_error: true });
});

test("at a session's end Claude Code sends SIGINT with stdin still open; nothing outlives it",
  SESSION_TIMEOUT, async () => {
  const sessions: [Session, string][] = [
    [await errorsSession(), ""],
    [await legacySession(), " --legacy"],
  ];
  for (const [{ events, left }, serverArgs] of sessions) {
    const [pid] = startedPids(events);
    // wrap would log the end of stdin as "end of input", and a server whose input ends exits
    // with code 0.
    assert.deepEqual(notes(events), [
      `start pid ${pid}: node ${agentsServer}${serverArgs}`,
      "received SIGINT: sending SIGINT",
      "exit signal SIGINT",
    ]);
    // The signal came after the session's last response.
    const lastResponse = events.findLastIndex((event) => event.mark === "←");
    const signalled = events.findIndex((event) => event.text.startsWith("received SIGINT"));
    assert.ok(lastResponse < signalled, `SIGINT before the last response:\n${logText(events)}`);
    assert.deepEqual(left, [], "no process of the session outlived claude");
  }
});

test("against --legacy, the probe's -32601 is followed by initialize 2025-11-25, same process",
  SESSION_TIMEOUT, async () => {
  const recorded = await legacySession();
  const events = recorded.events;
  const handshake = ["server/discover", "initialize", "notifications/initialized", "tools/list"];
  assert.deepEqual(methodsSent(events), [...handshake, "tools/call"]);
  assert.equal(startedPids(events).length, 1, "no second process for the fallback");
  const [probe] = withMethod(events, "→", "server/discover");
  assert.ok(probe !== undefined);
  const refusal = responseTo(events, probe.id, "←")?.message;
  assert.ok(isObject(refusal) && isObject(refusal.error), `no refusal:\n${logText(events)}`);
  assert.equal(refusal.error.code, -32601);
  const [initialize] = withMethod(events, "→", "initialize");
  assert.ok(initialize !== undefined);
  assert.equal(paramsOf(initialize).protocolVersion, "2025-11-25");
  assert.deepEqual(paramsOf(initialize).capabilities, {
    roots: { listChanged: true },
    elicitation: { form: {}, url: {} },
  });
  // server.ts speaks 2025-11-25, so the session goes on in it.
  assert.equal(resultFor(events, initialize.id, "←").protocolVersion, "2025-11-25");
  // The isError mark is the same in this era.
  assert.deepEqual(resultFrom(recorded, COUNT_MISSING), { content: MISSING_TEXT, is_error: true });
});

test("a server killed in the middle of a call is started again at the model's next call",
  SESSION_TIMEOUT, async () => {
  let startsWhenTold = -1;
  const killMidCall = async (logPath: string, api: MessagesApi): Promise<void> => {
    const progressed = () => eventsNow(logPath)
      .some((event) => event.mark === "←" && event.text.includes('"notifications/progress"'));
    await waitUntil(progressed, "the wait tool's first progress", WATCH_MS);
    const [pid] = startedPids(eventsNow(logPath));
    assert.ok(pid !== undefined, "no # start line in the log");
    process.kill(pid, "SIGKILL");
    const told = () => api.requests.some((request) => lastToolResults(request.body).length > 0);
    await waitUntil(told, "the model's request with the wait tool's result", WATCH_MS);
    startsWhenTold = startedPids(eventsNow(logPath)).length;
  };
  const recorded = await session("killed", [WAIT, ADD], { during: killMidCall });
  const events = recorded.events;
  assert.deepEqual(resultFrom(recorded, WAIT), { content: "Connection closed", is_error: true });
  // No new server when the old one died: only once the model calls a tool again.
  assert.equal(startsWhenTold, 1, "the server was started again before the model was told");
  assert.equal(startedPids(events).length, 2, `no second # start:\n${logText(events)}`);
  assert.ok(notes(events).includes("exit signal SIGKILL"));
  const restart = events.findLastIndex((event) => event.text.startsWith("start pid"));
  const afterRestart = events.slice(restart);
  // The new process is probed again; its tools are not listed again before the call.
  assert.deepEqual(methodsSent(afterRestart), ["server/discover", "tools/call"]);
  const [call] = withMethod(afterRestart, "→", "tools/call");
  assert.ok(call !== undefined);
  assert.deepEqual(paramsOf(call).arguments, ADD.input);
  assert.deepEqual(resultFrom(recorded, ADD), {
    content: [{ type: "text", text: "100 + 111 = 211" }],
    is_error: undefined,
  });
  assert.deepEqual(recorded.left, [], "no process of the session outlived claude");
});
