/**
 * What the agent CLI tests share. Each CLI (Codex, Gemini CLI, Qwen Code, Copilot CLI, pinned in
 * tests/agents/package.json) runs as a new user would run it, but shut in: a HOME of its own in a
 * temporary folder, a stand-in model API on 127.0.0.1, and the server registered with the CLI's
 * own `mcp add`, written as README's "Other agent CLIs" block gives it, through dist/wrap.mjs.
 * Whatever a CLI starts carries that HOME in its environment, which is how a test finds and
 * ends the processes it leaves behind (a daemon, a server it forgot). The stand-ins' HTTP side
 * is in stand-in.ts.
 *
 * Sections: the CLIs and README's lines, running a CLI and ending what it left, reading wrap's
 * log, a server that dies mid-call, excerpts for the documents.
 */
import assert from "node:assert/strict";
import { appendFileSync, existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { root, start, tempFolder, waitUntil, type Finished } from "../helpers.ts";
import { eventOf, forReadme, logText, type LogEvent } from "../claude-code/claude.ts";
import { paramsOf, withMethod, type JSONObject } from "../claude-code/deploy.ts";

// ---- The CLIs and README's lines ----

/** Where `npm ci --prefix tests/agents` puts the CLIs' commands. */
export const agentsBin = join(root, "tests", "agents", "node_modules", ".bin");

/** server.ts with docs/tools.md's tools (count_lines, wait, deploy); `--legacy` drops the probe. */
export const agentsServer = join(root, "tests", "agents", "agents-server.mjs");

/** The name every test registers the server under, as README does. */
export const SERVER_NAME = "json-rpc-study";

/** The folder of the clone in README's commands. */
const README_ROOT = "/absolute/path";

/** The log README's wrap lines name. */
const README_LOG = `${README_ROOT}/wire.log`;

/** The server README's lines name. */
const README_SERVER = `${README_ROOT}/dist/server.mjs`;

/** The command that runs a CLI from the pinned packages. */
export function cliPath(cli: string): string {
  const path = join(agentsBin, cli);
  if (!existsSync(path)) {
    throw new Error(`${cli} is not installed: run npm ci --prefix tests/agents`);
  }
  return path;
}

/**
 * README's registration line for `cli`, as words after the CLI's name: from the ```sh register
 * block (the server on its own) or the ```sh register-wrap block (through wrap). The clone's
 * folder is `root`; `server` and `log` take the place of README's server and wire.log.
 */
export function registration(cli: string, form: "register" | "register-wrap",
  { server = join(root, "dist", "server.mjs"), log = join(root, "wire.log") }:
    { server?: string; log?: string } = {}): string[] {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const block = new RegExp("\\n```sh " + form + "\\n([\\s\\S]*?)\\n```\\n").exec(readme)?.[1];
  if (block === undefined) throw new Error(`README.md has no \`\`\`sh ${form} block`);
  const line = block.split("\n").find((each) => each.startsWith(`${cli} `));
  if (line === undefined) throw new Error(`README.md's ${form} block has no line for ${cli}`);
  const words = line.split(" ").slice(1);
  return words.map((word) => {
    if (word === README_SERVER) return server;
    if (word === README_LOG) return log;
    return word.replace(README_ROOT, root);
  });
}

// ---- Running a CLI and ending what it left ----

/** A new empty folder for one test (a HOME, a project folder), removed when the file ends. */
export function scratch(label: string): string {
  return tempFolder(`agents-${label}-`);
}

/**
 * The environment a CLI runs in: its own HOME, PATH, and nothing else of ours; a test adds
 * the settings that point its CLI at the stand-in. No proxy is passed on, and loopback is
 * never proxied, so nothing leaves 127.0.0.1.
 */
export function isolatedEnv(home: string, extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    NO_PROXY: "127.0.0.1,localhost",
    no_proxy: "127.0.0.1,localhost",
    ...extra,
  };
}

/** How long one CLI command may take on a loaded 2-core machine before it fails the test. */
const CLI_TIMEOUT_MS = 180_000;

/** Runs a CLI command to its end, stdin closed, in `cwd`; killed if it takes too long. */
export async function runCli(command: string, args: readonly string[], env: NodeJS.ProcessEnv,
  cwd: string, timeoutMs = CLI_TIMEOUT_MS): Promise<Finished> {
  const { child, finish } = start(command, args, { cwd, env });
  child.stdin.end();
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  try {
    return await finish;
  } finally {
    clearTimeout(timer);
  }
}

/** The pids of processes whose environment holds `HOME=home`: what a CLI run there started. */
export function processesOf(home: string): number[] {
  const mark = Buffer.from(`\0HOME=${home}\0`);
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const environ = Buffer.concat([Buffer.from("\0"), readFileSync(`/proc/${entry}/environ`)]);
      if (environ.includes(mark)) pids.push(Number(entry));
    } catch {
      // Gone already, or not ours to read.
    }
  }
  return pids;
}

/**
 * Ends every process still running with `HOME=home`, SIGTERM then SIGKILL, and returns the pids
 * that were left: a test may assert that a CLI left none, and must call this in `finally`.
 */
export async function endProcessesOf(home: string): Promise<number[]> {
  const left = processesOf(home);
  const signal = (pid: number, name: NodeJS.Signals) => {
    try {
      process.kill(pid, name);
    } catch {
      // It ended on its own meanwhile.
    }
  };
  for (const pid of left) signal(pid, "SIGTERM");
  if (left.length > 0) await sleep(1_000);
  for (const pid of processesOf(home)) signal(pid, "SIGKILL");
  return left;
}

/**
 * The processes still running with `HOME=home` once they have had `limitMs` to end: a server
 * the CLI stopped at its exit may still be on its way out when the CLI itself is gone.
 */
export async function processesLeft(home: string, limitMs: number): Promise<number[]> {
  const deadline = Date.now() + limitMs;
  while (processesOf(home).length > 0 && Date.now() < deadline) await sleep(100);
  return processesOf(home);
}

// ---- Reading wrap's log ----

/** The events of a wire.log as it stands: complete once no process of the run is left. */
export function readLog(logPath: string): LogEvent[] {
  const text = existsSync(logPath) ? readFileSync(logPath, "utf8") : "";
  return text.split("\n").filter((line) => line !== "").map(eventOf);
}

/** wrap's `#` notes, as text; only those that match `pattern` when it is given. */
export function notes(events: readonly LogEvent[], pattern?: RegExp): string[] {
  const texts = events.filter((event) => event.mark === "#").map((event) => event.text);
  return pattern === undefined ? texts : texts.filter((text) => pattern.test(text));
}

/** The pids in wrap's `# start pid N` notes: one per server process it started. */
export function startedPids(events: readonly LogEvent[]): number[] {
  return notes(events).flatMap((text) => {
    const started = /^start pid (\d+): /.exec(text);
    return started === null ? [] : [Number(started[1])];
  });
}

/** The server's stderr lines, as wrap logged them. */
export function stderrOf(events: readonly LogEvent[]): string[] {
  return events.filter((event) => event.mark === "!").map((event) => event.text);
}

/** The tools/call requests that reached the server, in order; only those for `tool` if given. */
export function callsOf(events: readonly LogEvent[], tool?: string): JSONObject[] {
  const calls = withMethod(events, "→", "tools/call");
  return tool === undefined ? calls : calls.filter((call) => paramsOf(call).name === tool);
}

/** The names of the tools called on the server, in order. */
export function toolsCalled(events: readonly LogEvent[]): unknown[] {
  return callsOf(events).map((call) => paramsOf(call).name);
}

/** The one tools/call for `tool`; fails when there is not exactly one. */
export function onlyCall(events: readonly LogEvent[], tool: string): JSONObject {
  const calls = callsOf(events, tool);
  const [call] = calls;
  const one = calls.length === 1 && call !== undefined;
  assert.ok(one, `not one tools/call for ${tool}:\n${logText(events)}`);
  return call;
}

// ---- A server that dies mid-call ----

/**
 * Kills the server (wrap's child, from its `# start pid N` note) with `signal` once it has
 * reported progress on a call: a server that dies in the middle of a call.
 */
export async function killServerAtFirstProgress(logPath: string,
  signal: NodeJS.Signals): Promise<void> {
  let pid: number | undefined;
  await waitUntil(() => {
    const events = readLog(logPath);
    pid = startedPids(events)[0];
    return pid !== undefined && withMethod(events, "←", "notifications/progress").length > 0;
  }, "the server's first progress", 60_000);
  if (pid !== undefined) process.kill(pid, signal);
}

// ---- Excerpts for the documents ----

/** Where a test file records its logs for the documents, and how its folders are written. */
export interface ExcerptTarget {
  /** The environment variable that names the file, such as `QWEN_EXCERPT`. */
  variable: string;
  /** What the run's temporary folders read as, such as `/tmp/qwen-test`. */
  placeholder: string;
}

/**
 * When `target.variable` names a file, appends the log there under `label`, this clone's path as
 * /absolute/path and the run's `temporary` folders as `target.placeholder`: excerpts for the docs.
 */
export function saveExcerpt(target: ExcerptTarget, label: string, logPath: string,
  temporary: readonly string[]): void {
  const excerptFile = process.env[target.variable];
  if (excerptFile === undefined) return;
  let log = existsSync(logPath) ? readFileSync(logPath, "utf8") : "(no log)\n";
  for (const folder of temporary) log = log.split(folder).join(target.placeholder);
  appendFileSync(excerptFile, `---- ${label} ----\n${forReadme(log, [])}\n`);
}
