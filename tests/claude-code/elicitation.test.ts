/**
 * What Claude Code does when a tool asks the user, in print mode, where there is no one to ask.
 * The model (the stand-in on loopback, see messages-api.ts) calls docs/tools.md's `deploy` tool for
 * production, on a server that is server.ts with that tool pasted in (deploy-server.mjs):
 *
 *     claude -p "Deploy to production with the deploy tool" --mcp-config FILE \
 *       --strict-mcp-config --allowedTools mcp__json-rpc-study__deploy --output-format json
 *
 * with the server registered through dist/wrap.mjs (`--log` in a temporary folder), once in each
 * era. Claude Code declares elicitation (`{"form":{},"url":{}}`) but `-p` cannot show a form,
 * so it answers every question `{"action":"cancel"}`, as if the user had closed it:
 *
 * - legacy (deploy-server.mjs --legacy, which refuses the server/discover probe, so Claude Code
 *   falls back to initialize): the server sends `elicitation/create` under an id of its own and
 *   Claude Code responds to that id;
 * - 2026-07-28: the call is answered `input_required`, and Claude Code sends the call again
 *   under a new id, with `inputResponses` and the `requestState` it was given.
 *
 * Either way the tool answers that it did not deploy, and that text reaches the model.
 *
 * To re-record docs/claude-code.md's excerpts, set CLAUDE_CODE_EXCERPT to a file, as for session.test.ts:
 *
 *     CLAUDE_CODE_EXCERPT=/tmp/excerpt.txt node --import tsx --test tests/claude-code/elicitation.test.ts
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  claude,
  isObject,
  isolatedEnv,
  logText,
  metaOf,
  requireClaude,
  responseTo,
  saveExcerpt,
  scratch,
  settledLog,
  wrappedConfig,
  type LogEvent,
} from "./claude.ts";
import {
  CANCELLED,
  DEPLOY,
  QUESTION,
  SERVER_NAME,
  deployServer,
  methodsSent,
  paramsOf,
  resultFor,
  withMethod,
} from "./deploy.ts";
import { lastToolResults, offeredTools, startMessagesApi, type MessagesApi } from "./messages-api.ts";

/** Everything one `claude -p` run left behind. */
interface Turn {
  /** wrap's log of the session, read into events. */
  events: LogEvent[];
  /** The tool results the model was given, one list per Messages API request that had any. */
  toolResults: string[][];
}

/** The prompt. The stand-in does not read it; it is there for the log and the reader. */
const PROMPT = "Deploy to production with the deploy tool";

/** The elicitation capability Claude Code declares, in both eras. */
const ELICITATION = { form: {}, url: {} };

// ---- I/O: one turn ----

let api: MessagesApi | undefined;

before(async () => {
  requireClaude();
  api = await startMessagesApi(DEPLOY);
});

after(async () => {
  await api?.close();
});

/** Runs `claude -p PROMPT` against deploy-server.mjs with `serverArgs`, through wrap. */
async function turn(label: string, serverArgs: readonly string[]): Promise<Turn> {
  if (api === undefined) throw new Error("The stand-in runs only inside this file's tests");
  const home = scratch(`${label}-home`);
  const project = scratch(`${label}-project`);
  const logPath = join(project, "wire.log");
  const configPath = wrappedConfig(project, SERVER_NAME, logPath, ["--", process.execPath, deployServer, ...serverArgs]);
  const from = api.requests.length;
  const args = ["-p", PROMPT, "--mcp-config", configPath, "--strict-mcp-config", "--allowedTools", DEPLOY.tool, "--output-format", "json"];
  const finished = await claude(args, isolatedEnv(home, api.url), project);
  const events = await settledLog(logPath);
  saveExcerpt(`elicitation, ${label}`, logPath, [project, home]);
  assert.equal(finished.code, 0, `claude exited ${finished.code}:\n${finished.stderr}`);
  const requests = api.requests.slice(from);
  const offered = requests.some((request) => offeredTools(request.body).some((tool) => tool.name === DEPLOY.tool));
  assert.ok(offered, `no model request offered ${DEPLOY.tool}`);
  const toolResults = requests.map((request) => lastToolResults(request.body)).filter((found) => found.length > 0);
  return { events, toolResults };
}

/** The tools/call requests Claude Code sent, each checked to be the model's call to deploy. */
function callsOf(events: readonly LogEvent[]): { [key: string]: unknown }[] {
  const calls = withMethod(events, "→", "tools/call");
  for (const call of calls) {
    assert.equal(paramsOf(call).name, "deploy");
    assert.deepEqual(paramsOf(call).arguments, DEPLOY.input);
    assert.equal(metaOf(call)?.["claudecode/toolUseId"], DEPLOY.toolUseId);
  }
  return calls;
}

/** The index in the log of the first event that carries `id` in direction `mark`. */
function indexOf(events: readonly LogEvent[], mark: string, id: unknown): number {
  return events.findIndex((event) => event.mark === mark && isObject(event.message) && event.message.id === id);
}

test("in print mode and a legacy session, Claude Code answers the server's elicitation/create with cancel, and the model reads that nothing was deployed", { timeout: 180_000 }, async () => {
  const { events, toolResults } = await turn("legacy", ["--legacy"]);
  assert.deepEqual(methodsSent(events), ["server/discover", "initialize", "notifications/initialized", "tools/list", "tools/call"]);
  const [initialize] = withMethod(events, "→", "initialize");
  assert.ok(initialize !== undefined);
  const capabilities = paramsOf(initialize).capabilities;
  assert.ok(isObject(capabilities));
  assert.deepEqual(capabilities.elicitation, ELICITATION);

  // The server asks, under an id of its own, while the call waits.
  const [call] = callsOf(events);
  assert.ok(call !== undefined, `Claude Code sent no tools/call:\n${logText(events)}`);
  const asked = withMethod(events, "←", "elicitation/create");
  assert.deepEqual(asked, [{ jsonrpc: "2.0", id: "elicitation-1", method: "elicitation/create", params: QUESTION }]);

  // Claude Code responds to that id, and wrap pairs the two (a round-trip time on the line).
  const answer = responseTo(events, "elicitation-1", "→");
  assert.ok(answer !== undefined, `Claude Code did not answer elicitation-1:\n${logText(events)}`);
  assert.deepEqual(answer.message, { jsonrpc: "2.0", id: "elicitation-1", result: { action: "cancel" } });
  assert.equal(typeof answer.roundTripMs, "number", `wrap did not pair the answer: ${answer.text}`);

  // Then, and only then, the call is answered, with what the tool says to a cancel.
  assert.ok(indexOf(events, "←", "elicitation-1") < indexOf(events, "→", "elicitation-1"));
  assert.ok(indexOf(events, "→", "elicitation-1") < indexOf(events, "←", call.id));
  assert.deepEqual(resultFor(events, call.id, "←"), { content: [{ type: "text", text: CANCELLED }] });
  assert.deepEqual(toolResults, [[CANCELLED]], "the model got the tool's text back as the tool_result");
});

test("in print mode and a 2026-07-28 session, Claude Code retries an input_required call under a new id with a cancel and the same requestState, and the model reads that nothing was deployed", { timeout: 180_000 }, async () => {
  const { events, toolResults } = await turn("modern", []);
  assert.deepEqual(methodsSent(events), ["server/discover", "tools/list", "tools/call", "tools/call"]);
  const [first, retry] = callsOf(events);
  assert.ok(first !== undefined && retry !== undefined, `Claude Code did not retry:\n${logText(events)}`);
  const capabilities = metaOf(first)?.["io.modelcontextprotocol/clientCapabilities"];
  assert.ok(isObject(capabilities));
  assert.deepEqual(capabilities.elicitation, ELICITATION);

  // No request from the server in this era: the question comes back as the call's result.
  assert.deepEqual(withMethod(events, "←", "elicitation/create"), []);
  const asked = resultFor(events, first.id, "←");
  assert.equal(asked.resultType, "input_required");
  assert.deepEqual(asked.inputRequests, { "elicitation-1": { method: "elicitation/create", params: QUESTION } });
  const state = asked.requestState;
  assert.ok(typeof state === "string" && state !== "", `no requestState: ${JSON.stringify(asked)}`);

  // The retry: a new id, the answer under the question's key, the state as it was sent.
  assert.notEqual(retry.id, first.id);
  assert.deepEqual(paramsOf(retry).inputResponses, { "elicitation-1": { action: "cancel" } });
  assert.equal(paramsOf(retry).requestState, state);
  const retryLine = events.find((event) => event.message === retry);
  assert.ok(retryLine?.text.includes(`"requestState":${JSON.stringify(state)}`), "the requestState was re-encoded");

  const done = resultFor(events, retry.id, "←");
  assert.equal(done.resultType, "complete");
  assert.deepEqual(done.content, [{ type: "text", text: CANCELLED }]);
  assert.deepEqual(toolResults, [[CANCELLED]], "the model got the tool's text back as the tool_result");
});
