/**
 * server.ts — an MCP server over stdio in one file, with no SDK and no dependencies.
 *
 * The wire (MCP basic/transports/stdio): the client starts this process, writes
 * JSON-RPC 2.0 messages to its stdin one per line, and reads ours from stdout one
 * per line. stdout carries nothing but those messages; logs go to stderr.
 *
 * JSON-RPC has three kinds of message. A request has an id and a method, and always
 * gets exactly one response. A notification has a method and no id, and never gets
 * one. A response has an id and a result or an error; we send no requests, so any
 * response we receive is ignored. Errors come in two layers: protocol errors are
 * JSON-RPC error objects (bad JSON, unknown method, bad params), and a tool that
 * fails returns an ordinary result with `isError: true`, which the model can read.
 *
 * Two protocol eras share one dispatch table:
 * - legacy (2024-11-05 to 2025-11-25): the client opens with `initialize`, we answer
 *   with the version we will speak, and later requests carry no version;
 * - modern (2026-07-28): no handshake; every request names its version in
 *   `params._meta`, and every result says `resultType: "complete"` and who we are.
 */
import process from "node:process";

/** A request id: a string or an integer, never null (MCP basic §Requests). */
type RequestId = string | number;

/** A JSON object, as MCP params and results are. */
type JSONObject = { [key: string]: unknown };

/** A JSON-RPC error object (JSON-RPC 2.0 §5.1). */
type JSONRPCError = { code: number; message: string; data?: unknown };

/** What serving a request comes to: a result, or a protocol error in its place. */
type Outcome = { result: JSONObject } | { error: JSONRPCError };

/** A response: the request's id (null when none could be read) and its outcome (JSON-RPC 2.0 §5). */
type JSONRPCResponse = { jsonrpc: "2.0"; id: RequestId | null } & Outcome;

/** Which protocol era a request belongs to. */
type Era = "legacy" | "modern";

/** A method's handler: the request's params in, an outcome out. */
type Handler = (params: JSONObject, era: Era) => Outcome;

/** Who we are, in `initialize` results and modern results' `_meta`. */
const SERVER_INFO = { name: "json-rpc-study", version: "0.1.0" };

/** Handshake-era versions we speak, newest first (2025-11-25 basic/lifecycle §Version Negotiation). */
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

/** Fields every modern result carries (2026-07-28 basic/index §ResultType and §_meta). */
const MODERN_FIELDS = { resultType: "complete", _meta: { "io.modelcontextprotocol/serverInfo": SERVER_INFO } };

/** Caching hints for server/discover and tools/list (2026-07-28 server/utilities/caching): our tools never change and hold nothing private. */
const CACHE_HINTS = { ttlMs: 3_600_000, cacheScope: "public" };

/** JSON-RPC 2.0 §5.1 error codes, and MCP's UnsupportedProtocolVersion (2026-07-28 basic/index §Error Codes). */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;
const UNSUPPORTED_PROTOCOL_VERSION = -32022;

/** The longest line we hold: far beyond any real message, far below V8's longest string (~512 MiB). */
const MAX_LINE_LENGTH = 64 * 1024 * 1024;

/** The tools we offer, as tools/list returns them. */
const TOOLS = [{
  name: "add",
  description: "Add two numbers",
  inputSchema: {
    type: "object",
    properties: { a: { type: "number", description: "The first number" }, b: { type: "number", description: "The second number" } },
    required: ["a", "b"],
  },
}];

/** Whether a value is a JSON object: not null, not an array. */
function isObject(value: unknown): value is JSONObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Whether a value can be a request id: a string or an integer (MCP basic §Requests). */
function isRequestId(value: unknown): value is RequestId {
  // Past 2^53 an integer cannot be read back exactly, so it could not be echoed as it was sent.
  return typeof value === "string" || Number.isSafeInteger(value);
}

/** A protocol error as an outcome. */
function fail(code: number, message: string, data?: unknown): Outcome {
  return { error: { code, message, data } };
}

/** A tool execution error: a result the model reads, not a protocol error (2025-11-25 server/tools §Error Handling). */
function toolError(text: string): Outcome {
  return { result: { content: [{ type: "text", text }], isError: true } };
}

/** Writes one line of log to stderr, never to stdout. */
function log(text: string): void {
  process.stderr.write(`[server] ${text}\n`);
}

/** Shows an untrusted value in the log on one line: strings quoted, anything else by its type. */
function show(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : `(${typeof value})`;
}

/** initialize: answer the client's version if we speak it, else our newest (2025-11-25 basic/lifecycle §Version Negotiation). */
function initialize(params: JSONObject): Outcome {
  const client = isObject(params.clientInfo) ? params.clientInfo : {};
  log(`initialize: client=${show(client.name)} ${show(client.version)} protocol=${show(params.protocolVersion)}`);
  const protocolVersion = LEGACY_VERSIONS.find((version) => version === params.protocolVersion) ?? LEGACY_VERSIONS[0];
  return { result: { protocolVersion, capabilities: CAPABILITIES, serverInfo: SERVER_INFO } };
}

/** tools/call: a call we cannot route is a protocol error; bad arguments are a tool error (2025-11-25 server/tools §Error Handling). */
function callTool(params: JSONObject): Outcome {
  const { name, arguments: args = {} } = params;
  if (typeof name !== "string") return fail(INVALID_PARAMS, 'Invalid params: "name" must be a string');
  if (!isObject(args)) return fail(INVALID_PARAMS, 'Invalid params: "arguments" must be an object');
  if (name !== "add") return fail(INVALID_PARAMS, `Unknown tool: ${name}`);
  const { a, b } = args;
  // Checked at run time: the schema is a promise the client may not keep, and "1" + 2 is "12".
  if (typeof a !== "number" || !Number.isFinite(a)) return toolError('Invalid arguments: "a" must be a finite number');
  if (typeof b !== "number" || !Number.isFinite(b)) return toolError('Invalid arguments: "b" must be a finite number');
  if (!Number.isFinite(a + b)) return toolError(`Invalid arguments: ${a} + ${b} is out of range`);
  return { result: { content: [{ type: "text", text: `${a} + ${b} = ${a + b}` }] } };
}

/**
 * server/discover: what we speak and offer. A modern client sends it first and never sends
 * initialize, so we log who it is from `_meta` here, once per client. It is answered the same
 * with or without `_meta` and an earlier initialize, so that any client can probe it
 * (2026-07-28 basic/transports/stdio §Backward Compatibility).
 */
function discover(params: JSONObject): Outcome {
  const meta = isObject(params._meta) ? params._meta : {};
  const client = isObject(meta[CLIENT_INFO_KEY]) ? meta[CLIENT_INFO_KEY] : {};
  log(`server/discover: client=${show(client.name)} ${show(client.version)} protocol=${show(meta[PROTOCOL_VERSION_KEY])}`);
  return { result: { supportedVersions: SUPPORTED_VERSIONS, capabilities: CAPABILITIES, ...CACHE_HINTS, ...MODERN_FIELDS } };
}

/** The JSON-RPC methods we serve, by name: the dispatch table. */
const handlers = {
  initialize,
  ping: () => ({ result: {} }),
  // A 2026-07-28 method, answered the same with or without `_meta` and an earlier initialize, so that any
  // client can probe it (2026-07-28 basic/transports/stdio §Backward Compatibility).
  "server/discover": discover,
  "tools/list": (_params, era) => ({ result: { tools: TOOLS, ...(era === "modern" ? CACHE_HINTS : {}) } }),
  "tools/call": callTool,
} satisfies Record<string, Handler>;

/** The table as Maps, so a lookup sees only its own methods: never `toString` or `__proto__`. */
const legacyMethods = new Map<string, Handler>(Object.entries(handlers));
/** 2026-07-28 removed the handshake and ping (changelog items 2 and 5). */
const modernMethods = new Map([...legacyMethods].filter(([method]) => method !== "initialize" && method !== "ping"));

/** Serves a request: a modern one names its version in `params._meta`, a legacy one does not. */
function serve(method: string, params: JSONObject): Outcome {
  const meta = isObject(params._meta) ? params._meta : {};
  const version = meta[PROTOCOL_VERSION_KEY];
  // A legacy version named in `_meta` is served as legacy, as if agreed at initialize (we keep no state to check).
  const era: Era = version === undefined || LEGACY_VERSIONS.some((legacy) => legacy === version) ? "legacy" : "modern";
  // Modern: each request is checked on its own, with no handshake (2026-07-28 basic/versioning, basic/index §_meta).
  if (era === "modern") {
    if (typeof version !== "string") return fail(INVALID_PARAMS, `Invalid params: _meta["${PROTOCOL_VERSION_KEY}"] must be a string`);
    if (version !== MODERN_VERSION) {
      return fail(UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version", { supported: SUPPORTED_VERSIONS, requested: version });
    }
    if (!isObject(meta[CLIENT_CAPABILITIES_KEY])) return fail(INVALID_PARAMS, `Invalid params: _meta["${CLIENT_CAPABILITIES_KEY}"] is required`);
  }
  const handler = (era === "modern" ? modernMethods : legacyMethods).get(method);
  if (handler === undefined) return fail(METHOD_NOT_FOUND, `Method not found: ${method}`);
  const outcome = handler(params, era);
  return era === "modern" && "result" in outcome ? { result: { ...outcome.result, ...MODERN_FIELDS } } : outcome;
}

/** Answers one JSON value from the wire: a response for a request or a malformed message, nothing for a notification or a response. */
function answer(message: unknown): JSONRPCResponse | undefined {
  if (!isObject(message)) return { jsonrpc: "2.0", id: null, ...fail(INVALID_REQUEST, "Invalid Request: not a JSON object") };
  // A response, well-formed or not, is never answered: its id numbers a request of ours, not the client's.
  if (!Object.hasOwn(message, "method") && (Object.hasOwn(message, "result") || Object.hasOwn(message, "error"))) return undefined;
  // An error names the request's id when it can be read, else null (JSON-RPC 2.0 §5; MCP's schema would
  // leave the id out instead, but JSON-RPC, and the article's transcript, say null).
  const id = isRequestId(message.id) ? message.id : null;
  const invalid = (reason: string): JSONRPCResponse => ({ jsonrpc: "2.0", id, ...fail(INVALID_REQUEST, `Invalid Request: ${reason}`) });
  if (message.jsonrpc !== "2.0") return invalid('"jsonrpc" must be "2.0"');
  const { method, params = {} } = message;
  if (!Object.hasOwn(message, "method")) return invalid('no "method"');
  if (typeof method !== "string") return invalid('"method" must be a string');
  if (!isObject(params) && !Array.isArray(params)) return invalid('"params" must be an object or an array');
  if (!Object.hasOwn(message, "id")) {
    // A notification is never answered, known or not (JSON-RPC 2.0 §4.1).
    if (method === "notifications/initialized") log("client initialized");
    return undefined;
  }
  if (id === null) return invalid('"id" must be a string or an integer');
  return { jsonrpc: "2.0", id, ...serve(method, isObject(params) ? params : {}) };
}

/** Answers one line of input: "" for a blank line or nothing to say, else one JSON line. */
function reply(line: string): string {
  if (line.trim() === "") return "";
  let message: unknown;
  try {
    message = JSON.parse(line);
  } catch {
    return toLine({ jsonrpc: "2.0", id: null, ...fail(PARSE_ERROR, "Parse error") });
  }
  if (!Array.isArray(message)) return toLine(answer(message));
  // A batch (JSON-RPC 2.0 §6): 2025-03-26 requires us to receive them, later revisions dropped them, and we
  // accept them in any era. The answer is one array of responses, or nothing.
  if (message.length === 0) return toLine({ jsonrpc: "2.0", id: null, ...fail(INVALID_REQUEST, "Invalid Request: empty batch") });
  const answers = message.map(answer).filter((response) => response !== undefined);
  return answers.length === 0 ? "" : toLine(answers);
}

/** One message as one line; nothing for nothing. */
function toLine(message: JSONRPCResponse | JSONRPCResponse[] | undefined): string {
  return message === undefined ? "" : `${JSON.stringify(message)}\n`;
}

// ---- I/O: lines in on stdin, replies out on stdout, logs on stderr ----

let partial = "";
let overlong = false;

/** Adds text to the line being read; a line too long to hold is dropped as it comes. */
function extend(text: string): void {
  overlong ||= partial.length + text.length > MAX_LINE_LENGTH;
  partial = overlong ? "" : partial + text;
}

/** Ends the line being read and returns its reply: one error for a dropped line. */
function endLine(): string {
  const out = overlong ? toLine({ jsonrpc: "2.0", id: null, ...fail(INVALID_REQUEST, "Invalid Request: line too long") }) : reply(partial);
  partial = "";
  overlong = false;
  return out;
}

/** Writes replies; while the client is not reading them, stops reading its requests (backpressure). */
function send(out: string): void {
  if (out === "" || process.stdout.write(out)) return;
  process.stdin.pause();
  process.stdout.once("drain", () => process.stdin.resume());
}

process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk: string) => {
  // Only the new chunk is searched for newlines, so a long line costs linear time.
  const end = chunk.lastIndexOf("\n");
  if (end === -1) return extend(chunk);
  const [first = "", ...rest] = chunk.slice(0, end).split("\n");
  extend(first);
  send(endLine() + rest.map(reply).join(""));
  extend(chunk.slice(end + 1));
});
// The end of stdin is the client's goodbye (stdio §Shutdown): answer a last unterminated line, then nothing
// keeps the process alive and it exits 0. SIGINT and SIGTERM keep their default: exit at once.
process.stdin.on("end", () => send(endLine()));
// A client that closes our stdout (EPIPE) has gone away: no one is left to answer. Logs are best effort.
process.stdout.on("error", () => process.exit(0));
process.stderr.on("error", () => {});

log("stdio server started — waiting for JSON-RPC messages on stdin");
