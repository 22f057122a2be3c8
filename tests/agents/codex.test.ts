/**
 * What the Codex CLI does with an MCP server, measured: the real `codex` (tests/agents/
 * package.json) registers agents-server.mjs through dist/wrap.mjs with README's own line, then
 * runs one non-interactive turn against a stand-in OpenAI Responses API on loopback (codex.ts):
 *
 *     codex exec --skip-git-repo-check "PROMPT"
 *
 * wrap's log shows what reaches the server; the stand-in's requests show what the model is
 * told. In short: Codex speaks only the handshake era (`initialize` 2025-06-18) and declares
 * elicitation (form and url) but no sampling; `codex exec` refuses every MCP call unless the
 * entry says `default_tools_approval_mode = "approve"`, and leaves a server that takes over 1 s
 * to start out of the turn unless it says `required = true` (`mcp add` can write neither); it
 * sends arguments unchecked, hands the model an `isError` result with no error mark, cancels a
 * call after `tool_timeout_sec` (default 300 s) whatever progress arrives, answers an
 * elicitation `decline`, leaves a dead server dead, and ends a session with SIGTERM and a
 * closed stdin.
 *
 * Run: node --import tsx --test tests/agents/codex.test.ts (about 40 seconds).
 */
import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { root, type Finished } from "../helpers.ts";
import {
  isObject, logText, metaOf, requestOf, responseTo, versionOf, type LogEvent,
} from "../claude-code/claude.ts";
import { QUESTION, methodsSent, paramsOf, resultFor, withMethod } from "../claude-code/deploy.ts";
import {
  SERVER_NAME, agentsServer, callsOf, cliPath, endProcessesOf, killServerAtFirstProgress, notes,
  processesLeft, readLog, registration, scratch, stderrOf,
} from "./agents.ts";
import {
  ADD_CALL, NAMESPACE, WALL_TIME, codex, codexExec, configPath, configureEntry, namespaceTools,
  prepareHome, register, startResponsesApi, toolOutputs, type EntrySettings, type ToolCall,
  type ToolOutput,
} from "./codex.ts";
import type { RecordedRequest } from "./stand-in.ts";

/** Everything one `codex exec` turn left behind. */
interface Turn {
  finished: Finished;
  /** wrap's log of the session, read into events. */
  events: LogEvent[];
  /** Every request the stand-in model API received. */
  requests: RecordedRequest[];
  /** The processes still running with the turn's HOME once Codex had exited. */
  left: number[];
}

/** What a turn adds to the server's entry, and what it does while Codex runs. */
interface TurnOptions {
  settings?: EntrySettings;
  /** The server README's line names, agents-server.mjs unless a test gives another. */
  server?: string;
  /** Runs while `codex exec` runs, given wrap's log path; the turn waits for it. */
  meanwhile?: (logPath: string) => Promise<void>;
}

/** How long a test (or a group's turn) may take on a loaded 2-core machine. */
const TIMEOUT = { timeout: 180_000 };

/**
 * What the entry needs for `codex exec` to use the server: without the approval mode it refuses
 * every call, and without `required` a server slower than 1 s to start is left out of the turn.
 */
const USABLE: EntrySettings = { default_tools_approval_mode: "approve", required: true };

/**
 * How long the processes of a finished turn may take to end before they count as left: the
 * server Codex stopped at its exit may still be on its way out when Codex itself is gone.
 */
const PROCESS_SETTLE_MS = 5_000;

/** How late the late server starts: far beyond the 1 s Codex waits for a server not required. */
const LATE_START_MS = 5_000;

/** The version of the pinned Codex, as it names itself in `initialize`. */
const CODEX_VERSION = versionOf(join(root, "tests", "agents", "node_modules", "@openai", "codex"));

/** What the model reads when a call to a server's tool failed; the cause follows. */
function callFailed(tool: string): string {
  return `tool call error: tool call failed for \`${SERVER_NAME}/${tool}\`\n\nCaused by:\n    `;
}

/** The model's call to `wait`: far longer than any timeout set here. */
const WAIT_CALL: ToolCall = { namespace: NAMESPACE, name: "wait", arguments: { seconds: 20 } };

/** The model's call to `deploy`, which asks the user before it deploys to production. */
const DEPLOY_CALL: ToolCall = {
  namespace: NAMESPACE,
  name: "deploy",
  arguments: { environment: "production" },
};

// ---- Reading what was recorded ----

/** The tool results carried by the last request the model received: every result of the turn. */
function readByModel(requests: readonly RecordedRequest[]): ToolOutput[] {
  return toolOutputs(requests.at(-1)?.body);
}

/** Checks that a result is Codex's wall-time line and then `text`, as two input_text parts. */
function assertResultText(result: ToolOutput | undefined, text: string): void {
  assert.ok(result !== undefined, "the model got no result");
  assert.deepEqual(result.keys, ["call_id", "id", "output", "type"]);
  const parts = result.output;
  assert.ok(Array.isArray(parts), `not a list of parts: ${JSON.stringify(parts)}`);
  const [first, second, ...rest] = parts;
  assert.ok(isObject(first) && typeof first.text === "string", JSON.stringify(parts));
  assert.equal(first.type, "input_text");
  assert.match(first.text, WALL_TIME);
  assert.deepEqual(second, { type: "input_text", text });
  assert.deepEqual(rest, []);
}

/** The index of the first event that went in direction `mark` with `method`. */
function indexOfMethod(events: readonly LogEvent[], mark: string, method: string): number {
  return events.findIndex((event) => event.mark === mark && requestOf(event)?.method === method);
}

// ---- I/O: one turn ----

/**
 * Registers the server in a new HOME, adds `settings` to its entry, and runs
 * `codex exec PROMPT` once against a stand-in that follows `script`; ends whatever is left.
 */
async function turn(prompt: string, script: readonly ToolCall[],
  options: TurnOptions = {}): Promise<Turn> {
  const api = await startResponsesApi(script);
  const home = scratch("codex-home");
  const project = scratch("codex-project");
  const logPath = join(project, "wire.log");
  try {
    prepareHome(home, api);
    const added = await register(home, project, logPath, options.server);
    assert.equal(added.code, 0, `codex mcp add exited ${added.code}:\n${added.stderr}`);
    if (options.settings !== undefined) configureEntry(home, options.settings);
    const running = codexExec(prompt, home, project);
    await options.meanwhile?.(logPath);
    const finished = await running;
    // Once wrap and its server are gone, wrap's log is whole.
    const left = await processesLeft(home, PROCESS_SETTLE_MS);
    const events = readLog(logPath);
    assert.equal(finished.code, 0, `codex exec exited ${finished.code}:\n${finished.stderr}`);
    return { finished, events, requests: [...api.requests], left };
  } finally {
    await endProcessesOf(home);
    await api.close();
  }
}

/** Runs `turn` once before the tests of the enclosing group; the getter returns its record. */
function turnBefore(prompt: string, script: readonly ToolCall[],
  options: TurnOptions = {}): () => Turn {
  let recorded: Turn | undefined;
  before(async () => {
    recorded = await turn(prompt, script, options);
  }, TIMEOUT);
  return () => {
    if (recorded === undefined) throw new Error("The group's turn did not run");
    return recorded;
  };
}

/** agents-server.mjs behind a timer, in a new scratch folder: a server with a slow start. */
function lateServer(): string {
  const path = join(scratch("codex-late"), "late-server.mjs");
  const source = [
    `await new Promise((resolve) => setTimeout(resolve, ${LATE_START_MS}));`,
    `await import(${JSON.stringify(pathToFileURL(agentsServer).href)});`,
  ];
  writeFileSync(path, `${source.join("\n")}\n`);
  return path;
}

before(() => {
  cliPath("codex");
});

test("codex mcp add writes a global entry, and codex mcp list shows it without starting it",
  TIMEOUT, async () => {
    const home = scratch("codex-home");
    const project = scratch("codex-project");
    const logPath = join(project, "wire.log");
    try {
      prepareHome(home);
      const added = await register(home, project, logPath);
      assert.equal(added.code, 0, added.stderr);
      assert.equal(added.stdout, `Added global MCP server '${SERVER_NAME}'.\n`);
      const config = readFileSync(configPath(home), "utf8");
      assert.ok(config.includes(`\n[mcp_servers.${SERVER_NAME}]\n`), config);

      // README's words after `--` are the command and its arguments, kept as they were.
      const words = registration("codex", "register-wrap", { server: agentsServer, log: logPath });
      assert.deepEqual(words.slice(0, 5), ["mcp", "add", SERVER_NAME, "--", "node"]);
      const listed = await codex(["mcp", "list", "--json"], home, project);
      assert.equal(listed.code, 0, listed.stderr);
      const args = words.slice(5);
      const transport = { type: "stdio", command: "node", args, env: null, env_vars: [],
        cwd: null };
      assert.deepEqual(JSON.parse(listed.stdout), [{
        name: SERVER_NAME, enabled: true, disabled_reason: null, transport,
        startup_timeout_sec: null, tool_timeout_sec: null, auth_status: "unsupported",
      }]);

      // "enabled" is the entry's own switch: the server was never started to check it.
      const table = await codex(["mcp", "list"], home, project);
      const row = new RegExp(`^${SERVER_NAME}\\s+node\\s+.+\\s+enabled\\s+Unsupported\\s*$`, "m");
      assert.match(table.stdout, row);
      assert.equal(existsSync(logPath), false, "codex mcp list started the server");
    } finally {
      await endProcessesOf(home);
    }
  });

test("with no approval mode on the entry, codex exec refuses the call and the server never sees it",
  TIMEOUT, async () => {
    const settings = { required: true };
    const { events, requests } = await turn("Add 100 and 111 with the add tool", [ADD_CALL],
      { settings });
    const methods = ["initialize", "notifications/initialized", "tools/list"];
    assert.deepEqual(methodsSent(events), methods);
    const refused = "MCP tool call requires approval, but approval policy is never";
    assertResultText(readByModel(requests)[0], refused);
  });

describe("a codex exec turn in which the model adds 100 and 111", () => {
  const prompt = "Add 100 and 111 with the add tool";
  const recorded = turnBefore(prompt, [ADD_CALL], { settings: USABLE });

  test("Codex sends initialize 2025-06-18 first, with elicitation form and url and no sampling",
    () => {
      const { events } = recorded();
      const methods = ["initialize", "notifications/initialized", "tools/list", "tools/call"];
      assert.deepEqual(methodsSent(events), methods);
      const [initialize] = withMethod(events, "→", "initialize");
      assert.ok(initialize !== undefined, logText(events));
      const elicitation = { form: {}, url: {} };
      assert.deepEqual(paramsOf(initialize), {
        protocolVersion: "2025-06-18",
        capabilities: { experimental: { "codex/auth-change": {} }, elicitation },
        clientInfo: { name: "codex-mcp-client", title: "Codex", version: CODEX_VERSION },
      });
      // A progress token even on tools/list, which never reports progress.
      const [list] = withMethod(events, "→", "tools/list");
      assert.deepEqual(list?.params, { _meta: { progressToken: 0 } });
    });

  test("the model calls add in the mcp__json_rpc_study namespace and reads 211 after a wall time",
    () => {
      const { events, requests, finished } = recorded();
      const routes = requests.map((request) => `${request.method} ${request.path}`);
      assert.ok(routes.every((route) => route === "POST /v1/responses"), routes.join("\n"));
      const offered = namespaceTools(requests[0]?.body, NAMESPACE).sort();
      assert.deepEqual(offered, ["add", "count_lines", "deploy", "wait"]);
      const [call] = callsOf(events);
      assert.ok(call !== undefined, logText(events));
      assert.equal(paramsOf(call).name, "add");
      assert.deepEqual(paramsOf(call).arguments, ADD_CALL.arguments);
      // The model's call_id and Codex's ids for the turn travel to the server in _meta.
      const meta = metaOf(call) ?? {};
      const keys = ["callId", "itemId", "progressToken", "sessionId", "threadId", "windowId",
        "x-codex-turn-metadata"];
      assert.deepEqual(Object.keys(meta).sort(), keys);
      assert.equal(meta.callId, "call_0");
      assert.equal(typeof meta.progressToken, "number");
      const sum = { content: [{ type: "text", text: "100 + 111 = 211" }] };
      assert.deepEqual(resultFor(events, call.id, "←"), sum);
      const results = readByModel(requests);
      assert.equal(results.length, 1);
      assertResultText(results[0], "100 + 111 = 211");
      assert.match(finished.stdout, /^The tools say: [\s\S]*100 \+ 111 = 211$/m);
    });

  test("at the end Codex sends SIGTERM, closes the server's stdin, and leaves nothing running",
    () => {
      const { events, left } = recorded();
      assert.deepEqual(notes(events, /^received SIG/), ["received SIGTERM: sending SIGTERM"]);
      // Codex closes the server's stdin as it sends SIGTERM. wrap logs the close, unless the
      // server, ended by that SIGTERM, has made wrap exit first: then the log's last event is
      // that exit (seen once in a clean-clone CI run, 2026-12-06, after two runs with the close).
      const closed = notes(events, /^end of input$/);
      if (closed.length === 0) assert.match(events.at(-1)?.text ?? "", /^exit signal SIGTERM$/, logText(events));
      else assert.deepEqual(closed, ["end of input"]);
      assert.deepEqual(left, [], "processes left running with the turn's HOME");
      // Mostly wrap lives to log its server's end. Once in a CI run the log ended at the end
      // of input, with nothing left running: wrap was ended before the server's exit reached
      // it, as by a SIGKILL at Codex's own exit. Either way the server had its SIGTERM.
      const ending = /^(exit signal SIGTERM|end of input)$/;
      assert.match(events.at(-1)?.text ?? "", ending, logText(events));
    });
});

describe("a codex exec turn with a string for a number, a missing file and an unknown tool", () => {
  const missing = join(scratch("codex-empty"), "missing.txt");
  const script: ToolCall[] = [
    { namespace: NAMESPACE, name: "add", arguments: { a: "x", b: 1 } },
    { namespace: NAMESPACE, name: "count_lines", arguments: { path: missing } },
    { namespace: NAMESPACE, name: "nope", arguments: {} },
  ];
  const recorded = turnBefore("Try the tools with bad input", script, { settings: USABLE });
  const invalid = 'Invalid arguments: "a" must be a number';

  test("add with a string for a number is sent to the server, which answers isError", () => {
    const { events } = recorded();
    const calls = callsOf(events);
    assert.deepEqual(calls.map((call) => paramsOf(call).name), ["add", "count_lines"]);
    assert.deepEqual(paramsOf(calls[0] ?? {}).arguments, { a: "x", b: 1 });
    const refused = { content: [{ type: "text", text: invalid }], isError: true };
    assert.deepEqual(resultFor(events, calls[0]?.id, "←"), refused);
    assert.equal(resultFor(events, calls[1]?.id, "←").isError, true);
  });

  test("the model reads an isError result exactly as a success, with nothing saying error", () => {
    const [bad, notFound] = readByModel(recorded().requests);
    assertResultText(bad, invalid);
    assertResultText(notFound, `ENOENT: no such file or directory, open '${missing}'`);
    assert.doesNotMatch(JSON.stringify([bad?.output, notFound?.output]), /error/i);
  });

  test("a tool the server does not have is answered by Codex and never reaches the server", () => {
    const { events, requests } = recorded();
    assert.ok(callsOf(events).every((call) => paramsOf(call).name !== "nope"));
    // Codex's own words, a plain string: the namespace and the name run together.
    assert.equal(readByModel(requests)[2]?.output, `unsupported call: ${NAMESPACE}nope`);
  });
});

describe("a codex exec turn that waits 20 s under tool_timeout_sec = 3, then adds", () => {
  const settings = { ...USABLE, tool_timeout_sec: 3 };
  const recorded = turnBefore("Wait 20 seconds, then add", [WAIT_CALL, ADD_CALL], { settings });
  const reason = "MCP request cancelled by caller";

  test("the call carries a progressToken, and progress does not put off the cancellation", () => {
    const { events } = recorded();
    const [wait] = callsOf(events);
    assert.ok(wait !== undefined, logText(events));
    const token = metaOf(wait)?.progressToken;
    assert.equal(typeof token, "number");
    const progress = withMethod(events, "←", "notifications/progress").map(paramsOf);
    assert.ok(progress.length >= 1, `no progress:\n${logText(events)}`);
    assert.ok(progress.every((params) => params.progressToken === token));
    const progressAt = indexOfMethod(events, "←", "notifications/progress");
    assert.ok(progressAt < indexOfMethod(events, "→", "notifications/cancelled"));
  });

  test("the cancellation is notifications/cancelled with a reason and no _meta, never answered",
    () => {
      const { events } = recorded();
      const [wait] = callsOf(events);
      assert.ok(wait !== undefined, logText(events));
      const cancelled = { requestId: wait.id, reason };
      assert.deepEqual(withMethod(events, "→", "notifications/cancelled"), [
        { jsonrpc: "2.0", method: "notifications/cancelled", params: cancelled },
      ]);
      const response = responseTo(events, wait.id, "←");
      assert.equal(response, undefined, "the cancelled call got a response");
      const logged = `[server] cancelled request ${String(wait.id)}: ${JSON.stringify(reason)}`;
      assert.ok(stderrOf(events).includes(logged), stderrOf(events).join("\n"));
    });

  test("the server is kept: the same process answers the next call", () => {
    const { events } = recorded();
    assert.equal(notes(events, /^start pid /).length, 1);
    const [, add] = callsOf(events);
    const sum = { content: [{ type: "text", text: "100 + 111 = 211" }] };
    assert.deepEqual(resultFor(events, add?.id, "←"), sum);
  });

  test("the model reads that the call timed out after 3s, then the sum", () => {
    const [timedOut, sum] = readByModel(recorded().requests);
    assertResultText(timedOut, `${callFailed("wait")}timed out awaiting tools/call after 3s`);
    assertResultText(sum, "100 + 111 = 211");
  });
});

test("codex exec answers elicitation/create with decline, asking no one; the model reads no deploy",
  TIMEOUT, async () => {
    const turned = await turn("Deploy to production", [DEPLOY_CALL], { settings: USABLE });
    const { events, requests, finished } = turned;
    const [call] = callsOf(events);
    assert.ok(call !== undefined, logText(events));
    const question = { jsonrpc: "2.0", id: "elicitation-1", method: "elicitation/create" };
    const asked = withMethod(events, "←", "elicitation/create");
    assert.deepEqual(asked, [{ ...question, params: QUESTION }]);
    const answer = responseTo(events, "elicitation-1", "→")?.message;
    const decline = { jsonrpc: "2.0", id: "elicitation-1", result: { action: "decline" } };
    assert.deepEqual(answer, decline);
    const shown = finished.stdout + finished.stderr;
    assert.doesNotMatch(shown, /Deploy to production\?/, "the question was shown");
    const declined = "Not deployed: the user said no";
    const result = { content: [{ type: "text", text: declined }] };
    assert.deepEqual(resultFor(events, call.id, "←"), result);
    assertResultText(readByModel(requests)[0], declined);
  });

test("a server killed mid-call stays dead: both calls fail with Transport closed, tools offered",
  TIMEOUT, async () => {
    const meanwhile = (logPath: string) => killServerAtFirstProgress(logPath, "SIGKILL");
    const options = { settings: USABLE, meanwhile };
    const script = [WAIT_CALL, ADD_CALL];
    const { events, requests } = await turn("Wait 20 seconds, then add", script, options);
    assert.equal(notes(events, /^start pid /).length, 1, "the server was started again");
    assert.deepEqual(notes(events, /^exit /), ["exit signal SIGKILL"]);
    assert.equal(callsOf(events).length, 1);
    assert.ok(namespaceTools(requests.at(-1)?.body, NAMESPACE).includes("add"));
    const [wait, add] = readByModel(requests);
    assertResultText(wait, `${callFailed("wait")}Transport closed`);
    assertResultText(add, `${callFailed("add")}Transport closed`);
  });

describe("a server that takes 5 s to start", () => {
  const server = lateServer();
  const prompt = "Add 100 and 111 with the add tool";

  test("is left out of the turn, silently, when its entry does not say required = true",
    TIMEOUT, async () => {
      const settings = { default_tools_approval_mode: "approve" };
      const turned = await turn(prompt, [ADD_CALL], { settings, server });
      const { events, requests, finished, left } = turned;
      assert.ok(requests.length >= 1);
      const offered = requests.map((request) => namespaceTools(request.body, NAMESPACE));
      assert.ok(offered.every((tools) => tools.length === 0), JSON.stringify(offered));
      assert.doesNotMatch(finished.stderr, new RegExp(SERVER_NAME), "Codex said why");
      // Codex asked, moved on without the answer, and at its exit killed wrap outright
      // (SIGKILL, then SIGTERM to the process group): wrap logged nothing more.
      assert.deepEqual(methodsSent(events), ["initialize"]);
      assert.equal(events.at(-1)?.mark, "→", logText(events));
      assert.deepEqual(left, [], "processes left running with the turn's HOME");
    });

  test("is waited for when its entry says required = true", TIMEOUT, async () => {
    const { requests } = await turn(prompt, [ADD_CALL], { settings: USABLE, server });
    assert.ok(namespaceTools(requests[0]?.body, NAMESPACE).includes("add"));
    assertResultText(readByModel(requests)[0], "100 + 111 = 211");
  });
});
