/**
 * server.ts — an MCP server over stdio in one file, with no SDK and no dependencies.
 *
 * The wire (MCP basic/transports §stdio): the client starts this process, writes JSON-RPC 2.0
 * messages to its stdin one per line, and reads ours from stdout one per line. stdout carries
 * nothing but those messages; logs go to stderr.
 *
 * JSON-RPC has three kinds of message. A request has an id and a method, and always gets
 * exactly one response. A notification has a method and no id, and never gets one. A
 * response has an id and a result or an error. Errors come in two layers: protocol errors are
 * JSON-RPC error objects (bad JSON, unknown method, bad params), and a tool that fails returns a
 * result with `isError: true`.
 *
 * The sections, in order; each opens with a banner that says what it adds:
 *   1. The part you edit: the tools, and the contract their handlers keep.
 *   2. The article's session: a line of JSON in, a response out.
 *   3. I/O: lines in on stdin, replies out on stdout.
 *   ---- The stop line: above it is the article's server, whole; below, one capability each ----
 *   4. Batches.            5. The 2026-07-28 era.       6. Calls in flight.
 *   7. Elicitation.        8. The signed requestState of 2026-07-28 elicitation.
 */
import process from "node:process";

// ==== 1. The part you edit: the tools, and the contract their handlers keep =====================
// Add an entry to TOOLS: tools/list shows it and tools/call runs it (2025-11-25 server/tools).
// The types after TOOLS say what an entry holds, and what a handler is given and may return.
// Nothing below this section needs to change for a new tool.

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
    // The schema has made sure that a and b are numbers. It cannot say "finite", and JSON.parse
    // reads 1e400 as Infinity; nor can it say that the sum must fit.
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

/** A tool's answer as text; `isError` marks a tool execution error, a result the model reads
 * rather than a protocol error (2025-11-25 server/tools §Error Handling). */
function toolResult(text: string, isError: boolean): CallToolResult {
  const content: ContentBlock[] = [{ type: "text", text }];
  return isError ? { content, isError } : { content };
}

/** A tool: its definition as tools/list shows it, and the handler tools/call runs. */
type Tool = {
  name: string;
  description: string;
  /** The JSON Schema of its arguments; checkArguments reads `type` and `required`. */
  inputSchema: ObjectSchema;
  /** Returns the result, or a Promise of it. What it throws, and a value that is not a
   * CallToolResult, become a result with `isError`. A handler that declares a second parameter
   * (with no default) is handed its context there; add declares none, and is handed none. */
  handler: (args: JSONObject, context: ToolContext) => CallToolResult | Promise<CallToolResult>;
};

/** What a handler is given beside its arguments, for this one call. */
interface ToolContext {
  /** Aborts when the client cancels the call: hand it on to what you await. */
  readonly signal: AbortSignal;
  /** Reports how far the call has come, if the client asked; each value must exceed the last. */
  readonly progress: (progress: number, total?: number, message?: string) => void;
  /** Asks the user, through the client, to fill in a form, and resolves to their answer. In
   * 2026-07-28 the handler is run again from the start with the answer: work before an elicit
   * runs once a round. It rejects when the client cannot show a form. */
  readonly elicit: (message: string, requestedSchema: ObjectSchema) => Promise<ElicitResult>;
}

/** What a tool returns to the model (§Tool Result). */
type CallToolResult = {
  content: ContentBlock[];
  /** An object, as 2025-06-18 and 2025-11-25 require (2026-07-28 allows any JSON value). */
  structuredContent?: JSONObject;
  /** A failure the model reads and can act on, not a protocol error (§Error Handling). */
  isError?: boolean;
};

/** One piece of a tool's answer (§Tool Result): text, an image or a sound in base64, a link to
 * a resource, or the resource itself. */
type ContentBlock =
  | { type: "text"; text: string }
  | { type: "image" | "audio"; data: string; mimeType: string }
  | { type: "resource_link"; uri: string; name: string; mimeType?: string }
  | { type: "resource"; resource: ResourceContents };

/** A resource's contents: its text, or its bytes in base64 (2025-11-25 server/resources). */
type ResourceContents = { uri: string; mimeType?: string } & ({ text: string } | { blob: string });

/** A JSON object, as MCP params and results are. */
type JSONObject = { [key: string]: unknown };

/** A flat JSON Schema for an object: a tool's arguments, or the form an elicitation shows, whose
 * properties are strings, numbers, booleans or enums (2025-11-25 client/elicitation
 * §Requested Schema). */
type ObjectSchema = {
  type: "object";
  properties: { [name: string]: PropertySchema };
  required?: string[];
};

/** One property: its JSON type, and any other keyword (description, enum, default…). */
type PropertySchema = { type: string; description?: string; [keyword: string]: unknown };

/** The user's answer to an elicitation (client/elicitation §Response Actions): "accept" with the
 * form's content, "decline" when they said no, "cancel" when they closed it unanswered. */
type ElicitResult = { action: "accept" | "decline" | "cancel"; content?: JSONObject };

// ==== 2. The article's session: a line of JSON in, a response out ===============================
// The handshake (2025-11-25 basic/lifecycle: initialize, notifications/initialized), ping,
// tools/list and tools/call (server/tools), and JSON-RPC 2.0's errors. A method that must wait,
// and a request of a later era, are handed on by one named call to a section below the stop line.

/** A request id: a string or an integer, never null (MCP basic §Requests). */
type RequestId = string | number;

/** The error object of a failed response (JSON-RPC 2.0 §5.1). */
type ErrorObject = { code: number; message: string; data?: unknown };

/** A request: it has an id, and gets exactly one response (JSON-RPC 2.0 §4). */
type JSONRPCRequest = { jsonrpc: "2.0"; id: RequestId; method: string; params: JSONObject };

/** A notification: no id, and never a response (JSON-RPC 2.0 §4.1). */
type JSONRPCNotification = { jsonrpc: "2.0"; method: string; params: JSONObject };

/** What serving a request comes to: a result, or a protocol error in its place. */
type Outcome = { result: JSONObject } | { error: ErrorObject };

/**
 * An outcome now, or one to come. The rule, for every step from a method to `send`: a request
 * that is done at once is passed on as a value, and answered in the same write as the rest of its
 * chunk; only one that must wait (an async handler) is a Promise, which resolves to undefined
 * when the request was cancelled meanwhile, and is answered when it settles (calls in flight).
 * So the article's requests never wait for a microtask, and make no promise.
 */
type Served = Outcome | Promise<Outcome | undefined>;

/** A response: the request's id, null when it could not be read (JSON-RPC 2.0 §5). */
type JSONRPCResponse = { jsonrpc: "2.0"; id: RequestId | null } & Outcome;

/** What one line of input is answered with: a response, a batch's array of them, or none. */
type Reply = JSONRPCResponse | JSONRPCResponse[] | undefined;

/** A JSON value from the wire, classified once as the kind of message it is, or as invalid. */
type Message =
  | ({ kind: "request" } & JSONRPCRequest)
  | ({ kind: "notification" } & JSONRPCNotification)
  | { kind: "response"; response: JSONObject }
  | { kind: "invalid"; id: RequestId | null; reason: string };

/** What serve read of a request's `_meta`, once, and hands on to its method: whether it is of the
 * 2026-07-28 era, and the `_meta` itself (its progressToken, and in 2026-07-28 the client). */
type Era = { modern: boolean; meta: JSONObject };

/** The era of a request without `_meta`, as all of the article's are: one value for them all. */
const LEGACY: Era = { modern: false, meta: {} };

/** Who we are, in `initialize` results and modern results' `_meta`. */
const SERVER_INFO = { name: "json-rpc-study", version: "0.1.0" };

/** Handshake-era versions we speak, newest first (basic/lifecycle §Version Negotiation). */
const LEGACY_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] as const;

/** What we offer: tools, and nothing else. */
const CAPABILITIES = { tools: {} };

/** JSON-RPC 2.0 §5.1 error codes. */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;
const INTERNAL_ERROR = -32603;

/** Whether a value is a JSON object: not null, not an array. */
function isObject(value: unknown): value is JSONObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Whether a value can be a request id, or a progress token: a string or an integer. */
function isRequestId(value: unknown): value is RequestId {
  // Past 2^53 an integer cannot be read back exactly, so it could not be echoed as it was sent.
  return typeof value === "string" || Number.isSafeInteger(value);
}

/** What is wrong with a tool's arguments by its inputSchema, or undefined when nothing is. */
function checkArguments(schema: ObjectSchema, args: JSONObject): string | undefined {
  // Checked here: the schema is a promise the client may not keep, and "1" + 2 is "12".
  const missing = schema.required?.find((name) => !Object.hasOwn(args, name));
  if (missing !== undefined) return `"${missing}" is required`;
  for (const name in schema.properties) {
    const type = schema.properties[name]?.type ?? "";
    const value = args[name];
    // JSON Schema's types: an integer is both "integer" and "number".
    const actual = Array.isArray(value) ? "array" : value === null ? "null" : typeof value;
    const fits = type === "integer" ? Number.isInteger(value) : actual === type;
    if (!Object.hasOwn(args, name) || fits) continue;
    return `"${name}" must be ${/^[aeiou]/.test(type) ? "an" : "a"} ${type}`;
  }
  return undefined;
}

/** A protocol error in place of a result: the one place an error object is made. */
function failure(code: number, message: string, data?: unknown): { error: ErrorObject } {
  return { error: data === undefined ? { code, message } : { code, message, data } };
}

/** A response to a request, or to a message we could not read: the one place one is made. */
function response(id: RequestId | null, outcome: Outcome): JSONRPCResponse {
  return { jsonrpc: "2.0", id, ...outcome };
}

/** A -32600 error: the message is not a valid request, notification or response. */
function invalidRequest(reason: string): { error: ErrorObject } {
  return failure(INVALID_REQUEST, `Invalid Request: ${reason}`);
}

/** A -32602 error: the request's params are not what its method takes. */
function invalidParams(reason: string): { error: ErrorObject } {
  return failure(INVALID_PARAMS, `Invalid params: ${reason}`);
}

/** A bug of ours, not the client's: it is logged, the request gets -32603, and the session
 * goes on (JSON-RPC 2.0 §5.1). */
function internalError(method: string, error: unknown): { error: ErrorObject } {
  log(`${show(method)} failed: ${describeError(error)}`);
  return failure(INTERNAL_ERROR, "Internal error");
}

/** Writes one line of log to stderr, never to stdout. */
function log(text: string): void {
  process.stderr.write(`[server] ${text}\n`);
}

/** An untrusted value for the log, on one line: a number or null as it is, a string quoted with
 * every control character escaped (JSON.stringify leaves DEL, C1 and U+2028/9 raw), anything
 * else by its type. */
function show(value: unknown): string {
  if (typeof value === "number" || value === null) return String(value);
  if (typeof value !== "string") return `(${typeof value})`;
  const escape = (char: string) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`;
  return JSON.stringify(value).replace(/[\p{Cc}\u2028\u2029]/gu, escape);
}

/** What went wrong in our own code or a handler, for the log: the stack when there is one. */
function describeError(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}

/** Logs who is calling: from initialize's params, or from a modern request's `_meta`. */
function logClient(method: string, clientInfo: unknown, protocolVersion: unknown): void {
  const client = isObject(clientInfo) ? clientInfo : {};
  const who = `${show(client.name)} ${show(client.version)}`;
  log(`${method}: client=${who} protocol=${show(protocolVersion)}`);
}

/** The client's capabilities as initialize declared them: elicitation reads them, as a legacy
 * era's requests do not repeat them. */
let clientCapabilities: unknown;

/** initialize: the client's version if we speak it, else our newest (§Version Negotiation). */
function initialize(params: JSONObject): Outcome {
  logClient("initialize", params.clientInfo, params.protocolVersion);
  clientCapabilities = params.capabilities;
  const asked = LEGACY_VERSIONS.find((version) => version === params.protocolVersion);
  const protocolVersion = asked ?? LEGACY_VERSIONS[0];
  return { result: { protocolVersion, capabilities: CAPABILITIES, serverInfo: SERVER_INFO } };
}

/** tools/list: each tool's definition, without its handler. */
function listTools(): Outcome {
  return { result: { tools: TOOLS.map(({ handler, ...definition }) => definition) } };
}

/** tools/call: a call we cannot route is a protocol error; bad arguments, and whatever the
 * handler throws or returns that is no result, are tool errors the model reads (2025-11-25
 * server/tools §Error Handling). */
function callTool(params: JSONObject, id: RequestId, era: Era): Served {
  const { name, arguments: args = {} } = params;
  if (typeof name !== "string") return invalidParams('"name" must be a string');
  if (!isObject(args)) return invalidParams('"arguments" must be an object');
  const tool = TOOLS.find((candidate) => candidate.name === name);
  if (tool === undefined) return failure(INVALID_PARAMS, `Unknown tool: ${name}`);
  const problem = checkArguments(tool.inputSchema, args);
  if (problem !== undefined) return { result: toolResult(`Invalid arguments: ${problem}`, true) };
  // Handed on: a 2026-07-28 call, which may be a retry with answers (signed requestState).
  const retry = era.modern ? answersOf(params, name, args) : undefined;
  if (retry !== undefined && "error" in retry) return retry;
  // Handed on: a handler that takes a context gets a ToolCall (calls in flight); add takes none,
  // and its call makes nothing more and checks no capability.
  const alone = tool.handler.length < 2 && retry === undefined;
  const call = alone ? undefined : new ToolCall(era, retry?.answers);
  let returned: unknown;
  try {
    returned = tool.handler(args, call ?? NO_CONTEXT);
  } catch (error) {
    call?.end();
    return { result: toolError(name, error) };
  }
  // Handed on: a promise, answered when it settles (calls in flight).
  if (returned instanceof Promise) return settle(returned, id, name, args, call);
  call?.end();
  return { result: resultOf(name, returned) };
}

/** The context handed to a handler that declares no second parameter, as add: it cannot see it, so
 * its calls make no context of their own. One that reaches it anyway (through `arguments`, or a
 * second parameter with a default) finds a signal that never aborts, a progress that sends
 * nothing and an elicit that rejects. */
const NO_CONTEXT: ToolContext = {
  signal: new AbortController().signal,
  progress: () => {},
  elicit: () => Promise.reject(new Error("This handler declared no context")),
};

/** A handler's value as the result the client gets. A CallToolResult (an object with a `content`
 * array, §Tool Result; checked no deeper) goes as it is. Anything else, which plain JavaScript
 * lets a handler return, is a tool error that names it, as a thrown string would be; the log
 * says the same, in one line. */
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

/** A handler's failure as the tool error the model reads; its stack goes to our log, but an
 * abort, how a handler stops when its call is cancelled, and an unanswered elicitation (see
 * elicitation) are one line. */
function toolError(name: string, error: unknown): CallToolResult {
  const aborted = error instanceof Error && error.name === "AbortError";
  const plain = aborted || error instanceof ElicitationError;
  const said = plain ? error.message : describeError(error);
  log(`tool ${show(name)} ${aborted ? "stopped" : "failed"}: ${said}`);
  return toolResult(error instanceof Error ? error.message : String(error), true);
}

/** The JSON-RPC methods we serve, by name: the dispatch table. Each is handed the request's
 * params, its id, and its era as serve read it. */
const METHODS: { [method: string]: (params: JSONObject, id: RequestId, era: Era) => Served } = {
  initialize,
  ping: () => ({ result: {} }),
  "tools/list": listTools,
  "tools/call": callTool,
  // The 2026-07-28 era's probe, answered in any era (below the stop line).
  "server/discover": discover,
};

/** The notifications we act on, by name; none is ever answered (JSON-RPC 2.0 §4.1). */
const NOTIFICATIONS = new Map<string, (params: JSONObject) => void>([
  ["notifications/initialized", () => log("client initialized")],
  // A call in flight is stopped by its request id (below the stop line).
  ["notifications/cancelled", cancel],
]);

/** Serves a request in its era, by its method: the dispatch table is looked up with hasOwn, so
 * that `toString` is never a method, and what a method throws is a bug of ours. */
function serve({ id, method, params }: JSONRPCRequest, era: Era): Served {
  const handler = Object.hasOwn(METHODS, method) ? METHODS[method] : undefined;
  if (handler === undefined) return failure(METHOD_NOT_FOUND, `Method not found: ${method}`);
  try {
    return handler(params, id, era);
  } catch (error) {
    return internalError(method, error);
  }
}

/** Classifies one JSON value as a request, a notification, a response, or invalid and why. */
function classify(value: unknown): Message {
  if (!isObject(value)) return { kind: "invalid", id: null, reason: "not a JSON object" };
  // A response, well-formed or not, is never answered: its id numbers a request of ours.
  const answers = Object.hasOwn(value, "result") || Object.hasOwn(value, "error");
  if (answers && !Object.hasOwn(value, "method")) return { kind: "response", response: value };
  // An invalid message's error names its id when one can be read, else null (JSON-RPC 2.0 §5;
  // MCP's schema would leave the id out, but JSON-RPC and the article's transcript say null).
  const id = isRequestId(value.id) ? value.id : null;
  const invalid = (reason: string): Message => ({ kind: "invalid", id, reason });
  const { jsonrpc, method, params = {} } = value;
  if (jsonrpc !== "2.0") return invalid('"jsonrpc" must be "2.0"');
  if (typeof method !== "string") return invalid('"method" must be a string');
  // JSON-RPC allows params by position; no MCP method takes them, so they read as none.
  const named = isObject(params) ? params : {};
  const structured = isObject(params) || Array.isArray(params);
  if (!structured) return invalid('"params" must be an object or an array');
  if (!Object.hasOwn(value, "id")) return { kind: "notification", jsonrpc, method, params: named };
  if (id === null) return invalid('"id" must be a string or an integer');
  return { kind: "request", jsonrpc, id, method, params: named };
}

/** Acts on one JSON value as its kind asks: the response it gets now or later, or none. */
function respond(value: unknown): Reply | Promise<Reply> {
  const message = classify(value);
  if (message.kind === "invalid") return response(message.id, invalidRequest(message.reason));
  if (message.kind === "notification") NOTIFICATIONS.get(message.method)?.(message.params);
  // Handed on: a response from the client answers a request of ours (elicitation).
  if (message.kind === "response") receive(message.response);
  // A notification is never answered, known or not (JSON-RPC 2.0 §4.1); nor is a response.
  if (message.kind !== "request") return undefined;
  // A request with no `_meta`, as all of the article's, is of a legacy era. Handed on: one with
  // `_meta` may name another (the 2026-07-28 era).
  const served = message.params._meta === undefined ? serve(message, LEGACY) : serveInEra(message);
  // Handed on: an outcome still to come (calls in flight).
  if (served instanceof Promise) return later(message, served);
  return response(message.id, served);
}

// ==== 3. I/O: lines in on stdin, replies out on stdout, logs on stderr ==========================
// Where the article has node:readline and a write per message, this reads bytes, as strictly as
// the wire asks (stdio §Messages: UTF-8, one message a line), and answers a chunk in one write.
// Strict input (the byte splitter, the line cap, fatal UTF-8) is here, above the stop line,
// because every line passes through it, the article's too: it is what stands in for readline.

/** One line of input as the splitter hands it over: its text, or the error that answers it when
 * it was too long to hold or is not UTF-8. */
type Line = string | { error: ErrorObject };

/** The longest line we hold, in bytes: far beyond any real message, far below V8's longest
 * string (about 512 Mi characters). */
const MAX_LINE_BYTES = 64 * 1024 * 1024;

/** Whether a line holds only JSON's four whitespace characters (RFC 8259 §2), which String's
 * trim() would widen to U+00A0, U+2028 and more. */
const BLANK_LINE = /^[ \t\n\r]*$/;

/** A line that is a lone "{" or "[": the first piece of a pretty-printed message. */
const OPENING_PIECE = /^[ \t\r]*[{[][ \t\r]*$/;

/** Reads a line's bytes as the UTF-8 that JSON text must be (RFC 8259 §8.1): `fatal` makes
 * bytes that are not UTF-8 an error rather than U+FFFD, and a BOM that starts the line, which
 * PowerShell puts before what it pipes, is skipped, as §8.1 allows. */
const UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Cuts stdin's bytes into lines at each "\n", in the shape of Deno std's TextLineStream:
 * `transform` takes a chunk and returns the lines it completes, `flush` returns a last line that
 * ended without one. Why not node:readline: it holds a line of any length, so one client line
 * could fill our memory; it decodes as it reads, so bytes that are not UTF-8 would reach us as
 * U+FFFD; and it hands lines over one at a time, where we answer all of a chunk's lines in one
 * write. The cap is on one line while we wait for its "\n": past MAX_LINE_BYTES no more of it is
 * held, and when it ends it is answered with one error.
 */
class LineSplitter {
  /** The line whose "\n" has not come yet, as the pieces it came in. */
  #pieces: Buffer[] = [];
  /** Its length so far, in bytes, including any that were not held. */
  #size = 0;

  /** Returns the lines a chunk completes, without their "\n". */
  transform(chunk: Buffer): Line[] {
    const lines: Line[] = [];
    let start = 0;
    for (let end = chunk.indexOf(0x0a); end !== -1; end = chunk.indexOf(0x0a, start)) {
      this.#hold(chunk.subarray(start, end));
      lines.push(this.#take());
      start = end + 1;
    }
    this.#hold(chunk.subarray(start));
    return lines;
  }

  /** Returns the last line, if the input ended after it without a "\n". */
  flush(): Line[] {
    return this.#size === 0 ? [] : [this.#take()];
  }

  /** Adds a piece to the line, holding its bytes only while the line is within the cap. */
  #hold(piece: Buffer): void {
    this.#size += piece.length;
    if (this.#size <= MAX_LINE_BYTES) this.#pieces.push(piece);
  }

  /** Ends the line and hands it over, as text when it is within the cap and UTF-8. */
  #take(): Line {
    const size = this.#size;
    const bytes = Buffer.concat(this.#pieces);
    this.#pieces = [];
    this.#size = 0;
    if (size > MAX_LINE_BYTES) return invalidRequest(`line too long (${size} bytes)`);
    try {
      return UTF8.decode(bytes);
    } catch {
      return failure(PARSE_ERROR, "Parse error");
    }
  }
}

const splitter = new LineSplitter();

/** Answers one line of input, now, or later when a tool call in it is still running. */
function answer(line: Line): Reply | Promise<Reply> {
  if (typeof line !== "string") return response(null, line);
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    // Rare, so tested only here: a blank line is no JSON, and no message.
    if (BLANK_LINE.test(line)) return undefined;
    if (OPENING_PIECE.test(line)) log("each message must be on one line, not pretty-printed");
    return response(null, failure(PARSE_ERROR, "Parse error"));
  }
  // Handed on: an array is a batch (batches).
  return Array.isArray(value) ? answerBatch(value) : respond(value);
}

/** Writes messages to stdout, one a line, in one write; while the client is not reading them,
 * stops reading its requests (backpressure). */
function write(messages: readonly object[]): void {
  const text = messages.map((message) => `${JSON.stringify(message)}\n`).join("");
  const flowing = process.stdout.write(text);
  if (!flowing && !process.stdin.isPaused()) {
    process.stdin.pause();
    process.stdout.once("drain", () => process.stdin.resume());
  }
}

/** Answers a chunk's lines: the replies that are ready go out in one write, the rest later. */
function send(lines: Line[]): void {
  const ready: (JSONRPCResponse | JSONRPCResponse[])[] = [];
  for (const line of lines) {
    const reply = answer(line);
    // Handed on: a reply still to come (calls in flight).
    if (reply instanceof Promise) writeLater(reply);
    else if (reply !== undefined) ready.push(reply);
  }
  if (ready.length > 0) write(ready);
}

process.stdin.on("data", (chunk: Buffer) => send(splitter.transform(chunk)));
// The end of stdin is the client's goodbye (stdio §Shutdown): answer a last unterminated line
// and every call still running, then exit once stdout is written, even while a stderr nobody
// reads still holds logs back. SIGINT and SIGTERM keep their default: exit at once.
process.stdin.on("end", async () => {
  send(splitter.flush());
  // Handed on, when there are any: our questions and the calls still running (elicitation,
  // calls in flight).
  if (awaiting.size > 0) unanswerable();
  if (pending.size > 0) await Promise.all(pending);
  process.stdout.write("", () => process.exit(0));
});
// A client that closes our stdout (EPIPE) has gone away: no one is left to answer. Logs are
// best effort.
process.stdout.on("error", () => process.exit(0));
process.stderr.on("error", () => {});
// A promise that a handler never awaited, such as an elicit whose answer it did not wait for,
// may fail with no one to catch it: that is the tool's bug, logged, not the end of the session.
process.on("unhandledRejection", (error) => log(`unhandled rejection: ${describeError(error)}`));

log("stdio server started — waiting for JSON-RPC messages on stdin");

// ================================================================================================
// THE STOP LINE. The article's server ends here: above is a whole, working server, and the
// article's session (initialize, tools/list, tools/call add, ping, its errors) runs nothing
// below. Each section below adds one capability, and is reached from above by one named call.
// ================================================================================================

// ==== 4. Batches: several messages in one line, as a JSON array (JSON-RPC 2.0 §6) ==============
// 2025-03-26 requires a server to receive them, later revisions dropped them; we accept them in
// any era. The answer is one array, once every entry is done. First below the stop line, as the
// smallest addition and the nearest to the line handler: only a line that holds an array comes
// here, by one call from `answer`, and each entry is then served as a line of its own would be.

/** Answers a batch: each entry as a line of its own would be, in order, in one array. */
function answerBatch(batch: unknown[]): Reply | Promise<Reply> {
  if (batch.length === 0) return response(null, invalidRequest("empty batch"));
  const replies = batch.map(respond);
  const ready = (reply: Reply | Promise<Reply>): reply is Reply => !(reply instanceof Promise);
  return replies.every(ready) ? batchOf(replies) : Promise.all(replies).then(batchOf);
}

/** A batch's responses as one array, or none when every entry was a notification. */
function batchOf(replies: Reply[]): Reply {
  const responses = replies.filter((reply) => reply !== undefined).flat();
  return responses.length === 0 ? undefined : responses;
}

// ==== 5. The 2026-07-28 era: requests that carry their version ==================================
// A legacy client (2024-11-05 to 2025-11-25) opens with `initialize`, and later requests carry
// no version. A modern one (2026-07-28 basic/versioning) never sends initialize: every request
// names its version and the client's capabilities in `params._meta` (basic/index §_meta), and
// every result says `resultType` and who we are. 2026-07-28 removed initialize and ping.

/** The stateless revision, whose requests carry their version (2026-07-28 basic/versioning). */
const MODERN_VERSION = "2026-07-28";

/** Every version we speak, as server/discover and error -32022 list them. */
const SUPPORTED_VERSIONS = [MODERN_VERSION, ...LEGACY_VERSIONS];

/** The methods of the 2026-07-28 era; a legacy era has every method of METHODS. */
const MODERN_METHODS = ["server/discover", "tools/list", "tools/call"];

/** Reserved `_meta` keys of a modern request (2026-07-28 basic/index §_meta). */
const PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion";
const CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo";
const CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities";
/** The reserved `_meta` key of a modern result that names the server. */
const SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo";

/** What every modern result carries (2026-07-28 basic/index §ResultType and §_meta). */
const MODERN_FIELDS = { resultType: "complete", _meta: { [SERVER_INFO_KEY]: SERVER_INFO } };

/** Caching hints (2026-07-28 server/utilities/caching): our tools never change, hold no secret. */
const CACHE_HINTS = { ttlMs: 3_600_000, cacheScope: "public" };

/** MCP's error for a version we do not speak (2026-07-28 basic/index §Error Codes). */
const UNSUPPORTED_PROTOCOL_VERSION = -32022;

/** Serves a request that has `_meta`: in its era, which decides the methods there are and what
 * each result carries; or with the protocol error that stops it. */
function serveInEra(request: JSONRPCRequest): Served {
  const { method, params } = request;
  const era = eraOf(isObject(params._meta) ? params._meta : {});
  if (!("modern" in era)) return era;
  if (!era.modern) return serve(request, era);
  // 2026-07-28 removed initialize and ping (changelog items 2, 5).
  const removed = !MODERN_METHODS.includes(method);
  if (removed) return failure(METHOD_NOT_FOUND, `Method not found: ${method}`);
  const served = serve(request, era);
  if (!(served instanceof Promise)) return inEra(method, served);
  // A call still running gets the era's fields when it is done, unless it was cancelled.
  return served.then((done) => (done === undefined ? undefined : inEra(method, done)));
}

/**
 * The era of a request, or the protocol error that stops it. A request that names no version,
 * or a legacy one, is legacy, as if agreed at initialize (we keep no state to check); a modern
 * one is checked on its own, with no handshake (2026-07-28 basic/versioning, basic/index §_meta).
 */
function eraOf(meta: JSONObject): Era | { error: ErrorObject } {
  const version = meta[PROTOCOL_VERSION_KEY];
  const legacy = version === undefined || LEGACY_VERSIONS.some((known) => known === version);
  if (legacy) return { modern: false, meta };
  const named = `_meta["${PROTOCOL_VERSION_KEY}"]`;
  if (typeof version !== "string") return invalidParams(`${named} must be a string`);
  if (version !== MODERN_VERSION) {
    const data = { supported: SUPPORTED_VERSIONS, requested: version };
    return failure(UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version", data);
  }
  const required = `_meta["${CLIENT_CAPABILITIES_KEY}"] is required`;
  if (!isObject(meta[CLIENT_CAPABILITIES_KEY])) return invalidParams(required);
  return { modern: true, meta };
}

/** A modern outcome as the era sends it: a result gets the era's fields, and tools/list's cache
 * hints; an input_required result says so itself (2026-07-28 basic/patterns/mrtr). */
function inEra(method: string, outcome: Outcome): Outcome {
  if ("error" in outcome) return outcome;
  const hints = method === "tools/list" ? CACHE_HINTS : {};
  const result: JSONObject = { ...outcome.result, ...hints, ...MODERN_FIELDS };
  if (outcome.result.resultType === "input_required") result.resultType = "input_required";
  return { result };
}

/**
 * server/discover: what we speak and offer. A modern client sends it first and never sends
 * initialize, so we log who it is here. It is answered the same in either era, so that any
 * client can probe it (2026-07-28 basic/transports/stdio §Backward Compatibility). It needs only
 * the `_meta` that serve read.
 */
function discover(_params: JSONObject, _id: RequestId, { meta }: Era): Outcome {
  logClient("server/discover", meta[CLIENT_INFO_KEY], meta[PROTOCOL_VERSION_KEY]);
  const offer = { supportedVersions: SUPPORTED_VERSIONS, capabilities: CAPABILITIES };
  return { result: { ...offer, ...CACHE_HINTS, ...MODERN_FIELDS } };
}

// ==== 6. Calls in flight: async handlers, cancellation, progress ================================
// A handler that returns a Promise leaves its call in flight: other requests are served
// meanwhile, the client may cancel it (2025-11-25 basic/utilities/cancellation) and it may report
// progress (basic/utilities/progress). Each such call, and each handler that takes a context,
// gets a ToolCall: the context it is handed, and what it takes to stop it.

/** The tool calls whose handlers are still running, by request id: notifications/cancelled
 * names the one to stop. A call that ended at once is never here. */
const inFlight = new Map<RequestId, ToolCall>();

/** Replies still being worked on, so that the end of input can wait for them. */
const pending = new Set<Promise<void>>();

/**
 * One tools/call: the context its handler is given, and what it takes to stop it. Each part is
 * made when first used: the AbortController only when someone reads `signal`, as one per call
 * made a burst of calls 1.65 times slower; the client's capabilities are read only at `elicit`.
 */
class ToolCall implements ToolContext {
  readonly era: Era;
  /** 2026-07-28: this round's elicitation (elicitation, below); undefined in a legacy era. */
  readonly round: Round | undefined;
  /** The client's token for this call's progress, until the call ends: then there is none. */
  #progressToken: RequestId | undefined;
  #lastProgress = -Infinity;
  #controller: AbortController | undefined;

  constructor(era: Era, answers?: JSONObject) {
    this.era = era;
    this.round = answers === undefined ? undefined : { answers, asked: 0, unanswered: {} };
    this.#progressToken = isRequestId(era.meta.progressToken) ? era.meta.progressToken : undefined;
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
    write([{ jsonrpc: "2.0", method: "notifications/progress", params }]);
  };

  /** A function of its own, as progress is; elicitation (below) asks. */
  readonly elicit: ToolContext["elicit"] = (message, form) => elicit(this, message, form);

  /** Ends the call: its response is on its way, and progress stops. */
  end(): void {
    this.#progressToken = undefined;
  }

  /** Stops the call: its signal aborts. At the client's word it gets no response; at the end of
   * a round that asked for input, settle answers input_required. */
  cancel(): void {
    this.end();
    this.#controller ??= new AbortController();
    this.#controller.abort();
  }
}

/** Waits for a handler's promise, or for a cancellation, whichever comes first. What the promise
 * resolves to is a result, or a tool error (resultOf): never undefined, which means cancelled. */
async function settle(returned: Promise<unknown>, id: RequestId, name: string,
  args: JSONObject, call = new ToolCall(LEGACY)): Promise<Outcome | undefined> {
  inFlight.set(id, call);
  const cancelled = new Promise<undefined>((resolve) => {
    call.signal.addEventListener("abort", () => resolve(undefined));
  });
  const failed = (error: unknown) => toolError(name, error);
  const done = returned.then((value) => resultOf(name, value), failed);
  const result = await Promise.race([done, cancelled]);
  call.end();
  // A client that reused the id of a call in flight (basic §Requests: it MUST NOT) has its
  // new call there now: that one stays cancellable.
  if (inFlight.get(id) === call) inFlight.delete(id);
  if (result !== undefined) return { result };
  // Stopped: by the client (no response), or at the end of a round that asked for input.
  return call.round === undefined ? undefined : inputRequired(name, args, call.round);
}

/** The reply to a request whose outcome is still to come: none when it was cancelled; a bug of
 * ours on the way is -32603 (JSON-RPC 2.0 §5.1). */
function later({ id, method }: JSONRPCRequest, served: Promise<Outcome | undefined>):
  Promise<Reply> {
  const failed = (error: unknown) => internalError(method, error);
  return served.catch(failed).then((done) => (done === undefined ? undefined : response(id, done)));
}

/** Writes a reply when it is ready, and keeps it in `pending` until then. */
function writeLater(reply: Promise<Reply>): void {
  const written = reply.then((ready) => {
    if (ready !== undefined) write([ready]);
    pending.delete(written);
  });
  pending.add(written);
}

/** notifications/cancelled: stops the call it names. An unknown, finished or malformed one is
 * ignored, and the reason is logged either way (basic/utilities/cancellation). */
function cancel(params: JSONObject): void {
  const { requestId, reason } = params;
  const call = isRequestId(requestId) ? inFlight.get(requestId) : undefined;
  const what = call === undefined ? "ignored a cancellation of" : "cancelled";
  log(`${what} request ${show(requestId)}: ${show(reason)}`);
  call?.cancel();
}

// ==== 7. Elicitation: a tool asks the user, through the client ==================================
// A handler's `elicit` asks for a form (2025-11-25 client/elicitation). In a legacy era we send
// the client a request of our own, elicitation/create, and pair its response by the id we gave
// it (JSON-RPC 2.0 §5). In 2026-07-28 we never send a request: the call's result is
// input_required, and the client retries the call with the answers (basic/patterns/mrtr).

/** What elicit says when the client cannot show a form. */
const CANNOT_ELICIT = "This client cannot ask the user: it did not declare elicitation (form)";

/** The three answers an ElicitResult can give. */
const ELICIT_ACTIONS = ["accept", "decline", "cancel"];

/** How a promise of ours is rejected. */
type Rejection = (reason: Error) => void;

/** Our own requests that wait for the client's response, by the id we gave them: receive pairs
 * a response to its request by that id (JSON-RPC 2.0 §5). */
const awaiting = new Map<RequestId, { resolve: (result: unknown) => void; reject: Rejection }>();

/** How many requests of our own we have sent: each gets the next number in its id. */
let requestsSent = 0;

/** 2026-07-28 elicitation's state of one round (basic/patterns/mrtr): the answers the round was
 * given by key, how many elicits the handler has made, and those it was given no answer to. */
type Round = { answers: JSONObject; asked: number; unanswered: JSONObject };

/** An elicitation that the client could not or would not answer: no bug of ours, so the log
 * gets its message in one line rather than a stack. */
class ElicitationError extends Error {
  name = "ElicitationError";
}

/** A ToolCall's elicit: asks for a form only (URL mode is out of scope), and checks the answer. */
function elicit(call: ToolCall, message: string, form: ObjectSchema): Promise<ElicitResult> {
  const { modern, meta } = call.era;
  const capabilities = modern ? meta[CLIENT_CAPABILITIES_KEY] : clientCapabilities;
  if (!canElicit(capabilities)) return Promise.reject(new ElicitationError(CANNOT_ELICIT));
  // No `mode`: leaving it out means a form in 2025-11-25 and later, and 2025-06-18 has none.
  const request = { method: "elicitation/create", params: { message, requestedSchema: form } };
  const asked = call.round === undefined ? ask(call, request) : lookUp(call, call.round, request);
  return asked.then((value) => checkedAnswer(value, form));
}

/** Whether a client can show a form: it declared `elicitation`, and an empty one means form
 * mode (2025-11-25 client/elicitation §Capabilities). */
function canElicit(capabilities: unknown): boolean {
  if (!isObject(capabilities) || !isObject(capabilities.elicitation)) return false;
  const { form, url } = capabilities.elicitation;
  return form !== undefined || url === undefined;
}

/** Legacy eras: sends the request to the client now, and resolves with the result of its
 * response (receive). Cancelling the call cancels the request too. */
function ask(call: ToolCall, request: { method: string; params: JSONObject }): Promise<unknown> {
  const signal = call.signal;
  // A call cancelled already asks nothing more.
  if (signal.aborted) return Promise.reject(signal.reason);
  requestsSent += 1;
  const id = `elicitation-${requestsSent}`;
  write([{ jsonrpc: "2.0", id, ...request }]);
  return new Promise((resolve, reject: Rejection) => {
    awaiting.set(id, { resolve, reject });
    signal.addEventListener("abort", () => {
      if (!awaiting.has(id)) return;
      awaiting.delete(id);
      reject(signal.reason);
      const params = { requestId: id, reason: "The tool call was cancelled" };
      write([{ jsonrpc: "2.0", method: "notifications/cancelled", params }]);
    });
  });
}

/**
 * 2026-07-28: the answer this round carries for the request, keyed by its place in the order the
 * handler asks. With none, the round ends once the handler has had its turn, and settle answers
 * the call with every request still unanswered. "Its turn" is until setImmediate: every promise
 * settled meanwhile has run its callbacks. So with no answers yet,
 *   `await Promise.all([elicit(a), elicit(b)])` asks both in one round: the retry answers both;
 *   `await elicit(a); await elicit(b);` asks a, and b only once the retry has answered a, as
 *   the second elicit runs only after the first has resolved: two retries, a then b.
 */
function lookUp(call: ToolCall, round: Round, request: JSONObject): Promise<unknown> {
  round.asked += 1;
  const key = `elicitation-${round.asked}`;
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
  const known = ELICIT_ACTIONS.some((action) => action === value.action);
  return known && (value.content === undefined || isObject(value.content));
}

/** The client's answer, checked: an ElicitResult, and content that fits the form when it was
 * accepted. What fails the check rejects the handler's elicit with a message it can pass on. */
function checkedAnswer(value: unknown, form: ObjectSchema): ElicitResult {
  if (!isElicitResult(value)) throw new ElicitationError("The answer is not an ElicitResult");
  const problem = value.action === "accept" ? checkArguments(form, value.content ?? {}) : undefined;
  if (problem !== undefined) throw new ElicitationError(`The answer does not fit: ${problem}`);
  return value;
}

/** A response to a request of ours: it settles what waits for it, and one nothing waits for (an
 * unknown id, or one answered or cancelled already) is logged and dropped. */
function receive(response: JSONObject): void {
  const { id, result, error } = response;
  const waiting = isRequestId(id) ? awaiting.get(id) : undefined;
  if (!isRequestId(id) || waiting === undefined) {
    log(`ignored a response to ${show(id)}: no request of ours waits for it`);
    return;
  }
  awaiting.delete(id);
  const said = isObject(error) ? error.message : error;
  if (error === undefined) waiting.resolve(result);
  else waiting.reject(new ElicitationError(`The client answered with an error: ${show(said)}`));
}

/** At the end of input our requests can no longer be answered: each tool that waits is told. */
function unanswerable(): void {
  const gone = new ElicitationError("The client closed its input before it answered");
  for (const waiting of awaiting.values()) waiting.reject(gone);
  awaiting.clear();
}

// ==== 8. The signed requestState of 2026-07-28 elicitation ======================================
// An input_required result carries a requestState that the client hands back with its retry
// (basic/patterns/mrtr). It holds the answers so far; we sign it, since §Server Requirements
// make it attacker-controlled input whose integrity MUST be protected when it drives business
// logic, as a "yes, deploy" does.

/** What signs our requestStates: node:crypto, and a key made with it. */
type Signer = { crypto: typeof import("node:crypto"); key: Buffer };

/** What a requestState we wrote holds: the keys the last round asked, and the answers the rounds
 * before it were given. */
type RequestState = { asked: string[]; answers: JSONObject };

/** The state of a call's first round: nothing asked, nothing answered. */
const FIRST_ROUND: RequestState = { asked: [], answers: {} };

/** node:crypto and the key, once the first requestState has been signed (signer). */
let signing: Signer | undefined;

/** A retried call's answers (2026-07-28 basic/patterns/mrtr §Error Handling): those the
 * requestState we signed carries, and the client's inputResponses to the keys we asked; or the
 * protocol error that stops the call. A key we never asked is ignored, as the spec says. */
function answersOf(params: JSONObject, name: string, args: JSONObject):
  { answers: JSONObject } | { error: ErrorObject } {
  const { requestState, inputResponses = {} } = params;
  if (!isObject(inputResponses)) return invalidParams('"inputResponses" must be an object');
  const state = requestState === undefined ? FIRST_ROUND : openState(requestState, name, args);
  if (state === undefined) return invalidParams('"requestState" is not one we wrote for this call');
  const answers = { ...state.answers };
  for (const [key, given] of Object.entries(inputResponses)) {
    const named = `inputResponses[${show(key)}]`;
    if (!state.asked.includes(key)) log(`ignored ${named}: it answers nothing we asked`);
    else if (!isElicitResult(given)) return invalidParams(`${named} is not an ElicitResult`);
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
