/**
 * How the Gemini CLI tests run Gemini CLI (`gemini`, pinned in tests/agents/package.json)
 * offline, and the stand-in model it talks to.
 *
 * The stand-in speaks the Gemini API on 127.0.0.1. Gemini CLI, run with a dummy
 * `GEMINI_API_KEY` and `GOOGLE_GEMINI_BASE_URL` at the stand-in, sends
 * `POST /v1beta/models/MODEL:streamGenerateContent?alt=sse` for each model turn and reads the
 * answer as server-sent events, `data: {GenerateContentResponse}` lines; this stand-in sends
 * the whole answer in one event. A tool call is a part `{ functionCall: { name, args } }` of
 * the candidate's content; its result comes back in the next request as a part
 * `{ functionResponse: { name, response, id } }` of a user content, where `response` is an
 * object (`{ output }` for a result, `{ error }` for a failure). `:generateContent` (the same
 * answer as one JSON body) and `:countTokens` are answered too. Gemini CLI names an MCP tool
 * to the model `mcp_<server>_<tool>`.
 *
 * The model's script is a list of calls: it makes call N when the conversation holds N
 * function responses, and once every call has its response it answers with text quoting the
 * last one. A request that offers none of the server's tools gets "OK".
 *
 * What keeps Gemini CLI on loopback and quick, in ~/.gemini/settings.json: the auth type
 * `gemini-api-key` (without it `gemini -p` stops with "Invalid auth method selected"), usage
 * statistics, telemetry, auto-update and its notification off (with the defaults it looks up
 * outside hosts at every start). The project folder is trusted in ~/.gemini/trustedFolders.json,
 * as the trust dialog would write it: in an untrusted folder Gemini CLI connects to no MCP
 * server. And the model is named with `-m`: with the default, "auto", a classifier request
 * to a flash-lite model picks it first, is retried five times with back-off when the answer
 * is not its JSON, and leaves a report in the system's temporary folder.
 */
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Finished } from "../helpers.ts";
import { isObject, settledLog, type LogEvent } from "../claude-code/claude.ts";
import type { JSONObject } from "../claude-code/deploy.ts";
import {
  SERVER_NAME, agentsServer, cliPath, endProcessesOf, isolatedEnv, processesOf, registration,
  runCli, scratch,
} from "./agents.ts";
import { eventsReply, jsonReply, startStandIn } from "./stand-in.ts";
import type { RecordedRequest, Reply, StandIn } from "./stand-in.ts";

/** One call the scripted model makes: the tool's name as the model sees it, and its args. */
export interface ToolCall {
  tool: string;
  args: { readonly [key: string]: unknown };
}

/** The prefix of every tool of the server, as Gemini CLI names it to the model. */
export const TOOL_PREFIX = `mcp_${SERVER_NAME}_`;

/** The article's call: add, 100 and 111. */
export const ADD_CALL: ToolCall = { tool: `${TOOL_PREFIX}add`, args: { a: 100, b: 111 } };

/** The model named with `-m`, so that no classifier request picks one. */
export const MODEL = "gemini-2.5-flash";

// ---- Pure functions: read a request, write an answer ----

/** Every part of every content of a request, in order. */
function partsOf(body: unknown): JSONObject[] {
  if (!isObject(body) || !Array.isArray(body.contents)) return [];
  return body.contents.flatMap((content: unknown) => {
    if (!isObject(content) || !Array.isArray(content.parts)) return [];
    return content.parts.filter(isObject);
  });
}

/** The names of the functions a request offers to the model. */
export function offeredTools(body: unknown): string[] {
  if (!isObject(body) || !Array.isArray(body.tools)) return [];
  return body.tools.flatMap((tool: unknown) => {
    if (!isObject(tool) || !Array.isArray(tool.functionDeclarations)) return [];
    return tool.functionDeclarations.flatMap((declaration: unknown) =>
      isObject(declaration) && typeof declaration.name === "string" ? [declaration.name] : []);
  });
}

/** The function declaration a request offers under `name`, as the model sees it. */
export function declarationOf(body: unknown, name: string): JSONObject | undefined {
  if (!isObject(body) || !Array.isArray(body.tools)) return undefined;
  for (const tool of body.tools) {
    if (!isObject(tool) || !Array.isArray(tool.functionDeclarations)) continue;
    const found: unknown = tool.functionDeclarations.find((declaration: unknown) =>
      isObject(declaration) && declaration.name === name);
    if (isObject(found)) return found;
  }
  return undefined;
}

/** The `response` of every function response in a request, in order: what the model was told. */
export function functionResponses(body: unknown): unknown[] {
  return partsOf(body).flatMap((part) => {
    const response = part.functionResponse;
    return isObject(response) ? [response.response] : [];
  });
}

/** The parts the model answers a request with: the script's next call, or text. */
function answerTo(body: unknown, script: readonly ToolCall[]): JSONObject[] {
  const told = functionResponses(body);
  const next = script[told.length];
  const offered = offeredTools(body);
  if (next !== undefined && offered.some((name) => name.startsWith(TOOL_PREFIX))) {
    return [{ functionCall: { name: next.tool, args: { ...next.args } } }];
  }
  if (told.length > 0) return [{ text: `The tool says: ${JSON.stringify(told.at(-1))}` }];
  return [{ text: "OK" }];
}

/** A GenerateContentResponse holding `parts`, with small token counts. */
function generateContentResponse(parts: readonly JSONObject[]): JSONObject {
  const candidate = { content: { role: "model", parts }, finishReason: "STOP", index: 0 };
  const usageMetadata = { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 };
  return { candidates: [candidate], usageMetadata, modelVersion: MODEL };
}

// ---- The routes: a model turn, a token count ----

/**
 * Answers a request of Gemini CLI's by its path (`/v1beta/models/MODEL:ACTION`): a model turn,
 * streamed or whole, or a token count; stand-in.ts refuses any other route.
 */
function respond(request: RecordedRequest, script: readonly ToolCall[]): Reply | undefined {
  const { path, body } = request;
  if (path.endsWith(":countTokens")) return jsonReply({ totalTokens: 10 });
  const answer = generateContentResponse(answerTo(body, script));
  if (path.endsWith(":streamGenerateContent")) {
    return eventsReply(`data: ${JSON.stringify(answer)}\r\n\r\n`);
  }
  if (path.endsWith(":generateContent")) return jsonReply(answer);
  return undefined;
}

/** Starts the stand-in Gemini API on 127.0.0.1; its model makes `script`'s calls. */
export function startGeminiApi(script: readonly ToolCall[]): Promise<StandIn> {
  return startStandIn((request) => respond(request, script));
}

// ---- I/O: Gemini CLI's settings and commands ----

/**
 * Writes ~/.gemini/settings.json (auth type, nothing that phones home) and, when `trusted` is
 * given, ~/.gemini/trustedFolders.json with that folder trusted, as the trust dialog does.
 */
export function configure(home: string, trusted?: string): void {
  const folder = join(home, ".gemini");
  mkdirSync(folder, { recursive: true });
  const settings = {
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    security: { auth: { selectedType: "gemini-api-key" } },
  };
  writeFileSync(join(folder, "settings.json"), JSON.stringify(settings, null, 2));
  if (trusted === undefined) return;
  writeFileSync(join(folder, "trustedFolders.json"), JSON.stringify({ [trusted]: "TRUST_FOLDER" }));
}

/**
 * The environment `gemini` runs in: its own HOME, the stand-in's URL and a dummy key. The URL
 * defaults to a closed port on loopback, for the `mcp` commands, which ask no model.
 */
export function geminiEnv(home: string, apiUrl = "http://127.0.0.1:9"): NodeJS.ProcessEnv {
  const key = "dummy-key-for-a-loopback-stand-in";
  return isolatedEnv(home, { GEMINI_API_KEY: key, GOOGLE_GEMINI_BASE_URL: apiUrl });
}

/** Runs `gemini` with `args` in `cwd` to its end. */
export function gemini(args: readonly string[], env: NodeJS.ProcessEnv,
  cwd: string): Promise<Finished> {
  return runCli(cliPath("gemini"), args, env, cwd);
}

/**
 * Registers agents-server.mjs in `project` with README's register-wrap line, run as it is
 * written; `options` go between `mcp add` and the name (`--timeout 4000`).
 */
export async function register(home: string, project: string, logPath: string,
  options: readonly string[] = []): Promise<Finished> {
  const words = registration("gemini", "register-wrap", { server: agentsServer, log: logPath });
  const args = [...words.slice(0, 2), ...options, ...words.slice(2)];
  const finished = await gemini(args, geminiEnv(home), project);
  if (finished.code !== 0) {
    throw new Error(`gemini mcp add exited ${finished.code}:\n${finished.stderr}`);
  }
  return finished;
}

/** The entries of `mcpServers` in the project's .gemini/settings.json, where `mcp add` writes. */
export function projectServers(project: string): JSONObject {
  const path = join(project, ".gemini", "settings.json");
  const settings: unknown = JSON.parse(readFileSync(path, "utf8"));
  if (!isObject(settings) || !isObject(settings.mcpServers)) {
    throw new Error(`No mcpServers in ${path}`);
  }
  return settings.mcpServers;
}

// ---- I/O: one session ----

/** Everything one `gemini -p` turn left behind. */
export interface Session {
  finished: Finished;
  events: LogEvent[];
  requests: RecordedRequest[];
  /** The function responses the model was given, from the last request of the turn. */
  told: unknown[];
  /** Processes still running with the turn's HOME once wrap had logged its server's end. */
  left: number[];
}

/** How one session is set up: the model's calls, `mcp add` options, work to do meanwhile. */
export interface SessionPlan {
  label: string;
  calls: readonly ToolCall[];
  addOptions?: readonly string[];
  /** The flags after `-p PROMPT`; `--yolo` unless given. */
  flags?: readonly string[];
  /** Runs while `gemini -p` does, given wrap's log; the turn ends when both have. */
  meanwhile?: (logPath: string) => Promise<void>;
}

/**
 * Runs one `gemini -p PROMPT --yolo -m MODEL` turn (`--yolo` so that the model's calls run
 * without a question) against agents-server.mjs, registered through wrap in a trusted project,
 * with a stand-in that makes `plan.calls`. Every process the turn
 * started is ended before it returns; those still running after wrap's log ended are `left`.
 */
export async function session(plan: SessionPlan): Promise<Session> {
  const home = scratch(`gemini-${plan.label}-home`);
  const project = scratch(`gemini-${plan.label}-project`);
  const logPath = join(project, "wire.log");
  configure(home, project);
  const api = await startGeminiApi(plan.calls);
  try {
    await register(home, project, logPath, plan.addOptions);
    const prompt = `Call ${plan.calls.map((call) => call.tool).join(", then ")}`;
    const args = ["-p", prompt, ...(plan.flags ?? ["--yolo"]), "-m", MODEL];
    const turn = gemini(args, geminiEnv(home, api.url), project);
    const [finished] = await Promise.all([turn, plan.meanwhile?.(logPath)]);
    const events = await settledLog(logPath);
    const told = functionResponses(api.requests.at(-1)?.body);
    return { finished, events, requests: api.requests, told, left: processesOf(home) };
  } finally {
    await endProcessesOf(home);
    await api.close();
  }
}
