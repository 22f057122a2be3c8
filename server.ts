/**
 * server.ts — an MCP server over stdio in one file, with no SDK and no dependencies.
 *
 * The wire (MCP basic/transports §stdio): the client starts this process, writes JSON-RPC 2.0
 * messages to its stdin one per line, and reads ours from stdout one per line. stdout carries
 * nothing but those messages; logs go to stderr.
 *
 * JSON-RPC has three kinds of message. A request has an id and a method, and always gets
 * exactly one response. A notification has a method and no id, and never gets one. A
 * response has an id and a result or an error; we send no requests, so any response we
 * receive is ignored. Errors come in two layers: protocol errors are JSON-RPC error objects
 * (bad JSON, unknown method, bad params), and a tool that fails returns an ordinary result
 * with `isError: true`, which the model can read.
 *
 * Two protocol eras share one dispatch table:
 * - legacy (2024-11-05 to 2025-11-25): the client opens with `initialize`, we answer with the
 *   version we will speak, and later requests carry no version;
 * - modern (2026-07-28): no handshake; every request names its version in `params._meta`,
 *   and every result says `resultType: "complete"` and who we are.
 *
 * The file reads top to bottom: types, constants, the tools, then how one message is
 * classified and answered, then how stdin is cut into lines, and the I/O at the very end.
 * To add a tool, add an entry to TOOLS: tools/list and tools/call both read it.
 */
import process from "node:process";

/** A request id: a string or an integer, never null (MCP basic §Requests). */
type RequestId = string | number;

/** A JSON object, as MCP params and results are. */
type JSONObject = { [key: string]: unknown };

/** The error object of a failed response (JSON-RPC 2.0 §5.1). */
type ErrorObject = { code: number; message: string; data?: unknown };

/** A request: it has an id, and gets exactly one response (JSON-RPC 2.0 §4). */
type JSONRPCRequest = { jsonrpc: "2.0"; id: RequestId; method: string; params: JSONObject };

/** A notification: no id, and never a response (JSON-RPC 2.0 §4.1). */
type JSONRPCNotification = { jsonrpc: "2.0"; method: string; params: JSONObject };

/** What serving a request comes to: a result, or a protocol error in its place. */
type Outcome = { result: JSONObject } | { error: ErrorObject };

/** A response: the request's id, null when it could not be read (JSON-RPC 2.0 §5). */
type JSONRPCResponse = { jsonrpc: "2.0"; id: RequestId | null } & Outcome;

/** A JSON value from the wire, classified once as the kind of message it is. */
type Message =
  | { kind: "request"; request: JSONRPCRequest }
  | { kind: "notification"; notification: JSONRPCNotification }
  | { kind: "response" }
  | { kind: "invalid"; id: RequestId | null; reason: string };

/** Which protocol era a request belongs to. */
type Era = "legacy" | "modern";

/** What a tool returns to the model (2025-11-25 server/tools §Tool Result). */
type CallToolResult = { content: { type: "text"; text: string }[]; isError?: boolean };

/** The JSON Schema subset our checker reads: each argument's type, and which are required. */
type InputSchema = {
  type: "object";
  properties: { [name: string]: { type: string; description?: string } };
  required?: string[];
};

/** A tool: what tools/list shows of it, and the handler tools/call runs with its arguments. */
type Tool = {
  name: string;
  description: string;
  inputSchema: InputSchema;
  handler: (args: JSONObject) => CallToolResult;
};

/** Who we are, in `initialize` results and modern results' `_meta`. */
const SERVER_INFO = { name: "json-rpc-study", version: "0.1.0" };

/** Handshake-era versions we speak, newest first (basic/lifecycle §Version Negotiation). */
const LEGACY_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] as const;

/** The stateless revision, whose requests carry their version (2026-07-28 basic/versioning). */
const MODERN_VERSION = "2026-07-28";

/** Every version we speak, as server/discover and error -32022 list them. */
const SUPPORTED_VERSIONS = [MODERN_VERSION, ...LEGACY_VERSIONS];

/** Reserved `_meta` keys of a modern request (2026-07-28 basic/index §_meta). */
const PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion";
const CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo";
const CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities";

/** What we offer: tools, and nothing else. */
const CAPABILITIES = { tools: {} };

/** What every modern result carries (2026-07-28 basic/index §ResultType and §_meta). */
const MODERN_FIELDS = {
  resultType: "complete",
  _meta: { "io.modelcontextprotocol/serverInfo": SERVER_INFO },
};

/** Caching hints (2026-07-28 server/utilities/caching): our tools never change, hold no secret. */
const CACHE_HINTS = { ttlMs: 3_600_000, cacheScope: "public" };

/**
 * The eras as data: the methods each serves, the methods whose results may be cached, and the
 * fields it adds to every result. 2026-07-28 removed initialize and ping (changelog items 2, 5).
 */
const ERAS = {
  legacy: {
    methods: new Set(["initialize", "ping", "server/discover", "tools/list", "tools/call"]),
    cached: new Set<string>(),
    resultFields: {},
  },
  modern: {
    methods: new Set(["server/discover", "tools/list", "tools/call"]),
    cached: new Set(["tools/list"]),
    resultFields: MODERN_FIELDS,
  },
};

/** JSON-RPC 2.0 §5.1 error codes, and MCP's (2026-07-28 basic/index §Error Codes). */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;
const UNSUPPORTED_PROTOCOL_VERSION = -32022;

/** The longest line we hold, in bytes: far beyond any real message, far below V8's longest
 * string (about 512 Mi characters). */
const MAX_LINE_BYTES = 64 * 1024 * 1024;

/** JSON's whitespace: only these make a line blank (RFC 8259 §2), unlike String.trim(). */
const BLANK_LINE = /^[ \t\n\r]*$/;

/** The start of a JSON text cut short at a line break, as a pretty-printed message arrives. */
const CUT_AT_LINE_BREAK = /^[ \t\r]*[[{].*[[{,][ \t\r]*$/;

/** Whether a value is a JSON object: not null, not an array. */
function isObject(value: unknown): value is JSONObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Whether a value is a number that is neither infinite nor NaN. */
function isFiniteNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

/** A tool's answer, as text. */
function toolResult(text: string): CallToolResult {
  return { content: [{ type: "text", text }] };
}

/** A tool execution error: a result the model reads (2025-11-25 server/tools §Error Handling). */
function toolError(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}

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
    // The schema has made sure a and b are numbers; it cannot say "finite", and 1e400 is
    // Infinity by the time JSON.parse is done with it.
    handler: ({ a, b }) => {
      if (!isFiniteNumber(a)) return toolError('Invalid arguments: "a" must be a finite number');
      if (!isFiniteNumber(b)) return toolError('Invalid arguments: "b" must be a finite number');
      const sum = a + b;
      if (!isFiniteNumber(sum)) return toolError(`Invalid arguments: ${a} + ${b} is out of range`);
      return toolResult(`${a} + ${b} = ${sum}`);
    },
  },
];

/** Whether a value has a JSON Schema type; a type this checker does not know is let through. */
function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case "number": return typeof value === "number";
    case "integer": return Number.isInteger(value);
    case "string": return typeof value === "string";
    case "boolean": return typeof value === "boolean";
    case "object": return isObject(value);
    case "array": return Array.isArray(value);
    default: return true;
  }
}

/** What is wrong with a tool's arguments by its inputSchema, or undefined when nothing is. */
function checkArguments(schema: InputSchema, args: JSONObject): string | undefined {
  // Checked at run time: the schema is a promise the client may not keep, and "1" + 2 is "12".
  for (const name of schema.required ?? []) {
    if (!Object.hasOwn(args, name)) return `"${name}" is required`;
  }
  for (const [name, { type }] of Object.entries(schema.properties)) {
    const article = type === "integer" || type === "object" || type === "array" ? "an" : "a";
    if (Object.hasOwn(args, name) && !hasType(args[name], type)) {
      return `"${name}" must be ${article} ${type}`;
    }
  }
  return undefined;
}

/** A protocol error, as the outcome of a request (JSON-RPC 2.0 §5.1). */
function failure(code: number, message: string, data?: unknown): { error: ErrorObject } {
  const error: ErrorObject = data === undefined ? { code, message } : { code, message, data };
  return { error };
}

/** A response: the only place one is built. */
function response(id: RequestId | null, outcome: Outcome): JSONRPCResponse {
  return { jsonrpc: "2.0", id, ...outcome };
}

/** Writes one line of log to stderr, never to stdout. */
function log(text: string): void {
  process.stderr.write(`[server] ${text}\n`);
}

/** An untrusted value for the log, on one line: strings quoted with every control character
 * escaped, anything else by its type. */
function show(value: unknown): string {
  if (typeof value !== "string") return `(${typeof value})`;
  // JSON.stringify escapes C0 controls; DEL, C1 controls and U+2028/9 would pass raw.
  const escape = (char: string) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`;
  return JSON.stringify(value).replace(/[\p{Cc}\u2028\u2029]/gu, escape);
}

/** initialize: the client's version if we speak it, else our newest (§Version Negotiation). */
function initialize(params: JSONObject): Outcome {
  const client = isObject(params.clientInfo) ? params.clientInfo : {};
  const asked = params.protocolVersion;
  log(`initialize: client=${show(client.name)} ${show(client.version)} protocol=${show(asked)}`);
  const protocolVersion = LEGACY_VERSIONS.find((version) => version === asked) ?? LEGACY_VERSIONS[0];
  return { result: { protocolVersion, capabilities: CAPABILITIES, serverInfo: SERVER_INFO } };
}

/**
 * server/discover: what we speak and offer. A modern client sends it first and never sends
 * initialize, so we log who it is from `_meta` here. It is answered the same in either era,
 * so that any client can probe it (2026-07-28 basic/transports/stdio §Backward Compatibility).
 */
function discover(params: JSONObject): Outcome {
  const meta = isObject(params._meta) ? params._meta : {};
  const client = isObject(meta[CLIENT_INFO_KEY]) ? meta[CLIENT_INFO_KEY] : {};
  const asked = show(meta[PROTOCOL_VERSION_KEY]);
  log(`server/discover: client=${show(client.name)} ${show(client.version)} protocol=${asked}`);
  const offer = { supportedVersions: SUPPORTED_VERSIONS, capabilities: CAPABILITIES };
  return { result: { ...offer, ...CACHE_HINTS, ...MODERN_FIELDS } };
}

/** tools/list: each tool's definition, without its handler. */
function listTools(): Outcome {
  const tools = TOOLS.map(({ name, description, inputSchema }) => ({ name, description, inputSchema }));
  return { result: { tools } };
}

/** tools/call: a call we cannot route is a protocol error; bad arguments are a tool error
 * (2025-11-25 server/tools §Error Handling). */
function callTool(params: JSONObject): Outcome {
  const name = params.name;
  const args = params.arguments === undefined ? {} : params.arguments;
  if (typeof name !== "string") return failure(INVALID_PARAMS, 'Invalid params: "name" must be a string');
  if (!isObject(args)) return failure(INVALID_PARAMS, 'Invalid params: "arguments" must be an object');
  const tool = TOOLS.find((candidate) => candidate.name === name);
  if (tool === undefined) return failure(INVALID_PARAMS, `Unknown tool: ${name}`);
  const problem = checkArguments(tool.inputSchema, args);
  if (problem !== undefined) return { result: toolError(`Invalid arguments: ${problem}`) };
  return { result: tool.handler(args) };
}

/** The JSON-RPC methods we serve, by name: the dispatch table. */
const METHODS: { [method: string]: (params: JSONObject) => Outcome } = {
  initialize,
  ping: () => ({ result: {} }),
  "server/discover": discover,
  "tools/list": listTools,
  "tools/call": callTool,
};

/** The `_meta` of a request's params, or an empty object when it has none. */
function metaOf(params: JSONObject): JSONObject {
  return isObject(params._meta) ? params._meta : {};
}

/**
 * Which era a request is in, or the protocol error that stops it. A modern request is checked
 * on its own, with no handshake (2026-07-28 basic/versioning, basic/index §_meta); a legacy
 * version named in `_meta` is served as legacy, as if agreed at initialize.
 */
function eraOf(params: JSONObject): { era: Era } | { error: ErrorObject } {
  const meta = metaOf(params);
  const version = meta[PROTOCOL_VERSION_KEY];
  const legacy = version === undefined || LEGACY_VERSIONS.some((known) => known === version);
  if (legacy) return { era: "legacy" };
  if (typeof version !== "string") {
    return failure(INVALID_PARAMS, `Invalid params: _meta["${PROTOCOL_VERSION_KEY}"] must be a string`);
  }
  if (version !== MODERN_VERSION) {
    const data = { supported: SUPPORTED_VERSIONS, requested: version };
    return failure(UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version", data);
  }
  if (!isObject(meta[CLIENT_CAPABILITIES_KEY])) {
    return failure(INVALID_PARAMS, `Invalid params: _meta["${CLIENT_CAPABILITIES_KEY}"] is required`);
  }
  return { era: "modern" };
}

/** Serves a request: its era decides which methods exist and what each result carries. */
function serve(request: JSONRPCRequest): Outcome {
  const checked = eraOf(request.params);
  if ("error" in checked) return checked;
  const rules = ERAS[checked.era];
  const method = request.method;
  const handler = Object.hasOwn(METHODS, method) ? METHODS[method] : undefined;
  if (handler === undefined || !rules.methods.has(method)) {
    return failure(METHOD_NOT_FOUND, `Method not found: ${method}`);
  }
  const outcome = handler(request.params);
  if ("error" in outcome) return outcome;
  const hints = rules.cached.has(method) ? CACHE_HINTS : {};
  return { result: { ...outcome.result, ...hints, ...rules.resultFields } };
}

/** Whether a value can be a request id: a string or an integer (MCP basic §Requests). */
function isRequestId(value: unknown): value is RequestId {
  // Past 2^53 an integer cannot be read back exactly, so it could not be echoed as it was sent.
  return typeof value === "string" || Number.isSafeInteger(value);
}

/** Classifies one JSON value as a request, a notification, a response, or invalid and why. */
function classify(value: unknown): Message {
  if (!isObject(value)) return { kind: "invalid", id: null, reason: "not a JSON object" };
  // A response, well-formed or not, is never answered: its id numbers a request of ours.
  const answers = Object.hasOwn(value, "result") || Object.hasOwn(value, "error");
  if (answers && !Object.hasOwn(value, "method")) return { kind: "response" };
  // An error names the request's id when it can be read, else null (JSON-RPC 2.0 §5; MCP's
  // schema would leave the id out, but JSON-RPC, and the article's transcript, say null).
  const id = isRequestId(value.id) ? value.id : null;
  const { method, params = {} } = value;
  if (value.jsonrpc !== "2.0") return { kind: "invalid", id, reason: '"jsonrpc" must be "2.0"' };
  if (!Object.hasOwn(value, "method")) return { kind: "invalid", id, reason: 'no "method"' };
  if (typeof method !== "string") {
    return { kind: "invalid", id, reason: '"method" must be a string' };
  }
  if (!isObject(params) && !Array.isArray(params)) {
    return { kind: "invalid", id, reason: '"params" must be an object or an array' };
  }
  // JSON-RPC allows params by position; no MCP method takes them, so they read as none.
  const named = isObject(params) ? params : {};
  if (!Object.hasOwn(value, "id")) {
    return { kind: "notification", notification: { jsonrpc: "2.0", method, params: named } };
  }
  if (id === null) return { kind: "invalid", id, reason: '"id" must be a string or an integer' };
  return { kind: "request", request: { jsonrpc: "2.0", id, method, params: named } };
}

/** Acts on one JSON value: the response it gets, or undefined when it gets none. */
function respond(value: unknown): JSONRPCResponse | undefined {
  const message = classify(value);
  switch (message.kind) {
    case "request":
      return response(message.request.id, serve(message.request));
    case "invalid":
      return response(message.id, failure(INVALID_REQUEST, `Invalid Request: ${message.reason}`));
    case "notification":
      // A notification is never answered, known or not (JSON-RPC 2.0 §4.1).
      if (message.notification.method === "notifications/initialized") log("client initialized");
      return undefined;
    case "response":
      return undefined;
  }
}

/** Answers one line's JSON text: one response, a batch's array of them, or undefined. */
function answer(text: string): JSONRPCResponse | JSONRPCResponse[] | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return response(null, failure(PARSE_ERROR, "Parse error"));
  }
  if (!Array.isArray(value)) return respond(value);
  // A batch (JSON-RPC 2.0 §6): 2025-03-26 requires us to receive them, later revisions dropped
  // them, and we accept them in any era. The answer is one array of responses, or nothing.
  if (value.length === 0) return response(null, failure(INVALID_REQUEST, "Invalid Request: empty batch"));
  const responses = value.map(respond).filter((reply) => reply !== undefined);
  return responses.length === 0 ? undefined : responses;
}

/** One line of input as the line splitter hands it over: its bytes, or only its size when it
 * was too long to hold. */
type Line = { kind: "complete"; bytes: Buffer } | { kind: "too long"; size: number };

/**
 * Cuts stdin's bytes into lines at each "\n", in the shape of Deno std's TextLineStream:
 * `transform` takes a chunk and returns the lines it completes, `flush` returns a last line
 * that ended without "\n". Why not node:readline: it holds a line of any length, so one
 * client line could fill our memory; it decodes as it goes, turning bytes that are not UTF-8
 * into U+FFFD before we could refuse them; and it hands lines over one by one, where we
 * answer all of a chunk's lines in one write. The cap applies to one line while we wait for
 * its "\n": past MAX_LINE_BYTES its bytes are let go as they come, and the line is answered
 * with one error when it ends.
 */
class LineSplitter {
  /** The start of the line whose "\n" has not come yet, as the pieces it came in. */
  #pieces: Buffer[] = [];
  /** The bytes that line has had so far, still counted once they are let go. */
  #size = 0;

  /** Returns the lines a chunk completes, without their "\n". */
  transform(chunk: Buffer): Line[] {
    const lines: Line[] = [];
    let start = 0;
    let end = chunk.indexOf(0x0a);
    while (end !== -1) {
      this.#hold(chunk.subarray(start, end));
      lines.push(this.#take());
      start = end + 1;
      end = chunk.indexOf(0x0a, start);
    }
    this.#hold(chunk.subarray(start));
    return lines;
  }

  /** Returns the last line, when the input ended after it without a "\n". */
  flush(): Line[] {
    return this.#size === 0 ? [] : [this.#take()];
  }

  /** Adds a piece to the line being read, or lets it go once the line is too long to hold. */
  #hold(piece: Buffer): void {
    this.#size += piece.length;
    if (this.#size > MAX_LINE_BYTES) this.#pieces = [];
    else this.#pieces.push(piece);
  }

  /** Ends the line being read and hands it over. */
  #take(): Line {
    const size = this.#size;
    const line: Line = size > MAX_LINE_BYTES
      ? { kind: "too long", size }
      : { kind: "complete", bytes: Buffer.concat(this.#pieces) };
    this.#pieces = [];
    this.#size = 0;
    return line;
  }
}

// ---- I/O: lines in on stdin, replies out on stdout, logs on stderr ----

/** Reads a line's bytes as UTF-8, which JSON text must be (RFC 8259 §8.1); `fatal` makes bytes
 * that are not UTF-8 an error instead of U+FFFD. A BOM at the line's start is skipped, as
 * §8.1 allows: PowerShell puts one before what it pipes. */
const decoder = new TextDecoder("utf-8", { fatal: true });

const splitter = new LineSplitter();

/** Whether stderr has said that a message must fit on one line: it says so once. */
let toldOneLine = false;

/** The reply to one line of input, as JSON text ending in "\n", or undefined for none. */
function replyTo(line: Line): string | undefined {
  if (line.kind === "too long") {
    const error = failure(INVALID_REQUEST, `Invalid Request: line too long (${line.size} bytes)`);
    return `${JSON.stringify(response(null, error))}\n`;
  }
  let text: string;
  try {
    text = decoder.decode(line.bytes);
  } catch {
    return `${JSON.stringify(response(null, failure(PARSE_ERROR, "Parse error")))}\n`;
  }
  if (BLANK_LINE.test(text)) return undefined;
  const reply = answer(text);
  const unparsed = reply !== undefined && "error" in reply && reply.error.code === PARSE_ERROR;
  if (unparsed && !toldOneLine && CUT_AT_LINE_BREAK.test(text)) {
    log("a message must be on one line: pretty-printed JSON arrives as pieces (stdio transport)");
    toldOneLine = true;
  }
  return reply === undefined ? undefined : `${JSON.stringify(reply)}\n`;
}

/** Writes the replies to a chunk's lines in one write; while the client is not reading them,
 * stops reading its requests (backpressure). */
function send(lines: Line[]): void {
  const replies = lines.map(replyTo).filter((reply) => reply !== undefined);
  if (replies.length === 0) return;
  const flowing = process.stdout.write(replies.join(""));
  if (!flowing) {
    process.stdin.pause();
    process.stdout.once("drain", () => process.stdin.resume());
  }
}

process.stdin.on("data", (chunk: Buffer) => send(splitter.transform(chunk)));
// The end of stdin is the client's goodbye (stdio §Shutdown): answer a last unterminated line,
// and exit once stdout is written, even while a stderr nobody reads holds our logs back.
// SIGINT and SIGTERM keep their default: exit at once.
process.stdin.on("end", () => {
  send(splitter.flush());
  process.stdout.write("", () => process.exit(0));
});
// A client that closes our stdout (EPIPE) has gone away: no one is left to answer. Logs are
// best effort.
process.stdout.on("error", () => process.exit(0));
process.stderr.on("error", () => {});

log("stdio server started — waiting for JSON-RPC messages on stdin");
