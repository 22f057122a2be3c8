#!/usr/bin/env node

// wrap.ts
import { spawn } from "node:child_process";
import { isUtf8 } from "node:buffer";
import { openSync, watch, watchFile, writeSync } from "node:fs";
import {
  createServer,
  request as httpRequest
} from "node:http";
import { request as httpsRequest } from "node:https";
import { access, open, stat, writeFile } from "node:fs/promises";
import { EventEmitter, once } from "node:events";
import { createInterface } from "node:readline";
import { constants } from "node:os";
import { basename, dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath, urlToHttpOptions } from "node:url";
import { parseArgs } from "node:util";
var PIPES_GRACE_MS = 2e3;
var CANNOT_START = 127;
function isRecord(value) {
  return typeof value === "object" && value !== null;
}
function classify(value) {
  if (!isRecord(value) || Array.isArray(value) || value.jsonrpc !== "2.0") return { kind: "other" };
  const { id, method, params, result, error } = value;
  const validId = typeof id === "string" || typeof id === "number";
  const hasMethod = typeof method === "string";
  if (hasMethod && validId) return { kind: "request", id, method, params };
  if (hasMethod && id === void 0) return { kind: "notification", method, params };
  const answers = result !== void 0 !== (error !== void 0);
  if (answers && (validId || id === null)) return { kind: "response", id, result, error };
  return { kind: "other" };
}
function attempt(run) {
  try {
    return run();
  } catch {
    return void 0;
  }
}
function messagesOf(text) {
  const value = attempt(() => JSON.parse(text));
  return Array.isArray(value) && value.length > 0 ? value.map(classify) : [classify(value)];
}
var UNPRINTABLE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
function printable(text) {
  const escaped = (found) => `\\u${found.charCodeAt(0).toString(16).padStart(4, "0")}`;
  return text.replace(UNPRINTABLE, escaped);
}
function warn(text) {
  process.stderr.write(printable(`wrap: ${text}
`));
}
function exchangeNote(exchange) {
  return `<${exchange}>`;
}
function headNote(exchange, what, fields = []) {
  return [`${exchangeNote(exchange)} ${what}`, ...fields].join(" · ");
}
function pairKey(mark, id, exchange) {
  const within = mark === "→" && exchange !== void 0 ? `${exchangeNote(exchange)} ` : "";
  return `${mark} ${within}${JSON.stringify(id)}`;
}
var OPPOSITE = { "→": "←", "←": "→" };
var PENDING_LIMIT = 5e4;
function keepPending(pending, key, request) {
  pending.set(key, request);
  if (pending.size <= PENDING_LIMIT) return false;
  for (const oldest of pending.keys()) {
    if (pending.size <= PENDING_LIMIT * 0.9) break;
    pending.delete(oldest);
  }
  return true;
}
var TAGS = ["bytes", "not UTF-8", "CRLF", "no request", "id in use", "not JSON-RPC"];
function notesShown(elapsed, tags, bytes) {
  const shown = TAGS.filter((tag) => tags.has(tag)).map((tag) => tag === "bytes" ? `[${bytes} bytes]` : `[${tag}]`);
  return elapsed === void 0 ? shown : [`(${elapsed.toFixed(1)} ms)`, ...shown];
}
var NOTE = String.raw`<\d+> |\(\d+(?:\.\d+)? ms\) |\[[A-Za-z\d][\w -]*\] `;
var LOOKS_LIKE_NOTE = /^(?:[(|]|\[[A-Za-z\d]|<\d)/;
function startNote(pid, commandLine) {
  return `start pid ${pid}: ${commandLine}`;
}
function listenNote(local, upstream) {
  return `listen ${local} → ${upstream}`;
}
function exitNote(code, signal) {
  return signal === null ? `exit code ${code}` : `exit signal ${signal}`;
}
var MARKS = ["→", "←", "!", "#"];
var EVENT_HEAD = new RegExp(String.raw`^\S+ (?:([!#]) |([→←]) ((?:${NOTE})*)(?:\| )?)`);
function parseEvent(line) {
  const head = EVENT_HEAD.exec(line);
  const mark = MARKS.find((each) => each === (head?.[1] ?? head?.[2]));
  if (head === null || mark === void 0) return void 0;
  const text = line.slice(head[0].length);
  const notes = head[3] ?? "";
  const tags = notes === "" ? [] : Array.from(notes.matchAll(/\[(.+?)\] /g), ([, tag = ""]) => tag);
  const elapsed = notes === "" ? void 0 : /\((\S+) ms\) /.exec(notes)?.[1];
  const exchange = notes === "" ? void 0 : /<(\d+)> /.exec(notes)?.[1];
  const messages = mark === "→" || mark === "←" ? messagesOf(text) : [];
  return {
    time: line.slice(0, line.indexOf(" ")),
    mark,
    elapsed,
    tags,
    text,
    messages,
    exchange: exchange === void 0 ? void 0 : Number(exchange)
  };
}
function startedCommand(event) {
  return event.mark === "#" ? /^(?:start pid \d+: |listen )(.*)/s.exec(event.text)?.[1] : void 0;
}
var LARGE_LINE = 1048576;
var LONGEST_LOGGED = 16 * LARGE_LINE;
var NEWLINE = Buffer.from("\n");
function keepPiece(unended, piece) {
  const room = LONGEST_LOGGED - unended.size;
  if (room > 0) unended.pieces.push(piece.length > room ? piece.subarray(0, room) : piece);
  unended.size += piece.length;
}
function takeLine(unended) {
  const { pieces, size } = unended;
  unended.pieces = [];
  unended.size = 0;
  const kept = pieces.length === 1 && pieces[0] !== void 0 ? pieces[0] : Buffer.concat(pieces);
  return { kept, size };
}
function chunkEvents(tap, crossing) {
  const { chunk, now } = crossing;
  const lineEnded = crossing.events === true ? eventStreamLine : lineEvent;
  for (let start = 0; start < chunk.length; ) {
    const end = chunk.indexOf(10, start);
    const piece = chunk.subarray(start, end === -1 ? chunk.length : end);
    keepPiece(crossing.line, piece);
    if (end === -1) return;
    lineEnded(tap, crossing, now);
    start = end + 1;
  }
}
function eventStreamLine(tap, crossing, now) {
  const { kept, size } = takeLine(crossing.line);
  const line = kept.at(-1) === 13 ? kept.subarray(0, -1) : kept;
  if (line.length === 0 && crossing.data.size > 0) lineEvent(tap, crossing, now, crossing.data);
  if (line.toString("latin1", 0, 5) !== "data:") return;
  keepPiece(crossing.data, line.subarray(line[5] === 32 ? 6 : 5));
  crossing.data.size += size - kept.length;
}
function annotate(tap, mark, exchange, kept, size, now) {
  if (size > kept.length) return notesShown(void 0, /* @__PURE__ */ new Set(["bytes"]), size);
  const tags = /* @__PURE__ */ new Set();
  let elapsed;
  if (size > LARGE_LINE) tags.add("bytes");
  if (!isUtf8(kept)) tags.add("not UTF-8");
  if (kept[size - 1] === 13) tags.add("CRLF");
  for (const message of messagesOf(kept.toString())) {
    if (message.kind === "request") {
      pend(tap, pairKey(mark, message.id, exchange), message.method, now, tags);
    }
    if (message.kind === "response" && message.id !== null) {
      const key = pairKey(OPPOSITE[mark], message.id, exchange);
      const request = tap.pending.get(key);
      if (request === void 0) tags.add("no request");
      else elapsed ??= now - request.sentAt;
      tap.pending.delete(key);
    }
    if (message.kind === "other") tags.add("not JSON-RPC");
  }
  return notesShown(elapsed, tags, size);
}
function pend(tap, key, method, now, tags) {
  if (tap.pending.has(key)) {
    tags.add("id in use");
  } else if (keepPending(tap.pending, key, { method, sentAt: now }) && !tap.overflowed) {
    tap.overflowed = true;
    noteEvent(tap, now, `over ${PENDING_LIMIT} requests in flight: from here on the oldest are dropped from pairing, and their responses show [no request]`);
  }
}
function lineEvent(tap, crossing, now, unended = crossing.line) {
  const { mark, exchange } = crossing;
  const { kept, size } = takeLine(unended);
  if (size > kept.length) {
    const keeps = `the log keeps ${kept.length} of ${size} bytes`;
    noteEvent(tap, now, `the next ${mark} line is cut: ${keeps}`);
  }
  const notes = mark === "!" ? [] : annotate(tap, mark, exchange, kept, size, now);
  if (exchange !== void 0) notes.unshift(exchangeNote(exchange));
  if (!tap.polluted && mark === "←" && notes.includes("[not JSON-RPC]")) {
    tap.polluted = true;
    const text = kept.subarray(0, 256).toString();
    const shown = JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text);
    tap.warnings.push(
      `the server wrote a line to stdout that is not JSON-RPC: ${shown}`,
      "MCP clients skip such a line or close the connection; a server logs to stderr"
    );
  }
  if (mark !== "!" && LOOKS_LIKE_NOTE.test(kept.toString("latin1", 0, 2))) notes.push("|");
  tap.events.push(Buffer.from(`${[timeOf(tap, now), mark, ...notes].join(" ")} `), kept, NEWLINE);
}
function timeOf(tap, now) {
  const ms = Math.floor(performance.timeOrigin + now);
  if (ms !== tap.clock.ms) tap.clock = { ms, time: new Date(ms).toISOString() };
  return tap.clock.time;
}
function noteEvent(tap, now, text) {
  const oneLine = text.replaceAll("\n", "\\n").replaceAll("\r", "\\r");
  tap.events.push(Buffer.from(`${timeOf(tap, now)} # ${oneLine}
`));
}
function eventsOf(tap, crossing) {
  if (crossing.kind === "chunk") return chunkEvents(tap, crossing);
  if (crossing.events !== true && crossing.line.size > 0) lineEvent(tap, crossing, crossing.now);
}
var AT_ONCE_MAX = 16384;
var QUIET_MS = 5;
var MAX_BEHIND = 16 * 1048576;
var MAX_DELAY_MS = 1e3;
var SLICE = 65536;
function openLog(logPath2) {
  const tap = {
    pending: /* @__PURE__ */ new Map(),
    overflowed: false,
    polluted: false,
    events: [],
    warnings: [],
    clock: { ms: 0, time: "" }
  };
  return { path: logPath2, closed: false, tap, unread: [], behind: 0, paused: [] };
}
function catchUp(writer) {
  const { tap, unread, paused } = writer;
  let count = 0;
  for (let read = 0; count < unread.length && read < SLICE; count += 1) {
    const crossing = unread[count];
    if (crossing?.kind === "chunk") read += crossing.chunk.length;
    if (crossing?.kind === "chunk") writer.behind -= crossing.chunk.length;
    if (crossing !== void 0) eventsOf(tap, crossing);
  }
  unread.splice(0, count);
  while (paused.length > 0 && writer.behind <= MAX_BEHIND / 2) paused.pop()?.resume();
  while (tap.warnings.length > 0) warn(tap.warnings.shift() ?? "");
  const written = Buffer.concat(tap.events.splice(0));
  if (writer.closed || written.length === 0) return;
  try {
    writer.fd ??= openSync(writer.path, "a", 384);
    for (let at = 0; at < written.length; ) at += writeSync(writer.fd, written, at);
  } catch (error) {
    writer.closed = true;
    const why = error instanceof Error ? error.message : String(error);
    warn(`cannot write log ${writer.path}: ${why}; traffic still flows`);
  }
}
function isBurst(crossing) {
  if (crossing.kind !== "chunk" || crossing.chunk.length < AT_ONCE_MAX) return false;
  return crossing.chunk.indexOf(10) !== crossing.chunk.lastIndexOf(10);
}
function logLater(writer, crossing, from) {
  writer.unread.push(crossing);
  if (crossing.kind === "chunk") writer.behind += crossing.chunk.length;
  if (writer.unread.length === 1 && !isBurst(crossing)) return catchUp(writer);
  if (crossing.kind === "chunk" && writer.behind > MAX_BEHIND) writer.paused.push(from.pause());
  writer.timer ??= setTimeout(whenQuiet, QUIET_MS, writer);
}
function note(writer, text, soon = false) {
  while (writer.unread.length > 0) catchUp(writer);
  noteEvent(writer.tap, performance.now(), text);
  if (!soon) catchUp(writer);
}
function whenQuiet(writer) {
  const { unread } = writer;
  const now = performance.now();
  const quiet = now - (unread.at(-1)?.now ?? 0) >= QUIET_MS;
  const late = now - (unread[0]?.now ?? now) > MAX_DELAY_MS;
  const due = quiet || late || writer.behind > MAX_BEHIND;
  if (due) catchUp(writer);
  writer.timer = unread.length > 0 ? setTimeout(whenQuiet, due ? 0 : QUIET_MS, writer) : void 0;
}
function closeLog(writer, last) {
  while (writer.unread.length > 0) catchUp(writer);
  const now = performance.now();
  for (const [key, request] of writer.tap.pending) {
    const waited = `waited ${(now - request.sentAt).toFixed(1)} ms`;
    noteEvent(writer.tap, now, `unanswered ${key} ${JSON.stringify(request.method)} (${waited})`);
  }
  note(writer, last);
  writer.closed = true;
}
var KILL_AFTER_MS = 1e3;
var PARENT_CHECK_MS = 500;
function spawned(command2, start, noted = () => {
}) {
  const failed = (error) => {
    const why = `cannot start ${command2}: ${error instanceof Error ? error.message : error}`;
    warn(why);
    noted(why);
    return process.exit(CANNOT_START);
  };
  try {
    const child = start();
    child.on("error", (error) => {
      if (child.pid === void 0) failed(error);
    });
    return child;
  } catch (error) {
    return failed(error);
  }
}
function tapStream(writer, from, source) {
  const { mark, exchange, events } = source;
  const [line, data] = [{ pieces: [], size: 0 }, { pieces: [], size: 0 }];
  const log = (chunk) => logLater(writer, {
    mark,
    exchange,
    events,
    line,
    data,
    kind: "chunk",
    chunk,
    now: performance.now()
  }, from);
  const end = () => logLater(writer, {
    mark,
    exchange,
    events,
    line,
    data,
    kind: "end",
    now: performance.now()
  }, from);
  if (mark === "←") from.prependListener("data", log).prependListener("end", end);
  else from.on("data", log).on("end", end);
  if (exchange !== void 0) from.on("close", () => from.readableEnded || end());
}
function relay(plumbing, from, to, mark) {
  from.pipe(to, { end: mark !== "!" });
  tapStream(plumbing.writer, from, { mark });
  to.on("error", (error) => {
    note(plumbing.writer, `cannot pass ${mark} on: ${error.message}`);
    from.resume();
    if (mark === "←") stop(plumbing, "SIGTERM", "the client is gone: wrap's stdout is closed");
  });
}
function stop(plumbing, signal, why) {
  const { child, writer } = plumbing;
  if (child.exitCode !== null || child.signalCode !== null) return;
  note(writer, `${why}: sending ${signal}`);
  child.kill(signal);
  const still = `still running ${KILL_AFTER_MS} ms after ${signal}`;
  if (signal !== "SIGKILL") setTimeout(() => stop(plumbing, "SIGKILL", still), KILL_AFTER_MS);
}
function watchClient(plumbing) {
  process.stdin.on("end", () => note(plumbing.writer, "end of input"));
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
    process.on(signal, () => stop(plumbing, signal, `received ${signal}`));
  }
  const parent = process.ppid;
  const watch2 = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(watch2);
    stop(plumbing, "SIGTERM", `the client is gone: its pid ${parent} exited`);
  }, PARENT_CHECK_MS).unref();
}
function proxy(command2, args2, logPath2) {
  const writer = openLog(logPath2);
  const child = spawned(
    command2,
    () => spawn(command2, args2, { stdio: "pipe" }),
    (why) => closeLog(writer, why)
  );
  const plumbing = { child, writer };
  if (child.pid !== void 0) note(writer, startNote(child.pid, [command2, ...args2].join(" ")));
  child.on("exit", () => setTimeout(() => {
    for (const pipe of [child.stdout, child.stderr]) pipe.push(null);
  }, PIPES_GRACE_MS));
  child.on("close", async (code, signal) => {
    closeLog(writer, exitNote(code, signal));
    await new Promise((resolve) => process.stdout.write("", () => resolve()));
    process.exit(signal === null ? code ?? 0 : 128 + constants.signals[signal]);
  });
  relay(plumbing, process.stdin, child.stdin, "→");
  relay(plumbing, child.stdout, process.stdout, "←");
  relay(plumbing, child.stderr, process.stderr, "!");
  watchClient(plumbing);
}
var HOP_BY_HOP = [
  "connection",
  "keep-alive",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade"
];
var MCP_HEADERS = [
  "mcp-protocol-version",
  "mcp-method",
  "mcp-name",
  "mcp-session-id",
  "last-event-id"
];
function headerPairs(raw, keeps) {
  const kept = raw.map((name, at) => at % 2 === 0 && keeps(name.toLowerCase()));
  return raw.filter((_, at) => kept[at - at % 2]);
}
function endToEnd(message, also = []) {
  const named = String(message.headers.connection ?? "").toLowerCase().split(",");
  const dropped = /* @__PURE__ */ new Set([...HOP_BY_HOP, ...named.map((name) => name.trim()), ...also]);
  return headerPairs(message.rawHeaders, (name) => !dropped.has(name));
}
function headFields(raw) {
  const kept = headerPairs(raw, (name) => MCP_HEADERS.includes(name) || isSecretKey(name));
  return kept.flatMap((name, at) => at % 2 ? [] : [`${name}: ${isSecretKey(name) ? REDACTED : kept[at + 1]}`]);
}
function upstreamPath(upstream, path) {
  const [name, ...query] = path.split("?");
  if (name !== "/mcp") return path;
  const joined = [upstream.search.slice(1), query.join("?")].filter((part) => part !== "");
  return `${upstream.pathname}${joined.length === 0 ? "" : `?${joined.join("&")}`}`;
}
function forward(listener, incoming, outgoing) {
  const { writer, upstream, target: { hostname, port, auth } } = listener;
  const exchange = listener.exchanges += 1;
  const from = `from ${incoming.socket.remoteAddress}:${incoming.socket.remotePort}`;
  const head = `${incoming.method} ${incoming.url} ${from}`;
  note(writer, headNote(exchange, head, headFields(incoming.rawHeaders)), true);
  const headers = [...endToEnd(incoming, ["host"]), "Host", upstream.host];
  const path = upstreamPath(upstream, incoming.url ?? "/");
  const send = upstream.protocol === "https:" ? httpsRequest : httpRequest;
  let ended = false;
  const failed = (error) => {
    if (ended || outgoing.destroyed) return;
    ended = true;
    const why = `upstream failed: ${error.code ?? error.message}`;
    note(writer, headNote(exchange, outgoing.headersSent ? why : `502 ${why}`));
    if (outgoing.headersSent) outgoing.destroy();
    else outgoing.writeHead(502, { "content-type": "text/plain" }).end(`wrap: ${why}
`);
  };
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
function answerBack(writer, exchange, answer, outgoing) {
  const type = answer.headers["content-type"];
  const status = words(String(answer.statusCode), type);
  const events = /^text\/event-stream\b/i.test(type ?? "");
  note(writer, headNote(exchange, status, headFields(answer.rawHeaders)), !events);
  outgoing.sendDate = false;
  outgoing.writeHead(answer.statusCode ?? 502, answer.statusMessage, endToEnd(answer));
  if (events) outgoing.flushHeaders();
  tapStream(writer, answer, { mark: "←", exchange, events });
  answer.pipe(outgoing);
}
function listen(address, url, logPath2) {
  const writer = openLog(logPath2);
  const upstream = new URL(url);
  const listener = { writer, upstream, target: urlToHttpOptions(upstream), exchanges: 0 };
  const [, host = "127.0.0.1", port = ""] = LISTEN_ADDRESS.exec(address) ?? [];
  const server = createServer((incoming, outgoing) => forward(listener, incoming, outgoing));
  server.on("error", (error) => cannot(`listen on ${address}`, error));
  server.listen(Number(port), host.replace(/^\[(.*)\]$/, "$1"), () => {
    const bound = server.address();
    if (!isRecord(bound)) return;
    const ip = bound.family === "IPv6" ? `[${bound.address}]` : bound.address;
    const local = `http://${ip}:${bound.port}/mcp`;
    note(writer, listenNote(local, url));
    warn(`listening on ${local}, recording to ${logPath2}, forwarding to ${url}`);
  });
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
    process.on(signal, () => {
      closeLog(writer, exitNote(null, signal));
      process.exit(128 + constants.signals[signal]);
    });
  }
}
function dig(value, ...keys) {
  const [key, ...rest] = keys;
  if (key === void 0) return value;
  return isRecord(value) && Object.hasOwn(value, key) ? dig(value[key], ...rest) : void 0;
}
function words(...parts) {
  return parts.filter((part) => part !== void 0).join(" ");
}
var LOG_START = { offset: 0, rest: Buffer.alloc(0) };
var LONGEST_READ = 2 * LONGEST_LOGGED;
async function readLines(path, from, toEnd, read) {
  const file = await open(path, "r");
  let { offset } = from;
  let held = [from.rest];
  let heldBytes = from.rest.length;
  try {
    for (let bytesRead = -1; bytesRead !== 0; offset += bytesRead) {
      const slice = Buffer.allocUnsafe(SLICE);
      ({ bytesRead } = await file.read(slice, 0, SLICE, offset));
      const end = slice.subarray(0, bytesRead).lastIndexOf(10) + 1;
      const cut = heldBytes >= LONGEST_READ;
      if (end === 0 && !cut) held.push(slice.subarray(0, bytesRead));
      heldBytes += bytesRead;
      if (end === 0) continue;
      const ending = slice.subarray(cut ? slice.indexOf(10) : 0, end);
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
async function readEvents(path, from, toEnd, redact2, read) {
  let skipped = 0;
  const reading = await readLines(path, from, toEnd, (lines) => read(lines.flatMap((line) => {
    const event = parseEvent(redact2 ? redactLine(line) : line);
    if (event === void 0 && line !== "") skipped += 1;
    return event ?? [];
  })));
  return { ...reading, skipped };
}
async function print(text, asIs = false) {
  if (process.stdout.write(asIs ? text : printable(text))) return;
  await once(process.stdout, "drain");
}
function newSession(start) {
  return { start, waiting: /* @__PURE__ */ new Map(), next: /* @__PURE__ */ new Map() };
}
function elicitationMessage(method, params) {
  const message = dig(params, "message");
  return method === "elicitation/create" && typeof message === "string" ? message : void 0;
}
function inputRequestsOf(result) {
  if (dig(result, "resultType") !== "input_required") return void 0;
  const requests = dig(result, "inputRequests");
  return (isRecord(requests) ? Object.values(requests) : []).map((request) => {
    const method = dig(request, "method");
    const named = typeof method === "string" ? method : "(no method)";
    return { method: named, message: elicitationMessage(method, dig(request, "params")) };
  });
}
function briefAsks(requests) {
  const methods = new Set(requests.map((request) => request.method));
  return Array.from(methods, (method) => {
    const shown = requests.filter((request) => request.method === method).flatMap((request) => request.message === void 0 ? [] : [JSON.stringify(request.message)]);
    return shown.length === 0 ? method : `${method} ${shown.join(", ")}`;
  }).join(", ");
}
function elicitAnswer(result) {
  const action = dig(result, "action");
  if (typeof action !== "string") return void 0;
  return words(action, JSON.stringify(dig(result, "content")));
}
function followRequest(session, mark, message, exchange) {
  const name = dig(message.params, "name");
  const tool = message.method === "tools/call" && typeof name === "string" ? name : void 0;
  const state = dig(message.params, "requestState");
  const retry = state !== void 0 || dig(message.params, "inputResponses") !== void 0;
  const round = retry ? session.next.get(typeof state === "string" ? state : "") : 1;
  const request = { mark, method: message.method, tool, name: words(message.method, tool), round };
  const key = pairKey(mark, message.id, exchange);
  if (!session.waiting.has(key)) keepPending(session.waiting, key, request);
  const place = round === void 0 ? "retry" : round > 1 ? `round ${round}` : void 0;
  return { mark, message, request, place, failed: false };
}
function followResponse(session, mark, message, exchange) {
  const key = message.id === null ? "" : pairKey(OPPOSITE[mark], message.id, exchange);
  const request = session.waiting.get(key);
  session.waiting.delete(key);
  const state = dig(message.result, "requestState");
  const asks = inputRequestsOf(message.result) !== void 0 && typeof state === "string";
  if (asks && request?.round !== void 0) keepPending(session.next, state, request.round + 1);
  const failed = message.error !== void 0 || dig(message.result, "isError") === true;
  return { mark, message, request, place: void 0, failed };
}
function follow(session, event) {
  if (startedCommand(event) !== void 0) Object.assign(session, newSession(event));
  const { mark } = event;
  if (mark !== "→" && mark !== "←") return [];
  return event.messages.map((message) => {
    if (message.kind === "request") return followRequest(session, mark, message, event.exchange);
    if (message.kind === "response") return followResponse(session, mark, message, event.exchange);
    return { mark, message, request: void 0, place: void 0, failed: false };
  });
}
var REDACTED = "[redacted]";
var SECRET_NAME = String.raw`\w{0,40}?(?:pass(?:word|wd)|secret|token(?!s)|cookie|` + String.raw`authorization|credential|(?:api|access|private|session)[_.-]?key|[_.-]key\b)\w{0,40}`;
var SECRET_KEY = new RegExp(SECRET_NAME, "i");
var SECRET_PAIR = new RegExp(String.raw`\b(${SECRET_NAME})(["']?[ \t]*[:=][ \t]*)([[{(]|` + String.raw`"(?:[^"\\]|\\.)*"|'[^']*'|(?:(?:Basic|Bearer|Digest|Token)[ \t]+)?` + String.raw`[^\s"',;&]+(?:;[ \t]*[^\s"',;&=]+=[^\s"',;&]+)*)`, "gi");
var SECRET_SHAPES = [
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g,
  /\bBearer\s+[^\s"',;]+/g,
  /\b(?:gh[opsur]_[A-Za-z\d]{20,}|github_pat_\w{20,}|sk-[\w-]{16,}|xox[a-z]-[\w-]{8,})/g,
  /\bA(?:KI|SI)A[A-Z\d]{16}\b/g,
  /\beyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]*/g,
  /(?<=\w:\/\/)[^\s/@"']+:[^\s/@"']*(?=@)/g
];
var BASE64_LINE = /^(?=.*[A-Z])(?=.*[a-z])(?=.*\d)[A-Za-z\d+/]{40,}={0,2}$/;
function isSecretKey(key) {
  return SECRET_KEY.test(key) && key !== "progressToken";
}
var VALUE_PIECE = /"(?:[^"\\\n]|\\.)*"?|'(?:[^'\\\n]|\\.)*'?|[^"'()[\]{}\n]+|./gy;
function bracketedEnd(text, start) {
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
function redactString(text) {
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
function hideSecret(key, value) {
  if (isSecretKey(key)) return REDACTED;
  return typeof value === "string" ? redactString(value) : value;
}
function redactText(text) {
  const value = attempt(() => JSON.parse(text));
  if (value === void 0) return BASE64_LINE.test(text) ? REDACTED : redactString(text);
  const redacted = JSON.stringify(value, hideSecret);
  return redacted === JSON.stringify(value) ? text : redacted;
}
function redactLine(line) {
  const head = EVENT_HEAD.exec(line);
  if (head === null) return redactText(line);
  const text = redactText(line.slice(head[0].length));
  const unbarred = head[2] !== void 0 && !head[0].endsWith("| ");
  return `${head[0]}${unbarred && LOOKS_LIKE_NOTE.test(text) ? "| " : ""}${text}`;
}
async function redact({ logPath: logPath2 }) {
  const raw = process.stdout.isTTY !== true;
  await readLines(logPath2, LOG_START, true, (lines) => print(lines.map(redactLine).join("\n"), raw)).catch((error) => cannot(`read ${logPath2}`, error));
}
var BLOCK_ROOM = 2e3 - 100 - 200;
var LOOKALIKES = /* @__PURE__ */ new Map([
  ["#", "＃"],
  [";", "；"],
  ["<", "‹"],
  [">", "›"],
  ["%", "％"],
  ["&", "＆"],
  ['"', "'"],
  ["{", "（"],
  ["}", "）"]
]);
var ARROWS = { request: "->>", notification: "-)", response: "-->>", other: "->>" };
function label(text, max) {
  const safe = printable(text).replace(/[#;<>%&"{}]/g, (found) => LOOKALIKES.get(found) ?? found);
  const characters = Array.from(safe.replace(/\s+/g, " ").trim());
  const short = characters.length > max ? [...characters.slice(0, max - 1), "…"] : characters;
  return short.length === 0 ? "(empty)" : short.join("");
}
function sideName(messages, field, info) {
  const names = messages.flatMap((message) => [
    dig(message, field, info, "name"),
    dig(message, field, "_meta", `io.modelcontextprotocol/${info}`, "name")
  ]);
  return names.find((name) => typeof name === "string");
}
function describe({ message, request, place }, text) {
  if (message.kind === "other") return `not JSON-RPC ${label(text, 20)}`;
  if (message.kind !== "response") {
    const asked = elicitationMessage(message.method, message.params);
    return words(request?.name ?? message.method, asked, place && `(${place})`);
  }
  const content = dig(message.result, "content", "0", "text");
  if (message.error !== void 0) return `error ${String(dig(message.error, "code"))}`;
  if (dig(message.result, "isError") === true) return `isError ${String(content)}`;
  const asks = inputRequestsOf(message.result);
  const questions = asks?.map((asked) => asked.message ?? asked.method).join(", ");
  if (questions !== void 0) return `input required: ${questions}`;
  return elicitAnswer(message.result) ?? (typeof content === "string" ? content : "result");
}
var HTTP_NOTE = /^<(\d+)> ([^·]*?)(?: from \S+)?(?: ·|$)/;
function httpStatements(exchanges, event) {
  const [, exchange = "", what = ""] = HTTP_NOTE.exec(event.text) ?? [];
  const asked = exchanges.get(exchange);
  const head = /^[A-Z]+ \//.test(what);
  if (head && !what.startsWith("POST ")) keepPending(exchanges, exchange, what);
  const plain = /^2\d\d(?! text\/event-stream)/.test(what) && !/^[A-Z]+ \//.test(asked ?? "");
  return head || plain ? [] : [`Note over C,S: ${label(words(asked && `${asked}:`, what), 70)}`];
}
function statements(event, followed, exchanges) {
  if (event.mark === "#" && HTTP_NOTE.test(event.text)) return httpStatements(exchanges, event);
  if (event.mark === "#") return [`Note over C,S: ${label(event.text, 70)}`];
  const asked = followed.find((each) => each.mark === "→" && each.message.kind === "request");
  const name = asked?.request?.name;
  if (name !== void 0 && event.exchange !== void 0) {
    keepPending(exchanges, String(event.exchange), name);
  }
  if (event.mark === "!") return [`Note right of S: ${label(event.text, 50)}`];
  return [...followed.map((each) => {
    const [from, to] = each.mark === "→" ? ["C", "S"] : ["S", "C"];
    const elapsed = each.message.kind === "response" ? event.elapsed : void 0;
    const text = words(elapsed && `${elapsed} ms`, describe(each, event.text));
    return `${from}${ARROWS[each.message.kind]}${to}: ${label(text, 50)}`;
  }), ...event.tags.map((tag) => `Note over C,S: ${label(tag, 30)}`)];
}
function diagramHead({ client, server, command: command2 }) {
  const named = command2?.split(" ").slice(0, 2).map((word) => word.split("/").at(-1)).join(" ");
  return [
    "sequenceDiagram",
    `participant C as ${label(client ?? "client", 40)}`,
    `participant S as ${label(server ?? named ?? "server", 40)}`
  ];
}
async function writeDiagram({ logPath: logPath2, values: values2 }) {
  const failed = (error) => cannot(`write ${values2.out}`, error);
  const file = values2.out === void 0 ? void 0 : await open(values2.out, "w").catch(failed);
  const session = newSession();
  const exchanges = /* @__PURE__ */ new Map();
  const sides = {};
  const part = [];
  let size = 0;
  let parts = 0;
  const flush = (last) => {
    parts += 1;
    const title = parts > 1 || !last ? [`Part ${parts}`, ""] : [];
    const block = [...title, "```mermaid", ...diagramHead(sides), ...part.splice(0), "```", ""];
    if (!last) part.push(`Note over C,S: part ${parts + 1}, continued from part ${parts}`);
    size = 0;
    const text = `${block.join("\n")}${last ? "" : "\n"}`;
    return file === void 0 ? print(text) : file.write(text).catch(failed);
  };
  await readEvents(logPath2, LOG_START, true, values2["no-redact"] !== true, async (events) => {
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
  }).catch((error) => cannot(`read ${logPath2}`, error));
  await flush(true);
  await file?.close().catch(failed);
}
var AROUND = 40;
var REPORT_LINES = 6;
var REPORT_CHARACTERS = 1e3;
function differences(expected, actual, path, ignore) {
  const ignored = ignore.some((pattern) => pattern.length === path.length && pattern.every((key, index) => key === "*" || key === path[index]));
  if (ignored) return [];
  if (isRecord(expected) && isRecord(actual) && Array.isArray(expected) === Array.isArray(actual)) {
    const keys = /* @__PURE__ */ new Set([...Object.keys(expected), ...Object.keys(actual)]);
    return [...keys].flatMap((key) => differences(dig(expected, key), dig(actual, key), [...path, key], ignore));
  }
  return JSON.stringify(expected) === JSON.stringify(actual) ? [] : [{ path, expected, actual }];
}
function brief(value, redact2) {
  if (value === void 0) return "nothing";
  const text = JSON.stringify(value, redact2 ? hideSecret : void 0);
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}
function around(text, at) {
  const from = Math.max(0, at - AROUND);
  const shown = JSON.stringify(text.slice(from, at + AROUND));
  return `${from > 0 ? "…" : ""}${shown}${at + AROUND < text.length ? "…" : ""}`;
}
function describeDifference({ path, expected, actual }, redact2) {
  const where = path.length === 0 ? "(the whole message)" : path.join(".");
  const hidden = `${where}: differs, in a redacted value`;
  if (redact2 && path.some(isSecretKey)) return hidden;
  if (typeof expected !== "string" || typeof actual !== "string") {
    return `${where}: expected ${brief(expected, redact2)}, got ${brief(actual, redact2)}`;
  }
  const shownExpected = redact2 ? redactString(expected) : expected;
  const shownActual = redact2 ? redactString(actual) : actual;
  if (shownExpected === shownActual) return hidden;
  let at = 0;
  while (shownExpected[at] === shownActual[at]) at += 1;
  return `${where}: strings part at character ${at}: expected ${around(shownExpected, at)}, got ${around(shownActual, at)}`;
}
function report(name, found, redact2) {
  const shown = found.slice(0, REPORT_LINES - 2).map((one) => describeDifference(one, redact2));
  const more = found.length - shown.length;
  if (more > 0) shown.push(`(${more} more)`);
  const text = [`✗ ${name}`, ...shown].join("\n  ");
  return text.length > REPORT_CHARACTERS ? `${text.slice(0, REPORT_CHARACTERS - 1)}…` : text;
}
function replayState(line, exited) {
  const ignored = [
    ...(line.values.ignore ?? []).map((path) => path.split(".")),
    ["result", "requestState"],
    ["exchange"]
  ];
  const responses = [];
  return {
    heard: new EventEmitter(),
    responses,
    requested: /* @__PURE__ */ new Set(),
    exited,
    session: newSession(),
    states: /* @__PURE__ */ new Map(),
    ignored,
    timeoutMs: line.timeoutMs,
    redact: line.values["no-redact"] !== true,
    tally: { match: 0, differ: 0, missing: 0 }
  };
}
function hear(run, text, exchange) {
  for (const message of messagesOf(text)) {
    if (message.kind === "response") run.responses.push({ ...message, exchange });
    if (message.kind === "request") run.requested.add(JSON.stringify(message.id));
  }
  run.heard.emit("line");
}
function startReplay(line) {
  const server = spawned(line.command, () => spawn(line.command, line.args, { stdio: ["pipe", "pipe", "inherit"] }));
  server.stdin.on("error", () => {
  });
  const exited = new AbortController();
  server.on("close", () => exited.abort());
  server.on("exit", () => setTimeout(() => server.stdout.destroy(), PIPES_GRACE_MS).unref());
  const send = async (text) => {
    const sent = server.stdin.write(`${text}
`);
    if (!sent) await once(server.stdin, "drain", { signal: exited.signal }).catch(() => {
    });
  };
  const finish = async (signal = "SIGKILL", afterMs = line.timeoutMs) => {
    server.stdin.end();
    setTimeout(() => server.kill(signal), afterMs).unref();
    if (!exited.signal.aborted) await once(exited.signal, "abort");
  };
  const run = { ...replayState(line, exited.signal), noted: () => {
  }, send, finish };
  createInterface({ input: server.stdout }).on("line", (text) => hear(run, text));
  return run;
}
var REPLAYED_HEADER = / · (MCP-Protocol-Version|Mcp-Method|Mcp-Name): (.*?)(?= · |$)/gi;
function startHttpReplay(line) {
  const [url, heads] = [new URL(line.values.url ?? ""), /* @__PURE__ */ new Map()];
  const open2 = /* @__PURE__ */ new Map();
  let session;
  const noted = ({ mark, text }) => {
    const [, exchange, what] = /^<(\d+)> (POST|closed by the client)/.exec(text) ?? [];
    if (mark === "#" && what === "POST") heads.set(Number(exchange), text);
    for (const [post, at] of open2) if (mark === "#" && at === Number(exchange)) post.destroy();
  };
  const send = async (text, exchange) => {
    const head = (heads.get(exchange) ?? "").matchAll(REPLAYED_HEADER);
    const named = Array.from(head, ([, name = "", value = ""]) => [name, value]);
    const headers = {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      ...Object.fromEntries(named),
      ...session && { "Mcp-Session-Id": session }
    };
    const request = url.protocol === "https:" ? httpsRequest : httpRequest;
    const post = request(url, { method: "POST", headers, agent: false }, (answer) => {
      session = answer.headers["mcp-session-id"] ?? session;
      const events = /^text\/event-stream/.test(String(answer.headers["content-type"]));
      const data = events ? /^data: ?(.*)/s : /(.*)/s;
      createInterface({ input: answer }).on("error", () => {
      }).on("line", (text2) => hear(run, data.exec(text2)?.[1] ?? "", exchange));
    });
    open2.set(post, exchange);
    post.on("error", (error) => post.destroyed || warn(`replay: POST ${url}: ${error.message}`));
    post.on("close", () => open2.delete(post) && run.heard.emit("line"));
    post.end(text);
  };
  const finish = async () => {
    await waitFor(run, () => open2.size === 0);
    for (const post of open2.keys()) post.destroy();
  };
  const run = { ...replayState(line, new AbortController().signal), noted, send, finish };
  return run;
}
async function waitFor(replay2, check2) {
  const signal = AbortSignal.any([replay2.exited, AbortSignal.timeout(replay2.timeoutMs)]);
  const held = setTimeout(() => {
  }, replay2.timeoutMs);
  while (!check2() && !signal.aborted) await once(replay2.heard, "line", { signal }).catch(() => {
  });
  clearTimeout(held);
}
async function replayResponse(replay2, recorded, request) {
  const id = JSON.stringify(recorded.id);
  const answers = (each) => JSON.stringify(each.id) === id && (each.exchange ?? recorded.exchange) === recorded.exchange;
  await waitFor(replay2, () => replay2.responses.some(answers));
  const index = replay2.responses.findIndex(answers);
  const actual = index === -1 ? void 0 : replay2.responses.splice(index, 1)[0];
  const [before, now] = [recorded, actual].map((each) => dig(each?.result, "requestState"));
  if (typeof before === "string" && typeof now === "string") replay2.states.set(before, now);
  const found = actual === void 0 ? [] : differences(recorded, actual, [], replay2.ignored);
  replay2.tally[actual === void 0 ? "missing" : found.length > 0 ? "differ" : "match"] += 1;
  const name = request === void 0 ? id : `${id} ${JSON.stringify(request.method)}`;
  if (actual === void 0) await print(`✗ ${name}: missing
`);
  if (found.length > 0) await print(`${report(name, found, replay2.redact)}
`);
}
async function replayEvent(run, event) {
  run.noted(event);
  const { exchange } = event;
  for (const { mark, message, request } of follow(run.session, event)) {
    if (message.kind !== "response") continue;
    const id = JSON.stringify(message.id);
    if (mark === "→" && request !== void 0) await waitFor(run, () => run.requested.has(id));
    if (mark === "←") await replayResponse(run, { ...message, exchange }, request);
  }
  if (event.mark !== "→") return;
  const text = event.text.replace(/"requestState":"([^"\\]*)"/g, (found, state) => {
    const replayed = run.states.get(state);
    return replayed === void 0 ? found : `"requestState":${JSON.stringify(replayed)}`;
  });
  await run.send(text, event.exchange);
}
async function replay(line) {
  const failed = (error) => cannot(`read ${line.logPath}`, error);
  await access(line.logPath).catch(failed);
  const run = line.values.url === void 0 ? startReplay(line) : startHttpReplay(line);
  await readEvents(line.logPath, LOG_START, true, false, async (events) => {
    for (const event of events) await replayEvent(run, event);
  }).catch(failed);
  await run.finish();
  for (const { id } of run.responses) await print(`✗ ${JSON.stringify(id)}: unexpected
`);
  const { match, differ, missing } = run.tally;
  await print(`replay: ${match + differ + missing} responses, ${match} match, ${differ} differ, ${missing} missing, ${run.responses.length} unexpected
`);
  process.exitCode = differ + missing + run.responses.length === 0 ? 0 : 1;
}
var COLOURS = { "→": "36", "←": "35", "!": "33", "#": "1", error: "31" };
function notificationSummary(message) {
  if (message.method === "notifications/cancelled") {
    const requestId = JSON.stringify(dig(message.params, "requestId"));
    return `${message.method} #${requestId} ${String(dig(message.params, "reason") ?? "")}`;
  }
  const progress = dig(message.params, "progress");
  const total = dig(message.params, "total");
  const of = total === void 0 ? "" : `/${String(total)}`;
  return progress === void 0 ? message.method : `${message.method} ${String(progress)}${of}`;
}
function responseSummary({ id, result, error }, elapsed) {
  const head = words(`#${JSON.stringify(id)}`, elapsed && `${elapsed} ms`);
  const code = dig(error, "code");
  if (error !== void 0) return `${head} error ${String(code)} ${String(dig(error, "message"))}`;
  const asks = inputRequestsOf(result);
  if (asks !== void 0) return `${head} input_required ${briefAsks(asks)}`;
  const said = dig(result, "content", "0", "text");
  const shown = elicitAnswer(result) ?? (typeof said === "string" ? said : JSON.stringify(result));
  return `${head} ${dig(result, "isError") === true ? "isError" : "result"} ${shown}`;
}
function summary({ message, request, place }, event) {
  if (message.kind === "other") return JSON.stringify(event.text);
  if (message.kind === "notification") return notificationSummary(message);
  if (message.kind === "response") return responseSummary(message, event.elapsed);
  const args2 = dig(message.params, "arguments") ?? message.params;
  const carried = elicitationMessage(message.method, message.params) ?? JSON.stringify(args2);
  return words(request?.name ?? message.method, `#${JSON.stringify(message.id)}`, place, carried);
}
function passes(shower, { message, request, failed }) {
  if (shower.errorsOnly && !failed) return false;
  if (shower.methods.length === 0) return true;
  const name = message.kind === "notification" ? message.method : request?.name;
  return shower.methods.some((wanted) => name === wanted || name?.startsWith(`${wanted} `));
}
function fitted(shower, time, mark, text, failed = false) {
  const characters = Array.from(printable(`${time} ${mark} ${text}`).replace(/[\t\n]/g, " "));
  const long = characters.length > shower.width;
  const line = long ? `${characters.slice(0, shower.width - 1).join("")}…` : characters.join("");
  const colour = failed ? COLOURS.error : COLOURS[mark];
  return shower.colour ? `\x1B[${colour}m${line}\x1B[0m
` : `${line}
`;
}
function showEvent(shower, event) {
  const followed = follow(shower.session, event);
  const { start } = shower.session;
  if (start === event) return [fitted(shower, "───", "#", event.text)];
  const since = Date.parse(event.time) - (start === void 0 ? 0 : Date.parse(start.time));
  const time = `+${(since / 1e3).toFixed(3)}s`;
  if (event.mark === "!" || event.mark === "#") {
    const filtering = shower.methods.length > 0 || shower.errorsOnly;
    return filtering ? [] : [fitted(shower, time, event.mark, event.text)];
  }
  const tags = event.tags.map((tag) => `[${tag}] `).join("");
  return followed.filter((each) => passes(shower, each)).map((each) => fitted(shower, time, each.mark, tags + summary(each, event), each.failed));
}
function showEvents(shower, events) {
  return print(events.flatMap((event) => showEvent(shower, event)).join(""), true);
}
async function readOn(shower, path, place) {
  const found = await stat(path).catch(() => void 0);
  if (found === void 0) {
    if (!place.absent) warn(`no log at ${path} yet: waiting for it`);
    return { ...place, absent: true };
  }
  const other = found.ino !== place.inode || found.size < place.offset || place.absent;
  const said = "─── the log was cut or replaced: reading it from its start\n";
  if (other && place.inode !== void 0) process.stdout.write(said);
  const from = other ? LOG_START : place;
  const read = await readEvents(
    path,
    from,
    false,
    shower.redact,
    (events) => showEvents(shower, events)
  ).catch(() => from);
  return { ...read, inode: found.ino, absent: false };
}
async function followLog(shower, path) {
  let reading = Promise.resolve({ ...LOG_START, inode: void 0, absent: false });
  const readMore = () => {
    reading = reading.then((place) => readOn(shower, path, place));
  };
  attempt(() => watch(dirname(path), (_, changed) => {
    if (changed === basename(path)) readMore();
  }).on("error", () => {
  }));
  watchFile(path, { interval: 1e3 }, readMore);
  readMore();
  process.on("SIGINT", () => process.exit(0));
  return new Promise(() => {
  });
}
async function show({ logPath: logPath2, values: values2 }) {
  const terminal = process.stdout.isTTY === true;
  const columns = terminal ? process.stdout.columns ?? 0 : 0;
  const shower = {
    width: columns >= 20 ? columns : 80,
    session: newSession(),
    colour: terminal && (process.env.NO_COLOR ?? "") === "",
    redact: values2["no-redact"] !== true,
    methods: values2.method ?? [],
    errorsOnly: values2.errors === true
  };
  if (values2.follow === true) await followLog(shower, logPath2);
  const { skipped } = await readEvents(
    logPath2,
    LOG_START,
    true,
    shower.redact,
    (events) => showEvents(shower, events)
  ).catch((error) => cannot(`read ${logPath2}`, error));
  if (skipped > 0) await print(`skipped ${skipped} lines that are not wire.log events
`);
}
function newFigures(start, command2, session) {
  return {
    start,
    end: start,
    command: command2,
    requests: /* @__PURE__ */ new Map(),
    waiting: session.waiting,
    notifications: /* @__PURE__ */ new Map(),
    tags: /* @__PURE__ */ new Map(),
    stderrLines: 0,
    messages: { "→": { count: 0, bytes: 0 }, "←": { count: 0, bytes: 0 } }
  };
}
function countIn(counts, key) {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}
function countEvent(session, event, followed) {
  session.end = event.time;
  for (const tag of event.tags) countIn(session.tags, /^\d+ bytes$/.test(tag) ? "over 1 MiB" : tag);
  if (event.mark === "!") session.stderrLines += 1;
  if (event.mark !== "→" && event.mark !== "←") return;
  session.messages[event.mark].bytes += Buffer.byteLength(event.text) + 1;
  for (const { mark, message, request, failed } of followed) {
    if (message.kind !== "other") session.messages[mark].count += 1;
    const notified = message.kind === "notification" ? message.method : void 0;
    if (notified !== void 0) countIn(session.notifications, `${mark} ${notified}`);
    if (request === void 0) continue;
    const key = `${request.mark} ${request.name}`;
    const figures = session.requests.get(key) ?? { request, count: 0, errors: 0, roundTrips: /* @__PURE__ */ new Map() };
    session.requests.set(key, figures);
    if (message.kind === "request") figures.count += 1;
    if (failed) figures.errors += 1;
    if (message.kind !== "response" || event.elapsed === void 0) continue;
    countIn(figures.roundTrips, Math.round(Number(event.elapsed) * 10));
  }
}
function percentileOf(roundTrips, percent) {
  const total = [...roundTrips.values()].reduce((sum, count) => sum + count, 0);
  const rank = Math.max(1, Math.ceil(percent / 100 * total));
  let seen = 0;
  for (const tenths of [...roundTrips.keys()].sort((a, b) => a - b)) {
    seen += roundTrips.get(tenths) ?? 0;
    if (seen >= rank) return tenths / 10;
  }
  return null;
}
function sessionJson(session) {
  const requests = [...session.requests.values()].map(({ request, count, errors, roundTrips }) => ({
    direction: request.mark,
    method: request.method,
    tool: request.tool ?? null,
    count,
    errors,
    p50Ms: percentileOf(roundTrips, 50),
    p95Ms: percentileOf(roundTrips, 95),
    maxMs: percentileOf(roundTrips, 100)
  }));
  const notifications = [...session.notifications].map(([key, count]) => ({ direction: key.slice(0, 1), method: key.slice(2), count }));
  const { start, end, command: command2, messages, waiting, tags, stderrLines } = session;
  return {
    start,
    command: command2,
    lengthMs: Date.parse(end) - Date.parse(start),
    requests,
    notifications,
    messages,
    unanswered: waiting.size,
    tags: Object.fromEntries(tags),
    stderrLines
  };
}
function sessionText(figures, index) {
  const seconds = (figures.lengthMs / 1e3).toFixed(1);
  const widths = [36, 6, 7, 8, 8, 8];
  const cells = (row) => `  ${row.map((cell, at) => at === 0 ? cell.padEnd(widths[at] ?? 0) : cell.padStart(widths[at] ?? 0)).join("")}`;
  const ms = (value) => value === null ? "—" : value.toFixed(1);
  const requests = figures.requests.map((each) => {
    const name = words(each.direction, each.method, each.tool ?? void 0);
    const times = [ms(each.p50Ms), ms(each.p95Ms), ms(each.maxMs)];
    return cells([label(name, 36), String(each.count), String(each.errors), ...times]);
  });
  const listed = (items) => items.length === 0 ? "none" : items.join(" · ");
  const notes = figures.notifications.map((one) => `${one.direction} ${one.method} ${one.count}`);
  const ways = Object.entries(figures.messages).map(([mark, { count, bytes }]) => `${mark} ${count} (${bytes.toLocaleString("en-US")} bytes)`);
  const tags = Object.entries(figures.tags).map(([tag, count]) => `[${tag}] ${count}`);
  return [
    `session ${index + 1} · ${figures.start} · ${seconds} s · ${figures.command}`,
    cells(["request", "count", "errors", "p50 ms", "p95 ms", "max ms"]),
    ...requests,
    `  notifications: ${listed(notes)}`,
    `  messages: ${ways.join(" · ")}`,
    `  unanswered: ${figures.unanswered} · stderr lines: ${figures.stderrLines} · tags: ${listed(tags)}`
  ];
}
async function stats({ logPath: logPath2, values: values2 }) {
  const all = [];
  const session = newSession();
  let figures;
  const { skipped } = await readEvents(logPath2, LOG_START, true, false, (events) => {
    for (const event of events) {
      const followed = follow(session, event);
      if (session.start === event || figures === void 0) {
        figures = newFigures(event.time, startedCommand(event) ?? "(no start line)", session);
        all.push(figures);
      }
      countEvent(figures, event, followed);
    }
  }).catch((error) => cannot(`read ${logPath2}`, error));
  const sessions = all.map(sessionJson);
  if (values2.json === true) return print(`${JSON.stringify({ sessions, skipped }, null, 2)}
`);
  const blocks = sessions.map((one, index) => sessionText(one, index).join("\n"));
  if (blocks.length === 0) blocks.push("no session: this file holds no wire.log event");
  if (skipped > 0) blocks.push(`skipped ${skipped} lines that are not wire.log events`);
  await print(`${blocks.join("\n\n")}
`);
}
var CLIENT_KEYS = ["claude-code", "codex", "gemini", "qwen", "copilot"];
var CLIENTS = {
  "claude-code": "Claude Code",
  codex: "Codex",
  gemini: "Gemini CLI",
  qwen: "Qwen Code",
  copilot: "Copilot CLI"
};
function some(clients, ...consequence) {
  return Object.fromEntries(clients.map((client) => [client, consequence]));
}
var WAITS_MS = { codex: 1e3, "claude-code": 2e3 };
var NAME_FORMS = {
  copilot: ["", "-", 64],
  "claude-code": ["mcp__", "__", 64],
  gemini: ["mcp_", "_", 63],
  qwen: ["mcp__", "__", 63]
};
var REPLACED = /[^A-Za-z0-9_-]/g;
var RULES = [
  {
    rule: "slow-start",
    applies: ({ firstAnswerMs = 0 }, client) => firstAnswerMs > (WAITS_MS[client] ?? Infinity),
    clients: {
      codex: ["error", "leaves it out after about 1 s, silently, unless `required = true`"],
      "claude-code": ["error", "runs `claude -p` without it after about 2 s"]
    },
    advice: "answer within 1 s (Claude Code waits with MCP_CONNECTION_NONBLOCKING=false)",
    stdioOnly: "its wait for a first answer, measured for a server the CLI starts"
  },
  {
    rule: "slow-start",
    applies: ({ unlisted }) => unlisted === true,
    clients: some(CLIENT_KEYS, "error", "cannot list its tools"),
    advice: "answer tools/list; if the server is only slow, give check a longer --timeout"
  },
  {
    rule: "era-fallback",
    applies: ({ refused }) => refused === true,
    clients: some(["claude-code", "copilot"], "warning", "falls back to initialize, 2025-11-25"),
    advice: "answer server/discover with supportedVersions that include 2026-07-28"
  },
  {
    rule: "stdout-noise",
    applies: ({ noise }) => noise === true,
    clients: some(["gemini"], "error", 'drops the server: "MCP issues detected"'),
    advice: "write logs to stderr: stdout is for JSON-RPC messages only",
    stdioOnly: "there is no stdout over HTTP"
  },
  {
    rule: "tool-name",
    applies: ({ name = "" }, client) => name.replace(REPLACED, "_") !== name && (client !== "gemini" || /[^A-Za-z0-9_.-]/.test(name)),
    clients: some(CLIENT_KEYS, "warning", "renames it"),
    advice: "name it from [A-Za-z0-9_-]"
  },
  {
    rule: "tool-name",
    applies: ({ name = "", names = [] }) => names.filter((other) => other.replace(REPLACED, "_") === name.replace(REPLACED, "_")).length > 1,
    clients: some(["claude-code", "copilot"], "error", "offers one of the names that become one"),
    advice: "give each tool a name of its own from [A-Za-z0-9_-]"
  },
  {
    rule: "tool-name",
    applies: ({ name = "", server = "" }, client) => {
      const [before, between, most] = NAME_FORMS[client] ?? ["", "", Infinity];
      return (before + server + between + name).length > most;
    },
    clients: {
      ...some(["gemini", "qwen", "copilot"], "warning", "cuts it to 63 or 64"),
      "claude-code": ["error", "sends mcp__<server>__<tool>, over 64: Anthropic's API refuses it"]
    },
    advice: "keep mcp__<server>__<tool> within 64 characters"
  },
  {
    rule: "input-schema",
    applies: ({ name, tool }) => name !== void 0 && dig(tool, "inputSchema", "type") !== "object",
    clients: {
      ...some(["claude-code", "gemini", "qwen"], "error", "drops the whole server"),
      ...some(["codex", "copilot"], "warning", 'adds "type": "object"')
    },
    advice: 'give its inputSchema "type": "object" at the top'
  },
  {
    rule: "input-schema",
    applies: ({ tool }) => /"format":"/.test(JSON.stringify(tool) ?? ""),
    clients: {
      codex: ["warning", "drops `format`"],
      copilot: ["warning", "moves `format` into the description"]
    },
    advice: "say in the description what `format` says"
  },
  {
    rule: "description",
    applies: ({ tool }) => String(dig(tool, "description")).length > 4096,
    clients: some(["claude-code"], "warning", "cuts the description to 4,096 characters"),
    advice: "keep the description within 4,096 characters"
  },
  // The content blocks a tool's result may hold (server/tools §Tool Result).
  {
    rule: "result-content",
    applies: ({ result }) => [dig(result, "content")].flat().some((block) => block !== void 0 && !["text", "image", "audio", "resource_link", "resource"].includes(String(dig(block, "type")))),
    clients: some(CLIENT_KEYS, "error", "fails the call: the model gets an error, not the text"),
    advice: "send only text, image, audio, resource_link and resource blocks"
  },
  {
    rule: "structured-content",
    applies: ({ result }) => dig(result, "content") === void 0 && dig(result, "structuredContent") !== void 0,
    clients: { "claude-code": ["error", "fails the call"], gemini: ["error", "gives the model {}"] },
    advice: "send the structuredContent as JSON in a text block too (server/tools)"
  }
];
function judge(review2, subject, what, tool) {
  for (const { rule, applies, clients, advice, stdioOnly } of RULES) {
    if (review2.overHttp === true && stdioOnly !== void 0) continue;
    for (const [client, found] of review2.found) {
      const [severity, does] = clients[client] ?? [];
      if (severity === void 0 || !applies(subject, client)) continue;
      const message = `${what}: ${does}. To do: ${advice}.`;
      found.set(message, { rule, severity, ...tool === void 0 ? {} : { tool }, message });
    }
  }
}
function offersModern(result) {
  return [dig(result, "supportedVersions")].flat().includes("2026-07-28");
}
function reviewMessage(review2, { mark, message, request }, event) {
  if (mark === "←" && message.kind === "other" && review2.listed) review2.noise ??= review2.line;
  if (mark !== "←" || message.kind !== "response") return;
  const [result, method, called] = [message.result, request?.method, request?.tool];
  const opening = method === "initialize" || method === "server/discover";
  if (opening) review2.slowestMs = Math.max(review2.slowestMs, Number(event.elapsed ?? 0));
  const refused = method === "server/discover" && !offersModern(result);
  if (refused) judge(review2, { refused }, "server/discover's answer");
  if (result === void 0) return;
  review2.server = sideName([message], "result", "serverInfo") ?? review2.server;
  if (method === "tools/call") judge(review2, { result }, `a result of "${called}"`, called);
  if (method !== "tools/list") return;
  const tools = [dig(result, "tools")].flat().filter(isRecord);
  const names = tools.map((tool) => String(dig(tool, "name")));
  for (const tool of tools) {
    const name = String(dig(tool, "name"));
    judge(review2, { name, tool, names, server: review2.server }, `tool "${name}"`, name);
  }
  Object.assign(review2, { listed: true, everListed: true });
}
async function review(logPath2) {
  const found = new Map(CLIENT_KEYS.map((client) => [client, /* @__PURE__ */ new Map()]));
  const read = {
    session: newSession(),
    line: 0,
    server: "",
    slowestMs: 0,
    listed: false,
    everListed: false,
    found
  };
  await readLines(logPath2, LOG_START, true, (lines) => {
    for (const text of lines.at(-1) === "" ? lines.slice(0, -1) : lines) {
      read.line += 1;
      const event = parseEvent(text);
      if (event === void 0) continue;
      read.overHttp ||= event.exchange !== void 0;
      if (startedCommand(event) !== void 0) read.listed = false;
      for (const followed of follow(read.session, event)) reviewMessage(read, followed, event);
    }
  }).catch((error) => cannot(`read ${logPath2}`, error));
  const seconds = (read.slowestMs / 1e3).toFixed(1);
  judge(read, { firstAnswerMs: read.slowestMs }, `the first answer took ${seconds} s`);
  if (!read.everListed) judge(read, { unlisted: true }, "no tools/list was answered");
  const stray = `line ${read.noise}, not JSON-RPC, after tools/list`;
  if (read.noise !== void 0) judge(read, { noise: true }, stray);
  return read;
}
var OPENINGS = [["2025-11-25", true], ["2025-06-18", false], ["2025-11-25", false]];
var CHECK_INFO = { name: "wrap-check", version: "1.0.0" };
var META_PARAMS = { _meta: {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": CHECK_INFO,
  "io.modelcontextprotocol/clientCapabilities": {}
} };
async function ask(server, message) {
  await server.send(JSON.stringify({ jsonrpc: "2.0", ...message }));
  const answers = (response) => response.id === message.id;
  if (message.id !== void 0) await waitFor(server, () => server.responses.some(answers));
  return server.responses.find(answers)?.result;
}
async function openAs(line, [version, probe]) {
  const server = startReplay({ ...line, command: process.execPath, args: [
    ...process.execArgv,
    fileURLToPath(import.meta.url),
    "--log",
    line.logPath,
    "--",
    line.command,
    ...line.args
  ] });
  const modern = probe && offersModern(await ask(server, {
    id: 0,
    method: "server/discover",
    params: META_PARAMS
  }));
  const params = { protocolVersion: version, capabilities: {}, clientInfo: CHECK_INFO };
  const opened = modern || await ask(server, { id: 1, method: "initialize", params }) !== void 0;
  if (!modern) await ask(server, { method: "notifications/initialized" });
  if (opened) await ask(server, { id: 2, method: "tools/list", params: modern ? META_PARAMS : {} });
  await new Promise((resolve) => setTimeout(resolve, 500));
  await server.finish("SIGTERM", KILL_AFTER_MS);
}
async function check(line) {
  const { logPath: logPath2, runs, values: values2 } = line;
  if (runs) await writeFile(logPath2, "", { mode: 384 }).catch((error) => cannot(`write ${logPath2}`, error));
  for (const opening of runs ? OPENINGS : []) await openAs(line, opening);
  const { found: byClient, overHttp } = await review(logPath2);
  const verdicts = [...byClient].map(([client, found]) => {
    const findings = [...found.values()];
    return [client, { ok: findings.every((each) => each.severity !== "error"), findings }];
  });
  const taking = verdicts.filter(([, verdict]) => verdict.ok).length;
  process.exitCode = taking === CLIENT_KEYS.length ? 0 : 1;
  const notApplied = RULES.flatMap(({ rule, stdioOnly: why }) => overHttp === true && why !== void 0 ? [{ rule, why }] : []);
  const json = JSON.stringify({
    clients: Object.fromEntries(verdicts),
    ...notApplied.length > 0 ? { notApplied } : {}
  }, null, 2);
  const rows = verdicts.flatMap(([client, { ok, findings }]) => {
    const head = `${ok ? "✓" : "✗"} ${CLIENTS[client].padEnd(11)}`;
    if (findings.length === 0) return [`${head} takes it as it is`];
    return findings.map(({ severity, rule, message }) => `${head} ${severity.padEnd(7)} ${rule.padEnd(18)} ${message}`);
  });
  rows.push(`${taking} of 5 would connect, see every tool and get every result.`);
  const unheld = notApplied.map(({ rule, why }) => `${rule} (${why})`).join(", ");
  if (unheld !== "") rows.push(`Over HTTP, not applied: ${unheld}.`);
  process.stdout.write(`${printable(values2.json === true ? json : rows.join("\n"))}
`);
  if (runs) warn(`check recorded it in ${logPath2}`);
}
var OPTIONS = {
  log: { type: "string", valueName: "FILE" },
  out: { type: "string", valueName: "FILE" },
  "no-redact": { type: "boolean" },
  ignore: { type: "string", multiple: true, valueName: "PATH" },
  timeout: { type: "string", valueName: "MS" },
  json: { type: "boolean" },
  follow: { type: "boolean" },
  errors: { type: "boolean" },
  method: { type: "string", multiple: true, valueName: "NAME" },
  listen: { type: "string", valueName: "[HOST:]PORT" },
  url: { type: "string", valueName: "URL" }
};
var COMMAND_WORDS = {
  required: "-- COMMAND [ARGS...]",
  optional: "[--] [COMMAND [ARGS...]]",
  url: "URL"
};
var RECORDING = [
  { options: ["log"], command: "optional" },
  { options: ["log"], needs: "listen", command: "url" }
];
var LISTEN_ADDRESS = /^(?:(.+):)?(\d{1,5})$/;
var READERS = /* @__PURE__ */ new Map([
  ["diagram", { forms: [{ options: ["out", "no-redact"], log: true }], run: writeDiagram }],
  ["replay", { run: replay, forms: [
    { options: ["ignore", "timeout", "no-redact"], log: true, command: "required" },
    { options: ["ignore", "timeout", "no-redact"], log: true, needs: "url" }
  ] }],
  ["redact", { forms: [{ options: [], log: true }], run: redact }],
  ["show", {
    run: show,
    forms: [{ options: ["follow", "method", "errors", "no-redact"], log: true }]
  }],
  ["stats", { forms: [{ options: ["json"], log: true }], run: stats }],
  ["check", { run: check, forms: [
    { options: ["json"], log: true },
    { options: ["json", "log", "timeout"], command: "required" }
  ] }]
]);
function optionUsage(name) {
  const option = OPTIONS[name];
  const value = option.valueName === void 0 ? "" : ` ${option.valueName}`;
  return `[--${name}${value}]${option.multiple === true ? "..." : ""}`;
}
function usageOf(forms) {
  const words2 = ({ options, log, needs, command: command2 }) => [
    ...options.map(optionUsage),
    log && "WIRE_LOG",
    needs && optionUsage(needs).slice(1, -1),
    command2 && COMMAND_WORDS[command2]
  ];
  return forms.map((form2) => words2(form2).filter((word) => word).join(" ")).join(" | ");
}
var USAGE = `Usage: ${RECORDING.map((form2) => `wrap ${usageOf([form2])}`).join("\n       ")}
Runs COMMAND (default: server.mjs) and records every line to FILE (default: wire.log), both
beside wrap.mjs; stdio passes through unchanged. Put \`--\` before a COMMAND that starts with -.
With --listen, serves http://HOST:PORT/mcp (HOST: 127.0.0.1) in front of the MCP endpoint URL,
and records every exchange; HTTP passes through unchanged.
Reading a log back (README, "Read a log back"):
${Array.from(READERS, ([name, { forms }]) => `  wrap ${name} ${usageOf(forms)}
`).join("")}`;
var MISUSE = 2;
var LONGEST_TIMEOUT_MS = 2147483647;
function exitWithUsage(to, exitCode) {
  to.write(USAGE);
  process.exit(exitCode);
}
function cannot(what, error) {
  warn(`cannot ${what}: ${String(error)}`);
  process.exit(1);
}
var argv = process.argv.slice(2);
var here = dirname(fileURLToPath(import.meta.url));
if (argv.length === 1 && argv[0] === "--help") exitWithUsage(process.stdout, 0);
var { tokens } = parseArgs({ args: argv, options: OPTIONS, strict: false, tokens: true });
var ownEnd = tokens.find((token) => token.kind !== "option")?.index ?? argv.length;
var reader = READERS.get(argv[ownEnd] ?? "");
var split = reader === void 0 ? ownEnd : argv.indexOf("--");
var ownWords = split === -1 ? argv : argv.slice(0, split);
var noCommand = split === -1 || split === argv.length;
var commandWords = argv.slice(argv[split] === "--" ? split + 1 : split);
var [command, ...args] = noCommand ? [process.execPath, join(here, "server.mjs")] : commandWords;
var config = { args: ownWords, options: OPTIONS, allowPositionals: true };
var parsed = attempt(() => parseArgs(config));
if (parsed === void 0) exitWithUsage(process.stderr, MISUSE);
var { values, positionals: [, logPath, ...extra] } = parsed;
var form = (reader?.forms ?? RECORDING).findLast((each) => each.log === true === (logPath !== void 0) && each.command !== void 0 === (split !== -1) && (each.needs === void 0 || values[each.needs] !== void 0));
var takes = [...form?.options ?? [], ...form?.needs ? [form.needs] : []];
var timeoutMs = Number(values.timeout ?? 5e3);
var foreignOption = Object.keys(values).some((option) => !takes.includes(option));
var emptyWord = [values.log, values.out, logPath, command].includes("");
var badTimeout = !Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > LONGEST_TIMEOUT_MS;
var target = form?.command === "url" ? command : values.url;
var endpoint = attempt(() => new URL(target ?? ""));
var badUrl = target !== void 0 && !/^https?:$/.test(endpoint?.protocol ?? "") || form?.command === "url" && (args.length > 0 || !LISTEN_ADDRESS.test(values.listen ?? ""));
var wrong = extra.length > 0 || foreignOption || emptyWord || badTimeout || badUrl;
if (wrong || form === void 0 || command === void 0) exitWithUsage(process.stderr, MISUSE);
if (reader === void 0 && values.listen !== void 0) {
  listen(values.listen, command, values.log ?? join(here, "wire.log"));
} else if (reader === void 0) {
  proxy(command, args, values.log ?? join(here, "wire.log"));
} else {
  process.stdout.on("error", () => process.exit(128 + constants.signals.SIGPIPE));
  const read = logPath ?? values.log ?? join(here, "check.log");
  await reader.run({ logPath: read, values, timeoutMs, command, args, runs: split !== -1 });
}
