/**
 * wrap.ts — a recording proxy for any MCP stdio server: it changes nothing and loses nothing.
 *
 * How it works: the client starts wrap in place of the server, and wrap starts the server as
 * its child. Three pipes carry the bytes as they are, with backpressure: the client's stdin to
 * the server's stdin, the server's stdout to the client, the server's stderr to wrap's stderr.
 * Beside each pipe a tap is handed the same chunks after they are passed on. It cuts them into
 * lines at each "\n" byte (MCP basic/transports §stdio: one JSON-RPC message per line) and
 * logs one event per line, in synchronous writes: in a conversation as each chunk crosses, and
 * in a burst of pipelined traffic once the pipes pause, so that a burst never waits for the
 * tap's parsing. At a signal or the end of input the log catches up before anything else is
 * done, so a client that kills wrap finds every line that crossed in the log. The recorder is
 * three parts, a section each: the tap (lines, notes, pairing; no I/O), the log writer (when
 * to catch up, one write per catch-up) and the plumbing (spawn, relay, signals, finish).
 *
 * The log (wire.log), one event per line: `<ISO-8601 UTC time> <mark> [<notes> ]<line>`.
 *   →  client to server, then the line exactly as it crossed, bytes and all
 *   ←  server to client, likewise
 *   !  a line the server wrote to stderr
 *   #  wrap's own events: start, end of input, signals, unanswered requests, exit
 * The notes, in this order, each only when it applies:
 *   (1.9 ms)        a response's round-trip time, from its request to it, as wrap saw them
 *   [2097152 bytes] a line over 1 MiB, with its size
 *   [not UTF-8]     bytes that are not UTF-8, which every MCP client reads the messages as
 *   [CRLF]          a line that ends in "\r\n"
 *   [no request]    a response whose id matches no request in flight
 *   [id in use]     a request whose id is still waiting for an answer (basic §Requests)
 *   [not JSON-RPC]  a server's stdout line that is no message: stdio is for messages only
 * A response is paired with its request by id and direction: JSON-RPC is symmetric, and
 * servers send requests too (roots/list, elicitation/create).
 *
 * Lifecycle (2025-11-25 basic/lifecycle §Shutdown, stdio): shutdown is the client's. The end
 * of stdin is passed on, and wrap waits for the server as long as it runs. SIGINT, SIGTERM and
 * SIGHUP are passed on; a server still running a second later gets SIGKILL, which the client
 * would send next, to wrap, where it could not be passed on. wrap ends the server itself only
 * when the client is gone: wrap's stdout closed, or wrap's parent process gone. wrap exits
 * with the server's exit code, or 128 + the signal's number when a signal ended it.
 *
 * After the recorder come the readers of its logs (diagram, replay, redact; README, "Read a
 * log back"), each a section of its own with its constants before its functions, and last the
 * command line, which picks the recorder or a reader.
 */
import { spawn, type ChildProcessByStdio, type ChildProcessWithoutNullStreams }
  from "node:child_process";
import { isUtf8 } from "node:buffer";
import { closeSync, createReadStream, openSync, watch, watchFile, writeSync } from "node:fs";
import { open, readFile, stat, writeFile } from "node:fs/promises";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { constants } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import type { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

/** Where a line crossed: → client to server, ← server to client, ! server's stderr, # wrap. */
type Mark = "→" | "←" | "!" | "#";

/** A JSON-RPC 2.0 message by its kind (§4 request and notification, §5 response). */
type Message =
  | { kind: "request"; id: string | number; method: string; params: unknown }
  | { kind: "notification"; method: string; params: unknown }
  | { kind: "response"; id: string | number | null; result: unknown; error: unknown }
  | { kind: "other" };

/** Each kind of message on its own, named as the MCP schema names them. */
type JSONRPCRequest = Extract<Message, { kind: "request" }>;
type JSONRPCNotification = Extract<Message, { kind: "notification" }>;
type JSONRPCResponse = Extract<Message, { kind: "response" }>;

/** How long a server that has exited may still hold its pipes open, through its own children. */
const PIPES_GRACE_MS = 2_000;

/** Exit code for a command that cannot start, as shells use it. */
const CANNOT_START = 127;

/** True for a JSON object or array, whose own keys can be looked up. */
function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

/** One JSON value as a JSON-RPC 2.0 message, by its own keys: `toString` is never a method. */
function classify(value: unknown): Message {
  if (!isRecord(value) || Array.isArray(value) || value.jsonrpc !== "2.0") return { kind: "other" };
  // JSON.parse makes every key an own key, and none of these names is on Object.prototype.
  const { id, method, params, result, error } = value;
  const validId = typeof id === "string" || typeof id === "number";
  if (typeof method === "string" && validId) return { kind: "request", id, method, params };
  if (typeof method === "string" && id === undefined) {
    return { kind: "notification", method, params };
  }
  // A response has a result or an error, never both; its id is null when the request's id
  // could not be read (JSON-RPC 2.0 §5).
  const answers = (result !== undefined) !== (error !== undefined);
  if (answers && (validId || id === null)) return { kind: "response", id, result, error };
  return { kind: "other" };
}

/** What `run` returns, or undefined when it throws: JSON.parse and parseArgs report so. */
function attempt<T>(run: () => T): T | undefined {
  try {
    return run();
  } catch {
    return undefined;
  }
}

/** The messages of one line: one, or a batch's (JSON-RPC 2.0 §6); a line not JSON is other. */
function messagesOf(text: string): Message[] {
  // Text that is not JSON gives undefined, which JSON cannot hold: a message of kind other.
  const value = attempt((): unknown => JSON.parse(text));
  // An empty batch is no message at all (JSON-RPC 2.0 §6), and classify says so.
  return Array.isArray(value) && value.length > 0 ? value.map(classify) : [classify(value)];
}

// ---- The recorder, part 1: the tap, which cuts lines, notes them and pairs them ----
// The tap owns the start of each stream's line that has not ended yet, and the requests in
// flight. It turns what crossed into the log's events, and finds the warning wrap prints for
// a polluted stdout; it does no I/O, and never sees the pipes.

/** What the tap is handed, as it happened and when (performance.now()): in the log's order. */
type Crossing =
  | { kind: "chunk"; mark: "→" | "←" | "!"; chunk: Buffer; now: number }
  | { kind: "end"; mark: "→" | "←" | "!"; now: number }
  | { kind: "note"; text: string; now: number };

/** A request still waiting for its response: its method, and when it crossed. */
type PendingRequest = { method: string; sentAt: number };

/** The tap's state, all of it. */
type Tap = {
  /** The start of a line that has not ended yet, for each stream. */
  pieces: { "→": Buffer[]; "←": Buffer[]; "!": Buffer[] };
  /** Requests in flight under their direction and id, until a response the other way. */
  pending: Map<string, PendingRequest>;
  /** Whether a line on the server's stdout was not JSON-RPC: wrap warns of the first only. */
  polluted: boolean;
  /** Warnings the tap found for wrap's stderr, until the log writer prints them. */
  warnings: string[];
};

/** A line longer than this (1 MiB) is tagged with its size. */
const LARGE_LINE = 1_048_576;

/** The direction that answers a request sent the other way. */
const OPPOSITE = { "→": "←", "←": "→" } as const;

/** The byte "\r", which ends a line that a CRLF ended. */
const CR = 0x0d;

/** The "\n" that ends each event in the log. */
const NEWLINE = Buffer.from("\n");

/** The tag of a line on the server's stdout that is not a message. */
const POLLUTION = "[not JSON-RPC]";

/**
 * The lines a chunk completes, cut at each "\n" byte and without it. The start of a line that
 * has not ended yet waits in `pieces` for the next chunk: only the new chunk is searched, and
 * a line is joined once, so a long line costs linear time.
 */
function splitLines(pieces: Buffer[], chunk: Buffer): Buffer[] {
  const lines: Buffer[] = [];
  let start = 0;
  let end = chunk.indexOf("\n");
  while (end !== -1) {
    const piece = chunk.subarray(start, end);
    // A line within one chunk is a view of it; only a line cut across chunks is copied.
    lines.push(pieces.length === 0 ? piece : Buffer.concat([...pieces.splice(0), piece]));
    start = end + 1;
    end = chunk.indexOf("\n", start);
  }
  if (start < chunk.length) pieces.push(chunk.subarray(start));
  return lines;
}

/**
 * What the log notes of a line before its bytes: a response's round-trip time, then its tags.
 * A request is kept in `pending` under its direction and id until a response crossing the
 * other way settles it.
 */
function annotate(
  pending: Map<string, PendingRequest>, mark: "→" | "←", line: Buffer, now: number,
): string[] {
  // A Set, so that a batch with two unknown ids shows "[no request]" once.
  const tags = new Set<string>();
  let elapsed: string | undefined;
  if (line.length > LARGE_LINE) tags.add(`[${line.length} bytes]`);
  if (!isUtf8(line)) tags.add("[not UTF-8]");
  if (line[line.length - 1] === CR) tags.add("[CRLF]");
  for (const message of messagesOf(line.toString())) {
    // JSON.stringify keeps id 1 and id "1" apart, as JSON-RPC does.
    if (message.kind === "request") {
      const key = `${mark} ${JSON.stringify(message.id)}`;
      if (pending.has(key)) tags.add("[id in use]");
      else pending.set(key, { method: message.method, sentAt: now });
    }
    // An id of null answers a request that could not be read, so it pairs with nothing.
    if (message.kind === "response" && message.id !== null) {
      const key = `${OPPOSITE[mark]} ${JSON.stringify(message.id)}`;
      const request = pending.get(key);
      if (request === undefined) tags.add("[no request]");
      else elapsed ??= `(${(now - request.sentAt).toFixed(1)} ms)`;
      pending.delete(key);
    }
    // The server's stdout is for MCP messages only (basic/transports §stdio).
    if (message.kind === "other" && mark === "←") tags.add(POLLUTION);
  }
  // A batch's responses share a line, which shows the first one's time.
  return elapsed === undefined ? [...tags] : [elapsed, ...tags];
}

/** The one warning for a polluted stdout: the line, cut to a readable length, and what follows. */
function pollutionWarning(line: Buffer): string {
  const text = line.toString();
  const shown = JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text);
  return `wrap: the server wrote a line to stdout that is not JSON-RPC: ${shown}\n` +
    "wrap: MCP clients skip such a line or close the connection; a server logs to stderr\n";
}

/** A tap that has seen nothing yet. */
function newTap(): Tap {
  const pieces: Tap["pieces"] = { "→": [], "←": [], "!": [] };
  return { pieces, pending: new Map(), polluted: false, warnings: [] };
}

/** One line's event: its time, mark and notes, then the line's bytes as they are. */
function lineEvent(tap: Tap, mark: "→" | "←" | "!", line: Buffer, time: string, now: number) {
  const notes = mark === "!" ? [] : annotate(tap.pending, mark, line, now);
  if (!tap.polluted && notes.includes(POLLUTION)) {
    tap.polluted = true;
    tap.warnings.push(pollutionWarning(line));
  }
  return [Buffer.from(`${[time, mark, ...notes].join(" ")} `), line, NEWLINE];
}

/** The log's events for one crossing: one per line, or one for a note of wrap's own. */
function eventsOf(tap: Tap, crossing: Crossing): Buffer[] {
  const time = new Date(performance.timeOrigin + crossing.now).toISOString();
  if (crossing.kind === "note") return [Buffer.from(`${time} # ${crossing.text}\n`)];
  const { mark, now } = crossing;
  const waiting: Buffer[] = tap.pieces[mark];
  const lines = crossing.kind === "chunk" ? splitLines(waiting, crossing.chunk) : [];
  // A last line without "\n" is still a line.
  if (crossing.kind === "end" && waiting.length > 0) lines.push(Buffer.concat(waiting));
  return lines.flatMap((line) => lineEvent(tap, mark, line, time, now));
}

/** wrap's notes for the requests still in flight at `now`, each with how long it waited. */
function unansweredNotes(tap: Tap, now: number): string[] {
  return Array.from(tap.pending, ([key, request]) => {
    const waited = `waited ${(now - request.sentAt).toFixed(1)} ms`;
    return `unanswered ${key} ${JSON.stringify(request.method)} (${waited})`;
  });
}

// ---- The recorder, part 2: the log writer, which keeps the log up with the wire ----
// The log writer owns the log file and what the tap has not read yet. In a conversation it
// hands the tap each crossing as soon as the plumbing has passed it on, and writes its events
// at once: the log lags the wire by one chunk's work. A burst of pipelined traffic is more
// than the tap can read as it flows, so past AT_ONCE_RATE what crossed waits until the pipes
// are quiet for QUIET_MS, or the tap is too far or too long behind them: the burst flows at the
// pace of a bare pipe. Every write is synchronous, and at a signal or the end of input the
// writer catches up at once, so a SIGKILL a moment later finds those lines written. (A
// WriteStream writes later, from libuv's thread pool, and a SIGKILL loses what it still holds.)

/** The log writer's state, all of it. */
type LogWriter = {
  /** The log file's descriptor, open for appending; undefined once it has failed or closed. */
  fd: number | undefined;
  /** The log file's path, to name it in a warning. */
  path: string;
  /** The tap that turns what crossed into the log's events. */
  tap: Tap;
  /** What the tap has not read yet, oldest first: nothing, while the log keeps up. */
  unread: Crossing[];
  /** How many bytes of chunks `unread` holds. */
  behind: number;
  /** How many bytes the tap may still read at once, and when that was reckoned. */
  credit: number;
  creditAt: number;
  /** Whether a wait for quiet pipes is set. */
  waiting: boolean;
};

/**
 * How fast lines may cross and still be logged at once, in bytes a millisecond (500 kB/s), and
 * how many bytes the tap may save up for a large message. Pairing and tagging cost some 40 ns
 * a byte here: at this rate the tap takes 2% of a core, while a burst would need more than one.
 */
const AT_ONCE_RATE = 500;
const AT_ONCE_MAX = 16_384;

/** How long the pipes must be quiet before the tap catches up with a burst. */
const QUIET_MS = 5;

/** How far the tap may fall behind a burst, in bytes and in time, before it catches up. */
const MAX_BEHIND = 16 * 1_048_576;
const MAX_DELAY_MS = 1_000;

/** How many bytes the tap reads at a time as it catches up, so that traffic waits little. */
const SLICE = 65_536;

/** Closes the log file, once: a log that cannot even be closed has nothing left to lose. */
function closeFile(writer: LogWriter): void {
  const { fd } = writer;
  writer.fd = undefined;
  if (fd !== undefined) attempt(() => closeSync(fd));
}

/** Says once that the log cannot be written to, and stops writing to it: traffic still flows. */
function logFailed(writer: LogWriter, error: unknown): void {
  const why = error instanceof Error ? error.message : String(error);
  process.stderr.write(`wrap: cannot write log ${writer.path}: ${why}; traffic still flows\n`);
  closeFile(writer);
}

/** Opens the log to append to; a log that cannot be opened is reported once. */
function openLog(logPath: string): LogWriter {
  const writer: LogWriter = {
    fd: undefined, path: logPath, tap: newTap(), unread: [], behind: 0,
    credit: AT_ONCE_MAX, creditAt: performance.now(), waiting: false,
  };
  try {
    // A new log is private (0600): it holds every message, and messages can hold secrets.
    // Appending (O_APPEND) keeps each write whole beside another wrap's on the same log.
    writer.fd = openSync(logPath, "a", 0o600);
  } catch (error) {
    logFailed(writer, error);
  }
  return writer;
}

/** Hands the tap what waits for it, up to `bytes` of chunks, and logs that in one write. */
function catchUp(writer: LogWriter, bytes: number): void {
  const { tap, unread } = writer;
  let count = 0;
  let read = 0;
  while (count < unread.length && read < bytes) {
    const crossing = unread[count];
    read += crossing?.kind === "chunk" ? crossing.chunk.length : 0;
    count += 1;
  }
  writer.behind -= read;
  const events = unread.splice(0, count).flatMap((crossing) => eventsOf(tap, crossing));
  for (const warning of tap.warnings.splice(0)) process.stderr.write(warning);
  if (writer.fd === undefined || events.length === 0) return;
  const written = Buffer.concat(events);
  try {
    for (let at = 0; at < written.length;) at += writeSync(writer.fd, written, at);
  } catch (error) {
    logFailed(writer, error);
  }
}

/** Logs everything the tap has not read yet, now, a slice at a time. */
function flush(writer: LogWriter): void {
  while (writer.unread.length > 0) catchUp(writer, SLICE);
}

/** Keeps what crossed for the tap, and hands it over at once while the traffic allows. */
function logLater(writer: LogWriter, crossing: Crossing): void {
  writer.unread.push(crossing);
  if (crossing.kind === "chunk") writer.behind += crossing.chunk.length;
  const saved = writer.credit + (crossing.now - writer.creditAt) * AT_ONCE_RATE;
  writer.credit = Math.min(AT_ONCE_MAX, saved);
  writer.creditAt = crossing.now;
  if (writer.behind <= writer.credit) {
    writer.credit -= writer.behind;
    catchUp(writer, Infinity);
  } else if (!writer.waiting) {
    writer.waiting = true;
    setTimeout(whenQuiet, QUIET_MS, writer);
  }
}

/** Logs one of wrap's own events, after every line that crossed before it. */
function note(writer: LogWriter, text: string): void {
  logLater(writer, { kind: "note", text, now: performance.now() });
}

/** Catches up when the pipes are quiet, or the tap is too far or too long behind them. */
function whenQuiet(writer: LogWriter): void {
  const { unread } = writer;
  const now = performance.now();
  // The newest crossing (a note too) tells when anything last crossed; the oldest, how late
  // the log is.
  const quiet = now - (unread.at(-1)?.now ?? 0) >= QUIET_MS;
  const late = now - (unread[0]?.now ?? now) > MAX_DELAY_MS;
  const due = quiet || late || writer.behind > MAX_BEHIND;
  if (due) catchUp(writer, SLICE);
  writer.waiting = unread.length > 0;
  if (writer.waiting) setTimeout(whenQuiet, due ? 0 : QUIET_MS, writer);
}

/** Logs everything still unread, the requests left unanswered and a last event; closes the log. */
function closeLog(writer: LogWriter, last: string): void {
  // Catch up before reading the requests in flight: a response not read yet would be listed.
  flush(writer);
  for (const text of unansweredNotes(writer.tap, performance.now())) note(writer, text);
  note(writer, last);
  flush(writer);
  closeFile(writer);
}

// ---- The recorder, part 3: the plumbing, which starts the server and ends wrap ----
// The plumbing owns the server's process and wrap's own stdio and signals. It relays the
// bytes as they are and hands the log writer a copy, passes the end of input and signals on,
// stops the server when the client is gone, and exits as the server exited.

/** The plumbing's state: the server's command, its process, and the writer of its log. */
type Plumbing = { command: string; child: ChildProcessWithoutNullStreams; writer: LogWriter };

/**
 * How long a server may outlive a signal passed on before it gets SIGKILL: less than the 2 s
 * that the SDK's stdio client waits between its SIGTERM and its SIGKILL.
 */
const KILL_AFTER_MS = 1_000;

/** How often wrap looks whether its parent, the client, is still there. */
const PARENT_CHECK_MS = 500;

/**
 * Starts a command. spawn reports most failures by an "error" event, which the caller handles,
 * but throws a few (ENOTDIR, ELOOP): those end wrap here, in one plain line, as shells do.
 */
function spawned<T>(command: string, start: () => T): T {
  try {
    return start();
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    process.stderr.write(`wrap: cannot start ${command}: ${why}\n`);
    process.exit(CANNOT_START);
  }
}

/** Passes a stream's bytes on untouched, and hands each chunk to the log writer as well. */
function relay(
  plumbing: Plumbing, from: NodeJS.ReadableStream, to: NodeJS.WritableStream,
  mark: "→" | "←" | "!", end: boolean,
): void {
  const { writer } = plumbing;
  from.pipe(to, { end });
  // A line the client sends is passed on first, and a line the server sends is handed to the
  // log writer first: in a conversation the client never holds a response the log lacks,
  // since the log writer writes at once, and the request it answers was logged before it came.
  const log = (chunk: Buffer) => {
    logLater(writer, { kind: "chunk", mark, chunk, now: performance.now() });
  };
  if (mark === "←") from.prependListener("data", log);
  else from.on("data", log);
  from.on("end", () => logLater(writer, { kind: "end", mark, now: performance.now() }));
  // pipe() stops at a write error (EPIPE: the reader has gone); keep reading so the log sees
  // every line.
  to.on("error", (error: Error) => {
    note(writer, `cannot pass ${mark} on: ${error.message}`);
    from.resume();
    if (mark === "←") stop(plumbing, "SIGTERM", "the client is gone: wrap's stdout is closed");
  });
}

/** Sends the server a signal, and SIGKILL if it still runs a moment later. */
function stop(plumbing: Plumbing, signal: NodeJS.Signals, why: string): void {
  const { child, writer } = plumbing;
  if (child.exitCode !== null || child.signalCode !== null) return;
  note(writer, `${why}: sending ${signal}`);
  // The client may send SIGKILL next, at once: every line that crossed is logged first.
  flush(writer);
  child.kill(signal);
  if (signal === "SIGKILL") return;
  const still = `still running ${KILL_AFTER_MS} ms after ${signal}`;
  setTimeout(() => stop(plumbing, "SIGKILL", still), KILL_AFTER_MS);
}

/** Closes the log with a last event, waits for wrap's stdout, and exits. */
async function finish(plumbing: Plumbing, code: number, last: string): Promise<void> {
  closeLog(plumbing.writer, last);
  // stdout is waited for by a write's callback, which comes once every earlier byte is written
  // (or the client is gone): on a terminal stdout's "finish" never comes, and wrap would exit
  // 0, late, whatever happened.
  await new Promise<void>((resolve) => process.stdout.write("", () => resolve()));
  process.exit(code);
}

/** Ends wrap as the server ended: a failed start, an exit code, or a signal. */
function watchServer(plumbing: Plumbing): void {
  const { command, child } = plumbing;
  child.on("error", (error) => {
    // Only a failed start leaves no pid. It is the user's to fix, so one plain line and no stack.
    if (child.pid !== undefined) return;
    process.stderr.write(`wrap: cannot start ${command}: ${error.message}\n`);
    void finish(plumbing, CANNOT_START, `cannot start ${command}: ${error.message}`);
  });
  // A process the server started may hold its pipes open; wait for them no longer than the
  // grace period.
  child.on("exit", () => {
    setTimeout(() => {
      child.stdout.push(null);
      child.stderr.push(null);
    }, PIPES_GRACE_MS);
  });
  child.on("close", (code, signal) => {
    if (child.pid === undefined) return; // A failed start was reported by "error".
    // A signal's end is reported as shells do: 128 + its number.
    if (signal === null) void finish(plumbing, code ?? 0, `exit code ${code}`);
    else void finish(plumbing, 128 + constants.signals[signal], `exit signal ${signal}`);
  });
}

/** Passes the client's end of input and signals on, and stops the server when it is gone. */
function watchClient(plumbing: Plumbing): void {
  // The end of input is the client's first step of a shutdown; the next are its own.
  process.stdin.on("end", () => {
    note(plumbing.writer, "end of input");
    flush(plumbing.writer);
  });
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.on(signal, () => stop(plumbing, signal, `received ${signal}`));
  }
  // A client that exits without a signal leaves wrap to its parent's parent (often init).
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(watch);
    stop(plumbing, "SIGTERM", `the client is gone: its pid ${parent} exited`);
  }, PARENT_CHECK_MS);
  watch.unref();
}

/** Runs the recorder: starts the server, relays its stdio and records every line to the log. */
function proxy(command: string, args: readonly string[], logPath: string): void {
  const writer = openLog(logPath);
  const child = spawned(command, () => spawn(command, args, { stdio: "pipe" }));
  const plumbing = { command, child, writer };
  const commandLine = [command, ...args].join(" ");
  if (child.pid !== undefined) note(writer, `start pid ${child.pid}: ${commandLine}`);
  watchServer(plumbing);
  relay(plumbing, process.stdin, child.stdin, "→", true);
  relay(plumbing, child.stdout, process.stdout, "←", true);
  relay(plumbing, child.stderr, process.stderr, "!", false);
  // Registered after the relays, so that the log has stdin's last line before "end of input".
  watchClient(plumbing);
}

// ---- Readers: one parser of wire.log, shared by diagram, replay and redact ----

/** One event of a wire.log, with the messages of a → or ← line classified once. */
type LogEvent = {
  time: string; mark: Mark; elapsed: string | undefined; tags: string[]; text: string;
  messages: Message[];
};

/** The marks, to narrow a mark read from the log. */
const MARKS: readonly Mark[] = ["→", "←", "!", "#"];

/** An event's head: time, mark, a response's round-trip time, then the hygiene tags in order. */
const EVENT_HEAD = new RegExp(String.raw`^\S+ ([→←!#]) (?:\((\d+(?:\.\d+)?) ms\) )?` +
  [String.raw`\d+ bytes`, "not UTF-8", "CRLF", "no request", "id in use", "not JSON-RPC"]
    .map((tag) => String.raw`(?:\[${tag}\] )?`).join(""));

/** Reads one line of a wire.log into its event, or undefined when it is not one. */
function parseEvent(line: string): LogEvent | undefined {
  const head = EVENT_HEAD.exec(line);
  const mark = MARKS.find((each) => each === head?.[1]);
  if (head === null || mark === undefined) return undefined;
  const text = line.slice(head[0].length);
  // Most lines carry no tag: no list is made for them.
  const found = head[0].includes("[") ? head[0].matchAll(/\[(.+?)\] /g) : [];
  const tags = Array.from(found, ([tag]) => tag.slice(1, -2));
  const messages = mark === "→" || mark === "←" ? messagesOf(text) : [];
  const time = line.slice(0, line.indexOf(" "));
  return { time, mark, elapsed: head[2], tags, text, messages };
}

/** Reads a wire.log's text into its events; a line that is not an event is skipped. */
function parseLog(log: string): LogEvent[] {
  return log.split("\n").flatMap((line) => parseEvent(line) ?? []);
}

/** The value at a path of own keys, or undefined: `toString` is never found on a message. */
function dig(value: unknown, ...keys: string[]): unknown {
  const [key, ...rest] = keys;
  if (key === undefined) return value;
  return isRecord(value) && Object.hasOwn(value, key) ? dig(value[key], ...rest) : undefined;
}

/** The words that are there, one space apart: a summary leaves out what a message lacks. */
function words(...parts: (string | undefined)[]): string {
  return parts.filter((part) => part !== undefined).join(" ");
}

// ---- Readers: elicitation, as a server asks it in either era ----
// Legacy (2025-06-18 and 2025-11-25, client/elicitation): the server sends its own
// elicitation/create request, and the client answers it with an ElicitResult. Modern
// (2026-07-28, basic/patterns/mrtr): the server answers a call with an input_required result,
// and the client retries the call under a new id with `inputResponses` and the result's
// `requestState`. diagram and show read both.

/** One of an input_required result's `inputRequests`: its method, and the message it shows. */
type InputRequest = { method: string; message: string | undefined };

/** What a reader remembers of one session's multi round-trip requests (basic/patterns/mrtr). */
type Rounds = {
  /** The round a retry is, by the requestState of the input_required result it follows. */
  next: Map<string, number>;
  /** Each request's round by direction and id until its response, which may lead to the next. */
  waiting: Map<string, number>;
};

/** A session's rounds before any call. */
function newRounds(): Rounds {
  return { next: new Map(), waiting: new Map() };
}

/** An elicitation/create request's message to the user (client/elicitation), if it has one. */
function elicitationMessage(method: unknown, params: unknown): string | undefined {
  const message = dig(params, "message");
  return method === "elicitation/create" && typeof message === "string" ? message : undefined;
}

/** An input_required result's requests (basic/patterns/mrtr); undefined for any other message. */
function inputRequestsOf(message: Message): InputRequest[] | undefined {
  if (message.kind !== "response") return undefined;
  if (dig(message.result, "resultType") !== "input_required") return undefined;
  const requests = dig(message.result, "inputRequests");
  // The keys are the server's to choose (basic/patterns/mrtr): only the values are read.
  return (isRecord(requests) ? Object.values(requests) : []).map((request) => {
    const method = dig(request, "method");
    const named = typeof method === "string" ? method : "(no method)";
    return { method: named, message: elicitationMessage(method, dig(request, "params")) };
  });
}

/** Input requests in brief: each method once, then the messages it asks, each `quote`d. */
function briefAsks(requests: readonly InputRequest[], quote: (text: string) => string): string {
  const methods = new Set(requests.map((request) => request.method));
  return Array.from(methods, (method) => {
    const shown = requests.filter((request) => request.method === method)
      .flatMap((request) => request.message === undefined ? [] : [quote(request.message)]);
    return shown.length === 0 ? method : `${method} ${shown.join(", ")}`;
  }).join(", ");
}

/** An ElicitResult as `accept {"confirm":true}`, `decline` or `cancel`; undefined otherwise. */
function elicitAnswer(message: Message): string | undefined {
  if (message.kind !== "response") return undefined;
  // client/elicitation: an ElicitResult is the one result whose `action` is a string.
  const action = dig(message.result, "action");
  if (typeof action !== "string") return undefined;
  const content = dig(message.result, "content");
  return content === undefined ? action : `${action} ${JSON.stringify(content)}`;
}

/**
 * A request's place among a call's rounds: none for a first call, `round 3` for a retry whose
 * requestState an earlier input_required result gave, `retry` for any other. Its round is kept
 * until its response, which may give the requestState of the next.
 */
function roundOfRequest(rounds: Rounds, mark: "→" | "←", message: Message): string | undefined {
  if (message.kind !== "request") return undefined;
  const state = dig(message.params, "requestState");
  const retry = state !== undefined || dig(message.params, "inputResponses") !== undefined;
  const known = typeof state === "string" ? rounds.next.get(state) : undefined;
  const round = retry ? known : 1;
  if (round !== undefined) rounds.waiting.set(`${mark}${JSON.stringify(message.id)}`, round);
  // A retry whose requestState was never seen (a log that starts mid-call) has no number.
  if (round === undefined) return "retry";
  return round > 1 ? `round ${round}` : undefined;
}

/** Settles a response's request, and numbers the retry that an input_required result asks for. */
function settleRound(rounds: Rounds, mark: "→" | "←", message: Message): void {
  if (message.kind !== "response") return;
  const key = `${OPPOSITE[mark]}${JSON.stringify(message.id)}`;
  const round = rounds.waiting.get(key);
  rounds.waiting.delete(key);
  const state = dig(message.result, "requestState");
  const asks = inputRequestsOf(message) !== undefined;
  // basic/patterns/mrtr: the retry sends this requestState back byte for byte.
  if (round !== undefined && asks && typeof state === "string") rounds.next.set(state, round + 1);
}

/** Follows one message through its session's rounds: a retry's place (`round 2`, `retry`). */
function followRounds(rounds: Rounds, mark: "→" | "←", message: Message): string | undefined {
  settleRound(rounds, mark, message);
  return roundOfRequest(rounds, mark, message);
}

// ---- Reader: redact, a copy of the log that can be shared ----

/** What stands in for a secret. */
const REDACTED = "[redacted]";

/** Keys whose values are secrets, whatever the values hold (case-insensitive). */
const SECRET_KEY = /^(?:authorization|cookie|password|secret|token|api_?key)$|_(?:token|key)$/i;

/** Secrets known by their shape, in any text: bearer credentials and well-known API keys. */
const SECRET_TEXT =
  /\bBearer\s+[^\s"',;]+|\b(?:sk-[\w-]{16,}|ghp_[A-Za-z0-9]{20,}|xox[a-z]-[\w-]{8,})/g;

/** A secret key and its value in text that is not JSON: `token=…`, `"api_key": "…"`. */
const SECRET_PAIR = new RegExp(String.raw`\b(authorization|cookie|password|secret|token|` +
  String.raw`api_?key|\w+_(?:token|key))("? ?[:=] ?"?)[^\s"',;&]+`, "gi");

/** JSON.stringify's replacer for redaction: a secret key's value goes, and secret-shaped text. */
function hideSecret(key: string, value: unknown): unknown {
  if (SECRET_KEY.test(key)) return REDACTED;
  return typeof value === "string" ? value.replace(SECRET_TEXT, REDACTED) : value;
}

/** A line's text redacted: JSON stays valid JSON, and is rewritten only when it held a secret. */
function redactText(text: string): string {
  const value = attempt((): unknown => JSON.parse(text));
  if (value === undefined) {
    // Shapes first: in `Authorization: Bearer xyz`, the pair would take `Bearer` alone.
    return text.replace(SECRET_TEXT, REDACTED).replace(SECRET_PAIR, `$1$2${REDACTED}`);
  }
  const redacted = JSON.stringify(value, hideSecret);
  return redacted === JSON.stringify(value) ? text : redacted;
}

/** Redacts each event's text and keeps its head; a line that is no event is masked whole. */
function redactLog(log: string): string {
  return log.split("\n").map((line) => {
    const head = EVENT_HEAD.exec(line)?.[0];
    return head === undefined ? redactText(line) : head + redactText(line.slice(head.length));
  }).join("\n");
}

// ---- Reader: diagram, the session as Mermaid sequence diagrams for a post ----

/** Zenn's limit on one code block, in characters. */
const BLOCK_LIMIT = 2_000;

/**
 * Characters that mean something to Mermaid 8.10 or 11 inside a label, and look-alikes for
 * them: `;` ends a statement, `#…;` is an entity, `<` starts HTML, `%%{` a directive.
 */
const LOOKALIKES = new Map([["#", "＃"], [";", "；"], ["<", "‹"], [">", "›"], ["%", "％"],
  ["&", "＆"], ['"', "'"], ["{", "（"], ["}", "）"]]);

/** Each kind's arrow: solid for a request, open for a notification, dashed for a response. */
const ARROWS = { request: "->>", notification: "-)", response: "-->>", other: "->>" } as const;

/** Text made safe for a Mermaid label: one line, look-alikes, at most `max` characters. */
function label(text: string, max: number): string {
  const safe = text.replace(/[#;<>%&"{}]/g, (found) => LOOKALIKES.get(found) ?? found);
  // A newline would end the statement (Mermaid's grammar): every control character goes.
  const characters = Array.from(safe.replace(/[\s\u0000-\u001f\u007f]+/g, " ").trim());
  const short = characters.length > max ? [...characters.slice(0, max - 1), "…"] : characters;
  return short.length === 0 ? "(empty)" : short.join("");
}

/** A side's name: clientInfo in a request's params, serverInfo in a result, or in `_meta`. */
function sideName(messages: readonly Message[], field: "params" | "result", info: string) {
  const names = messages.flatMap((message) => [dig(message, field, info, "name"),
    dig(message, field, "_meta", `io.modelcontextprotocol/${info}`, "name")]);
  return names.find((name) => typeof name === "string");
}

/** What a request's arrow says: its method, tool, elicitation message and round (`(round 2)`). */
function describeRequest(method: string, params: unknown, place: string | undefined): string {
  const tool = method === "tools/call" ? dig(params, "name") : undefined;
  const asked = elicitationMessage(method, params);
  const named = typeof tool === "string" ? tool : undefined;
  return words(method, named, asked, place === undefined ? undefined : `(${place})`);
}

/** What a message's arrow says: what it is, never its whole payload. */
function describe(message: Message, text: string, place: string | undefined): string {
  if (message.kind === "other") return `not JSON-RPC ${label(text, 20)}`;
  if (message.kind !== "response") return describeRequest(message.method, message.params, place);
  const content = dig(message.result, "content", "0", "text");
  if (message.error !== undefined) return `error ${String(dig(message.error, "code"))}`;
  if (dig(message.result, "isError") === true) return `isError ${String(content)}`;
  const asks = inputRequestsOf(message);
  // An arrow has room for the question, not for the method it travels in.
  const questions = asks?.map((request) => request.message ?? request.method).join(", ");
  if (questions !== undefined) return `input required: ${questions}`;
  return elicitAnswer(message) ?? (typeof content === "string" ? content : "result");
}

/** The diagram's statements for one event: an arrow per message, a note for the rest. */
function statements(event: LogEvent, rounds: Rounds): string[] {
  if (event.mark === "#") return [`Note over C,S: ${label(event.text, 70)}`];
  if (event.mark === "!") return [`Note right of S: ${label(event.text, 50)}`];
  const mark = event.mark;
  const [from, to] = mark === "→" ? ["C", "S"] : ["S", "C"];
  const arrows = event.messages.map((message) => {
    const said = describe(message, event.text, followRounds(rounds, mark, message));
    // Only a response has a round-trip time (a batch's line shows its first response's).
    const timed = message.kind === "response" && event.elapsed !== undefined;
    const text = timed ? `${event.elapsed} ms ${said}` : said;
    return `${from}${ARROWS[message.kind]}${to}: ${label(text, 50)}`;
  });
  return [...arrows, ...event.tags.map((tag) => `Note over C,S: ${label(tag, 30)}`)];
}

/** Every event's statements in order; each session's rounds are numbered from its start. */
function sessionStatements(events: readonly LogEvent[]): string[] {
  let rounds = newRounds();
  const drawn: string[] = [];
  for (const event of events) {
    if (event.mark === "#" && event.text.startsWith("start ")) rounds = newRounds();
    drawn.push(...statements(event, rounds));
  }
  return drawn;
}

/** The session as Markdown: numbered ```mermaid blocks of at most BLOCK_LIMIT characters. */
function diagram(events: readonly LogEvent[]): string {
  const messages = events.flatMap((event) => event.messages);
  const start = events.find((event) => event.mark === "#" && event.text.startsWith("start pid "));
  // No serverInfo (a server that failed, or never answered): the command's first two words.
  const words = start?.text.replace(/^start pid \d+: /, "").split(" ").slice(0, 2) ?? ["server"];
  const command = words.map((word) => word.split("/").at(-1)).join(" ");
  const head = ["sequenceDiagram",
    `participant C as ${label(sideName(messages, "params", "clientInfo") ?? "client", 40)}`,
    `participant S as ${label(sideName(messages, "result", "serverInfo") ?? command, 40)}`];
  let part: string[] = [];
  const parts = [part];
  for (const statement of sessionStatements(events)) {
    // Room is left for the fences and the note that joins a block to the one before.
    if ([...head, ...part, statement].join("\n").length > BLOCK_LIMIT - 100) {
      part = [];
      parts.push(part);
    }
    part.push(statement);
  }
  return parts.map((lines, index) => {
    const count = `${index + 1} of ${parts.length}`;
    const title = parts.length > 1 ? [`Part ${count}`, ""] : [];
    const joint = index > 0 ? [`Note over C,S: part ${count}, continued from part ${index}`] : [];
    return [...title, "```mermaid", ...head, ...joint, ...lines, "```", ""].join("\n");
  }).join("\n");
}

// ---- Reader: replay, a golden test of any stdio server from one recorded session ----

/** One place where a replayed value differs from the recorded one. */
type Difference = { path: string[]; expected: unknown; actual: unknown };

/** How much of each string replay shows on either side of where two strings part. */
const AROUND = 40;

/** The most lines and characters one differing response takes in replay's report. */
const REPORT_LINES = 6;
const REPORT_CHARACTERS = 1_000;

/** The places where a replayed value differs from the recorded one; key order ignored. */
function differences(expected: unknown, actual: unknown, path: string[],
  ignore: string[][]): Difference[] {
  const ignored = ignore.some((pattern) => pattern.length === path.length &&
    pattern.every((key, index) => key === "*" || key === path[index]));
  if (ignored) return [];
  if (isRecord(expected) && isRecord(actual) && Array.isArray(expected) === Array.isArray(actual)) {
    const keys = new Set([...Object.keys(expected), ...Object.keys(actual)]);
    return [...keys].flatMap((key): Difference[] => {
      return differences(dig(expected, key), dig(actual, key), [...path, key], ignore);
    });
  }
  if (JSON.stringify(expected) === JSON.stringify(actual)) return [];
  return [{ path, expected, actual }];
}

/** A value as replay shows it: JSON, redacted unless asked not to, cut to 80 characters. */
function brief(value: unknown, redact: boolean): string {
  if (value === undefined) return "nothing";
  const text = JSON.stringify(value, redact ? hideSecret : undefined);
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

/** A string around a position, at most AROUND characters on either side, as JSON. */
function around(text: string, at: number): string {
  const from = Math.max(0, at - AROUND);
  const to = Math.min(text.length, at + AROUND);
  const before = from > 0 ? "…" : "";
  const after = to < text.length ? "…" : "";
  return `${before}${JSON.stringify(text.slice(from, to))}${after}`;
}

/** One difference as one line: the JSON path, then both values, or where two strings part. */
function describeDifference({ path, expected, actual }: Difference, redact: boolean): string {
  const where = path.length === 0 ? "(the whole message)" : path.join(".");
  const secret = redact && path.some((key) => SECRET_KEY.test(key));
  if (secret) return `${where}: differs, in a redacted value`;
  if (typeof expected !== "string" || typeof actual !== "string") {
    return `${where}: expected ${brief(expected, redact)}, got ${brief(actual, redact)}`;
  }
  const shownExpected = redact ? expected.replace(SECRET_TEXT, REDACTED) : expected;
  const shownActual = redact ? actual.replace(SECRET_TEXT, REDACTED) : actual;
  if (shownExpected === shownActual) return `${where}: differs, in a redacted value`;
  let at = 0;
  while (shownExpected[at] === shownActual[at]) at += 1;
  return `${where}: strings part at character ${at}: expected ${around(shownExpected, at)}, ` +
    `got ${around(shownActual, at)}`;
}

/** One differing response's report: a line naming it, then its differences, kept short. */
function report(name: string, found: Difference[], redact: boolean): string {
  const shown = found.slice(0, REPORT_LINES - 2).map((each) => {
    return `  ${describeDifference(each, redact)}`;
  });
  const more = found.length - shown.length;
  if (more > 0) shown.push(`  (${more} more)`);
  const text = [`✗ ${name}`, ...shown].join("\n");
  const short = text.length > REPORT_CHARACTERS;
  return short ? `${text.slice(0, REPORT_CHARACTERS - 1)}…` : text;
}

/** A server under replay: the process, what it has sent that replay has not used yet, and a
 * signal that aborts when it has exited. */
type Replayed = {
  server: ChildProcessByStdio<Writable, Readable, null>;
  lines: ReturnType<typeof createInterface>;
  responses: Extract<Message, { kind: "response" }>[];
  /** The ids of the requests the server has sent, as JSON, so that id 1 and "1" differ. */
  requested: Set<string>;
  exited: AbortSignal;
};

/** Starts the command to replay to, and collects what it writes. */
function startReplayed(command: string, args: string[]): Replayed {
  const server = spawned(command, () => {
    return spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
  });
  server.on("error", (error) => {
    if (server.pid !== undefined) return; // Only a failed start leaves no pid.
    process.stderr.write(`wrap: cannot start ${command}: ${error.message}\n`);
    process.exit(CANNOT_START);
  });
  // A server that has exited cannot read: what it left unanswered shows as missing.
  server.stdin.on("error", () => {});
  const exited = new AbortController();
  server.on("close", () => exited.abort());
  // A process the server started may hold its stdout open; wait for it no longer than the grace.
  server.on("exit", () => setTimeout(() => server.stdout.destroy(), PIPES_GRACE_MS).unref());
  const replayed: Replayed = { server, lines: createInterface({ input: server.stdout }),
    responses: [], requested: new Set(), exited: exited.signal };
  replayed.lines.on("line", (line) => {
    for (const message of messagesOf(line)) {
      if (message.kind === "response") replayed.responses.push(message);
      if (message.kind === "request") replayed.requested.add(JSON.stringify(message.id));
    }
  });
  return replayed;
}

/** Waits until `check` holds, the server has exited, or `timeoutMs` has passed. */
async function waitFor(replayed: Replayed, check: () => boolean, timeoutMs: number) {
  const signal = AbortSignal.any([replayed.exited, AbortSignal.timeout(timeoutMs)]);
  while (!check() && !signal.aborted) {
    await once(replayed.lines, "line", { signal }).catch(() => undefined);
  }
}

/** The requestStates a replayed server wrote in place of the recorded ones. A server signs its
 * state anew on each run (basic/patterns/mrtr: it is opaque to the client), so a retry is sent
 * with this run's, and the state itself is no difference. */
type States = Map<string, string>;

/** The path of an input_required result's requestState, left out of the comparison. */
const REQUEST_STATE_PATH = ["result", "requestState"];

/** Notes the state a replayed response gave where the recorded one gave another. */
function rememberState(states: States, recorded: JSONRPCResponse, actual: JSONRPCResponse) {
  const before = dig(recorded.result, "requestState");
  const now = dig(actual.result, "requestState");
  if (typeof before === "string" && typeof now === "string") states.set(before, now);
}

/** A recorded line with each requestState the replayed server replaced put back as its own. */
function withStates(text: string, states: States): string {
  return text.replace(/"requestState":"([^"\\]*)"/g, (found, state: string) => {
    const replayed = states.get(state);
    return replayed === undefined ? found : `"requestState":${JSON.stringify(replayed)}`;
  });
}

/** Replays a log to a command, prints what differs and one summary line; 0 when all match. */
async function replay(events: readonly LogEvent[], command: string, args: string[],
  options: { ignore: string[][]; timeoutMs: number; redact: boolean }): Promise<number> {
  const { ignore, timeoutMs, redact } = options;
  const replayed = startReplayed(command, args);
  const { server, responses } = replayed;
  const methods = new Map<string, string>(); // A request's method by its id, to name its answer.
  const tally = { match: 0, differ: 0, missing: 0 };
  const states: States = new Map();
  const ignored = [...ignore, REQUEST_STATE_PATH];
  for (const event of events) {
    for (const message of event.messages) {
      // JSON.stringify keeps id 1 and id "1" apart; only requests and responses are used below.
      const id = JSON.stringify("id" in message ? message.id : null);
      if (message.kind === "request" && event.mark === "→") methods.set(id, message.method);
      // The client answered a request of the server's only once it had come; so does replay.
      const answersServer = message.kind === "response" && event.mark === "→";
      if (answersServer) await waitFor(replayed, () => replayed.requested.has(id), timeoutMs);
      if (message.kind !== "response" || event.mark !== "←") continue;
      const answers = (each: { id: unknown }) => JSON.stringify(each.id) === id;
      // The client sent its next line only after this response came back; so does replay.
      await waitFor(replayed, () => responses.some(answers), timeoutMs);
      const index = responses.findIndex(answers);
      const actual = index === -1 ? undefined : responses.splice(index, 1)[0];
      if (actual !== undefined) rememberState(states, message, actual);
      const found = actual === undefined ? [] : differences(message, actual, [], ignored);
      const outcome = actual === undefined ? "missing" : found.length > 0 ? "differ" : "match";
      tally[outcome] += 1;
      const name = methods.has(id) ? `${id} ${JSON.stringify(methods.get(id))}` : id;
      if (actual === undefined) process.stdout.write(`✗ ${name}: missing\n`);
      if (found.length > 0) process.stdout.write(`${report(name, found, redact)}\n`);
    }
    if (event.mark === "→") server.stdin.write(`${withStates(event.text, states)}\n`);
  }
  return finishReplay(replayed, tally, timeoutMs);
}

/** Ends the server's input, waits for it, and prints the summary; 0 when all matched. */
async function finishReplay(replayed: Replayed, tally: { match: number; differ: number;
  missing: number }, timeoutMs: number): Promise<number> {
  const { server, responses, exited } = replayed;
  server.stdin.end();
  // A server that outlives the end of its input is stopped after the same time limit; unref'd,
  // so that a server that exits in time leaves no timer holding wrap.
  setTimeout(() => server.kill("SIGKILL"), timeoutMs).unref();
  if (!exited.aborted) await once(exited, "abort");
  for (const left of responses) {
    process.stdout.write(`✗ ${JSON.stringify(left.id)}: unexpected\n`);
  }
  const { match, differ, missing } = tally;
  process.stdout.write(`replay: ${match + differ + missing} responses, ${match} match, ` +
    `${differ} differ, ${missing} missing, ${responses.length} unexpected\n`);
  return differ + missing + responses.length === 0 ? 0 : 1;
}

// ---- Reader: show, the log as a person reads it, whole or as it grows ----

/** How show prints, and what it remembers across events. */
type Shower = {
  width: number; colour: boolean; redact: boolean; methods: string[]; errorsOnly: boolean;
  /** When the session began, for each event's time since its start. */
  sessionStart: number;
  /** Each request's method by direction and id, so that a response is filtered as its request. */
  asked: Map<string, string>;
  /** The session's multi round-trip requests, so that a retry shows its round. */
  rounds: Rounds;
  skipped: number;
};

/** The terminal colours show uses, as SGR codes. */
const COLOURS = { "→": "36", "←": "35", "!": "33", "#": "1", error: "31" } as const;

/** A request or notification's method, and the tool's name for tools/call. */
function methodOf(message: Message): string {
  if (message.kind !== "request" && message.kind !== "notification") return "";
  const tool = message.method === "tools/call" ? dig(message.params, "name") : undefined;
  return typeof tool === "string" ? `${message.method} ${tool}` : message.method;
}

/** Whether a response reports a failure: a JSON-RPC error, or a tool's isError. */
function failed(message: Message): boolean {
  if (message.kind !== "response") return false;
  return message.error !== undefined || dig(message.result, "isError") === true;
}

/** A request in a few words: method, id, a retry's round, and its arguments or message. */
function requestSummary(message: JSONRPCRequest, place: string | undefined) {
  const args = dig(message.params, "arguments") ?? message.params;
  // An elicitation is read for its message to the user (client/elicitation), not its schema.
  const asked = elicitationMessage(message.method, message.params);
  const carried = asked ?? (args === undefined ? undefined : JSON.stringify(args));
  return words(methodOf(message), `#${JSON.stringify(message.id)}`, place, carried);
}

/** A notification in a few words: a cancellation's request and reason, a progress's step. */
function notificationSummary(message: JSONRPCNotification): string {
  if (message.method === "notifications/cancelled") {
    const requestId = JSON.stringify(dig(message.params, "requestId"));
    return `${message.method} #${requestId} ${String(dig(message.params, "reason") ?? "")}`;
  }
  const progress = dig(message.params, "progress");
  const total = dig(message.params, "total");
  const of = total === undefined ? "" : `/${String(total)}`;
  const step = `${String(progress)}${of}`;
  return progress === undefined ? methodOf(message) : `${methodOf(message)} ${step}`;
}

/** A response in a few words: id, round trip, then an error, what it asks, or what it says. */
function responseSummary(message: JSONRPCResponse, elapsed: string | undefined) {
  const time = elapsed === undefined ? undefined : `${elapsed} ms`;
  const id = words(`#${JSON.stringify(message.id)}`, time);
  if (message.error !== undefined) {
    const code = dig(message.error, "code");
    return `${id} error ${String(code)} ${String(dig(message.error, "message"))}`;
  }
  const asks = inputRequestsOf(message);
  const quoted = (text: string) => JSON.stringify(text);
  if (asks !== undefined) return `${id} input_required ${briefAsks(asks, quoted)}`;
  const said = dig(message.result, "content", "0", "text");
  const result = elicitAnswer(message) ??
    (typeof said === "string" ? said : JSON.stringify(message.result));
  return `${id} ${dig(message.result, "isError") === true ? "isError" : "result"} ${result}`;
}

/** What one message is, in a few words and a summary of what it carries. */
function summary(message: Message, elapsed: string | undefined, text: string,
  place: string | undefined): string {
  if (message.kind === "other") return `not JSON-RPC: ${text}`;
  if (message.kind === "request") return requestSummary(message, place);
  if (message.kind === "notification") return notificationSummary(message);
  return responseSummary(message, elapsed);
}

/** Whether the filters let a message through; a response goes as its request went. */
function passes(shower: Shower, mark: "→" | "←", message: Message): boolean {
  if (message.kind === "request") {
    shower.asked.set(`${mark}${JSON.stringify(message.id)}`, methodOf(message));
  }
  if (shower.errorsOnly && !failed(message)) return false;
  if (shower.methods.length === 0) return true;
  const id = "id" in message ? JSON.stringify(message.id) : "";
  const asked = shower.asked.get(`${OPPOSITE[mark]}${id}`);
  const method = message.kind === "response" ? asked : methodOf(message);
  return shower.methods.some((wanted) => method === wanted || method?.startsWith(`${wanted} `));
}

/** One printed line: cut to the width with "…", coloured on a terminal. */
function fitted(shower: Shower, time: string, mark: string, text: string, colour: string) {
  const characters = Array.from(`${time} ${mark} ${text.replace(/[\u0000-\u001f\u007f]/g, " ")}`);
  const long = characters.length > shower.width;
  const cut = long ? [...characters.slice(0, shower.width - 1), "…"] : characters;
  const line = cut.join("");
  return shower.colour ? `\u001b[${colour}m${line}\u001b[0m` : line;
}

/** The lines show prints for one event: one per message that passes, or none. */
function showEvent(shower: Shower, event: LogEvent): string[] {
  const at = Date.parse(event.time);
  const start = event.mark === "#" && event.text.startsWith("start ");
  if (start) shower.sessionStart = at;
  if (start) shower.rounds = newRounds();
  if (start) return [fitted(shower, "───", "#", event.text, COLOURS["#"])];
  const time = `+${((at - shower.sessionStart) / 1000).toFixed(3)}s`;
  const tags = event.tags.map((tag) => `[${tag}] `).join("");
  const filtering = shower.methods.length > 0 || shower.errorsOnly;
  if (event.mark === "!" || event.mark === "#") {
    const line = fitted(shower, time, event.mark, tags + event.text, COLOURS[event.mark]);
    return filtering ? [] : [line];
  }
  const mark = event.mark;
  return event.messages.flatMap((message) => {
    // Every message is followed, shown or not, so that a retry's round is counted right.
    const place = followRounds(shower.rounds, mark, message);
    if (!passes(shower, mark, message)) return [];
    const colour = failed(message) ? COLOURS.error : COLOURS[mark];
    const said = summary(message, event.elapsed, event.text, place);
    return [fitted(shower, time, mark, tags + said, colour)];
  });
}

/** Prints the complete lines of some text, and returns what is left after the last "\n". */
function showLines(shower: Shower, text: string): string {
  const lines = text.split("\n");
  const rest = lines.pop() ?? "";
  const printed: string[] = [];
  for (const line of lines) {
    const event = parseEvent(shower.redact ? redactLog(line) : line);
    if (event === undefined && line !== "") shower.skipped += 1;
    if (event !== undefined) printed.push(...showEvent(shower, event));
  }
  if (printed.length > 0) process.stdout.write(`${printed.join("\n")}\n`);
  return rest;
}

/** Reads what a log holds past `offset`, a MiB at a time, and shows its complete lines. */
async function showFrom(shower: Shower, path: string, offset: number, rest: Buffer) {
  const file = await open(path, "r");
  const slice = Buffer.alloc(1_048_576);
  let at = offset;
  let held = rest;
  for (;;) {
    const { bytesRead } = await file.read(slice, 0, slice.length, at);
    if (bytesRead === 0) break;
    at += bytesRead;
    const text = Buffer.concat([held, slice.subarray(0, bytesRead)]);
    const end = text.lastIndexOf(0x0a) + 1;
    showLines(shower, text.subarray(0, end).toString("utf8"));
    held = Buffer.from(text.subarray(end));
  }
  await file.close();
  return { offset: at, rest: held };
}

/** Follows a growing log until SIGINT: each change is read from where the last read ended. */
async function follow(shower: Shower, path: string, start: { offset: number; rest: Buffer }) {
  let read = start;
  let reading = Promise.resolve();
  const catchUp = () => {
    reading = reading.then(async () => {
      const size = (await stat(path).catch(() => undefined))?.size ?? read.offset;
      if (size < read.offset) {
        process.stdout.write("─── the log was cut or replaced: reading it from its start\n");
        read = { offset: 0, rest: Buffer.alloc(0) };
      }
      read = await showFrom(shower, path, read.offset, read.rest).catch(() => read);
    });
  };
  // inotify tells of a write at once; a one-second look also sees a log that was replaced.
  watch(path, catchUp).on("error", () => {});
  watchFile(path, { interval: 1_000 }, catchUp);
  process.on("SIGINT", () => process.exit(0));
  await new Promise(() => {});
}

/** wrap show: prints a log one line per message; with `follow`, goes on as it grows. */
async function show(path: string,
  options: Omit<Shower, "sessionStart" | "asked" | "rounds" | "skipped">,
  following: boolean): Promise<void> {
  const shower: Shower = {
    ...options, sessionStart: 0, asked: new Map(), rounds: newRounds(), skipped: 0,
  };
  const read = await showFrom(shower, path, 0, Buffer.alloc(0)).catch((error: unknown): never => {
    return cannot(`read ${path}`, error);
  });
  if (following) await follow(shower, path, read);
  showLines(shower, `${read.rest.toString("utf8")}\n`);
  if (shower.skipped > 0) {
    process.stdout.write(`skipped ${shower.skipped} lines that are not wire.log events\n`);
  }
}

// ---- Reader: stats, figures per method and per session, read as a stream ----

/** Figures for one kind of request: its direction, method, and tool for tools/call. */
type RequestFigures = {
  direction: "→" | "←"; method: string; tool: string | undefined;
  count: number; errors: number;
  /** How many round trips took each time, by tenths of a millisecond, as the log writes them:
   * a few thousand counts, however long the log, and percentiles that are exact. */
  roundTrips: Map<number, number>;
};

/** One session's figures, from its `# start` line to the next one. */
type SessionFigures = {
  start: string; end: string; command: string;
  requests: Map<string, RequestFigures>;
  /** Requests still waiting for their answer, by direction and id: the key of their figures. */
  waiting: Map<string, string>;
  notifications: Map<string, number>;
  messages: { "→": { count: number; bytes: number }; "←": { count: number; bytes: number } };
  tags: Map<string, number>;
  stderrLines: number;
};

/** A new session's figures. */
function newSession(start: string, command: string): SessionFigures {
  return {
    start, end: start, command, requests: new Map(), waiting: new Map(),
    notifications: new Map(), tags: new Map(), stderrLines: 0,
    messages: { "→": { count: 0, bytes: 0 }, "←": { count: 0, bytes: 0 } },
  };
}

/** Adds one to a count in a map. */
function countIn(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

/** Counts a request under its method (and tool), and keeps it waiting for its answer. */
function countRequest(session: SessionFigures, mark: "→" | "←", message: Message): void {
  if (message.kind !== "request") return;
  const name = dig(message.params, "name");
  const tool = message.method === "tools/call" && typeof name === "string" ? name : undefined;
  const key = `${mark} ${message.method}${tool === undefined ? "" : ` ${tool}`}`;
  const figures = session.requests.get(key) ??
    { direction: mark, method: message.method, tool, count: 0, errors: 0, roundTrips: new Map() };
  figures.count += 1;
  session.requests.set(key, figures);
  session.waiting.set(`${mark}${JSON.stringify(message.id)}`, key);
}

/** Settles the request a response answers: an error, a tool's isError, its round trip. */
function countResponse(session: SessionFigures, mark: "→" | "←", message: Message,
  elapsed: string | undefined): void {
  if (message.kind !== "response") return;
  const waitingKey = `${OPPOSITE[mark]}${JSON.stringify(message.id)}`;
  const figures = session.requests.get(session.waiting.get(waitingKey) ?? "");
  if (figures === undefined) return;
  session.waiting.delete(waitingKey);
  const toolError = figures.tool !== undefined && dig(message.result, "isError") === true;
  if (message.error !== undefined || toolError) figures.errors += 1;
  if (elapsed === undefined) return;
  const tenths = Math.round(Number(elapsed) * 10);
  figures.roundTrips.set(tenths, (figures.roundTrips.get(tenths) ?? 0) + 1);
}

/** Adds one event to the session it belongs to. */
function countEvent(session: SessionFigures, event: LogEvent): void {
  session.end = event.time;
  for (const tag of event.tags) countIn(session.tags, /^\d+ bytes$/.test(tag) ? "over 1 MiB" : tag);
  if (event.mark === "!") session.stderrLines += 1;
  if (event.mark !== "→" && event.mark !== "←") return;
  const mark = event.mark;
  session.messages[mark].bytes += Buffer.byteLength(event.text) + 1;
  for (const message of event.messages) {
    if (message.kind !== "other") session.messages[mark].count += 1;
    const notified = message.kind === "notification" ? `${mark} ${message.method}` : undefined;
    if (notified !== undefined) countIn(session.notifications, notified);
    countRequest(session, mark, message);
    countResponse(session, mark, message, event.elapsed);
  }
}

/** The nearest-rank percentile of some round trips, in ms, or null when there are none. */
function percentileOf(roundTrips: ReadonlyMap<number, number>, percent: number): number | null {
  const total = [...roundTrips.values()].reduce((sum, count) => sum + count, 0);
  const rank = Math.max(1, Math.ceil((percent / 100) * total));
  let seen = 0;
  for (const tenths of [...roundTrips.keys()].sort((a, b) => a - b)) {
    seen += roundTrips.get(tenths) ?? 0;
    if (seen >= rank) return tenths / 10;
  }
  return null;
}

/** A session's figures as plain data: the shape `wrap stats --json` prints (README). */
function sessionJson(session: SessionFigures) {
  const requests = [...session.requests.values()].map((figures) => ({
    direction: figures.direction, method: figures.method, tool: figures.tool ?? null,
    count: figures.count, errors: figures.errors,
    p50Ms: percentileOf(figures.roundTrips, 50), p95Ms: percentileOf(figures.roundTrips, 95),
    maxMs: percentileOf(figures.roundTrips, 100),
  }));
  const notifications = [...session.notifications].map(([key, count]) => {
    return { direction: key.slice(0, 1), method: key.slice(2), count };
  });
  return {
    start: session.start, command: session.command,
    lengthMs: Date.parse(session.end) - Date.parse(session.start),
    requests, notifications, messages: session.messages,
    unanswered: session.waiting.size, tags: Object.fromEntries(session.tags),
    stderrLines: session.stderrLines,
  };
}

/** A figure for the text table: ms with one decimal, or a dash. */
function ms(value: number | null): string {
  return value === null ? "—" : value.toFixed(1);
}

/** A session's figures as text, for a person. */
function sessionText(figures: ReturnType<typeof sessionJson>, index: number): string[] {
  const seconds = (figures.lengthMs / 1000).toFixed(1);
  const lines = [`session ${index + 1} · ${figures.start} · ${seconds} s · ${figures.command}`];
  const widths = [36, 6, 7, 8, 8, 8];
  const cells = (row: string[]) => {
    return `  ${row.map((cell, at) => (at === 0 ? cell.padEnd(widths[at] ?? 0) :
      cell.padStart(widths[at] ?? 0))).join("")}`;
  };
  lines.push(cells(["request", "count", "errors", "p50 ms", "p95 ms", "max ms"]));
  for (const each of figures.requests) {
    const name = `${each.direction} ${each.method}${each.tool === null ? "" : ` ${each.tool}`}`;
    const times = [ms(each.p50Ms), ms(each.p95Ms), ms(each.maxMs)];
    lines.push(cells([label(name, 36), String(each.count), String(each.errors), ...times]));
  }
  const listed = (items: string[]) => (items.length === 0 ? "none" : items.join(" · "));
  const notes = figures.notifications.map((each) => {
    return `${each.direction} ${each.method} ${each.count}`;
  });
  lines.push(`  notifications: ${listed(notes)}`);
  const way = (mark: "→" | "←") => {
    const { count, bytes } = figures.messages[mark];
    return `${mark} ${count} (${bytes.toLocaleString("en-US")} bytes)`;
  };
  lines.push(`  messages: ${way("→")} · ${way("←")}`);
  const tags = Object.entries(figures.tags).map(([tag, count]) => `[${tag}] ${count}`);
  lines.push(`  unanswered: ${figures.unanswered} · stderr lines: ${figures.stderrLines}` +
    ` · tags: ${listed(tags)}`);
  return lines;
}

/** Reads a log line by line, never whole, into its sessions' figures. */
async function readStats(path: string): Promise<{ sessions: SessionFigures[]; skipped: number }> {
  const sessions: SessionFigures[] = [];
  let skipped = 0;
  const lines = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
  for await (const line of lines) {
    const event = parseEvent(line);
    if (event === undefined) {
      if (line !== "") skipped += 1;
      continue;
    }
    const start = event.mark === "#" && event.text.startsWith("start ");
    if (start || sessions.length === 0) {
      const command = start ? event.text.replace(/^start pid \d+: /, "") : "(no start line)";
      sessions.push(newSession(event.time, command));
    }
    const session = sessions.at(-1);
    if (session !== undefined) countEvent(session, event);
  }
  return { sessions, skipped };
}

/** wrap stats: prints a log's figures, as text or as JSON. */
async function stats(path: string, json: boolean): Promise<void> {
  const read = await readStats(path).catch((error: unknown) => cannot(`read ${path}`, error));
  const sessions = read.sessions.map(sessionJson);
  if (json) {
    process.stdout.write(`${JSON.stringify({ sessions, skipped: read.skipped }, null, 2)}\n`);
    return;
  }
  const blocks = sessions.map((session, index) => sessionText(session, index).join("\n"));
  if (blocks.length === 0) blocks.push("no session: this file holds no wire.log event");
  if (read.skipped > 0) blocks.push(`skipped ${read.skipped} lines that are not wire.log events`);
  process.stdout.write(`${blocks.join("\n\n")}\n`);
}

// ---- The command line: record (the default), or read a log back ----

/** Every option wrap takes, as node:util's parseArgs reads them. */
const OPTIONS = {
  log: { type: "string" }, out: { type: "string" }, "no-redact": { type: "boolean" },
  ignore: { type: "string", multiple: true }, timeout: { type: "string" },
  json: { type: "boolean" }, follow: { type: "boolean" }, errors: { type: "boolean" },
  method: { type: "string", multiple: true },
} as const;

/** The options each command takes, by its first word; recording has no word. */
const TAKES = new Map<string | undefined, readonly string[]>([[undefined, ["log"]],
  ["diagram", ["out", "no-redact"]], ["replay", ["ignore", "timeout", "no-redact"]], ["redact", []],
  ["stats", ["json"]], ["show", ["follow", "method", "errors", "no-redact"]]]);

/** What --help prints. */
const USAGE = `Usage: wrap [--log FILE] [-- COMMAND [ARGS...]]
Runs COMMAND (default: server.mjs beside wrap.mjs), passing its stdio through unchanged,
and records every line to FILE (default: wire.log beside wrap.mjs).
Reading a log back (README, "Read a log back"):
  wrap diagram [--out FILE] [--no-redact] WIRE_LOG
  wrap replay [--ignore PATH]... [--timeout MS] [--no-redact] WIRE_LOG -- COMMAND [ARGS...]
  wrap redact WIRE_LOG
  wrap show [--follow] [--method NAME]... [--errors] [--no-redact] WIRE_LOG
  wrap stats [--json] WIRE_LOG\n`;

/** Exit code for a command line wrap cannot read, as shells use it. */
const MISUSE = 2;

/** The longest --timeout: what both setTimeout and AbortSignal.timeout take (2^31 - 1 ms). */
const LONGEST_TIMEOUT_MS = 2_147_483_647;

/** A command line wrap cannot read: the usage, on stderr, since it is a mistake. */
function misuse(): never {
  process.stderr.write(USAGE);
  process.exit(MISUSE);
}

/** A file a reader cannot read or write: one plain line, no stack, and exit code 1. */
function cannot(what: string, error: unknown): never {
  process.stderr.write(`wrap: cannot ${what}: ${String(error)}\n`);
  process.exit(1);
}

/** How show prints here: the terminal's width and colours, and the command line's filters. */
function showOptions() {
  const terminal = process.stdout.isTTY === true;
  const noColour = (process.env.NO_COLOR ?? "") !== "";
  // A terminal that says nothing of its size, or something too narrow to use, gets 80.
  const columns = terminal ? process.stdout.columns ?? 0 : 0;
  return {
    width: columns >= 20 ? columns : 80, colour: terminal && !noColour,
    redact: values["no-redact"] !== true, methods: values.method ?? [],
    errorsOnly: values.errors === true,
  };
}

const argv = process.argv.slice(2);
const here = dirname(fileURLToPath(import.meta.url));
if (argv.length === 1 && argv[0] === "--help") {
  process.stdout.write(USAGE); // An answer, so on stdout.
  process.exit(0);
}
// Before `--`, wrap's own words; after it, the command wrap runs, whose words are its own.
const split = argv.indexOf("--");
const ownWords = split === -1 ? argv : argv.slice(0, split);
const defaultServer = [process.execPath, join(here, "server.mjs")];
const [command, ...args] = split === -1 ? defaultServer : argv.slice(split + 1);
// parseArgs throws on an unknown option, or an option without its value.
const config = { args: ownWords, options: OPTIONS, allowPositionals: true } as const;
const parsed = attempt(() => parseArgs(config));
if (parsed === undefined) misuse();
const { values, positionals: [reader, logPath, ...extra] } = parsed;
const allowed = TAKES.get(reader) ?? [];
const timeoutMs = Number(values.timeout ?? 5_000);
const unknownWord = !TAKES.has(reader) || extra.length > 0;
const foreignOption = Object.keys(values).some((option) => !allowed.includes(option));
// An empty word names no file and no command.
const emptyWord = [values.log, values.out, logPath, command].includes("");
const badTimeout = !Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > LONGEST_TIMEOUT_MS;
// replay runs the command named after `--`; the other readers run none.
const commandMisplaced = reader === "replay" ? split === -1 : reader !== undefined && split !== -1;
const wrong = unknownWord || foreignOption || emptyWord || badTimeout || commandMisplaced;
// No command: `--` with nothing after it.
if (wrong || command === undefined) misuse();
if (reader === undefined) {
  proxy(command, args, values.log ?? join(here, "wire.log"));
} else if (logPath === undefined) {
  misuse(); // Every reader reads one log.
} else {
  // A reader whose stdout was closed (`| head`) stops as if SIGPIPE had ended it.
  process.stdout.on("error", () => process.exit(128 + constants.signals.SIGPIPE));
  if (reader === "stats") await stats(logPath, values.json === true);
  if (reader === "show") await show(logPath, showOptions(), values.follow === true);
  const streamed = reader === "stats" || reader === "show";
  const log = streamed ? "" : await readFile(logPath, "utf8").catch((error: unknown) => {
    cannot(`read ${logPath}`, error);
  });
  if (reader === "redact") process.stdout.write(redactLog(log));
  if (reader === "diagram") {
    const markdown = diagram(parseLog(values["no-redact"] === true ? log : redactLog(log)));
    const out = values.out;
    if (out === undefined) process.stdout.write(markdown);
    else await writeFile(out, markdown).catch((error: unknown) => cannot(`write ${out}`, error));
  }
  if (reader === "replay") {
    const ignore = (values.ignore ?? []).map((path) => path.split("."));
    const redact = values["no-redact"] !== true;
    process.exitCode = await replay(parseLog(log), command, args, { ignore, timeoutMs, redact });
  }
}
