/**
 * What Gemini CLI does with an MCP server, measured: the real `gemini` (tests/agents/package.json)
 * registers agents-server.mjs through dist/wrap.mjs with README's own line, then runs one
 * non-interactive turn against a stand-in Gemini API on loopback (gemini.ts):
 *
 *     gemini -p "PROMPT" --yolo -m gemini-2.5-flash
 *
 * wrap's log shows what reaches the server; the stand-in's requests show what the model is
 * told. In short: Gemini CLI speaks `initialize` 2025-06-18 and declares only `roots`, so a
 * tool that asks the user is never asked; it checks arguments against the tool's schema
 * itself; it hands the model a result as `{ output }` inside `<untrusted_context>` and a tool
 * error as `{ error }` text that quotes the whole result; its `timeout` (default 600 s) is not
 * extended by progress and ends in `notifications/cancelled`; a server that died stays dead
 * ("Not connected"); a session ends with SIGTERM. It adds `wait_for_previous` to each tool's
 * schema and passes it on to the server. `gemini -p` offers the model the server's tools only
 * with `--yolo` or a trusted entry (`mcp add --trust`). `mcp add NAME -- CMD` is refused, and
 * `mcp list` prints to stderr. In a folder it does not trust it connects to no server, and
 * `mcp add` there keeps only the server it adds.
 *
 * Run: node --import tsx --test tests/agents/gemini.test.ts (about two minutes). To see the
 * logs with their paths as the documents write them, set GEMINI_EXCERPT to a file.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { wrapPath } from "../helpers.ts";
import {
  forReadme, isObject, logText, metaOf, responseTo, settledLog, type LogEvent,
} from "../claude-code/claude.ts";
import { methodsSent, paramsOf, resultFor, withMethod } from "../claude-code/deploy.ts";
import type { JSONObject } from "../claude-code/deploy.ts";
import {
  SERVER_NAME, agentsServer, endProcessesOf, killServerAtFirstProgress, notes, onlyCall,
  registration, scratch, startedPids, stderrOf, toolsCalled,
} from "./agents.ts";
import {
  ADD_CALL, TOOL_PREFIX, configure, declarationOf, gemini, geminiEnv, offeredTools, projectServers,
  register, session, type Session, type SessionPlan,
} from "./gemini.ts";

/** What the model is told of the article's call: the server's text, marked as untrusted. */
const SUM = { output: "<untrusted_context>\n100 + 111 = 211\n</untrusted_context>" };

/** The only capability Gemini CLI declares: roots. No elicitation, no sampling. */
const CAPABILITIES = { roots: { listChanged: true } };

/** What the deploy tool answers a client that did not declare elicitation. */
const NO_ELICITATION = "This client does not offer elicitation";

/** What the server answers count_lines for a file that is not there. */
const MISSING = "ENOENT: no such file or directory, open 'nope.txt'";

// ---- Reading what was recorded ----

/**
 * The `{ error }` Gemini CLI tells the model for a call whose result is an error: it quotes the
 * call, and the result as it wrapped it (`response` is the MCP result, or its own `{ error }`).
 */
function toolError(tool: string, args: JSONObject, response: JSONObject): JSONObject {
  const call = JSON.stringify({ name: tool, args });
  const wrapped = JSON.stringify([{ functionResponse: { name: tool, response } }]);
  const error = `MCP tool '${tool}' reported tool error for function call: ${call}`;
  return { error: `${error} with response: ${wrapped}` };
}

/** The `{ error }` Gemini CLI tells the model when the MCP request itself failed with `message`. */
function requestError(tool: string, args: JSONObject, message: string): JSONObject {
  return toolError(tool, args, { error: { message, isError: true } });
}

/** When GEMINI_EXCERPT names a file, appends a session's log there, paths as README writes them. */
function saveExcerpt(label: string, events: readonly LogEvent[]): void {
  const excerptFile = process.env.GEMINI_EXCERPT;
  if (excerptFile === undefined) return;
  const text = events.map((event) => `${event.mark} ${event.text}`).join("\n");
  appendFileSync(excerptFile, `---- ${label} ----\n${forReadme(text, [])}\n`);
}

/** Runs a session and checks that the turn itself went through. */
async function checkedSession(plan: SessionPlan): Promise<Session> {
  const turn = await session(plan);
  saveExcerpt(plan.label, turn.events);
  const { code, stderr } = turn.finished;
  assert.equal(code, 0, `gemini exited ${code}:\n${stderr}`);
  const offered = turn.requests.some((request) => {
    return offeredTools(request.body).includes(ADD_CALL.tool);
  });
  assert.ok(offered, `no model request offered ${ADD_CALL.tool}`);
  return turn;
}

/** The session of the article's call, run once for the tests that read it. */
let addTurn: Promise<Session> | undefined;

/** The add session, started by the first test that needs it. */
function addSession(): Promise<Session> {
  addTurn ??= checkedSession({ label: "add", calls: [ADD_CALL] });
  return addTurn;
}

/** The sum as the server answers it. */
const SUM_RESULT = { content: [{ type: "text", text: "100 + 111 = 211" }] };

/** The model's call to wait 20 seconds, far longer than the short timeout. */
const WAIT_CALL = { tool: `${TOOL_PREFIX}wait`, args: { seconds: 20 } };

// ---- Registration ----

describe("registration with gemini mcp add", () => {
  test("README's lines are stored as written, --log included, and mcp list connects", async () => {
    const home = scratch("gemini-register-home");
    const project = scratch("gemini-register-project");
    const logPath = join(project, "wire.log");
    configure(home, project);
    try {
      const alone = registration("gemini", "register", { server: agentsServer });
      assert.equal((await gemini(alone, geminiEnv(home), project)).code, 0);
      const plain = { command: "node", args: [agentsServer] };
      assert.deepEqual(projectServers(project), { [SERVER_NAME]: plain });

      // The wrap line replaces the entry of the same name; yargs leaves wrap's --log alone.
      await register(home, project, logPath);
      const args = [wrapPath, "--log", logPath, "node", agentsServer];
      assert.deepEqual(projectServers(project), { [SERVER_NAME]: { command: "node", args } });

      // The list goes to stderr, not stdout.
      const listed = await gemini(["mcp", "list"], geminiEnv(home), project);
      const connected = `✓ ${SERVER_NAME}: node ${args.join(" ")} (stdio) - Connected`;
      assert.ok(listed.stderr.includes(connected), listed.stderr);

      // mcp list's own client: initialize, then a ping, then SIGTERM.
      const events = await settledLog(logPath);
      assert.ok(notes(events).includes("received SIGTERM: sending SIGTERM"), logText(events));
      assert.deepEqual(methodsSent(events), ["initialize", "notifications/initialized", "ping"]);
      const [initialize] = withMethod(events, "→", "initialize");
      assert.ok(initialize !== undefined);
      const clientInfo = { name: "mcp-test-client", version: "0.0.1" };
      const params = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo };
      assert.deepEqual(paramsOf(initialize), params);
    } finally {
      await endProcessesOf(home);
    }
  });

  test("a -- after the name fails; after the command, it keeps the options behind it", async () => {
    const home = scratch("gemini-dashes-home");
    const project = scratch("gemini-dashes-project");
    configure(home, project);
    const add = (...words: string[]) => gemini(["mcp", "add", ...words], geminiEnv(home), project);
    try {
      // As Codex and Copilot CLI write it: yargs takes `--` for the end of the positionals.
      const refused = await add(SERVER_NAME, "--", "node", agentsServer);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /^Not enough non-option arguments: got 1, need at least 2$/m);

      // An option of gemini mcp add's own after the command is taken by gemini mcp add...
      assert.equal((await add(SERVER_NAME, "node", agentsServer, "--timeout", "5")).code, 0);
      const taken = { command: "node", args: [agentsServer], timeout: 5 };
      assert.deepEqual(projectServers(project), { [SERVER_NAME]: taken });

      // ...unless a `--` comes before it, which is dropped.
      assert.equal((await add(SERVER_NAME, "node", agentsServer, "--", "--timeout", "5")).code, 0);
      const kept = { command: "node", args: [agentsServer, "--timeout", "5"] };
      assert.deepEqual(projectServers(project), { [SERVER_NAME]: kept });
    } finally {
      await endProcessesOf(home);
    }
  });

  test("in an untrusted folder an add keeps only the server it adds, shown disabled", async () => {
    const home = scratch("gemini-untrusted-home");
    const project = scratch("gemini-untrusted-project");
    configure(home);
    try {
      const alone = registration("gemini", "register", { server: agentsServer });
      assert.equal((await gemini(alone, geminiEnv(home), project)).code, 0);
      const second = ["mcp", "add", "second", "node", agentsServer];
      assert.equal((await gemini(second, geminiEnv(home), project)).code, 0);
      const entry = { command: "node", args: [agentsServer] };
      assert.deepEqual(projectServers(project), { second: entry }, "the first entry is gone");

      const listed = await gemini(["mcp", "list"], geminiEnv(home), project);
      assert.match(listed.stderr, /disabled because this folder is untrusted/);
      const disabled = `○ second: node ${agentsServer} (stdio) - Disabled`;
      assert.ok(listed.stderr.includes(disabled), listed.stderr);

      // Once the folder is trusted, an add keeps what is there.
      configure(home, project);
      assert.equal((await gemini(alone, geminiEnv(home), project)).code, 0);
      assert.deepEqual(projectServers(project), { second: entry, [SERVER_NAME]: entry });
    } finally {
      await endProcessesOf(home);
    }
  });
});

// ---- The article's call ----

describe("gemini -p with the model calling add 100 and 111", () => {
  test("the first request is initialize 2025-06-18, and it declares only roots", async () => {
    const { events } = await addSession();
    const methods = ["initialize", "notifications/initialized", "tools/list", "tools/call"];
    assert.deepEqual(methodsSent(events), methods);
    const [initialize] = withMethod(events, "→", "initialize");
    assert.ok(initialize !== undefined);
    const clientInfo = { name: "gemini-cli-mcp-client", version: "0.61.0" };
    const params = { protocolVersion: "2025-06-18", capabilities: CAPABILITIES, clientInfo };
    assert.deepEqual(paramsOf(initialize), params);
  });

  test("the call carries a progressToken; the model reads 211, marked untrusted", async () => {
    const { events, told, requests, finished } = await addSession();
    const call = onlyCall(events, "add");
    assert.deepEqual(paramsOf(call).arguments, ADD_CALL.args);
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    assert.match(String(metaOf(call)?.progressToken), uuid);
    assert.deepEqual(resultFor(events, call.id, "←"), SUM_RESULT);
    assert.deepEqual(told, [SUM]);
    assert.match(finished.stdout, /211/);

    // The tool is offered as mcp_<server>_<tool>, with a property of Gemini CLI's own added.
    const declared = declarationOf(requests[0]?.body, ADD_CALL.tool);
    const schema = declared?.parametersJsonSchema;
    assert.ok(isObject(schema) && isObject(schema.properties), JSON.stringify(declared));
    assert.deepEqual(Object.keys(schema.properties), ["a", "b", "wait_for_previous"]);
    assert.deepEqual(schema.required, ["a", "b"]);
  });

  test("the session ends with SIGTERM, stdin still open, and leaves nothing running", async () => {
    const { events, left } = await addSession();
    const said = notes(events);
    const sigterm = said.indexOf("received SIGTERM: sending SIGTERM");
    assert.ok(sigterm !== -1, `no SIGTERM:\n${logText(events)}`);
    assert.ok(!said.slice(0, sigterm).includes("end of input"), "stdin closed before SIGTERM");
    // wrap lived to log its server's end: no SIGKILL cut it short.
    assert.equal(said.at(-1), "exit signal SIGTERM");
    assert.deepEqual(left, [], "processes left behind");
  });
});

test("Gemini CLI passes on wait_for_previous, which it adds to each tool's schema", async () => {
  const args = { ...ADD_CALL.args, wait_for_previous: true };
  const { events, told } = await checkedSession({ label: "extra", calls: [{ ...ADD_CALL, args }] });
  assert.deepEqual(paramsOf(onlyCall(events, "add")).arguments, args);
  assert.deepEqual(told, [SUM]);
});

describe("gemini -p without --yolo", () => {
  test("offers the model none of the server's tools", async () => {
    const turn = await session({ label: "no-yolo", calls: [ADD_CALL], flags: [] });
    const { events, requests, finished } = turn;
    assert.equal(finished.code, 0, finished.stderr);
    const offered = requests.flatMap((request) => offeredTools(request.body));
    assert.deepEqual(offered.filter((name) => name.startsWith(TOOL_PREFIX)), []);
    // It still starts the server and lists its tools.
    const listed = ["initialize", "notifications/initialized", "tools/list"];
    assert.deepEqual(methodsSent(events), listed);
  });

  test("runs them when the entry is trusted (mcp add --trust)", async () => {
    const plan = { label: "trust", calls: [ADD_CALL], flags: [], addOptions: ["--trust"] };
    const { told } = await checkedSession(plan);
    assert.deepEqual(told, [SUM]);
  });
});

// ---- Errors ----

test("Gemini CLI refuses a: \"x\" itself and tells the model each error as { error }", async () => {
  const calls = [
    { tool: ADD_CALL.tool, args: { a: "x", b: 1 } },
    { tool: `${TOOL_PREFIX}count_lines`, args: { path: "nope.txt" } },
    { tool: `${TOOL_PREFIX}nope`, args: { a: 1 } },
  ];
  const { events, told } = await checkedSession({ label: "errors", calls });
  // Neither add with "x" nor the unknown tool reaches the server.
  assert.deepEqual(toolsCalled(events), ["count_lines"]);
  const isError = { content: [{ type: "text", text: MISSING }], isError: true };
  assert.deepEqual(resultFor(events, onlyCall(events, "count_lines").id, "←"), isError);

  const suggested = ["add", "wait", "deploy"].map((tool) => `"${TOOL_PREFIX}${tool}"`).join(", ");
  assert.deepEqual(told, [
    { error: "params/a must be number" },
    toolError("count_lines", { path: "nope.txt" }, isError),
    { error: `Tool "${TOOL_PREFIX}nope" not found. Did you mean one of: ${suggested}?` },
  ]);
});

// ---- A slow tool ----

test("past its timeout a call is cancelled despite progress, and the server is kept", async () => {
  const addOptions = ["--timeout", "4000"];
  const plan = { label: "timeout", calls: [WAIT_CALL, ADD_CALL], addOptions };
  const { events, told } = await checkedSession(plan);
  const call = onlyCall(events, "wait");
  const token = metaOf(call)?.progressToken;
  assert.equal(typeof token, "string", `no progressToken: ${JSON.stringify(call)}`);

  // Progress with the call's token, every second, does not keep the 4 s timeout from firing.
  const progress = withMethod(events, "←", "notifications/progress").map(paramsOf);
  assert.ok(progress.length >= 2, `too little progress to tell:\n${logText(events)}`);
  assert.ok(progress.every((params) => params.progressToken === token));
  const [cancelled] = withMethod(events, "→", "notifications/cancelled");
  assert.ok(cancelled !== undefined, `no notifications/cancelled:\n${logText(events)}`);
  const reason = "McpError: MCP error -32001: Request timed out";
  assert.deepEqual(paramsOf(cancelled), { requestId: call.id, reason }, "no _meta, this reason");
  assert.equal(responseTo(events, call.id, "←"), undefined, "the cancelled call was answered");
  const stopped = '[server] tool "wait" stopped: The operation was aborted';
  assert.ok(stderrOf(events).includes(stopped), logText(events));

  // The same server process answers the next call.
  assert.equal(startedPids(events).length, 1);
  assert.deepEqual(resultFor(events, onlyCall(events, "add").id, "←"), SUM_RESULT);
  const timedOut = requestError("wait", WAIT_CALL.args, "MCP error -32001: Request timed out");
  assert.deepEqual(told, [timedOut, SUM]);
});

// ---- A tool that asks the user ----

test("with no elicitation declared, deploy never asks, and the model reads its error", async () => {
  const deploy = { tool: `${TOOL_PREFIX}deploy`, args: { environment: "production" } };
  const { events, told } = await checkedSession({ label: "deploy", calls: [deploy] });
  // No server/discover probe: the handshake era is the only one, so --legacy changes nothing.
  assert.equal(methodsSent(events)[0], "initialize");
  assert.deepEqual(withMethod(events, "←", "elicitation/create"), [], "the server asked");
  const isError = { content: [{ type: "text", text: NO_ELICITATION }], isError: true };
  assert.deepEqual(resultFor(events, onlyCall(events, "deploy").id, "←"), isError);
  assert.deepEqual(told, [toolError("deploy", deploy.args, isError)]);
});

// ---- A server that dies ----

test("a server killed mid-call stays dead, and its tools stay offered to the model", async () => {
  const meanwhile = (logPath: string) => killServerAtFirstProgress(logPath, "SIGKILL");
  const plan = { label: "killed", calls: [WAIT_CALL, ADD_CALL], meanwhile };
  const { events, told, requests } = await checkedSession(plan);
  assert.ok(notes(events).includes("exit signal SIGKILL"), logText(events));
  assert.equal(startedPids(events).length, 1, "Gemini CLI started the server again");
  assert.deepEqual(toolsCalled(events), ["wait"]);
  assert.deepEqual(told, [
    requestError("wait", WAIT_CALL.args, "MCP error -32000: Connection closed"),
    requestError("add", ADD_CALL.args, "Not connected"),
  ]);
  const offered = offeredTools(requests.at(-1)?.body);
  assert.ok(offered.includes(ADD_CALL.tool), "the tools were dropped");
});
