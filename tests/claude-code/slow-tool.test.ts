/**
 * What Claude Code does with a tool that runs longer than it waits. The model (the stand-in on
 * loopback, see messages-api.ts) calls docs/tools.md's `wait` tool for 30 seconds, on a server that is
 * server.ts with that tool pasted in (wait-server.mjs), and Claude Code runs with
 * `MCP_TOOL_TIMEOUT=2000`:
 *
 *     claude -p "Wait 30 seconds with the wait tool" --mcp-config FILE --strict-mcp-config \
 *       --allowedTools mcp__json-rpc-study__wait --output-format json
 *
 * with the server registered through dist/wrap.mjs (`--log` in a temporary folder). wrap's log
 * and the requests the model received show the whole story: the call carries a progressToken,
 * the server reports progress with it, Claude Code gives up after two seconds with
 * notifications/cancelled, the server stops the handler and never answers, the model is told
 * the tool timed out, and Claude Code ends the server with SIGINT.
 *
 * To re-record docs/claude-code.md's excerpt, set CLAUDE_CODE_EXCERPT to a file, as for session.test.ts:
 *
 *     CLAUDE_CODE_EXCERPT=/tmp/excerpt.txt node --import tsx --test tests/claude-code/slow-tool.test.ts
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { root } from "../helpers.ts";
import {
  claude,
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
import { lastToolResults, offeredTools, startMessagesApi, type MessagesApi, type ToolScript } from "./messages-api.ts";

/** The prompt. The stand-in does not read it; it is there for the log and the reader. */
const PROMPT = "Wait 30 seconds with the wait tool";

/** The name Claude Code gives the server in its config, and so in the tool's name. */
const SERVER_NAME = "json-rpc-study";

/** The call the model makes: far longer than Claude Code waits. */
const WAIT: ToolScript = {
  tool: `mcp__${SERVER_NAME}__wait`,
  input: { seconds: 30 },
  toolUseId: "toolu_01JsonRpcStudyWait30",
};

/** How long Claude Code waits for a tool, in milliseconds. */
const TOOL_TIMEOUT_MS = 2000;

/** server.ts with docs/tools.md's wait tool, built in memory. */
const waitServer = join(root, "tests", "claude-code", "wait-server.mjs");

// ---- Pure functions: read what was recorded ----

/** The log as text, for a failure message. */
function texts(events: readonly LogEvent[]): string {
  return events.map((event) => `${event.mark} ${event.text}`).join("\n");
}

/** The messages with a method (requests and notifications) that went in direction `mark`. */
function withMethod(events: readonly LogEvent[], mark: string, method: string): { [key: string]: unknown }[] {
  return events.flatMap((event) => {
    const request = event.mark === mark ? requestOf(event) : undefined;
    return request?.method === method ? [request] : [];
  });
}

/** The params of a message, which every message checked here must have. */
function paramsOf(message: { [key: string]: unknown }): { [key: string]: unknown } {
  assert.ok(isObject(message.params), `no params: ${JSON.stringify(message)}`);
  return message.params;
}

/** The index of the first event that passes `check`, or -1. */
function indexWhere(events: readonly LogEvent[], check: (event: LogEvent) => boolean): number {
  return events.findIndex(check);
}

// ---- I/O: one turn ----

let api: MessagesApi | undefined;

before(async () => {
  requireClaude();
  api = await startMessagesApi(WAIT);
});

after(async () => {
  await api?.close();
});

test("Claude Code cancels a tool that runs past MCP_TOOL_TIMEOUT, tells the model it timed out, and ends the server with SIGINT", { timeout: 180_000 }, async () => {
  if (api === undefined) throw new Error("The stand-in runs only inside this file's tests");
  const home = scratch("slow-home");
  const project = scratch("slow-project");
  const logPath = join(project, "wire.log");
  const configPath = wrappedConfig(project, SERVER_NAME, logPath, ["--", process.execPath, waitServer]);
  const args = ["-p", PROMPT, "--mcp-config", configPath, "--strict-mcp-config", "--allowedTools", WAIT.tool, "--output-format", "json"];
  const env = { ...isolatedEnv(home, api.url), MCP_TOOL_TIMEOUT: String(TOOL_TIMEOUT_MS) };
  const finished = await claude(args, env, project);
  const events = await settledLog(logPath);
  saveExcerpt("slow tool", logPath, [project, home]);
  assert.equal(finished.code, 0, `claude exited ${finished.code}:\n${finished.stderr}`);
  const requests = api.requests;
  assert.ok(requests.some((request) => offeredTools(request.body).some((tool) => tool.name === WAIT.tool)), `no model request offered ${WAIT.tool}`);

  // The call, with the token its progress must carry.
  const [call] = withMethod(events, "→", "tools/call");
  assert.ok(call !== undefined, `Claude Code sent no tools/call:\n${texts(events)}`);
  assert.equal(paramsOf(call).name, "wait");
  assert.deepEqual(paramsOf(call).arguments, WAIT.input);
  const token = metaOf(call)?.progressToken;
  assert.ok(typeof token === "number" || typeof token === "string", `no progressToken on the call: ${JSON.stringify(call)}`);

  // Progress with that token, each value above the last (basic/utilities/progress).
  const progress = withMethod(events, "←", "notifications/progress").map(paramsOf);
  assert.ok(progress.length >= 1, `no progress in the log:\n${texts(events)}`);
  for (const [index, params] of progress.entries()) {
    assert.equal(params.progressToken, token);
    assert.equal(params.total, 30);
    assert.equal(params.progress, index + 1, "progress rises a second at a time");
  }

  // The timeout: notifications/cancelled for the call, with a reason, in the call's era.
  const [cancelled] = withMethod(events, "→", "notifications/cancelled");
  assert.ok(cancelled !== undefined, `Claude Code sent no notifications/cancelled:\n${texts(events)}`);
  const { requestId, reason } = paramsOf(cancelled);
  assert.equal(requestId, call.id);
  assert.equal(reason, "SdkError: Request timed out");
  assert.equal(metaOf(cancelled)?.["io.modelcontextprotocol/protocolVersion"], "2026-07-28");

  // The server stops the handler and never answers the call (basic/utilities/cancellation).
  assert.equal(responseTo(events, call.id, "←"), undefined, "the cancelled call got a response");
  const stderr = events.filter((event) => event.mark === "!").map((event) => event.text);
  assert.ok(stderr.includes(`[server] cancelled request ${String(call.id)}: ${JSON.stringify(reason)}`), `no cancellation in the server's log:\n${stderr.join("\n")}`);
  assert.ok(stderr.includes('[server] tool "wait" stopped: The operation was aborted'), `the handler did not stop:\n${stderr.join("\n")}`);

  // What the model was told, in place of a result.
  const results = requests.map((request) => lastToolResults(request.body)).filter((found) => found.length > 0);
  const told = `MCP server "${SERVER_NAME}" tool "wait" timed out after ${TOOL_TIMEOUT_MS / 1000}s`;
  assert.deepEqual(results, [[told]], "the model got the timeout as the tool_result");

  // Then Claude Code ends the server with SIGINT, after the cancellation.
  const cancelledAt = indexWhere(events, (event) => event.mark === "→" && requestOf(event)?.method === "notifications/cancelled");
  const sigintAt = indexWhere(events, (event) => event.mark === "#" && /SIGINT/.test(event.text));
  assert.ok(sigintAt > cancelledAt, `no SIGINT after the cancellation:\n${texts(events)}`);
});
