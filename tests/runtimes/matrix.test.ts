/**
 * The runtime matrix: each file runs, unmodified, on each runtime that README.md names.
 *
 * server.ts and wrap.ts run as sources on Node 24 (type stripping), Deno, Bun, and tsx on
 * the Node that runs this test; dist/server.mjs and dist/wrap.mjs run on Node 20, 22 and 24,
 * Deno and Bun. Every combination is a real child process over real pipes. The test types
 * the article's session one line at a time and waits for each reply, as a person at a
 * terminal does; then it closes stdin, and the process must exit 0 on its own, having
 * written nothing else to stdout. A wrap also leaves a log of every line it relayed. Each
 * server also runs with --http, on a free port of 127.0.0.1, and answers over HTTP.
 *
 * Node 20 is the Node running this test, the project's own. The other runtimes are the
 * registry packages pinned in tests/runtimes/package.json, each of which holds its binary,
 * so installing them runs no script and downloads nothing else. .ci/run does both:
 *   npm ci --prefix tests/runtimes
 *   node --import tsx --test tests/runtimes/matrix.test.ts
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ask, lines, root, serverPath, start, wrapPath } from "../helpers.ts";
import { ARTICLE_LINES, SERVER_REPLIES, SERVER_SESSION } from "../fixtures/article-session.ts";
import { build } from "../fixtures/runtime-tools.ts";

/** A runtime as test names show it, and how it runs a file. */
interface Runtime {
  /** Name and version, as in "Deno 2.9.6". */
  label: string;
  /** The executable. */
  command: string;
  /** The arguments before the file, given what the file may do (only Deno asks). */
  options: (grant: Grant) => string[];
}

/** What a process may touch beyond its own stdio: the environment, the commands it starts, the files it writes,
 * and whether it listens on the network (loopback only). */
interface Grant {
  env: boolean;
  run: readonly string[];
  write: readonly string[];
  net?: boolean;
}

/** How long one reply, or the exit after EOF, may take: generous for a cold start on a loaded machine. */
const PATIENCE_MS = 10_000;

/** A server's grant: stdio only. */
const NOTHING: Grant = { env: false, run: [], write: [] };

/** Where `npm ci --prefix tests/runtimes` puts the pinned runtimes. */
const installed = join(root, "tests", "runtimes", "node_modules");

/** Rejects after PATIENCE_MS, naming what was being waited for. */
function patiently<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`No ${what} within ${PATIENCE_MS} ms`)), PATIENCE_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Types the session into a process line by line, waiting for each reply, then closes stdin
 * and waits for the process to exit 0. Each failure shows the process's stderr.
 */
async function converse(command: string, args: readonly string[], cwd: string): Promise<void> {
  // The case's own folder is its temporary folder too: tsx's CLI leaves a folder for its IPC
  // pipes there, and the case's folder is removed at the end.
  const { child, finish, output, errors } = start(command, args, { cwd, env: { ...process.env, TMPDIR: cwd } });
  const withStderr = (error: unknown): never => {
    throw new Error(`${String(error)}\nstderr:\n${errors()}`);
  };
  // A process that exits mid-session fails the test at once, rather than when a reply times out.
  const exitedEarly = finish.then(({ code, signal }) => Promise.reject(new Error(`Exited mid-session: code ${code}, signal ${signal}`)));
  exitedEarly.catch(() => {});
  try {
    for (const { send, reply } of SERVER_SESSION) {
      if (reply === undefined) {
        child.stdin.write(`${send}\n`);
        continue;
      }
      const answer = await Promise.race([patiently(ask(child, send), `reply to ${send}`), exitedEarly]).catch(withStderr);
      assert.equal(answer, reply, `stderr:\n${errors()}`);
    }
    child.stdin.end();
    const { code, signal } = await patiently(finish, "exit after stdin closed").catch(withStderr);
    assert.deepEqual({ code, signal }, { code: 0, signal: null }, `stderr:\n${errors()}`);
    assert.deepEqual(lines(output()), SERVER_REPLIES, "stdout holds the replies and nothing else");
  } finally {
    // A test that failed half-way must not leave its process running.
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
}

/**
 * The lines of a wrap log in one direction, "→" client to server or "←" server to client, as
 * they crossed. A log line is `<time> <mark> [<notes> ][| ]<line>`: the notes are a response's
 * round-trip time, `(1.9 ms) `, and tags such as `[not JSON-RPC] `; a bar ends them before a
 * line that could be read as one (docs/wire-log.md).
 */
function logged(log: string, direction: "→" | "←"): string[] {
  const notes = String.raw`(?:\(\d+\.\d ms\) |\[[A-Za-z\d][\w -]*\] )*(?:\| )?`;
  const pattern = new RegExp(`^\\S+ ${direction} ${notes}(.*)$`);
  return lines(log).flatMap((line) => pattern.exec(line)?.slice(1, 2) ?? []);
}

/** Asserts that a wrap's log holds every line the client sent and every reply, each in its direction. */
function assertLogged(logPath: string): void {
  assert.ok(existsSync(logPath), `no log at ${logPath}`);
  const log = readFileSync(logPath, "utf8");
  assert.deepEqual(logged(log, "→"), ARTICLE_LINES, "the log holds each line sent, marked →");
  assert.deepEqual(logged(log, "←"), SERVER_REPLIES, "the log holds each reply, marked ←");
}

/**
 * A wrap's grant: it starts the server and appends to its log. Spawning reads the whole
 * environment, to pass it on to the server, so Deno wants all of it (--allow-env).
 */
function wrapGrant(serverCommand: string, logPath: string): Grant {
  return { env: true, run: [serverCommand], write: [logPath] };
}

/** The command line that runs `file` on `runtime` with `grant`, as [command, ...args]. */
function commandLine(runtime: Runtime, file: string, grant: Grant = NOTHING): [string, ...string[]] {
  return [runtime.command, ...runtime.options(grant), file];
}

// ---- The runtimes, found where tests/runtimes installs them, and one test per combination ----

/** The version of an installed package, read from its package.json. */
function versionOf(packageFolder: string): string {
  const manifest: unknown = JSON.parse(readFileSync(join(packageFolder, "package.json"), "utf8"));
  const version = typeof manifest === "object" && manifest !== null && "version" in manifest ? manifest.version : undefined;
  if (typeof version !== "string") throw new Error(`No version in ${packageFolder}/package.json`);
  return version;
}

/** A runtime that runs files with no options: Node and Bun. */
function plain(label: string, command: string): Runtime {
  return { label, command, options: () => [] };
}

/** A pinned Node from tests/runtimes, installed under an alias such as "node24". */
function pinnedNode(alias: string): Runtime {
  return plain(`Node ${versionOf(join(installed, alias))}`, join(installed, alias, "bin", "node"));
}

/** Deno, given the narrowest permissions that the file needs: none for a server, which only uses stdio. */
function deno(): Runtime {
  const folder = join(installed, "@deno", "linux-x64-glibc");
  const options = (grant: Grant): string[] => [
    "run",
    ...(grant.env ? ["--allow-env"] : []),
    ...(grant.run.length > 0 ? [`--allow-run=${grant.run.join(",")}`] : []),
    ...(grant.write.length > 0 ? [`--allow-write=${grant.write.join(",")}`] : []),
    ...(grant.net === true ? ["--allow-net=127.0.0.1"] : []),
  ];
  // Its real path: with no arguments a Deno wrap starts process.execPath, which is real, and --allow-run
  // does not follow symlinks.
  return { label: `Deno ${versionOf(folder)}`, command: realpathSync(join(folder, "deno")), options };
}

/** Bun, pinned in tests/runtimes. */
function bun(): Runtime {
  const folder = join(installed, "@oven", "bun-linux-x64");
  return plain(`Bun ${versionOf(folder)}`, join(folder, "bin", "bun"));
}

/** The Node running this test: the project's oldest supported Node, and what runs dist/ in CI. */
const node20 = plain(`Node ${process.versions.node}`, process.execPath);

/** tsx from the project's devDependencies, on the Node running this test: what `npx tsx server.ts` runs. */
const tsx: Runtime = {
  label: `tsx ${versionOf(join(root, "node_modules", "tsx"))} on Node ${process.versions.node}`,
  command: process.execPath,
  options: () => [join(root, "node_modules", "tsx", "dist", "cli.mjs")],
};

/** Fails at once, and says how to fix it, when the pinned runtimes are not installed. */
function requireInstalledRuntimes(): void {
  if (!existsSync(installed)) throw new Error("The pinned runtimes are missing: run npm ci --prefix tests/runtimes");
}

requireInstalledRuntimes();
const node22 = pinnedNode("node22");
const node24 = pinnedNode("node24");
const denoRuntime = deno();
const bunRuntime = bun();

/** Runtimes that run the TypeScript sources as they are. */
const SOURCE_RUNTIMES = [node24, denoRuntime, bunRuntime, tsx];

/** Runtimes that run the bundled dist/*.mjs files. */
const DIST_RUNTIMES = [node20, node22, node24, denoRuntime, bunRuntime];

/** One folder for every file the tests make, removed at the end. */
const scratchRoot = mkdtempSync(join(tmpdir(), "matrix-"));
after(() => rmSync(scratchRoot, { recursive: true, force: true }));

/** A fresh empty folder for one test's files. */
function scratch(): string {
  return mkdtempSync(join(scratchRoot, "case-"));
}

for (const runtime of SOURCE_RUNTIMES) {
  test(`server.ts serves the article's session on ${runtime.label}`, async () => {
    const [command, ...args] = commandLine(runtime, join(root, "server.ts"));
    await converse(command, args, scratch());
  });
}

/** An HTTP server's grant: the environment (its secrets come from there) and a port on 127.0.0.1. */
const LISTENER: Grant = { env: true, run: [], write: [], net: true };

/** What the server answers to one POST of `body` with `headers`, as JSON. */
async function post(url: string, body: object, headers: Record<string, string>): Promise<unknown> {
  const answer = await fetch(url, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json", ...headers } });
  return answer.json();
}

/** Starts `file` with --http on a free port, and answers a 2026-07-28 add and a legacy initialize over HTTP. */
async function serveOverHttp(runtime: Runtime, file: string): Promise<void> {
  const [command, ...args] = commandLine(runtime, file, LISTENER);
  // tsx's CLI leaves a folder for its IPC pipes in the temporary folder: the case's own.
  const cwd = scratch();
  const { child, errors, output, finish } = start(command, [...args, "--http", "127.0.0.1:0"], { cwd, env: { ...process.env, TMPDIR: cwd } });
  try {
    const listening = new Promise<void>((resolve) => {
      child.stderr.on("data", () => {
        if (/\/mcp\b/.test(errors())) resolve();
      });
    });
    await patiently(listening, "URL on stderr");
    const url = /(http:\/\/\S+\/mcp)\b/.exec(errors())?.[1] ?? "";
    const meta = { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} };
    const call = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "add", arguments: { a: 19, b: 23 }, _meta: meta } };
    const modern = { "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "add" };
    const sum = await patiently(post(url, call, modern), "answer to add");
    assert.match(JSON.stringify(sum), /"text":"19 \+ 23 = 42"/, `stderr:\n${errors()}`);
    const initialize = { jsonrpc: "2.0", id: 2, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "matrix", version: "1" } } };
    const handshake = await patiently(post(url, initialize, {}), "answer to initialize");
    assert.match(JSON.stringify(handshake), /"protocolVersion":"2025-11-25"/, `stderr:\n${errors()}`);
    assert.equal(output(), "", "nothing goes to stdout over HTTP");
  } finally {
    // SIGTERM, which tsx's CLI passes on to the node it starts (a SIGKILL would leave that one
    // running, holding this test's pipes); SIGKILL only for a server that ignores it.
    child.kill("SIGTERM");
    await patiently(finish, "exit after SIGTERM").catch(() => child.kill("SIGKILL"));
  }
}

for (const runtime of SOURCE_RUNTIMES) {
  test(`server.ts --http answers add in 2026-07-28 and initialize in 2025-11-25 over HTTP on ${runtime.label}`, async () => {
    await serveOverHttp(runtime, join(root, "server.ts"));
  });
}

for (const runtime of DIST_RUNTIMES) {
  test(`dist/server.mjs --http answers add in 2026-07-28 and initialize in 2025-11-25 over HTTP on ${runtime.label}`, async () => {
    await serveOverHttp(runtime, serverPath);
  });
}

for (const runtime of DIST_RUNTIMES) {
  test(`dist/server.mjs serves the article's session on ${runtime.label}`, async () => {
    const [command, ...args] = commandLine(runtime, serverPath);
    await converse(command, args, scratch());
  });
}

/** The wraps: a source and its runtimes, and the server it wraps when given a command. */
const WRAPS = [
  { wrap: join(root, "wrap.ts"), server: join(root, "server.ts"), name: "wrap.ts", serverName: "server.ts", runtimes: SOURCE_RUNTIMES },
  { wrap: wrapPath, server: serverPath, name: "dist/wrap.mjs", serverName: "dist/server.mjs", runtimes: DIST_RUNTIMES },
] as const;

for (const { wrap, server, name, serverName, runtimes } of WRAPS) {
  for (const runtime of runtimes) {
    test(`${name} relays the article's session to ${serverName} and logs it, both on ${runtime.label}`, async () => {
      const folder = scratch();
      const logPath = join(folder, "wire.log");
      const [serverCommand, ...serverArgs] = commandLine(runtime, server);
      const [command, ...args] = commandLine(runtime, wrap, wrapGrant(serverCommand, logPath));
      await converse(command, [...args, "--log", logPath, "--", serverCommand, ...serverArgs], folder);
      assertLogged(logPath);
    });
  }
}

for (const runtime of DIST_RUNTIMES) {
  test(`dist/wrap.mjs with no arguments wraps the server.mjs beside it and logs to the wire.log beside it, on ${runtime.label}`, async () => {
    // A copy of the two files alone in a folder, as a user would copy them.
    const folder = scratch();
    copyFileSync(serverPath, join(folder, "server.mjs"));
    copyFileSync(wrapPath, join(folder, "wrap.mjs"));
    const logPath = join(folder, "wire.log");
    const [command, ...args] = commandLine(runtime, join(folder, "wrap.mjs"), wrapGrant(runtime.command, logPath));
    // Run from another folder: "beside it" must mean beside wrap.mjs, not the working directory.
    await converse(command, args, scratch());
    assertLogged(logPath);
  });
}

/** server.ts with the runtime fixture's tools, among them `ask`, which elicits: built once. */
let askServer = "";
let removeAskServer = () => {};
before(async () => {
  ({ server: askServer, remove: removeAskServer } = await build());
});
after(() => removeAskServer());

/** One JSON-RPC message as a line, and the reply to it parsed. */
async function exchange(child: Parameters<typeof ask>[0], message: object): Promise<{ [key: string]: unknown; id?: unknown; result?: { [key: string]: unknown } }> {
  return JSON.parse(await patiently(ask(child, JSON.stringify({ jsonrpc: "2.0", ...message })), "reply"));
}

for (const runtime of DIST_RUNTIMES) {
  test(`a bundled server.ts asks the user in both eras on ${runtime.label}: node:crypto, imported when the first requestState is signed, signs and checks it`, async () => {
    const cwd = scratch();
    const [command, ...args] = commandLine(runtime, askServer);
    const { child, finish } = start(command, args, { cwd, env: { ...process.env, TMPDIR: cwd } });
    const yes = { action: "accept", content: { ok: true } };
    const meta = { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": { elicitation: {} } };
    const call = (id: number, extra: object) => ({ id, method: "tools/call", params: { name: "ask", arguments: { n: 1 }, ...extra, _meta: meta } });
    const asked = await exchange(child, call(1, {}));
    assert.equal(asked.result?.resultType, "input_required");
    const done = await exchange(child, call(2, { inputResponses: { "elicitation-1": yes }, requestState: asked.result?.requestState }));
    assert.equal(done.result?.resultType, "complete", JSON.stringify(done));
    const initialize = { protocolVersion: "2025-11-25", capabilities: { elicitation: {} }, clientInfo: { name: "matrix", version: "1" } };
    await exchange(child, { id: 3, method: "initialize", params: initialize });
    const request = await exchange(child, { id: 4, method: "tools/call", params: { name: "ask", arguments: { n: 1 } } });
    assert.equal(request.method, "elicitation/create");
    const result = await exchange(child, { id: request.id, result: yes });
    assert.equal(result.id, 4);
    child.stdin.end();
    assert.equal((await finish).code, 0);
  });
}
