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
var MODERN_FIELDS = { resultType: "complete", _meta: { "io.modelcontextprotocol/serverInfo": SERVER_INFO } };
var CACHE_HINTS = { ttlMs: 36e5, cacheScope: "public" };
var PARSE_ERROR = -32700;
var INVALID_REQUEST = -32600;
var METHOD_NOT_FOUND = -32601;
var INVALID_PARAMS = -32602;
var UNSUPPORTED_PROTOCOL_VERSION = -32022;
var MAX_LINE_LENGTH = 64 * 1024 * 1024;
var TOOLS = [{
  name: "add",
  description: "Add two numbers",
  inputSchema: {
    type: "object",
    properties: { a: { type: "number", description: "The first number" }, b: { type: "number", description: "The second number" } },
    required: ["a", "b"]
  }
}];
function isObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
function isRequestId(value) {
  return typeof value === "string" || Number.isSafeInteger(value);
}
function fail(code, message, data) {
  return { error: { code, message, data } };
}
function toolError(text) {
  return { result: { content: [{ type: "text", text }], isError: true } };
}
function log(text) {
  process.stderr.write(`[server] ${text}
`);
}
function show(value) {
  return typeof value === "string" ? JSON.stringify(value) : `(${typeof value})`;
}
function initialize(params) {
  const client = isObject(params.clientInfo) ? params.clientInfo : {};
  log(`initialize: client=${show(client.name)} ${show(client.version)} protocol=${show(params.protocolVersion)}`);
  const protocolVersion = LEGACY_VERSIONS.find((version) => version === params.protocolVersion) ?? LEGACY_VERSIONS[0];
  return { result: { protocolVersion, capabilities: CAPABILITIES, serverInfo: SERVER_INFO } };
}
function callTool(params) {
  const { name, arguments: args = {} } = params;
  if (typeof name !== "string") return fail(INVALID_PARAMS, 'Invalid params: "name" must be a string');
  if (!isObject(args)) return fail(INVALID_PARAMS, 'Invalid params: "arguments" must be an object');
  if (name !== "add") return fail(INVALID_PARAMS, `Unknown tool: ${name}`);
  const { a, b } = args;
  if (typeof a !== "number" || !Number.isFinite(a)) return toolError('Invalid arguments: "a" must be a finite number');
  if (typeof b !== "number" || !Number.isFinite(b)) return toolError('Invalid arguments: "b" must be a finite number');
  if (!Number.isFinite(a + b)) return toolError(`Invalid arguments: ${a} + ${b} is out of range`);
  return { result: { content: [{ type: "text", text: `${a} + ${b} = ${a + b}` }] } };
}
function discover(params) {
  const meta = isObject(params._meta) ? params._meta : {};
  const client = isObject(meta[CLIENT_INFO_KEY]) ? meta[CLIENT_INFO_KEY] : {};
  log(`server/discover: client=${show(client.name)} ${show(client.version)} protocol=${show(meta[PROTOCOL_VERSION_KEY])}`);
  return { result: { supportedVersions: SUPPORTED_VERSIONS, capabilities: CAPABILITIES, ...CACHE_HINTS, ...MODERN_FIELDS } };
}
var handlers = {
  initialize,
  ping: () => ({ result: {} }),
  // A 2026-07-28 method, answered the same with or without `_meta` and an earlier initialize, so that any
  // client can probe it (2026-07-28 basic/transports/stdio §Backward Compatibility).
  "server/discover": discover,
  "tools/list": (_params, era) => ({ result: { tools: TOOLS, ...era === "modern" ? CACHE_HINTS : {} } }),
  "tools/call": callTool
};
var legacyMethods = new Map(Object.entries(handlers));
var modernMethods = new Map([...legacyMethods].filter(([method]) => method !== "initialize" && method !== "ping"));
function serve(method, params) {
  const meta = isObject(params._meta) ? params._meta : {};
  const version = meta[PROTOCOL_VERSION_KEY];
  const era = version === void 0 || LEGACY_VERSIONS.some((legacy) => legacy === version) ? "legacy" : "modern";
  if (era === "modern") {
    if (typeof version !== "string") return fail(INVALID_PARAMS, `Invalid params: _meta["${PROTOCOL_VERSION_KEY}"] must be a string`);
    if (version !== MODERN_VERSION) {
      return fail(UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version", { supported: SUPPORTED_VERSIONS, requested: version });
    }
    if (!isObject(meta[CLIENT_CAPABILITIES_KEY])) return fail(INVALID_PARAMS, `Invalid params: _meta["${CLIENT_CAPABILITIES_KEY}"] is required`);
  }
  const handler = (era === "modern" ? modernMethods : legacyMethods).get(method);
  if (handler === void 0) return fail(METHOD_NOT_FOUND, `Method not found: ${method}`);
  const outcome = handler(params, era);
  return era === "modern" && "result" in outcome ? { result: { ...outcome.result, ...MODERN_FIELDS } } : outcome;
}
function answer(message) {
  if (!isObject(message)) return { jsonrpc: "2.0", id: null, ...fail(INVALID_REQUEST, "Invalid Request: not a JSON object") };
  if (!Object.hasOwn(message, "method") && (Object.hasOwn(message, "result") || Object.hasOwn(message, "error"))) return void 0;
  const id = isRequestId(message.id) ? message.id : null;
  const invalid = (reason) => ({ jsonrpc: "2.0", id, ...fail(INVALID_REQUEST, `Invalid Request: ${reason}`) });
  if (message.jsonrpc !== "2.0") return invalid('"jsonrpc" must be "2.0"');
  const { method, params = {} } = message;
  if (!Object.hasOwn(message, "method")) return invalid('no "method"');
  if (typeof method !== "string") return invalid('"method" must be a string');
  if (!isObject(params) && !Array.isArray(params)) return invalid('"params" must be an object or an array');
  if (!Object.hasOwn(message, "id")) {
    if (method === "notifications/initialized") log("client initialized");
    return void 0;
  }
  if (id === null) return invalid('"id" must be a string or an integer');
  return { jsonrpc: "2.0", id, ...serve(method, isObject(params) ? params : {}) };
}
function reply(line) {
  if (line.trim() === "") return "";
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return toLine({ jsonrpc: "2.0", id: null, ...fail(PARSE_ERROR, "Parse error") });
  }
  if (!Array.isArray(message)) return toLine(answer(message));
  if (message.length === 0) return toLine({ jsonrpc: "2.0", id: null, ...fail(INVALID_REQUEST, "Invalid Request: empty batch") });
  const answers = message.map(answer).filter((response) => response !== void 0);
  return answers.length === 0 ? "" : toLine(answers);
}
function toLine(message) {
  return message === void 0 ? "" : `${JSON.stringify(message)}
`;
}
var partial = "";
var overlong = false;
function extend(text) {
  overlong ||= partial.length + text.length > MAX_LINE_LENGTH;
  partial = overlong ? "" : partial + text;
}
function endLine() {
  const out = overlong ? toLine({ jsonrpc: "2.0", id: null, ...fail(INVALID_REQUEST, "Invalid Request: line too long") }) : reply(partial);
  partial = "";
  overlong = false;
  return out;
}
function send(out) {
  if (out === "" || process.stdout.write(out)) return;
  process.stdin.pause();
  process.stdout.once("drain", () => process.stdin.resume());
}
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  const end = chunk.lastIndexOf("\n");
  if (end === -1) return extend(chunk);
  const [first = "", ...rest] = chunk.slice(0, end).split("\n");
  extend(first);
  send(endLine() + rest.map(reply).join(""));
  extend(chunk.slice(end + 1));
});
process.stdin.on("end", () => send(endLine()));
process.stdout.on("error", () => process.exit(0));
process.stderr.on("error", () => {
});
log("stdio server started — waiting for JSON-RPC messages on stdin");
