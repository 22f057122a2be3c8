/**
 * What Claude Code does with a slow tool, for real: README's `wait` tool ("Add your own tool",
 * a long tool that reports progress each second and stops when its signal aborts) is pasted
 * into a copy of server.ts, and the model stand-in asks for a 30-second wait. Claude Code runs
 * with `MCP_TOOL_TIMEOUT=2000`: it gives up after two seconds, whatever progress says, sends
 * `notifications/cancelled`, tells the model the tool timed out, and ends the server.
 *
 *     claude -p "wait 30 seconds" --mcp-config FILE --strict-mcp-config \
 *       --allowedTools mcp__json-rpc-study__wait --output-format json
 *
 * with the server registered through dist/wrap.mjs, so that the test reads the wire. To
 * re-record README's excerpt, set CLAUDE_CODE_EXCERPT to a file, as in session.test.ts.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { appendFileSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bundle } from "../../build.mjs";
import { root, tempFolder, wrapPath } from "../helpers.ts";
import {
  claude,
  forReadme,
  isObject,
  isolatedEnv,
  metaOf,
  requestOf,
  requireClaude,
  responseTo,
  scratch,
  settledLog,
  type LogEvent,
} from "./claude.ts";
import { lastToolResults, startMessagesApi, type MessagesApi } from "./messages-api.ts";

/** The name Claude Code gives the server, and so the tool's. */
const SERVER_NAME = "json-rpc-study";

/** The wait tool as the model sees it. */
const WAIT_TOOL = `mcp__${SERVER_NAME}__wait`;

/** Claude Code's tool timeout for this run, in milliseconds. */
const TOOL_TIMEOUT_MS = "2000";

/** A fixed tool_use id, so that the recorded session is the same on every run. */
const WAIT_USE_ID = "toolu_01JsonRpcStudyWait30";

/** The section of README.md with the tool, and the info strings of its blocks. */
const SECTION = "## Add your own tool";

let api: MessagesApi | undefined;
let server = "";

/** The body of the first fenced block with this info string in a text. */
function block(text: string, info: string): string {
  const found = new RegExp("\\n```" + info + "\\n([\\s\\S]*?)\\n```\\n").exec(text);
  assert.ok(found?.[1], `no \`\`\`${info} block in README.md`);
  return found[1];
}

/** Builds server.ts with README's imports and wait tool pasted in, as the section says. */
async function buildWaitServer(): Promise<string> {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf(`\n${SECTION}\n`));
  let source = readFileSync(join(root, "server.ts"), "utf8");
  const close = source.indexOf("\n];\n", source.indexOf("const TOOLS: Tool[] = ["));
  source = `${source.slice(0, close)}\n${block(section, "ts wait")}${source.slice(close)}`;
  const ownImport = 'import process from "node:process";\n';
  source = source.replace(ownImport, `${ownImport}${block(section, "ts imports")}\n`);
  const folder = tempFolder("claude-code-wait-server-");
  writeFileSync(join(folder, "server.ts"), source);
  symlinkSync(join(root, "node_modules"), join(folder, "node_modules"));
  const built = join(folder, "server.mjs");
  assert.deepEqual(await bundle(join(folder, "server.ts"), built), []);
  return built;
}

before(async () => {
  requireClaude();
  server = await buildWaitServer();
  api = await startMessagesApi({ name: WAIT_TOOL, input: { seconds: 30 }, id: WAIT_USE_ID });
});

after(async () => {
  await api?.close();
});

/** The log as text, for a failure message. */
function texts(events: readonly LogEvent[]): string {
  return events.map((event) => `${event.mark} ${event.text}`).join("\n");
}

/** The messages of one direction whose method is `method`. */
function sentWith(events: readonly LogEvent[], mark: string, method: string) {
  return events.flatMap((event) => {
    const message = event.mark === mark ? requestOf(event) : undefined;
    return message?.method === method ? [message] : [];
  });
}

test("Claude Code cancels a tool that outlives MCP_TOOL_TIMEOUT, and the server stops it without answering", { timeout: 180_000 }, async () => {
  if (api === undefined) throw new Error("the stand-in runs only inside this file's tests");
  const home = scratch("wait-home");
  const project = scratch("wait-project");
  const logPath = join(project, "wire.log");
  const configPath = join(project, "mcp.json");
  const entry = { type: "stdio", command: process.execPath, args: [wrapPath, "--log", logPath, "--", process.execPath, server] };
  writeFileSync(configPath, JSON.stringify({ mcpServers: { [SERVER_NAME]: entry } }));
  const from = api.requests.length;
  const args = ["-p", "wait 30 seconds", "--mcp-config", configPath, "--strict-mcp-config", "--allowedTools", WAIT_TOOL, "--output-format", "json"];
  const env = { ...isolatedEnv(home, api.url), MCP_TOOL_TIMEOUT: TOOL_TIMEOUT_MS };
  const finished = await claude(args, env, project);
  const events = await settledLog(logPath);
  const excerptFile = process.env.CLAUDE_CODE_EXCERPT;
  if (excerptFile !== undefined) {
    appendFileSync(excerptFile, `---- slow tool ----\n${forReadme(readFileSync(logPath, "utf8"), [project, home])}\n`);
  }
  assert.equal(finished.code, 0, `claude exited ${finished.code}:\n${finished.stderr}`);

  // The call carries a progressToken, and the server reports progress with it.
  const [call] = sentWith(events, "→", "tools/call");
  assert.ok(call !== undefined, `Claude Code sent no tools/call:\n${texts(events)}`);
  const token = metaOf(call)?.progressToken;
  assert.ok(typeof token === "string" || typeof token === "number", "the call has a progressToken");
  const progress = sentWith(events, "←", "notifications/progress").map((message) => message.params);
  assert.ok(progress.length >= 1, `no progress went to Claude Code:\n${texts(events)}`);
  for (const params of progress) assert.ok(isObject(params) && params.progressToken === token);

  // At the timeout, Claude Code cancels the call by its id, and the server never answers it.
  const [cancel] = sentWith(events, "→", "notifications/cancelled");
  assert.ok(cancel !== undefined && isObject(cancel.params), `no notifications/cancelled:\n${texts(events)}`);
  assert.equal(cancel.params.requestId, call.id);
  assert.equal(typeof cancel.params.reason, "string");
  assert.equal(responseTo(events, call.id, "←"), undefined, "the cancelled call got no response");

  // The server's stderr: the cancellation and its reason, then the handler's signal aborting sleep().
  const stderr = events.filter((event) => event.mark === "!").map((event) => event.text).join("\n");
  assert.match(stderr, new RegExp(`cancelled request ${String(call.id)}: "${String(cancel.params.reason)}"`));
  assert.match(stderr, /tool "wait" stopped: The operation was aborted/);

  // The model is told the tool timed out, and Claude Code ends the server with SIGINT.
  const told = api.requests.slice(from).flatMap((request) => lastToolResults(request.body));
  assert.equal(told.length, 1, `the model got ${told.length} tool results`);
  assert.match(told[0] ?? "", /timed out/);
  assert.ok(events.some((event) => event.mark === "#" && /SIGINT/.test(event.text)), `no SIGINT:\n${texts(events)}`);
});
