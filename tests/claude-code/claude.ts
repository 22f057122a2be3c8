/**
 * Helpers for running the real Claude Code, pinned in tests/claude-code/package.json, the
 * way a new user would, but shut in: a HOME of its own in a temporary folder (so its
 * settings, `claude mcp add` registrations and history start empty and go nowhere), a
 * dummy API key, `ANTHROPIC_BASE_URL` at the stand-in on 127.0.0.1, and
 * `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1` so that it sends no telemetry, error reports
 * or update checks. Nothing else from the caller's environment is passed on but PATH.
 *
 * It also reads wrap's wire.log back into events, by mark and by JSON content, so that the
 * tests hold whatever tags or extra `#` events the recorder adds to a line.
 */
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { bundle } from "../../build.mjs";
import { root, start, tempFolder, wrapPath, type Finished } from "../helpers.ts";

/** One line of wire.log: its mark, its round-trip time if it is a response, and what it carried. */
export interface LogEvent {
  mark: string;
  /** The round-trip time in milliseconds, on a `←` or `→` response line. */
  roundTripMs?: number;
  /** The line's bytes as the peer wrote them, after the mark, round-trip time and tags. */
  text: string;
  /** The line parsed as JSON, on `→` and `←` lines that are JSON. */
  message?: unknown;
}

/** Where `npm ci --prefix tests/claude-code` puts Claude Code. */
export const installed = join(root, "tests", "claude-code", "node_modules");

/** The `claude` command of the pinned package. */
export const claudePath = join(installed, ".bin", "claude");

/** How long one `claude` command may take on a loaded 2-core machine before it fails the test. */
const CLAUDE_TIMEOUT_MS = 120_000;

/** How long wrap may take to log the end of its server after Claude Code has exited. */
const LOG_SETTLE_MS = 15_000;

/** A wire.log line: time, mark, then the text (see wrap.ts and the shared log format). */
const LOG_LINE = /^\S+ ([→←!#]) (.*)$/;

/** A response's round-trip time at the start of its text: `(1.9 ms) `. */
const ROUND_TRIP = /^\((\d+(?:\.\d+)?) ms\) /;

/** The hygiene tags wrap may put before a line's bytes, each `[text] `. */
const TAG = /^\[(?:\d+ bytes|not UTF-8|CRLF|no request|id in use|not JSON-RPC)\] /;

// ---- Pure functions ----

/** Reads one wire.log line into an event; a line of another shape is kept whole as text. */
export function eventOf(line: string): LogEvent {
  const parsed = LOG_LINE.exec(line);
  if (parsed === null) return { mark: "", text: line };
  const mark = parsed[1] ?? "";
  let text = parsed[2] ?? "";
  const event: LogEvent = { mark, text };
  const time = mark === "←" || mark === "→" ? ROUND_TRIP.exec(text) : null;
  if (time !== null) {
    event.roundTripMs = Number(time[1]);
    text = text.slice(time[0].length);
  }
  let tag = TAG.exec(text);
  while (tag !== null) {
    text = text.slice(tag[0].length);
    tag = TAG.exec(text);
  }
  event.text = text;
  if (mark === "←" || mark === "→") {
    try {
      const message: unknown = JSON.parse(text);
      event.message = message;
    } catch {
      // Not JSON: the event keeps only its text.
    }
  }
  return event;
}

/** A plain JSON object, narrowed from unknown. */
export function isObject(value: unknown): value is { [key: string]: unknown } {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The JSON-RPC request (or notification) of an event, when it is one. */
export function requestOf(event: LogEvent): { [key: string]: unknown } | undefined {
  const message = event.message;
  return isObject(message) && typeof message.method === "string" ? message : undefined;
}

/** The `_meta` object of a request's params, or undefined. */
export function metaOf(request: { [key: string]: unknown }): { [key: string]: unknown } | undefined {
  const params = request.params;
  return isObject(params) && isObject(params._meta) ? params._meta : undefined;
}

/** The response event, in direction `mark`, that carries `id`. */
export function responseTo(events: readonly LogEvent[], id: unknown, mark: string): LogEvent | undefined {
  return events.find((event) => {
    const message = event.message;
    const answers = isObject(message) && message.id === id && typeof message.method !== "string";
    return event.mark === mark && answers;
  });
}

/** The version of an installed package, read from its package.json. */
export function versionOf(packageFolder: string): string {
  const manifest: unknown = JSON.parse(readFileSync(join(packageFolder, "package.json"), "utf8"));
  const version = isObject(manifest) ? manifest.version : undefined;
  if (typeof version !== "string") throw new Error(`No version in ${packageFolder}/package.json`);
  return version;
}

/**
 * A log made ready to paste into the documents: this clone's path as their placeholder
 * /absolute/path/, and the temporary folders of the run as /tmp/….
 */
export function forReadme(log: string, temporary: readonly string[]): string {
  let text = log.split(`${root}/`).join("/absolute/path/");
  for (const folder of temporary) text = text.split(folder).join("/tmp/claude-code-test");
  return text;
}

/** The log as text, one `mark text` line an event, for a failure message. */
export function logText(events: readonly LogEvent[]): string {
  return events.map((event) => `${event.mark} ${event.text}`).join("\n");
}

// ---- I/O ----

/** Fails at once, and says how to fix it, when Claude Code is not installed. */
export function requireClaude(): void {
  if (!existsSync(claudePath)) {
    throw new Error("Claude Code is missing: run npm ci --prefix tests/claude-code");
  }
}

/** The version of the pinned Claude Code, as it reports itself to an MCP server. */
export function claudeVersion(): string {
  return versionOf(join(installed, "@anthropic-ai", "claude-code"));
}

/** A new empty folder for one test (HOME, project folder, logs), removed when the test file
 * ends, pass or fail. */
export function scratch(label: string): string {
  return tempFolder(`claude-code-${label}-`);
}

/** The environment Claude Code runs in: its own HOME, the stand-in's URL, nothing else of ours but PATH. */
export function isolatedEnv(home: string, baseUrl: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    ANTHROPIC_API_KEY: "sk-ant-dummy-key-for-a-loopback-stand-in",
    ANTHROPIC_BASE_URL: baseUrl,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    // MCP tools are shown to the model directly, not behind a tool-search tool.
    ENABLE_TOOL_SEARCH: "false",
  };
}

/** Runs `claude` with `args` to its end, stdin closed, in `cwd`; fails if it takes too long. */
export async function claude(args: readonly string[], env: NodeJS.ProcessEnv, cwd: string): Promise<Finished> {
  const { child, finish } = start(claudePath, args, { cwd, env });
  child.stdin.end();
  const timer = setTimeout(() => child.kill("SIGKILL"), CLAUDE_TIMEOUT_MS);
  try {
    return await finish;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The events of a wire.log once wrap has logged its server's end (`# exit …`), after the
 * client has gone: the client may stop the server as it exits and not wait for it.
 */
export async function settledLog(logPath: string): Promise<LogEvent[]> {
  const deadline = Date.now() + LOG_SETTLE_MS;
  for (;;) {
    const text = existsSync(logPath) ? readFileSync(logPath, "utf8") : "";
    const events = text.split("\n").filter((line) => line !== "").map(eventOf);
    const ended = events.some((event) => event.mark === "#" && /^exit /.test(event.text));
    if (ended || Date.now() > deadline) return events;
    await sleep(100);
  }
}

/**
 * Writes an `--mcp-config` file into `project` that registers one stdio server under `name`,
 * run through dist/wrap.mjs with `--log logPath`, then `serverArgs`; returns the file's path.
 */
export function wrappedConfig(project: string, name: string, logPath: string, serverArgs: readonly string[]): string {
  const configPath = join(project, "mcp.json");
  const server = { type: "stdio", command: process.execPath, args: [wrapPath, "--log", logPath, ...serverArgs] };
  writeFileSync(configPath, JSON.stringify({ mcpServers: { [name]: server } }));
  return configPath;
}

/**
 * When CLAUDE_CODE_EXCERPT names a file, appends the log there under `label`, made ready for
 * the documents by forReadme: that is how their excerpts are recorded again.
 */
export function saveExcerpt(label: string, logPath: string, temporary: readonly string[]): void {
  const excerptFile = process.env.CLAUDE_CODE_EXCERPT;
  if (excerptFile === undefined) return;
  const log = existsSync(logPath) ? readFileSync(logPath, "utf8") : "(no log)\n";
  appendFileSync(excerptFile, `---- ${label} ----\n${forReadme(log, temporary)}\n`);
}

/** A copy of server.ts that offers `tools.listChanged`, built the project's way in a scratch
 * folder named `label`; its path. Claude Code opens subscriptions/listen only to such a server. */
export async function buildListChanged(label: string): Promise<string> {
  const folder = scratch(label);
  const plain = "const CAPABILITIES: JSONObject = { tools: {} };";
  const source = readFileSync(join(root, "server.ts"), "utf8");
  if (!source.includes(plain)) throw new Error(`server.ts no longer has the line ${plain}`);
  writeFileSync(join(folder, "server.ts"), source.replace(plain, "const CAPABILITIES: JSONObject = { tools: { listChanged: true } };"));
  const built = join(folder, "server.mjs");
  const foreign = await bundle(join(folder, "server.ts"), built);
  if (foreign.length > 0) throw new Error(`the copy of server.ts imports ${foreign.join(", ")}`);
  return built;
}
