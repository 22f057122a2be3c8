/**
 * Test helpers: run a built file as a real child process over real pipes, write lines to
 * its stdin, and read what comes back. Every test talks to the process from outside,
 * exactly as an MCP client does.
 */
import { execFileSync, spawn, type ChildProcess, type ChildProcessWithoutNullStreams } from "node:child_process";
import { after, before } from "node:test";
import { once } from "node:events";
import assert from "node:assert/strict";
import type { IncomingMessage } from "node:http";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";

/** The project's root folder. */
export const root = join(import.meta.dirname, "..");

/** Absolute paths of the built files under test. */
export const serverPath = join(root, "dist", "server.mjs");
export const wrapPath = join(root, "dist", "wrap.mjs");

/** How a finished child ended, and everything it printed. */
export interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Every child that `start` made and that has not closed yet. A test that fails halfway may never
 * reach its own cleanup; these are ended after the file's last test all the same, so that no
 * process outlives its test file and no run hangs on one.
 */
const running = new Set<ChildProcess>();

/** How long the children left at the end get after SIGTERM before SIGKILL. */
const TERM_GRACE_MS = 2_000;

/** Ends the children still running: SIGTERM first, so that wrap passes it on to its server. */
async function endLeftovers(): Promise<void> {
  const left = [...running];
  for (const child of left) child.kill("SIGTERM");
  const grace = new Promise((resolve) => setTimeout(resolve, TERM_GRACE_MS).unref());
  await Promise.race([Promise.all(left.map((child) => once(child, "close"))), grace]);
  for (const child of running) child.kill("SIGKILL");
}

// Only in a test file: bench/run.ts imports `start` too, and a hook there would make node:test
// run and print a report of its own.
if (/\.test\.ts$/.test(process.argv[1] ?? "")) after(endLeftovers);
process.on("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

/** Counts a child that a test spawned itself among those ended after the file's last test. */
export function track<Child extends ChildProcess>(child: Child): Child {
  running.add(child);
  child.on("close", () => running.delete(child));
  return child;
}

/** Starts a command with piped stdio; the caller writes to stdin and awaits `finish`. */
export function start(command: string, args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  const child: ChildProcessWithoutNullStreams = track(spawn(command, args, { stdio: "pipe", ...options }));
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const finish = (async (): Promise<Finished> => {
    const [code, signal] = await once(child, "close");
    return { code, signal, stdout, stderr };
  })();
  return { child, finish, output: () => stdout, errors: () => stderr };
}

/** Runs a command to its end with `input` on stdin (then EOF), and returns how it ended. */
export async function run(command: string, args: readonly string[], input: string | Buffer, options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  const { child, finish } = start(command, args, options);
  child.stdin.end(input);
  return finish;
}

/** Runs dist/server.mjs with the given lines (each followed by "\n") and returns how it ended. */
export function runServer(lines: readonly string[]): Promise<Finished> {
  return run(process.execPath, [serverPath], lines.map((line) => `${line}\n`).join(""));
}

/** Splits output into its non-empty lines. */
export function lines(text: string): string[] {
  return text.split("\n").filter((line) => line !== "");
}

/** Parses every stdout line as JSON; a line that is not JSON fails the test with the line in view. */
export function messages(text: string): unknown[] {
  return lines(text).map((line) => JSON.parse(line));
}

/** Sends one line to a child made by `start` and resolves with the next line it writes to stdout. */
export async function ask(child: ChildProcessWithoutNullStreams, line: string): Promise<string> {
  const reply = new Promise<string>((resolve) => {
    let buffered = "";
    const onData = (chunk: string) => {
      buffered += chunk;
      const end = buffered.indexOf("\n");
      if (end === -1) return;
      child.stdout.off("data", onData);
      resolve(buffered.slice(0, end));
    };
    child.stdout.on("data", onData);
  });
  child.stdin.write(`${line}\n`);
  return reply;
}

/** A reply as it comes off the wire; a test checks which fields are there. */
export interface Reply {
  jsonrpc: string;
  id: string | number | null;
  result?: { [key: string]: unknown; content?: { type: string; text: string }[]; isError?: boolean };
  error?: { code: number; message: string; data?: unknown };
}

/** A reply that never comes fails its suite after this long, instead of hanging the whole run. */
export const SUITE = { timeout: 60_000 };

/**
 * One dist/server.mjs shared by the tests of a file: started before them, its stdin ended after
 * them. `ask` sends a line and resolves with the line the server answers; `call` parses it.
 */
export function sharedServer() {
  let server: ReturnType<typeof start> | undefined;
  before(() => {
    server = start(process.execPath, [serverPath]);
  });
  after(async () => {
    server?.child.stdin.end();
    await server?.finish;
  });
  const askShared = (line: string): Promise<string> => {
    if (server === undefined) throw new Error("the shared server runs only inside the file's tests");
    return ask(server.child, line);
  };
  return { ask: askShared, call: async (line: string): Promise<Reply> => JSON.parse(await askShared(line)) };
}

/** The Mermaid blocks of a Markdown text, without their fences. */
export function mermaidBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/```mermaid\n([\s\S]*?)\n```/g)].map((match) => match[1] ?? "");
}

/** Folders made by `tempFolder`, removed when the test file's process exits, pass or fail. */
const temporary = new Set<string>();
process.on("exit", () => {
  for (const folder of temporary) rmSync(folder, { recursive: true, force: true });
});

/** A new empty folder under the system's temporary folder, gone when the test file ends. */
export function tempFolder(prefix: string): string {
  const folder = mkdtempSync(join(tmpdir(), prefix));
  temporary.add(folder);
  return folder;
}

/** Resolves once `check()` holds, looking every 5 ms; fails after `limitMs`, naming `what`,
 * so that a test waiting on a process that never says it cannot hang its file. */
export async function waitUntil(check: () => boolean, what: string, limitMs: number): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((go) => setTimeout(go, 5));
  }
}

/** server.ts's source with tool entries pasted before the `];` that closes TOOLS, and imports
 * after the file's own import, as README's "Make your own server" and docs/tools.md tell a reader to. */
export function withEntries(source: string, entries: readonly string[], imports: string): string {
  const tools = source.indexOf("const TOOLS: Tool[] = [");
  if (tools === -1) throw new Error("server.ts has no TOOLS table");
  const close = source.indexOf("\n];\n", tools);
  const pasted = `${source.slice(0, close)}\n${entries.join("\n")}${source.slice(close)}`;
  const ownImport = 'import { createInterface } from "node:readline";\n';
  if (!pasted.includes(ownImport)) throw new Error("server.ts no longer imports node:readline");
  // No imports, no line: the entries land where a reader pastes them, line for line.
  return imports === "" ? pasted : pasted.replace(ownImport, `${ownImport}${imports}\n`);
}

/**
 * A copy of the clone as a reader has it, in a new temporary folder: every file git tracks, or
 * would (untracked but not ignored), with node_modules linked in rather than copied. The
 * documents' commands run in it as written, and leave the clone itself untouched.
 */
export function cloneCopy(): string {
  const folder = tempFolder("clone-");
  const listed = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: root });
  for (const file of listed.toString().split("\0").filter((name) => name !== "" && existsSync(join(root, name)))) {
    mkdirSync(dirname(join(folder, file)), { recursive: true });
    copyFileSync(join(root, file), join(folder, file));
  }
  symlinkSync(join(root, "node_modules"), join(folder, "node_modules"));
  return folder;
}

/** Every file under a folder, as paths relative to it, sorted; node_modules is left out. */
export function filesUnder(folder: string): string[] {
  const entries = readdirSync(folder, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(folder, join(entry.parentPath, entry.name)))
    .filter((path) => !path.startsWith("node_modules"))
    .sort();
}

/** Reads the whole body of an HTTP message, as a test's stand-in server or proxy receives it. */
export async function readBody(message: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of message) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

/** Parses a body: JSON when it is JSON, else the text itself (undefined when empty). */
export function parseBody(text: string): unknown {
  if (text === "") return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed;
  } catch {
    return text;
  }
}

/** The text of an SDK client's tool result, and whether it is an error. */
export function toolText(result: unknown): { text: unknown; isError: unknown } {
  assert.ok(typeof result === "object" && result !== null && "content" in result, `not a CallToolResult: ${JSON.stringify(result)}`);
  const content: unknown = result.content;
  assert.ok(Array.isArray(content));
  const first: unknown = content[0];
  const text = typeof first === "object" && first !== null && "text" in first ? first.text : undefined;
  return { text, isError: "isError" in result ? result.isError : undefined };
}
