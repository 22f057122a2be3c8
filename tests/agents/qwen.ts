/**
 * How the Qwen Code tests run Qwen Code (`qwen`, pinned in tests/agents/package.json) offline,
 * and the stand-in model it talks to.
 *
 * The stand-in speaks the OpenAI Chat Completions API on 127.0.0.1. Qwen Code, run with
 * `--auth-type openai`, `OPENAI_BASE_URL` at the stand-in and a dummy `OPENAI_API_KEY`, sends
 * `POST /v1/chat/completions` with `"stream": true` for each model turn and reads the answer as
 * server-sent events: `data: {…chat.completion.chunk…}` lines, the last one with a
 * `finish_reason` (`tool_calls` or `stop`) and the usage, then `data: [DONE]`. A tool call is a
 * `tool_calls` delta, `{ id, type: "function", function: { name, arguments } }`, whose
 * arguments are a JSON string; its result comes back in the next request as a message
 * `{ role: "tool", tool_call_id, content }`. Qwen Code names an MCP tool to the model
 * `mcp__<server>__<tool>`.
 *
 * The model's script is a list of calls: it makes call N when the conversation holds N tool
 * results, and once every call has its result it answers with text quoting the last one. A
 * request that offers none of the server's tools (a side request of Qwen Code's own) gets "OK".
 *
 * Qwen Code keeps its settings in ~/.qwen/settings.json, and `qwen mcp add` writes its entry
 * there (user scope). Three things `mcp add` cannot write are set by editing that file:
 * `"alwaysLoadTools": true` on the entry (without it the model is offered only `tool_search`
 * and `tool_call`, and the server's tools are named in a system reminder), usage statistics
 * off (else Qwen Code looks up gb4w8c3ygj-default-sea.rum.aliyuncs.com at every start), and
 * auto-update, telemetry and the background memory extraction off (the last one is a model
 * request of its own after each session).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { Finished } from "../helpers.ts";
import { isObject, type LogEvent } from "../claude-code/claude.ts";
import type { JSONObject } from "../claude-code/deploy.ts";
import {
  SERVER_NAME, agentsServer, cliPath, isolatedEnv, notes, readLog, registration, runCli,
} from "./agents.ts";
import { eventsReply, jsonReply, offeredTools, startStandIn, toolResults } from "./stand-in.ts";
import type { RecordedRequest, Reply, StandIn } from "./stand-in.ts";

/** One call the scripted model makes: the server's tool name and its arguments. */
export interface ToolCall {
  tool: string;
  arguments: { readonly [key: string]: unknown };
}

/** What the model answers to one request: text, or one tool call. */
type Answer =
  | { kind: "text"; text: string }
  | { kind: "call"; id: string; name: string; arguments: string };

/** The prefix of every tool of the server, as Qwen Code names it to the model. */
export const TOOL_PREFIX = `mcp__${SERVER_NAME}__`;

/** The article's call: add, 100 and 111. */
export const ADD_CALL: ToolCall = { tool: "add", arguments: { a: 100, b: 111 } };

/** The model name Qwen Code is told to use; the stand-in echoes it. */
const MODEL = "stand-in";

/** The settings every test writes, so that nothing leaves loopback and no side request is made. */
const QUIET_SETTINGS = {
  general: { enableAutoUpdate: false },
  privacy: { usageStatisticsEnabled: false },
  telemetry: { enabled: false },
  memory: { enableManagedAutoMemory: false, enableManagedAutoDream: false },
};

/** How long wrap may take to log the end of its last server after Qwen Code has exited. */
const LOG_SETTLE_MS = 15_000;

// ---- Pure functions: the model's answer (stand-in.ts reads the request) ----

/** The script's next step for a request: a call while calls are left, then the last result. */
function answerTo(body: unknown, script: readonly ToolCall[]): Answer {
  const offersServer = offeredTools(body).some((name) => name.startsWith(TOOL_PREFIX));
  if (!offersServer) return { kind: "text", text: "OK" };
  const results = toolResults(body);
  const next = script[results.length];
  if (next === undefined) return { kind: "text", text: `The tool says: ${results.at(-1) ?? ""}` };
  const id = `call_${results.length + 1}`;
  const name = TOOL_PREFIX + next.tool;
  return { kind: "call", id, name, arguments: JSON.stringify(next.arguments) };
}

/** The assistant message of an answer, as a whole message or as the first stream delta. */
function messageOf(answer: Answer): JSONObject {
  if (answer.kind === "text") return { role: "assistant", content: answer.text };
  const named = { name: answer.name, arguments: answer.arguments };
  const call = { index: 0, id: answer.id, type: "function", function: named };
  return { role: "assistant", content: null, tool_calls: [call] };
}

/** The finish reason that goes with an answer. */
function finishReason(answer: Answer): string {
  return answer.kind === "call" ? "tool_calls" : "stop";
}

/** Small token counts, for a client that adds them up. */
const USAGE = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };

/** The answer as the event stream Chat Completions sends for `"stream": true`. */
function streamOf(id: string, answer: Answer): string {
  const base = { id, object: "chat.completion.chunk", created: 1_700_000_000, model: MODEL };
  const first = { ...base, choices: [{ index: 0, delta: messageOf(answer), finish_reason: null }] };
  const finish = { index: 0, delta: {}, finish_reason: finishReason(answer) };
  const last = { ...base, choices: [finish], usage: USAGE };
  return `data: ${JSON.stringify(first)}\n\ndata: ${JSON.stringify(last)}\n\ndata: [DONE]\n\n`;
}

/** The answer as one JSON object, for a request without `"stream": true`. */
function completionOf(id: string, answer: Answer): JSONObject {
  const choice = { index: 0, message: messageOf(answer), finish_reason: finishReason(answer) };
  const base = { id, object: "chat.completion", created: 1_700_000_000, model: MODEL };
  return { ...base, choices: [choice], usage: USAGE };
}

// ---- The route: POST /v1/chat/completions ----

/** Answers a chat completion, streamed when asked; stand-in.ts refuses any other route. */
function respond(request: RecordedRequest, count: number,
  script: readonly ToolCall[]): Reply | undefined {
  if (request.method !== "POST" || request.path !== "/v1/chat/completions") return undefined;
  const id = `chatcmpl-stand-in-${count}`;
  const answer = answerTo(request.body, script);
  if (isObject(request.body) && request.body.stream === true) {
    return eventsReply(streamOf(id, answer));
  }
  return jsonReply(completionOf(id, answer));
}

/** Starts the stand-in Chat Completions API on 127.0.0.1; its model follows `script`. */
export function startChatCompletionsApi(script: readonly ToolCall[]): Promise<StandIn> {
  return startStandIn((request, count) => respond(request, count, script));
}

// ---- I/O: Qwen Code ----

/** The environment Qwen Code runs in: its own HOME, the stand-in as its OpenAI endpoint. */
export function qwenEnv(home: string, api: StandIn,
  extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return isolatedEnv(home, {
    OPENAI_BASE_URL: `${api.url}/v1`,
    OPENAI_API_KEY: "sk-dummy-key-for-a-loopback-stand-in",
    OPENAI_MODEL: MODEL,
    ...extra,
  });
}

/** Where `qwen mcp add` writes its entry by default (user scope). */
export function settingsPath(home: string): string {
  return join(home, ".qwen", "settings.json");
}

/** The settings file, parsed. */
export function readSettings(home: string): JSONObject {
  const settings: unknown = JSON.parse(readFileSync(settingsPath(home), "utf8"));
  if (!isObject(settings)) throw new Error(`${settingsPath(home)} is not a JSON object`);
  return settings;
}

/** The server's entry in the settings file, or undefined when there is none. */
export function entryOf(home: string): JSONObject | undefined {
  if (!existsSync(settingsPath(home))) return undefined;
  const servers = readSettings(home).mcpServers;
  const entry = isObject(servers) ? servers[SERVER_NAME] : undefined;
  return isObject(entry) ? entry : undefined;
}

/**
 * Registers agents-server.mjs through wrap with README's line, run as `qwen` with `options`
 * (such as `--timeout 4000`) after `mcp add`; returns how `qwen mcp add` ended.
 */
export async function register(home: string, cwd: string, log: string,
  options: readonly string[] = []): Promise<Finished> {
  const words = registration("qwen", "register-wrap", { server: agentsServer, log });
  const args = [...words.slice(0, 2), ...options, ...words.slice(2)];
  return runCli(cliPath("qwen"), args, isolatedEnv(home, {}), cwd);
}

/** Adds `fields` to the server's entry and QUIET_SETTINGS to the file `qwen mcp add` wrote. */
export function configure(home: string, fields: JSONObject = {}): void {
  const settings = readSettings(home);
  const entry = entryOf(home);
  if (entry === undefined) throw new Error(`No ${SERVER_NAME} entry in ${settingsPath(home)}`);
  const servers = { [SERVER_NAME]: { ...entry, alwaysLoadTools: true, ...fields } };
  const written = { ...settings, ...QUIET_SETTINGS, mcpServers: servers };
  writeFileSync(settingsPath(home), JSON.stringify(written, null, 2));
}

/**
 * Runs one non-interactive turn: `qwen PROMPT --auth-type openai --allowed-tools
 * mcp__json-rpc-study` in `cwd`, stdin closed. Without the allow list, a call to an MCP tool
 * is declined: "non-interactive mode cannot prompt for confirmation".
 */
export async function askQwen(prompt: string, home: string, cwd: string, api: StandIn,
  extraEnv: NodeJS.ProcessEnv = {}): Promise<Finished> {
  const args = [prompt, "--auth-type", "openai", "--allowed-tools", `mcp__${SERVER_NAME}`];
  return runCli(cliPath("qwen"), args, qwenEnv(home, api, extraEnv), cwd);
}

/**
 * The events of a wire.log once every server wrap started has ended (as many `# exit` notes
 * as `# start` notes): Qwen Code may start a second server, and exits without waiting for it.
 */
export async function settledSession(logPath: string): Promise<LogEvent[]> {
  const deadline = Date.now() + LOG_SETTLE_MS;
  for (;;) {
    const events = readLog(logPath);
    const started = notes(events, /^start pid /).length;
    const ended = notes(events, /^exit /).length;
    if ((started > 0 && ended >= started) || Date.now() > deadline) return events;
    await sleep(100);
  }
}

/** When wrap started each server of a wire.log, in Date.now() units, from its `# start` lines. */
export function startTimes(logPath: string): number[] {
  const text = existsSync(logPath) ? readFileSync(logPath, "utf8") : "";
  return text.split("\n").flatMap((line) => {
    const start = /^(\S+) # start pid \d+: /.exec(line);
    return start === null ? [] : [Date.parse(start[1] ?? "")];
  });
}
