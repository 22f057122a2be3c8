/**
 * What the agent CLI tests share. Each CLI (Codex, Gemini CLI, Qwen Code, Copilot CLI, pinned in
 * tests/agents/package.json) runs as a new user would run it, but shut in: a HOME of its own in a
 * temporary folder, a stand-in model API on 127.0.0.1, and the server registered with the CLI's
 * own `mcp add`, written as README's "Other agent CLIs" block gives it, through dist/wrap.mjs.
 * Whatever a CLI starts carries that HOME in its environment, which is how a test finds and
 * ends the processes it leaves behind (a daemon, a server it forgot).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { root, start, tempFolder, type Finished } from "../helpers.ts";

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
  if (!existsSync(path)) throw new Error(`${cli} is not installed: run npm ci --prefix tests/agents`);
  return path;
}

/**
 * README's registration line for `cli`, as words after the CLI's name: from the ```sh register
 * block (the server on its own) or the ```sh register-wrap block (through wrap). The clone's
 * folder is `root`; `server` and `log` take the place of README's server and wire.log.
 */
export function registration(cli: string, form: "register" | "register-wrap",
  { server = README_SERVER, log = README_LOG }: { server?: string; log?: string } = {}): string[] {
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
