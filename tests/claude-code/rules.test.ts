/**
 * The rules of `wrap check`, measured against Claude Code (pinned in tests/claude-code/
 * package.json), as tests/agents/rules.test.ts measures them against the other four CLIs: each
 * test is one cell of docs/clients.md's table "What each CLI does with a defect". The server is
 * tests/fixtures/defects-server.mjs, registered through wrap with `claude mcp add`, and each
 * session is one `claude -p` turn whose model (messages-api.ts, on loopback) calls the script's
 * tools:
 *
 *     claude mcp add json-rpc-study -- node /absolute/path/dist/wrap.mjs --log LOG \
 *       node /absolute/path/tests/fixtures/defects-server.mjs DEFECT...
 *     claude -p "Use the tools of the MCP server" --allowedTools TOOLS --output-format json
 *
 * Run it in a loopback-only network namespace, as .ci/run does (about a minute):
 *
 *     npm ci --prefix tests/claude-code
 *     unshare -n sh -c 'ip link set lo up && exec node --import tsx --test \
 *       --test-timeout=600000 tests/claude-code/rules.test.ts'
 */
import { before, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { wrapPath } from "../helpers.ts";
import { SERVER_NAME, endProcessesOf, processesLeft, readLog } from "../agents/agents.ts";
import {
  ROWS, assertLoopbackOnly, defectsServer, type Observed, type OfferedTool,
} from "../agents/rules.ts";
import { claude, isObject, isolatedEnv, requireClaude, scratch } from "./claude.ts";
import { methodsSent, paramsOf, withMethod } from "./deploy.ts";
import { offeredTools, startMessagesApi, type RecordedRequest, type ToolScript } from "./messages-api.ts";

/** How Claude Code names a tool of the server to the model. */
const PREFIX = `mcp__${SERVER_NAME}__`;

/** The first 66 characters of the two 70-character names. */
const LONG = "count_every_line_of_every_file_in_the_folder_and_in_each_subfolder";

/** A call the model makes: a tool by the server's name, with its arguments. */
function call(name: string, input: { [key: string]: unknown }): ToolScript {
  return { tool: PREFIX + name, input, toolUseId: `toolu_01Rules${name.replace(/\W/g, "")}` };
}

/** The article's call, to see that a server Claude Code kept still answers. */
const ADD = call("add", { a: 100, b: 111 });

/** The tool_result blocks the model was sent, as JSON, in the order of the calls: each comes
 * in the last user message of the request that follows its call. */
function toolResultsOf(requests: readonly RecordedRequest[]): string[] {
  const results = new Map<unknown, string>();
  for (const { body } of requests) {
    const messages = isObject(body) && Array.isArray(body.messages) ? body.messages : [];
    const users = messages.filter((message: unknown) => isObject(message) && message.role === "user");
    const last: unknown = users.at(-1);
    const content: unknown[] = isObject(last) && Array.isArray(last.content) ? last.content : [];
    for (const block of content.filter(isObject)) {
      if (block.type === "tool_result") results.set(block.tool_use_id, JSON.stringify(block));
    }
  }
  return [...results.values()];
}

/** Room for a session on a loaded 2-core machine. */
const TIMEOUT = { timeout: 180_000 };

/**
 * Registers the fixture with `defects` and runs one `claude -p` turn whose model makes `calls`,
 * with `extraEnv` in Claude Code's environment; everything it started is ended before it returns.
 */
async function session(defects: readonly string[], calls: readonly ToolScript[] = [],
  extraEnv: NodeJS.ProcessEnv = {}): Promise<Observed> {
  requireClaude();
  const [first = ADD, ...next] = calls;
  const api = await startMessagesApi(first, next);
  const home = scratch("rules-home");
  const project = scratch("rules-project");
  const logPath = join(project, "wire.log");
  const env = { ...isolatedEnv(home, api.url), ...extraEnv };
  try {
    const server = ["node", wrapPath, "--log", logPath, "node", defectsServer, ...defects];
    const added = await claude(["mcp", "add", SERVER_NAME, "--", ...server], env, project);
    assert.equal(added.code, 0, added.stderr);
    const allowed = calls.map((each) => each.tool).join(",") || ADD.tool;
    const args = ["-p", "Use the tools of the MCP server", "--allowedTools", allowed,
      "--output-format", "json"];
    const finished = await claude(args, env, project);
    await processesLeft(home, 15_000);
    const offered = (api.requests[0] === undefined ? [] : offeredTools(api.requests[0].body))
      .filter((tool) => tool.name.startsWith(PREFIX))
      .map((tool): OfferedTool => ({ name: tool.name, description: tool.description ?? "",
        schema: tool.input_schema }));
    return { offered, told: toolResultsOf(api.requests), events: readLog(logPath), finished };
  } finally {
    await endProcessesOf(home);
    await api.close();
  }
}

/** Each session, run once, when a test first needs it. */
const started = new Map<string, Promise<Observed>>();
function once(name: string, run: () => Promise<Observed>): Promise<Observed> {
  const running = started.get(name) ?? run();
  started.set(name, running);
  return running;
}
const tools = () => once("tools", () => session(["dotted-name", "spaced-name", "long-names",
  "formats", "long-description", "mixed-result", "structured-only"],
  [call("mixed", {}), call("structured", {})]));
const untyped = () => once("untyped", () => session(["untyped-schema", "discover-refused"]));
const slow = () => once("slow", () => session(["slow-1500", "noise-before"], [ADD]));
const late = () => once("late", () => session(["slow-5000"], [ADD]));
const waited = () => once("waited", () => session(["slow-5000"], [ADD],
  { MCP_CONNECTION_NONBLOCKING: "false" }));
const noise = () => once("noise", () => session(["noise-after-list", "discover-empty"], [ADD]));

/** The tool offered under the server's `name`; fails when there is none. */
function offeredAs(observed: Observed, name: string): OfferedTool {
  const tool = observed.offered.find((each) => each.name === PREFIX + name);
  assert.ok(tool !== undefined, observed.offered.map((each) => each.name).join("\n"));
  return tool;
}

/** The protocolVersion of the session's initialize, or undefined when it sent none. */
function initializedIn(observed: Observed): unknown {
  const [initialize] = withMethod(observed.events, "→", "initialize");
  return initialize === undefined ? undefined : paramsOf(initialize).protocolVersion;
}

before(() => assertLoopbackOnly());

/** Whether a line of the server's stdout that is no message made it into the log. */
function strayLineLogged(observed: Observed): boolean {
  return observed.events.some((event) => event.text.startsWith("debug: "));
}

test(`${ROWS.slow}: waits, in 2026-07-28`, TIMEOUT, async () => {
  const waitedFor = await slow();
  offeredAs(waitedFor, "add");
  assert.deepEqual(methodsSent(waitedFor.events).slice(0, 2), ["server/discover", "tools/list"]);
});

test(`${ROWS.late}: claude -p runs without its tools`, TIMEOUT, async () => {
  const without = await late();
  assert.deepEqual(without.offered, []);
  assert.deepEqual(methodsSent(without.events), ["server/discover"]);
});

test(`${ROWS.late}, with MCP_CONNECTION_NONBLOCKING=false: waits, but gives server/discover up `
  + "at about 2.8 s and speaks 2025-11-25", TIMEOUT, async () => {
  const fellBack = await waited();
  offeredAs(fellBack, "add");
  assert.deepEqual(methodsSent(fellBack.events).slice(0, 2), ["server/discover", "initialize"]);
  assert.equal(initializedIn(fellBack), "2025-11-25");
  // The probe's answer came after the fallback had begun.
  const texts = fellBack.events.map((event) => event.text);
  const initialize = texts.findIndex((text) => text.includes('"method":"initialize"'));
  const probeAnswered = texts.findIndex((text) => text.includes('"supportedVersions"'));
  assert.ok(initialize < probeAnswered, texts.join("\n"));
});

test(`${ROWS.noiseBefore}: ignored`, TIMEOUT, async () => {
  const waitedFor = await slow();
  assert.ok(strayLineLogged(waitedFor));
  offeredAs(waitedFor, "add");
});

test(`${ROWS.noiseAfter}: ignored`, TIMEOUT, async () => {
  const kept = await noise();
  assert.ok(strayLineLogged(kept));
  assert.match(kept.told[0] ?? "", /100 \+ 111 = 211/);
});

test(`${ROWS.names}: both mcp__…__my_tool, so one is lost`, TIMEOUT, async () => {
  const names = (await tools()).offered.map((tool) => tool.name).filter((name) =>
    name.includes("my"));
  assert.deepEqual(names, [`${PREFIX}my_tool`]);
});

test(`${ROWS.long}: sent at full length (91 with mcp__${SERVER_NAME}__)`, TIMEOUT, async () => {
  const long = (await tools()).offered.filter((tool) => tool.name.includes(LONG));
  assert.deepEqual(long.map((tool) => tool.name.length), [91, 91]);
});

test(`${ROWS.untyped}: whole server dropped, silently`, TIMEOUT, async () => {
  const dropped = await untyped();
  assert.deepEqual(dropped.offered, []);
  assert.ok(methodsSent(dropped.events).includes("tools/list"));
  assert.equal(dropped.finished.code, 0);
});

test(`${ROWS.keywords}: kept`, TIMEOUT, async () => {
  const schema = offeredAs(await tools(), "formats").schema;
  assert.ok(JSON.stringify(schema).includes('"format":"date"'));
  assert.ok(JSON.stringify(schema).includes('"additionalProperties":false'));
});

test(`${ROWS.description}: cut to 4,096, then … [truncated]`, TIMEOUT, async () => {
  const { description } = offeredAs(await tools(), "long_description");
  assert.equal(description.length, 4_096 + "… [truncated]".length);
  assert.ok(description.endsWith("… [truncated]"));
});

test(`${ROWS.discover}: falls back to initialize 2025-11-25`, TIMEOUT, async () => {
  for (const fellBack of [await untyped(), await noise()]) {
    assert.deepEqual(methodsSent(fellBack.events).slice(0, 2), ["server/discover", "initialize"]);
    assert.equal(initializedIn(fellBack), "2025-11-25");
  }
});

test(`${ROWS.content}: the call fails`, TIMEOUT, async () => {
  const [mixed] = (await tools()).told;
  assert.match(mixed ?? "", /returned a malformed result that failed schema validation/);
  assert.match(mixed ?? "", /"is_error":true/);
  assert.ok(!mixed?.includes("mixed: the text part"));
});

test(`${ROWS.structured}: the call fails`, TIMEOUT, async () => {
  const structured = (await tools()).told[1];
  assert.match(structured ?? "", /malformed result[\s\S]*expected array, received undefined/);
  assert.match(structured ?? "", /"is_error":true/);
});
