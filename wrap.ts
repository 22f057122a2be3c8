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
 *   ←  server to client, likewise; a response first shows its round-trip time:
 *      `← (1.9 ms) {…}`
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
import { readFile, writeFile } from "node:fs/promises";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { constants } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { finished } from "node:stream/promises";
import { fileURLToPath } from "node:url";

/** Where a line crossed: → client to server, ← server to client, ! server's stderr, # wrap. */
type Mark = "→" | "←" | "!" | "#";

/** A request still waiting for its response: its method, and when it crossed. */
type PendingRequest = { method: string; sentAt: number };

/** What the command line asks for: to run a command, to show the usage, or to refuse. */
type Invocation =
  | { action: "run"; command: string; args: string[]; logPath: string }
  | { action: "help" }
  | { action: "misuse" };

/** How long the server may take to exit after the end of its input, and again after SIGTERM. */
const GRACE_MS = 2_000;

/** The direction that answers a request sent the other way. */
const OPPOSITE = { "→": "←", "←": "→" } as const;

/** Exit codes of our own, as shells use them: a bad command line, a command that cannot start. */
const MISUSE = 2, CANNOT_START = 127;

/** How many chunks the log may fall behind the traffic; past that, it catches up first. */
const MAX_BACKLOG = 64;

/** The "\n" that ends each event in the log. */
const NEWLINE = Buffer.from("\n");

/** What --help prints. */
const USAGE = `Usage: wrap [--log FILE] [-- COMMAND [ARGS...]]
Runs COMMAND (default: server.mjs beside wrap.mjs), passing its stdio through unchanged,
and records every line to FILE (default: wire.log beside wrap.mjs).\n`;

/** Reads the command line; `here` is wrap's folder, where the default server and log live. */
function parseArguments(argv: readonly string[], runtime: string, here: string): Invocation {
  const split = argv.indexOf("--");
  const options = split === -1 ? argv : argv.slice(0, split);
  const defaultServer = [runtime, join(here, "server.mjs")];
  const [command, ...args] = split === -1 ? defaultServer : argv.slice(split + 1);
  if (options.length === 1 && options[0] === "--help") return { action: "help" };
  // The only option is `--log FILE`, and a command must be named if `--` is there.
  const logOption = options.length === 2 && options[0] === "--log" && options[1] !== "";
  if (command === undefined || command === "" || (options.length > 0 && !logOption)) {
    return { action: "misuse" };
  }
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
  for (let end = chunk.indexOf("\n"); end !== -1; end = chunk.indexOf("\n", start)) {
    const piece = chunk.subarray(start, end);
    // A line within one chunk is a view of it; only a line cut across chunks is copied.
    lines.push(pieces.length === 0 ? piece : Buffer.concat([...pieces.splice(0), piece]));
    start = end + 1;
  }
  if (start < chunk.length) pieces.push(chunk.subarray(start));
  return lines;
}

/**
 * Pairs a line's message with the requests in flight: a request is kept under its direction
 * and id, and a response crossing the other way settles it. Returns the round-trip time in ms
 * when the line answers a request.
 */
function pair(
  pending: Map<string, PendingRequest>, mark: "→" | "←", line: Buffer, now: number,
): number | undefined {
  let message: unknown;
  try {
    message = JSON.parse(line.toString());
  } catch {
    return undefined; // Not JSON: logged all the same, paired with nothing.
  }
  // Nothing to pair: a notification or a batch (JSON-RPC 2.0 §6, gone from MCP in 2025-06-18)
  // has no id, and an error whose request could not be read has id null (JSON-RPC 2.0 §5).
  if (typeof message !== "object" || message === null || !("id" in message)) return undefined;
  if (typeof message.id !== "string" && typeof message.id !== "number") return undefined;
  // JSON.stringify keeps id 1 and id "1" apart, as JSON-RPC does.
  const id = JSON.stringify(message.id);
  // A request waits for its response, which will cross the other way; it has no round-trip
  // time of its own.
  if ("method" in message && typeof message.method === "string") {
    pending.set(`${mark} ${id}`, { method: message.method, sentAt: now });
    return undefined;
  }
  const request = pending.get(`${OPPOSITE[mark]} ${id}`);
  pending.delete(`${OPPOSITE[mark]} ${id}`);
  return request === undefined ? undefined : now - request.sentAt;
}

// ---- The recorder's I/O: start the server, pipe the bytes, tap the lines, pass on the end ----

/** Runs the recorder: starts the server, relays its stdio and records every line to the log. */
function proxy(command: string, args: readonly string[], logPath: string): void {
  // A new log is private (0600): it holds every message, and messages can hold secrets.
  const log = createWriteStream(logPath, { flags: "a", mode: 0o600 });
  log.on("error", (error) => {
    const what = `wrap: cannot write log ${logPath}: ${error.message}`;
    process.stderr.write(`${what}; traffic still flows\n`);
  });
  const pending = new Map<string, PendingRequest>();

  /**
   * The log's work, oldest first. The pipes pass each chunk on as it comes; the log catches up one
   * chunk per turn of the event loop, after the pipes have had their turn, so that a busy log does
   * not hold up the traffic (most of its cost is JSON.parse, to pair responses with requests).
   */
  const backlog: (() => void)[] = [];

  /** Queues the events for one chunk's lines, stamped with the time they crossed. */
  function record(mark: Mark, lines: readonly Buffer[]): void {
    const at = new Date();
    const now = performance.now();
    backlog.push(() => write(mark, lines, at, now));
    // The first queued work starts the catching up; later work joins the queue.
    if (backlog.length === 1) setImmediate(catchUp);
  }

  /** Does the oldest queued work, and more while the queue is too long; with `all`, all of it. */
  function catchUp(all = false): void {
    backlog.shift()?.();
    while (backlog.length > (all ? 0 : MAX_BACKLOG)) backlog.shift()?.();
    if (backlog.length > 0) setImmediate(catchUp);
  }

  /** Writes one event per line, the line's bytes as they are, in one write: lines that came
   * together share a time. */
  function write(mark: Mark, lines: readonly Buffer[], at: Date, now: number): void {
    if (!log.writable || lines.length === 0) return;
    const head = `${at.toISOString()} ${mark} `;
    const events = lines.flatMap((line) => {
      const elapsed = mark === "→" || mark === "←" ? pair(pending, mark, line, now) : undefined;
      const prefix = elapsed === undefined ? head : `${head}(${elapsed.toFixed(1)} ms) `;
      return [Buffer.from(prefix), line, NEWLINE];
    });
    log.write(Buffer.concat(events));
  }

  /** Logs one of wrap's own events at once, after every line that crossed before it. */
  function note(text: string): void {
    catchUp(true);
    write("#", [Buffer.from(text)], new Date(), 0);
  }

  /** Passes a stream's bytes on untouched, and logs its lines from a tap beside the pipe. */
  function relay(
    from: NodeJS.ReadableStream, to: NodeJS.WritableStream, mark: "→" | "←" | "!", end: boolean,
  ): void {
    const pieces: Buffer[] = [];
    // The pipe is set up first, so each chunk is passed on before the tap looks at it.
    from.pipe(to, { end });
    from.on("data", (chunk: Buffer) => record(mark, splitLines(pieces, chunk)));
    // A last line without "\n" is still a line.
    from.on("end", () => record(mark, pieces.length > 0 ? [Buffer.concat(pieces)] : []));
    // pipe() stops at a write error (EPIPE: the reader has gone); keep reading so the log sees
    // every line.
    to.on("error", (error) => {
      note(`cannot pass ${mark} on: ${error.message}`);
      from.resume();
    });
  }

  /** Sends the server a signal, then SIGKILL if it still runs a grace period later: no path
   * leaves an orphan. */
  function stop(signal: NodeJS.Signals, why: string): void {
    if (child.exitCode !== null || child.signalCode !== null) return;
    note(`${why}: sending ${signal}`);
    child.kill(signal);
    setTimeout(() => stop("SIGKILL", `still running ${GRACE_MS} ms after ${signal}`), GRACE_MS);
  }

  /** Logs the requests left unanswered and the last event, waits until the log and the client
   * have every byte, and exits. */
  async function finish(code: number, last: string): Promise<void> {
    // Catch up before reading `pending`: a response still queued would otherwise be listed.
    catchUp(true);
    for (const [key, request] of pending) {
      note(`unanswered ${key} ${JSON.stringify(request.method)}`);
    }
    note(last);
    // Settled either way: a failed log or a gone client has nothing left to flush. stdout is
    // waited for by a write's callback, which comes once every earlier byte is written: on a
    // terminal stdout's "finish" never comes, and wrap would exit 0, late, whatever happened.
    const flushed = new Promise<void>((resolve) => process.stdout.write("", () => resolve()));
    await Promise.allSettled([finished(log.end()), flushed]);
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
  process.stdin.on("end", () => {
    const why = `still running ${GRACE_MS} ms after the end of input`;
    setTimeout(() => stop("SIGTERM", why), GRACE_MS);
  });
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.on(signal, () => stop(signal, `received ${signal}`));
  }
  // A process the server started may hold its pipes open; wait for them no longer than the
  // grace period.
  child.on("exit", () => {
    setTimeout(() => {
      child.stdout.push(null);
      child.stderr.push(null);
    }, GRACE_MS);
  });
  child.on("close", (code, signal) => {
    if (child.pid === undefined) return; // A failed start was reported by "error".
    // A signal's end is reported as shells do: 128 + its number.
    if (signal === null) void finish(code ?? 0, `exit code ${code}`);
    else void finish(128 + constants.signals[signal], `exit signal ${signal}`);
  });
}

// ---- Readers: one parser of wire.log, shared by diagram, replay and redact ----

/** One event of a wire.log; `head` is everything before the line's bytes, `text` the bytes. */
type LogEvent = {
  mark: Mark; elapsed: string | undefined; tags: string[]; head: string; text: string;
};

/** A JSON-RPC message, classified once (JSON-RPC 2.0 §4, §4.1, §5); `other` is anything else. */
type Message =
  | { kind: "request"; id: unknown; method: string; params: unknown }
  | { kind: "notification"; method: string; params: unknown }
  | { kind: "response"; id: unknown; result: unknown; error: unknown }
  | { kind: "other" };

/** What a reader's command line asks for. */
type ReaderInvocation =
  | { action: "diagram"; logPath: string; out: string | undefined; redact: boolean }
  | { action: "replay"; logPath: string; command: string; args: string[]; options: ReplayOptions }
  | { action: "redact"; logPath: string };

/** What replay skips in the comparison (paths of keys, `*` for any), and how long it waits. */
type ReplayOptions = { ignore: string[][]; timeoutMs: number };

/** The readers, named as their command-line words. */
const READERS = ["diagram", "replay", "redact"] as const;

/** The marks, to narrow a mark read from the log. */
const MARKS = ["→", "←", "!", "#"] as const;

/** An event's head: time, mark, and the round-trip time a response starts with. */
const EVENT_HEAD = /^\S+ ([→←!#]) (?:\((\d+(?:\.\d+)?) ms\) )?/;

/** The hygiene tags of the log format, in the order they must come. */
const HYGIENE_TAGS = [/^\d+ bytes$/, /^not UTF-8$/, /^CRLF$/, /^no request$/, /^id in use$/,
  /^not JSON-RPC$/];

/** What --help adds for the readers. */
const READER_USAGE = `
Reading a log back:
  wrap diagram [--out FILE] [--no-redact] WIRE_LOG
      Markdown with Mermaid sequence diagrams of the session, secrets redacted.
  wrap replay [--ignore PATH]... [--timeout MS] WIRE_LOG -- COMMAND [ARGS...]
      Sends the log's client lines to COMMAND and compares its responses with the log's.
      PATH names a field to skip, as result.serverInfo.version (* matches any key).
      MS is how long to wait for each response (default 5000).
  wrap redact WIRE_LOG
      Writes a copy of the log with its secrets replaced by "[redacted]" to stdout.
`;

/** Reads a reader's command line: its options, the log, and for replay `-- COMMAND`. */
function parseReaderArguments(
  reader: string, argv: readonly string[]): ReaderInvocation | undefined {
  const split = argv.indexOf("--");
  const words = split === -1 ? argv : argv.slice(0, split);
  const [command, ...args] = split === -1 ? [] : argv.slice(split + 1);
  const options: ReplayOptions = { ignore: [], timeoutMs: 5_000 };
  const logPaths: string[] = [];
  let out: string | undefined;
  let redact = true;
  for (let index = 0; index < words.length; index += 1) {
    const word = words[index] ?? "";
    const value = words[index + 1] ?? "--";
    const takesValue = ["--out", "--ignore", "--timeout"].includes(word) && !value.startsWith("--");
    if (takesValue) index += 1;
    if (reader === "diagram" && word === "--no-redact") redact = false;
    else if (reader === "diagram" && word === "--out" && takesValue) out = value;
    else if (reader === "replay" && word === "--ignore" && takesValue) {
      options.ignore.push(value.split("."));
    } else if (reader === "replay" && word === "--timeout" && takesValue) {
      options.timeoutMs = Number(value);
    }
    else logPaths.push(word);
  }
  const [logPath] = logPaths;
  const wellFormed = logPaths.length === 1 && logPath !== undefined && !logPath.startsWith("--");
  const commandWanted = reader === "replay";
  if (!wellFormed || !(options.timeoutMs > 0) || (command !== undefined) !== commandWanted) {
    return undefined;
  }
  if (reader === "diagram") return { action: "diagram", logPath, out, redact };
  if (reader === "replay" && command !== undefined) {
    return { action: "replay", logPath, command, args, options };
  }
  return { action: "redact", logPath };
}

/** Reads one line of a wire.log; a line that is not an event gives undefined. */
function parseEvent(line: string): LogEvent | undefined {
  const head = EVENT_HEAD.exec(line);
  const mark = MARKS.find((candidate) => candidate === head?.[1]);
  if (head === null || mark === undefined) return undefined;
  const tags: string[] = [];
  let rest = line.slice(head[0].length);
  // Each tag comes after the one before it in the vocabulary; none follows [not JSON-RPC].
  for (let next = 0; next < HYGIENE_TAGS.length; next += 1) {
    const tag = /^\[([^\]]*)\] /.exec(rest)?.[1];
    const known = HYGIENE_TAGS.findIndex((pattern) => tag !== undefined && pattern.test(tag));
    if (tag === undefined || known < next) break;
    tags.push(tag);
    rest = rest.slice(tag.length + 3);
    next = known;
  }
  const text = rest;
  return { mark, elapsed: head[2], tags, head: line.slice(0, line.length - text.length), text };
}

/** True for a JSON object or array, whose own keys can be looked up. */
function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

/** The value at a path of own keys, or undefined: `toString` is never found on a message. */
function dig(value: unknown, ...keys: string[]): unknown {
  let found = value;
  for (const key of keys) {
    found = isRecord(found) && Object.hasOwn(found, key) ? found[key] : undefined;
  }
  return found;
}

/** The messages of one line: one, or each entry of a batch (JSON-RPC 2.0 §6). */
function messagesOf(text: string): Message[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return [{ kind: "other" }];
  }
  return (Array.isArray(value) ? value : [value]).map(classify);
}

/** Classifies a parsed value as the kind of message its keys make it. */
function classify(value: unknown): Message {
  const id = dig(value, "id");
  const method = dig(value, "method");
  const hasId = typeof id === "string" || typeof id === "number";
  const params = dig(value, "params");
  if (typeof method === "string") {
    if (hasId) return { kind: "request", id, method, params };
    return { kind: "notification", method, params };
  }
  const answers = isRecord(value) && (Object.hasOwn(value, "result") ||
    Object.hasOwn(value, "error"));
  if (!answers || !Object.hasOwn(value, "id")) return { kind: "other" };
  return { kind: "response", id, result: dig(value, "result"), error: dig(value, "error") };
}

/** Reads a wire.log's text, or says plainly why not and exits. */
async function readLog(logPath: string): Promise<string> {
  try {
    return await readFile(logPath, "utf8");
  } catch (error) {
    process.stderr.write(`wrap: cannot read ${logPath}: ${String(error)}\n`);
    process.exit(1);
  }
}

// ---- Reader: redact, a copy of the log that can be shared ----

/** What stands in for a secret. */
const REDACTED = "[redacted]";

/** Keys whose values are secrets, whatever the values hold (case-insensitive). */
const SECRET_KEY = /^(?:authorization|cookie|password|secret|token|api_?key)$|_(?:token|key)$/i;

/** Secrets known by their shape, in any text: bearer credentials and well-known API keys. */
const SECRET_TEXT =
  /\bBearer\s+[^\s"',;]+|\b(?:sk-[\w-]{16,}|ghp_[A-Za-z0-9]{20,}|xox[a-z]-[\w-]{8,})/g;

/** A key that names a secret and its value, in text that is not JSON: `token=…`, `"key": "…"`. */
const SECRET_PAIR = new RegExp(String.raw`\b(authorization|cookie|password|secret|token|api_?key|` +
  String.raw`\w+_(?:token|key))("? ?[:=] ?"?)[^\s"',;&]+`, "gi");

/** A copy of a parsed value with the values under secret keys and secret-shaped text replaced. */
function redactValue(value: unknown): unknown {
  if (typeof value === "string") return value.replace(SECRET_TEXT, REDACTED);
  if (Array.isArray(value)) return value.map(redactValue);
  if (!isRecord(value)) return value;
  const entries = Object.entries(value).map(([key, inner]) => {
    return [key, SECRET_KEY.test(key) ? REDACTED : redactValue(inner)] as const;
  });
  return Object.fromEntries(entries);
}

/** A line's text redacted: JSON stays JSON, and is rewritten only when it held a secret. */
function redactText(text: string): string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return text.replace(SECRET_PAIR, `$1$2${REDACTED}`).replace(SECRET_TEXT, REDACTED);
  }
  const redacted = JSON.stringify(redactValue(value));
  return redacted === JSON.stringify(value) ? text : redacted;
}

/** Redacts each event's text and keeps its head; a line that is no event is masked whole. */
function redactLog(log: string): string {
  return log.split("\n").map((line) => {
    const event = parseEvent(line);
    return event === undefined ? redactText(line) : `${event.head}${redactText(event.text)}`;
  }).join("\n");
}

// ---- Reader: diagram, the session as Mermaid sequence diagrams for a post ----

/** Zenn's limit on one code block, in characters. */
const BLOCK_LIMIT = 2_000;

/** Who sends and who receives, by mark: C is the client and S the server. */
const ENDS = { "→": ["C", "S"], "←": ["S", "C"] } as const;

/**
 * Characters that mean something to Mermaid 8.10 or 11 inside a label (`;` and newlines end a
 * statement, `#…;` is an entity, `<` starts HTML, `%%{` a directive), and the look-alikes that
 * stand for them.
 */
const LOOKALIKES = new Map([["#", "＃"], [";", "；"], ["<", "‹"], [">", "›"], ["%", "％"],
  ["&", "＆"], ['"', "'"], ["{", "（"], ["}", "）"]]);

/** Text made safe for a Mermaid label, on one line and at most `max` characters. */
function label(text: string, max: number): string {
  const flat = text.replace(/[\u0000-\u001f\u007f]+/g, " ").replace(/[#;<>%&"{}]/g, (character) => {
    return LOOKALIKES.get(character) ?? " ";
  });
  const characters = Array.from(flat.trim());
  const short = characters.length > max ? `${characters.slice(0, max - 1).join("")}…` : flat.trim();
  return short === "" ? "(empty)" : short;
}

/** A name from an `initialize` or modern `_meta` info object (clientInfo, serverInfo). */
function infoName(holder: unknown, info: string): string | undefined {
  const modern = dig(holder, "_meta", `io.modelcontextprotocol/${info}`, "name");
  const name = dig(holder, info, "name") ?? modern;
  return typeof name === "string" ? name : undefined;
}

/** A response summarised: the round-trip time, then its error code, isError, or first text. */
function summary(message: Extract<Message, { kind: "response" }>, elapsed: string | undefined) {
  const time = elapsed === undefined ? "" : `${elapsed} ms `;
  const text = dig(message.result, "content", "0", "text");
  if (message.error !== undefined) return `${time}error ${String(dig(message.error, "code"))}`;
  if (dig(message.result, "isError") === true) return `${time}isError ${String(text ?? "")}`;
  return typeof text === "string" ? `${time}${text}` : `${time}result`;
}

/** The diagram's statements for one event, and the names of the two sides it reveals. */
function statements(event: LogEvent, names: Map<"C" | "S", string>): string[] {
  if (event.mark === "#") return [`Note over C,S: ${label(event.text, 70)}`];
  if (event.mark === "!") return [`Note right of S: ${label(event.text, 50)}`];
  const [from, to] = ENDS[event.mark];
  const arrows = messagesOf(event.text).map((message) => {
    if (message.kind === "request") {
      const client = infoName(message.params, "clientInfo");
      if (client !== undefined && !names.has("C")) names.set("C", client);
      const tool = message.method === "tools/call" ? dig(message.params, "name") : undefined;
      const name = typeof tool === "string" ? `${message.method} ${tool}` : message.method;
      return `${from}->>${to}: ${label(name, 50)}`;
    }
    if (message.kind === "notification") return `${from}-)${to}: ${label(message.method, 50)}`;
    if (message.kind === "other") return `${from}->>${to}: not JSON-RPC ${label(event.text, 20)}`;
    const server = infoName(message.result, "serverInfo");
    if (server !== undefined && !names.has("S")) names.set("S", server);
    return `${from}-->>${to}: ${label(summary(message, event.elapsed), 50)}`;
  });
  const tags = event.tags.map((tag) => `Note over C,S: ${label(tag, 30)}`);
  return [...arrows, ...tags];
}

/** The session as Markdown: numbered ```mermaid blocks of at most BLOCK_LIMIT characters. */
function diagram(events: readonly LogEvent[]): string {
  const names = new Map<"C" | "S", string>();
  const body = events.flatMap((event) => statements(event, names));
  // No serverInfo (a server that failed, or never answered): the command that wrap started.
  const start = events.find((event) => event.mark === "#" && event.text.startsWith("start pid "));
  const command = start?.text.replace(/^start pid \d+: /, "").split(" ").slice(0, 2);
  const fallback = command?.map((word) => word.split("/").at(-1)).join(" ") ?? "server";
  const head = ["```mermaid", "sequenceDiagram",
    `participant C as ${label(names.get("C") ?? "client", 40)}`,
    `participant S as ${label(names.get("S") ?? fallback, 40)}`];
  // Room for the fences, the participants and the two notes that join one block to the next.
  const room = BLOCK_LIMIT - head.join("\n").length - 100;
  const parts: string[][] = [[]];
  let size = 0;
  for (const statement of body) {
    const full = size + statement.length + 1 > room;
    if (full) parts.push([]);
    if (full) size = 0;
    parts.at(-1)?.push(statement);
    size += statement.length + 1;
  }
  return parts.map((part, index) => {
    const count = `${index + 1} of ${parts.length}`;
    const before = index > 0 ? [`Note over C,S: part ${count}, continued from part ${index}`] : [];
    const after = index < parts.length - 1 ? [`Note over C,S: continued in part ${index + 2}`] : [];
    const title = parts.length > 1 ? `Part ${count}\n\n` : "";
    return `${title}${[...head, ...before, ...part, ...after, "```"].join("\n")}\n`;
  }).join("\n");
}

// ---- Reader: replay, a golden test of any stdio server from one recorded session ----

/** A response's key: its id and which response with that id it is, so null ids count too. */
function responseKey(counts: Map<string, number>, id: unknown): string {
  const seen = counts.get(JSON.stringify(id)) ?? 0;
  counts.set(JSON.stringify(id), seen + 1);
  return `${JSON.stringify(id)} #${seen + 1}`;
}

/** The differences between a recorded and a replayed value, one line each; key order ignored. */
function differences(
  expected: unknown, actual: unknown, path: string[], ignore: string[][]): string[] {
  const ignored = ignore.some((pattern) => pattern.length === path.length &&
    pattern.every((key, index) => key === "*" || key === path[index]));
  if (ignored) return [];
  const bothArrays = Array.isArray(expected) === Array.isArray(actual);
  if (isRecord(expected) && isRecord(actual) && bothArrays) {
    const keys = new Set([...Object.keys(expected), ...Object.keys(actual)]);
    return [...keys].flatMap((key) => {
      return differences(dig(expected, key), dig(actual, key), [...path, key], ignore);
    });
  }
  if (JSON.stringify(expected) === JSON.stringify(actual)) return [];
  const show = (value: unknown) => value === undefined ? "nothing" : JSON.stringify(value);
  return [`${path.join(".")}: expected ${show(expected)}, got ${show(actual)}`];
}

/** Replays a log to a command, prints what differs and one summary line; 0 when all match. */
async function replay(logPath: string, command: string, args: string[], options: ReplayOptions) {
  const events = parseLog(await readLog(logPath));
  const server = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
  // A server that has exited cannot read: its EPIPE is reported as missing responses instead.
  server.stdin.on("error", () => {});
  const replayed = new Map<string, Message>();
  const waiting = new Map<string, () => void>();
  const counts = new Map<string, number>();
  let exited = false;
  server.on("close", () => {
    exited = true;
    for (const wake of waiting.values()) wake();
  });
  createInterface({ input: server.stdout }).on("line", (line) => {
    for (const message of messagesOf(line).filter((each) => each.kind === "response")) {
      const key = responseKey(counts, message.id);
      replayed.set(key, message);
      waiting.get(key)?.();
    }
  });
  const arrival = (key: string) => new Promise<void>((resolve) => {
    if (replayed.has(key) || exited) resolve();
    const timer = setTimeout(resolve, options.timeoutMs);
    waiting.set(key, () => {
      clearTimeout(timer);
      resolve();
    });
  });
  const recorded = new Map<string, Message>();
  const methods = new Map<string, string>();
  const recordedCounts = new Map<string, number>();
  for (const event of events) {
    const messages = event.mark === "→" || event.mark === "←" ? messagesOf(event.text) : [];
    for (const message of messages) {
      if (message.kind === "request") methods.set(JSON.stringify(message.id), message.method);
      if (message.kind !== "response" || event.mark !== "←") continue;
      const key = responseKey(recordedCounts, message.id);
      recorded.set(key, message);
      // The client sent its next line only after this response came back; so does replay.
      await arrival(key);
    }
    if (event.mark === "→" && !exited) server.stdin.write(`${event.text}\n`);
  }
  server.stdin.end();
  const stopping = setTimeout(() => server.kill("SIGKILL"), GRACE_MS);
  if (!exited) await once(server, "close");
  clearTimeout(stopping);
  let matched = 0;
  let missing = 0;
  for (const [key, expected] of recorded) {
    const actual = replayed.get(key);
    const method = methods.get(key.split(" #")[0] ?? "");
    const id = key.replace(/ #1$/, "");
    const name = method === undefined ? id : `${id} ${JSON.stringify(method)}`;
    const expectedBody = { result: dig(expected, "result"), error: dig(expected, "error") };
    const actualBody = { result: dig(actual, "result"), error: dig(actual, "error") };
    const found = differences(expectedBody, actualBody, [], options.ignore);
    if (actual === undefined) missing += 1;
    if (actual !== undefined && found.length === 0) matched += 1;
    if (actual === undefined) process.stdout.write(`✗ ${name}: missing\n`);
    else if (found.length > 0) process.stdout.write(`✗ ${name}: ${found.slice(0, 3).join("; ")}\n`);
  }
  const unexpected = [...replayed.keys()].filter((key) => !recorded.has(key));
  for (const key of unexpected) process.stdout.write(`✗ ${key.replace(/ #1$/, "")}: unexpected\n`);
  const differ = recorded.size - matched - missing;
  process.stdout.write(`replay: ${recorded.size} responses, ${matched} match, ${differ} differ, ` +
    `${missing} missing, ${unexpected.length} unexpected\n`);
  return matched === recorded.size && unexpected.length === 0 ? 0 : 1;
}

/** Reads a wire.log's text into its events. */
function parseLog(log: string): LogEvent[] {
  return log.split("\n").flatMap((line) => parseEvent(line) ?? []);
}

// ---- Dispatch: read the command line once, then record or read ----

const argv = process.argv.slice(2);
const reader = READERS.find((name) => name === argv[0]);
const readerInvocation = reader === undefined ? undefined : parseReaderArguments(reader,
  argv.slice(1));
const invocation = parseArguments(argv, process.execPath, dirname(fileURLToPath(import.meta.url)));
if (reader !== undefined && readerInvocation === undefined) {
  process.stderr.write(USAGE + READER_USAGE);
  process.exit(MISUSE);
}
if (readerInvocation?.action === "diagram") {
  const log = await readLog(readerInvocation.logPath);
  const events = parseLog(readerInvocation.redact ? redactLog(log) : log);
  if (readerInvocation.out === undefined) process.stdout.write(diagram(events));
  else await writeFile(readerInvocation.out, diagram(events));
} else if (readerInvocation?.action === "redact") {
  process.stdout.write(redactLog(await readLog(readerInvocation.logPath)));
} else if (readerInvocation?.action === "replay") {
  const { logPath, command, args, options } = readerInvocation;
  process.exitCode = await replay(logPath, command, args, options);
} else if (invocation.action === "run") {
  proxy(invocation.command, invocation.args, invocation.logPath);
} else {
  // --help is an answer, on stdout; a command line we cannot read is a mistake, on stderr.
  (invocation.action === "help" ? process.stdout : process.stderr).write(USAGE + READER_USAGE);
  process.exit(invocation.action === "help" ? 0 : MISUSE);
}
