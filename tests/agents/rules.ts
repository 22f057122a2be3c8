/**
 * What the rule tests share (rules.test.ts; tests/claude-code/rules.test.ts for Claude Code): the
 * rules that `wrap check` applies, measured. Each session registers tests/fixtures/
 * defects-server.mjs with a CLI by README's register-wrap line (the defect words after the
 * server's path, so one server can carry several defects, one per tool), runs one prompt whose
 * model calls the script's tools, and reads back, the same way for each CLI, what came of it:
 * the tools the model was offered from the server, what the model was told for each call, and
 * wrap's log of the session.
 *
 * Nothing may leave loopback: the rule tests run in a network namespace of their own, where the
 * only interface is `lo` (.ci/run starts them with `unshare -n`), and fail at once elsewhere.
 *
 * Sections: the fixture and what a session gives, one runner per CLI, the namespace.
 */
import assert from "node:assert/strict";
import { networkInterfaces } from "node:os";
import { join } from "node:path";
import { root, type Finished } from "../helpers.ts";
import { isObject, type LogEvent } from "../claude-code/claude.ts";
import {
  SERVER_NAME, cliPath, endProcessesOf, isolatedEnv, processesLeft, readLog, registration, runCli,
  scratch,
} from "./agents.ts";
import { NAMESPACE, codexExec, configureEntry, prepareHome, startResponsesApi, textsOf,
  toolOutputs, type EntrySettings } from "./codex.ts";
import { MODEL, TOOL_PREFIX, configure as configureGemini, functionResponses, gemini, geminiEnv,
  startGeminiApi } from "./gemini.ts";
import { askQwen, configure as configureQwen, startChatCompletionsApi as startQwenApi } from "./qwen.ts";
import { copilotEnv, prompt, startChatCompletionsApi as startCopilotApi, toolName } from "./copilot.ts";
import { toolResults, type RecordedRequest, type StandIn } from "./stand-in.ts";

// ---- The fixture and what a session gives ----

/** The server with defects on demand, one word each (see its header). */
export const defectsServer = join(root, "tests", "fixtures", "defects-server.mjs");

/** A tool as the model was offered it: the name the CLI gave it, its description and schema. */
export interface OfferedTool {
  name: string;
  description: string;
  schema: unknown;
}

/** What one session gave. */
export interface Observed {
  /** The server's tools in the CLI's first request to the model (none: the server was left out). */
  offered: OfferedTool[];
  /** What the model was told for each call of the script, in order, as text. */
  told: string[];
  /** wrap's log of the session, read once every process of the session had ended. */
  events: LogEvent[];
  /** How the CLI's own command ended, and what it printed. */
  finished: Finished;
}

/**
 * The rows of docs/clients.md's table "What each CLI does with a defect", one defect each. Each
 * cell's test is named `ROW: what the CLI does`, under the CLI's name and version.
 */
export const ROWS = {
  slow: "a first answer after 1.5 s",
  late: "a first answer after 5 s",
  noiseBefore: "a stdout line before the first response",
  noiseAfter: "a stdout line after tools/list",
  names: "tools my.tool and my tool",
  long: "a 70-character tool name",
  untyped: "an inputSchema without type: object",
  keywords: "format and additionalProperties",
  description: "a description of 10,000 characters",
  discover: "server/discover answered {} or -32601",
  content: "an unknown content block beside text",
  structured: "structuredContent and no content",
} as const;

/** A call the scripted model makes: a tool by the server's name for it, and the arguments. */
export interface Call {
  name: string;
  arguments: { [key: string]: unknown };
}

/** One session: the server's defect words, the calls the model makes, and, for Codex, what its
 * entry in config.toml says besides the approval mode. */
export interface Plan {
  defects: readonly string[];
  calls?: readonly Call[];
  entry?: EntrySettings;
}

/** The prompt; no stand-in reads it, it is there for the reader. */
const PROMPT = "Use the tools of the MCP server";

/** How long the processes of a session may take to end once the CLI has exited. */
const SETTLE_MS = 15_000;

/** A description, or "" when there is none. */
function text(value: unknown): string {
  return typeof value === "string" ? value : "";
}

/** Registers the fixture with `cli` by README's register-wrap line, the defects after it. */
async function registerFixture(cli: string, logPath: string, defects: readonly string[],
  env: NodeJS.ProcessEnv, project: string): Promise<void> {
  const words = registration(cli, "register-wrap", { server: defectsServer, log: logPath });
  const added = await runCli(cliPath(cli), [...words, ...defects], env, project);
  assert.equal(added.code, 0, `${cli} mcp add exited ${added.code}:\n${added.stderr}`);
}

/**
 * Runs a session in a new HOME and project folder: `run` registers the server and runs the
 * prompt; the log is read once every process of the session has ended, and all are ended.
 */
async function inScratch(cli: string, api: StandIn,
  run: (home: string, project: string, logPath: string) => Promise<Finished>,
  read: (requests: RecordedRequest[]) => Omit<Observed, "events" | "finished">): Promise<Observed> {
  const home = scratch(`rules-${cli}-home`);
  const project = scratch(`rules-${cli}-project`);
  const logPath = join(project, "wire.log");
  try {
    const finished = await run(home, project, logPath);
    await processesLeft(home, SETTLE_MS);
    return { ...read(api.requests), events: readLog(logPath), finished };
  } finally {
    await endProcessesOf(home);
    await api.close();
  }
}

/** The tools a Chat Completions request offers whose names start with `prefix`. */
function chatTools(body: unknown, prefix: string): OfferedTool[] {
  if (!isObject(body) || !Array.isArray(body.tools)) return [];
  return body.tools.flatMap((tool: unknown): OfferedTool[] => {
    const named = isObject(tool) && isObject(tool.function) ? tool.function : {};
    if (typeof named.name !== "string" || !named.name.startsWith(prefix)) return [];
    return [{ name: named.name, description: text(named.description), schema: named.parameters }];
  });
}

// ---- One runner per CLI ----

/** Codex: `codex exec`, its entry approving every call (see codex.ts). */
export async function codexSession({ defects, calls = [], entry = {} }: Plan): Promise<Observed> {
  const script = calls.map((call) => ({ namespace: NAMESPACE, ...call }));
  const api = await startResponsesApi(script);
  return inScratch("codex", api, async (home, project, logPath) => {
    prepareHome(home, api);
    await registerFixture("codex", logPath, defects, isolatedEnv(home, {}), project);
    configureEntry(home, { default_tools_approval_mode: "approve", ...entry });
    return codexExec(PROMPT, home, project);
  }, (requests) => {
    const body = requests[0]?.body;
    const tools = isObject(body) && Array.isArray(body.tools) ? body.tools : [];
    const group: unknown = tools.find((tool: unknown) => isObject(tool) && tool.name === NAMESPACE);
    const listed: unknown[] = isObject(group) && Array.isArray(group.tools) ? group.tools : [];
    const offered = listed.filter(isObject).map((tool) => ({ name: String(tool.name),
      description: text(tool.description), schema: tool.parameters }));
    // After Codex's "Wall time: … Output:" part, the result's own text.
    const told = toolOutputs(requests.at(-1)?.body)
      .map((result) => textsOf(result.output).join("\n").replace(/^Wall time: .*\nOutput:\n?/, ""));
    return { offered, told };
  });
}

/** Gemini CLI: `gemini -p PROMPT --yolo -m MODEL` in a trusted project (see gemini.ts). */
export async function geminiSession({ defects, calls = [] }: Plan): Promise<Observed> {
  const api = await startGeminiApi(calls.map((call) => ({ tool: TOOL_PREFIX + call.name,
    args: call.arguments })));
  return inScratch("gemini", api, async (home, project, logPath) => {
    configureGemini(home, project);
    await registerFixture("gemini", logPath, defects, geminiEnv(home), project);
    return gemini(["-p", PROMPT, "--yolo", "-m", MODEL], geminiEnv(home, api.url), project);
  }, (requests) => {
    const body = requests[0]?.body;
    const tools = isObject(body) && Array.isArray(body.tools) ? body.tools : [];
    const declarations = tools.flatMap((tool: unknown) =>
      isObject(tool) && Array.isArray(tool.functionDeclarations) ? tool.functionDeclarations : []);
    const offered = declarations.filter(isObject)
      .filter((declaration) => String(declaration.name).startsWith(TOOL_PREFIX))
      .map((declaration) => ({ name: String(declaration.name),
        description: text(declaration.description), schema: declaration.parametersJsonSchema }));
    const told = functionResponses(requests.at(-1)?.body).map((told) => JSON.stringify(told));
    return { offered, told };
  });
}

/** Qwen Code: `qwen PROMPT --auth-type openai`, the entry loading every tool (see qwen.ts). */
export async function qwenSession({ defects, calls = [] }: Plan): Promise<Observed> {
  const api = await startQwenApi(calls.map((call) => ({ tool: call.name,
    arguments: call.arguments })));
  return inScratch("qwen", api, async (home, project, logPath) => {
    await registerFixture("qwen", logPath, defects, isolatedEnv(home, {}), project);
    configureQwen(home);
    return askQwen(PROMPT, home, project, api);
  }, (requests) => ({
    offered: chatTools(requests[0]?.body, `mcp__${SERVER_NAME}__`),
    told: toolResults(requests.at(-1)?.body),
  }));
}

/** Copilot CLI: `copilot -p`, offline, every tool allowed (see copilot.ts). */
export async function copilotSession({ defects, calls = [] }: Plan): Promise<Observed> {
  const api = await startCopilotApi(calls.map((call) => ({ tool: toolName(call.name),
    arguments: call.arguments })));
  return inScratch("copilot", api, async (home, project, logPath) => {
    await registerFixture("copilot", logPath, defects, copilotEnv(home, api.url), project);
    return prompt(PROMPT, home, project, api.url);
  }, (requests) => ({
    offered: chatTools(requests[0]?.body, `${SERVER_NAME}-`),
    told: toolResults(requests.at(-1)?.body),
  }));
}

// ---- The namespace ----

/**
 * Fails unless the only network interface is loopback: each rule test runs its CLIs in a
 * network namespace of their own, so that nothing they try can leave 127.0.0.1.
 */
export function assertLoopbackOnly(): void {
  const interfaces = Object.keys(networkInterfaces());
  const how = "run it as .ci/run does: unshare -n sh -c 'ip link set lo up && exec node …'";
  assert.deepEqual(interfaces, ["lo"], `not in a loopback-only network namespace; ${how}`);
}
