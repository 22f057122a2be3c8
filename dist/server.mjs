#!/usr/bin/env node

// server.ts
import process from "node:process";
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
    // The schema has made sure that a and b are numbers. It cannot say "finite", and JSON.parse
    // reads 1e400 as Infinity; nor can it say that the sum must fit.
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
var LEGACY = { modern: false, meta: {} };
var SERVER_INFO = { name: "json-rpc-study", version: "0.1.0" };
var LEGACY_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
var CAPABILITIES = { tools: {} };
var PARSE_ERROR = -32700;
var INVALID_REQUEST = -32600;
var METHOD_NOT_FOUND = -32601;
var INVALID_PARAMS = -32602;
var INTERNAL_ERROR = -32603;
function isObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
function isRequestId(value) {
  return typeof value === "string" || Number.isSafeInteger(value);
}
function checkArguments(schema, args) {
  const missing = schema.required?.find((name) => !Object.hasOwn(args, name));
  if (missing !== void 0) return `"${missing}" is required`;
  for (const name in schema.properties) {
    const type = schema.properties[name]?.type ?? "";
    const value = args[name];
    const actual = Array.isArray(value) ? "array" : value === null ? "null" : typeof value;
    const fits = type === "integer" ? Number.isInteger(value) : actual === type;
    if (!Object.hasOwn(args, name) || fits) continue;
    return `"${name}" must be ${/^[aeiou]/.test(type) ? "an" : "a"} ${type}`;
  }
  return void 0;
}
function failure(code, message, data) {
  return { error: data === void 0 ? { code, message } : { code, message, data } };
}
function response(id, outcome) {
  return { jsonrpc: "2.0", id, ...outcome };
}
function invalidRequest(reason) {
  return failure(INVALID_REQUEST, `Invalid Request: ${reason}`);
}
function invalidParams(reason) {
  return failure(INVALID_PARAMS, `Invalid params: ${reason}`);
}
function internalError(method, error) {
  log(`${show(method)} failed: ${describeError(error)}`);
  return failure(INTERNAL_ERROR, "Internal error");
}
function log(text) {
  process.stderr.write(`[server] ${text}
`);
}
function show(value) {
  if (typeof value === "number" || value === null) return String(value);
  if (typeof value !== "string") return `(${typeof value})`;
  const escape = (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`;
  return JSON.stringify(value).replace(/[\p{Cc}\u2028\u2029]/gu, escape);
}
function describeError(error) {
  return error instanceof Error ? error.stack ?? error.message : String(error);
}
function logClient(method, clientInfo, protocolVersion) {
  const client = isObject(clientInfo) ? clientInfo : {};
  const who = `${show(client.name)} ${show(client.version)}`;
  log(`${method}: client=${who} protocol=${show(protocolVersion)}`);
}
var clientCapabilities;
function initialize(params) {
  logClient("initialize", params.clientInfo, params.protocolVersion);
  clientCapabilities = params.capabilities;
  const asked = LEGACY_VERSIONS.find((version) => version === params.protocolVersion);
  const protocolVersion = asked ?? LEGACY_VERSIONS[0];
  return { result: { protocolVersion, capabilities: CAPABILITIES, serverInfo: SERVER_INFO } };
}
function listTools() {
  return { result: { tools: TOOLS.map(({ handler, ...definition }) => definition) } };
}
function callTool(params, id, era) {
  const { name, arguments: args = {} } = params;
  if (typeof name !== "string") return invalidParams('"name" must be a string');
  if (!isObject(args)) return invalidParams('"arguments" must be an object');
  const tool = TOOLS.find((candidate) => candidate.name === name);
  if (tool === void 0) return failure(INVALID_PARAMS, `Unknown tool: ${name}`);
  const problem = checkArguments(tool.inputSchema, args);
  if (problem !== void 0) return { result: toolResult(`Invalid arguments: ${problem}`, true) };
  const retry = era.modern ? answersOf(params, name, args) : void 0;
  if (retry !== void 0 && "error" in retry) return retry;
  const alone = tool.handler.length < 2 && retry === void 0;
  const call = alone ? void 0 : new ToolCall(era, retry?.answers);
  let returned;
  try {
    returned = tool.handler(args, call ?? NO_CONTEXT);
  } catch (error) {
    call?.end();
    return { result: toolError(name, error) };
  }
  if (returned instanceof Promise) return settle(returned, id, name, args, call);
  call?.end();
  return { result: resultOf(name, returned) };
}
var NO_CONTEXT = {
  signal: new AbortController().signal,
  progress: () => {
  },
  elicit: () => Promise.reject(new Error("This handler declared no context"))
};
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
  const plain = aborted || error instanceof ElicitationError;
  const said = plain ? error.message : describeError(error);
  log(`tool ${show(name)} ${aborted ? "stopped" : "failed"}: ${said}`);
  return toolResult(error instanceof Error ? error.message : String(error), true);
}
var METHODS = {
  initialize,
  ping: () => ({ result: {} }),
  "tools/list": listTools,
  "tools/call": callTool,
  // The 2026-07-28 era's probe, answered in any era (below the stop line).
  "server/discover": discover
};
var NOTIFICATIONS = /* @__PURE__ */ new Map([
  ["notifications/initialized", () => log("client initialized")],
  // A call in flight is stopped by its request id (below the stop line).
  ["notifications/cancelled", cancel]
]);
function serve({ id, method, params }, era) {
  const handler = Object.hasOwn(METHODS, method) ? METHODS[method] : void 0;
  if (handler === void 0) return failure(METHOD_NOT_FOUND, `Method not found: ${method}`);
  try {
    return handler(params, id, era);
  } catch (error) {
    return internalError(method, error);
  }
}
function classify(value) {
  if (!isObject(value)) return { kind: "invalid", id: null, reason: "not a JSON object" };
  const answers = Object.hasOwn(value, "result") || Object.hasOwn(value, "error");
  if (answers && !Object.hasOwn(value, "method")) return { kind: "response", response: value };
  const id = isRequestId(value.id) ? value.id : null;
  const invalid = (reason) => ({ kind: "invalid", id, reason });
  const { jsonrpc, method, params = {} } = value;
  if (jsonrpc !== "2.0") return invalid('"jsonrpc" must be "2.0"');
  if (typeof method !== "string") return invalid('"method" must be a string');
  const named = isObject(params) ? params : {};
  const structured = isObject(params) || Array.isArray(params);
  if (!structured) return invalid('"params" must be an object or an array');
  if (!Object.hasOwn(value, "id")) return { kind: "notification", jsonrpc, method, params: named };
  if (id === null) return invalid('"id" must be a string or an integer');
  return { kind: "request", jsonrpc, id, method, params: named };
}
function respond(value) {
  const message = classify(value);
  if (message.kind === "invalid") return response(message.id, invalidRequest(message.reason));
  if (message.kind === "notification") NOTIFICATIONS.get(message.method)?.(message.params);
  if (message.kind === "response") receive(message.response);
  if (message.kind !== "request") return void 0;
  const served = message.params._meta === void 0 ? serve(message, LEGACY) : serveInEra(message);
  if (served instanceof Promise) return later(message, served);
  return response(message.id, served);
}
var MAX_LINE_BYTES = 64 * 1024 * 1024;
var BLANK_LINE = /^[ \t\n\r]*$/;
var OPENING_PIECE = /^[ \t\r]*[{[][ \t\r]*$/;
var UTF8 = new TextDecoder("utf-8", { fatal: true });
var LineSplitter = class {
  /** The line whose "\n" has not come yet, as the pieces it came in. */
  #pieces = [];
  /** Its length so far, in bytes, including any that were not held. */
  #size = 0;
  /** Returns the lines a chunk completes, without their "\n". */
  transform(chunk) {
    const lines = [];
    let start = 0;
    for (let end = chunk.indexOf(10); end !== -1; end = chunk.indexOf(10, start)) {
      this.#hold(chunk.subarray(start, end));
      lines.push(this.#take());
      start = end + 1;
    }
    this.#hold(chunk.subarray(start));
    return lines;
  }
  /** Returns the last line, if the input ended after it without a "\n". */
  flush() {
    return this.#size === 0 ? [] : [this.#take()];
  }
  /** Adds a piece to the line, holding its bytes only while the line is within the cap. */
  #hold(piece) {
    this.#size += piece.length;
    if (this.#size <= MAX_LINE_BYTES) this.#pieces.push(piece);
  }
  /** Ends the line and hands it over, as text when it is within the cap and UTF-8. */
  #take() {
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
};
var splitter = new LineSplitter();
function answer(line) {
  if (typeof line !== "string") return response(null, line);
  let value;
  try {
    value = JSON.parse(line);
  } catch {
    if (BLANK_LINE.test(line)) return void 0;
    if (OPENING_PIECE.test(line)) log("each message must be on one line, not pretty-printed");
    return response(null, failure(PARSE_ERROR, "Parse error"));
  }
  return Array.isArray(value) ? answerBatch(value) : respond(value);
}
function write(messages) {
  const text = messages.map((message) => `${JSON.stringify(message)}
`).join("");
  const flowing = process.stdout.write(text);
  if (!flowing && !process.stdin.isPaused()) {
    process.stdin.pause();
    process.stdout.once("drain", () => process.stdin.resume());
  }
}
function send(lines) {
  const ready = [];
  for (const line of lines) {
    const reply = answer(line);
    if (reply instanceof Promise) writeLater(reply);
    else if (reply !== void 0) ready.push(reply);
  }
  if (ready.length > 0) write(ready);
}
process.stdin.on("data", (chunk) => send(splitter.transform(chunk)));
process.stdin.on("end", async () => {
  send(splitter.flush());
  if (awaiting.size > 0) unanswerable();
  if (pending.size > 0) await Promise.all(pending);
  process.stdout.write("", () => process.exit(0));
});
process.stdout.on("error", () => process.exit(0));
process.stderr.on("error", () => {
});
process.on("unhandledRejection", (error) => log(`unhandled rejection: ${describeError(error)}`));
log("stdio server started — waiting for JSON-RPC messages on stdin");
function answerBatch(batch) {
  if (batch.length === 0) return response(null, invalidRequest("empty batch"));
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
var MODERN_METHODS = ["server/discover", "tools/list", "tools/call"];
var PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion";
var CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo";
var CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities";
var SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo";
var MODERN_FIELDS = { resultType: "complete", _meta: { [SERVER_INFO_KEY]: SERVER_INFO } };
var CACHE_HINTS = { ttlMs: 36e5, cacheScope: "public" };
var UNSUPPORTED_PROTOCOL_VERSION = -32022;
function serveInEra(request) {
  const { method, params } = request;
  const era = eraOf(isObject(params._meta) ? params._meta : {});
  if (!("modern" in era)) return era;
  if (!era.modern) return serve(request, era);
  const removed = !MODERN_METHODS.includes(method);
  if (removed) return failure(METHOD_NOT_FOUND, `Method not found: ${method}`);
  const served = serve(request, era);
  if (!(served instanceof Promise)) return inEra(method, served);
  return served.then((done) => done === void 0 ? void 0 : inEra(method, done));
}
function eraOf(meta) {
  const version = meta[PROTOCOL_VERSION_KEY];
  const legacy = version === void 0 || LEGACY_VERSIONS.some((known) => known === version);
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
function inEra(method, outcome) {
  if ("error" in outcome) return outcome;
  const hints = method === "tools/list" ? CACHE_HINTS : {};
  const result = { ...outcome.result, ...hints, ...MODERN_FIELDS };
  if (outcome.result.resultType === "input_required") result.resultType = "input_required";
  return { result };
}
function discover(_params, _id, { meta }) {
  logClient("server/discover", meta[CLIENT_INFO_KEY], meta[PROTOCOL_VERSION_KEY]);
  const offer = { supportedVersions: SUPPORTED_VERSIONS, capabilities: CAPABILITIES };
  return { result: { ...offer, ...CACHE_HINTS, ...MODERN_FIELDS } };
}
var inFlight = /* @__PURE__ */ new Map();
var pending = /* @__PURE__ */ new Set();
var ToolCall = class {
  era;
  /** 2026-07-28: this round's elicitation (elicitation, below); undefined in a legacy era. */
  round;
  /** The client's token for this call's progress, until the call ends: then there is none. */
  #progressToken;
  #lastProgress = -Infinity;
  #controller;
  constructor(era, answers) {
    this.era = era;
    this.round = answers === void 0 ? void 0 : { answers, asked: 0, unanswered: {} };
    this.#progressToken = isRequestId(era.meta.progressToken) ? era.meta.progressToken : void 0;
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
    write([{ jsonrpc: "2.0", method: "notifications/progress", params }]);
  };
  /** A function of its own, as progress is; elicitation (below) asks. */
  elicit = (message, form) => elicit(this, message, form);
  /** Ends the call: its response is on its way, and progress stops. */
  end() {
    this.#progressToken = void 0;
  }
  /** Stops the call: its signal aborts. At the client's word it gets no response; at the end of
   * a round that asked for input, settle answers input_required. */
  cancel() {
    this.end();
    this.#controller ??= new AbortController();
    this.#controller.abort();
  }
};
async function settle(returned, id, name, args, call = new ToolCall(LEGACY)) {
  inFlight.set(id, call);
  const cancelled = new Promise((resolve) => {
    call.signal.addEventListener("abort", () => resolve(void 0));
  });
  const failed = (error) => toolError(name, error);
  const done = returned.then((value) => resultOf(name, value), failed);
  const result = await Promise.race([done, cancelled]);
  call.end();
  if (inFlight.get(id) === call) inFlight.delete(id);
  if (result !== void 0) return { result };
  return call.round === void 0 ? void 0 : inputRequired(name, args, call.round);
}
function later({ id, method }, served) {
  const failed = (error) => internalError(method, error);
  return served.catch(failed).then((done) => done === void 0 ? void 0 : response(id, done));
}
function writeLater(reply) {
  const written = reply.then((ready) => {
    if (ready !== void 0) write([ready]);
    pending.delete(written);
  });
  pending.add(written);
}
function cancel(params) {
  const { requestId, reason } = params;
  const call = isRequestId(requestId) ? inFlight.get(requestId) : void 0;
  const what = call === void 0 ? "ignored a cancellation of" : "cancelled";
  log(`${what} request ${show(requestId)}: ${show(reason)}`);
  call?.cancel();
}
var CANNOT_ELICIT = "This client cannot ask the user: it did not declare elicitation (form)";
var ELICIT_ACTIONS = ["accept", "decline", "cancel"];
var awaiting = /* @__PURE__ */ new Map();
var requestsSent = 0;
var ElicitationError = class extends Error {
  name = "ElicitationError";
};
function elicit(call, message, form) {
  const { modern, meta } = call.era;
  const capabilities = modern ? meta[CLIENT_CAPABILITIES_KEY] : clientCapabilities;
  if (!canElicit(capabilities)) return Promise.reject(new ElicitationError(CANNOT_ELICIT));
  const request = { method: "elicitation/create", params: { message, requestedSchema: form } };
  const asked = call.round === void 0 ? ask(call, request) : lookUp(call, call.round, request);
  return asked.then((value) => checkedAnswer(value, form));
}
function canElicit(capabilities) {
  if (!isObject(capabilities) || !isObject(capabilities.elicitation)) return false;
  const { form, url } = capabilities.elicitation;
  return form !== void 0 || url === void 0;
}
function ask(call, request) {
  const signal = call.signal;
  if (signal.aborted) return Promise.reject(signal.reason);
  requestsSent += 1;
  const id = `elicitation-${requestsSent}`;
  write([{ jsonrpc: "2.0", id, ...request }]);
  return new Promise((resolve, reject) => {
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
function lookUp(call, round, request) {
  round.asked += 1;
  const key = `elicitation-${round.asked}`;
  if (Object.hasOwn(round.answers, key)) return Promise.resolve(round.answers[key]);
  if (Object.keys(round.unanswered).length === 0) setImmediate(() => call.cancel());
  round.unanswered[key] = request;
  return new Promise(() => {
  });
}
function isElicitResult(value) {
  if (!isObject(value)) return false;
  const known = ELICIT_ACTIONS.some((action) => action === value.action);
  return known && (value.content === void 0 || isObject(value.content));
}
function checkedAnswer(value, form) {
  if (!isElicitResult(value)) throw new ElicitationError("The answer is not an ElicitResult");
  const problem = value.action === "accept" ? checkArguments(form, value.content ?? {}) : void 0;
  if (problem !== void 0) throw new ElicitationError(`The answer does not fit: ${problem}`);
  return value;
}
function receive(response2) {
  const { id, result, error } = response2;
  const waiting = isRequestId(id) ? awaiting.get(id) : void 0;
  if (!isRequestId(id) || waiting === void 0) {
    log(`ignored a response to ${show(id)}: no request of ours waits for it`);
    return;
  }
  awaiting.delete(id);
  const said = isObject(error) ? error.message : error;
  if (error === void 0) waiting.resolve(result);
  else waiting.reject(new ElicitationError(`The client answered with an error: ${show(said)}`));
}
function unanswerable() {
  const gone = new ElicitationError("The client closed its input before it answered");
  for (const waiting of awaiting.values()) waiting.reject(gone);
  awaiting.clear();
}
var FIRST_ROUND = { asked: [], answers: {} };
var signing;
function answersOf(params, name, args) {
  const { requestState, inputResponses = {} } = params;
  if (!isObject(inputResponses)) return invalidParams('"inputResponses" must be an object');
  const state = requestState === void 0 ? FIRST_ROUND : openState(requestState, name, args);
  if (state === void 0) return invalidParams('"requestState" is not one we wrote for this call');
  const answers = { ...state.answers };
  for (const [key, given] of Object.entries(inputResponses)) {
    const named = `inputResponses[${show(key)}]`;
    if (!state.asked.includes(key)) log(`ignored ${named}: it answers nothing we asked`);
    else if (!isElicitResult(given)) return invalidParams(`${named} is not an ElicitResult`);
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
async function signer() {
  const crypto = await import("node:crypto");
  signing ??= { crypto, key: crypto.randomBytes(32) };
  return signing;
}
function signature({ crypto, key }, name, args, body) {
  const call = JSON.stringify([name, args]);
  return crypto.createHmac("sha256", key).update(`${call}
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
