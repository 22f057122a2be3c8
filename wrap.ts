/**
 * wrap.ts — a recording proxy for any MCP stdio server: it changes nothing and loses nothing.
 *
 * How it works: the client starts wrap in place of the server, and wrap starts the server as
 * its child. Three pipes carry the bytes as they are, with backpressure: the client's stdin to
 * the server's stdin, the server's stdout to the client, the server's stderr to wrap's stderr.
 * Beside each pipe a tap sees the same chunks, cuts them into lines at each "\n" byte (MCP
 * basic/transports §stdio: one JSON-RPC message per line) and appends one event per line to
 * the log. Each chunk is passed on before the tap reads it; the tap catches up between reads,
 * and the log is written asynchronously and in order, so the traffic waits neither for the
 * tap's JSON parsing nor for the disk.
 *
 * The log (wire.log), one event per line: `<ISO-8601 UTC time> <mark> <text>`.
 *   →  client to server, then the line exactly as it crossed, bytes and all
 *   ←  server to client, likewise; a response first shows its round-trip time: `← (1.9 ms) {…}`
 *   !  a line the server wrote to stderr
 *   #  wrap's own events: start, end of input, signals, unanswered requests, exit
 * A response is paired with its request by id and direction: JSON-RPC is symmetric, and
 * servers send requests too (roots/list, elicitation/create). Its time runs from when wrap
 * saw the request to when wrap saw the response.
 *
 * Lifecycle (2025-11-25 basic/lifecycle §Shutdown, stdio): the end of stdin is passed on; a
 * server still running a grace period later gets SIGTERM, then SIGKILL. SIGINT, SIGTERM and
 * SIGHUP sent to wrap are passed on. wrap exits with the server's exit code, or 128 + the
 * signal's number when a signal ended it, as shells report it.
 */
import { spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { constants } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { finished } from "node:stream/promises";
import { fileURLToPath } from "node:url";

/** Where a line crossed: → client to server, ← server to client, ! server's stderr, # wrap itself. */
type Mark = "→" | "←" | "!" | "#";

/** A request still waiting for its response: its method, and when it crossed. */
type PendingRequest = { method: string; sentAt: number };

/** What the command line asks for: to run a command, to show the usage, or to refuse. */
type Invocation = { action: "run"; command: string; args: string[]; logPath: string } | { action: "help" } | { action: "misuse" };

/** How long the server may take to exit after the end of its input, and again after SIGTERM. */
const GRACE_MS = 2_000;

/** The direction that answers a request sent the other way. */
const OPPOSITE = { "→": "←", "←": "→" } as const;

/** Exit codes of our own, as shells use them: a bad command line, a command that cannot start. */
const MISUSE = 2, CANNOT_START = 127;

/** How many chunks the log may fall behind the traffic; past that, it catches up before reading more. */
const MAX_BACKLOG = 64;

/** The "\n" that ends each event in the log. */
const NEWLINE = Buffer.from("\n");

/** What --help prints. */
const USAGE = `Usage: wrap [--log FILE] [-- COMMAND [ARGS...]]
Runs COMMAND (default: server.mjs beside wrap.mjs), passing its stdio through unchanged, and records every line to FILE (default: wire.log beside wrap.mjs).\n`;

/** Reads the command line; `here` is wrap's folder, where the default server and log live. */
function parseArguments(argv: readonly string[], runtime: string, here: string): Invocation {
  const split = argv.indexOf("--");
  const options = split === -1 ? argv : argv.slice(0, split);
  const [command, ...args] = split === -1 ? [runtime, join(here, "server.mjs")] : argv.slice(split + 1);
  if (options.length === 1 && options[0] === "--help") return { action: "help" };
  if (!command || (options.length > 0 && (options.length !== 2 || options[0] !== "--log" || !options[1]))) return { action: "misuse" };
  return { action: "run", command, args, logPath: options[1] ?? join(here, "wire.log") };
}

/**
 * The lines a chunk completes, cut at each "\n" byte and without it. The start of a line that
 * has not ended yet waits in `pieces` for the next chunk: only the new chunk is searched, and
 * a line is joined once, so a long line costs linear time.
 */
function splitLines(pieces: Buffer[], chunk: Buffer): Buffer[] {
  const lines: Buffer[] = [];
  let start = 0;
  for (let end = chunk.indexOf("\n"); end !== -1; start = end + 1, end = chunk.indexOf("\n", start)) {
    // A line within one chunk is a view of it; only a line cut across chunks is copied.
    lines.push(pieces.length === 0 ? chunk.subarray(start, end) : Buffer.concat([...pieces.splice(0), chunk.subarray(start, end)]));
  }
  if (start < chunk.length) pieces.push(chunk.subarray(start));
  return lines;
}

/**
 * Pairs a line's message with the requests in flight: a request is kept under its direction
 * and id, and a response crossing the other way settles it. Returns the round-trip time in ms
 * when the line answers a request.
 */
function pair(pending: Map<string, PendingRequest>, mark: "→" | "←", line: Buffer, now: number): number | undefined {
  let message: unknown;
  try {
    message = JSON.parse(line.toString());
  } catch {
    return undefined; // Not JSON: logged all the same, paired with nothing.
  }
  // Nothing to pair: a notification or a batch (JSON-RPC 2.0 §6, gone from MCP in 2025-06-18) has no id,
  // and an error whose request could not be read has id null (JSON-RPC 2.0 §5).
  if (typeof message !== "object" || message === null || !("id" in message)) return undefined;
  if (typeof message.id !== "string" && typeof message.id !== "number") return undefined;
  // JSON.stringify keeps id 1 and id "1" apart, as JSON-RPC does.
  const id = JSON.stringify(message.id);
  // A request waits for its response, which will cross the other way.
  // (`return void` stores it and returns undefined: a request has no round-trip time of its own.)
  if ("method" in message && typeof message.method === "string") return void pending.set(`${mark} ${id}`, { method: message.method, sentAt: now });
  const request = pending.get(`${OPPOSITE[mark]} ${id}`);
  pending.delete(`${OPPOSITE[mark]} ${id}`);
  return request === undefined ? undefined : now - request.sentAt;
}

// ---- I/O: start the server, pipe the bytes, tap the lines, pass on the end ----

const invocation = parseArguments(process.argv.slice(2), process.execPath, dirname(fileURLToPath(import.meta.url)));
// --help is an answer, on stdout; a command line we cannot read is a mistake, on stderr.
if (invocation.action !== "run") {
  (invocation.action === "help" ? process.stdout : process.stderr).write(USAGE);
  process.exit(invocation.action === "help" ? 0 : MISUSE);
}
const { command, args, logPath } = invocation;

// A new log is private (0600): it holds every message, and messages can hold secrets.
const log = createWriteStream(logPath, { flags: "a", mode: 0o600 });
log.on("error", (error) => process.stderr.write(`wrap: cannot write log ${logPath}: ${error.message}; traffic still flows\n`));
const pending = new Map<string, PendingRequest>();

/**
 * The log's work, oldest first. The pipes pass each chunk on as it comes; the log catches up one
 * chunk per turn of the event loop, after the pipes have had their turn, so that a busy log does
 * not hold up the traffic (most of its cost is JSON.parse, to pair responses with requests).
 */
const backlog: (() => void)[] = [];

/** Queues the events for one chunk's lines, stamped (by the defaults) with the time they crossed. */
function record(mark: Mark, lines: readonly Buffer[], at = new Date(), now = performance.now()): void {
  if (backlog.push(() => write(mark, lines, at, now)) === 1) setImmediate(catchUp);
}

/** Does the oldest queued work, and more while the queue is too long; with `all`, all of it. */
function catchUp(all = false): void {
  backlog.shift()?.();
  while (backlog.length > (all ? 0 : MAX_BACKLOG)) backlog.shift()?.();
  if (backlog.length > 0) setImmediate(catchUp);
}

/** Writes one event per line, the line's bytes as they are, in one write: lines that came together share a time. */
function write(mark: Mark, lines: readonly Buffer[], at: Date, now: number): void {
  if (!log.writable || lines.length === 0) return;
  const head = `${at.toISOString()} ${mark} `;
  const events = lines.flatMap((line) => {
    const elapsed = mark === "→" || mark === "←" ? pair(pending, mark, line, now) : undefined;
    return [Buffer.from(elapsed === undefined ? head : `${head}(${elapsed.toFixed(1)} ms) `), line, NEWLINE];
  });
  log.write(Buffer.concat(events));
}

/** Logs one of wrap's own events at once, after every line that crossed before it. */
function note(text: string): void {
  catchUp(true);
  write("#", [Buffer.from(text)], new Date(), 0);
}

/** Passes a stream's bytes on untouched, and logs its lines from a tap beside the pipe. */
function relay(from: NodeJS.ReadableStream, to: NodeJS.WritableStream, mark: "→" | "←" | "!", end: boolean): void {
  const pieces: Buffer[] = [];
  // The pipe is set up first, so each chunk is passed on before the tap looks at it.
  from.pipe(to, { end });
  from.on("data", (chunk: Buffer) => record(mark, splitLines(pieces, chunk)));
  // A last line without "\n" is still a line.
  from.on("end", () => record(mark, pieces.length > 0 ? [Buffer.concat(pieces)] : []));
  // pipe() stops at a write error (EPIPE: the reader has gone); keep reading so the log sees every line.
  to.on("error", (error) => {
    note(`cannot pass ${mark} on: ${error.message}`);
    from.resume();
  });
}

/** Sends the server a signal, then SIGKILL if it still runs a grace period later: no path leaves an orphan. */
function stop(signal: NodeJS.Signals, why: string): void {
  if (child.exitCode !== null || child.signalCode !== null) return;
  note(`${why}: sending ${signal}`);
  child.kill(signal);
  setTimeout(() => stop("SIGKILL", `still running ${GRACE_MS} ms after ${signal}`), GRACE_MS);
}

/** Logs the requests left unanswered and the last event, waits until the log and the client have every byte, and exits. */
async function finish(code: number, last: string): Promise<void> {
  // note() lets the log catch up first, so only requests that truly went unanswered are listed.
  for (const [key, request] of pending) note(`unanswered ${key} ${JSON.stringify(request.method)}`);
  note(last);
  // Settled either way: a failed log or a gone client has nothing left to flush.
  await Promise.allSettled([finished(log.end()), finished(process.stdout.end())]);
  process.exit(code);
}

const child = spawn(command, args, { stdio: "pipe" });
if (child.pid !== undefined) note(`start pid ${child.pid}: ${[command, ...args].join(" ")}`);
child.on("error", (error) => {
  // Only a failed start leaves no pid. It is the user's to fix, so one plain line and no stack.
  if (child.pid !== undefined) return;
  process.stderr.write(`wrap: cannot start ${command}: ${error.message}\n`);
  void finish(CANNOT_START, `cannot start ${command}: ${error.message}`);
});
relay(process.stdin, child.stdin, "→", true);
relay(child.stdout, process.stdout, "←", true);
relay(child.stderr, process.stderr, "!", false);

process.stdin.on("end", () => note("end of input"));
process.stdin.on("end", () => setTimeout(() => stop("SIGTERM", `still running ${GRACE_MS} ms after the end of input`), GRACE_MS));
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => stop(signal, `received ${signal}`));
// A process the server started may hold its pipes open; wait for them no longer than the grace period.
child.on("exit", () => setTimeout(() => [child.stdout, child.stderr].forEach((stream) => stream.push(null)), GRACE_MS));
child.on("close", (code, signal) => {
  if (child.pid === undefined) return; // A failed start was reported by "error".
  // A signal's end is reported as shells do: 128 + its number.
  void finish(signal === null ? (code ?? 0) : 128 + constants.signals[signal], signal === null ? `exit code ${code}` : `exit signal ${signal}`);
});
