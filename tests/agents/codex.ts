/**
 * How the Codex tests run the Codex CLI (`codex`, pinned in tests/agents/package.json) offline,
 * and the stand-in model it talks to.
 *
 * The stand-in speaks the OpenAI Responses API on 127.0.0.1. Codex sends `POST /v1/responses`
 * with `"stream": true` for each model turn and reads the answer as server-sent events:
 * `response.created`, one `response.output_item.done` per item the model outputs, then
 * `response.completed` with the usage. Codex offers a server's MCP tools to the model as one
 * tool of type `namespace`, named `mcp__<server>` with every `-` made `_` (`mcp__json_rpc_study`),
 * holding one function per MCP tool under the tool's own name. A call is an output item
 * `{ type: "function_call", namespace, name, arguments, call_id }` whose arguments are a JSON
 * string; its result comes back in the next request's `input` as
 * `{ type: "function_call_output", call_id, output }`.
 *
 * The model's script is a list of calls: it makes call N when the request holds N results and
 * offers call N's namespace, and otherwise answers with text quoting the results it holds.
 *
 * Codex keeps its settings in ~/.codex/config.toml, and `codex mcp add` appends its entry
 * there. Before that, each test writes the file with a model provider at the stand-in
 * (`wire_api = "responses"`, no retries) and the settings that keep Codex on loopback:
 * analytics off (else it looks up ab.chatgpt.com), the `plugins` feature off (else it looks up
 * api.github.com and chatgpt.com at every start to sync plugins), and no update check. What
 * `mcp add` cannot write (an approval mode, `required`, a tool timeout) is added to the entry
 * after it.
 *
 * Sections: the stand-in's pure functions, its route (stand-in.ts serves it), then running Codex.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Finished } from "../helpers.ts";
import { isObject } from "../claude-code/claude.ts";
import type { JSONObject } from "../claude-code/deploy.ts";
import { SERVER_NAME, agentsServer, cliPath, isolatedEnv, registration, runCli } from "./agents.ts";
import { eventsReply, startStandIn } from "./stand-in.ts";
import type { RecordedRequest, Reply, StandIn } from "./stand-in.ts";

/** One call the scripted model makes: a function of a namespace, with its arguments. */
export interface ToolCall {
  namespace: string;
  name: string;
  arguments: JSONObject;
}

/** Keys to add to the server's entry in config.toml, with their TOML values. */
export type EntrySettings = { [key: string]: string | number | boolean };

/** A tool result as a request carries it to the model: the item's keys and its output. */
export interface ToolOutput {
  keys: string[];
  /** A string, or a list of `{ type: "input_text", text }` parts. */
  output: unknown;
}

/** The namespace under which Codex offers the server's tools to the model. */
export const NAMESPACE = `mcp__${SERVER_NAME.replaceAll("-", "_")}`;

/** The article's call: add, 100 and 111. */
export const ADD_CALL: ToolCall = {
  namespace: NAMESPACE,
  name: "add",
  arguments: { a: 100, b: 111 },
};

/**
 * The first part of every MCP result Codex hands the model, before the result's own text:
 * `Wall time: 0.0104 seconds\nOutput:`.
 */
export const WALL_TIME = /^Wall time: \d+\.\d+ seconds\nOutput:$/;

/** The model name Codex is told to use. Codex warns that it has no metadata for it. */
const MODEL = "stand-in";

// ---- Pure functions: read a request, write an answer ----

/** The names of the functions a Responses API request offers inside tool `namespace`. */
export function namespaceTools(body: unknown, namespace: string): string[] {
  if (!isObject(body) || !Array.isArray(body.tools)) return [];
  const isGroup = (tool: unknown) => isObject(tool) && tool.name === namespace;
  const group: unknown = body.tools.find(isGroup);
  if (!isObject(group) || !Array.isArray(group.tools)) return [];
  return group.tools.flatMap((tool: unknown): string[] => {
    if (!isObject(tool) || typeof tool.name !== "string") return [];
    return [tool.name];
  });
}

/** The tool results (`function_call_output` items) in a request's input, in order. */
export function toolOutputs(body: unknown): ToolOutput[] {
  if (!isObject(body) || !Array.isArray(body.input)) return [];
  return body.input.flatMap((item: unknown) => {
    if (!isObject(item) || item.type !== "function_call_output") return [];
    return [{ keys: Object.keys(item).sort(), output: item.output }];
  });
}

/** The text of each part of an output: the string itself, or each part's `text`. */
export function textsOf(output: unknown): string[] {
  if (typeof output === "string") return [output];
  if (!Array.isArray(output)) return [];
  return output.map((part: unknown): string => {
    if (!isObject(part) || typeof part.text !== "string") return "";
    return part.text;
  });
}

/** The script's next step for a request: the next call while calls are left, then text. */
function answerTo(body: unknown, script: readonly ToolCall[], count: number): JSONObject {
  const results = toolOutputs(body);
  const next = script[results.length];
  // A model calls only what it is offered; a name unknown inside the namespace is fair game.
  if (next !== undefined && namespaceTools(body, next.namespace).length > 0) {
    const { namespace, name } = next;
    const call = { namespace, name, arguments: JSON.stringify(next.arguments) };
    return { type: "function_call", id: `fc_${count}`, call_id: `call_${results.length}`, ...call };
  }
  const said = results.map((result) => textsOf(result.output).join(" ")).join(" | ");
  const content = [{ type: "output_text", text: `The tools say: ${said}` }];
  return { type: "message", id: `msg_${count}`, role: "assistant", content };
}

/** One server-sent event: `event:` and `data:` lines, then a blank line. */
function event(data: { type: string; [key: string]: unknown }): string {
  return `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** The answer as the event stream the Responses API sends for `"stream": true`. */
function streamOf(id: string, item: JSONObject): string {
  const usage = { input_tokens: 10, output_tokens: 5, total_tokens: 15 };
  return [
    event({ type: "response.created", response: { id } }),
    event({ type: "response.output_item.done", item }),
    event({ type: "response.completed", response: { id, usage } }),
  ].join("");
}

// ---- The route: POST /v1/responses ----

/** Answers `POST /v1/responses` with a streamed response; stand-in.ts refuses any other route. */
function respond(request: RecordedRequest, count: number,
  script: readonly ToolCall[]): Reply | undefined {
  if (request.method !== "POST" || request.path !== "/v1/responses") return undefined;
  return eventsReply(streamOf(`resp_${count}`, answerTo(request.body, script, count)));
}

/** Starts the stand-in Responses API on 127.0.0.1; its model follows `script`. */
export function startResponsesApi(script: readonly ToolCall[]): Promise<StandIn> {
  return startStandIn((request, count) => respond(request, count, script), "/v1");
}

// ---- Running Codex ----

/** Where Codex keeps its settings, and where `codex mcp add` writes its entry. */
export function configPath(home: string): string {
  return join(home, ".codex", "config.toml");
}

/**
 * Writes ~/.codex/config.toml before anything else runs: the stand-in as the model provider
 * (when `api` is given) and the settings that keep Codex on loopback.
 */
export function prepareHome(home: string, api?: StandIn): void {
  const provider = api === undefined ? [] : [
    "",
    "[model_providers.stand-in]",
    'name = "Stand-in"',
    `base_url = "${api.url}"`,
    'wire_api = "responses"',
    "request_max_retries = 0",
    "stream_max_retries = 0",
  ];
  const model = api === undefined ? [] : [`model = "${MODEL}"`, 'model_provider = "stand-in"'];
  const quiet = ["check_for_update_on_startup = false", "", "[analytics]", "enabled = false",
    "", "[features]", "plugins = false"];
  mkdirSync(join(home, ".codex"), { recursive: true });
  writeFileSync(configPath(home), [...model, ...quiet, ...provider, ""].join("\n"));
}

/** Registers `server` through wrap with README's line; returns how `codex mcp add` ended. */
export async function register(home: string, cwd: string, log: string,
  server = agentsServer): Promise<Finished> {
  const words = registration("codex", "register-wrap", { server, log });
  return runCli(cliPath("codex"), words, isolatedEnv(home, {}), cwd);
}

/**
 * Adds `settings` to the server's entry in the file `codex mcp add` wrote, such as
 * `default_tools_approval_mode = "approve"`, `required = true` or `tool_timeout_sec = 3`, which
 * it cannot write.
 */
export function configureEntry(home: string, settings: EntrySettings): void {
  const path = configPath(home);
  const lines = readFileSync(path, "utf8").split("\n");
  const header = lines.indexOf(`[mcp_servers.${SERVER_NAME}]`);
  if (header === -1) throw new Error(`${path} has no entry for ${SERVER_NAME}`);
  // The entry's keys run to the next table header, or to the end of the file.
  const next = lines.findIndex((line, index) => index > header && line.startsWith("["));
  const added = Object.entries(settings).map(([key, value]) => `${key} = ${JSON.stringify(value)}`);
  lines.splice(next === -1 ? lines.length : next, 0, ...added);
  writeFileSync(path, lines.join("\n"));
}

/** Runs `codex ARGS` in `cwd` with its own HOME, stdin closed. */
export async function codex(args: readonly string[], home: string, cwd: string): Promise<Finished> {
  return runCli(cliPath("codex"), args, isolatedEnv(home, {}), cwd);
}

/** Runs one non-interactive turn, `codex exec --skip-git-repo-check PROMPT`, in `cwd`. */
export async function codexExec(prompt: string, home: string, cwd: string): Promise<Finished> {
  return codex(["exec", "--skip-git-repo-check", prompt], home, cwd);
}
