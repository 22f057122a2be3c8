/**
 * How the Copilot CLI tests run GitHub Copilot CLI (`copilot`, pinned in tests/agents/package.json)
 * offline, and the stand-in model it talks to.
 *
 * Copilot runs with a model of your own ("BYOK") and no GitHub account: `COPILOT_OFFLINE=true`
 * turns off sign-in, telemetry, the GitHub MCP server and auto-update, and
 * `COPILOT_PROVIDER_BASE_URL` with `COPILOT_PROVIDER_TYPE=openai` points it at an
 * OpenAI-compatible endpoint. It then speaks the Chat Completions API (its default
 * `COPILOT_PROVIDER_WIRE_API=completions`): `POST {base}/chat/completions` with `"stream": true`
 * for each model turn, read as server-sent events, `data: {…chat.completion.chunk…}` lines, the
 * last with a `finish_reason` (`tool_calls` or `stop`) and the usage, then `data: [DONE]`. A tool
 * call is a `tool_calls` delta, `{ id, type: "function", function: { name, arguments } }`, its
 * arguments a JSON string; its result comes back in the next request as a message
 * `{ role: "tool", tool_call_id, content }`. Copilot names an MCP tool `<server>-<tool>`
 * (`json-rpc-study-add`).
 *
 * The model's script is a list of calls: it makes call N when the conversation holds N tool
 * results (a call may wait a while before it is made), and once every call has its result it
 * answers with text quoting them all. A request that offers no tools gets "OK".
 *
 * `copilot mcp add` writes its entry to ~/.copilot/mcp-config.json (user scope), `--timeout`
 * included. The binary unpacks about 235 MB on its first run, under
 * `COPILOT_PKG_CACHE_HOME` when set: one folder per test file holds it, not each test's HOME.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { Finished } from "../helpers.ts";
import { isObject, type LogEvent } from "../claude-code/claude.ts";
import {
  SERVER_NAME, agentsServer, cliPath, endProcessesOf, isolatedEnv, processesLeft, readLog,
  registration, runCli, saveExcerpt, scratch,
} from "./agents.ts";
import { eventsReply, jsonReply, offeredTools, startStandIn, toolResults } from "./stand-in.ts";
import type { RecordedRequest, Reply, StandIn } from "./stand-in.ts";

/** One call the scripted model makes: the tool's name as Copilot offers it, and its arguments. */
export interface ToolCall {
  tool: string;
  arguments: { readonly [key: string]: unknown };
  /** How long the stand-in waits before it answers with this call. */
  delayMs?: number;
}

/** What the model "says" in one turn: text, or one call of a tool. */
type Answer =
  | { kind: "text"; text: string }
  | { kind: "call"; id: string; name: string; arguments: string };

/** The name Copilot gives one of our server's tools: `<server>-<tool>`. */
export function toolName(tool: string): string {
  return `${SERVER_NAME}-${tool}`;
}

// ---- Pure functions: the model's answer (stand-in.ts reads the request) ----

/** The script's next step for a request: call N once the conversation holds N results. */
function nextStep(body: unknown, script: readonly ToolCall[]): ToolCall | Answer {
  if (offeredTools(body).length === 0) return { kind: "text", text: "OK" };
  const results = toolResults(body);
  const step = script[results.length];
  if (step !== undefined) return step;
  return { kind: "text", text: `The tools said: ${results.join(" | ")}` };
}

/** A scripted call as the model's answer, under a fixed id so that every run reads the same. */
function callOf(body: unknown, step: ToolCall): Answer {
  const id = `call_json_rpc_study_${toolResults(body).length}`;
  return { kind: "call", id, name: step.tool, arguments: JSON.stringify(step.arguments) };
}

/** The assistant message (or its streamed delta) that carries an answer. */
function messageOf(answer: Answer, streamed: boolean) {
  if (answer.kind === "text") return { role: "assistant", content: answer.text };
  const named = { name: answer.name, arguments: answer.arguments };
  const call = { id: answer.id, type: "function", function: named };
  // A streamed tool call carries its place in the list (`index`); a whole message does not.
  const tool_calls = [streamed ? { index: 0, ...call } : call];
  return { role: "assistant", content: null, tool_calls };
}

/** The finish reason that goes with an answer. */
function finishReason(answer: Answer): string {
  return answer.kind === "call" ? "tool_calls" : "stop";
}

/** Small token counts, for a client that adds them up. */
const USAGE = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } as const;

/** The model a request names, echoed back as the API does. */
function modelOf(body: unknown): string {
  return isObject(body) && typeof body.model === "string" ? body.model : "stand-in";
}

/** The whole answer as one `chat.completion`, for a request without `"stream": true`. */
function completionOf(body: unknown, id: string, answer: Answer) {
  const message = messageOf(answer, false);
  const choice = { index: 0, message, finish_reason: finishReason(answer) };
  const model = modelOf(body);
  return { id, object: "chat.completion", created: 0, model, choices: [choice], usage: USAGE };
}

/** The answer as the event stream of `chat.completion.chunk`s that `"stream": true` asks for. */
function streamOf(body: unknown, id: string, answer: Answer): string {
  const chunk = { id, object: "chat.completion.chunk", created: 0, model: modelOf(body) };
  const said = { index: 0, delta: messageOf(answer, true), finish_reason: null };
  const done = { index: 0, delta: {}, finish_reason: finishReason(answer) };
  const events = [{ ...chunk, choices: [said] }, { ...chunk, choices: [done], usage: USAGE }];
  return events.map((event) => `data: ${JSON.stringify(event)}\n\n`).join("") + "data: [DONE]\n\n";
}

// ---- The route: POST /v1/chat/completions ----

/** The answer a model turn gets: the script's next step, after its delay when it is a call. */
async function answerTurn(body: unknown, script: readonly ToolCall[]): Promise<Answer> {
  const step = nextStep(body, script);
  if ("kind" in step) return step;
  await sleep(step.delayMs ?? 0);
  return callOf(body, step);
}

/** Answers one model turn, streamed when asked; stand-in.ts refuses any other route. */
async function respond(request: RecordedRequest, count: number,
  script: readonly ToolCall[]): Promise<Reply | undefined> {
  if (request.method !== "POST" || request.path !== "/v1/chat/completions") return undefined;
  const { body } = request;
  const id = `chatcmpl-stand-in-${count}`;
  const answer = await answerTurn(body, script);
  if (!(isObject(body) && body.stream === true)) return jsonReply(completionOf(body, id, answer));
  return eventsReply(streamOf(body, id, answer));
}

/** Starts the stand-in Chat Completions API on 127.0.0.1; its model follows `script`. */
export function startChatCompletionsApi(script: readonly ToolCall[]): Promise<StandIn> {
  return startStandIn((request, count) => respond(request, count, script), "/v1");
}

// ---- Running Copilot ----

/** The CLI's command name, as README's lines and tests/agents/node_modules/.bin spell it. */
export const COPILOT = "copilot";

/** The flags of every prompt: no question can wait on a user, and nothing extra starts. */
const PROMPT_FLAGS = [
  "--allow-all-tools",
  "--no-auto-update",
  "--disable-builtin-mcps",
  "--no-ask-user",
];

/** The folder the binary unpacks its package into, one per test file (made on first use). */
let packageCache: string | undefined;

/** The environment Copilot runs in: offline, its model the stand-in at `apiUrl`. */
export function copilotEnv(home: string, apiUrl: string): NodeJS.ProcessEnv {
  packageCache ??= scratch("copilot-package");
  return isolatedEnv(home, {
    COPILOT_OFFLINE: "true",
    COPILOT_AUTO_UPDATE: "false",
    COPILOT_PROVIDER_BASE_URL: apiUrl,
    COPILOT_PROVIDER_TYPE: "openai",
    COPILOT_MODEL: "stand-in",
    COPILOT_PKG_CACHE_HOME: packageCache,
  });
}

/** How one session is registered: the server's extra arguments, and `mcp add --timeout`. */
export interface Registration {
  serverArgs?: readonly string[];
  timeoutMs?: number;
}

/**
 * Registers agents-server.mjs through wrap with README's register-wrap line, run with the
 * pinned binary; `--timeout` goes before the name, and the server's arguments after its path.
 */
export async function register(home: string, project: string, apiUrl: string, logPath: string,
  { serverArgs = [], timeoutMs }: Registration = {}): Promise<Finished> {
  const line = registration(COPILOT, "register-wrap", { server: agentsServer, log: logPath });
  const [mcp, add, ...rest] = line;
  const timeout = timeoutMs === undefined ? [] : ["--timeout", String(timeoutMs)];
  const words = [mcp ?? "", add ?? "", ...timeout, ...rest, ...serverArgs];
  return runCli(cliPath(COPILOT), words, copilotEnv(home, apiUrl), project);
}

/** Runs `copilot` with `args` (an `mcp` command, say) in `project`. */
export function copilot(args: readonly string[], home: string, project: string,
  apiUrl: string): Promise<Finished> {
  return runCli(cliPath(COPILOT), args, copilotEnv(home, apiUrl), project);
}

/** Runs one non-interactive prompt, `copilot -p`, to its end. */
export function prompt(text: string, home: string, project: string,
  apiUrl: string): Promise<Finished> {
  return copilot(["-p", text, ...PROMPT_FLAGS], home, project, apiUrl);
}

/** The server's entry as `copilot mcp add` wrote it to ~/.copilot/mcp-config.json. */
export function configEntry(home: string): unknown {
  const path = join(home, ".copilot", "mcp-config.json");
  const config: unknown = JSON.parse(readFileSync(path, "utf8"));
  const servers = isObject(config) ? config.mcpServers : undefined;
  return isObject(servers) ? servers[SERVER_NAME] : undefined;
}

/** How long the processes of a session may take to end once Copilot has exited. */
const SETTLE_MS = 10_000;

/** Where COPILOT_EXCERPT records the sessions' logs for the docs. */
const EXCERPT = { variable: "COPILOT_EXCERPT", placeholder: "/tmp/copilot-test" };

/** Everything one prompt left behind. */
export interface Session {
  home: string;
  project: string;
  logPath: string;
  finished: Finished;
  /** wrap's log, read once every process of the session had ended. */
  events: LogEvent[];
  /** What Copilot sent the stand-in during the prompt. */
  requests: RecordedRequest[];
  /** The processes still running SETTLE_MS after Copilot exited, which were then ended. */
  left: number[];
}

/**
 * Registers the server, runs `copilot -p text` with `during` running beside it (to act on the
 * server while a call runs), and returns the session once all its processes have ended.
 */
export async function runSession(label: string, api: StandIn, text: string,
  registered: Registration = {}, during?: (logPath: string) => Promise<void>): Promise<Session> {
  const home = scratch(`copilot-${label}-home`);
  const project = scratch(`copilot-${label}-project`);
  const logPath = join(project, "wire.log");
  try {
    const added = await register(home, project, api.url, logPath, registered);
    if (added.code !== 0) throw new Error(`copilot mcp add exited ${added.code}:\n${added.stderr}`);
    const from = api.requests.length;
    const [finished] = await Promise.all([prompt(text, home, project, api.url), during?.(logPath)]);
    // Copilot ends wrap with SIGKILL, so wrap's log may never get its `# exit` line: the log
    // is complete once wrap is gone, not once it says so.
    const left = await processesLeft(home, SETTLE_MS);
    const requests = api.requests.slice(from);
    saveExcerpt(EXCERPT, label, logPath, [project, home]);
    return { home, project, logPath, finished, events: readLog(logPath), requests, left };
  } finally {
    await endProcessesOf(home);
  }
}
