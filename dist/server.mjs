#!/usr/bin/env node

// server.ts
import process from "node:process";
var SERVER_INFO = { name: "json-rpc-study", version: "0.1.0" };
var LEGACY_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
var MODERN_VERSION = "2026-07-28";
var SUPPORTED_VERSIONS = [MODERN_VERSION, ...LEGACY_VERSIONS];
var PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion";
var CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo";
var CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities";
var CAPABILITIES = { tools: {} };
var MODERN_FIELDS = {
  resultType: "complete",
  _meta: { "io.modelcontextprotocol/serverInfo": SERVER_INFO }
};
var CACHE_HINTS = { ttlMs: 36e5, cacheScope: "public" };
var ERAS = {
  legacy: {
    methods: /* @__PURE__ */ new Set(["initialize", "ping", "server/discover", "tools/list", "tools/call"]),
    cached: /* @__PURE__ */ new Set(),
    resultFields: {}
  },
  modern: {
    methods: /* @__PURE__ */ new Set(["server/discover", "tools/list", "tools/call"]),
    cached: /* @__PURE__ */ new Set(["tools/list"]),
    resultFields: MODERN_FIELDS
  }
};
var PARSE_ERROR = -32700;
var INVALID_REQUEST = -32600;
var METHOD_NOT_FOUND = -32601;
var INVALID_PARAMS = -32602;
var UNSUPPORTED_PROTOCOL_VERSION = -32022;
var MAX_LINE_BYTES = 64 * 1024 * 1024;
var BLANK_LINE = /^[ \t\n\r]*$/;
var CUT_AT_LINE_BREAK = /^[ \t\r]*[[{].*[[{,][ \t\r]*$/;
function isObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
function isFiniteNumber(value) {
  return typeof value === "number" && Number.isFinite(value);
}
function toolResult(text) {
  return { content: [{ type: "text", text }] };
}
function toolError(text) {
  return { content: [{ type: "text", text }], isError: true };
}
var TOOLS = [
  {
    name: "add",
    description: "Add two numbers",
    inputSchema: {
      type: "object",
      properties: {
        a: { type: "number", description: "The first number" },
        b: { type: "number", description: "The second number" }
      },
      required: ["a", "b"]
    },
    // The schema has made sure a and b are numbers; it cannot say "finite", and 1e400 is
    // Infinity by the time JSON.parse is done with it.
    handler: ({ a, b }) => {
      if (!isFiniteNumber(a)) return toolError('Invalid arguments: "a" must be a finite number');
      if (!isFiniteNumber(b)) return toolError('Invalid arguments: "b" must be a finite number');
      const sum = a + b;
      if (!isFiniteNumber(sum)) return toolError(`Invalid arguments: ${a} + ${b} is out of range`);
      return toolResult(`${a} + ${b} = ${sum}`);
    }
  }
];
function hasType(value, type) {
  switch (type) {
    case "number":
      return typeof value === "number";
    case "integer":
      return Number.isInteger(value);
    case "string":
      return typeof value === "string";
    case "boolean":
      return typeof value === "boolean";
    case "object":
      return isObject(value);
    case "array":
      return Array.isArray(value);
    default:
      return true;
  }
}
function checkArguments(schema, args) {
  for (const name of schema.required ?? []) {
    if (!Object.hasOwn(args, name)) return `"${name}" is required`;
  }
  for (const [name, { type }] of Object.entries(schema.properties)) {
    const article = type === "integer" || type === "object" || type === "array" ? "an" : "a";
    if (Object.hasOwn(args, name) && !hasType(args[name], type)) {
      return `"${name}" must be ${article} ${type}`;
    }
  }
  return void 0;
}
function failure(code, message, data) {
  const error = data === void 0 ? { code, message } : { code, message, data };
  return { error };
}
function response(id, outcome) {
  return { jsonrpc: "2.0", id, ...outcome };
}
function log(text) {
  process.stderr.write(`[server] ${text}
`);
}
function show(value) {
  if (typeof value !== "string") return `(${typeof value})`;
  const escape = (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`;
  return JSON.stringify(value).replace(/[\p{Cc}\u2028\u2029]/gu, escape);
}
function initialize(params) {
  const client = isObject(params.clientInfo) ? params.clientInfo : {};
  const asked = params.protocolVersion;
  log(`initialize: client=${show(client.name)} ${show(client.version)} protocol=${show(asked)}`);
  const protocolVersion = LEGACY_VERSIONS.find((version) => version === asked) ?? LEGACY_VERSIONS[0];
  return { result: { protocolVersion, capabilities: CAPABILITIES, serverInfo: SERVER_INFO } };
}
function discover(params) {
  const meta = isObject(params._meta) ? params._meta : {};
  const client = isObject(meta[CLIENT_INFO_KEY]) ? meta[CLIENT_INFO_KEY] : {};
  const asked = show(meta[PROTOCOL_VERSION_KEY]);
  log(`server/discover: client=${show(client.name)} ${show(client.version)} protocol=${asked}`);
  const offer = { supportedVersions: SUPPORTED_VERSIONS, capabilities: CAPABILITIES };
  return { result: { ...offer, ...CACHE_HINTS, ...MODERN_FIELDS } };
}
function listTools() {
  const tools = TOOLS.map(({ name, description, inputSchema }) => ({ name, description, inputSchema }));
  return { result: { tools } };
}
function callTool(params) {
  const name = params.name;
  const args = params.arguments === void 0 ? {} : params.arguments;
  if (typeof name !== "string") return failure(INVALID_PARAMS, 'Invalid params: "name" must be a string');
  if (!isObject(args)) return failure(INVALID_PARAMS, 'Invalid params: "arguments" must be an object');
  const tool = TOOLS.find((candidate) => candidate.name === name);
  if (tool === void 0) return failure(INVALID_PARAMS, `Unknown tool: ${name}`);
  const problem = checkArguments(tool.inputSchema, args);
  if (problem !== void 0) return { result: toolError(`Invalid arguments: ${problem}`) };
  return { result: tool.handler(args) };
}
var METHODS = {
  initialize,
  ping: () => ({ result: {} }),
  "server/discover": discover,
  "tools/list": listTools,
  "tools/call": callTool
};
function metaOf(params) {
  return isObject(params._meta) ? params._meta : {};
}
function eraOf(params) {
  const meta = metaOf(params);
  const version = meta[PROTOCOL_VERSION_KEY];
  const legacy = version === void 0 || LEGACY_VERSIONS.some((known) => known === version);
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
function serve(request) {
  const checked = eraOf(request.params);
  if ("error" in checked) return checked;
  const rules = ERAS[checked.era];
  const method = request.method;
  const handler = Object.hasOwn(METHODS, method) ? METHODS[method] : void 0;
  if (handler === void 0 || !rules.methods.has(method)) {
    return failure(METHOD_NOT_FOUND, `Method not found: ${method}`);
  }
  const outcome = handler(request.params);
  if ("error" in outcome) return outcome;
  const hints = rules.cached.has(method) ? CACHE_HINTS : {};
  return { result: { ...outcome.result, ...hints, ...rules.resultFields } };
}
function isRequestId(value) {
  return typeof value === "string" || Number.isSafeInteger(value);
}
function classify(value) {
  if (!isObject(value)) return { kind: "invalid", id: null, reason: "not a JSON object" };
  const answers = Object.hasOwn(value, "result") || Object.hasOwn(value, "error");
  if (answers && !Object.hasOwn(value, "method")) return { kind: "response" };
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
  const named = isObject(params) ? params : {};
  if (!Object.hasOwn(value, "id")) {
    return { kind: "notification", notification: { jsonrpc: "2.0", method, params: named } };
  }
  if (id === null) return { kind: "invalid", id, reason: '"id" must be a string or an integer' };
  return { kind: "request", request: { jsonrpc: "2.0", id, method, params: named } };
}
function respond(value) {
  const message = classify(value);
  switch (message.kind) {
    case "request":
      return response(message.request.id, serve(message.request));
    case "invalid":
      return response(message.id, failure(INVALID_REQUEST, `Invalid Request: ${message.reason}`));
    case "notification":
      if (message.notification.method === "notifications/initialized") log("client initialized");
      return void 0;
    case "response":
      return void 0;
  }
}
function answer(text) {
  let value;
  try {
    value = JSON.parse(text);
  } catch {
    return response(null, failure(PARSE_ERROR, "Parse error"));
  }
  if (!Array.isArray(value)) return respond(value);
  if (value.length === 0) return response(null, failure(INVALID_REQUEST, "Invalid Request: empty batch"));
  const responses = value.map(respond).filter((reply) => reply !== void 0);
  return responses.length === 0 ? void 0 : responses;
}
var LineSplitter = class {
  /** The start of the line whose "\n" has not come yet, as the pieces it came in. */
  #pieces = [];
  /** The bytes that line has had so far, still counted once they are let go. */
  #size = 0;
  /** Returns the lines a chunk completes, without their "\n". */
  transform(chunk) {
    const lines = [];
    let start = 0;
    let end = chunk.indexOf(10);
    while (end !== -1) {
      this.#hold(chunk.subarray(start, end));
      lines.push(this.#take());
      start = end + 1;
      end = chunk.indexOf(10, start);
    }
    this.#hold(chunk.subarray(start));
    return lines;
  }
  /** Returns the last line, when the input ended after it without a "\n". */
  flush() {
    return this.#size === 0 ? [] : [this.#take()];
  }
  /** Adds a piece to the line being read, or lets it go once the line is too long to hold. */
  #hold(piece) {
    this.#size += piece.length;
    if (this.#size > MAX_LINE_BYTES) this.#pieces = [];
    else this.#pieces.push(piece);
  }
  /** Ends the line being read and hands it over. */
  #take() {
    const size = this.#size;
    const line = size > MAX_LINE_BYTES ? { kind: "too long", size } : { kind: "complete", bytes: Buffer.concat(this.#pieces) };
    this.#pieces = [];
    this.#size = 0;
    return line;
  }
};
var decoder = new TextDecoder("utf-8", { fatal: true });
var splitter = new LineSplitter();
var toldOneLine = false;
function replyTo(line) {
  if (line.kind === "too long") {
    const error = failure(INVALID_REQUEST, `Invalid Request: line too long (${line.size} bytes)`);
    return `${JSON.stringify(response(null, error))}
`;
  }
  let text;
  try {
    text = decoder.decode(line.bytes);
  } catch {
    return `${JSON.stringify(response(null, failure(PARSE_ERROR, "Parse error")))}
`;
  }
  if (BLANK_LINE.test(text)) return void 0;
  const reply = answer(text);
  const unparsed = reply !== void 0 && "error" in reply && reply.error.code === PARSE_ERROR;
  if (unparsed && !toldOneLine && CUT_AT_LINE_BREAK.test(text)) {
    log("a message must be on one line: pretty-printed JSON arrives as pieces (stdio transport)");
    toldOneLine = true;
  }
  return reply === void 0 ? void 0 : `${JSON.stringify(reply)}
`;
}
function send(lines) {
  const replies = lines.map(replyTo).filter((reply) => reply !== void 0);
  if (replies.length === 0) return;
  const flowing = process.stdout.write(replies.join(""));
  if (!flowing) {
    process.stdin.pause();
    process.stdout.once("drain", () => process.stdin.resume());
  }
}
process.stdin.on("data", (chunk) => send(splitter.transform(chunk)));
process.stdin.on("end", () => {
  send(splitter.flush());
  process.stdout.write("", () => process.exit(0));
});
process.stdout.on("error", () => process.exit(0));
process.stderr.on("error", () => {
});
log("stdio server started — waiting for JSON-RPC messages on stdin");
