/**
 * What Qwen Code does with an MCP server, measured: the real `qwen` (tests/agents/package.json)
 * registers agents-server.mjs through dist/wrap.mjs with README's own line, then runs one
 * non-interactive turn against a stand-in OpenAI model on loopback (qwen.ts):
 *
 *     qwen "PROMPT" --auth-type openai --allowed-tools mcp__json-rpc-study
 *
 * wrap's log shows what reaches the server; the stand-in's requests show what the model is
 * told. In short: Qwen Code speaks `initialize` 2025-11-25 unless the entry says
 * `"versionNegotiation": "auto"`, declares no elicitation, asks for prompts and resources the
 * server never offered, checks arguments against the tool's schema itself, gives a call a
 * `timeout` that progress does not extend (default 600 s) and an idle timeout that progress
 * does (default 300 s), restarts a server that died at once, and ends a session by closing
 * the server's stdin.
 *
 * Run: node --import tsx --test tests/agents/qwen.test.ts (90 s; 2 min on a busy machine). To
 * record the logs for the documents, set QWEN_EXCERPT to a file: each turn's log goes there.
 */
import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { serverPath, wrapPath, type Finished } from "../helpers.ts";
import { isObject, logText, metaOf, requestOf, responseTo } from "../claude-code/claude.ts";
import type { LogEvent } from "../claude-code/claude.ts";
import { methodsSent, paramsOf, resultFor, withMethod } from "../claude-code/deploy.ts";
import type { JSONObject } from "../claude-code/deploy.ts";
import {
  SERVER_NAME, agentsServer, cliPath, endProcessesOf, isolatedEnv, killServerAtFirstProgress, notes,
  onlyCall, registration, runCli, saveExcerpt, scratch,
} from "./agents.ts";
import {
  ADD_CALL, TOOL_PREFIX, askQwen, configure, entryOf, register, settledSession,
  startChatCompletionsApi, startTimes, type ToolCall,
} from "./qwen.ts";
import { offeredTools, toolResults, type RecordedRequest } from "./stand-in.ts";

/** Everything one turn left behind. */
interface Session {
  finished: Finished;
  events: LogEvent[];
  requests: RecordedRequest[];
  /** The tool results the model was given, in order, from the last request of the turn. */
  told: string[];
  /** Processes still running with the turn's HOME once wrap had logged every server's end. */
  left: number[];
  logPath: string;
}

/** How one turn is set up. */
interface SessionOptions {
  script: readonly ToolCall[];
  /** Options for `qwen mcp add`, put right after `add`. */
  addOptions?: readonly string[];
  /** Fields added to the entry `qwen mcp add` wrote (alwaysLoadTools is always added). */
  entry?: JSONObject;
  /** Environment variables for the turn. */
  env?: NodeJS.ProcessEnv;
  /** Runs while Qwen Code runs, given the log's path. */
  during?: (logPath: string) => Promise<void>;
}

/** The prompt. The stand-in does not read it; it is there for the reader. */
const PROMPT = "Use the json-rpc-study tools as scripted";

/** What Qwen Code tells the model when a server died under a call it will not replay. */
const UNSAFE_REPLAY = "MCP tool execution may have completed before the connection failed. "
  + "Automatic replay was skipped because the call could not be verified as safe to replay. "
  + "Do not retry automatically; verify the outcome before trying again.";

/** What the deploy tool answers a client that did not declare elicitation. */
const NO_ELICITATION = "This client does not offer elicitation";

/** Where QWEN_EXCERPT records the turns' logs for the documents. */
const EXCERPT = { variable: "QWEN_EXCERPT", placeholder: "/tmp/qwen-test" };

/** The capabilities Qwen Code declares: roots, and the MCP Apps extension (no elicitation). */
const CAPABILITIES = {
  extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } },
  roots: {},
};

// ---- Running one turn ----

/** Registers, configures and runs one turn, then ends whatever the turn left running. */
async function session(label: string, options: SessionOptions): Promise<Session> {
  const home = scratch(`qwen-${label}-home`);
  const project = scratch(`qwen-${label}-project`);
  const logPath = join(project, "wire.log");
  const api = await startChatCompletionsApi(options.script);
  try {
    const added = await register(home, project, logPath, options.addOptions);
    assert.equal(added.code, 0, `qwen mcp add failed:\n${added.stderr}`);
    configure(home, options.entry);
    const turn = askQwen(PROMPT, home, project, api, options.env);
    await options.during?.(logPath);
    const finished = await turn;
    assert.equal(finished.code, 0, `qwen exited ${finished.code}:\n${finished.stderr}`);
    const events = await settledSession(logPath);
    saveExcerpt(EXCERPT, label, logPath, [project, home]);
    const left = await endProcessesOf(home);
    const requests = api.requests;
    const told = toolResults(requests.at(-1)?.body);
    return { finished, events, requests, told, left, logPath };
  } finally {
    await endProcessesOf(home);
    await api.close();
  }
}

// ---- Registration ----

describe("registration with qwen mcp add", () => {
  test("README's line for the server alone is stored as is, and mcp list connects", async () => {
    const home = scratch("qwen-plain-home");
    try {
      const words = registration("qwen", "register", { server: serverPath });
      const added = await runCli(cliPath("qwen"), words, isolatedEnv(home, {}), home);
      assert.equal(added.code, 0, added.stderr);
      assert.deepEqual(entryOf(home), { command: "node", args: [serverPath] });
      const listed = await runCli(cliPath("qwen"), ["mcp", "list"], isolatedEnv(home, {}), home);
      const connected = `${SERVER_NAME}: node ${serverPath} (stdio) - Connected`;
      assert.ok(listed.stdout.includes(connected), listed.stdout);
    } finally {
      await endProcessesOf(home);
    }
  });

  test("qwen mcp add refuses a -- before the command, and drops one after wrap's", async () => {
    const home = scratch("qwen-dashes-home");
    try {
      const env = isolatedEnv(home, {});
      const dashed = ["mcp", "add", SERVER_NAME, "--", "node", serverPath];
      const refused = await runCli(cliPath("qwen"), dashed, env, home);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /Not enough non-option arguments: got 1, need at least 2/);
      assert.equal(entryOf(home), undefined, "the -- form wrote an entry");
      const log = join(home, "wire.log");
      const wrap = ["node", wrapPath, "--log", log];
      const wrapped = ["mcp", "add", SERVER_NAME, ...wrap, "--", "node", serverPath];
      assert.equal((await runCli(cliPath("qwen"), wrapped, env, home)).code, 0);
      assert.deepEqual(entryOf(home)?.args, [wrapPath, "--log", log, "node", serverPath]);
    } finally {
      await endProcessesOf(home);
    }
  });
});

// ---- One turn: add 100 and 111 ----

describe("a turn in which the model adds 100 and 111", () => {
  let turn: Session | undefined;
  let entry: JSONObject | undefined;
  let listed: { finished: Finished; events: LogEvent[] } | undefined;

  before(async () => {
    const home = scratch("qwen-add-home");
    const project = scratch("qwen-add-project");
    const logPath = join(project, "wire.log");
    const api = await startChatCompletionsApi([ADD_CALL]);
    try {
      assert.equal((await register(home, project, logPath)).code, 0);
      entry = entryOf(home);
      configure(home);
      const list = ["mcp", "list"];
      const listing = await runCli(cliPath("qwen"), list, isolatedEnv(home, {}), project);
      listed = { finished: listing, events: await settledSession(logPath) };
      const finished = await askQwen(PROMPT, home, project, api);
      const events = (await settledSession(logPath)).slice(listed.events.length);
      saveExcerpt(EXCERPT, "add", logPath, [project, home]);
      const left = await endProcessesOf(home);
      const requests = api.requests;
      const told = toolResults(requests.at(-1)?.body);
      turn = { finished, events, requests, told, left, logPath };
    } finally {
      await endProcessesOf(home);
      await api.close();
    }
  });

  test("qwen mcp add stores README's wrap line in ~/.qwen/settings.json, --log kept", () => {
    const args = [wrapPath, "--log", turn?.logPath, "node", agentsServer];
    assert.deepEqual(entry, { command: "node", args });
  });

  test("qwen mcp list says Connected after an initialize, then closes the server's stdin", () => {
    assert.ok(listed !== undefined);
    const connected = /json-rpc-study: node .*wrap\.mjs .* \(stdio\) - Connected/;
    assert.match(listed.finished.stdout, connected);
    assert.deepEqual(methodsSent(listed.events), ["initialize", "notifications/initialized"]);
    const [initialize] = withMethod(listed.events, "→", "initialize");
    assert.ok(initialize !== undefined);
    const clientInfo = { name: "mcp-test-client", version: "0.0.1" };
    assert.deepEqual(paramsOf(initialize).clientInfo, clientInfo);
    assert.deepEqual(notes(listed.events).slice(1), ["end of input", "exit code 0"]);
  });

  test("Qwen Code opens with initialize 2025-11-25, declaring roots but not elicitation", () => {
    assert.ok(turn !== undefined);
    const [first] = turn.events.filter((event) => event.mark === "→").map(requestOf);
    assert.equal(first?.method, "initialize");
    assert.ok(first !== undefined);
    const params = paramsOf(first);
    assert.equal(params.protocolVersion, "2025-11-25");
    assert.deepEqual(params.capabilities, CAPABILITIES);
    const clientInfo = { name: `qwen-cli-mcp-client-${SERVER_NAME}`, version: "0.0.1" };
    assert.deepEqual(params.clientInfo, clientInfo);
  });

  test("Qwen Code asks for prompts and resources though the server declared only tools", () => {
    assert.ok(turn !== undefined);
    const methods = methodsSent(turn.events);
    assert.deepEqual(methods.slice(0, 2), ["initialize", "notifications/initialized"]);
    const lists = ["prompts/list", "resources/list", "tools/list"];
    assert.deepEqual(methods.slice(2, 5).sort(), lists, "asked for together, in any order");
    assert.deepEqual(methods.slice(5), ["tools/call"]);
    for (const method of ["prompts/list", "resources/list"]) {
      const [request] = withMethod(turn.events, "→", method);
      const answer: unknown = responseTo(turn.events, request?.id, "←")?.message;
      assert.ok(isObject(answer) && isObject(answer.error), `${method} was not refused`);
      assert.equal(answer.error.code, -32601);
    }
  });

  test("the model is offered the four tools, and reads 100 + 111 = 211 as add's result", () => {
    assert.ok(turn !== undefined);
    const offered = offeredTools(turn.requests[0]?.body).filter((name) => {
      return name.startsWith(TOOL_PREFIX);
    });
    const tools = ["add", "count_lines", "deploy", "wait"].map((tool) => TOOL_PREFIX + tool);
    assert.deepEqual(offered.sort(), tools);
    const call = onlyCall(turn.events, "add");
    assert.deepEqual(paramsOf(call).arguments, ADD_CALL.arguments);
    assert.deepEqual(metaOf(call), { progressToken: call.id }, "the token is the call's id");
    assert.deepEqual(turn.told, ["100 + 111 = 211"]);
    assert.match(turn.finished.stdout, /The tool says: 100 \+ 111 = 211/);
  });

  test("at the end of a turn Qwen Code closes the server's stdin and sends no signal", () => {
    assert.ok(turn !== undefined);
    assert.deepEqual(notes(turn.events).slice(1), ["end of input", "exit code 0"]);
    assert.deepEqual(turn.left, [], "processes left running after the turn");
  });
});

// ---- Errors ----

describe("a turn of calls that fail", () => {
  let turn: Session | undefined;

  before(async () => {
    const script: ToolCall[] = [
      { tool: "add", arguments: { a: "x", b: 1 } },
      { tool: "count_lines", arguments: { path: "nope.txt" } },
      { tool: "nope", arguments: {} },
    ];
    turn = await session("errors", { script });
  });

  test("Qwen Code refuses add with a: \"x\" by its own schema check, sending nothing", () => {
    assert.ok(turn !== undefined);
    const sent = withMethod(turn.events, "→", "tools/call").map((call) => paramsOf(call).name);
    assert.deepEqual(sent, ["count_lines"], "only count_lines reached the server");
    assert.equal(turn.told[0], "params/a must be number");
  });

  test("an isError result reaches the model in Qwen Code's sentence, the result as JSON", () => {
    assert.ok(turn !== undefined);
    const call = onlyCall(turn.events, "count_lines");
    const failure = "ENOENT: no such file or directory, open 'nope.txt'";
    const content = [{ type: "text", text: failure }];
    assert.deepEqual(resultFor(turn.events, call.id, "←"), { content, isError: true });
    const response = { error: { content, isError: true }, content };
    const parts = [{ functionResponse: { name: "count_lines", response } }];
    const sentence = "MCP tool 'count_lines' reported tool error for function call: "
      + `${JSON.stringify({ name: "count_lines", args: { path: "nope.txt" } })} `
      + `with response: ${JSON.stringify(parts)}`;
    assert.equal(turn.told[1], sentence);
  });

  test("Qwen Code answers a call to a tool the server does not have itself", () => {
    assert.ok(turn !== undefined);
    const told = `Tool "${TOOL_PREFIX}nope" not found on MCP server "${SERVER_NAME}". `
      + "The server may be disconnected, still starting up, or the tool was renamed.";
    assert.equal(turn.told[2], told);
    assert.equal(turn.told.length, 3);
  });
});

// ---- A slow tool ----

describe("a slow tool", () => {
  test("progress does not extend the entry's timeout; the server is kept", async () => {
    const script = [{ tool: "wait", arguments: { seconds: 20 } }, ADD_CALL];
    const turn = await session("timeout", { script, addOptions: ["--timeout", "4000"] });
    const call = onlyCall(turn.events, "wait");
    assert.deepEqual(metaOf(call), { progressToken: call.id });
    const progress = withMethod(turn.events, "←", "notifications/progress");
    assert.ok(progress.length >= 2, `no progress after a second:\n${logText(turn.events)}`);
    const cancelled = withMethod(turn.events, "→", "notifications/cancelled");
    const params = { requestId: call.id, reason: "SdkError: Request timed out" };
    const notification = { jsonrpc: "2.0", method: "notifications/cancelled", params };
    assert.deepEqual(cancelled, [notification], "a notifications/cancelled with no _meta");
    const answer = responseTo(turn.events, call.id, "←");
    assert.equal(answer, undefined, "the cancelled call was answered");
    assert.deepEqual(turn.told, ["Request timed out", "100 + 111 = 211"]);
    // The same server answers the next call: one start, no signal.
    assert.equal(notes(turn.events).filter((text) => text.startsWith("start pid ")).length, 1);
    assert.ok(!notes(turn.events).some((text) => text.startsWith("received ")));
  });

  test("progress resets the idle timeout: a 6 s wait outlives a 3 s one", async () => {
    const script = [{ tool: "wait", arguments: { seconds: 6 } }];
    const env = { QWEN_CODE_MCP_TOOL_IDLE_TIMEOUT_MS: "3000" };
    const turn = await session("idle-progress", { script, env });
    assert.equal(withMethod(turn.events, "←", "notifications/progress").length, 6);
    assert.deepEqual(withMethod(turn.events, "→", "notifications/cancelled"), []);
    assert.deepEqual(turn.told, ["Waited 6 seconds"]);
  });

  test("a call silent past the idle timeout is cancelled; the model reads why", async () => {
    const script = [{ tool: "wait", arguments: { seconds: 20 } }];
    const env = { QWEN_CODE_MCP_TOOL_IDLE_TIMEOUT_MS: "500" };
    const turn = await session("idle-silent", { script, env });
    const call = onlyCall(turn.events, "wait");
    const reason = `AbortError: MCP tool 'wait' on server '${SERVER_NAME}' `
      + "did not respond within 500ms idle timeout";
    const [cancelled] = withMethod(turn.events, "→", "notifications/cancelled");
    assert.ok(cancelled !== undefined, logText(turn.events));
    assert.deepEqual(paramsOf(cancelled), { requestId: call.id, reason });
    assert.deepEqual(turn.told, [reason]);
  });
});

// ---- A tool that asks the user ----

describe("the deploy tool, which asks the user", () => {
  const script = [{ tool: "deploy", arguments: { environment: "production" } }];

  test("in the handshake era the question is never asked; the tool says why", async () => {
    const turn = await session("deploy-legacy", { script });
    assert.deepEqual(withMethod(turn.events, "←", "elicitation/create"), []);
    const call = onlyCall(turn.events, "deploy");
    const result = resultFor(turn.events, call.id, "←");
    assert.deepEqual(result, { content: [{ type: "text", text: NO_ELICITATION }], isError: true });
    const sentence = "MCP tool 'deploy' reported tool error for function call: ";
    assert.ok(turn.told[0]?.startsWith(sentence), turn.told[0]);
    assert.ok(turn.told[0]?.includes(NO_ELICITATION), turn.told[0]);
  });

  test("with versionNegotiation auto it speaks 2026-07-28, and still never asks", async () => {
    const turn = await session("deploy-modern", { script, entry: { versionNegotiation: "auto" } });
    const methods = methodsSent(turn.events);
    assert.equal(methods[0], "server/discover");
    const lists = ["prompts/list", "resources/list", "tools/list"];
    assert.deepEqual(methods.slice(1, 4).sort(), lists, "sent at once, in any order");
    assert.deepEqual(methods.slice(4), ["tools/call"], "the call was sent again");
    // The probe's server gets its stdin closed and SIGTERM at once (in either order, as wrap
    // sees them), and is gone before the session's own server starts.
    const story = notes(turn.events).map((text) => text.replace(/pid \d+: .*/, "pid"));
    const ending = ["end of input", "received SIGTERM: sending SIGTERM"];
    assert.deepEqual(story.slice(1, 3).sort(), ending);
    const around = [story[0], story[3], story[4]];
    assert.deepEqual(around, ["start pid", "exit signal SIGTERM", "start pid"]);
    const call = onlyCall(turn.events, "deploy");
    const meta = metaOf(call);
    assert.equal(meta?.["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
    assert.deepEqual(meta?.["io.modelcontextprotocol/clientCapabilities"], CAPABILITIES);
    // deploy lets elicit's refusal pass: in 2026-07-28 that is -32021, naming the capability
    // (basic/index: the server MUST), and Qwen Code tells the model the error's message.
    const answered = responseTo(turn.events, call.id, "←")?.message;
    const data = { requiredCapabilities: { elicitation: {} } };
    assert.ok(isObject(answered));
    assert.deepEqual(answered.error, { code: -32021, message: NO_ELICITATION, data });
    assert.ok(turn.told[0]?.includes(NO_ELICITATION), turn.told[0]);
  });
});

// ---- The server dies mid-call ----

test("a server killed mid-call is restarted at once; the model is told not to retry", async () => {
  const script = [{ tool: "wait", arguments: { seconds: 20 } }, ADD_CALL];
  const during = (logPath: string) => killServerAtFirstProgress(logPath, "SIGTERM");
  const turn = await session("killed", { script, during });
  const starts = notes(turn.events).filter((text) => text.startsWith("start pid "));
  assert.equal(starts.length, 2, logText(turn.events));
  assert.ok(notes(turn.events).includes("exit signal SIGTERM"));
  assert.deepEqual(turn.told, [UNSAFE_REPLAY, "100 + 111 = 211"]);
  // At once: the second server started before the model was even told of the failure.
  const toldAt = turn.requests.find((request) => {
    return toolResults(request.body).length === 1;
  })?.receivedAt;
  const restartedAt = startTimes(turn.logPath)[1];
  assert.ok(toldAt !== undefined && restartedAt !== undefined);
  assert.ok(restartedAt < toldAt, "the server was restarted only at the model's next call");
  assert.deepEqual(turn.left, []);
});
