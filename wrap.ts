/**
 * wrap.ts — a recording proxy for any MCP server, over stdio or Streamable HTTP: it changes
 * nothing and loses nothing.
 *
 * How it works: the client starts wrap in place of the server, and wrap starts the server as
 * its child. Three pipes carry the bytes as they are, with backpressure: the client's stdin to
 * the server's stdin, the server's stdout to the client, the server's stderr to wrap's stderr.
 * Beside each pipe a tap is handed the same chunks: the client's after they are passed on, the
 * server's before, so that a client never holds a response the log lacks. It cuts them into
 * lines at each "\n" byte (MCP basic/transports §stdio: one JSON-RPC message per line) and
 * logs one event per line, in synchronous writes: in a conversation as each chunk crosses, and
 * in a burst of pipelined traffic once the pipes pause, so that a burst never waits for the
 * tap's parsing. At a signal the log catches up before the signal is passed on, and at the end
 * of input as the end is, so a client that kills wrap finds every line that crossed. The
 * recorder is three parts, a section each: the tap (lines, notes, pairing; no I/O), the log
 * writer (when to catch up, one write per catch-up) and the plumbing (spawn, relay, signals,
 * finish). Over HTTP (`--listen`), wrap is a reverse proxy in front of the server's endpoint, and
 * hands the same tap and log writer each request's and answer's body under the exchange's number.
 *
 * The log (wire.log), one event per line: `<ISO-8601 UTC time> <mark> <text>`.
 *   →  client to server: `[<notes> ][| ]<line>`, the line exactly as it crossed, bytes and all
 *   ←  server to client, likewise
 *   !  a line the server wrote to stderr, as it is
 *   #  wrap's own events: start, end of input, signals, unanswered requests, cut lines, exit;
 *      over HTTP, each exchange's request and answer heads, and how it ended
 * The notes are, over HTTP, the exchange's number, `<3>`, then a response's round-trip time,
 * `(1.9 ms)`, then the line's tags, each only when it applies, in the one order of TAGS; a
 * bar, `| `, ends them before a line that could be read as one. "The log format" below is
 * their one definition, which the tap writes and the readers read. A response is paired with
 * its request by id and direction: JSON-RPC is symmetric, and servers send requests too
 * (roots/list, elicitation/create); over HTTP, a client's request by its exchange too, since
 * many clients send id 1 at once.
 *
 * Lifecycle (2025-11-25 basic/lifecycle §Shutdown, stdio): shutdown is the client's. The end
 * of stdin is passed on, and wrap waits for the server as long as it runs. SIGINT, SIGTERM and
 * SIGHUP are passed on; a server still running a second later gets SIGKILL, which the client
 * would send next, to wrap, where it could not be passed on. wrap ends the server itself only
 * when the client is gone: wrap's stdout closed, or wrap's parent process gone. wrap exits
 * with the server's exit code, or 128 + the signal's number when a signal ended it.
 *
 * The file's sections, in order: the kinds of message; the log format; the recorder's three
 * parts; the recorder over HTTP; the session follower, through which every reader reads a log;
 * the readers, one section each with its constants before its functions (README, "Read a log
 * back"); and last the command line, which picks the recorder or a reader by READERS, the
 * command table, where each reader is one row.
 */
import { spawn, type ChildProcess, type ChildProcessByStdio } from "node:child_process";
import { isUtf8 } from "node:buffer";
import { openSync, watch, watchFile, writeSync } from "node:fs";
import { createServer, request as httpRequest, type ClientRequest, type IncomingMessage,
  type RequestOptions, type ServerResponse } from "node:http";
import { request as httpsRequest } from "node:https";
import { access, open, stat, writeFile } from "node:fs/promises";
import { EventEmitter, once } from "node:events";
import { createInterface } from "node:readline";
import { constants } from "node:os";
import { basename, dirname, join } from "node:path";
import process from "node:process";
import type { Readable, Writable } from "node:stream";
import { fileURLToPath, urlToHttpOptions } from "node:url";
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
  const hasMethod = typeof method === "string";
  if (hasMethod && validId) return { kind: "request", id, method, params };
  if (hasMethod && id === undefined) return { kind: "notification", method, params };
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

/**
 * The characters that can drive a terminal or hide what it shows: C0 but tab and newline, DEL,
 * C1 (U+009B alone is a CSI), the line and paragraph separators, and the bidi controls.
 */
const UNPRINTABLE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** Text a terminal shows as it is: each UNPRINTABLE character as a JSON escape, `\u001b`, so
 * that JSON stays JSON. Everything wrap prints for a person goes through it, and nothing else. */
function printable(text: string): string {
  const escaped = (found: string) => `\\u${found.charCodeAt(0).toString(16).padStart(4, "0")}`;
  return text.replace(UNPRINTABLE, escaped);
}

/** One line of wrap's own on stderr, printable: a server's or a log's text may be in it. */
function warn(text: string): void {
  process.stderr.write(printable(`wrap: ${text}\n`));
}

// ---- The log format: one definition, for the recorder that writes it and the readers ----
// A log (wire.log) holds one event per line: `<ISO-8601 UTC time> <mark> <text>`. A ! line's
// text is the server's stderr line, and a # line's is wrap's own; neither is read for notes.
// A → or ← line's text is `[<notes> ][| ]<line>`. The notes are a response's round-trip time,
// `(1.9 ms)`, then the line's tags, in the order of TAGS; the tap writes them with notesShown.
// The line is the bytes that crossed, whatever they are. One that could be read as a note,
// or as the bar, gets the bar `| ` before it (barred), which ends the notes: so parseEvent's
// EVENT_HEAD takes the notes, then one bar, and everything after that is the line. wrap's
// notes that begin and end a session are written by startNote and exitNote, and read by
// startedCommand. A log written before the bar reads as before, but a line that began `| `.
// Over HTTP a → or ← line's notes begin with its exchange's number, `<3>` (exchangeNote), and
// HTTP's own facts are # notes that begin with it too (headNote): a request's head, `<3> POST
// /mcp from 127.0.0.1:53412 · Mcp-Method: tools/call`, its answer's, `<3> 200 text/event-stream`,
// and how it ended early, `<3> closed by the client` or `<3> 502 upstream failed: ECONNREFUSED`.
// An event stream's events are ← lines, one each, the event's data lines joined.

/** An HTTP exchange's number as a note, `<3>`: 1, 2, 3, … as wrap receives the requests. It is
 * no tag: the readers count it with none. */
function exchangeNote(exchange: number): string {
  return `<${exchange}>`;
}

/** A # note about an exchange: its number, what happened, then header fields, ` · ` apart. */
function headNote(exchange: number, what: string, fields: readonly string[] = []): string {
  return [`${exchangeNote(exchange)} ${what}`, ...fields].join(" · ");
}

/**
 * A request's key among those in flight: its direction and id, and over HTTP a client's
 * request's exchange, since it is answered in its own exchange. A server's request may be
 * answered in any (a POST of its own), so it has none. JSON.stringify keeps id 1 and id "1"
 * apart, as JSON-RPC does; the key is also how a `# unanswered` note names a request.
 */
function pairKey(mark: "→" | "←", id: string | number | null, exchange?: number): string {
  const within = mark === "→" && exchange !== undefined ? `${exchangeNote(exchange)} ` : "";
  return `${mark} ${within}${JSON.stringify(id)}`;
}

/** The direction that answers a request sent the other way. */
const OPPOSITE = { "→": "←", "←": "→" } as const;

/** How many requests in flight the tap pairs, and the readers too: past it the oldest are no
 * longer paired, so a peer that is never answered cannot grow wrap's memory without bound. */
const PENDING_LIMIT = 50_000;

/** Keeps a request among those in flight; past PENDING_LIMIT, the oldest tenth goes. Whether
 * any went. */
function keepPending<T>(pending: Map<string, T>, key: string, request: T): boolean {
  pending.set(key, request);
  if (pending.size <= PENDING_LIMIT) return false;
  // A Map keeps its keys in the order they were set, oldest first. Each deleted key leaves a
  // hole that a walk from the start steps over until the Map is rebuilt: one walk for many.
  for (const oldest of pending.keys()) {
    if (pending.size <= PENDING_LIMIT * 0.9) break;
    pending.delete(oldest);
  }
  return true;
}

/**
 * The tags, in the one order the tap writes them: first what a line's bytes are, then what
 * its messages are. Each is shown in brackets, `bytes` as the line's size (`[2097152 bytes]`):
 *   bytes         a line over 1 MiB
 *   not UTF-8     bytes that are not UTF-8, which every MCP client reads the messages as
 *   CRLF          a line that ends in "\r\n"
 *   no request    a response whose id matches no request in flight the other way
 *   id in use     a request whose id is still waiting for an answer (basic §Requests)
 *   not JSON-RPC  a line that is no message: stdio is for messages only (basic/transports)
 */
const TAGS = ["bytes", "not UTF-8", "CRLF", "no request", "id in use", "not JSON-RPC"] as const;

/** One of the tags. */
type Tag = (typeof TAGS)[number];

/** A line's notes as the log shows them: a round-trip time in ms, then tags in TAGS' order. */
function notesShown(elapsed: number | undefined, tags: ReadonlySet<Tag>, bytes: number) {
  const shown = TAGS.filter((tag) => tags.has(tag))
    .map((tag) => (tag === "bytes" ? `[${bytes} bytes]` : `[${tag}]`));
  return elapsed === undefined ? shown : [`(${elapsed.toFixed(1)} ms)`, ...shown];
}

/** One note as the readers read it: an exchange's number, a round-trip time, or a tag, which
 * begins with a letter or a digit. The readers take notes in any order, and tags they do not
 * know. */
const NOTE = String.raw`<\d+> |\(\d+(?:\.\d+)? ms\) |\[[A-Za-z\d][\w -]*\] `;

/** How a line begins that could be read as a note or as the bar: such a line gets the bar. A
 * bar is never wrong, so this takes more lines than need it, by their first two bytes. */
const LOOKS_LIKE_NOTE = /^(?:[(|]|\[[A-Za-z\d]|<\d)/;

/** wrap's note that begins a session: the server's pid and command line. */
function startNote(pid: number, commandLine: string): string {
  return `start pid ${pid}: ${commandLine}`;
}

/** wrap's note that begins an HTTP session: where wrap listens, and the server's endpoint. */
function listenNote(local: string, upstream: string): string {
  return `listen ${local} → ${upstream}`;
}

/** wrap's note that ends a session: the server's exit code, or the signal that ended it. */
function exitNote(code: number | null, signal: NodeJS.Signals | null): string {
  return signal === null ? `exit code ${code}` : `exit signal ${signal}`;
}

/** One event of a wire.log, with the messages of a → or ← line classified once, and the
 * exchange it crossed in over HTTP. */
type LogEvent = { time: string; mark: Mark; elapsed: string | undefined; tags: string[];
  text: string; messages: Message[]; exchange: number | undefined };

/** The marks, to narrow a mark read from the log. */
const MARKS: readonly Mark[] = ["→", "←", "!", "#"];

/** An event's head: its time and mark, then, on a → or ← line, its notes and a bar. */
const EVENT_HEAD = new RegExp(String.raw`^\S+ (?:([!#]) |([→←]) ((?:${NOTE})*)(?:\| )?)`);

/** Reads one line of a wire.log into its event, or undefined when it is not one. */
function parseEvent(line: string): LogEvent | undefined {
  const head = EVENT_HEAD.exec(line);
  const mark = MARKS.find((each) => each === (head?.[1] ?? head?.[2]));
  if (head === null || mark === undefined) return undefined;
  const text = line.slice(head[0].length);
  const notes = head[3] ?? "";
  // Most lines carry no note: no list is made for them.
  const tags = notes === "" ? [] : Array.from(notes.matchAll(/\[(.+?)\] /g), ([, tag = ""]) => tag);
  const elapsed = notes === "" ? undefined : /\((\S+) ms\) /.exec(notes)?.[1];
  const exchange = notes === "" ? undefined : /<(\d+)> /.exec(notes)?.[1];
  const messages = mark === "→" || mark === "←" ? messagesOf(text) : [];
  return { time: line.slice(0, line.indexOf(" ")), mark, elapsed, tags, text, messages,
    exchange: exchange === undefined ? undefined : Number(exchange) };
}

/** The command line a `# start` note names, as startNote wrote it, or the endpoints a
 * `# listen` note names; undefined for another event. */
function startedCommand(event: LogEvent): string | undefined {
  return event.mark === "#" ? /^(?:start pid \d+: |listen )(.*)/s.exec(event.text)?.[1] : undefined;
}

// ---- The recorder, part 1: the tap, which cuts lines, notes them and pairs them ----
// The tap owns the requests in flight, and the log's events it has made until the log writer
// takes them; the start of each stream's line that has not ended yet comes with what crossed
// it (Crossing). It turns what crossed into those events, and finds the warning wrap prints for
// a polluted stdout; it does no I/O, and never sees the pipes.

/** Where bytes cross: a stdio stream, by its mark, or over HTTP a body of exchange `exchange`,
 * an event stream's when `events`. */
type Source = { mark: "→" | "←" | "!"; exchange?: number | undefined;
  events?: boolean | undefined };

/** The start of a line that has not ended yet: its pieces, as far as the log keeps a line
 * (LONGEST_LOGGED), and its whole size so far. */
type Unended = { pieces: Buffer[]; size: number };

/** What crossed, as the tap is handed it, and when (performance.now()): in the log's order. Each
 * carries its source's line not ended yet, and an event stream's event data so far, which the
 * tap adds to: so each source's lines are cut apart from the others'. wrap's own notes are not
 * crossings: the log writer hands them over once the tap has caught up. */
type Crossing = Source & { line: Unended; data: Unended } &
  ({ kind: "chunk"; chunk: Buffer; now: number } | { kind: "end"; now: number });

/** The tap's state, all of it. */
type Tap = {
  /** Requests in flight under their direction and id, until a response the other way: each
   * one's method, and when it crossed. At most PENDING_LIMIT, the newest (keepPending). */
  pending: Map<string, { method: string; sentAt: number }>;
  /** Whether requests in flight were ever dropped from pairing (the log says so once), and
   * whether a line on the server's stdout was not JSON-RPC (wrap warns of the first only). */
  overflowed: boolean; polluted: boolean;
  /** What the tap has made until the log writer takes it: the log's events, in the log's order,
   * and the warnings it found for wrap's stderr. */
  events: Buffer[]; warnings: string[];
  /** The millisecond of the last event's time, and that time as the log writes it. */
  clock: { ms: number; time: string };
};

/** A line longer than this (1 MiB) is tagged with its size. */
const LARGE_LINE = 1_048_576;

/** The most of a line the log keeps (16 MiB): a longer one is logged cut, with a note, so that
 * no line, however long, is held whole (a string cannot hold one over 512 MiB). */
const LONGEST_LOGGED = 16 * LARGE_LINE;

/** The "\n" that ends each event in the log. */
const NEWLINE = Buffer.from("\n");

/** Adds a piece to a line not ended yet, as far as the log keeps a line. */
function keepPiece(unended: Unended, piece: Buffer): void {
  const room = LONGEST_LOGGED - unended.size;
  if (room > 0) unended.pieces.push(piece.length > room ? piece.subarray(0, room) : piece);
  unended.size += piece.length;
}

/** Takes the line that has just ended: what the log keeps of it, and its size; none is left. */
function takeLine(unended: Unended): { kept: Buffer; size: number } {
  const { pieces, size } = unended;
  unended.pieces = [];
  unended.size = 0;
  // Joined once: a line within one chunk is a view of it, not a copy.
  const kept = pieces.length === 1 && pieces[0] !== undefined ? pieces[0] : Buffer.concat(pieces);
  return { kept, size };
}

/**
 * Adds the events of the lines a chunk completes, cut at each "\n" byte and without it. Each
 * piece of a line is kept in `unended`, as far as the log keeps a line; the start of a line
 * that has not ended yet waits there for the next chunk: only the new chunk is searched, and a
 * line is joined once, so a long line costs linear time.
 */
function chunkEvents(tap: Tap, crossing: Extract<Crossing, { kind: "chunk" }>): void {
  const { chunk, now } = crossing;
  // An event stream's lines are read for its events; any other line is an event of its own.
  const lineEnded = crossing.events === true ? eventStreamLine : lineEvent;
  for (let start = 0; start < chunk.length;) {
    const end = chunk.indexOf(0x0a, start);
    const piece = chunk.subarray(start, end === -1 ? chunk.length : end);
    keepPiece(crossing.line, piece);
    if (end === -1) return;
    lineEnded(tap, crossing, now);
    start = end + 1;
  }
}

/**
 * Reads a line of an event stream (HTML §9.2.6, interpreting an event stream): a data line's
 * value is added to the event's data, and a blank line ends the event, whose data is logged as
 * one line. Other fields (event, id, retry) and comments are left out; an event without data is
 * none. An event's data lines are joined without their "\n": JSON stays JSON.
 */
function eventStreamLine(tap: Tap, crossing: Crossing, now: number): void {
  const { kept, size } = takeLine(crossing.line);
  const line = kept.at(-1) === 0x0d ? kept.subarray(0, -1) : kept;
  if (line.length === 0 && crossing.data.size > 0) lineEvent(tap, crossing, now, crossing.data);
  if (line.toString("latin1", 0, 5) !== "data:") return;
  // One space after the colon is not the value's (HTML §9.2.6).
  keepPiece(crossing.data, line.subarray(line[5] === 0x20 ? 6 : 5));
  // A data line cut short counts whole, so that the event is noted as cut.
  crossing.data.size += size - kept.length;
}

/**
 * What the log notes of a line before its bytes. A request is kept in `pending` under its
 * direction and id until a response crossing the other way settles it. A line cut short is not
 * read for messages: its size is all that is noted of it.
 */
function annotate(tap: Tap, mark: "→" | "←", exchange: number | undefined, kept: Buffer,
  size: number, now: number) {
  if (size > kept.length) return notesShown(undefined, new Set(["bytes"]), size);
  // A Set, so that a batch with two unknown ids shows "[no request]" once.
  const tags = new Set<Tag>();
  let elapsed: number | undefined;
  if (size > LARGE_LINE) tags.add("bytes");
  if (!isUtf8(kept)) tags.add("not UTF-8");
  if (kept[size - 1] === 0x0d) tags.add("CRLF");
  for (const message of messagesOf(kept.toString())) {
    if (message.kind === "request") {
      pend(tap, pairKey(mark, message.id, exchange), message.method, now, tags);
    }
    // An id of null answers a request that could not be read, so it pairs with nothing.
    if (message.kind === "response" && message.id !== null) {
      const key = pairKey(OPPOSITE[mark], message.id, exchange);
      const request = tap.pending.get(key);
      // A batch's responses share a line, which shows the first one's time.
      if (request === undefined) tags.add("no request");
      else elapsed ??= now - request.sentAt;
      tap.pending.delete(key);
    }
    // Each side's stdout is for MCP messages only (basic/transports §stdio).
    if (message.kind === "other") tags.add("not JSON-RPC");
  }
  return notesShown(elapsed, tags, size);
}

/** Keeps a request in flight, unless its id is in use; says so once when the oldest goes. */
function pend(tap: Tap, key: string, method: string, now: number, tags: Set<Tag>): void {
  if (tap.pending.has(key)) {
    tags.add("id in use");
  } else if (keepPending(tap.pending, key, { method, sentAt: now }) && !tap.overflowed) {
    tap.overflowed = true;
    noteEvent(tap, now, `over ${PENDING_LIMIT} requests in flight: from here on the oldest ` +
      "are dropped from pairing, and their responses show [no request]");
  }
}

/**
 * Adds the event of the line that has just ended under `key`: its time, mark and notes, a bar
 * if it needs one, then the line's bytes as they are. A line cut short is not read for
 * messages; a note before it says so.
 */
function lineEvent(tap: Tap, crossing: Crossing, now: number, unended = crossing.line): void {
  const { mark, exchange } = crossing;
  const { kept, size } = takeLine(unended);
  if (size > kept.length) {
    const keeps = `the log keeps ${kept.length} of ${size} bytes`;
    noteEvent(tap, now, `the next ${mark} line is cut: ${keeps}`);
  }
  const notes: string[] = mark === "!" ? [] : annotate(tap, mark, exchange, kept, size, now);
  if (exchange !== undefined) notes.unshift(exchangeNote(exchange));
  // The one warning for a polluted stdout: the line, cut to a readable length, and what follows.
  if (!tap.polluted && mark === "←" && notes.includes("[not JSON-RPC]")) {
    tap.polluted = true;
    const text = kept.subarray(0, 256).toString();
    const shown = JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text);
    tap.warnings.push(`the server wrote a line to stdout that is not JSON-RPC: ${shown}`,
      "MCP clients skip such a line or close the connection; a server logs to stderr");
  }
  // The bar ends the notes before a line that could be read as one.
  if (mark !== "!" && LOOKS_LIKE_NOTE.test(kept.toString("latin1", 0, 2))) notes.push("|");
  tap.events.push(Buffer.from(`${[timeOf(tap, now), mark, ...notes].join(" ")} `), kept, NEWLINE);
}

/** A moment (performance.now()) as the log writes it, ISO 8601 in UTC: made once a
 * millisecond, since formatting a date costs as much as the rest of a line's event. */
function timeOf(tap: Tap, now: number): string {
  const ms = Math.floor(performance.timeOrigin + now);
  if (ms !== tap.clock.ms) tap.clock = { ms, time: new Date(ms).toISOString() };
  return tap.clock.time;
}

/** Adds one of wrap's own events. A line break in a note (in a command's script, say) is
 * written `\n`, as JSON writes it, so that no note can forge an event. */
function noteEvent(tap: Tap, now: number, text: string): void {
  const oneLine = text.replaceAll("\n", "\\n").replaceAll("\r", "\\r");
  tap.events.push(Buffer.from(`${timeOf(tap, now)} # ${oneLine}\n`));
}

/** Adds the log's events for one crossing: the lines a chunk completes, or a source's last. */
function eventsOf(tap: Tap, crossing: Crossing): void {
  if (crossing.kind === "chunk") return chunkEvents(tap, crossing);
  // A last line without "\n" is still a line; an event not ended is none (HTML §9.2.6).
  if (crossing.events !== true && crossing.line.size > 0) lineEvent(tap, crossing, crossing.now);
}

// ---- The recorder, part 2: the log writer, which keeps the log up with the wire ----
// The log writer owns the log file, what the tap has not read yet, and the streams it has
// paused. In a conversation it hands the tap each crossing as it crosses (a server's line
// just before the plumbing passes it on, a client's just after), and writes its events at
// once: the log lags the wire by one chunk's work, a few microseconds. A burst of
// pipelined traffic is more than the tap can read as it flows, and the pipes show it: a chunk
// of AT_ONCE_MAX bytes or more. Then what crossed waits until the pipes are quiet for
// QUIET_MS, or the tap is too far or too long behind them: the burst flows at the pace of a
// bare pipe. Past MAX_BEHIND the pipes are paused until the tap has caught up half of it, as
// a slow reader pauses a pipe: wrap's memory stays bounded however much crosses. Every write
// is synchronous, and at a signal or the end of input the writer catches up at once, so a
// SIGKILL a moment later finds those lines written. (A WriteStream writes later, from libuv's
// thread pool, and a SIGKILL loses what it still holds.)

/** The log writer's state, all of it. */
type LogWriter = {
  /** The log file's path, its descriptor once open for appending, and whether it takes no more
   * writes: it has had its last event, or could not be written. */
  path: string; fd?: number; closed: boolean;
  /** The tap that turns what crossed into the log's events. */
  tap: Tap;
  /** What the tap has not read yet, oldest first (nothing, while the log keeps up), and how
   * many bytes of chunks that is. */
  unread: Crossing[]; behind: number;
  /** The wait for quiet pipes, while one is set, and the streams paused until the tap catches
   * up. */
  timer?: NodeJS.Timeout | undefined; paused: Readable[];
};

/**
 * The smallest chunk that means the pipe was backed up, so that the tap waits for a pause.
 * Pairing and tagging cost a few microseconds a line: a conversation's lines take a few per
 * cent of a core, while a burst's would take more than one, and slow the burst to half pace.
 */
const AT_ONCE_MAX = 16_384;

/** How long the pipes must be quiet before the tap catches up with a burst. */
const QUIET_MS = 5;

/** How far the tap may fall behind a burst, in bytes and in time, before it catches up; past
 * MAX_BEHIND bytes, the pipes wait for it too. */
const MAX_BEHIND = 16 * 1_048_576;
const MAX_DELAY_MS = 1_000;

/** How many bytes the tap reads at a time as it catches up, so that traffic waits little. */
const SLICE = 65_536;

/** A log writer that has written nothing yet, and its tap, which has seen nothing yet. */
function openLog(logPath: string): LogWriter {
  const tap: Tap = { pending: new Map(), overflowed: false, polluted: false,
    events: [], warnings: [], clock: { ms: 0, time: "" } };
  return { path: logPath, closed: false, tap, unread: [], behind: 0, paused: [] };
}

/**
 * Hands the tap what waits for it, up to SLICE bytes of chunks (or one chunk, however long),
 * and logs that in one write. The log is opened at the first write; one that cannot be opened
 * or written to is said once on stderr, and the traffic still flows. It is never closed:
 * wrap's exit closes it, and every write has been made by then.
 */
function catchUp(writer: LogWriter): void {
  const { tap, unread, paused } = writer;
  let count = 0;
  for (let read = 0; count < unread.length && read < SLICE; count += 1) {
    const crossing = unread[count];
    if (crossing?.kind === "chunk") read += crossing.chunk.length;
    if (crossing?.kind === "chunk") writer.behind -= crossing.chunk.length;
    if (crossing !== undefined) eventsOf(tap, crossing);
  }
  unread.splice(0, count);
  // The tap has caught up half of what it may fall behind: the pipes flow again.
  while (paused.length > 0 && writer.behind <= MAX_BEHIND / 2) paused.pop()?.resume();
  while (tap.warnings.length > 0) warn(tap.warnings.shift() ?? "");
  // Taken even when the log is closed, so that nothing is held for a log that takes no more.
  const written = Buffer.concat(tap.events.splice(0));
  if (writer.closed || written.length === 0) return;
  try {
    // A new log is private (0600): it holds every message, and messages can hold secrets.
    // Appending (O_APPEND) keeps each write whole beside another wrap's on the same log.
    writer.fd ??= openSync(writer.path, "a", 0o600);
    for (let at = 0; at < written.length;) at += writeSync(writer.fd, written, at);
  } catch (error) {
    writer.closed = true;
    const why = error instanceof Error ? error.message : String(error);
    warn(`cannot write log ${writer.path}: ${why}; traffic still flows`);
  }
}

/** Whether a chunk is a burst's: AT_ONCE_MAX bytes or more of several lines, as a pipe that was
 * backed up hands them over. One long message is one line, and is logged at once like any. */
function isBurst(crossing: Crossing): boolean {
  if (crossing.kind !== "chunk" || crossing.chunk.length < AT_ONCE_MAX) return false;
  return crossing.chunk.indexOf(0x0a) !== crossing.chunk.lastIndexOf(0x0a);
}

/** Keeps what crossed `from` a stream for the tap, and hands it over at once unless a burst is
 * on. Past MAX_BEHIND, the stream waits until the tap catches up, as a slow reader's pipe does. */
function logLater(writer: LogWriter, crossing: Crossing, from: Readable): void {
  writer.unread.push(crossing);
  if (crossing.kind === "chunk") writer.behind += crossing.chunk.length;
  // Nothing else waits, and this is no burst's chunk: at once.
  if (writer.unread.length === 1 && !isBurst(crossing)) return catchUp(writer);
  if (crossing.kind === "chunk" && writer.behind > MAX_BEHIND) writer.paused.push(from.pause());
  // One wait at a time: a wait already set sees this crossing too.
  writer.timer ??= setTimeout(whenQuiet, QUIET_MS, writer);
}

/**
 * Logs one of wrap's own events, and every line that crossed before it, at once: wrap notes
 * the moments after which a client may kill it at once, a signal or the end of input. A note
 * on what has not been passed on yet (an HTTP head) is written `soon`: with the next crossing.
 */
function note(writer: LogWriter, text: string, soon = false): void {
  // A slice at a time, each written: a SIGKILL in the midst of a burst's backlog spares some.
  while (writer.unread.length > 0) catchUp(writer);
  noteEvent(writer.tap, performance.now(), text);
  if (!soon) catchUp(writer);
}

/** Catches up when the pipes are quiet, or the tap is too far or too long behind them. */
function whenQuiet(writer: LogWriter): void {
  const { unread } = writer;
  const now = performance.now();
  // The newest crossing tells when anything last crossed; the oldest, how late the log is.
  const quiet = now - (unread.at(-1)?.now ?? 0) >= QUIET_MS;
  const late = now - (unread[0]?.now ?? now) > MAX_DELAY_MS;
  const due = quiet || late || writer.behind > MAX_BEHIND;
  if (due) catchUp(writer);
  writer.timer = unread.length > 0 ? setTimeout(whenQuiet, due ? 0 : QUIET_MS, writer) : undefined;
}

/** Logs everything still unread, a note for each request left unanswered with how long it
 * waited, and a last event. */
function closeLog(writer: LogWriter, last: string): void {
  // Catch up before reading the requests in flight: a response not read yet would be listed.
  while (writer.unread.length > 0) catchUp(writer);
  const now = performance.now();
  for (const [key, request] of writer.tap.pending) {
    const waited = `waited ${(now - request.sentAt).toFixed(1)} ms`;
    noteEvent(writer.tap, now, `unanswered ${key} ${JSON.stringify(request.method)} (${waited})`);
  }
  note(writer, last);
  writer.closed = true;
}

// ---- The recorder, part 3: the plumbing, which starts the server and ends wrap ----
// The plumbing owns the server's process and wrap's own stdio and signals. It relays the
// bytes as they are and hands the log writer a copy, passes the end of input and signals on,
// stops the server when the client is gone, and exits as the server exited.

/** The plumbing's state: the server's process, and the writer of its log. */
type Plumbing = { child: ChildProcessByStdio<Writable, Readable, Readable>; writer: LogWriter };

/**
 * How long a server may outlive a signal passed on before it gets SIGKILL: less than the 2 s
 * that the SDK's stdio client waits between its SIGTERM and its SIGKILL.
 */
const KILL_AFTER_MS = 1_000;

/** How often wrap looks whether its parent, the client, is still there. */
const PARENT_CHECK_MS = 500;

/**
 * Starts a command; one that cannot start ends wrap in one plain line and no stack, as shells
 * do, after `noted` has logged why. spawn throws a few failures (ENOTDIR, ELOOP), and reports
 * the others by an "error" event: only a failed start leaves no pid.
 */
function spawned<T extends ChildProcess>(command: string, start: () => T,
  noted: (why: string) => void = () => {}): T {
  const failed = (error: unknown): never => {
    const why = `cannot start ${command}: ${error instanceof Error ? error.message : error}`;
    warn(why);
    noted(why);
    return process.exit(CANNOT_START);
  };
  try {
    const child = start();
    child.on("error", (error) => {
      if (child.pid === undefined) failed(error);
    });
    return child;
  } catch (error) {
    return failed(error);
  }
}

/**
 * Hands each chunk a stream carries to the log writer, and its end. A server's chunks and end
 * (←) are handed over before the plumbing passes them on, and a client's after: in a
 * conversation the client never holds a response the log lacks, since the log writer writes at
 * once, and the request it answers was logged before it came. Each crossing is spelled out:
 * spread from `source`, it would cost some 3 µs more (V8 11).
 */
function tapStream(writer: LogWriter, from: Readable, source: Source): void {
  const { mark, exchange, events } = source;
  const [line, data]: [Unended, Unended] = [{ pieces: [], size: 0 }, { pieces: [], size: 0 }];
  const log = (chunk: Buffer) => logLater(writer, { mark, exchange, events, line, data,
    kind: "chunk", chunk, now: performance.now() }, from);
  const end = () => logLater(writer, { mark, exchange, events, line, data, kind: "end",
    now: performance.now() }, from);
  if (mark === "←") from.prependListener("data", log).prependListener("end", end);
  else from.on("data", log).on("end", end);
  // An HTTP body cut short ends all the same, so that the tap lets go of what it holds of it.
  if (exchange !== undefined) from.on("close", () => from.readableEnded || end());
}

/** Passes a stream's bytes on untouched, and hands each chunk to the log writer as well. */
function relay(plumbing: Plumbing, from: Readable, to: Writable, mark: "→" | "←" | "!"): void {
  // wrap's stderr is wrap's own too, and stays open when the server's ends.
  from.pipe(to, { end: mark !== "!" });
  tapStream(plumbing.writer, from, { mark });
  // pipe() stops at a write error (EPIPE: the reader has gone); keep reading so the log sees
  // every line.
  to.on("error", (error) => {
    note(plumbing.writer, `cannot pass ${mark} on: ${error.message}`);
    from.resume();
    if (mark === "←") stop(plumbing, "SIGTERM", "the client is gone: wrap's stdout is closed");
  });
}

/** Sends the server a signal, and SIGKILL if it still runs a moment later. */
function stop(plumbing: Plumbing, signal: NodeJS.Signals, why: string): void {
  const { child, writer } = plumbing;
  if (child.exitCode !== null || child.signalCode !== null) return;
  // The client may send SIGKILL next, at once: every line that crossed is logged first.
  note(writer, `${why}: sending ${signal}`);
  child.kill(signal);
  const still = `still running ${KILL_AFTER_MS} ms after ${signal}`;
  if (signal !== "SIGKILL") setTimeout(() => stop(plumbing, "SIGKILL", still), KILL_AFTER_MS);
}

/** Passes the client's end of input and signals on, and stops the server when it is gone. */
function watchClient(plumbing: Plumbing): void {
  // The end of input is the client's first step of a shutdown; the next are its own.
  process.stdin.on("end", () => note(plumbing.writer, "end of input"));
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.on(signal, () => stop(plumbing, signal, `received ${signal}`));
  }
  // A client that exits without a signal leaves wrap to its parent's parent (often init).
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(watch);
    stop(plumbing, "SIGTERM", `the client is gone: its pid ${parent} exited`);
  }, PARENT_CHECK_MS).unref();
}

/**
 * Runs the recorder: starts the server, relays its stdio and records every line to the log.
 * wrap ends as the server ended, with an exit code or a signal: it closes the log with a last
 * event, waits for its own stdout, and exits likewise.
 */
function proxy(command: string, args: readonly string[], logPath: string): void {
  const writer = openLog(logPath);
  const child = spawned(command, () => spawn(command, args, { stdio: "pipe" }),
    (why) => closeLog(writer, why));
  const plumbing = { child, writer };
  if (child.pid !== undefined) note(writer, startNote(child.pid, [command, ...args].join(" ")));
  // A process the server started may hold its pipes open; wait for them no longer than the
  // grace period.
  child.on("exit", () => setTimeout(() => {
    for (const pipe of [child.stdout, child.stderr]) pipe.push(null);
  }, PIPES_GRACE_MS));
  child.on("close", async (code, signal) => {
    closeLog(writer, exitNote(code, signal));
    // stdout is waited for by a write's callback, which comes once every earlier byte is
    // written (or the client is gone): on a terminal stdout's "finish" never comes, and wrap
    // would exit 0, late, whatever happened.
    await new Promise<void>((resolve) => process.stdout.write("", () => resolve()));
    // A signal's end is reported as shells do: 128 + its number.
    process.exit(signal === null ? code ?? 0 : 128 + constants.signals[signal]);
  });
  relay(plumbing, process.stdin, child.stdin, "→");
  relay(plumbing, child.stdout, process.stdout, "←");
  relay(plumbing, child.stderr, process.stderr, "!");
  // Registered after the relays, so that the log has stdin's last line before "end of input".
  watchClient(plumbing);
}

// ---- The recorder over HTTP: a reverse proxy in front of a Streamable HTTP server ----
// `wrap --listen [HOST:]PORT URL` serves http://HOST:PORT/mcp and forwards each request to the
// server's endpoint URL (any other path to the same path at URL's origin): its method, headers
// and body as they are, but the hop-by-hop headers (RFC 9110 §7.6.1) and Host, which names the
// server asked (§7.2). The answer streams back as it comes, each event of an event stream as it
// arrives. Each body's chunks go to the same tap and log writer as stdio's, under the exchange's
// number: a request's lines are → lines, after they are passed on; an answer's, ← lines, before
// (basic/transports §Streamable HTTP). A client that closes an exchange early ends the one
// request to the server: 2026-07-28 cancels a call so. A server that cannot be reached is
// answered 502 by wrap. What each exchange was is a # note, its secret headers redacted.

/** The HTTP recorder's state: the log writer, the server's endpoint and its address as request
 * options (made once: node:http makes a URL into them at a cost), and the last exchange's
 * number. */
type Listener = { writer: LogWriter; upstream: URL; target: RequestOptions; exchanges: number };

/** The headers that belong to one connection, never passed on (RFC 9110 §7.6.1), besides
 * those the Connection header names. */
const HOP_BY_HOP = ["connection", "keep-alive", "proxy-connection", "te", "trailer",
  "transfer-encoding", "upgrade"];

/** The MCP headers a head note shows (basic/transports §Streamable HTTP). */
const MCP_HEADERS = ["mcp-protocol-version", "mcp-method", "mcp-name", "mcp-session-id",
  "last-event-id"];

/** The raw headers (name, value, name, value, …) whose name, in lower case, `keeps` keeps. */
function headerPairs(raw: readonly string[], keeps: (name: string) => boolean): string[] {
  const kept = raw.map((name, at) => at % 2 === 0 && keeps(name.toLowerCase()));
  return raw.filter((_, at) => kept[at - (at % 2)]);
}

/** A message's raw headers to pass on: without the hop-by-hop ones, nor those that Connection
 * names (node:http joins several Connection headers with commas). */
function endToEnd(message: IncomingMessage, also: readonly string[] = []): string[] {
  const named = String(message.headers.connection ?? "").toLowerCase().split(",");
  const dropped = new Set([...HOP_BY_HOP, ...named.map((name) => name.trim()), ...also]);
  return headerPairs(message.rawHeaders, (name) => !dropped.has(name));
}

/** A head note's header fields: the MCP headers as they came, and any that hold a secret by
 * redact's table (Authorization, Cookie, Set-Cookie, X-Api-Key, …) as redacted. */
function headFields(raw: readonly string[]): string[] {
  const kept = headerPairs(raw, (name) => MCP_HEADERS.includes(name) || isSecretKey(name));
  return kept.flatMap((name, at) => (at % 2 ? [] : [`${name}: ${isSecretKey(name) ? REDACTED
    : kept[at + 1]}`]));
}

/** The path a request goes to on the server: the endpoint's, with the query of a request for
 * /mcp appended to its own; any other path as it is, at the endpoint's origin. */
function upstreamPath(upstream: URL, path: string): string {
  const [name, ...query] = path.split("?");
  if (name !== "/mcp") return path;
  const joined = [upstream.search.slice(1), query.join("?")].filter((part) => part !== "");
  return `${upstream.pathname}${joined.length === 0 ? "" : `?${joined.join("&")}`}`;
}

/** Forwards one exchange: notes the request's head, passes its body on, and its answer back. */
function forward(listener: Listener, incoming: IncomingMessage, outgoing: ServerResponse) {
  const { writer, upstream, target: { hostname, port, auth } } = listener;
  const exchange = (listener.exchanges += 1);
  const from = `from ${incoming.socket.remoteAddress}:${incoming.socket.remotePort}`;
  const head = `${incoming.method} ${incoming.url} ${from}`;
  note(writer, headNote(exchange, head, headFields(incoming.rawHeaders)), true);
  const headers = [...endToEnd(incoming, ["host"]), "Host", upstream.host];
  const path = upstreamPath(upstream, incoming.url ?? "/");
  const send = upstream.protocol === "https:" ? httpsRequest : httpRequest;
  let ended = false;
  const failed = (error: NodeJS.ErrnoException) => {
    // An exchange the client closed, or that failed already, has been noted.
    if (ended || outgoing.destroyed) return;
    ended = true;
    const why = `upstream failed: ${error.code ?? error.message}`;
    note(writer, headNote(exchange, outgoing.headersSent ? why : `502 ${why}`));
    if (outgoing.headersSent) outgoing.destroy();
    else outgoing.writeHead(502, { "content-type": "text/plain" }).end(`wrap: ${why}\n`);
  };
  // Spelled out: a spread into a literal with more properties costs some 3 µs (V8 11).
  const options = { hostname, port, auth, method: incoming.method, path, headers };
  const request = send(options, (answer) => {
    answerBack(writer, exchange, answer, outgoing);
    answer.on("error", failed);
  });
  request.on("error", failed);
  incoming.pipe(request);
  tapStream(writer, incoming, { mark: "→", exchange, events: false });
  outgoing.on("close", () => {
    if (outgoing.writableFinished || ended) return;
    ended = true;
    note(writer, headNote(exchange, "closed by the client"));
    request.destroy();
  });
}

/** Notes an answer's head, and passes it back as it comes: its status and headers, then its
 * body, each chunk as it arrives, an event stream's events too. */
function answerBack(writer: LogWriter, exchange: number, answer: IncomingMessage,
  outgoing: ServerResponse): void {
  const type = answer.headers["content-type"];
  const status = words(String(answer.statusCode), type);
  const events = /^text\/event-stream\b/i.test(type ?? "");
  // A JSON answer's head goes with its body, in one write to the log and one to the client; an
  // event stream's at once, since its first event may be long in coming.
  note(writer, headNote(exchange, status, headFields(answer.rawHeaders)), !events);
  // The server's own Date, or none, as it sent it.
  outgoing.sendDate = false;
  outgoing.writeHead(answer.statusCode ?? 502, answer.statusMessage, endToEnd(answer));
  if (events) outgoing.flushHeaders();
  tapStream(writer, answer, { mark: "←", exchange, events });
  answer.pipe(outgoing);
}

/**
 * Runs the HTTP recorder: listens on `address`, [HOST:]PORT, forwards each request to the
 * endpoint `url` and records every exchange to the log. At a signal it closes the log with a
 * last event and exits as the signal would have ended it: 128 + its number.
 */
function listen(address: string, url: string, logPath: string): void {
  const writer = openLog(logPath);
  const upstream = new URL(url);
  const listener = { writer, upstream, target: urlToHttpOptions(upstream), exchanges: 0 };
  const [, host = "127.0.0.1", port = ""] = LISTEN_ADDRESS.exec(address) ?? [];
  const server = createServer((incoming, outgoing) => forward(listener, incoming, outgoing));
  server.on("error", (error) => cannot(`listen on ${address}`, error));
  server.listen(Number(port), host.replace(/^\[(.*)\]$/, "$1"), () => {
    // A server on TCP has an address of its own (a pipe's is a string): as a URL's host, an IPv6
    // one in brackets.
    const bound = server.address();
    if (!isRecord(bound)) return;
    const ip = bound.family === "IPv6" ? `[${bound.address}]` : bound.address;
    const local = `http://${ip}:${bound.port}/mcp`;
    note(writer, listenNote(local, url));
    warn(`listening on ${local}, recording to ${logPath}, forwarding to ${url}`);
  });
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.on(signal, () => {
      closeLog(writer, exitNote(null, signal));
      process.exit(128 + constants.signals[signal]);
    });
  }
}

// ---- Readers: the session follower, which every reader reads a log through ----
// The follower owns what a reader knows of a session so far: its `# start` note, the requests
// in flight and the rounds of 2026-07-28 calls. A reader hands it each event once, in order;
// a start note begins a new session. It pairs a response with its request by direction and
// id, and over HTTP by exchange, with the tap's pairKey. And it says which responses report
// an error, in the one meaning every reader uses: a JSON-RPC error (basic §Responses), or a
// result with `isError: true`, a tool's own failure (server/tools §Error Handling). An
// input_required result asks; it has not failed.
//
// Elicitation comes in either era. Legacy (2025-06-18 and 2025-11-25, client/elicitation):
// the server sends its own elicitation/create request, and the client answers it with an
// ElicitResult. Modern (2026-07-28, basic/patterns/mrtr): the server answers a call with an
// input_required result, and the client retries the call under a new id with
// `inputResponses` and the result's `requestState`: the follower numbers those rounds.

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

/** What a reader is handed: its log, wrap's options as parseArgs read them, --timeout as a
 * number, and the command after `--` (which replay and check run), and whether there was one. */
type CommandLine = { logPath: string; timeoutMs: number; command: string; args: string[];
  runs: boolean; values: ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>["values"] };

/** Where reading a log got to: how far, and the start of a line that has not ended yet. */
type Reading = { offset: number; rest: Buffer };

/** Where reading a log begins. */
const LOG_START: Reading = { offset: 0, rest: Buffer.alloc(0) };

/** The most of one line a reader holds: twice what wrap logs of a line. A longer one is no
 * line wrap wrote, and is read cut there. */
const LONGEST_READ = 2 * LONGEST_LOGGED;

/**
 * Reads a log's complete lines past where reading got to, SLICE bytes at a time, and hands
 * them to `read`, waiting for it: no log is ever held whole. The start of a line that has not
 * ended yet is kept for the next read or, when reading `toEnd`, read as a last line. Resolves
 * with where reading stopped.
 */
async function readLines(path: string, from: Reading, toEnd: boolean,
  read: (lines: string[]) => unknown): Promise<Reading> {
  const file = await open(path, "r");
  let { offset } = from;
  // The start of a line not ended yet, in pieces: a long line is joined once, when it ends.
  let held = [from.rest];
  let heldBytes = from.rest.length;
  try {
    for (let bytesRead = -1; bytesRead !== 0; offset += bytesRead) {
      const slice = Buffer.allocUnsafe(SLICE);
      ({ bytesRead } = await file.read(slice, 0, SLICE, offset));
      const end = slice.subarray(0, bytesRead).lastIndexOf(0x0a) + 1;
      // Past LONGEST_READ, what a line not ended yet holds is left out, up to its end.
      const cut = heldBytes >= LONGEST_READ;
      if (end === 0 && !cut) held.push(slice.subarray(0, bytesRead));
      heldBytes += bytesRead;
      if (end === 0) continue;
      const ending = slice.subarray(cut ? slice.indexOf(0x0a) : 0, end);
      await read(Buffer.concat([...held, ending]).toString().split("\n"));
      held = [slice.subarray(end, bytesRead)];
      heldBytes = bytesRead - end;
    }
  } finally {
    await file.close();
  }
  const rest = Buffer.concat(held);
  if (toEnd && rest.length > 0) await read([rest.toString()]);
  return { offset, rest };
}

/**
 * Reads a log's events past where reading got to, as readLines reads its lines, each redacted
 * first when `redact`, and hands each slice's to `read`; resolves with where reading stopped
 * and how many lines were no events.
 */
async function readEvents(path: string, from: Reading, toEnd: boolean, redact: boolean,
  read: (events: LogEvent[]) => unknown): Promise<Reading & { skipped: number }> {
  let skipped = 0;
  const reading = await readLines(path, from, toEnd, (lines) => read(lines.flatMap((line) => {
    const event = parseEvent(redact ? redactLine(line) : line);
    if (event === undefined && line !== "") skipped += 1;
    return event ?? [];
  })));
  return { ...reading, skipped };
}

/** Writes a reader's output on stdout, printable unless `asIs`, and waits while stdout's reader
 * is behind: a reader's memory stays bounded, however long its log. */
async function print(text: string, asIs = false): Promise<void> {
  if (process.stdout.write(asIs ? text : printable(text))) return;
  await once(process.stdout, "drain");
}

/** A request as the follower keeps it: its direction, method, tool (for tools/call), both as
 * one name (`tools/call add`), and its round. */
type Asked = { mark: "→" | "←"; method: string; tool: string | undefined; name: string;
  round: number | undefined };

/**
 * A session before its first event, or begun by its `# start` note (`start`, undefined for a
 * log that begins mid-session). `waiting` holds the requests in flight, by direction and id,
 * until a response the other way; `next`, the round a retry is, by the requestState of the
 * input_required result it follows. Each keeps at most PENDING_LIMIT, the newest, as the tap does.
 */
function newSession(start?: LogEvent) {
  return { start, waiting: new Map<string, Asked>(), next: new Map<string, number>() };
}

/** What a reader knows of one session so far, as newSession makes it. */
type Session = ReturnType<typeof newSession>;

/** One message of an event, as the follower reads it. Its `request`: for a request, itself;
 * for a response, the request it answers, when the log has it. Its `place`: a retry's among
 * its call's rounds, `round 2`, or `retry` when its first is gone. `failed`: whether it is a
 * response that reports an error. */
type Followed = { mark: "→" | "←"; message: Message; request: Asked | undefined;
  place: string | undefined; failed: boolean };

/** An elicitation/create request's message to the user (client/elicitation), if it has one. */
function elicitationMessage(method: unknown, params: unknown): string | undefined {
  const message = dig(params, "message");
  return method === "elicitation/create" && typeof message === "string" ? message : undefined;
}

/** An input_required result's requests (basic/patterns/mrtr), each its method and the message it
 * shows; undefined for any other result. */
function inputRequestsOf(result: unknown) {
  if (dig(result, "resultType") !== "input_required") return undefined;
  const requests = dig(result, "inputRequests");
  // The keys are the server's to choose (basic/patterns/mrtr): only the values are read.
  return (isRecord(requests) ? Object.values(requests) : []).map((request) => {
    const method = dig(request, "method");
    const named = typeof method === "string" ? method : "(no method)";
    return { method: named, message: elicitationMessage(method, dig(request, "params")) };
  });
}

/** Input requests in brief: each method once, then the messages it asks, quoted. */
function briefAsks(requests: readonly { method: string; message: string | undefined }[]): string {
  const methods = new Set(requests.map((request) => request.method));
  return Array.from(methods, (method) => {
    const shown = requests.filter((request) => request.method === method)
      .flatMap((request) => request.message === undefined ? [] : [JSON.stringify(request.message)]);
    return shown.length === 0 ? method : `${method} ${shown.join(", ")}`;
  }).join(", ");
}

/** An ElicitResult as `accept {"confirm":true}`, `decline` or `cancel`; undefined otherwise. */
function elicitAnswer(result: unknown): string | undefined {
  // client/elicitation: an ElicitResult is the one result whose `action` is a string.
  const action = dig(result, "action");
  if (typeof action !== "string") return undefined;
  // No content, as with decline and cancel, stringifies to undefined, which words leaves out.
  return words(action, JSON.stringify(dig(result, "content")));
}

/** Follows a request: keeps it until its response, with its round if it is a retry. */
function followRequest(session: Session, mark: "→" | "←", message: JSONRPCRequest,
  exchange: number | undefined): Followed {
  const name = dig(message.params, "name");
  const tool = message.method === "tools/call" && typeof name === "string" ? name : undefined;
  const state = dig(message.params, "requestState");
  const retry = state !== undefined || dig(message.params, "inputResponses") !== undefined;
  // A retry whose requestState was never seen (a log that starts mid-call) has no number.
  const round = retry ? session.next.get(typeof state === "string" ? state : "") : 1;
  const request = { mark, method: message.method, tool, name: words(message.method, tool), round };
  const key = pairKey(mark, message.id, exchange);
  // An id still in use stays with its first request, as the tap pairs it.
  if (!session.waiting.has(key)) keepPending(session.waiting, key, request);
  const place = round === undefined ? "retry" : round > 1 ? `round ${round}` : undefined;
  return { mark, message, request, place, failed: false };
}

/** Follows a response: settles its request, and numbers the retry an input_required asks for. */
function followResponse(session: Session, mark: "→" | "←", message: JSONRPCResponse,
  exchange: number | undefined): Followed {
  // An id of null answers a request that could not be read, so it pairs with nothing.
  const key = message.id === null ? "" : pairKey(OPPOSITE[mark], message.id, exchange);
  const request = session.waiting.get(key);
  session.waiting.delete(key);
  const state = dig(message.result, "requestState");
  // basic/patterns/mrtr: the retry sends this requestState back byte for byte.
  const asks = inputRequestsOf(message.result) !== undefined && typeof state === "string";
  if (asks && request?.round !== undefined) keepPending(session.next, state, request.round + 1);
  const failed = message.error !== undefined || dig(message.result, "isError") === true;
  return { mark, message, request, place: undefined, failed };
}

/** Follows one event: a start note begins a new session; each message is paired and placed. */
function follow(session: Session, event: LogEvent): Followed[] {
  // New maps, not cleared ones: a reader may still hold the last session's.
  if (startedCommand(event) !== undefined) Object.assign(session, newSession(event));
  const { mark } = event;
  if (mark !== "→" && mark !== "←") return [];
  return event.messages.map((message) => {
    if (message.kind === "request") return followRequest(session, mark, message, event.exchange);
    if (message.kind === "response") return followResponse(session, mark, message, event.exchange);
    return { mark, message, request: undefined, place: undefined, failed: false };
  });
}

// ---- Reader: redact, a copy of the log that can be shared ----
// What redact catches, defined once, for redact, show, diagram and replay alike: names that
// hold secrets (a JSON key, or `name=value` and `name: value` in any text), and secrets known
// by their shape, wherever they stand: in requests, responses, stderr lines and wrap's own
// notes, as a JSON value, inside a JSON string, or in plain text. A value is replaced whole.
// It is best effort: a secret with neither a telling name nor a known shape stays.

/** What stands in for a secret. */
const REDACTED = "[redacted]";

/** A name that holds a secret, in any case and with any separators: one with password, passwd,
 * secret, token (not `tokens`, a count), cookie, authorization or credential in it, an API,
 * access, private or session key, or a name that ends in `_key`, `-key` or `.key`. Its words
 * are at most 40 characters on either side, so that no text takes long to search. */
const SECRET_NAME = String.raw`\w{0,40}?(?:pass(?:word|wd)|secret|token(?!s)|cookie|` +
  String.raw`authorization|credential|(?:api|access|private|session)[_.-]?key|[_.-]key\b)\w{0,40}`;

/** A JSON key whose value is a secret, whatever the value. */
const SECRET_KEY = new RegExp(SECRET_NAME, "i");

/** A secret's name and value in text: `DB_PASSWORD=…`, `Authorization: Basic …`, `"api_key":
 * "…"`, `Cookie: a=1; b=2`. The name, what stands between, and the value's quotes stay. A value
 * that opens a bracket, `'set-cookie': [ 'sid=…' ]`, is matched to the bracket: redactString
 * takes it to where it closes. */
const SECRET_PAIR = new RegExp(String.raw`\b(${SECRET_NAME})(["']?[ \t]*[:=][ \t]*)([[{(]|` +
  String.raw`"(?:[^"\\]|\\.)*"|'[^']*'|(?:(?:Basic|Bearer|Digest|Token)[ \t]+)?` +
  String.raw`[^\s"',;&]+(?:;[ \t]*[^\s"',;&=]+=[^\s"',;&]+)*)`, "gi");

/**
 * Secrets known by their shape, wherever they stand: a PEM private key (to its end, or the
 * text's), a bearer credential, GitHub tokens (ghp_, gho_, ghs_, ghu_, ghr_, github_pat_),
 * OpenAI and Anthropic keys (sk-, sk-ant-), Slack tokens (xox?-), AWS access key ids (AKIA,
 * ASIA), a JWT, and the user and password in a URL.
 */
const SECRET_SHAPES = [
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g,
  /\bBearer\s+[^\s"',;]+/g,
  /\b(?:gh[opsur]_[A-Za-z\d]{20,}|github_pat_\w{20,}|sk-[\w-]{16,}|xox[a-z]-[\w-]{8,})/g,
  /\bA(?:KI|SI)A[A-Z\d]{16}\b/g,
  /\beyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]*/g,
  /(?<=\w:\/\/)[^\s/@"']+:[^\s/@"']*(?=@)/g,
];

/** A line that is all base64, of mixed case and digits, as each line of a PEM key's body is
 * on stderr. */
const BASE64_LINE = /^(?=.*[A-Z])(?=.*[a-z])(?=.*\d)[A-Za-z\d+/]{40,}={0,2}$/;

/** Whether a JSON key's value is a secret; MCP's own progressToken is a request's handle, and
 * none (basic/utilities/progress). */
function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key) && key !== "progressToken";
}

/** A piece of a bracketed value: a quoted string (to its end, or its line's), text without
 * quotes or brackets, or one character; each piece read where the one before it ended. */
const VALUE_PIECE = /"(?:[^"\\\n]|\\.)*"?|'(?:[^'\\\n]|\\.)*'?|[^"'()[\]{}\n]+|./gy;

/** Where a value that opens a bracket at `start` ends: past the bracket that closes it (those
 * in quotes aside), or at its line's end. */
function bracketedEnd(text: string, start: number): number {
  let depth = 0;
  let end = start;
  VALUE_PIECE.lastIndex = start;
  for (const [piece] of text.matchAll(VALUE_PIECE)) {
    end += piece.length;
    if ("([{".includes(piece)) depth += 1;
    else if (")]}".includes(piece)) depth -= 1;
    if (depth === 0) break;
  }
  return end;
}

/** Text with every secret it holds replaced: first the named ones, then the shapes. A name's
 * pairs within a bracketed value already gone are passed over. */
function redactString(text: string): string {
  let named = "";
  let from = 0;
  for (const match of text.matchAll(SECRET_PAIR)) {
    const [pair, name = "", between = "", value = ""] = match;
    if (match.index < from) continue;
    const quote = value.startsWith('"') || value.startsWith("'") ? value.charAt(0) : "";
    const end = match.index + pair.length;
    named += `${text.slice(from, match.index)}${name}${between}${quote}${REDACTED}${quote}`;
    from = value === "(" || value === "[" || value === "{" ? bracketedEnd(text, end - 1) : end;
  }
  named += text.slice(from);
  return SECRET_SHAPES.reduce((redacted, shape) => redacted.replace(shape, REDACTED), named);
}

/** JSON.stringify's replacer for redaction: a secret key's value goes, and secrets in text. */
function hideSecret(key: string, value: unknown): unknown {
  if (isSecretKey(key)) return REDACTED;
  return typeof value === "string" ? redactString(value) : value;
}

/** A line's text redacted: JSON stays valid JSON, and is rewritten only when it held a secret. */
function redactText(text: string): string {
  const value = attempt((): unknown => JSON.parse(text));
  if (value === undefined) return BASE64_LINE.test(text) ? REDACTED : redactString(text);
  const redacted = JSON.stringify(value, hideSecret);
  return redacted === JSON.stringify(value) ? text : redacted;
}

/** A log line with its text redacted and its head kept; a line that is no event, whole. A
 * text that now begins as a note could gets the bar, as the tap would have given it. */
function redactLine(line: string): string {
  const head = EVENT_HEAD.exec(line);
  if (head === null) return redactText(line);
  const text = redactText(line.slice(head[0].length));
  const unbarred = head[2] !== undefined && !head[0].endsWith("| ");
  return `${head[0]}${unbarred && LOOKS_LIKE_NOTE.test(text) ? "| " : ""}${text}`;
}

/** wrap redact: the log with its secrets masked, on stdout, as it reads it. Byte for byte but
 * the secrets, except on a terminal, which gets it printable. */
async function redact({ logPath }: CommandLine): Promise<void> {
  const raw = process.stdout.isTTY !== true;
  await readLines(logPath, LOG_START, true, (lines) => print(lines.map(redactLine).join("\n"), raw))
    .catch((error: unknown) => cannot(`read ${logPath}`, error));
}

// ---- Reader: diagram, the session as Mermaid sequence diagrams for a post ----

/** The most a block's statements take, in characters: Zenn's limit on one code block (2,000),
 * less room for the fences, the note that joins a block to the one before, and a head of two
 * names of 40 characters. */
const BLOCK_ROOM = 2_000 - 100 - 200;

/**
 * Characters that mean something to Mermaid 8.10 or 11 inside a label, and look-alikes for
 * them: `;` ends a statement, `#…;` is an entity, `<` starts HTML, `%%{` a directive.
 */
const LOOKALIKES = new Map([["#", "＃"], [";", "；"], ["<", "‹"], [">", "›"], ["%", "％"],
  ["&", "＆"], ['"', "'"], ["{", "（"], ["}", "）"]]);

/** Each kind's arrow: solid for a request, open for a notification, dashed for a response. */
const ARROWS = { request: "->>", notification: "-)", response: "-->>", other: "->>" } as const;

/** Text made safe for a Mermaid label: printable, one line, look-alikes, at most `max`
 * characters. */
function label(text: string, max: number): string {
  const safe = printable(text).replace(/[#;<>%&"{}]/g, (found) => LOOKALIKES.get(found) ?? found);
  // A newline would end the statement (Mermaid's grammar): all white space is one space.
  const characters = Array.from(safe.replace(/\s+/g, " ").trim());
  const short = characters.length > max ? [...characters.slice(0, max - 1), "…"] : characters;
  return short.length === 0 ? "(empty)" : short.join("");
}

/** A side's name: clientInfo in a request's params, serverInfo in a result, or in `_meta`. */
function sideName(messages: readonly Message[], field: "params" | "result", info: string) {
  const names = messages.flatMap((message) => [dig(message, field, info, "name"),
    dig(message, field, "_meta", `io.modelcontextprotocol/${info}`, "name")]);
  return names.find((name) => typeof name === "string");
}

/** What a message's arrow says: what it is, never its whole payload. */
function describe({ message, request, place }: Followed, text: string): string {
  if (message.kind === "other") return `not JSON-RPC ${label(text, 20)}`;
  if (message.kind !== "response") {
    // A request's method, tool, elicitation message and round; a notification's method.
    const asked = elicitationMessage(message.method, message.params);
    return words(request?.name ?? message.method, asked, place && `(${place})`);
  }
  const content = dig(message.result, "content", "0", "text");
  if (message.error !== undefined) return `error ${String(dig(message.error, "code"))}`;
  if (dig(message.result, "isError") === true) return `isError ${String(content)}`;
  const asks = inputRequestsOf(message.result);
  // An arrow has room for the question, not for the method it travels in.
  const questions = asks?.map((asked) => asked.message ?? asked.method).join(", ");
  if (questions !== undefined) return `input required: ${questions}`;
  return elicitAnswer(message.result) ?? (typeof content === "string" ? content : "result");
}

/** An HTTP note of wrap's, `# <3> …`: its exchange, and what it says before any header. */
const HTTP_NOTE = /^<(\d+)> ([^·]*?)(?: from \S+)?(?: ·|$)/;

/** The diagram's note for an HTTP note, named by its exchange's request (`exchanges`); none for
 * a request's head, which names a GET's or DELETE's exchange, nor for a POST's plain answer:
 * the arrows show those. An event stream, an error status and an end each get one. */
function httpStatements(exchanges: Map<string, string>, event: LogEvent): string[] {
  const [, exchange = "", what = ""] = HTTP_NOTE.exec(event.text) ?? [];
  const asked = exchanges.get(exchange);
  const head = /^[A-Z]+ \//.test(what);
  if (head && !what.startsWith("POST ")) keepPending(exchanges, exchange, what);
  const plain = /^2\d\d(?! text\/event-stream)/.test(what) && !/^[A-Z]+ \//.test(asked ?? "");
  return head || plain ? [] : [`Note over C,S: ${label(words(asked && `${asked}:`, what), 70)}`];
}

/** The diagram's statements for one event: an arrow per message, a note for the rest. Over HTTP
 * `exchanges` keeps the name of each exchange's request, for its notes. */
function statements(event: LogEvent, followed: readonly Followed[],
  exchanges: Map<string, string>): string[] {
  if (event.mark === "#" && HTTP_NOTE.test(event.text)) return httpStatements(exchanges, event);
  if (event.mark === "#") return [`Note over C,S: ${label(event.text, 70)}`];
  const asked = followed.find((each) => each.mark === "→" && each.message.kind === "request");
  const name = asked?.request?.name;
  if (name !== undefined && event.exchange !== undefined) {
    keepPending(exchanges, String(event.exchange), name);
  }
  if (event.mark === "!") return [`Note right of S: ${label(event.text, 50)}`];
  return [...followed.map((each) => {
    const [from, to] = each.mark === "→" ? ["C", "S"] : ["S", "C"];
    // Only a response has a round-trip time (a batch's line shows its first response's).
    const elapsed = each.message.kind === "response" ? event.elapsed : undefined;
    const text = words(elapsed && `${elapsed} ms`, describe(each, event.text));
    return `${from}${ARROWS[each.message.kind]}${to}: ${label(text, 50)}`;
  }), ...event.tags.map((tag) => `Note over C,S: ${label(tag, 30)}`)];
}

/** The participants a log names: the clientInfo and serverInfo it first gives, and the
 * command of its first start note. */
type Sides = Partial<Record<"client" | "server" | "command", string | undefined>>;

/** A block's head: the participants by name, or the client and, for a server that has not given
 * its name (one that failed, or never answered), its command's first two words. */
function diagramHead({ client, server, command }: Sides): string[] {
  const named = command?.split(" ").slice(0, 2).map((word) => word.split("/").at(-1)).join(" ");
  return ["sequenceDiagram", `participant C as ${label(client ?? "client", 40)}`,
    `participant S as ${label(server ?? named ?? "server", 40)}`];
}

/** wrap diagram: the log drawn as ```mermaid blocks, redacted unless --no-redact, on stdout or
 * into --out. It reads the log as a stream, and writes each block once it is full, the sides
 * named as the log has named them so far; a log that fills more than one has numbered parts. */
async function writeDiagram({ logPath, values }: CommandLine): Promise<void> {
  const failed = (error: unknown) => cannot(`write ${values.out}`, error);
  const file = values.out === undefined ? undefined : await open(values.out, "w").catch(failed);
  const session = newSession();
  const exchanges = new Map<string, string>();
  const sides: Sides = {};
  const part: string[] = [];
  let size = 0;
  let parts = 0;
  const flush = (last: boolean) => {
    parts += 1;
    const title = parts > 1 || !last ? [`Part ${parts}`, ""] : [];
    const block = [...title, "```mermaid", ...diagramHead(sides), ...part.splice(0), "```", ""];
    // The next part begins with a note that joins it to this one: BLOCK_ROOM leaves it room.
    if (!last) part.push(`Note over C,S: part ${parts + 1}, continued from part ${parts}`);
    size = 0;
    const text = `${block.join("\n")}${last ? "" : "\n"}`;
    return file === undefined ? print(text) : file.write(text).catch(failed);
  };
  await readEvents(logPath, LOG_START, true, values["no-redact"] !== true, async (events) => {
    for (const event of events) {
      sides.command ??= startedCommand(event);
      sides.client ??= sideName(event.messages, "params", "clientInfo");
      sides.server ??= sideName(event.messages, "result", "serverInfo");
      for (const statement of statements(event, follow(session, event), exchanges)) {
        if (size + statement.length > BLOCK_ROOM) await flush(false);
        part.push(statement);
        size += statement.length + 1;
      }
    }
  }).catch((error: unknown) => cannot(`read ${logPath}`, error));
  await flush(true);
  await file?.close().catch(failed);
}

// ---- Reader: replay, a golden test of any server, stdio or HTTP, from one recorded session ----

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
    return [...keys].flatMap((key) =>
      differences(dig(expected, key), dig(actual, key), [...path, key], ignore));
  }
  return JSON.stringify(expected) === JSON.stringify(actual) ? [] : [{ path, expected, actual }];
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
  const shown = JSON.stringify(text.slice(from, at + AROUND));
  return `${from > 0 ? "…" : ""}${shown}${at + AROUND < text.length ? "…" : ""}`;
}

/** One difference as one line: the JSON path, then both values, or where two strings part. */
function describeDifference({ path, expected, actual }: Difference, redact: boolean): string {
  const where = path.length === 0 ? "(the whole message)" : path.join(".");
  const hidden = `${where}: differs, in a redacted value`;
  if (redact && path.some(isSecretKey)) return hidden;
  if (typeof expected !== "string" || typeof actual !== "string") {
    return `${where}: expected ${brief(expected, redact)}, got ${brief(actual, redact)}`;
  }
  const shownExpected = redact ? redactString(expected) : expected;
  const shownActual = redact ? redactString(actual) : actual;
  if (shownExpected === shownActual) return hidden;
  let at = 0;
  while (shownExpected[at] === shownActual[at]) at += 1;
  return `${where}: strings part at character ${at}: expected ${around(shownExpected, at)}, ` +
    `got ${around(shownActual, at)}`;
}

/** One differing response's report: a line naming it, then its differences, kept short. */
function report(name: string, found: Difference[], redact: boolean): string {
  const shown = found.slice(0, REPORT_LINES - 2).map((one) => describeDifference(one, redact));
  const more = found.length - shown.length;
  if (more > 0) shown.push(`(${more} more)`);
  // Each difference on a line of its own, indented under the line that names the response.
  const text = [`✗ ${name}`, ...shown].join("\n  ");
  return text.length > REPORT_CHARACTERS ? `${text.slice(0, REPORT_CHARACTERS - 1)}…` : text;
}

/** A replay's state, whatever carries it: what the server has sent that replay has not used
 * yet (each response with the exchange it came in over HTTP), the ids of the requests it has
 * sent, as JSON, so that id 1 and "1" differ, and `heard`, which says "line" on each line; the
 * session it replays, the requestStates it replaced, what the comparison leaves out, and the
 * tally so far. `exited` aborts when the server has exited. */
function replayState(line: CommandLine, exited: AbortSignal) {
  // An input_required result's requestState is left out of the comparison, and `states` holds
  // the ones a replayed server wrote in place of the recorded ones. A server signs its state
  // anew on each run (basic/patterns/mrtr: it is opaque to the client), so a retry is sent with
  // this run's, and the state itself is no difference. Nor is the exchange a response came in.
  const ignored = [...(line.values.ignore ?? []).map((path) => path.split(".")),
    ["result", "requestState"], ["exchange"]];
  const responses: (JSONRPCResponse & { exchange?: number | undefined })[] = [];
  return { heard: new EventEmitter(), responses, requested: new Set<string>(), exited,
    session: newSession(), states: new Map<string, string>(), ignored, timeoutMs: line.timeoutMs,
    redact: line.values["no-redact"] !== true, tally: { match: 0, differ: 0, missing: 0 } };
}

/** A replay as it goes: its state, and how its carrier takes part: `noted` reads each event of
 * the log first (HTTP's head notes), `send` sends a client's line of an exchange (over HTTP),
 * and `finish` ends the session once the log is replayed. */
type Replay = ReturnType<typeof replayState> & { noted: (event: LogEvent) => void;
  send: (text: string, exchange?: number) => Promise<void>; finish: () => Promise<void> };

/** Takes a line the server sent, under the exchange it came in over HTTP. */
function hear(run: Replay, text: string, exchange?: number): void {
  for (const message of messagesOf(text)) {
    if (message.kind === "response") run.responses.push({ ...message, exchange });
    if (message.kind === "request") run.requested.add(JSON.stringify(message.id));
  }
  run.heard.emit("line");
}

/** Starts the command to replay to, over stdio: its stdin takes the client's lines, and each
 * line of its stdout is heard. */
function startReplay(line: CommandLine) {
  const server = spawned(line.command, () =>
    spawn(line.command, line.args, { stdio: ["pipe", "pipe", "inherit"] }));
  // A server that has exited cannot read: what it left unanswered shows as missing.
  server.stdin.on("error", () => {});
  const exited = new AbortController();
  server.on("close", () => exited.abort());
  // A process the server started may hold its stdout open; wait for it no longer than the grace.
  server.on("exit", () => setTimeout(() => server.stdout.destroy(), PIPES_GRACE_MS).unref());
  const send = async (text: string) => {
    const sent = server.stdin.write(`${text}\n`);
    if (!sent) await once(server.stdin, "drain", { signal: exited.signal }).catch(() => {});
  };
  // A server that outlives the end of its input is stopped after the same time limit (check's
  // own, its wrap, sooner with a signal it passes on); unref'd, so that a server that exits in
  // time leaves no timer holding wrap.
  const finish = async (signal: NodeJS.Signals = "SIGKILL", afterMs = line.timeoutMs) => {
    server.stdin.end();
    setTimeout(() => server.kill(signal), afterMs).unref();
    if (!exited.signal.aborted) await once(exited.signal, "abort");
  };
  const run = { ...replayState(line, exited.signal), noted: () => {}, send, finish };
  createInterface({ input: server.stdout }).on("line", (text) => hear(run, text));
  return run;
}

/** The MCP headers a replay over HTTP sends as its log's `# <3> POST` note names them
 * (2026-07-28 basic/transports/streamable-http §Request Metadata), each after a ` · `. */
const REPLAYED_HEADER = / · (MCP-Protocol-Version|Mcp-Method|Mcp-Name): (.*?)(?= · |$)/gi;

/**
 * Starts a replay to the HTTP server at --url. Each client's line is a POST of its own, with the
 * MCP headers its exchange's `# <3> POST` note names and the session the live server gave, if it
 * gave one (§Session Management), never the recorded one. Its answer is heard under the exchange,
 * line by line: a JSON body, or each data line of an event stream (a server writes a message on
 * one). An exchange the log says the client closed is closed; at the end, replay waits for the
 * open ones as long as for a response.
 */
function startHttpReplay(line: CommandLine): Replay {
  const [url, heads] = [new URL(line.values.url ?? ""), new Map<number | undefined, string>()];
  const open = new Map<ClientRequest, number | undefined>();
  let session: string | string[] | undefined;
  // A POST's head note, or the client's closing: either way, what is open under that number is
  // over (a log that holds two runs of wrap numbers each from 1).
  const noted = ({ mark, text }: LogEvent) => {
    const [, exchange, what] = /^<(\d+)> (POST|closed by the client)/.exec(text) ?? [];
    if (mark === "#" && what === "POST") heads.set(Number(exchange), text);
    for (const [post, at] of open) if (mark === "#" && at === Number(exchange)) post.destroy();
  };
  const send = async (text: string, exchange?: number) => {
    const head = (heads.get(exchange) ?? "").matchAll(REPLAYED_HEADER);
    const named = Array.from(head, ([, name = "", value = ""]) => [name, value] as const);
    const headers = { "Content-Type": "application/json",
      Accept: "application/json, text/event-stream", ...Object.fromEntries(named),
      ...(session && { "Mcp-Session-Id": session }) };
    const request = url.protocol === "https:" ? httpsRequest : httpRequest;
    const post = request(url, { method: "POST", headers, agent: false }, (answer) => {
      session = answer.headers["mcp-session-id"] ?? session;
      // A JSON body's lines are its message; an event stream's, each data line (HTML §9.2.6).
      const events = /^text\/event-stream/.test(String(answer.headers["content-type"]));
      const data = events ? /^data: ?(.*)/s : /(.*)/s;
      // An answer replay closed itself ends in an error, which is no failure.
      createInterface({ input: answer }).on("error", () => {})
        .on("line", (text) => hear(run, data.exec(text)?.[1] ?? "", exchange));
    });
    open.set(post, exchange);
    post.on("error", (error) => post.destroyed || warn(`replay: POST ${url}: ${error.message}`));
    post.on("close", () => open.delete(post) && run.heard.emit("line"));
    post.end(text);
  };
  const finish = async () => {
    await waitFor(run, () => open.size === 0);
    for (const post of open.keys()) post.destroy();
  };
  const run = { ...replayState(line, new AbortController().signal), noted, send, finish };
  return run;
}

/** Waits until `check` holds, the server has exited, or the timeout has passed. */
async function waitFor(replay: Replay, check: () => boolean) {
  const signal = AbortSignal.any([replay.exited, AbortSignal.timeout(replay.timeoutMs)]);
  // That timeout holds nothing running; over HTTP, with no answer on the way, nothing else may.
  const held = setTimeout(() => {}, replay.timeoutMs);
  while (!check() && !signal.aborted) await once(replay.heard, "line", { signal }).catch(() => {});
  clearTimeout(held);
}

/** Waits for the replayed server's answer to a recorded response's request, and compares. */
async function replayResponse(replay: Replay, recorded: Replay["responses"][0], request?: Asked) {
  const id = JSON.stringify(recorded.id);
  // Over HTTP, in the exchange the recorded one came in, when both have one.
  const answers = (each: typeof recorded) =>
    JSON.stringify(each.id) === id && (each.exchange ?? recorded.exchange) === recorded.exchange;
  // The client sent its next line only after this response came back; so does replay.
  await waitFor(replay, () => replay.responses.some(answers));
  const index = replay.responses.findIndex(answers);
  const actual = index === -1 ? undefined : replay.responses.splice(index, 1)[0];
  // The state the replayed server gave where the recorded one gave another.
  const [before, now] = [recorded, actual].map((each) => dig(each?.result, "requestState"));
  if (typeof before === "string" && typeof now === "string") replay.states.set(before, now);
  const found = actual === undefined ? [] : differences(recorded, actual, [], replay.ignored);
  replay.tally[actual === undefined ? "missing" : found.length > 0 ? "differ" : "match"] += 1;
  const name = request === undefined ? id : `${id} ${JSON.stringify(request.method)}`;
  if (actual === undefined) await print(`✗ ${name}: missing\n`);
  if (found.length > 0) await print(`${report(name, found, replay.redact)}\n`);
}

/** Replays one event: waits for what the recorded client waited for, then sends a client's
 * line, as fast as the server reads it. */
async function replayEvent(run: Replay, event: LogEvent): Promise<void> {
  run.noted(event);
  const { exchange } = event;
  for (const { mark, message, request } of follow(run.session, event)) {
    if (message.kind !== "response") continue;
    const id = JSON.stringify(message.id);
    // The client answered a request of the server's only once it had come; so does replay.
    if (mark === "→" && request !== undefined) await waitFor(run, () => run.requested.has(id));
    if (mark === "←") await replayResponse(run, { ...message, exchange }, request);
  }
  if (event.mark !== "→") return;
  // The recorded line, with each requestState the replayed server replaced put back as its own.
  const text = event.text.replace(/"requestState":"([^"\\]*)"/g, (found, state: string) => {
    const replayed = run.states.get(state);
    return replayed === undefined ? found : `"requestState":${JSON.stringify(replayed)}`;
  });
  await run.send(text, event.exchange);
}

/** wrap replay: sends the log's client lines to the command, or POSTs them to --url, each when
 * the recorded client sent it, and compares each response; then ends the session, waits for
 * the server, and prints the summary: exit code 0 when all match. */
async function replay(line: CommandLine): Promise<void> {
  const failed = (error: unknown) => cannot(`read ${line.logPath}`, error);
  // A log that cannot be read starts no server.
  await access(line.logPath).catch(failed);
  const run = line.values.url === undefined ? startReplay(line) : startHttpReplay(line);
  await readEvents(line.logPath, LOG_START, true, false, async (events) => {
    for (const event of events) await replayEvent(run, event);
  }).catch(failed);
  await run.finish();
  for (const { id } of run.responses) await print(`✗ ${JSON.stringify(id)}: unexpected\n`);
  const { match, differ, missing } = run.tally;
  await print(`replay: ${match + differ + missing} responses, ${match} match, ` +
    `${differ} differ, ${missing} missing, ${run.responses.length} unexpected\n`);
  process.exitCode = differ + missing + run.responses.length === 0 ? 0 : 1;
}

// ---- Reader: show, the log as a person reads it, whole or as it grows ----

/** How show prints, and the session it follows. */
type Shower = { width: number; colour: boolean; redact: boolean; methods: string[];
  errorsOnly: boolean; session: Session };

/** Where show has read a followed log to: which file (by inode), how far, a line begun, and
 * whether it has said that the log is not there. */
type Place = Reading & { inode: number | undefined; absent: boolean };

/** The terminal colours show uses, as SGR codes. */
const COLOURS = { "→": "36", "←": "35", "!": "33", "#": "1", error: "31" } as const;

/** A notification in a few words: a cancellation's request and reason, a progress's step. */
function notificationSummary(message: JSONRPCNotification): string {
  if (message.method === "notifications/cancelled") {
    const requestId = JSON.stringify(dig(message.params, "requestId"));
    return `${message.method} #${requestId} ${String(dig(message.params, "reason") ?? "")}`;
  }
  const progress = dig(message.params, "progress");
  const total = dig(message.params, "total");
  const of = total === undefined ? "" : `/${String(total)}`;
  return progress === undefined ? message.method : `${message.method} ${String(progress)}${of}`;
}

/** A response in a few words: id, round trip, then an error, what it asks, or what it says. */
function responseSummary({ id, result, error }: JSONRPCResponse, elapsed: string | undefined) {
  const head = words(`#${JSON.stringify(id)}`, elapsed && `${elapsed} ms`);
  const code = dig(error, "code");
  if (error !== undefined) return `${head} error ${String(code)} ${String(dig(error, "message"))}`;
  const asks = inputRequestsOf(result);
  if (asks !== undefined) return `${head} input_required ${briefAsks(asks)}`;
  const said = dig(result, "content", "0", "text");
  const shown = elicitAnswer(result) ?? (typeof said === "string" ? said : JSON.stringify(result));
  return `${head} ${dig(result, "isError") === true ? "isError" : "result"} ${shown}`;
}

/** What one message is, in a few words and a summary of what it carries; a request's are its
 * method and tool, id, a retry's round, and its arguments or message. */
function summary({ message, request, place }: Followed, event: LogEvent): string {
  // Quoted, so that its text is never taken for a tag; its tags say what it is.
  if (message.kind === "other") return JSON.stringify(event.text);
  if (message.kind === "notification") return notificationSummary(message);
  if (message.kind === "response") return responseSummary(message, event.elapsed);
  const args = dig(message.params, "arguments") ?? message.params;
  // An elicitation is read for its message to the user (client/elicitation), not its schema.
  const carried = elicitationMessage(message.method, message.params) ?? JSON.stringify(args);
  return words(request?.name ?? message.method, `#${JSON.stringify(message.id)}`, place, carried);
}

/** Whether the filters let a message through; a response goes as its request went. */
function passes(shower: Shower, { message, request, failed }: Followed): boolean {
  if (shower.errorsOnly && !failed) return false;
  if (shower.methods.length === 0) return true;
  const name = message.kind === "notification" ? message.method : request?.name;
  return shower.methods.some((wanted) => name === wanted || name?.startsWith(`${wanted} `));
}

/** One printed line: printable, on one line, cut to the width with "…", coloured on a
 * terminal by its mark, or as an error when it `failed`; and its newline. */
function fitted(shower: Shower, time: string, mark: Mark, text: string, failed = false) {
  const characters = Array.from(printable(`${time} ${mark} ${text}`).replace(/[\t\n]/g, " "));
  const long = characters.length > shower.width;
  const line = long ? `${characters.slice(0, shower.width - 1).join("")}…` : characters.join("");
  const colour = failed ? COLOURS.error : COLOURS[mark];
  return shower.colour ? `\u001b[${colour}m${line}\u001b[0m\n` : `${line}\n`;
}

/** The lines show prints for one event: one per message that passes, or none. */
function showEvent(shower: Shower, event: LogEvent): string[] {
  // Every event is followed, shown or not, so that pairs and rounds are counted right.
  const followed = follow(shower.session, event);
  const { start } = shower.session;
  if (start === event) return [fitted(shower, "───", "#", event.text)];
  const since = Date.parse(event.time) - (start === undefined ? 0 : Date.parse(start.time));
  const time = `+${(since / 1000).toFixed(3)}s`;
  // A ! or # line has no notes (see parseEvent), and a filter keeps messages only.
  if (event.mark === "!" || event.mark === "#") {
    const filtering = shower.methods.length > 0 || shower.errorsOnly;
    return filtering ? [] : [fitted(shower, time, event.mark, event.text)];
  }
  const tags = event.tags.map((tag) => `[${tag}] `).join("");
  return followed.filter((each) => passes(shower, each))
    .map((each) => fitted(shower, time, each.mark, tags + summary(each, event), each.failed));
}

/** Prints what some events of a log show, each line printable already. */
function showEvents(shower: Shower, events: readonly LogEvent[]): Promise<void> {
  return print(events.flatMap((event) => showEvent(shower, event)).join(""), true);
}

/**
 * Shows what a followed log holds past `place`: all of it when the log is new, was cut, or
 * was replaced by another file. A log that is not there is waited for, and said so once on
 * stderr, as `tail -F` does.
 */
async function readOn(shower: Shower, path: string, place: Place): Promise<Place> {
  const found = await stat(path).catch(() => undefined);
  if (found === undefined) {
    if (!place.absent) warn(`no log at ${path} yet: waiting for it`);
    return { ...place, absent: true };
  }
  // A log seen for the first time is another file too, read from its start.
  const other = found.ino !== place.inode || found.size < place.offset || place.absent;
  const said = "─── the log was cut or replaced: reading it from its start\n";
  if (other && place.inode !== undefined) process.stdout.write(said);
  const from = other ? LOG_START : place;
  const read = await readEvents(path, from, false, shower.redact,
    (events) => showEvents(shower, events)).catch(() => from);
  return { ...read, inode: found.ino, absent: false };
}

/** Follows a log until SIGINT, from its start, each change read from where the last read ended. */
async function followLog(shower: Shower, path: string): Promise<never> {
  // One read at a time, each from where the last ended.
  let reading = Promise.resolve<Place>({ ...LOG_START, inode: undefined, absent: false });
  const readMore = () => { reading = reading.then((place) => readOn(shower, path, place)); };
  // inotify on the log's folder tells at once of a write, and of a log made or replaced; a
  // look once a second also sees a log whose folder was not there yet.
  attempt(() => watch(dirname(path), (_, changed) => {
    if (changed === basename(path)) readMore();
  }).on("error", () => {}));
  watchFile(path, { interval: 1_000 }, readMore);
  readMore();
  process.on("SIGINT", () => process.exit(0));
  return new Promise(() => {});
}

/** wrap show: prints a log one line per message, fitted to the terminal's width and coloured on
 * one, kept as the command line's filters say; with --follow, goes on as it grows. */
async function show({ logPath, values }: CommandLine): Promise<void> {
  const terminal = process.stdout.isTTY === true;
  // A terminal that says nothing of its size, or something too narrow to use, gets 80.
  const columns = terminal ? process.stdout.columns ?? 0 : 0;
  // NO_COLOR (no-color.org): set and not empty, it turns colour off.
  const shower: Shower = { width: columns >= 20 ? columns : 80, session: newSession(),
    colour: terminal && (process.env.NO_COLOR ?? "") === "", redact: values["no-redact"] !== true,
    methods: values.method ?? [], errorsOnly: values.errors === true };
  if (values.follow === true) await followLog(shower, logPath);
  const { skipped } = await readEvents(logPath, LOG_START, true, shower.redact,
    (events) => showEvents(shower, events))
    .catch((error: unknown) => cannot(`read ${logPath}`, error));
  if (skipped > 0) await print(`skipped ${skipped} lines that are not wire.log events\n`);
}

// ---- Reader: stats, figures per method and per session, read as a stream ----

/** Figures for one kind of request (its direction, method, and tool for tools/call), kept with
 * the first request of the kind: how many were sent and failed, and how many round trips took
 * each time, by tenths of a millisecond, as the log writes them: a few thousand counts, however
 * long the log, and percentiles that are exact. */
type RequestFigures = { request: Asked; count: number; errors: number;
  roundTrips: Map<number, number> };

/** A new session's figures, from its `# start` line to the next one. `waiting` is the
 * follower's requests in flight, which are left unanswered at the session's end. */
function newFigures(start: string, command: string, session: Session) {
  return { start, end: start, command, requests: new Map<string, RequestFigures>(),
    waiting: session.waiting, notifications: new Map<string, number>(),
    tags: new Map<string, number>(), stderrLines: 0,
    messages: { "→": { count: 0, bytes: 0 }, "←": { count: 0, bytes: 0 } } };
}

/** One session's figures, as newFigures makes them. */
type SessionFigures = ReturnType<typeof newFigures>;

/** Adds one to a count in a map. */
function countIn<K>(counts: Map<K, number>, key: K): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

/** Adds one event to the session it belongs to: its messages, and each request under its kind
 * (made at its first count), with its response's error and round trip there too. */
function countEvent(session: SessionFigures, event: LogEvent, followed: readonly Followed[]) {
  session.end = event.time;
  for (const tag of event.tags) countIn(session.tags, /^\d+ bytes$/.test(tag) ? "over 1 MiB" : tag);
  if (event.mark === "!") session.stderrLines += 1;
  if (event.mark !== "→" && event.mark !== "←") return;
  session.messages[event.mark].bytes += Buffer.byteLength(event.text) + 1;
  for (const { mark, message, request, failed } of followed) {
    if (message.kind !== "other") session.messages[mark].count += 1;
    const notified = message.kind === "notification" ? message.method : undefined;
    if (notified !== undefined) countIn(session.notifications, `${mark} ${notified}`);
    if (request === undefined) continue;
    const key = `${request.mark} ${request.name}`;
    const figures = session.requests.get(key) ??
      { request, count: 0, errors: 0, roundTrips: new Map<number, number>() };
    session.requests.set(key, figures);
    if (message.kind === "request") figures.count += 1;
    // Only a response fails, and only a response's line gives its round trip.
    if (failed) figures.errors += 1;
    if (message.kind !== "response" || event.elapsed === undefined) continue;
    countIn(figures.roundTrips, Math.round(Number(event.elapsed) * 10));
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
  const requests = [...session.requests.values()].map(({ request, count, errors, roundTrips }) => ({
    direction: request.mark, method: request.method, tool: request.tool ?? null, count, errors,
    p50Ms: percentileOf(roundTrips, 50), p95Ms: percentileOf(roundTrips, 95),
    maxMs: percentileOf(roundTrips, 100) }));
  const notifications = [...session.notifications]
    .map(([key, count]) => ({ direction: key.slice(0, 1), method: key.slice(2), count }));
  const { start, end, command, messages, waiting, tags, stderrLines } = session;
  return { start, command, lengthMs: Date.parse(end) - Date.parse(start), requests, notifications,
    messages, unanswered: waiting.size, tags: Object.fromEntries(tags), stderrLines };
}

/** A session's figures as text, for a person: a table of the requests, ms with one decimal or
 * a dash, then a line each for the notifications, the messages, and the rest. */
function sessionText(figures: ReturnType<typeof sessionJson>, index: number): string[] {
  const seconds = (figures.lengthMs / 1000).toFixed(1);
  const widths = [36, 6, 7, 8, 8, 8];
  const cells = (row: string[]) => `  ${row.map((cell, at) =>
    (at === 0 ? cell.padEnd(widths[at] ?? 0) : cell.padStart(widths[at] ?? 0))).join("")}`;
  const ms = (value: number | null) => (value === null ? "—" : value.toFixed(1));
  const requests = figures.requests.map((each) => {
    const name = words(each.direction, each.method, each.tool ?? undefined);
    const times = [ms(each.p50Ms), ms(each.p95Ms), ms(each.maxMs)];
    return cells([label(name, 36), String(each.count), String(each.errors), ...times]);
  });
  const listed = (items: string[]) => (items.length === 0 ? "none" : items.join(" · "));
  const notes = figures.notifications.map((one) => `${one.direction} ${one.method} ${one.count}`);
  // Each direction in turn, → then ←, as sessionJson has them.
  const ways = Object.entries(figures.messages)
    .map(([mark, { count, bytes }]) => `${mark} ${count} (${bytes.toLocaleString("en-US")} bytes)`);
  const tags = Object.entries(figures.tags).map(([tag, count]) => `[${tag}] ${count}`);
  return [
    `session ${index + 1} · ${figures.start} · ${seconds} s · ${figures.command}`,
    cells(["request", "count", "errors", "p50 ms", "p95 ms", "max ms"]),
    ...requests,
    `  notifications: ${listed(notes)}`,
    `  messages: ${ways.join(" · ")}`,
    `  unanswered: ${figures.unanswered} · stderr lines: ${figures.stderrLines}` +
      ` · tags: ${listed(tags)}`,
  ];
}

/** wrap stats: prints a log's figures, as text or as JSON. */
async function stats({ logPath, values }: CommandLine): Promise<void> {
  const all: SessionFigures[] = [];
  const session = newSession();
  let figures: SessionFigures | undefined;
  const { skipped } = await readEvents(logPath, LOG_START, true, false, (events) => {
    for (const event of events) {
      const followed = follow(session, event);
      // A session starts at its `# start` note; a log that starts mid-session, at its first event.
      if (session.start === event || figures === undefined) {
        figures = newFigures(event.time, startedCommand(event) ?? "(no start line)", session);
        all.push(figures);
      }
      countEvent(figures, event, followed);
    }
  }).catch((error: unknown) => cannot(`read ${logPath}`, error));
  const sessions = all.map(sessionJson);
  // printable keeps JSON valid JSON: it escapes only characters a JSON string may escape.
  if (values.json === true) return print(`${JSON.stringify({ sessions, skipped }, null, 2)}\n`);
  const blocks = sessions.map((one, index) => sessionText(one, index).join("\n"));
  if (blocks.length === 0) blocks.push("no session: this file holds no wire.log event");
  if (skipped > 0) blocks.push(`skipped ${skipped} lines that are not wire.log events`);
  await print(`${blocks.join("\n\n")}\n`);
}

// ---- Reader: check, whether each of five agent CLIs will take a server ----
// check holds a server up to the rules of five agent CLIs: how long each waits for the first
// answer, what a stray stdout line costs, what each does with a tool's name, schema and
// description, when it leaves the 2026-07-28 era, and which results it cannot read. The rules
// are measured, not assumed: tests/agents/rules.test.ts and tests/claude-code/rules.test.ts run
// each defect against the pinned CLI, and docs/clients.md has the table. check reviews a log that
// wrap recorded. Given a command instead, it runs wrap on it and opens the server as each CLI
// does (never calling a tool: a tool may have effects), then reviews that log.

/** The five CLIs, by their key in --json, in the order check prints them. */
const CLIENT_KEYS = ["claude-code", "codex", "gemini", "qwen", "copilot"] as const;
type Client = (typeof CLIENT_KEYS)[number];

/** Each CLI by the name a person reads. */
const CLIENTS: Record<Client, string> = { "claude-code": "Claude Code", codex: "Codex",
  gemini: "Gemini CLI", qwen: "Qwen Code", copilot: "Copilot CLI" };

/** One thing a CLI would do with the server, as --json prints it: an `error` where the CLI loses
 * the server, a tool or a call, or the model gets nothing; a `warning` where it changes
 * something (a name, a description, the era) and works. */
type Finding = { rule: string; severity: "error" | "warning"; tool?: string; message: string };

/** What a rule is held against, one of: the sessions as a whole; a tool that tools/list gave,
 * with every name of the list and the server's name; a result of tools/call. */
type Subject = { firstAnswerMs?: number; unlisted?: boolean; refused?: boolean; noise?: boolean;
  name?: string; tool?: unknown; names?: string[]; server?: string; result?: unknown };

/** What a CLI does where a rule applies: how grave, and in words. */
type Consequence = [Finding["severity"], string];

/** A rule: what each CLI it concerns does where `applies` holds, and what the author should do;
 * `stdioOnly` says why it does not apply to a session over HTTP, if it does not. */
type Rule = { rule: string; applies: (subject: Subject, client: Client) => boolean;
  clients: Partial<Record<Client, Consequence>>; advice: string; stdioOnly?: string };

/** The same consequence for each of `clients`. */
function some(clients: readonly Client[], ...consequence: Consequence): Rule["clients"] {
  return Object.fromEntries(clients.map((client): [Client, Consequence] => [client, consequence]));
}

/** How long a CLI waits for the first answer before it goes on without the server. */
const WAITS_MS: Partial<Record<Client, number>> = { codex: 1_000, "claude-code": 2_000 };

/** How a CLI names a tool to its model (prefix, separator), and the most characters it keeps. */
const NAME_FORMS: Partial<Record<Client, [string, string, number]>> = { copilot: ["", "-", 64],
  "claude-code": ["mcp__", "__", 64], gemini: ["mcp_", "_", 63], qwen: ["mcp__", "__", 63] };

/** The characters some CLI replaces in a tool's name; Gemini CLI keeps a dot. */
const REPLACED = /[^A-Za-z0-9_-]/g;

/** The rules, as measured (docs/clients.md). firstAnswerMs is the slowest session's. */
const RULES: Rule[] = [
  { rule: "slow-start", applies: ({ firstAnswerMs = 0 }, client) =>
    firstAnswerMs > (WAITS_MS[client] ?? Infinity), clients: {
    codex: ["error", "leaves it out after about 1 s, silently, unless `required = true`"],
    "claude-code": ["error", "runs `claude -p` without it after about 2 s"] },
  advice: "answer within 1 s (Claude Code waits with MCP_CONNECTION_NONBLOCKING=false)",
  stdioOnly: "its wait for a first answer, measured for a server the CLI starts" },
  { rule: "slow-start", applies: ({ unlisted }) => unlisted === true,
    clients: some(CLIENT_KEYS, "error", "cannot list its tools"),
    advice: "answer tools/list; if the server is only slow, give check a longer --timeout" },
  { rule: "era-fallback", applies: ({ refused }) => refused === true,
    clients: some(["claude-code", "copilot"], "warning", "falls back to initialize, 2025-11-25"),
    advice: "answer server/discover with supportedVersions that include 2026-07-28" },
  { rule: "stdout-noise", applies: ({ noise }) => noise === true,
    clients: some(["gemini"], "error", 'drops the server: "MCP issues detected"'),
    advice: "write logs to stderr: stdout is for JSON-RPC messages only",
    stdioOnly: "there is no stdout over HTTP" },
  { rule: "tool-name", applies: ({ name = "" }, client) => name.replace(REPLACED, "_") !== name &&
    (client !== "gemini" || /[^A-Za-z0-9_.-]/.test(name)),
  clients: some(CLIENT_KEYS, "warning", "renames it"), advice: "name it from [A-Za-z0-9_-]" },
  { rule: "tool-name", applies: ({ name = "", names = [] }) => names.filter((other) =>
    other.replace(REPLACED, "_") === name.replace(REPLACED, "_")).length > 1,
  clients: some(["claude-code", "copilot"], "error", "offers one of the names that become one"),
  advice: "give each tool a name of its own from [A-Za-z0-9_-]" },
  { rule: "tool-name", applies: ({ name = "", server = "" }, client) => {
    const [before, between, most] = NAME_FORMS[client] ?? ["", "", Infinity];
    return (before + server + between + name).length > most;
  }, clients: { ...some(["gemini", "qwen", "copilot"], "warning", "cuts it to 63 or 64"),
    "claude-code": ["error", "sends mcp__<server>__<tool>, over 64: Anthropic's API refuses it"] },
  advice: "keep mcp__<server>__<tool> within 64 characters" },
  { rule: "input-schema", applies: ({ name, tool }) => name !== undefined &&
    dig(tool, "inputSchema", "type") !== "object",
  clients: { ...some(["claude-code", "gemini", "qwen"], "error", "drops the whole server"),
    ...some(["codex", "copilot"], "warning", 'adds "type": "object"') },
  advice: 'give its inputSchema "type": "object" at the top' },
  { rule: "input-schema", applies: ({ tool }) => /"format":"/.test(JSON.stringify(tool) ?? ""),
    clients: { codex: ["warning", "drops `format`"],
      copilot: ["warning", "moves `format` into the description"] },
    advice: "say in the description what `format` says" },
  { rule: "description", applies: ({ tool }) => String(dig(tool, "description")).length > 4_096,
    clients: some(["claude-code"], "warning", "cuts the description to 4,096 characters"),
    advice: "keep the description within 4,096 characters" },
  // The content blocks a tool's result may hold (server/tools §Tool Result).
  { rule: "result-content", applies: ({ result }) => [dig(result, "content")].flat().some((block) =>
    block !== undefined && !["text", "image", "audio", "resource_link", "resource"]
      .includes(String(dig(block, "type")))),
  clients: some(CLIENT_KEYS, "error", "fails the call: the model gets an error, not the text"),
  advice: "send only text, image, audio, resource_link and resource blocks" },
  { rule: "structured-content", applies: ({ result }) => dig(result, "content") === undefined &&
    dig(result, "structuredContent") !== undefined,
  clients: { "claude-code": ["error", "fails the call"], gemini: ["error", "gives the model {}"] },
  advice: "send the structuredContent as JSON in a text block too (server/tools)" },
];

/** What check knows of a log so far: the follower's session, the line it is at, the server's
 * name, the slowest first answer, whether this session and any session listed the tools, the
 * first line that is no message once they were, whether a message crossed over HTTP, and what
 * each CLI would do, by message. */
type Review = { session: Session; line: number; server: string; slowestMs: number;
  listed: boolean; everListed: boolean; noise?: number; overHttp?: boolean;
  found: Map<Client, Map<string, Finding>> };

/** Holds a subject, said as `what`, up to the rules, and keeps what each CLI would do. */
function judge(review: Review, subject: Subject, what: string, tool?: string): void {
  for (const { rule, applies, clients, advice, stdioOnly } of RULES) {
    if (review.overHttp === true && stdioOnly !== undefined) continue;
    for (const [client, found] of review.found) {
      const [severity, does] = clients[client] ?? [];
      if (severity === undefined || !applies(subject, client)) continue;
      const message = `${what}: ${does}. To do: ${advice}.`;
      found.set(message, { rule, severity, ...(tool === undefined ? {} : { tool }), message });
    }
  }
}

/** Whether a server/discover result offers the 2026-07-28 era. */
function offersModern(result: unknown): boolean {
  return [dig(result, "supportedVersions")].flat().includes("2026-07-28");
}

/** Reviews a message from the server: the time of a first answer, the probe's answer, the tools,
 * a tool's result, and a line that is no message once the session has listed the tools. */
function reviewMessage(review: Review, { mark, message, request }: Followed, event: LogEvent) {
  if (mark === "←" && message.kind === "other" && review.listed) review.noise ??= review.line;
  if (mark !== "←" || message.kind !== "response") return;
  const [result, method, called] = [message.result, request?.method, request?.tool];
  // Every session opens with one of these two (basic/lifecycle; 2026-07-28 basic/versioning).
  const opening = method === "initialize" || method === "server/discover";
  if (opening) review.slowestMs = Math.max(review.slowestMs, Number(event.elapsed ?? 0));
  // An error, or a result that does not offer it, leaves a client in the handshake era.
  const refused = method === "server/discover" && !offersModern(result);
  if (refused) judge(review, { refused }, "server/discover's answer");
  if (result === undefined) return;
  review.server = sideName([message], "result", "serverInfo") ?? review.server;
  if (method === "tools/call") judge(review, { result }, `a result of "${called}"`, called);
  if (method !== "tools/list") return;
  const tools = [dig(result, "tools")].flat().filter(isRecord);
  const names = tools.map((tool) => String(dig(tool, "name")));
  for (const tool of tools) {
    const name = String(dig(tool, "name"));
    judge(review, { name, tool, names, server: review.server }, `tool "${name}"`, name);
  }
  Object.assign(review, { listed: true, everListed: true });
}

/** Reviews a whole log, then what its sessions showed as a whole: what each CLI would do. */
async function review(logPath: string): Promise<Review> {
  const found = new Map(CLIENT_KEYS.map((client) => [client, new Map<string, Finding>()]));
  const read: Review = { session: newSession(), line: 0, server: "", slowestMs: 0,
    listed: false, everListed: false, found };
  await readLines(logPath, LOG_START, true, (lines) => {
    // A slice read ends with "\n", after which split leaves an empty string: no line.
    for (const text of lines.at(-1) === "" ? lines.slice(0, -1) : lines) {
      read.line += 1;
      const event = parseEvent(text);
      if (event === undefined) continue;
      read.overHttp ||= event.exchange !== undefined;
      // A start note begins a session, whose tools are not listed yet.
      if (startedCommand(event) !== undefined) read.listed = false;
      for (const followed of follow(read.session, event)) reviewMessage(read, followed, event);
    }
  }).catch((error: unknown) => cannot(`read ${logPath}`, error));
  const seconds = (read.slowestMs / 1_000).toFixed(1);
  judge(read, { firstAnswerMs: read.slowestMs }, `the first answer took ${seconds} s`);
  if (!read.everListed) judge(read, { unlisted: true }, "no tools/list was answered");
  const stray = `line ${read.noise}, not JSON-RPC, after tools/list`;
  if (read.noise !== undefined) judge(read, { noise: true }, stray);
  return read;
}

/** How the CLIs open a server, in turn (docs/clients.md): Claude Code and Copilot CLI probe with
 * server/discover and else initialize 2025-11-25; Codex and Gemini CLI initialize 2025-06-18;
 * Qwen Code initializes 2025-11-25. */
const OPENINGS = [["2025-11-25", true], ["2025-06-18", false], ["2025-11-25", false]] as const;

/** Who check says it is, and the params of its 2026-07-28 requests: their `_meta` alone
 * (basic/index §_meta). */
const CHECK_INFO = { name: "wrap-check", version: "1.0.0" };
const META_PARAMS = { _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": CHECK_INFO,
  "io.modelcontextprotocol/clientCapabilities": {} } };

/** Sends the server a message, and waits for the result of a request; undefined if none came. */
async function ask(server: Replay, message: { id?: number; method: string; params?: object }) {
  await server.send(JSON.stringify({ jsonrpc: "2.0", ...message }));
  const answers = (response: JSONRPCResponse) => response.id === message.id;
  if (message.id !== undefined) await waitFor(server, () => server.responses.some(answers));
  return server.responses.find(answers)?.result;
}

/** Runs the server under wrap, which logs it all, and opens it as some CLIs do: it lists the
 * tools, waits half a second for stray stdout, then ends it as a client does. No tool is called. */
async function openAs(line: CommandLine, [version, probe]: (typeof OPENINGS)[number]) {
  // The server runs under this very wrap, with this node's flags, logging to the log.
  const server = startReplay({ ...line, command: process.execPath, args: [...process.execArgv,
    fileURLToPath(import.meta.url), "--log", line.logPath, "--", line.command, ...line.args] });
  const modern = probe && offersModern(await ask(server, { id: 0, method: "server/discover",
    params: META_PARAMS }));
  const params = { protocolVersion: version, capabilities: {}, clientInfo: CHECK_INFO };
  const opened = modern || await ask(server, { id: 1, method: "initialize", params }) !== undefined;
  if (!modern) await ask(server, { method: "notifications/initialized" });
  if (opened) await ask(server, { id: 2, method: "tools/list", params: modern ? META_PARAMS : {} });
  await new Promise((resolve) => setTimeout(resolve, 500));
  await server.finish("SIGTERM", KILL_AFTER_MS);
}

/** wrap check: what each of five agent CLIs would do with a server, from a log or from the server
 * itself; exit code 0 when every one would connect, see every tool and get every result. */
async function check(line: CommandLine): Promise<void> {
  const { logPath, runs, values } = line;
  // A log of this run's sessions alone, private as the recorder's: it holds every message.
  if (runs) await writeFile(logPath, "", { mode: 0o600 }).catch((error: unknown) =>
    cannot(`write ${logPath}`, error));
  for (const opening of runs ? OPENINGS : []) await openAs(line, opening);
  const { found: byClient, overHttp } = await review(logPath);
  const verdicts = [...byClient].map(([client, found]) => {
    const findings = [...found.values()];
    return [client, { ok: findings.every((each) => each.severity !== "error"), findings }] as const;
  });
  const taking = verdicts.filter(([, verdict]) => verdict.ok).length;
  process.exitCode = taking === CLIENT_KEYS.length ? 0 : 1;
  // A log over HTTP is not held to the rules measured on stdio alone; check says which.
  const notApplied = RULES.flatMap(({ rule, stdioOnly: why }) =>
    overHttp === true && why !== undefined ? [{ rule, why }] : []);
  const json = JSON.stringify({ clients: Object.fromEntries(verdicts),
    ...(notApplied.length > 0 ? { notApplied } : {}) }, null, 2);
  // A table: a row for each finding, or one that says the CLI takes the server as it is.
  const rows = verdicts.flatMap(([client, { ok, findings }]) => {
    const head = `${ok ? "✓" : "✗"} ${CLIENTS[client].padEnd(11)}`;
    if (findings.length === 0) return [`${head} takes it as it is`];
    return findings.map(({ severity, rule, message }) =>
      `${head} ${severity.padEnd(7)} ${rule.padEnd(18)} ${message}`);
  });
  rows.push(`${taking} of 5 would connect, see every tool and get every result.`);
  const unheld = notApplied.map(({ rule, why }) => `${rule} (${why})`).join(", ");
  if (unheld !== "") rows.push(`Over HTTP, not applied: ${unheld}.`);
  process.stdout.write(`${printable(values.json === true ? json : rows.join("\n"))}\n`);
  if (runs) warn(`check recorded it in ${logPath}`);
}

// ---- The command line: record (the default), or read a log back ----

/** Every option wrap takes, as node:util's parseArgs reads them, with the word the usage shows
 * for its value. */
const OPTIONS = {
  log: { type: "string", valueName: "FILE" }, out: { type: "string", valueName: "FILE" },
  "no-redact": { type: "boolean" }, ignore: { type: "string", multiple: true, valueName: "PATH" },
  timeout: { type: "string", valueName: "MS" }, json: { type: "boolean" },
  follow: { type: "boolean" }, errors: { type: "boolean" },
  method: { type: "string", multiple: true, valueName: "NAME" },
  listen: { type: "string", valueName: "[HOST:]PORT" }, url: { type: "string", valueName: "URL" },
} as const;

/** One form a command's words may take: the options it takes, then a log (WIRE_LOG), an option
 * it must be given (`needs`: the HTTP recorder's --listen, replay's --url), and a command,
 * `required` after `--`, or `optional` (the recorder's: `--` and the command may both be left
 * out), or a `url` (the HTTP recorder's). */
type Form = { options: (keyof typeof OPTIONS)[]; log?: true; needs?: keyof typeof OPTIONS;
  command?: "required" | "optional" | "url" };

/** What a command's form shows after its options and log. */
const COMMAND_WORDS = { required: "-- COMMAND [ARGS...]", optional: "[--] [COMMAND [ARGS...]]",
  url: "URL" };

/** The recorder's forms: it has no name, and runs the command that follows its options; or,
 * given --listen, forwards HTTP to the MCP endpoint URL that follows them. */
const RECORDING: Form[] = [{ options: ["log"], command: "optional" },
  { options: ["log"], needs: "listen", command: "url" }];

/** Where --listen listens: a port, after a host (an IPv6 one in brackets) if one is given. */
const LISTEN_ADDRESS = /^(?:(.+):)?(\d{1,5})$/;

/** The readers, one row each, by the word that names them: the command table. A reader's forms
 * are the words that may follow its name (check's: a log, or a command to record one from);
 * its function is all it does. */
const READERS = new Map<string, { forms: Form[]; run: (line: CommandLine) => Promise<void> }>([
  ["diagram", { forms: [{ options: ["out", "no-redact"], log: true }], run: writeDiagram }],
  ["replay", { run: replay, forms: [
    { options: ["ignore", "timeout", "no-redact"], log: true, command: "required" },
    { options: ["ignore", "timeout", "no-redact"], log: true, needs: "url" }] }],
  ["redact", { forms: [{ options: [], log: true }], run: redact }],
  ["show", { run: show,
    forms: [{ options: ["follow", "method", "errors", "no-redact"], log: true }] }],
  ["stats", { forms: [{ options: ["json"], log: true }], run: stats }],
  ["check", { run: check, forms: [{ options: ["json"], log: true },
    { options: ["json", "log", "timeout"], command: "required" }] }],
]);

/** An option as the usage shows it: `[--NAME VALUE]`, with `...` after one that repeats. */
function optionUsage(name: keyof typeof OPTIONS): string {
  const option: { type: string; multiple?: boolean; valueName?: string } = OPTIONS[name];
  const value = option.valueName === undefined ? "" : ` ${option.valueName}`;
  return `[--${name}${value}]${option.multiple === true ? "..." : ""}`;
}

/** A command's forms as the usage shows them, ` | ` between: each one's options, then its log,
 * the option it needs and its command if it takes them. */
function usageOf(forms: Form[]): string {
  const words = ({ options, log, needs, command }: Form) => [...options.map(optionUsage),
    log && "WIRE_LOG", needs && optionUsage(needs).slice(1, -1), command && COMMAND_WORDS[command]];
  return forms.map((form) => words(form).filter((word) => word).join(" ")).join(" | ");
}

/** What --help prints: the recorder's words, then each reader's. */
const USAGE = `Usage: ${RECORDING.map((form) => `wrap ${usageOf([form])}`).join("\n       ")}
Runs COMMAND (default: server.mjs) and records every line to FILE (default: wire.log), both
beside wrap.mjs; stdio passes through unchanged. Put \`--\` before a COMMAND that starts with -.
With --listen, serves http://HOST:PORT/mcp (HOST: 127.0.0.1) in front of the MCP endpoint URL,
and records every exchange; HTTP passes through unchanged.
Reading a log back (README, "Read a log back"):
${Array.from(READERS, ([name, { forms }]) => `  wrap ${name} ${usageOf(forms)}\n`).join("")}`;

/** Exit code for a command line wrap cannot read, as shells use it. */
const MISUSE = 2;

/** The longest --timeout: what both setTimeout and AbortSignal.timeout take (2^31 - 1 ms). */
const LONGEST_TIMEOUT_MS = 2_147_483_647;

/** Prints the usage and exits: on stdout with 0 when asked for (--help), since it is an
 * answer, and on stderr with MISUSE for a command line wrap cannot read, since it is a mistake. */
function exitWithUsage(to: NodeJS.WriteStream, exitCode: number): never {
  to.write(USAGE);
  process.exit(exitCode);
}

/** A file a reader cannot read or write: one plain line, no stack, and exit code 1. */
function cannot(what: string, error: unknown): never {
  warn(`cannot ${what}: ${String(error)}`);
  process.exit(1);
}

const argv = process.argv.slice(2);
const here = dirname(fileURLToPath(import.meta.url));
if (argv.length === 1 && argv[0] === "--help") exitWithUsage(process.stdout, 0);
// wrap's own words come first. A reader's name starts a reader, which runs a command only after
// `--` (replay). Any other word starts the command to record, its words its own, as with env,
// nohup and time; `--` may mark where it starts. No command at all: server.mjs beside wrap.
// parseArgs, not strict, reads each option with its value and stops nowhere: the first token
// that is not an option is where wrap's own words end.
const { tokens } = parseArgs({ args: argv, options: OPTIONS, strict: false, tokens: true });
const ownEnd = tokens.find((token) => token.kind !== "option")?.index ?? argv.length;
const reader = READERS.get(argv[ownEnd] ?? "");
const split = reader === undefined ? ownEnd : argv.indexOf("--");
const ownWords = split === -1 ? argv : argv.slice(0, split);
const noCommand = split === -1 || split === argv.length;
const commandWords = argv.slice(argv[split] === "--" ? split + 1 : split);
const [command, ...args] = noCommand ? [process.execPath, join(here, "server.mjs")] : commandWords;
// parseArgs throws on an unknown option, or an option without its value.
const config = { args: ownWords, options: OPTIONS, allowPositionals: true } as const;
const parsed = attempt(() => parseArgs(config));
if (parsed === undefined) exitWithUsage(process.stderr, MISUSE);
// The first positional is the reader's name: a reader reads one log, and takes no other word.
const { values, positionals: [, logPath, ...extra] } = parsed;
// A command's words take one of its forms: a log or none, a command or none. The recorder runs a
// command (server.mjs when none is named), or with --listen forwards to a URL; replay reads a log
// and runs a command after `--`, check does one of the two (it records its own log from its
// command), the others read a log.
// Where two forms fit, the later is taken: the HTTP recorder's, which needs --listen given,
// before the stdio one's.
const form = (reader?.forms ?? RECORDING).findLast((each) => (each.log === true) ===
  (logPath !== undefined) && (each.command !== undefined) === (split !== -1) &&
  (each.needs === undefined || values[each.needs] !== undefined));
// A form takes the options it names, and the one it needs: recording, --log alone.
const takes: readonly string[] = [...(form?.options ?? []), ...(form?.needs ? [form.needs] : [])];
// How long replay waits for each response.
const timeoutMs = Number(values.timeout ?? 5_000);
const foreignOption = Object.keys(values).some((option) => !takes.includes(option));
// An empty word names no file and no command.
const emptyWord = [values.log, values.out, logPath, command].includes("");
const badTimeout = !Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > LONGEST_TIMEOUT_MS;
// A URL form forwards to one http or https URL, from an address it can listen on; replay's --url
// names one such URL too.
const target = form?.command === "url" ? command : values.url;
const endpoint = attempt(() => new URL(target ?? ""));
const badUrl = (target !== undefined && !/^https?:$/.test(endpoint?.protocol ?? "")) ||
  (form?.command === "url" && (args.length > 0 || !LISTEN_ADDRESS.test(values.listen ?? "")));
const wrong = extra.length > 0 || foreignOption || emptyWord || badTimeout || badUrl;
// No command: `--` with nothing after it.
if (wrong || form === undefined || command === undefined) exitWithUsage(process.stderr, MISUSE);
if (reader === undefined && values.listen !== undefined) {
  listen(values.listen, command, values.log ?? join(here, "wire.log"));
} else if (reader === undefined) {
  proxy(command, args, values.log ?? join(here, "wire.log"));
} else {
  // A reader whose stdout was closed (`| head`) stops as if SIGPIPE had ended it.
  process.stdout.on("error", () => process.exit(128 + constants.signals.SIGPIPE));
  const read = logPath ?? values.log ?? join(here, "check.log");
  await reader.run({ logPath: read, values, timeoutMs, command, args, runs: split !== -1 });
}
