#!/usr/bin/env node

// server.ts
import { createInterface } from "node:readline";
import { once } from "node:events";
import { readFileSync } from "node:fs";
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
    // The schema is a promise the client may not keep: in JavaScript "1" + 2 is "12". Nor can
    // it say "finite": JSON.parse reads 1e400 as Infinity.
    handler: ({ a, b }) => {
      if (!isFiniteNumber(a)) return toolResult('Invalid arguments: "a" must be finite', true);
      if (!isFiniteNumber(b)) return toolResult('Invalid arguments: "b" must be finite', true);
      const sum = a + b;
      if (!isFiniteNumber(sum)) return toolResult(`Invalid arguments: ${a} + ${b} overflows`, true);
      return toolResult(`${a} + ${b} = ${sum}`, false);
    }
  }
];
function isFiniteNumber(value) {
  return typeof value === "number" && Number.isFinite(value);
}
function toolResult(text, isError) {
  const content = [{ type: "text", text }];
  return isError ? { content, isError } : { content };
}
var NO_CONTEXT = { signal: new AbortController().signal, progress: noProgress, elicit: noForm };
function noProgress(progress, total, message) {
}
function noForm(message, form, key) {
  return Promise.reject(new Error("This server cannot ask the user"));
}
var SERVER_INFO = { name: "json-rpc-study", version: "0.1.0" };
var CAPABILITIES = { tools: {} };
var LEGACY_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
var serve = (method, params, id) => METHODS.get(method)?.(params, id);
var runTool = (tool, args, params, id) => Promise.resolve(args).then((given) => tool.handler(given, NO_CONTEXT)).then((result) => ({ result }), (error) => ({ result: toolResult(String(error), true) }));
var answerBatch = (values) => respond(values);
var receive = (response2) => void 0;
var log = (text) => process.stderr.write(`[server] ${text}
`);
var startTransport = async () => {
  log("stdio server started — waiting for JSON-RPC messages on stdin");
  for await (const line of createInterface({ input: process.stdin })) send(await answer(line));
};
function isObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
function initialize({ clientInfo, protocolVersion: asked }) {
  log(`initialize: client=${JSON.stringify(clientInfo)} protocol=${JSON.stringify(asked)}`);
  const protocolVersion = LEGACY_VERSIONS.find((known) => known === asked) ?? LEGACY_VERSIONS[0];
  return { result: { protocolVersion, capabilities: CAPABILITIES, serverInfo: SERVER_INFO } };
}
function callTool(params, id) {
  const { name, arguments: args = {} } = params;
  const tool = TOOLS.find((candidate) => candidate.name === name);
  if (typeof name !== "string" || !isObject(args)) return failure(INVALID_PARAMS, NOT_A_CALL);
  if (tool === void 0) return failure(INVALID_PARAMS, `Unknown tool: ${name}`);
  return runTool(tool, args, params, id);
}
var NOT_A_CALL = 'Invalid params: "name" must be a string and "arguments" an object';
var METHODS = /* @__PURE__ */ new Map([
  ["initialize", initialize],
  ["ping", () => ({ result: {} })],
  ["tools/list", () => ({ result: { tools: TOOLS.map(({ handler, ...tool }) => tool) } })],
  ["tools/call", callTool]
]);
var NOTIFICATIONS = /* @__PURE__ */ new Map([
  ["notifications/initialized", () => log("client initialized")]
]);
var PARSE_ERROR = -32700;
var INVALID_REQUEST = -32600;
var METHOD_NOT_FOUND = -32601;
var INVALID_PARAMS = -32602;
var failure = (code, message) => ({ error: { code, message } });
var response = (id, outcome) => ({ jsonrpc: "2.0", id, ...outcome });
function respond(value) {
  const invalid = (id2, reason) => response(id2, failure(INVALID_REQUEST, `Invalid Request: ${reason}`));
  if (!isObject(value)) return invalid(null, "not a JSON object");
  const { jsonrpc, id: given, method, params = {} } = value;
  if (method === void 0 && ("result" in value || "error" in value)) return receive(value);
  const exact = typeof given === "string" || typeof given === "number" && Number.isSafeInteger(given);
  const id = exact ? given : null;
  if (jsonrpc !== "2.0") return invalid(id, '"jsonrpc" must be "2.0"');
  if (typeof method !== "string") return invalid(id, '"method" must be a string');
  const structured = typeof params === "object" && params !== null;
  if (!structured) return invalid(id, '"params" must be an object or an array');
  const named = isObject(params) ? params : {};
  if (given === void 0) NOTIFICATIONS.get(method)?.(named);
  if (given === void 0) return void 0;
  if (id === null) return invalid(null, '"id" must be a string or an integer');
  const served = serve(method, named, id) ?? failure(METHOD_NOT_FOUND, `Method not found: ${method}`);
  if (!(served instanceof Promise)) return response(id, served);
  return served.then((done) => done === void 0 ? void 0 : response(id, done));
}
function answer(line) {
  let value;
  try {
    value = JSON.parse(line);
  } catch {
    if (/^[ \t\r]*$/.test(line)) return void 0;
    return response(null, failure(PARSE_ERROR, "Parse error"));
  }
  return Array.isArray(value) ? answerBatch(value) : respond(value);
}
function send(message) {
  if (message !== void 0) process.stdout.write(`${JSON.stringify(message)}
`);
}
queueMicrotask(() => void startTransport());
startTransport = readStdin;
var MAX_LINE_BYTES = 64 * 1024 * 1024;
var MAX_WRITE = 1024 * 1024;
var INTERNAL_ERROR = -32603;
var UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
var LineSplitter = class {
  /** The line whose "\n" has not come yet, as the pieces it came in. */
  #pieces = [];
  /** Its length so far, in bytes, including any that were not held. */
  #size = 0;
  /** Returns the lines a chunk completes, without their "\n". */
  transform(chunk) {
    const last = chunk.lastIndexOf(10);
    if (last === -1) {
      this.#hold(chunk);
      return [];
    }
    const first = this.#size > 0 ? chunk.indexOf(10) : -1;
    const whole = first < last ? decodeLines(chunk.subarray(first + 1, last)) : [];
    const lines = first === -1 ? whole : [this.#end(chunk.subarray(0, first)), ...whole];
    this.#hold(chunk.subarray(last + 1));
    return lines;
  }
  /** Returns the last line, if the input ended after it without a "\n". */
  flush() {
    return this.#size === 0 ? [] : [this.#end(Buffer.alloc(0))];
  }
  /** Adds a piece to the open line, holding its bytes only while the line is within the cap. */
  #hold(piece) {
    this.#size += piece.length;
    if (this.#size <= MAX_LINE_BYTES && piece.length > 0) this.#pieces.push(piece);
  }
  /** Ends the open line with its last piece, and hands it over: its text, or the error that
   * answers it. */
  #end(piece) {
    this.#hold(piece);
    const size = this.#size;
    const bytes = Buffer.concat(this.#pieces);
    this.#pieces = [];
    this.#size = 0;
    if (size <= MAX_LINE_BYTES) return decodeLines(bytes)[0] ?? "";
    return failure(INVALID_REQUEST, `Invalid Request: line too long (${size} bytes)`);
  }
};
function decodeLines(bytes) {
  try {
    return UTF8.decode(bytes).split("\n");
  } catch {
    const pieces = bytes.toString("latin1").split("\n");
    if (pieces.length === 1) return [failure(PARSE_ERROR, "Parse error")];
    return pieces.flatMap((piece) => decodeLines(Buffer.from(piece, "latin1")));
  }
}
var OPENING_PIECE = /^[ \t\r]*[{[][ \t\r]*$/;
var ONE_LINE = "each message must be on one line, not pretty-printed";
function answerLine(line) {
  if (typeof line !== "string") return response(null, line);
  const text = line.charCodeAt(0) === 65279 ? line.slice(1) : line;
  if (text.length < 16 && OPENING_PIECE.test(text)) log(ONE_LINE);
  return answer(text);
}
function lineOf(reply) {
  try {
    return `${JSON.stringify(reply)}
`;
  } catch (error) {
    log(`a reply could not be written as JSON: ${String(error)}`);
    const id = Array.isArray(reply) ? null : reply.id;
    return `${JSON.stringify(response(id, failure(INTERNAL_ERROR, "Internal error")))}
`;
  }
}
function write(text) {
  const flowing = process.stdout.write(text);
  if (!flowing && !process.stdin.isPaused()) {
    process.stdin.pause();
    process.stdout.once("drain", () => process.stdin.resume());
  }
  return flowing;
}
var pending = /* @__PURE__ */ new Set();
function keep(work) {
  pending.add(work);
  void work.then(() => pending.delete(work));
}
function writeLater(reply) {
  keep(reply.then((ready) => {
    if (ready !== void 0) write(lineOf(ready));
  }));
}
function answerLines(lines, start = 0) {
  let text = "";
  for (let next = start; next < lines.length; next += 1) {
    const reply = answerLine(lines[next] ?? "");
    if (reply instanceof Promise) writeLater(reply);
    else if (reply !== void 0) text += lineOf(reply);
    if (text.length < MAX_WRITE) continue;
    const flowing = write(text);
    text = "";
    if (flowing) continue;
    const rest = () => answerLines(lines, next + 1);
    keep(new Promise((resolve) => process.stdout.once("drain", () => resolve(rest()))));
    return;
  }
  if (text !== "") write(text);
}
async function readStdin() {
  log("stdio server started — waiting for JSON-RPC messages on stdin");
  const splitter = new LineSplitter();
  process.stdin.on("data", (chunk) => answerLines(splitter.transform(chunk)));
  process.stdin.on("end", async () => {
    answerLines(splitter.flush());
    while (pending.size > 0) await Promise.all(pending);
    process.stdout.write("", () => process.exit(0));
  });
  process.stdout.on("error", () => process.exit(0));
}
process.stderr.on("error", () => {
});
METHODS.set("tools/call", (params, id) => argumentsProblem(params) ?? callTool(params, id));
function argumentsProblem({ name, arguments: args = {} }) {
  const tool = TOOLS.find((candidate) => candidate.name === name);
  if (tool === void 0 || !isObject(args)) return void 0;
  const problem = checkArguments(tool.inputSchema, args);
  if (problem === void 0) return void 0;
  return { result: toolResult(`Invalid arguments: ${problem}`, true) };
}
function checkArguments(schema, args) {
  const missing = schema.required?.find((name) => !Object.hasOwn(args, name));
  if (missing !== void 0) return `"${missing}" is required`;
  for (const [name, property] of Object.entries(schema.properties)) {
    const type = isObject(property) && typeof property.type === "string" ? property.type : "";
    const value = args[name];
    const actual = Array.isArray(value) ? "array" : value === null ? "null" : typeof value;
    const fits = type === "integer" ? Number.isInteger(value) : actual === type;
    if (!Object.hasOwn(args, name) || fits) continue;
    return `"${name}" must be ${/^[aeiou]/.test(type) ? "an" : "a"} ${type}`;
  }
  return void 0;
}
serve = serveSafely;
function serveSafely(method, params, id) {
  const failed = (error) => {
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
function describe(error) {
  return error instanceof Error ? error.stack ?? error.message : String(error);
}
var ClientError = class extends Error {
  name = "ClientError";
  outcome;
};
function runHandler(tool, args, context) {
  const failed = (error) => error instanceof ClientError && error.outcome ? error.outcome : { result: toolError(tool.name, error) };
  try {
    const returned = tool.handler(args, context);
    if (!(returned instanceof Promise)) return { result: resultOf(tool.name, returned) };
    return returned.then((value) => ({ result: resultOf(tool.name, value) }), failed);
  } catch (error) {
    return failed(error);
  }
}
function resultOf(name, value) {
  if (isCallToolResult(value)) return value;
  return toolError(name, `The tool returned ${whatIs(value)}, not a result with a content array`);
}
function isCallToolResult(value) {
  return isObject(value) && Array.isArray(value.content);
}
function whatIs(value) {
  if (value === void 0 || value === null) return String(value);
  if (isObject(value)) return `an object whose content is ${whatIs(value.content)}`;
  return Array.isArray(value) ? "an array" : `a ${typeof value}`;
}
function toolError(name, error) {
  const aborted = error instanceof Error && error.name === "AbortError";
  const refused = error instanceof ClientError;
  const said = aborted || refused ? error.message : describe(error);
  log(`tool ${JSON.stringify(name)} ${aborted ? "stopped" : "failed"}: ${said}`);
  return toolResult(error instanceof Error ? error.message : String(error), true);
}
log = (text) => writeLogEscaped(`[server] ${text}
`);
var UNPRINTABLE = /[\0-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
var MAX_LOG_BACKLOG = 1024 * 1024;
var droppedLogLines = 0;
function escapeForTerminal(text) {
  const escape = (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`;
  return text.replace(UNPRINTABLE, escape);
}
function writeLogEscaped(line) {
  if (process.stderr.writableLength > MAX_LOG_BACKLOG) {
    droppedLogLines += 1;
    if (droppedLogLines === 1) process.stderr.once("drain", sayDropped);
    return false;
  }
  return process.stderr.write(escapeForTerminal(line));
}
function sayDropped() {
  log(`dropped ${droppedLogLines} log lines: stderr was not read`);
  droppedLogLines = 0;
}
answerBatch = answerEntries;
function answerEntries(batch) {
  const empty = failure(INVALID_REQUEST, "Invalid Request: empty batch");
  if (batch.length === 0) return response(null, empty);
  const replies = batch.map(respond);
  const ready = (reply) => !(reply instanceof Promise);
  return replies.every(ready) ? batchOf(replies) : Promise.all(replies).then(batchOf);
}
function batchOf(replies) {
  const responses = replies.filter((reply) => reply !== void 0).flat();
  return responses.length === 0 ? void 0 : responses;
}
var MODERN_VERSION = "2026-07-28";
var SUPPORTED_VERSIONS = [MODERN_VERSION, ...LEGACY_VERSIONS];
var MODERN_METHODS = ["server/discover", "tools/list", "tools/call", "subscriptions/listen"];
var PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion";
var CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo";
var CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities";
var LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel";
var SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo";
var MODERN_FIELDS = { resultType: "complete", _meta: { [SERVER_INFO_KEY]: SERVER_INFO } };
var CACHE_HINTS = { ttlMs: 36e5, cacheScope: "public" };
var UNSUPPORTED_PROTOCOL_VERSION = -32022;
function invalidParams(reason) {
  return failure(INVALID_PARAMS, `Invalid params: ${reason}`);
}
var legacyCapabilities;
serve = serveInEra;
METHODS.set("initialize", (params) => {
  legacyCapabilities = params.capabilities;
  return initialize(params);
});
METHODS.set("server/discover", discover);
function serveInEra(method, params, id) {
  if (params._meta === void 0) return serveSafely(method, params, id);
  const era = eraOf(isObject(params._meta) ? params._meta : {});
  if (era !== "modern") return era === "legacy" ? serveSafely(method, params, id) : era;
  if (!MODERN_METHODS.includes(method)) return void 0;
  const served = serveSafely(method, params, id);
  if (served instanceof Promise) return served.then((done) => asModern(method, done));
  return asModern(method, served);
}
function eraOf(meta) {
  const version = meta[PROTOCOL_VERSION_KEY];
  if (version === void 0 || LEGACY_VERSIONS.some((known) => known === version)) return "legacy";
  const named = `_meta["${PROTOCOL_VERSION_KEY}"]`;
  if (typeof version !== "string") return invalidParams(`${named} must be a string`);
  if (version !== MODERN_VERSION) return unsupportedVersion(version);
  const required = `_meta["${CLIENT_CAPABILITIES_KEY}"] is required`;
  return isObject(meta[CLIENT_CAPABILITIES_KEY]) ? "modern" : invalidParams(required);
}
function unsupportedVersion(requested) {
  const data = { supported: SUPPORTED_VERSIONS, requested };
  const message = "Unsupported protocol version";
  return { error: { code: UNSUPPORTED_PROTOCOL_VERSION, message, data } };
}
function isModern(meta) {
  return isObject(meta) && meta[PROTOCOL_VERSION_KEY] === MODERN_VERSION;
}
function capabilitiesOf(meta) {
  return isObject(meta) && isModern(meta) ? meta[CLIENT_CAPABILITIES_KEY] : legacyCapabilities;
}
function asModern(method, outcome) {
  if (outcome === void 0 || "error" in outcome) return outcome;
  const hints = method === "tools/list" ? CACHE_HINTS : {};
  const result = { ...outcome.result, ...hints, ...MODERN_FIELDS };
  if (outcome.result.resultType === "input_required") result.resultType = "input_required";
  return { result };
}
function discover(params) {
  const meta = isObject(params._meta) ? params._meta : {};
  const [client, protocol] = [meta[CLIENT_INFO_KEY], meta[PROTOCOL_VERSION_KEY]];
  log(`server/discover: client=${JSON.stringify(client)} protocol=${JSON.stringify(protocol)}`);
  const offer = { supportedVersions: SUPPORTED_VERSIONS, capabilities: CAPABILITIES };
  return { result: { ...offer, ...CACHE_HINTS, ...MODERN_FIELDS } };
}
runTool = runInFlight;
NOTIFICATIONS.set("notifications/cancelled", cancel);
CAPABILITIES.logging = {};
METHODS.set("logging/setLevel", ({ level }) => {
  if (LEVEL_RANKS.indexOf(level) === -1) return invalidParams('"level" is not a log level');
  legacyLoggingLevel = level;
  return { result: {} };
});
var LOGGING_LEVELS = [
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency"
];
var LEVEL_RANKS = LOGGING_LEVELS;
var legacyLoggingLevel = "debug";
function isRequestId(value) {
  return typeof value === "string" || Number.isSafeInteger(value);
}
var inFlight = /* @__PURE__ */ new Map();
var takeCall = (call) => {
};
var ToolCall = class {
  /** The request's `_meta`: its progressToken, and in 2026-07-28 its era and the client. */
  meta;
  /** The client's token for this call's progress, until the call ends: then there is none. */
  #progressToken;
  #lastProgress = -Infinity;
  #controller;
  /** Sends a message of this call's to the client: its progress, our requests to the client. */
  send = send;
  constructor(meta) {
    this.meta = meta;
    const token = isObject(meta) ? meta.progressToken : void 0;
    this.#progressToken = isRequestId(token) ? token : void 0;
    takeCall(this);
  }
  get signal() {
    this.#controller ??= new AbortController();
    return this.#controller.signal;
  }
  /** A function of its own, not a method, so that a handler can take `{ progress }` out of its
   * context. It sends notifications/progress only while the call runs, with the request's
   * token, and only for a value greater than the last (basic/utilities/progress). */
  progress = (progress, total, message) => {
    const increases = isFiniteNumber(progress) && progress > this.#lastProgress;
    if (this.#progressToken === void 0 || !increases) return;
    this.#lastProgress = progress;
    const params = { progressToken: this.#progressToken, progress, total, message };
    this.send({ jsonrpc: "2.0", method: "notifications/progress", params });
  };
  /** Sends a log message while the call runs, at a level the client asked for: in 2026-07-28
   * only one this request's `_meta` names, and the message goes on this request's own stream
   * (2026-07-28 server/utilities/logging §Per-request log level). */
  log = (level, data, logger) => {
    const asked = isObject(this.meta) ? this.meta[LOG_LEVEL_KEY] : void 0;
    const least = LEVEL_RANKS.indexOf(isModern(this.meta) ? asked : legacyLoggingLevel);
    if (least === -1 || LEVEL_RANKS.indexOf(level) < least) return;
    this.send({ jsonrpc: "2.0", method: "notifications/message", params: { level, logger, data } });
  };
  /** In 2026-07-28, the round this call is, with the answers it was given (section 8). */
  round;
  /** What the call can ask the client, each answered as Asking the client (section 8) says. */
  // No `mode`: a form, in 2025-11-25 and later (URL mode is out of scope); 2025-06-18 has none.
  elicit = (message, form, key) => askClient(this, ELICITATION, { message, requestedSchema: form }, key).then((answer2) => checkedForm(answer2, form));
  sample = (request, key) => askClient(this, SAMPLING, request, key);
  roots = (key) => askClient(this, ROOTS, {}, key).then(({ roots }) => roots);
  /** Ends the call: its response is on its way, and nothing of the call's is sent after it. */
  end() {
    this.send = () => {
    };
  }
  /** Stops the call: its signal aborts, and it gets no response of its own. */
  cancel() {
    this.#controller ??= new AbortController();
    this.#controller.abort();
    this.end();
  }
};
function runInFlight(tool, args, params, id, call) {
  const context = tool.handler.length < 2 ? void 0 : call ?? new ToolCall(params._meta);
  const served = runHandler(tool, args, context ?? NO_CONTEXT);
  if (served instanceof Promise) return settle(served, id, context ?? new ToolCall(params._meta));
  context?.end();
  return served;
}
async function settle(served, id, call) {
  inFlight.set(id, call);
  const cancelled = new Promise((resolve) => {
    call.signal.addEventListener("abort", () => resolve(void 0));
  });
  const outcome = await Promise.race([served, cancelled]);
  call.end();
  if (inFlight.get(id) === call) inFlight.delete(id);
  return outcome;
}
function cancel({ requestId, reason }) {
  const call = isRequestId(requestId) ? inFlight.get(requestId) : void 0;
  const what = call === void 0 ? "ignored a cancellation of" : "cancelled";
  log(`${what} request ${JSON.stringify(requestId)}: ${JSON.stringify(reason)}`);
  call?.cancel();
}
process.on("unhandledRejection", (error) => log(`unhandled rejection: ${String(error)}`));
runTool = runAsking;
receive = receiveResponse;
process.stdin.on("end", () => queueMicrotask(() => {
  const gone = new ClientError("The client closed its input before it answered");
  for (const waiting of awaiting.values()) waiting.reject(gone);
  awaiting.clear();
}));
var ELICITATION = {
  method: "elicitation/create",
  name: "elicitation",
  isAnswer: isElicitResult,
  answer: "an ElicitResult"
};
var SAMPLING = {
  method: "sampling/createMessage",
  name: "sampling",
  isAnswer: isCreateMessageResult,
  answer: "a CreateMessageResult"
};
var ROOTS = {
  method: "roots/list",
  name: "roots",
  isAnswer: isListRootsResult,
  answer: "a ListRootsResult"
};
var MAX_QUESTIONS = 1e3;
var MISSING_CLIENT_CAPABILITY = -32021;
var awaiting = /* @__PURE__ */ new Map();
var requestsSent = 0;
var questionId = (name, count) => `${name}-${count}`;
function runAsking(tool, args, params, id) {
  if (tool.handler.length < 2) return runInFlight(tool, args, params, id);
  const retry = isModern(params._meta) ? answersOf(params, tool.name, args) : void 0;
  if (retry !== void 0 && "error" in retry) return retry;
  const round = retry === void 0 ? void 0 : { ...retry, asked: 0, unanswered: {} };
  const call = new ToolCall(params._meta);
  call.round = round;
  const served = runInFlight(tool, args, params, id, call);
  if (round === void 0 || !(served instanceof Promise)) return served;
  return served.then((done) => done ?? inputRequired(tool.name, args, round));
}
function askClient(call, ask, params, key) {
  if (!declares(capabilitiesOf(call.meta), ask.name)) {
    const refused = new ClientError(`This client does not offer ${ask.name}`);
    const data = { requiredCapabilities: { [ask.name]: {} } };
    const error = { code: MISSING_CLIENT_CAPABILITY, message: refused.message, data };
    if (isModern(call.meta)) refused.outcome = { error };
    return Promise.reject(refused);
  }
  const request = { method: ask.method, params };
  const named = key ?? `${ask.name}-${(call.round?.asked ?? 0) + 1}`;
  const asked = call.round === void 0 ? sendQuestion(call, ask.name, request) : lookUp(call, call.round, request, named);
  return asked.then((answer2) => {
    if (ask.isAnswer(answer2)) return answer2;
    const wrong = new ClientError(`The answer is not ${ask.answer}`);
    const given = `inputResponses[${JSON.stringify(named)}] is not ${ask.answer}`;
    if (call.round !== void 0) wrong.outcome = invalidParams(given);
    throw wrong;
  });
}
function declares(capabilities, name) {
  const declared = isObject(capabilities) ? capabilities[name] : void 0;
  if (!isObject(declared) || name !== "elicitation") return isObject(declared);
  return declared.form !== void 0 || declared.url === void 0;
}
function sendQuestion(call, name, request) {
  const signal = call.signal;
  if (signal.aborted) return Promise.reject(signal.reason);
  const tooMany = `${MAX_QUESTIONS} questions already wait for the client`;
  if (awaiting.size >= MAX_QUESTIONS) return Promise.reject(new ClientError(tooMany));
  requestsSent += 1;
  const id = questionId(name, requestsSent);
  call.send({ jsonrpc: "2.0", id, ...request });
  return new Promise((resolve, reject) => {
    awaiting.set(id, { resolve, reject });
    signal.addEventListener("abort", () => {
      if (!awaiting.delete(id)) return;
      reject(signal.reason);
      const params = { requestId: id, reason: "The tool call was cancelled" };
      call.send({ jsonrpc: "2.0", method: "notifications/cancelled", params });
    });
  });
}
function lookUp(call, round, request, key) {
  round.asked += 1;
  if (Object.hasOwn(round.answers, key)) return Promise.resolve(round.answers[key]);
  if (Object.keys(round.unanswered).length === 0) setImmediate(() => call.cancel());
  round.unanswered[key] = request;
  return new Promise(() => {
  });
}
function isElicitResult(value) {
  if (!isObject(value)) return false;
  const known = ["accept", "decline", "cancel"].some((action) => action === value.action);
  return known && (value.content === void 0 || isObject(value.content));
}
function isCreateMessageResult(value) {
  return isObject(value) && typeof value.model === "string" && isObject(value.content);
}
function isListRootsResult(value) {
  const roots = isObject(value) && Array.isArray(value.roots) ? value.roots : [void 0];
  return roots.every((root) => isObject(root) && typeof root.uri === "string");
}
function checkedForm(answer2, form) {
  const accepted = answer2.action === "accept";
  const problem = accepted ? checkArguments(form, answer2.content ?? {}) : void 0;
  if (problem !== void 0) throw new ClientError(`The answer does not fit: ${problem}`);
  return answer2;
}
function receiveResponse({ id, result, error }) {
  const waiting = isRequestId(id) ? awaiting.get(id) : void 0;
  if (isRequestId(id)) awaiting.delete(id);
  const [named, said] = [id, isObject(error) ? error.message : error].map((x) => JSON.stringify(x));
  if (waiting === void 0) log(`ignored a response to ${named}: no request of ours waits for it`);
  else if (error === void 0) waiting.resolve(result);
  else waiting.reject(new ClientError(`The client answered with an error: ${said}`));
  return void 0;
}
function answersOf(params, name, args) {
  const { requestState, inputResponses = {} } = params;
  if (!isObject(inputResponses)) return invalidParams('"inputResponses" must be an object');
  const state = requestState === void 0 ? FIRST_ROUND : openState(requestState, name, args);
  if (state === void 0) return invalidParams('"requestState" is not one we wrote for this call');
  const answers = { ...state.answers };
  for (const [key, given] of Object.entries(inputResponses)) {
    const named = `inputResponses[${JSON.stringify(key)}]`;
    if (!state.asked.includes(key)) log(`ignored ${named}: it answers nothing we asked`);
    else answers[key] = given;
  }
  return { answers };
}
async function inputRequired(name, args, round) {
  const inputRequests = round.unanswered;
  if (Object.keys(inputRequests).length === 0) return void 0;
  const state = { asked: Object.keys(inputRequests), answers: round.answers };
  const requestState = await sealState(name, args, state);
  return { result: { resultType: "input_required", inputRequests, requestState } };
}
var FIRST_ROUND = { asked: [], answers: {} };
var signing;
async function signer() {
  const crypto2 = await import("node:crypto");
  signing ??= { crypto: crypto2, key: crypto2.randomBytes(32) };
  return signing;
}
function signature({ crypto: crypto2, key }, name, args, body) {
  const call = JSON.stringify([name, args]);
  return crypto2.createHmac("sha256", key).update(`${call}
${body}`).digest("base64url");
}
async function sealState(name, args, state) {
  const body = Buffer.from(JSON.stringify(state)).toString("base64url");
  return `${body}.${signature(await signer(), name, args, body)}`;
}
function openState(requestState, name, args) {
  if (typeof requestState !== "string" || signing === void 0) return void 0;
  const [body, tag, ...more] = requestState.split(".");
  if (body === void 0 || tag === void 0 || more.length > 0) return void 0;
  const expected = Buffer.from(signature(signing, name, args, body));
  const given = Buffer.from(tag);
  const same = given.length === expected.length && signing.crypto.timingSafeEqual(given, expected);
  if (!same) return void 0;
  const state = JSON.parse(Buffer.from(body, "base64url").toString());
  if (!isObject(state) || !Array.isArray(state.asked) || !isObject(state.answers)) return void 0;
  return { asked: state.asked.filter((key) => typeof key === "string"), answers: state.answers };
}
var MAX_BODY_BYTES = 4 * 1024 * 1024;
var TIMEOUTS = {
  headersTimeout: 1e4,
  requestTimeout: 3e4,
  connectionsCheckingInterval: 1e3
};
var HEADER_MISMATCH = -32020;
var allowedHosts = /* @__PURE__ */ new Set(["localhost", "127.0.0.1", "::1"]);
var authorized = (authorization) => true;
if (process.argv.includes("--http")) {
  const [host, port] = httpAddress(process.argv.slice(2));
  startTransport = () => listen(host, port).catch((error) => {
    log(`cannot serve HTTP on ${host}:${port}: ${error.message}`);
    process.exit(1);
  });
  METHODS.set("subscriptions/listen", listenForChanges);
  NOTIFICATIONS.delete("notifications/cancelled");
  questionId = (name, count) => `${name}-${count}-${crypto.randomUUID()}`;
}
function httpAddress(words) {
  let [address, understood] = [null, true];
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
async function listen(host, port) {
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
function useSecrets(crypto2) {
  const { MCP_BEARER_TOKEN: token, MCP_STATE_SECRET: secret, MCP_STATE_SECRET_FILE: file } = process.env;
  const digest = (text) => crypto2.createHash("sha256").update(text).digest();
  const bearer = digest(`Bearer ${token}`);
  if (token) authorized = (text = "") => crypto2.timingSafeEqual(digest(text), bearer);
  const shared = file === void 0 ? secret : readFileSync(file, "utf8").trim();
  if (shared !== void 0 && shared !== "") signing = { crypto: crypto2, key: Buffer.from(shared) };
}
async function handle(httpRequest, httpResponse) {
  const refusal = refusalOf(httpRequest);
  const body = refusal === void 0 ? await readBody(httpRequest) : void 0;
  if (body !== void 0) return answerPost(httpRequest, httpResponse, body);
  const [status, message, headers] = refusal ?? [413, "Payload Too Large", { connection: "close" }];
  sendReply(httpResponse, status, response(null, failure(INVALID_REQUEST, message)), headers);
}
function refusalOf(httpRequest) {
  const { host = "", origin = host, authorization } = httpRequest.headers;
  if (!allowedHosts.has(hostnameOf(host))) return [403, `Forbidden: Host ${host}`];
  if (!allowedHosts.has(hostnameOf(origin))) return [403, `Forbidden: Origin ${origin}`];
  if (httpRequest.url?.split("?")[0] !== "/mcp") return [404, "Not Found: the endpoint is /mcp"];
  if (!authorized(authorization)) return [401, "Unauthorized", { "www-authenticate": "Bearer" }];
  if (httpRequest.method !== "POST") return [405, "Method Not Allowed", { allow: "POST" }];
  return void 0;
}
function hostnameOf(value) {
  const name = /^(?:[a-z][a-z0-9+.-]*:\/\/)?(?:\[([^\]]*)\]|([^:/]*))/i.exec(value);
  return (name?.[1] ?? name?.[2] ?? "").toLowerCase();
}
async function readBody(httpRequest) {
  const chunks = [];
  let size = 0;
  httpRequest.on("data", (chunk) => {
    size += chunk.length;
    if (size <= MAX_BODY_BYTES) chunks.push(chunk);
  });
  await once(httpRequest, "end");
  return size > MAX_BODY_BYTES ? void 0 : Buffer.concat(chunks);
}
function answerPost(httpRequest, httpResponse, body) {
  let value;
  try {
    value = JSON.parse(UTF8.decode(body).replace(/^\uFEFF/, ""));
  } catch {
    return sendReply(httpResponse, 400, response(null, failure(PARSE_ERROR, "Parse error")));
  }
  const problem = headerProblem(httpRequest.headers, value);
  const id = isObject(value) && isRequestId(value.id) ? value.id : null;
  if (problem !== void 0) return sendReply(httpResponse, 400, response(id, problem));
  const calls = [];
  takeCall = (call) => {
    call.send = (message) => sendEvent(httpResponse, JSON.stringify(message));
    calls.push(call);
  };
  const replied = Array.isArray(value) ? answerBatch(value) : respond(value);
  takeCall = () => {
  };
  httpResponse.on("close", () => {
    if (!httpResponse.writableFinished) for (const call of calls) call.cancel();
  });
  const modern = httpRequest.headers["mcp-protocol-version"] === MODERN_VERSION;
  if (!(replied instanceof Promise)) return finish(httpResponse, replied, modern);
  void replied.then((ready) => finish(httpResponse, ready, modern));
}
function headerProblem(headers, value) {
  const version = headers["mcp-protocol-version"];
  const known = SUPPORTED_VERSIONS.some((supported) => supported === version);
  if (version !== void 0 && !known) return unsupportedVersion(String(version));
  const batch = Array.isArray(value) && version !== void 0 && version !== "2025-03-26";
  if (batch) return failure(INVALID_REQUEST, "Invalid Request: a batch is 2025-03-26's alone");
  if (!isObject(value) || value.id === void 0) return void 0;
  const params = isObject(value.params) ? value.params : {};
  const meta = isObject(params._meta) ? params._meta : {};
  if (version !== MODERN_VERSION && !isModern(meta)) return void 0;
  const required = `_meta["${PROTOCOL_VERSION_KEY}"] is required`;
  if (meta[PROTOCOL_VERSION_KEY] === void 0) return invalidParams(required);
  const mirrored = [
    ["MCP-Protocol-Version", version, meta[PROTOCOL_VERSION_KEY]],
    ["Mcp-Method", headers["mcp-method"], value.method]
  ];
  const name = headers["mcp-name"];
  const encoded = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/.exec(String(name))?.[1];
  const decoded = encoded === void 0 ? name : Buffer.from(encoded, "base64").toString();
  if (value.method === "tools/call") mirrored.push(["Mcp-Name", decoded, params.name]);
  const [era, wrong] = [eraOf(meta), mirrored.find(([, header2, body2]) => header2 !== body2)];
  if (wrong === void 0) return typeof era === "string" ? void 0 : era;
  const [header, body] = wrong.slice(1).map((part) => JSON.stringify(part) ?? "none");
  const message = `Header mismatch: ${wrong[0]} header ${header} does not match body value ${body}`;
  return failure(HEADER_MISMATCH, message);
}
function sendEvent(httpResponse, json) {
  if (httpResponse.writableEnded || httpResponse.destroyed) return;
  if (!httpResponse.headersSent) {
    const headers = { "cache-control": "no-cache", "x-accel-buffering": "no" };
    httpResponse.writeHead(200, { "content-type": "text/event-stream", ...headers });
    const keepAlive = setInterval(() => httpResponse.write(": keep-alive\n\n"), 15e3);
    httpResponse.on("close", () => clearInterval(keepAlive));
  }
  httpResponse.write(`event: message
data: ${json}

`);
}
function finish(httpResponse, reply, modern) {
  const streaming = httpResponse.headersSent;
  if (streaming && reply !== void 0) sendEvent(httpResponse, lineOf(reply).trimEnd());
  if (httpResponse.writableEnded || httpResponse.destroyed) return;
  if (streaming) httpResponse.end();
  else if (reply === void 0) httpResponse.writeHead(202).end();
  else sendReply(httpResponse, statusOf(reply, modern), reply);
}
function statusOf(reply, modern) {
  const code = Array.isArray(reply) || !("error" in reply) ? void 0 : reply.error.code;
  if (code === METHOD_NOT_FOUND && modern) return 404;
  const refused = [INVALID_REQUEST, UNSUPPORTED_PROTOCOL_VERSION, MISSING_CLIENT_CAPABILITY];
  return refused.some((refusal) => refusal === code) ? 400 : 200;
}
function sendReply(httpResponse, status, reply, headers = {}) {
  const json = lineOf(reply);
  const type = { "content-type": "application/json", "content-length": Buffer.byteLength(json) };
  httpResponse.writeHead(status, { ...type, ...headers }).end(json);
}
function listenForChanges({ _meta }, id) {
  const call = new ToolCall(_meta);
  const params = { _meta: { "io.modelcontextprotocol/subscriptionId": id }, notifications: {} };
  call.send({ jsonrpc: "2.0", method: "notifications/subscriptions/acknowledged", params });
  return settle(new Promise(() => {
  }), id, call);
}
