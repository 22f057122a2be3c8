/**
 * What a user sees when a tool asks: Claude Code interactive, in a pseudo-terminal that
 * util-linux's `script` gives it, as a person runs it:
 *
 *     claude --mcp-config FILE --strict-mcp-config --allowedTools mcp__json-rpc-study__deploy
 *
 * with docs/tools.md's `deploy` tool (deploy-server.mjs) registered through dist/wrap.mjs. The test
 * types the prompt, the stand-in model (messages-api.ts) calls deploy for production, and
 * Claude Code draws the question as a form: "MCP server “json-rpc-study” requests your input",
 * the message, and a `confirm` checkbox above Accept and Decline. The test ticks the box with
 * Space, moves to Accept with Enter, and presses Enter again; the answer reaches the server as
 * `{"action":"accept","content":{"confirm":true}}`, the tool deploys (a dry run), and the model
 * reads so. In a legacy session (deploy-server.mjs --legacy) the answer is the response to the
 * server's elicitation/create; in 2026-07-28 it rides on the retried call, and the terminal
 * says "Fulfilling input required by 'tools/call' (round 1)".
 *
 * Three things make the run unattended: a `~/.claude.json` in the test's HOME that says the
 * onboarding is done, the stand-in's API key approved and the project folder trusted; the
 * prompt typed only once the server's tools are listed (a prompt on the command line goes to
 * the model before they are, and the model is offered no deploy tool); and each key typed only
 * once the screen shows that the form is ready for it.
 *
 * The sessions' logs go to the file CLAUDE_CODE_EXCERPT names, as for session.test.ts.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { waitUntil } from "../helpers.ts";
import {
  claudePath,
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
import { DEPLOY, DEPLOYED, QUESTION, SERVER_NAME, deployServer, paramsOf, resultFor, withMethod } from "./deploy.ts";
import { lastToolResults, startMessagesApi, type MessagesApi } from "./messages-api.ts";

/** Claude Code in a pseudo-terminal: what it has drawn, and how to type into it. */
interface Terminal {
  /** Everything drawn so far, as text: escape sequences out, cursor moves right as blanks. */
  screen: () => string;
  type: (keys: string) => void;
  /** Resolves when the terminal has closed. */
  closed: Promise<unknown>;
  kill: () => void;
}

/** What one session left behind. */
interface Session {
  events: LogEvent[];
  /** The tool results the model was given, one list per Messages API request that had any. */
  toolResults: string[][];
  screen: string;
}

/** The prompt the test types. */
const PROMPT = "Deploy to production with the deploy tool";

/** The size of the terminal: wide enough that no line of the form wraps. */
const COLUMNS = 120;
const ROWS = 40;

/** How long one step (Claude Code starting, the model's turn, a key's effect) may take. */
const STEP_MS = 60_000;

/**
 * How long to let a screen settle before the next key. Claude Code draws a change before its
 * key handlers see it: an Enter typed as soon as Accept is drawn with focus is lost.
 */
const SETTLE_MS = 500;

/** What the form says at its foot once it is drawn and takes keys. */
const FORM_READY = "Space to toggle";

/** A cursor move right by n columns (CSI n C), which a terminal shows as n blanks. */
const CURSOR_RIGHT = /\x1b\[(\d*)C/g;

/** A cursor move to a column (CSI n G): Claude Code draws the blanks between words so. */
const TO_COLUMN = /\x1b\[\d*G/g;

/** Any other CSI sequence (colours, cursor moves, erasing), and OSC sequences (the title). */
const ESCAPES = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\x1b[=>78]/g;

// ---- Pure functions ----

/** Terminal output as text to search: moves right become blanks (one for a move to a column,
 * which is enough to keep words apart), other escapes go. */
function plain(output: string): string {
  const blanks = output.replace(CURSOR_RIGHT, (_, count: string) => " ".repeat(Number(count || "1")));
  return blanks.replace(TO_COLUMN, " ").replace(ESCAPES, "");
}

/** The `~/.claude.json` of a user who finished onboarding, approved the key and trusts `project`. */
function userSettings(apiKey: string, project: string): string {
  // Claude Code files an approved key under its last 20 characters.
  const customApiKeyResponses = { approved: [apiKey.slice(-20)], rejected: [] };
  const projects = { [project]: { hasTrustDialogAccepted: true } };
  return JSON.stringify({ hasCompletedOnboarding: true, customApiKeyResponses, projects });
}

// ---- I/O ----

let api: MessagesApi | undefined;

before(async () => {
  requireClaude();
  api = await startMessagesApi(DEPLOY);
});

after(async () => {
  await api?.close();
});

/** Starts `claude args` in a pseudo-terminal of COLUMNS × ROWS, in `cwd`. */
function openTerminal(args: readonly string[], env: NodeJS.ProcessEnv, cwd: string): Terminal {
  const line = `stty cols ${COLUMNS} rows ${ROWS}; exec ${[claudePath, ...args].join(" ")}`;
  // -q: no banner; -f: flush at once; -c: the command; /dev/null: no typescript file.
  const child = spawn("script", ["-qfc", line, "/dev/null"], { cwd, env: { ...env, TERM: "xterm-256color" } });
  let output = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  return {
    screen: () => plain(output),
    type: (keys) => child.stdin.write(keys),
    closed: once(child, "close"),
    kill: () => child.kill("SIGKILL"),
  };
}

/** Resolves once the terminal has drawn `text` after its first `from` characters. */
async function drawn(terminal: Terminal, text: string, from = 0): Promise<number> {
  const found = () => terminal.screen().indexOf(text, from) !== -1;
  await waitUntil(found, `"${text}" on the screen`, STEP_MS);
  return terminal.screen().length;
}

/** Types the prompt once the server's tools are listed, then answers the form: tick, Accept. */
async function acceptTheForm(terminal: Terminal, logPath: string): Promise<void> {
  const logged = () => (existsSync(logPath) ? readFileSync(logPath, "utf8") : "");
  await waitUntil(() => logged().includes('"result":{"tools":['), "the server's tools listed", STEP_MS);
  // The input box is drawn once Claude Code is up; typed keys are lost before that.
  await drawn(terminal, "❯");
  await press(terminal, PROMPT);
  await drawn(terminal, PROMPT);
  await press(terminal, "\r");
  let seen = await drawn(terminal, FORM_READY);
  await press(terminal, " ");
  seen = await drawn(terminal, "☒", seen);
  // Enter on a field moves on to the Accept button; Enter there sends the answer.
  await press(terminal, "\r");
  await drawn(terminal, "❯ Accept", seen);
  await press(terminal, "\r");
}

/** Types `keys` once what is drawn has had SETTLE_MS to take effect. */
async function press(terminal: Terminal, keys: string): Promise<void> {
  await sleep(SETTLE_MS);
  terminal.type(keys);
}

/** Runs one interactive session against deploy-server.mjs with `serverArgs`, through wrap. */
async function session(label: string, serverArgs: readonly string[]): Promise<Session> {
  if (api === undefined) throw new Error("The stand-in runs only inside this file's tests");
  const stand = api;
  const home = scratch(`pty-${label}-home`);
  const project = scratch(`pty-${label}-project`);
  const logPath = join(project, "wire.log");
  const configPath = wrappedConfig(project, SERVER_NAME, logPath, ["--", process.execPath, deployServer, ...serverArgs]);
  const env = isolatedEnv(home, stand.url);
  writeFileSync(join(home, ".claude.json"), userSettings(env.ANTHROPIC_API_KEY ?? "", project));
  const from = stand.requests.length;
  const results = () => stand.requests.slice(from).map((request) => lastToolResults(request.body)).filter((found) => found.length > 0);
  const terminal = openTerminal(["--mcp-config", configPath, "--strict-mcp-config", "--allowedTools", DEPLOY.tool], env, project);
  try {
    await acceptTheForm(terminal, logPath);
    await waitUntil(() => results().length > 0, "the tool's result at the model", STEP_MS);
    await drawn(terminal, "The deploy tool says");
    // Ctrl+C twice is how a user leaves Claude Code: once clears the input, twice exits.
    terminal.type("\x03");
    await sleep(300);
    terminal.type("\x03");
    // An unref'd timer: it must not keep the test file alive once the terminal has closed.
    await Promise.race([terminal.closed, sleep(STEP_MS, undefined, { ref: false })]);
  } catch (error) {
    const log = existsSync(logPath) ? readFileSync(logPath, "utf8") : "(no log)";
    throw new Error(`${String(error)}\nThe screen:\n${terminal.screen().slice(-3000)}\nThe log:\n${log}`);
  } finally {
    terminal.kill();
  }
  const events = await settledLog(logPath);
  saveExcerpt(`elicitation in a terminal, ${label}`, logPath, [project, home]);
  return { events, toolResults: results(), screen: terminal.screen() };
}

test("in a terminal and a legacy session, a user who ticks the box and accepts has Claude Code answer elicitation/create with accept and confirm true, and the tool deploys", { timeout: 240_000 }, async () => {
  const { events, toolResults, screen } = await session("legacy", ["--legacy"]);
  assert.ok(screen.includes("requests your input"), "no form on the screen");
  const [call] = withMethod(events, "→", "tools/call");
  assert.ok(call !== undefined, `Claude Code sent no tools/call:\n${logText(events)}`);
  const asked = withMethod(events, "←", "elicitation/create");
  assert.deepEqual(asked, [{ jsonrpc: "2.0", id: "elicitation-1", method: "elicitation/create", params: QUESTION }]);
  const answer = responseTo(events, "elicitation-1", "→");
  const accepted = { action: "accept", content: { confirm: true } };
  assert.deepEqual(answer?.message, { jsonrpc: "2.0", id: "elicitation-1", result: accepted });
  assert.deepEqual(resultFor(events, call.id, "←"), { content: [{ type: "text", text: DEPLOYED }] });
  const stderr = events.filter((event) => event.mark === "!").map((event) => event.text);
  assert.ok(stderr.includes("[server] deploy: would now deploy the build to production"), stderr.join("\n"));
  assert.deepEqual(toolResults, [[DEPLOYED]], "the model got the tool's text back as the tool_result");
});

test("in a terminal and a 2026-07-28 session, a user who ticks the box and accepts has Claude Code retry the call with accept and confirm true, and the tool deploys", { timeout: 240_000 }, async () => {
  const { events, toolResults, screen } = await session("modern", []);
  assert.ok(screen.includes("Fulfilling input required by 'tools/call' (round 1)"), "no round on the screen");
  const [first, retry, extra] = withMethod(events, "→", "tools/call");
  assert.ok(first !== undefined && retry !== undefined, `Claude Code did not retry:\n${logText(events)}`);
  assert.equal(extra, undefined, "one retry answers one question");
  const asked = resultFor(events, first.id, "←");
  assert.equal(asked.resultType, "input_required");
  assert.deepEqual(asked.inputRequests, { "elicitation-1": { method: "elicitation/create", params: QUESTION } });
  assert.notEqual(retry.id, first.id);
  assert.equal(metaOf(retry)?.["claudecode/toolUseId"], DEPLOY.toolUseId);
  assert.deepEqual(paramsOf(retry).inputResponses, { "elicitation-1": { action: "accept", content: { confirm: true } } });
  assert.equal(paramsOf(retry).requestState, asked.requestState);
  const done = resultFor(events, retry.id, "←");
  assert.equal(done.resultType, "complete");
  assert.deepEqual(done.content, [{ type: "text", text: DEPLOYED }]);
  assert.deepEqual(toolResults, [[DEPLOYED]], "the model got the tool's text back as the tool_result");
});
