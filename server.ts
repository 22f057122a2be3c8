/**
 * server.ts — an MCP server over stdio in one file, with no SDK and no dependencies.
 *
 * The wire (MCP basic/transports §stdio): the client starts this process, writes JSON-RPC 2.0
 * messages to its stdin one per line, and reads ours from stdout one per line. stdout carries
 * nothing but those messages; logs go to stderr. A request has an id and a method, and gets
 * exactly one response; a notification has no id, and gets none; a response has an id and a
 * result or an error. A protocol error is a JSON-RPC error; a tool that fails returns a result
 * with `isError: true`.
 *
 * Up to the stop line is the article's server, whole, in its order: the tools, the methods, the
 * notifications, the error codes, send, log, the line loop. Cut there, it builds and runs on its
 * own (README, "How to read server.ts"). Below the line, each section adds one capability and
 * plugs itself in: entries in METHODS or NOTIFICATIONS, or one of the hand-over points.
 *   1. Strict input          2. Argument checking      3. What a handler may return
 *   4. Log hygiene           5. Batches                6. The 2026-07-28 era
 *   7. Calls in flight       8. Asking the client      9. The signed requestState
 *  10. Streamable HTTP
 */
import { createInterface } from "node:readline";

// ==== The tools: the part you edit ==============================================================
// An entry of TOOLS is all a tool takes: tools/list shows it, tools/call runs it (2025-11-25
// server/tools). The types after it are the contract its handler keeps.

/** The tools we offer: tools/list shows each without its handler, tools/call runs it. */
const TOOLS: Tool[] = [
  {
    name: "add",
    description: "Add two numbers",
    inputSchema: {
      type: "object",
      properties: {
        a: { type: "number", description: "The first number" },
        b: { type: "number", description: "The second number" },
      },
      required: ["a", "b"],
    },
    // The schema is a promise the client may not keep: in JavaScript "1" + 2 is "12". Nor can
    // it say "finite": JSON.parse reads 1e400 as Infinity.
    handler: ({ a, b }) => {
      if (!isFiniteNumber(a)) return toolResult('Invalid arguments: "a" must be finite', true);
      if (!isFiniteNumber(b)) return toolResult('Invalid arguments: "b" must be finite', true);
      const sum = a + b;
      if (!isFiniteNumber(sum)) return toolResult(`Invalid arguments: ${a} + ${b} overflows`, true);
      return toolResult(`${a} + ${b} = ${sum}`, false);
    },
  },
];

/** Whether a value is a number that is neither infinite nor NaN. */
function isFiniteNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

/** A tool's answer as text; `isError` marks a tool's failure, a result the model reads
 * (server/tools §Error Handling). */
function toolResult(text: string, isError: boolean): CallToolResult {
  const content: ContentBlock[] = [{ type: "text", text }];
  return isError ? { content, isError } : { content };
}

/**
 * A tool: what tools/list shows, and the handler tools/call runs. What works in every agent CLI
 * (docs/clients.md; `wrap check` tells): a name of at most 64 characters of [A-Za-z0-9_-],
 * counting the `mcp__<server>__` that a client puts before it; a description of at most 4,096
 * characters; a schema with `"type": "object"` at its top, without which Claude Code, Gemini
 * CLI and Qwen Code drop the whole server. Its handler returns the result, or a Promise of it;
 * it is a method, whose context TypeScript lets a handler narrow: one that asks the client takes
 * the AskingContext that "Asking the client", below the stop line, gives every such handler.
 */
type Tool = { name: string; description: string; inputSchema: ObjectSchema;
  handler(args: JSONObject, context: ToolContext): CallToolResult | Promise<CallToolResult> };

/**
 * What a handler is given beside its arguments, for one call; here, the article's, with nothing
 * to cancel, report or ask. Calls in flight and elicitation, below the stop line, make it live:
 * `signal` aborts when the client cancels the call, `progress` reports how far it has come,
 * `elicit` asks the user to fill in a form (in 2026-07-28 the handler then runs again, from the
 * start, with the answer; `key`, if given, names the question there).
 */
const NO_CONTEXT = { signal: new AbortController().signal, progress: noProgress, elicit: noForm };
type ToolContext = typeof NO_CONTEXT;
function noProgress(progress: number, total?: number, message?: string): void {}
function noForm(message: string, form: ObjectSchema, key?: string): Promise<ElicitResult> {
  return Promise.reject(new Error("This server cannot ask the user"));
}

/** What a tool returns to the model (§Tool Result): content blocks of `text`, or of `image`,
 * `audio`, `resource_link` or `resource` with their fields; any other type fails the call in
 * every agent CLI. With `structuredContent`, give its JSON as text in `content` too. */
type CallToolResult = { content: ContentBlock[]; isError?: boolean; structuredContent?: object };
type ContentBlock = { type: "text"; text: string } | { type: string; [field: string]: unknown };

/** A JSON object; a flat JSON Schema of one (a tool's arguments, an elicitation's form, each
 * property with its `type`); and the user's answer to an elicitation (client/elicitation). */
type JSONObject = { [key: string]: unknown };
type ObjectSchema = { type: "object"; properties: JSONObject; required?: string[] };
type ElicitResult = { action: "accept" | "decline" | "cancel"; content?: JSONObject };

// ==== The article's server: a line of JSON in, a response out ===================================

/** A request id: a string or an integer, never null (basic §Requests). */
type RequestId = string | number;

/** What a request comes to: a result, or a protocol error (JSON-RPC 2.0 §5.1); a Promise only
 * for a handler that must wait, or undefined when its call was cancelled meanwhile. */
type Outcome = { result: JSONObject } | { error: { code: number; message: string; data?: object } };
type Served = Outcome | Promise<Outcome | undefined>;

/** What a line gets: a response (JSON-RPC 2.0 §5), a batch's array of them, or none. */
type Reply = Response | Response[] | undefined;
type Response = { jsonrpc: "2.0"; id: RequestId | null } & Outcome;

/** Who we are, what we offer (a section below may offer more), and the versions we speak,
 * newest first (basic/lifecycle). */
const SERVER_INFO = { name: "json-rpc-study", version: "0.1.0" };
const CAPABILITIES: JSONObject = { tools: {} };
const LEGACY_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] as const;

// The hand-over points: the steps that a section below the stop line takes over, by putting its
// own function in their place. Each holds the article's behaviour until then, so that the server
// above the line is whole without them.

/** Serves a request by its method, or undefined when there is no such method. */
let serve = (method: string, params: JSONObject, id: RequestId) =>
  METHODS.get(method)?.(params, id);
/** Runs a tool's handler with no context, in a Promise, so that what it throws now or later is
 * one tool error the model reads. */
let runTool = (tool: Tool, args: JSONObject, params: JSONObject, id: RequestId): Served =>
  Promise.resolve(args).then((given) => tool.handler(given, NO_CONTEXT))
    .then((result) => ({ result }), (error) => ({ result: toolResult(String(error), true) }));
/** Answers a JSON array: -32600, as it is no object. */
let answerBatch = (values: unknown[]): Reply | Promise<Reply> => respond(values);
/** Takes a response from the client: no request of ours waits for one. */
let receive = (response: JSONObject): undefined => undefined;
/** Writes one line of log to stderr. */
let log = (text: string): boolean => process.stderr.write(`[server] ${text}\n`);
/** Starts the transport: the line loop on stdin, where a slow call holds up the lines after it. */
let startTransport = async () => {
  log("stdio server started — waiting for JSON-RPC messages on stdin");
  for await (const line of createInterface({ input: process.stdin })) send(await answer(line));
};

/** Whether a value is a JSON object: not null, not an array. */
function isObject(value: unknown): value is JSONObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** initialize: the client's version if we speak it, else our newest (§Version Negotiation). */
function initialize({ clientInfo, protocolVersion: asked }: JSONObject): Outcome {
  // Client text as JSON: a line break in it cannot start a line of log.
  log(`initialize: client=${JSON.stringify(clientInfo)} protocol=${JSON.stringify(asked)}`);
  const protocolVersion = LEGACY_VERSIONS.find((known) => known === asked) ?? LEGACY_VERSIONS[0];
  return { result: { protocolVersion, capabilities: CAPABILITIES, serverInfo: SERVER_INFO } };
}

/** tools/call: a call we cannot route is a protocol error; a tool that fails is a result with
 * `isError` (server/tools §Error Handling). */
function callTool(params: JSONObject, id: RequestId): Served {
  const { name, arguments: args = {} } = params;
  const tool = TOOLS.find((candidate) => candidate.name === name);
  if (typeof name !== "string" || !isObject(args)) return failure(INVALID_PARAMS, NOT_A_CALL);
  if (tool === undefined) return failure(INVALID_PARAMS, `Unknown tool: ${name}`);
  return runTool(tool, args, params, id);
}

/** What tools/call says when it cannot route a call. */
const NOT_A_CALL = 'Invalid params: "name" must be a string and "arguments" an object';

/** The JSON-RPC methods we serve, by name: the dispatch table. A Map, so that `toString` is
 * never a method. */
const METHODS = new Map<string, (params: JSONObject, id: RequestId) => Served>([
  ["initialize", initialize],
  ["ping", () => ({ result: {} })],
  ["tools/list", () => ({ result: { tools: TOOLS.map(({ handler, ...tool }) => tool) } })],
  ["tools/call", callTool],
]);

/** The notifications we act on, by name. */
const NOTIFICATIONS = new Map<string, (params: JSONObject) => void>([
  ["notifications/initialized", () => log("client initialized")],
]);

/** JSON-RPC 2.0 §5.1 error codes. */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;

/** A protocol error in place of a result. */
const failure = (code: number, message: string) => ({ error: { code, message } });

/** A response to a request, or to a line we could not read (id null, JSON-RPC 2.0 §5). */
const response = (id: RequestId | null, outcome: Outcome): Response =>
  ({ jsonrpc: "2.0", id, ...outcome });

/** Acts on one JSON value as the kind of message it is, and returns its response, if any: now,
 * or once its handler's Promise settles. */
function respond(value: unknown): Reply | Promise<Reply> {
  const invalid = (id: RequestId | null, reason: string): Response =>
    response(id, failure(INVALID_REQUEST, `Invalid Request: ${reason}`));
  if (!isObject(value)) return invalid(null, "not a JSON object");
  const { jsonrpc, id: given, method, params = {} } = value;
  // A response is never answered: its id numbers a request of ours.
  if (method === undefined && ("result" in value || "error" in value)) return receive(value);
  // An error names the id when one can be read, else null (JSON-RPC 2.0 §5).
  const exact =
    typeof given === "string" || (typeof given === "number" && Number.isSafeInteger(given));
  const id = exact ? given : null;
  if (jsonrpc !== "2.0") return invalid(id, '"jsonrpc" must be "2.0"');
  if (typeof method !== "string") return invalid(id, '"method" must be a string');
  // JSON-RPC allows params by position; no MCP method takes them, so they read as none.
  const structured = typeof params === "object" && params !== null;
  if (!structured) return invalid(id, '"params" must be an object or an array');
  const named = isObject(params) ? params : {};
  // A notification is never answered, known or not (JSON-RPC 2.0 §4.1).
  if (given === undefined) NOTIFICATIONS.get(method)?.(named);
  if (given === undefined) return undefined;
  if (id === null) return invalid(null, '"id" must be a string or an integer');
  const served =
    serve(method, named, id) ?? failure(METHOD_NOT_FOUND, `Method not found: ${method}`);
  if (!(served instanceof Promise)) return response(id, served);
  return served.then((done) => (done === undefined ? undefined : response(id, done)));
}

/** Answers one line: a response now, one to come, or none for a blank line. */
function answer(line: string): Reply | Promise<Reply> {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    // Blank is JSON's own whitespace only (RFC 8259 §2); trim() knows more.
    if (/^[ \t\r]*$/.test(line)) return undefined;
    return response(null, failure(PARSE_ERROR, "Parse error"));
  }
  return Array.isArray(value) ? answerBatch(value) : respond(value);
}

/** Writes a message to stdout, on a line of its own: nothing else goes there. */
function send(message: JSONObject | Reply): void {
  if (message !== undefined) process.stdout.write(`${JSON.stringify(message)}\n`);
}

// The transport starts once the whole file has run, so that a section below may give its own.
// Over stdio, the end of stdin is the client's goodbye (stdio §Shutdown): the process ends when
// the last reply is out.
queueMicrotask(() => void startTransport());

// THE STOP LINE ==================================================================================
// Above: the article's server, whole. Below: one section per capability, each plugged in where
// the top hands over: METHODS, NOTIFICATIONS, or a hand-over point.

// ==== 1. Strict input: bytes in, a chunk's replies out together =================================
// The wire is strict (stdio §Messages: UTF-8, one message a line), and readline is not: it holds
// a line of any length, and reads bytes that are not UTF-8 as U+FFFD. So the article's readline
// loop is taken off stdin before it reads a byte (the first chunk comes once this file has run),
// and stdin is read here as bytes: a line is held to MAX_LINE_BYTES, bytes that are not UTF-8 are
// a parse error, and a byte-order mark before a line is skipped (RFC 8259 §8.1). A chunk's
// replies go out together, in writes of about MAX_WRITE characters; while the client does not
// read them, we stop reading its requests, and the rest of the chunk waits (backpressure).
// Plugs in at the hand-over startTransport, in place of the article's readline loop.
startTransport = readStdin;

/** The longest line we hold, in bytes: far beyond any real message, far below V8's longest
 * string (about 512 Mi characters). */
const MAX_LINE_BYTES = 64 * 1024 * 1024;

/** The most text one write takes: a chunk's replies go out in pieces of about this size. */
const MAX_WRITE = 1024 * 1024;

/** A JSON-RPC 2.0 §5.1 error code: ours, not the client's. */
const INTERNAL_ERROR = -32603;

/** Reads bytes as the UTF-8 that JSON text must be (RFC 8259 §8.1): `fatal` makes bytes that are
 * not UTF-8 an error, not U+FFFD; a byte-order mark is kept, for answerLine to skip one. */
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** A line of input as the splitter hands it over: its text, or the error that answers it. */
type Line = string | Outcome;

/**
 * Cuts stdin's bytes into lines at each "\n", in the shape of Deno std's TextLineStream:
 * `transform` takes a chunk and returns the lines it completes, `flush` a last line that ended
 * without one. A chunk's whole lines are decoded at once, with one UTF-8 check (a few times
 * faster than a line at a time); only the start of a line that a chunk leaves open is held, and
 * no more of it than MAX_LINE_BYTES.
 */
class LineSplitter {
  /** The line whose "\n" has not come yet, as the pieces it came in. */
  #pieces: Buffer[] = [];
  /** Its length so far, in bytes, including any that were not held. */
  #size = 0;

  /** Returns the lines a chunk completes, without their "\n". */
  transform(chunk: Buffer): Line[] {
    const last = chunk.lastIndexOf(0x0a);
    if (last === -1) {
      this.#hold(chunk);
      return [];
    }
    // A line left open ends at the chunk's first "\n"; the lines after it are whole.
    const first = this.#size > 0 ? chunk.indexOf(0x0a) : -1;
    const whole = first < last ? decodeLines(chunk.subarray(first + 1, last)) : [];
    const lines = first === -1 ? whole : [this.#end(chunk.subarray(0, first)), ...whole];
    this.#hold(chunk.subarray(last + 1));
    return lines;
  }

  /** Returns the last line, if the input ended after it without a "\n". */
  flush(): Line[] {
    return this.#size === 0 ? [] : [this.#end(Buffer.alloc(0))];
  }

  /** Adds a piece to the open line, holding its bytes only while the line is within the cap. */
  #hold(piece: Buffer): void {
    this.#size += piece.length;
    if (this.#size <= MAX_LINE_BYTES && piece.length > 0) this.#pieces.push(piece);
  }

  /** Ends the open line with its last piece, and hands it over: its text, or the error that
   * answers it. */
  #end(piece: Buffer): Line {
    this.#hold(piece);
    const size = this.#size;
    const bytes = Buffer.concat(this.#pieces);
    this.#pieces = [];
    this.#size = 0;
    if (size <= MAX_LINE_BYTES) return decodeLines(bytes)[0] ?? "";
    return failure(INVALID_REQUEST, `Invalid Request: line too long (${size} bytes)`);
  }
}

/** Whole lines' bytes as their texts: checked once as UTF-8, and when that fails, a line at a
 * time, so that only a line that is not UTF-8 is a parse error (JSON-RPC 2.0 §5.1). */
function decodeLines(bytes: Buffer): Line[] {
  try {
    return UTF8.decode(bytes).split("\n");
  } catch {
    // Rare: a line at a time. latin1 keeps each byte as it is, and "\n" is one of them.
    const pieces = bytes.toString("latin1").split("\n");
    if (pieces.length === 1) return [failure(PARSE_ERROR, "Parse error")];
    return pieces.flatMap((piece) => decodeLines(Buffer.from(piece, "latin1")));
  }
}

/** A lone "{" or "[" on a line: the first piece of a pretty-printed message; and the hint. */
const OPENING_PIECE = /^[ \t\r]*[{[][ \t\r]*$/;
const ONE_LINE = "each message must be on one line, not pretty-printed";

/** Answers one line as the article's loop does, but for a byte-order mark before it, which
 * PowerShell puts before what it pipes, and a hint for a person who pretty-prints. */
function answerLine(line: Line): Reply | Promise<Reply> {
  if (typeof line !== "string") return response(null, line);
  const text = line.charCodeAt(0) === 0xfeff ? line.slice(1) : line;
  if (text.length < 16 && OPENING_PIECE.test(text)) log(ONE_LINE);
  return answer(text);
}

/** A reply as its line of text. One that JSON cannot hold (a handler's BigInt or cycle, or a
 * string past V8's longest) is answered -32603 in its place, and the session goes on. */
function lineOf(reply: Response | Response[]): string {
  try {
    return `${JSON.stringify(reply)}\n`;
  } catch (error) {
    log(`a reply could not be written as JSON: ${String(error)}`);
    const id = Array.isArray(reply) ? null : reply.id;
    return `${JSON.stringify(response(id, failure(INTERNAL_ERROR, "Internal error")))}\n`;
  }
}

/** Writes text to stdout; while the client is not reading it, stops reading its requests.
 * Returns whether stdout takes more now. */
function write(text: string): boolean {
  const flowing = process.stdout.write(text);
  if (!flowing && !process.stdin.isPaused()) {
    process.stdin.pause();
    process.stdout.once("drain", () => process.stdin.resume());
  }
  return flowing;
}

/** Replies and chunks still being worked on, so that the end of input can wait for them. */
const pending = new Set<Promise<unknown>>();

/** Keeps work in `pending` until it is done. */
function keep(work: Promise<unknown>): void {
  pending.add(work);
  void work.then(() => pending.delete(work));
}

/** Writes a reply once it is ready. */
function writeLater(reply: Promise<Reply>): void {
  keep(reply.then((ready) => {
    if (ready !== undefined) write(lineOf(ready));
  }));
}

/** Answers a chunk's lines from `start`: the replies that are ready go out together, the rest
 * later. While the client does not read them, the rest of the chunk waits for it. */
function answerLines(lines: Line[], start = 0): void {
  let text = "";
  for (let next = start; next < lines.length; next += 1) {
    const reply = answerLine(lines[next] ?? "");
    if (reply instanceof Promise) writeLater(reply);
    else if (reply !== undefined) text += lineOf(reply);
    if (text.length < MAX_WRITE) continue;
    const flowing = write(text);
    text = "";
    if (flowing) continue;
    // The rest goes out within "drain" itself: before the next chunk, which stdin's resume, a
    // tick later, would hand over first.
    const rest = () => answerLines(lines, next + 1);
    keep(new Promise((resolve) => process.stdout.once("drain", () => resolve(rest()))));
    return;
  }
  if (text !== "") write(text);
}

/** Reads stdin as bytes, a chunk at a time, and answers its lines. */
async function readStdin(): Promise<void> {
  log("stdio server started — waiting for JSON-RPC messages on stdin");
  const splitter = new LineSplitter();
  process.stdin.on("data", (chunk: Buffer) => answerLines(splitter.transform(chunk)));
  // The end of stdin is the client's goodbye (stdio §Shutdown): answer a last line that had no
  // "\n" and every reply still to come, then exit once stdout is written, even while a stderr
  // nobody reads holds logs back. A section below that holds a question open listens for "end"
  // too; it acts a microtask after this one, before any reply waited for here can settle.
  process.stdin.on("end", async () => {
    answerLines(splitter.flush());
    while (pending.size > 0) await Promise.all(pending);
    process.stdout.write("", () => process.exit(0));
  });
  // A client that closes our stdout (EPIPE) has gone away: no one is left to answer.
  process.stdout.on("error", () => process.exit(0));
}
// Logs are best effort.
process.stderr.on("error", () => {});

// ==== 2. Argument checking: a call's arguments against its tool's inputSchema ===================
// The schema is a promise the client may not keep, and "1" + 2 is "12". Plugs in at tools/call,
// in METHODS: a call whose arguments do not fit is a tool error that names the argument (server/
// tools §Error Handling), and its handler never runs; any other call goes on to callTool.
METHODS.set("tools/call", (params, id) => argumentsProblem(params) ?? callTool(params, id));

/** The tool error for a call whose arguments do not fit its tool's schema, or undefined. */
function argumentsProblem({ name, arguments: args = {} }: JSONObject): Outcome | undefined {
  const tool = TOOLS.find((candidate) => candidate.name === name);
  if (tool === undefined || !isObject(args)) return undefined;
  const problem = checkArguments(tool.inputSchema, args);
  if (problem === undefined) return undefined;
  return { result: toolResult(`Invalid arguments: ${problem}`, true) };
}

/** What is wrong with arguments by a schema, or undefined when nothing is: every `required`
 * name is there, and each argument has its property's JSON type. */
function checkArguments(schema: ObjectSchema, args: JSONObject): string | undefined {
  const missing = schema.required?.find((name) => !Object.hasOwn(args, name));
  if (missing !== undefined) return `"${missing}" is required`;
  for (const [name, property] of Object.entries(schema.properties)) {
    const type = isObject(property) && typeof property.type === "string" ? property.type : "";
    const value = args[name];
    // JSON Schema's types: an integer is both "integer" and "number".
    const actual = Array.isArray(value) ? "array" : value === null ? "null" : typeof value;
    const fits = type === "integer" ? Number.isInteger(value) : actual === type;
    if (!Object.hasOwn(args, name) || fits) continue;
    return `"${name}" must be ${/^[aeiou]/.test(type) ? "an" : "a"} ${type}`;
  }
  return undefined;
}

// ==== 3. What a handler may return: whatever it does, an answer =================================
// A handler is code: it may throw, reject, or return what is no result, which plain JavaScript
// allows whatever the types say. A method that fails so is a bug of ours: logged with its stack,
// and answered -32603 (JSON-RPC 2.0 §5.1); the session goes on. Plugs in at the hand-over serve.
// A tool's handler is a tool author's code: what it does is a result, in the same turn when it
// returns at once, and what it throws a tool error the model reads (server/tools §Error
// Handling). Calls in flight (section 7) runs every tool's handler through runHandler.
serve = serveSafely;

/** Serves a request by its method, as the article does; what the method throws, or its Promise
 * rejects with, is -32603. */
function serveSafely(method: string, params: JSONObject, id: RequestId): Served | undefined {
  const failed = (error: unknown): Outcome => {
    log(`${JSON.stringify(method)} failed: ${describe(error)}`);
    return failure(INTERNAL_ERROR, "Internal error");
  };
  try {
    const served = METHODS.get(method)?.(params, id);
    return served instanceof Promise ? served.catch(failed) : served;
  } catch (error) {
    return failed(error);
  }
}

/** An error for the log: its stack when it has one. */
function describe(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}

/** A handler's failure of the client's making, not a bug of ours: a question the client could
 * not or would not answer (section 8). The log gets its message in one line; one that carries an
 * outcome answers the call with that protocol error, not a tool error. */
class ClientError extends Error {
  name = "ClientError";
  outcome: Outcome | undefined;
}

/** Runs a handler with a context: a result now, or a Promise of one for an async handler. */
function runHandler(tool: Tool, args: JSONObject, context: ToolContext): Served {
  const failed = (error: unknown): Outcome => error instanceof ClientError && error.outcome
    ? error.outcome : { result: toolError(tool.name, error) };
  try {
    const returned: unknown = tool.handler(args, context);
    if (!(returned instanceof Promise)) return { result: resultOf(tool.name, returned) };
    return returned.then((value: unknown) => ({ result: resultOf(tool.name, value) }), failed);
  } catch (error) {
    return failed(error);
  }
}

/** A handler's value as the result the client gets: a CallToolResult as it is (an object with a
 * `content` array, §Tool Result, checked no deeper); anything else a tool error that names it. */
function resultOf(name: string, value: unknown): CallToolResult {
  if (isCallToolResult(value)) return value;
  return toolError(name, `The tool returned ${whatIs(value)}, not a result with a content array`);
}

/** Whether a value is a CallToolResult as far as we check: an object with a `content` array. */
function isCallToolResult(value: unknown): value is CallToolResult {
  return isObject(value) && Array.isArray(value.content);
}

/** What a value is, in a few words: `undefined`, `a string`, `an object whose content is…`. */
function whatIs(value: unknown): string {
  if (value === undefined || value === null) return String(value);
  if (isObject(value)) return `an object whose content is ${whatIs(value.content)}`;
  return Array.isArray(value) ? "an array" : `a ${typeof value}`;
}

/** A handler's failure as the tool error the model reads. The log gets its stack, but an abort,
 * how a handler stops when its call is cancelled, and a question the client could not or would
 * not answer (section 8), are one line. */
function toolError(name: string, error: unknown): CallToolResult {
  const aborted = error instanceof Error && error.name === "AbortError";
  const refused = error instanceof ClientError;
  const said = aborted || refused ? error.message : describe(error);
  log(`tool ${JSON.stringify(name)} ${aborted ? "stopped" : "failed"}: ${said}`);
  return toolResult(error instanceof Error ? error.message : String(error), true);
}

// ==== 4. Log hygiene: a log that cannot drive a terminal or fill memory =========================
// stderr is often a person's terminal, and client text reaches the log. Every log line has its
// control, C1 and bidi characters escaped as \uXXXX (a newline and a tab stay); and while the
// client leaves stderr unread, what waits for it is bounded: past MAX_LOG_BACKLOG a line is
// dropped, and once stderr drains one line says how many were. Plugs in at the hand-over log.
log = (text) => writeLogEscaped(`[server] ${text}\n`);

/** What must never reach a terminal raw: C0 but tab and newline, DEL, C1 (U+009B is a CSI), the
 * bidi controls, and the line and paragraph separators. */
const UNPRINTABLE = /[\0-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** How many bytes of log may wait for a reader before a line is dropped. */
const MAX_LOG_BACKLOG = 1024 * 1024;

/** Log lines dropped since stderr last drained. */
let droppedLogLines = 0;

/** Text with every unprintable character as a visible \uXXXX. */
function escapeForTerminal(text: string): string {
  const escape = (char: string) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`;
  return text.replace(UNPRINTABLE, escape);
}

/** Writes a line of log, escaped, unless too much waits already for a reader. */
function writeLogEscaped(line: string): boolean {
  if (process.stderr.writableLength > MAX_LOG_BACKLOG) {
    droppedLogLines += 1;
    if (droppedLogLines === 1) process.stderr.once("drain", sayDropped);
    return false;
  }
  return process.stderr.write(escapeForTerminal(line));
}

/** Says, once stderr has drained, how many log lines were dropped while it was not read. */
function sayDropped(): void {
  log(`dropped ${droppedLogLines} log lines: stderr was not read`);
  droppedLogLines = 0;
}

// ==== 5. Batches: several messages on one line, as a JSON array (JSON-RPC 2.0 §6) ===============
// 2025-03-26 requires a server to receive them; later revisions dropped them. We answer them in
// any era: each entry as a line of its own would be, in one array, once every entry is done.
// Plugs in at the hand-over answerBatch.
answerBatch = answerEntries;

/** Answers a batch: each entry as a line of its own would be, in order, in one array. */
function answerEntries(batch: unknown[]): Reply | Promise<Reply> {
  const empty = failure(INVALID_REQUEST, "Invalid Request: empty batch");
  if (batch.length === 0) return response(null, empty);
  const replies = batch.map(respond);
  const ready = (reply: Reply | Promise<Reply>): reply is Reply => !(reply instanceof Promise);
  return replies.every(ready) ? batchOf(replies) : Promise.all(replies).then(batchOf);
}

/** A batch's responses as one array, or none when every entry was a notification. */
function batchOf(replies: Reply[]): Reply {
  const responses = replies.filter((reply) => reply !== undefined).flat();
  return responses.length === 0 ? undefined : responses;
}

// ==== 6. The 2026-07-28 era: requests that carry their version ==================================
// A legacy client (2024-11-05 to 2025-11-25) opens with `initialize`, and later requests carry no
// version. A modern one (2026-07-28 basic/versioning) never sends initialize: every request names
// its version and the client's capabilities in `params._meta` (basic/index §_meta), and every
// result says `resultType` and who we are. 2026-07-28 removed initialize and ping. Plugs in at
// METHODS: each method is wrapped so that a request with `_meta` is served in its era, and
// server/discover, the modern client's probe, is added.

/** The stateless revision, whose requests carry their version (2026-07-28 basic/versioning). */
const MODERN_VERSION = "2026-07-28";

/** Every version we speak, as server/discover and error -32022 list them. */
const SUPPORTED_VERSIONS = [MODERN_VERSION, ...LEGACY_VERSIONS];

/** The methods of the 2026-07-28 era; a legacy era has every method of METHODS. */
const MODERN_METHODS = ["server/discover", "tools/list", "tools/call", "subscriptions/listen"];

/** Reserved `_meta` keys of a modern request (2026-07-28 basic/index §_meta). */
const PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion";
const CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo";
const CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities";
const LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel";
/** The reserved `_meta` key of a modern result that names the server. */
const SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo";

/** What every modern result carries (2026-07-28 basic/index §ResultType and §_meta). */
const MODERN_FIELDS = { resultType: "complete", _meta: { [SERVER_INFO_KEY]: SERVER_INFO } };

/** Caching hints (2026-07-28 server/utilities/caching): our tools never change, hold no secret. */
const CACHE_HINTS = { ttlMs: 3_600_000, cacheScope: "public" };

/** MCP's error for a version we do not speak (2026-07-28 basic/index §Error Codes). */
const UNSUPPORTED_PROTOCOL_VERSION = -32022;

/** A -32602 error: the request's params are not what its method takes. */
function invalidParams(reason: string): ReturnType<typeof failure> {
  return failure(INVALID_PARAMS, `Invalid params: ${reason}`);
}

/** The capabilities a legacy client declared at initialize: its later requests do not repeat
 * them, and elicitation reads them. */
let legacyCapabilities: unknown;

serve = serveInEra;
METHODS.set("initialize", (params) => {
  legacyCapabilities = params.capabilities;
  return initialize(params);
});
METHODS.set("server/discover", discover);

/** Serves a request in its era, through serveSafely (section 3): one with `_meta` is checked
 * first, and a modern one gets what the era adds to its result. */
function serveInEra(method: string, params: JSONObject, id: RequestId): Served | undefined {
  if (params._meta === undefined) return serveSafely(method, params, id);
  const era = eraOf(isObject(params._meta) ? params._meta : {});
  if (era !== "modern") return era === "legacy" ? serveSafely(method, params, id) : era;
  // 2026-07-28 removed initialize and ping (changelog items 2, 5).
  if (!MODERN_METHODS.includes(method)) return undefined;
  const served = serveSafely(method, params, id);
  if (served instanceof Promise) return served.then((done) => asModern(method, done));
  return asModern(method, served);
}

/**
 * The era of a request that has `_meta`, or the protocol error that stops it. One that names no
 * version, or a legacy one, is legacy, as if agreed at initialize (we keep no state to check); a
 * modern one is checked on its own, with no handshake (2026-07-28 basic/versioning).
 */
function eraOf(meta: JSONObject): "legacy" | "modern" | Outcome {
  const version = meta[PROTOCOL_VERSION_KEY];
  if (version === undefined || LEGACY_VERSIONS.some((known) => known === version)) return "legacy";
  const named = `_meta["${PROTOCOL_VERSION_KEY}"]`;
  if (typeof version !== "string") return invalidParams(`${named} must be a string`);
  if (version !== MODERN_VERSION) return unsupportedVersion(version);
  const required = `_meta["${CLIENT_CAPABILITIES_KEY}"] is required`;
  return isObject(meta[CLIENT_CAPABILITIES_KEY]) ? "modern" : invalidParams(required);
}

/** The error for a version we do not speak, with those we do (2026-07-28 basic/versioning). */
function unsupportedVersion(requested: string): Outcome {
  const data = { supported: SUPPORTED_VERSIONS, requested };
  const message = "Unsupported protocol version";
  return { error: { code: UNSUPPORTED_PROTOCOL_VERSION, message, data } };
}

/** Whether a request's `_meta` names 2026-07-28 (serve has checked the rest by then). */
function isModern(meta: unknown): boolean {
  return isObject(meta) && meta[PROTOCOL_VERSION_KEY] === MODERN_VERSION;
}

/** The capabilities the client declared: in a modern request's `_meta`, or at initialize. */
function capabilitiesOf(meta: unknown): unknown {
  return isObject(meta) && isModern(meta) ? meta[CLIENT_CAPABILITIES_KEY] : legacyCapabilities;
}

/** A modern outcome as the era sends it: a result gets the era's fields, and tools/list's cache
 * hints; an input_required result says so itself (2026-07-28 basic/patterns/mrtr). */
function asModern(method: string, outcome: Outcome | undefined): Outcome | undefined {
  if (outcome === undefined || "error" in outcome) return outcome;
  const hints = method === "tools/list" ? CACHE_HINTS : {};
  const result: JSONObject = { ...outcome.result, ...hints, ...MODERN_FIELDS };
  if (outcome.result.resultType === "input_required") result.resultType = "input_required";
  return { result };
}

/**
 * server/discover: what we speak and offer. A modern client sends it first and never sends
 * initialize, so we log who it is here. It is answered the same in either era, so that any
 * client can probe it (2026-07-28 basic/transports/stdio §Backward Compatibility).
 */
function discover(params: JSONObject): Outcome {
  const meta = isObject(params._meta) ? params._meta : {};
  const [client, protocol] = [meta[CLIENT_INFO_KEY], meta[PROTOCOL_VERSION_KEY]];
  log(`server/discover: client=${JSON.stringify(client)} protocol=${JSON.stringify(protocol)}`);
  const offer = { supportedVersions: SUPPORTED_VERSIONS, capabilities: CAPABILITIES };
  return { result: { ...offer, ...CACHE_HINTS, ...MODERN_FIELDS } };
}

// ==== 7. Calls in flight: async handlers, cancellation, progress, logging =======================
// A handler that returns a Promise leaves its call in flight: other requests are served
// meanwhile, the client may cancel it (2025-11-25 basic/utilities/cancellation), and it may
// report progress (basic/utilities/progress) and send log messages (server/utilities/logging).
// Plugs in at the hand-over runTool, which runs each handler through runHandler (section 3) with
// a live context, at notifications/cancelled, and at logging/setLevel with the capability.
runTool = runInFlight;
NOTIFICATIONS.set("notifications/cancelled", cancel);
CAPABILITIES.logging = {};
// logging/setLevel (2025-11-25 server/utilities/logging): the least level to send from now on;
// 2026-07-28 removed it, as each request names its own.
METHODS.set("logging/setLevel", ({ level }) => {
  if (LEVEL_RANKS.indexOf(level) === -1) return invalidParams('"level" is not a log level');
  legacyLoggingLevel = level;
  return { result: {} };
});

/** The log levels of RFC 5424 §6.2.1, least severe first (server/utilities/logging). */
const LOGGING_LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert",
  "emergency"] as const;
type LoggingLevel = (typeof LOGGING_LEVELS)[number];

/** The same levels, as a list any value can be looked up in: indexOf gives a level's rank, from
 * 0 for debug up, and -1 for what is no level. */
const LEVEL_RANKS: readonly unknown[] = LOGGING_LEVELS;

/** The least level a legacy client has asked for, with logging/setLevel: until it asks, every
 * message goes, as the SDKs do. Like initialize's capabilities, one for the process. */
let legacyLoggingLevel: unknown = "debug";

/** Whether a value can be a request id, or a progress token: a string, or an integer that can be
 * read back exactly (past 2^53 it could not be echoed as it was sent). */
function isRequestId(value: unknown): value is RequestId {
  return typeof value === "string" || Number.isSafeInteger(value);
}

/** The tool calls whose handlers are still running, by request id: notifications/cancelled
 * names the one to stop. A call that ended at once is never here. */
const inFlight = new Map<RequestId, ToolCall>();

/** Hands each call, as it is made, to the transport that carries its request: over stdio there
 * is nothing to take, and its messages go to stdout; Streamable HTTP (section 10) sends them on
 * the request's own stream, and cancels the call when that stream closes. */
let takeCall = (call: ToolCall): void => {};

/**
 * One tools/call's context, and what it takes to stop it. Each part is made when first used: the
 * AbortController only when someone reads `signal`, as one per call made a burst of calls 1.65
 * times slower.
 */
class ToolCall implements ToolContext {
  /** The request's `_meta`: its progressToken, and in 2026-07-28 its era and the client. */
  readonly meta: unknown;
  /** The client's token for this call's progress, until the call ends: then there is none. */
  #progressToken: RequestId | undefined;
  #lastProgress = -Infinity;
  #controller: AbortController | undefined;

  /** Sends a message of this call's to the client: its progress, our requests to the client. */
  send: (message: JSONObject) => void = send;

  constructor(meta: unknown) {
    this.meta = meta;
    const token = isObject(meta) ? meta.progressToken : undefined;
    this.#progressToken = isRequestId(token) ? token : undefined;
    takeCall(this);
  }

  get signal(): AbortSignal {
    this.#controller ??= new AbortController();
    return this.#controller.signal;
  }

  /** A function of its own, not a method, so that a handler can take `{ progress }` out of its
   * context. It sends notifications/progress only while the call runs, with the request's
   * token, and only for a value greater than the last (basic/utilities/progress). */
  readonly progress: ToolContext["progress"] = (progress, total, message) => {
    const increases = isFiniteNumber(progress) && progress > this.#lastProgress;
    if (this.#progressToken === undefined || !increases) return;
    this.#lastProgress = progress;
    const params = { progressToken: this.#progressToken, progress, total, message };
    this.send({ jsonrpc: "2.0", method: "notifications/progress", params });
  };

  /** Sends a log message while the call runs, at a level the client asked for: in 2026-07-28
   * only one this request's `_meta` names, and the message goes on this request's own stream
   * (2026-07-28 server/utilities/logging §Per-request log level). */
  readonly log = (level: LoggingLevel, data: unknown, logger?: string): void => {
    const asked = isObject(this.meta) ? this.meta[LOG_LEVEL_KEY] : undefined;
    const least = LEVEL_RANKS.indexOf(isModern(this.meta) ? asked : legacyLoggingLevel);
    if (least === -1 || LEVEL_RANKS.indexOf(level) < least) return;
    this.send({ jsonrpc: "2.0", method: "notifications/message", params: { level, logger, data } });
  };

  /** In 2026-07-28, the round this call is, with the answers it was given (section 8). */
  round: Round | undefined;

  /** What the call can ask the client, each answered as Asking the client (section 8) says. */
  // No `mode`: a form, in 2025-11-25 and later (URL mode is out of scope); 2025-06-18 has none.
  readonly elicit: ToolContext["elicit"] = (message, form, key) =>
    askClient(this, ELICITATION, { message, requestedSchema: form }, key)
      .then((answer) => checkedForm(answer, form));
  readonly sample = (request: CreateMessageRequest, key?: string): Promise<CreateMessageResult> =>
    askClient(this, SAMPLING, request, key);
  readonly roots = (key?: string): Promise<Root[]> =>
    askClient(this, ROOTS, {}, key).then(({ roots }) => roots);

  /** Ends the call: its response is on its way, and nothing of the call's is sent after it. */
  end(): void {
    this.send = () => {};
  }

  /** Stops the call: its signal aborts, and it gets no response of its own. */
  cancel(): void {
    this.#controller ??= new AbortController();
    this.#controller.abort();
    this.end();
  }
}

/** Runs a tool call: its handler gets a ToolCall, and while its Promise runs, the call can be
 * cancelled. A handler that declares no context (add) cannot see one: none is made for it, unless
 * its call must wait. */
function runInFlight(tool: Tool, args: JSONObject, params: JSONObject, id: RequestId,
  call?: ToolCall): Served {
  const context = tool.handler.length < 2 ? undefined : call ?? new ToolCall(params._meta);
  const served = runHandler(tool, args, context ?? NO_CONTEXT);
  if (served instanceof Promise) return settle(served, id, context ?? new ToolCall(params._meta));
  context?.end();
  return served;
}

/** Waits for a handler's outcome, or for its call to be cancelled: then there is none. */
async function settle(served: Promise<Outcome | undefined>, id: RequestId, call: ToolCall):
  Promise<Outcome | undefined> {
  inFlight.set(id, call);
  const cancelled = new Promise<undefined>((resolve) => {
    call.signal.addEventListener("abort", () => resolve(undefined));
  });
  const outcome = await Promise.race([served, cancelled]);
  call.end();
  // A client that reused the id of a call in flight (basic §Requests: it MUST NOT) has its new
  // call there now: that one stays cancellable.
  if (inFlight.get(id) === call) inFlight.delete(id);
  return outcome;
}

/** notifications/cancelled: stops the call it names. An unknown, finished or malformed one is
 * ignored, and the reason is logged either way (basic/utilities/cancellation). */
function cancel({ requestId, reason }: JSONObject): void {
  const call = isRequestId(requestId) ? inFlight.get(requestId) : undefined;
  const what = call === undefined ? "ignored a cancellation of" : "cancelled";
  log(`${what} request ${JSON.stringify(requestId)}: ${JSON.stringify(reason)}`);
  call?.cancel();
}

// A promise that a handler never awaited, such as an elicit whose answer it did not wait for, may
// fail with no one to catch it: that is the tool's bug, logged, not the end of the session.
process.on("unhandledRejection", (error) => log(`unhandled rejection: ${String(error)}`));

// ==== 8. Asking the client: elicitation, sampling and roots =====================================
// A handler may ask the client three things (2025-11-25 client/): the user, to fill in a form
// (elicitation/create); the client's model, for a completion (sampling/createMessage); and the
// roots, the folders the client works in (roots/list). Each is a request of ours, which JSON-RPC
// allows either way. A client that did not declare the capability is never asked: the handler's
// promise rejects (basic/lifecycle §Capability Negotiation). In a legacy era we send the request,
// and pair the client's response by the id we gave it (JSON-RPC 2.0 §5). In 2026-07-28 we never
// send one: the call's result is input_required, and the client retries the call with the answers
// (basic/patterns/mrtr). Plugs in at the hand-overs runTool, giving each call its round, and
// receive; a call's asks (section 7) ask through askClient.
runTool = runAsking;
receive = receiveResponse;
// At the end of input our questions can no longer be answered: each tool that waits is told,
// once the line loop's own listener (section 1, added as stdin is read, after this one) has
// answered a last line that had no "\n", which may be an answer.
process.stdin.on("end", () => queueMicrotask(() => {
  const gone = new ClientError("The client closed its input before it answered");
  for (const waiting of awaiting.values()) waiting.reject(gone);
  awaiting.clear();
}));

/** The context of a handler that asks the client, or logs to it: what tools/call gives every
 * handler below the stop line. `sample` asks the client's model; `roots` lists the client's
 * roots; `log` sends a log message at a level (section 7). In 2026-07-28 a handler that asks runs
 * again, from the start, with the answers; `key`, if given, names the question there. */
type AskingContext = ToolContext & Pick<ToolCall, "sample" | "roots" | "log">;

/** What `sample` asks (client/sampling): the conversation so far, an optional system prompt,
 * and the most tokens the model may write; and the model's answer, with the model's name. */
type CreateMessageRequest = { messages: { role: "user" | "assistant"; content: ContentBlock }[];
  systemPrompt?: string; maxTokens: number };
type CreateMessageResult = { role: "user" | "assistant"; content: ContentBlock; model: string;
  stopReason?: string };

/** One of the client's roots (client/roots): a `file://` URI, and a name to show. */
type Root = { uri: string; name?: string };

/** One kind of question for the client (client/elicitation, sampling, roots): its method, the
 * word that names its questions and the capability it needs, and the result its answer must be. */
type Ask<Answer> = { method: string; name: string; isAnswer: (value: unknown) => value is Answer;
  answer: string };

/** The three kinds of question. */
const ELICITATION: Ask<ElicitResult> = { method: "elicitation/create", name: "elicitation",
  isAnswer: isElicitResult, answer: "an ElicitResult" };
const SAMPLING: Ask<CreateMessageResult> = { method: "sampling/createMessage", name: "sampling",
  isAnswer: isCreateMessageResult, answer: "a CreateMessageResult" };
const ROOTS: Ask<{ roots: Root[] }> = { method: "roots/list", name: "roots",
  isAnswer: isListRootsResult, answer: "a ListRootsResult" };

/** How many questions may wait for the client at once: past it, an ask rejects. */
const MAX_QUESTIONS = 1000;

/** 2026-07-28's error for a request that needs a capability the client did not declare
 * (basic/index §Error Codes). */
const MISSING_CLIENT_CAPABILITY = -32021;

/** Our own requests that wait for the client's response, by the id we gave them: receive pairs
 * a response to its request by that id (JSON-RPC 2.0 §5). */
const awaiting = new Map<RequestId, { resolve: (result: unknown) => void; reject: Rejection }>();

/** How a promise of ours is rejected. */
type Rejection = (reason: Error) => void;

/** How many requests of our own we have sent: each gets the next number in its id. */
let requestsSent = 0;

/** The id of our n-th request to the client: its kind and the count, readable in a log. Over
 * Streamable HTTP (section 10) any client can POST a response: there it is one no one can guess. */
let questionId = (name: string, count: number): RequestId => `${name}-${count}`;

/** 2026-07-28's state of one round (basic/patterns/mrtr): the answers the round was given by
 * key, how many questions the handler has asked, and those it was given no answer to. */
type Round = { answers: JSONObject; asked: number; unanswered: JSONObject };

/** Runs a tool call whose handler may ask: as calls in flight does, with asks of its own. In
 * 2026-07-28 a call is a round: what the client answered comes with it, and a round that asked
 * what it was not given ends as input_required. */
function runAsking(tool: Tool, args: JSONObject, params: JSONObject, id: RequestId): Served {
  if (tool.handler.length < 2) return runInFlight(tool, args, params, id);
  const retry = isModern(params._meta) ? answersOf(params, tool.name, args) : undefined;
  if (retry !== undefined && "error" in retry) return retry;
  const round = retry === undefined ? undefined : { ...retry, asked: 0, unanswered: {} };
  const call = new ToolCall(params._meta);
  call.round = round;
  const served = runInFlight(tool, args, params, id, call);
  if (round === undefined || !(served instanceof Promise)) return served;
  // Stopped at the end of a round: input_required, with what it asked.
  return served.then((done) => done ?? inputRequired(tool.name, args, round));
}

/** A call's question, in the call's era, to a client that declared the capability it needs; its
 * answer checked. A legacy call has no round. One the client did not declare is never sent: the
 * handler's promise rejects with a message it can pass on, and in 2026-07-28 a handler that lets
 * it pass answers its call with -32021, naming the capability (basic/index: the server MUST). */
function askClient<Answer>(call: ToolCall, ask: Ask<Answer>, params: JSONObject,
  key: string | undefined): Promise<Answer> {
  if (!declares(capabilitiesOf(call.meta), ask.name)) {
    const refused = new ClientError(`This client does not offer ${ask.name}`);
    const data = { requiredCapabilities: { [ask.name]: {} } };
    const error = { code: MISSING_CLIENT_CAPABILITY, message: refused.message, data };
    if (isModern(call.meta)) refused.outcome = { error };
    return Promise.reject(refused);
  }
  const request = { method: ask.method, params };
  const named = key ?? `${ask.name}-${(call.round?.asked ?? 0) + 1}`;
  const asked = call.round === undefined ? sendQuestion(call, ask.name, request)
    : lookUp(call, call.round, request, named);
  return asked.then((answer) => {
    if (ask.isAnswer(answer)) return answer;
    const wrong = new ClientError(`The answer is not ${ask.answer}`);
    const given = `inputResponses[${JSON.stringify(named)}] is not ${ask.answer}`;
    if (call.round !== undefined) wrong.outcome = invalidParams(given);
    throw wrong;
  });
}

/** Whether the client declared a capability; an `elicitation` we ask in only if it takes a
 * form, which an empty one means (2025-11-25 client/elicitation §Capabilities). */
function declares(capabilities: unknown, name: string): boolean {
  const declared = isObject(capabilities) ? capabilities[name] : undefined;
  if (!isObject(declared) || name !== "elicitation") return isObject(declared);
  return declared.form !== undefined || declared.url === undefined;
}

/** Legacy eras: sends the request to the client now, and resolves with the result of its
 * response (receive). Cancelling the call cancels the request too. */
function sendQuestion(call: ToolCall, name: string, request: JSONObject): Promise<unknown> {
  const signal = call.signal;
  // A call cancelled already asks nothing more; too many questions waiting, nothing new.
  if (signal.aborted) return Promise.reject(signal.reason);
  const tooMany = `${MAX_QUESTIONS} questions already wait for the client`;
  if (awaiting.size >= MAX_QUESTIONS) return Promise.reject(new ClientError(tooMany));
  requestsSent += 1;
  const id = questionId(name, requestsSent);
  call.send({ jsonrpc: "2.0", id, ...request });
  return new Promise((resolve, reject: Rejection) => {
    awaiting.set(id, { resolve, reject });
    signal.addEventListener("abort", () => {
      if (!awaiting.delete(id)) return;
      reject(signal.reason);
      const params = { requestId: id, reason: "The tool call was cancelled" };
      call.send({ jsonrpc: "2.0", method: "notifications/cancelled", params });
    });
  });
}

/**
 * 2026-07-28: the answer this round carries for the request, under the key the handler named,
 * or else under its kind and its place in the order the handler asks (`elicitation-1`,
 * `sampling-2`). With none, the round ends once the handler has had its turn, and runAsking
 * answers the call with every request still unanswered. "Its turn" is until setImmediate: every
 * promise settled meanwhile has run its callbacks. So with no answers yet,
 *   `await Promise.all([elicit(a), sample(b)])` asks both in one round: the retry answers both;
 *   `await elicit(a); await sample(b);` asks a, and b only once the retry has answered a, as
 *   the second ask runs only after the first has resolved: two retries, a then b.
 */
function lookUp(call: ToolCall, round: Round, request: JSONObject, key: string):
  Promise<unknown> {
  round.asked += 1;
  if (Object.hasOwn(round.answers, key)) return Promise.resolve(round.answers[key]);
  // The first question left unanswered ends the round, once the handler has had its turn.
  if (Object.keys(round.unanswered).length === 0) setImmediate(() => call.cancel());
  round.unanswered[key] = request;
  // The handler waits here for good, and is collected with what it holds.
  return new Promise(() => {});
}

/** Whether a value is an ElicitResult: a known action, and content only as an object. */
function isElicitResult(value: unknown): value is ElicitResult {
  if (!isObject(value)) return false;
  const known = ["accept", "decline", "cancel"].some((action) => action === value.action);
  return known && (value.content === undefined || isObject(value.content));
}

/** Whether a value is a CreateMessageResult: a role, one content block, and the model's name
 * (client/sampling; we never offer the model tools, so its content is never a list). */
function isCreateMessageResult(value: unknown): value is CreateMessageResult {
  return isObject(value) && typeof value.model === "string" && isObject(value.content);
}

/** Whether a value is a ListRootsResult: a list of roots, each with its URI (client/roots). */
function isListRootsResult(value: unknown): value is { roots: Root[] } {
  const roots = isObject(value) && Array.isArray(value.roots) ? value.roots : [undefined];
  return roots.every((root) => isObject(root) && typeof root.uri === "string");
}

/** The user's answer, checked against the form when it was accepted: what does not fit rejects
 * the handler's elicit with a message it can pass on. */
function checkedForm(answer: ElicitResult, form: ObjectSchema): ElicitResult {
  const accepted = answer.action === "accept";
  const problem = accepted ? checkArguments(form, answer.content ?? {}) : undefined;
  if (problem !== undefined) throw new ClientError(`The answer does not fit: ${problem}`);
  return answer;
}

/** A response to a request of ours: it settles what waits for it, and one nothing waits for (an
 * unknown id, or one answered or cancelled already) is logged and dropped. */
function receiveResponse({ id, result, error }: JSONObject): undefined {
  const waiting = isRequestId(id) ? awaiting.get(id) : undefined;
  if (isRequestId(id)) awaiting.delete(id);
  const [named, said] = [id, isObject(error) ? error.message : error].map((x) => JSON.stringify(x));
  if (waiting === undefined) log(`ignored a response to ${named}: no request of ours waits for it`);
  else if (error === undefined) waiting.resolve(result);
  else waiting.reject(new ClientError(`The client answered with an error: ${said}`));
  return undefined;
}

/** A retried call's answers (2026-07-28 basic/patterns/mrtr §Error Handling): those the
 * requestState we signed carries, and the client's inputResponses to the keys we asked; or the
 * protocol error that stops the call. A key we never asked is ignored, as the spec says; each
 * answer is checked when the handler asks for it (askClient). */
function answersOf(params: JSONObject, name: string, args: JSONObject):
  { answers: JSONObject } | ReturnType<typeof failure> {
  const { requestState, inputResponses = {} } = params;
  if (!isObject(inputResponses)) return invalidParams('"inputResponses" must be an object');
  const state = requestState === undefined ? FIRST_ROUND : openState(requestState, name, args);
  if (state === undefined) return invalidParams('"requestState" is not one we wrote for this call');
  const answers = { ...state.answers };
  for (const [key, given] of Object.entries(inputResponses)) {
    const named = `inputResponses[${JSON.stringify(key)}]`;
    if (!state.asked.includes(key)) log(`ignored ${named}: it answers nothing we asked`);
    else answers[key] = given;
  }
  return { answers };
}

/** The input_required result of a round that asked what it was not given (mrtr §Core Types):
 * the requests, and a requestState with every answer so far, signed for this call. */
async function inputRequired(name: string, args: JSONObject, round: Round):
  Promise<Outcome | undefined> {
  const inputRequests = round.unanswered;
  if (Object.keys(inputRequests).length === 0) return undefined;
  const state = { asked: Object.keys(inputRequests), answers: round.answers };
  const requestState = await sealState(name, args, state);
  return { result: { resultType: "input_required", inputRequests, requestState } };
}

// ==== 9. The signed requestState of 2026-07-28's questions =====================================
// An input_required result carries a requestState that the client hands back with its retry
// (basic/patterns/mrtr). It holds the answers so far; we sign it, since §Server Requirements
// make it attacker-controlled input whose integrity MUST be protected when it drives business
// logic, as a "yes, deploy" does. Asking the client (section 8) seals and opens it here.

/** What signs our requestStates: node:crypto, and a key made with it. */
type Signer = { crypto: typeof import("node:crypto"); key: Buffer };

/** What a requestState we wrote holds: the keys the last round asked, and the answers the rounds
 * before it were given. */
type RequestState = { asked: string[]; answers: JSONObject };

/** The state of a call's first round: nothing asked, nothing answered. */
const FIRST_ROUND: RequestState = { asked: [], answers: {} };

/** node:crypto and the key, once the first requestState has been signed (signer). */
let signing: Signer | undefined;

/** node:crypto, and the key that signs each requestState we write, made when the first one is
 * signed: importing node:crypto at start-up cost every session about 7 ms and 1.2 MiB, and most
 * never ask the user anything. The key is new each run, so a state is good only in the process
 * that wrote it, which over stdio is the session's whole life. */
async function signer(): Promise<Signer> {
  const crypto = await import("node:crypto");
  // Two rounds may import it at once: the first key made is the one kept.
  signing ??= { crypto, key: crypto.randomBytes(32) };
  return signing;
}

/** The signature of a requestState for one call, bound to its tool and arguments as JSON. */
function signature({ crypto, key }: Signer, name: string, args: JSONObject, body: string): string {
  // JSON.stringify escapes every newline, so "\n" cannot be forged inside `call`.
  const call = JSON.stringify([name, args]);
  return crypto.createHmac("sha256", key).update(`${call}\n${body}`).digest("base64url");
}

/** A requestState: the state as base64url JSON, a dot, and its signature. */
async function sealState(name: string, args: JSONObject, state: RequestState): Promise<string> {
  const body = Buffer.from(JSON.stringify(state)).toString("base64url");
  return `${body}.${signature(await signer(), name, args, body)}`;
}

/** The state in a requestState we wrote for this call, or undefined for any other value. Until
 * we have signed one, no state of ours exists. */
function openState(requestState: unknown, name: string, args: JSONObject):
  RequestState | undefined {
  if (typeof requestState !== "string" || signing === undefined) return undefined;
  const [body, tag, ...more] = requestState.split(".");
  if (body === undefined || tag === undefined || more.length > 0) return undefined;
  const expected = Buffer.from(signature(signing, name, args, body));
  const given = Buffer.from(tag);
  const same = given.length === expected.length && signing.crypto.timingSafeEqual(given, expected);
  if (!same) return undefined;
  const state: unknown = JSON.parse(Buffer.from(body, "base64url").toString());
  // We signed it, so it is what sealState wrote; these checks tell the compiler so.
  if (!isObject(state) || !Array.isArray(state.asked) || !isObject(state.answers)) return undefined;
  return { asked: state.asked.filter((key) => typeof key === "string"), answers: state.answers };
}

// ==== 10. Streamable HTTP: the same handlers over HTTP ==========================================
// The article's part 2: `--http [HOST:]PORT` serves the MCP endpoint at http://HOST:PORT/mcp in
// place of stdio (basic/transports §Streamable HTTP). Each POST carries one message, as a line of
// stdio does, to the same `respond`; its reply goes back as JSON, or as an event stream scoped to
// the request when the call sends anything first (its progress; in a legacy era, our
// elicitation/create). 2026-07-28 is stateless: every request names its version, `Mcp-Method`
// and `Mcp-Name` mirror the body, and a closed stream cancels its call. No session is minted in
// any era, so any instance can answer any request, and a requestState signed with a shared
// secret (MCP_STATE_SECRET) can come back to another. §Security: a `Host` or an `Origin` that
// names no host we know gets 403, and MCP_BEARER_TOKEN, when set, is required. Plugs in at the
// hand-over startTransport, at takeCall (section 7), and adds subscriptions/listen to METHODS.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import { once } from "node:events";
import { readFileSync } from "node:fs";

/** The largest body we take. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** The waits node:http allows, in ms: for a request's headers (a client that dribbles them is cut
 * off), and for a whole request. It checks them every connectionsCheckingInterval, 30 s by
 * default; we have it check every second. */
const TIMEOUTS = { headersTimeout: 10_000, requestTimeout: 30_000,
  connectionsCheckingInterval: 1_000 };

/** MCP's error for headers that do not say what the body says (2026-07-28 transports §Server
 * Validation). What the transport refuses before it reads a body is -32600, Invalid Request:
 * 2026-07-28 basic/index §Error Codes keeps -32000 to -32019 from new implementations. */
const HEADER_MISMATCH = -32020;

/** The hosts a `Host` header or an `Origin` may name: this machine's own names, the host we
 * listen on, and each `--allow-host`. A page that DNS rebinding sends here carries a name of its
 * own in both; each is checked on its own (GHSA-w48q-cv73-mx4w). */
const allowedHosts = new Set(["localhost", "127.0.0.1", "::1"]);

/** Whether a request carries what MCP_BEARER_TOKEN asks for; with no token set (or an empty
 * one), every one does. */
let authorized = (authorization: string | undefined): boolean => true;

if (process.argv.includes("--http")) {
  const [host, port] = httpAddress(process.argv.slice(2));
  startTransport = () => listen(host, port).catch((error: Error) => {
    log(`cannot serve HTTP on ${host}:${port}: ${error.message}`);
    process.exit(1);
  });
  METHODS.set("subscriptions/listen", listenForChanges);
  // With no sessions, an id names no one client's call: a call ends when its own stream closes.
  NOTIFICATIONS.delete("notifications/cancelled");
  questionId = (name, count) => `${name}-${count}-${crypto.randomUUID()}`;
}

/** The host and port of `--http [HOST:]PORT`, with each `--allow-host` taken; any other word
 * ends the process with the usage. */
function httpAddress(words: string[]): [string, number] {
  let [address, understood]: [RegExpExecArray | null, boolean] = [null, true];
  for (let at = 0; at < words.length; at += 2) {
    const [option, value = ""] = [words[at], words[at + 1]];
    if (option === "--http") address = /^(?:\[?([^\]]*?)\]?:)?(\d{1,5})$/.exec(value);
    else if (option === "--allow-host" && value !== "") allowedHosts.add(hostnameOf(value));
    else understood = false;
  }
  if (!understood || address === null || Number(address[2]) > 65535) {
    log("usage: server.mjs --http [HOST:]PORT [--allow-host HOST]...");
    process.exit(2);
  }
  const host = address[1] ?? "127.0.0.1";
  allowedHosts.add(host.toLowerCase());
  return [host, Number(address[2])];
}

/** Starts the HTTP server, and says where. */
async function listen(host: string, port: number): Promise<void> {
  const { createServer } = await import("node:http");
  useSecrets(await import("node:crypto"));
  const server = createServer(TIMEOUTS, (httpRequest, httpResponse) => {
    handle(httpRequest, httpResponse).catch(() => httpResponse.destroy());
  });
  await once(server.listen(port, host), "listening");
  const address = server.address();
  const bound = typeof address === "object" && address !== null ? address.port : port;
  const authority = host.includes(":") ? `[${host}]:${bound}` : `${host}:${bound}`;
  log(`Streamable HTTP server started — MCP endpoint http://${authority}/mcp`);
}

/** Takes the secrets the environment gives, and never logs them: the bearer token every request
 * must carry, compared by digest in constant time; and the secret that signs each requestState
 * (section 9), so that every instance that shares it can open the states of the others. */
function useSecrets(crypto: Signer["crypto"]): void {
  const { MCP_BEARER_TOKEN: token, MCP_STATE_SECRET: secret, MCP_STATE_SECRET_FILE: file } =
    process.env;
  const digest = (text: string) => crypto.createHash("sha256").update(text).digest();
  const bearer = digest(`Bearer ${token}`);
  if (token) authorized = (text = "") => crypto.timingSafeEqual(digest(text), bearer);
  const shared = file === undefined ? secret : readFileSync(file, "utf8").trim();
  if (shared !== undefined && shared !== "") signing = { crypto, key: Buffer.from(shared) };
}

/** Serves one HTTP request: the transport's checks first, then the body as one message. */
async function handle(httpRequest: IncomingMessage, httpResponse: ServerResponse): Promise<void> {
  const refusal = refusalOf(httpRequest);
  const body = refusal === undefined ? await readBody(httpRequest) : undefined;
  if (body !== undefined) return answerPost(httpRequest, httpResponse, body);
  const [status, message, headers] = refusal ?? [413, "Payload Too Large", { connection: "close" }];
  sendReply(httpResponse, status, response(null, failure(INVALID_REQUEST, message)), headers);
}

/** Why the transport refuses a request before its body is read: the status, the message and
 * any headers it calls for; or undefined when it may go on. */
function refusalOf(httpRequest: IncomingMessage):
  [number, string, Record<string, string>?] | undefined {
  const { host = "", origin = host, authorization } = httpRequest.headers;
  if (!allowedHosts.has(hostnameOf(host))) return [403, `Forbidden: Host ${host}`];
  if (!allowedHosts.has(hostnameOf(origin))) return [403, `Forbidden: Origin ${origin}`];
  if (httpRequest.url?.split("?")[0] !== "/mcp") return [404, "Not Found: the endpoint is /mcp"];
  if (!authorized(authorization)) return [401, "Unauthorized", { "www-authenticate": "Bearer" }];
  if (httpRequest.method !== "POST") return [405, "Method Not Allowed", { allow: "POST" }];
  return undefined;
}

/** The host a `Host` header or an origin names, in lower case, without scheme, port or brackets. */
function hostnameOf(value: string): string {
  const name = /^(?:[a-z][a-z0-9+.-]*:\/\/)?(?:\[([^\]]*)\]|([^:/]*))/i.exec(value);
  return (name?.[1] ?? name?.[2] ?? "").toLowerCase();
}

/** A request's body, read to its end, or undefined past MAX_BODY_BYTES. Only that much is held,
 * and the rest is read and dropped, so that a client still sending reads the 413. */
async function readBody(httpRequest: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  httpRequest.on("data", (chunk: Buffer) => {
    size += chunk.length;
    if (size <= MAX_BODY_BYTES) chunks.push(chunk);
  });
  await once(httpRequest, "end");
  return size > MAX_BODY_BYTES ? undefined : Buffer.concat(chunks);
}

/** Answers a POST's body as stdio answers a line: one message, or a batch, through `respond`.
 * Each call it starts sends on this response, and is cancelled if the client closes it first
 * (2026-07-28 transports §Cancellation; 2025-11-25 would have the client resume the stream,
 * but we number no events to resume from). */
function answerPost(httpRequest: IncomingMessage, httpResponse: ServerResponse, body: Buffer) {
  let value: unknown;
  try {
    value = JSON.parse(UTF8.decode(body).replace(/^\uFEFF/, ""));
  } catch {
    return sendReply(httpResponse, 400, response(null, failure(PARSE_ERROR, "Parse error")));
  }
  const problem = headerProblem(httpRequest.headers, value);
  const id = isObject(value) && isRequestId(value.id) ? value.id : null;
  if (problem !== undefined) return sendReply(httpResponse, 400, response(id, problem));
  const calls: ToolCall[] = [];
  takeCall = (call) => {
    call.send = (message) => sendEvent(httpResponse, JSON.stringify(message));
    calls.push(call);
  };
  const replied = Array.isArray(value) ? answerBatch(value) : respond(value);
  takeCall = () => {};
  httpResponse.on("close", () => {
    if (!httpResponse.writableFinished) for (const call of calls) call.cancel();
  });
  // A 2026-07-28 body with no header to say so has had its 400 from headerProblem.
  const modern = httpRequest.headers["mcp-protocol-version"] === MODERN_VERSION;
  if (!(replied instanceof Promise)) return finish(httpResponse, replied, modern);
  void replied.then((ready) => finish(httpResponse, ready, modern));
}

/** The 400 for a version we do not speak, for a batch where the version has none, for headers
 * that do not say what the body of a 2026-07-28 request says (2026-07-28 transports §Request
 * Metadata, §Server Validation), and for a body whose `_meta` is not whole, which the era would
 * refuse later with 200. */
function headerProblem(headers: IncomingHttpHeaders, value: unknown): Outcome | undefined {
  // node:http gives header names in lower case, as they are case-insensitive, and each value
  // without the spaces around it; values are case-sensitive.
  const version = headers["mcp-protocol-version"];
  const known = SUPPORTED_VERSIONS.some((supported) => supported === version);
  if (version !== undefined && !known) return unsupportedVersion(String(version));
  // Batches are 2025-03-26's, the version a POST without the header is taken for (§Protocol
  // Version Header): a batch has no one method for Mcp-Method to name.
  const batch = Array.isArray(value) && version !== undefined && version !== "2025-03-26";
  if (batch) return failure(INVALID_REQUEST, "Invalid Request: a batch is 2025-03-26's alone");
  if (!isObject(value) || value.id === undefined) return undefined;
  const params = isObject(value.params) ? value.params : {};
  const meta = isObject(params._meta) ? params._meta : {};
  if (version !== MODERN_VERSION && !isModern(meta)) return undefined;
  // The body must say it too, and what it lacks is its params' fault (2026-07-28 basic/index).
  const required = `_meta["${PROTOCOL_VERSION_KEY}"] is required`;
  if (meta[PROTOCOL_VERSION_KEY] === undefined) return invalidParams(required);
  const mirrored: [string, unknown, unknown][] = [
    ["MCP-Protocol-Version", version, meta[PROTOCOL_VERSION_KEY]],
    ["Mcp-Method", headers["mcp-method"], value.method],
  ];
  // A name not in plain ASCII comes as `=?base64?…?=` (2026-07-28 transports §Value Encoding).
  const name = headers["mcp-name"];
  const encoded = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/.exec(String(name))?.[1];
  const decoded = encoded === undefined ? name : Buffer.from(encoded, "base64").toString();
  if (value.method === "tools/call") mirrored.push(["Mcp-Name", decoded, params.name]);
  const [era, wrong] = [eraOf(meta), mirrored.find(([, header, body]) => header !== body)];
  if (wrong === undefined) return typeof era === "string" ? undefined : era;
  const [header, body] = wrong.slice(1).map((part) => JSON.stringify(part) ?? "none");
  const message = `Header mismatch: ${wrong[0]} header ${header} does not match body value ${body}`;
  return failure(HEADER_MISMATCH, message);
}

/** Sends a JSON message of a call's before its response: the response becomes an event stream,
 * with a keep-alive comment while it is quiet (2026-07-28 transports §Receiving Messages). */
function sendEvent(httpResponse: ServerResponse, json: string): void {
  if (httpResponse.writableEnded || httpResponse.destroyed) return;
  if (!httpResponse.headersSent) {
    const headers = { "cache-control": "no-cache", "x-accel-buffering": "no" };
    httpResponse.writeHead(200, { "content-type": "text/event-stream", ...headers });
    // A comment every 15 s keeps a quiet stream from being cut as idle (§Receiving Messages).
    const keepAlive = setInterval(() => httpResponse.write(": keep-alive\n\n"), 15_000);
    httpResponse.on("close", () => clearInterval(keepAlive));
  }
  httpResponse.write(`event: message\ndata: ${json}\n\n`);
}

/** Ends an exchange with its reply: the last event of a stream; else JSON, with the status its
 * error calls for; else, for a notification or a response, 202 and no body. */
function finish(httpResponse: ServerResponse, reply: Reply, modern: boolean): void {
  const streaming = httpResponse.headersSent;
  if (streaming && reply !== undefined) sendEvent(httpResponse, lineOf(reply).trimEnd());
  if (httpResponse.writableEnded || httpResponse.destroyed) return;
  if (streaming) httpResponse.end();
  else if (reply === undefined) httpResponse.writeHead(202).end();
  else sendReply(httpResponse, statusOf(reply, modern), reply);
}

/** A reply's HTTP status: 400 for a message we cannot take, 404 for a 2026-07-28 method we do
 * not serve (2026-07-28 transports §Request Metadata); 200 for every other answer. A parse error
 * and the 400s of headerProblem are answered before a reply is made. */
function statusOf(reply: Response | Response[], modern: boolean): number {
  const code = Array.isArray(reply) || !("error" in reply) ? undefined : reply.error.code;
  if (code === METHOD_NOT_FOUND && modern) return 404;
  const refused = [INVALID_REQUEST, UNSUPPORTED_PROTOCOL_VERSION, MISSING_CLIENT_CAPABILITY];
  return refused.some((refusal) => refusal === code) ? 400 : 200;
}

/** Sends a reply as JSON, with the status and headers given. */
function sendReply(httpResponse: ServerResponse, status: number, reply: Response | Response[],
  headers: Record<string, string> = {}): void {
  const json = lineOf(reply);
  const type = { "content-type": "application/json", "content-length": Buffer.byteLength(json) };
  httpResponse.writeHead(status, { ...type, ...headers }).end(json);
}

/** subscriptions/listen: acknowledges with the part of the filter we honour, none, as our tools
 * never change; then holds the stream open until the client closes it (2026-07-28
 * basic/patterns/subscriptions). The subscription's id, in `_meta`, is the request's. */
function listenForChanges({ _meta }: JSONObject, id: RequestId): Served {
  const call = new ToolCall(_meta);
  const params = { _meta: { "io.modelcontextprotocol/subscriptionId": id }, notifications: {} };
  call.send({ jsonrpc: "2.0", method: "notifications/subscriptions/acknowledged", params });
  return settle(new Promise(() => {}), id, call);
}
