#!/usr/bin/env node

// wrap.ts
import { spawn } from "node:child_process";
import { isUtf8 } from "node:buffer";
import { closeSync, createReadStream, openSync, watch, watchFile, writeSync } from "node:fs";
import { open, readFile, stat, writeFile } from "node:fs/promises";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { constants } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
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
  if (typeof method === "string" && validId) return { kind: "request", id, method, params };
  if (typeof method === "string" && id === void 0) {
    return { kind: "notification", method, params };
  }
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
var LARGE_LINE = 1048576;
var OPPOSITE = { "→": "←", "←": "→" };
var CR = 13;
var NEWLINE = Buffer.from("\n");
var POLLUTION = "[not JSON-RPC]";
function splitLines(pieces, chunk) {
  const lines = [];
  let start = 0;
  let end = chunk.indexOf("\n");
  while (end !== -1) {
    const piece = chunk.subarray(start, end);
    lines.push(pieces.length === 0 ? piece : Buffer.concat([...pieces.splice(0), piece]));
    start = end + 1;
    end = chunk.indexOf("\n", start);
  }
  if (start < chunk.length) pieces.push(chunk.subarray(start));
  return lines;
}
function annotate(pending, mark, line, now) {
  const tags = /* @__PURE__ */ new Set();
  let elapsed;
  if (line.length > LARGE_LINE) tags.add(`[${line.length} bytes]`);
  if (!isUtf8(line)) tags.add("[not UTF-8]");
  if (line[line.length - 1] === CR) tags.add("[CRLF]");
  for (const message of messagesOf(line.toString())) {
    if (message.kind === "request") {
      const key = `${mark} ${JSON.stringify(message.id)}`;
      if (pending.has(key)) tags.add("[id in use]");
      else pending.set(key, { method: message.method, sentAt: now });
    }
    if (message.kind === "response" && message.id !== null) {
      const key = `${OPPOSITE[mark]} ${JSON.stringify(message.id)}`;
      const request = pending.get(key);
      if (request === void 0) tags.add("[no request]");
      else elapsed ??= `(${(now - request.sentAt).toFixed(1)} ms)`;
      pending.delete(key);
    }
    if (message.kind === "other" && mark === "←") tags.add(POLLUTION);
  }
  return elapsed === void 0 ? [...tags] : [elapsed, ...tags];
}
function pollutionWarning(line) {
  const text = line.toString();
  const shown = JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text);
  return `wrap: the server wrote a line to stdout that is not JSON-RPC: ${shown}
wrap: MCP clients skip such a line or close the connection; a server logs to stderr
`;
}
function newTap() {
  const pieces = { "→": [], "←": [], "!": [] };
  return { pieces, pending: /* @__PURE__ */ new Map(), polluted: false, warnings: [] };
}
function lineEvent(tap, mark, line, time, now) {
  const notes = mark === "!" ? [] : annotate(tap.pending, mark, line, now);
  if (!tap.polluted && notes.includes(POLLUTION)) {
    tap.polluted = true;
    tap.warnings.push(pollutionWarning(line));
  }
  return [Buffer.from(`${[time, mark, ...notes].join(" ")} `), line, NEWLINE];
}
function eventsOf(tap, crossing) {
  const time = new Date(performance.timeOrigin + crossing.now).toISOString();
  if (crossing.kind === "note") return [Buffer.from(`${time} # ${crossing.text}
`)];
  const { mark, now } = crossing;
  const waiting = tap.pieces[mark];
  const lines = crossing.kind === "chunk" ? splitLines(waiting, crossing.chunk) : [];
  if (crossing.kind === "end" && waiting.length > 0) lines.push(Buffer.concat(waiting));
  return lines.flatMap((line) => lineEvent(tap, mark, line, time, now));
}
function unansweredNotes(tap, now) {
  return Array.from(tap.pending, ([key, request]) => {
    const waited = `waited ${(now - request.sentAt).toFixed(1)} ms`;
    return `unanswered ${key} ${JSON.stringify(request.method)} (${waited})`;
  });
}
var AT_ONCE_RATE = 500;
var AT_ONCE_MAX = 16384;
var QUIET_MS = 5;
var MAX_BEHIND = 16 * 1048576;
var MAX_DELAY_MS = 1e3;
var SLICE = 65536;
function closeFile(writer) {
  const { fd } = writer;
  writer.fd = void 0;
  if (fd !== void 0) attempt(() => closeSync(fd));
}
function logFailed(writer, error) {
  const why = error instanceof Error ? error.message : String(error);
  process.stderr.write(`wrap: cannot write log ${writer.path}: ${why}; traffic still flows
`);
  closeFile(writer);
}
function openLog(logPath2) {
  const writer = {
    fd: void 0,
    path: logPath2,
    tap: newTap(),
    unread: [],
    behind: 0,
    credit: AT_ONCE_MAX,
    creditAt: performance.now(),
    waiting: false
  };
  try {
    writer.fd = openSync(logPath2, "a", 384);
  } catch (error) {
    logFailed(writer, error);
  }
  return writer;
}
function catchUp(writer, bytes) {
  const { tap, unread } = writer;
  let count = 0;
  let read = 0;
  while (count < unread.length && read < bytes) {
    const crossing = unread[count];
    read += crossing?.kind === "chunk" ? crossing.chunk.length : 0;
    count += 1;
  }
  writer.behind -= read;
  const events = unread.splice(0, count).flatMap((crossing) => eventsOf(tap, crossing));
  for (const warning of tap.warnings.splice(0)) process.stderr.write(warning);
  if (writer.fd === void 0 || events.length === 0) return;
  const written = Buffer.concat(events);
  try {
    for (let at = 0; at < written.length; ) at += writeSync(writer.fd, written, at);
  } catch (error) {
    logFailed(writer, error);
  }
}
function flush(writer) {
  while (writer.unread.length > 0) catchUp(writer, SLICE);
}
function logLater(writer, crossing) {
  writer.unread.push(crossing);
  if (crossing.kind === "chunk") writer.behind += crossing.chunk.length;
  const saved = writer.credit + (crossing.now - writer.creditAt) * AT_ONCE_RATE;
  writer.credit = Math.min(AT_ONCE_MAX, saved);
  writer.creditAt = crossing.now;
  if (writer.behind <= writer.credit) {
    writer.credit -= writer.behind;
    catchUp(writer, Infinity);
  } else if (!writer.waiting) {
    writer.waiting = true;
    setTimeout(whenQuiet, QUIET_MS, writer);
  }
}
function note(writer, text) {
  logLater(writer, { kind: "note", text, now: performance.now() });
}
function whenQuiet(writer) {
  const { unread } = writer;
  const now = performance.now();
  const quiet = now - (unread.at(-1)?.now ?? 0) >= QUIET_MS;
  const late = now - (unread[0]?.now ?? now) > MAX_DELAY_MS;
  const due = quiet || late || writer.behind > MAX_BEHIND;
  if (due) catchUp(writer, SLICE);
  writer.waiting = unread.length > 0;
  if (writer.waiting) setTimeout(whenQuiet, due ? 0 : QUIET_MS, writer);
}
function closeLog(writer, last) {
  flush(writer);
  for (const text of unansweredNotes(writer.tap, performance.now())) note(writer, text);
  note(writer, last);
  flush(writer);
  closeFile(writer);
}
var KILL_AFTER_MS = 1e3;
var PARENT_CHECK_MS = 500;
function spawned(command2, start) {
  try {
    return start();
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    process.stderr.write(`wrap: cannot start ${command2}: ${why}
`);
    process.exit(CANNOT_START);
  }
}
function relay(plumbing, from, to, mark, end) {
  const { writer } = plumbing;
  from.pipe(to, { end });
  const log = (chunk) => {
    logLater(writer, { kind: "chunk", mark, chunk, now: performance.now() });
  };
  if (mark === "←") from.prependListener("data", log);
  else from.on("data", log);
  from.on("end", () => logLater(writer, { kind: "end", mark, now: performance.now() }));
  to.on("error", (error) => {
    note(writer, `cannot pass ${mark} on: ${error.message}`);
    from.resume();
    if (mark === "←") stop(plumbing, "SIGTERM", "the client is gone: wrap's stdout is closed");
  });
}
function stop(plumbing, signal, why) {
  const { child, writer } = plumbing;
  if (child.exitCode !== null || child.signalCode !== null) return;
  note(writer, `${why}: sending ${signal}`);
  flush(writer);
  child.kill(signal);
  if (signal === "SIGKILL") return;
  const still = `still running ${KILL_AFTER_MS} ms after ${signal}`;
  setTimeout(() => stop(plumbing, "SIGKILL", still), KILL_AFTER_MS);
}
async function finish(plumbing, code, last) {
  closeLog(plumbing.writer, last);
  await new Promise((resolve) => process.stdout.write("", () => resolve()));
  process.exit(code);
}
function watchServer(plumbing) {
  const { command: command2, child } = plumbing;
  child.on("error", (error) => {
    if (child.pid !== void 0) return;
    process.stderr.write(`wrap: cannot start ${command2}: ${error.message}
`);
    void finish(plumbing, CANNOT_START, `cannot start ${command2}: ${error.message}`);
  });
  child.on("exit", () => {
    setTimeout(() => {
      child.stdout.push(null);
      child.stderr.push(null);
    }, PIPES_GRACE_MS);
  });
  child.on("close", (code, signal) => {
    if (child.pid === void 0) return;
    if (signal === null) void finish(plumbing, code ?? 0, `exit code ${code}`);
    else void finish(plumbing, 128 + constants.signals[signal], `exit signal ${signal}`);
  });
}
function watchClient(plumbing) {
  process.stdin.on("end", () => {
    note(plumbing.writer, "end of input");
    flush(plumbing.writer);
  });
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
    process.on(signal, () => stop(plumbing, signal, `received ${signal}`));
  }
  const parent = process.ppid;
  const watch2 = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(watch2);
    stop(plumbing, "SIGTERM", `the client is gone: its pid ${parent} exited`);
  }, PARENT_CHECK_MS);
  watch2.unref();
}
function proxy(command2, args2, logPath2) {
  const writer = openLog(logPath2);
  const child = spawned(command2, () => spawn(command2, args2, { stdio: "pipe" }));
  const plumbing = { command: command2, child, writer };
  const commandLine = [command2, ...args2].join(" ");
  if (child.pid !== void 0) note(writer, `start pid ${child.pid}: ${commandLine}`);
  watchServer(plumbing);
  relay(plumbing, process.stdin, child.stdin, "→", true);
  relay(plumbing, child.stdout, process.stdout, "←", true);
  relay(plumbing, child.stderr, process.stderr, "!", false);
  watchClient(plumbing);
}
var MARKS = ["→", "←", "!", "#"];
var EVENT_HEAD = new RegExp(String.raw`^\S+ ([→←!#]) (?:\((\d+(?:\.\d+)?) ms\) )?` + [String.raw`\d+ bytes`, "not UTF-8", "CRLF", "no request", "id in use", "not JSON-RPC"].map((tag) => String.raw`(?:\[${tag}\] )?`).join(""));
function parseEvent(line) {
  const head = EVENT_HEAD.exec(line);
  const mark = MARKS.find((each) => each === head?.[1]);
  if (head === null || mark === void 0) return void 0;
  const text = line.slice(head[0].length);
  const found = head[0].includes("[") ? head[0].matchAll(/\[(.+?)\] /g) : [];
  const tags = Array.from(found, ([tag]) => tag.slice(1, -2));
  const messages = mark === "→" || mark === "←" ? messagesOf(text) : [];
  const time = line.slice(0, line.indexOf(" "));
  return { time, mark, elapsed: head[2], tags, text, messages };
}
function parseLog(log) {
  return log.split("\n").flatMap((line) => parseEvent(line) ?? []);
}
function dig(value, ...keys) {
  const [key, ...rest] = keys;
  if (key === void 0) return value;
  return isRecord(value) && Object.hasOwn(value, key) ? dig(value[key], ...rest) : void 0;
}
function words(...parts) {
  return parts.filter((part) => part !== void 0).join(" ");
}
function newRounds() {
  return { next: /* @__PURE__ */ new Map(), waiting: /* @__PURE__ */ new Map() };
}
function elicitationMessage(method, params) {
  const message = dig(params, "message");
  return method === "elicitation/create" && typeof message === "string" ? message : void 0;
}
function inputRequestsOf(message) {
  if (message.kind !== "response") return void 0;
  if (dig(message.result, "resultType") !== "input_required") return void 0;
  const requests = dig(message.result, "inputRequests");
  return (isRecord(requests) ? Object.values(requests) : []).map((request) => {
    const method = dig(request, "method");
    const named = typeof method === "string" ? method : "(no method)";
    return { method: named, message: elicitationMessage(method, dig(request, "params")) };
  });
}
function briefAsks(requests, quote) {
  const methods = new Set(requests.map((request) => request.method));
  return Array.from(methods, (method) => {
    const shown = requests.filter((request) => request.method === method).flatMap((request) => request.message === void 0 ? [] : [quote(request.message)]);
    return shown.length === 0 ? method : `${method} ${shown.join(", ")}`;
  }).join(", ");
}
function elicitAnswer(message) {
  if (message.kind !== "response") return void 0;
  const action = dig(message.result, "action");
  if (typeof action !== "string") return void 0;
  const content = dig(message.result, "content");
  return content === void 0 ? action : `${action} ${JSON.stringify(content)}`;
}
function roundOfRequest(rounds, mark, message) {
  if (message.kind !== "request") return void 0;
  const state = dig(message.params, "requestState");
  const retry = state !== void 0 || dig(message.params, "inputResponses") !== void 0;
  const known = typeof state === "string" ? rounds.next.get(state) : void 0;
  const round = retry ? known : 1;
  if (round !== void 0) rounds.waiting.set(`${mark}${JSON.stringify(message.id)}`, round);
  if (round === void 0) return "retry";
  return round > 1 ? `round ${round}` : void 0;
}
function settleRound(rounds, mark, message) {
  if (message.kind !== "response") return;
  const key = `${OPPOSITE[mark]}${JSON.stringify(message.id)}`;
  const round = rounds.waiting.get(key);
  rounds.waiting.delete(key);
  const state = dig(message.result, "requestState");
  const asks = inputRequestsOf(message) !== void 0;
  if (round !== void 0 && asks && typeof state === "string") rounds.next.set(state, round + 1);
}
function followRounds(rounds, mark, message) {
  settleRound(rounds, mark, message);
  return roundOfRequest(rounds, mark, message);
}
var REDACTED = "[redacted]";
var SECRET_KEY = /^(?:authorization|cookie|password|secret|token|api_?key)$|_(?:token|key)$/i;
var SECRET_TEXT = /\bBearer\s+[^\s"',;]+|\b(?:sk-[\w-]{16,}|ghp_[A-Za-z0-9]{20,}|xox[a-z]-[\w-]{8,})/g;
var SECRET_PAIR = new RegExp(String.raw`\b(authorization|cookie|password|secret|token|` + String.raw`api_?key|\w+_(?:token|key))("? ?[:=] ?"?)[^\s"',;&]+`, "gi");
function hideSecret(key, value) {
  if (SECRET_KEY.test(key)) return REDACTED;
  return typeof value === "string" ? value.replace(SECRET_TEXT, REDACTED) : value;
}
function redactText(text) {
  const value = attempt(() => JSON.parse(text));
  if (value === void 0) {
    return text.replace(SECRET_TEXT, REDACTED).replace(SECRET_PAIR, `$1$2${REDACTED}`);
  }
  const redacted = JSON.stringify(value, hideSecret);
  return redacted === JSON.stringify(value) ? text : redacted;
}
function redactLog(log) {
  return log.split("\n").map((line) => {
    const head = EVENT_HEAD.exec(line)?.[0];
    return head === void 0 ? redactText(line) : head + redactText(line.slice(head.length));
  }).join("\n");
}
var BLOCK_LIMIT = 2e3;
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
  const safe = text.replace(/[#;<>%&"{}]/g, (found) => LOOKALIKES.get(found) ?? found);
  const characters = Array.from(safe.replace(/[\s\u0000-\u001f\u007f]+/g, " ").trim());
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
function describeRequest(method, params, place) {
  const tool = method === "tools/call" ? dig(params, "name") : void 0;
  const asked = elicitationMessage(method, params);
  const named = typeof tool === "string" ? tool : void 0;
  return words(method, named, asked, place === void 0 ? void 0 : `(${place})`);
}
function describe(message, text, place) {
  if (message.kind === "other") return `not JSON-RPC ${label(text, 20)}`;
  if (message.kind !== "response") return describeRequest(message.method, message.params, place);
  const content = dig(message.result, "content", "0", "text");
  if (message.error !== void 0) return `error ${String(dig(message.error, "code"))}`;
  if (dig(message.result, "isError") === true) return `isError ${String(content)}`;
  const asks = inputRequestsOf(message);
  const questions = asks?.map((request) => request.message ?? request.method).join(", ");
  if (questions !== void 0) return `input required: ${questions}`;
  return elicitAnswer(message) ?? (typeof content === "string" ? content : "result");
}
function statements(event, rounds) {
  if (event.mark === "#") return [`Note over C,S: ${label(event.text, 70)}`];
  if (event.mark === "!") return [`Note right of S: ${label(event.text, 50)}`];
  const mark = event.mark;
  const [from, to] = mark === "→" ? ["C", "S"] : ["S", "C"];
  const arrows = event.messages.map((message) => {
    const said = describe(message, event.text, followRounds(rounds, mark, message));
    const timed = message.kind === "response" && event.elapsed !== void 0;
    const text = timed ? `${event.elapsed} ms ${said}` : said;
    return `${from}${ARROWS[message.kind]}${to}: ${label(text, 50)}`;
  });
  return [...arrows, ...event.tags.map((tag) => `Note over C,S: ${label(tag, 30)}`)];
}
function sessionStatements(events) {
  let rounds = newRounds();
  const drawn = [];
  for (const event of events) {
    if (event.mark === "#" && event.text.startsWith("start ")) rounds = newRounds();
    drawn.push(...statements(event, rounds));
  }
  return drawn;
}
function diagram(events) {
  const messages = events.flatMap((event) => event.messages);
  const start = events.find((event) => event.mark === "#" && event.text.startsWith("start pid "));
  const words2 = start?.text.replace(/^start pid \d+: /, "").split(" ").slice(0, 2) ?? ["server"];
  const command2 = words2.map((word) => word.split("/").at(-1)).join(" ");
  const head = [
    "sequenceDiagram",
    `participant C as ${label(sideName(messages, "params", "clientInfo") ?? "client", 40)}`,
    `participant S as ${label(sideName(messages, "result", "serverInfo") ?? command2, 40)}`
  ];
  let part = [];
  const parts = [part];
  for (const statement of sessionStatements(events)) {
    if ([...head, ...part, statement].join("\n").length > BLOCK_LIMIT - 100) {
      part = [];
      parts.push(part);
    }
    part.push(statement);
  }
  return parts.map((lines, index) => {
    const count = `${index + 1} of ${parts.length}`;
    const title = parts.length > 1 ? [`Part ${count}`, ""] : [];
    const joint = index > 0 ? [`Note over C,S: part ${count}, continued from part ${index}`] : [];
    return [...title, "```mermaid", ...head, ...joint, ...lines, "```", ""].join("\n");
  }).join("\n");
}
var AROUND = 40;
var REPORT_LINES = 6;
var REPORT_CHARACTERS = 1e3;
function differences(expected, actual, path, ignore) {
  const ignored = ignore.some((pattern) => pattern.length === path.length && pattern.every((key, index) => key === "*" || key === path[index]));
  if (ignored) return [];
  if (isRecord(expected) && isRecord(actual) && Array.isArray(expected) === Array.isArray(actual)) {
    const keys = /* @__PURE__ */ new Set([...Object.keys(expected), ...Object.keys(actual)]);
    return [...keys].flatMap((key) => {
      return differences(dig(expected, key), dig(actual, key), [...path, key], ignore);
    });
  }
  if (JSON.stringify(expected) === JSON.stringify(actual)) return [];
  return [{ path, expected, actual }];
}
function brief(value, redact) {
  if (value === void 0) return "nothing";
  const text = JSON.stringify(value, redact ? hideSecret : void 0);
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}
function around(text, at) {
  const from = Math.max(0, at - AROUND);
  const to = Math.min(text.length, at + AROUND);
  const before = from > 0 ? "…" : "";
  const after = to < text.length ? "…" : "";
  return `${before}${JSON.stringify(text.slice(from, to))}${after}`;
}
function describeDifference({ path, expected, actual }, redact) {
  const where = path.length === 0 ? "(the whole message)" : path.join(".");
  const secret = redact && path.some((key) => SECRET_KEY.test(key));
  if (secret) return `${where}: differs, in a redacted value`;
  if (typeof expected !== "string" || typeof actual !== "string") {
    return `${where}: expected ${brief(expected, redact)}, got ${brief(actual, redact)}`;
  }
  const shownExpected = redact ? expected.replace(SECRET_TEXT, REDACTED) : expected;
  const shownActual = redact ? actual.replace(SECRET_TEXT, REDACTED) : actual;
  if (shownExpected === shownActual) return `${where}: differs, in a redacted value`;
  let at = 0;
  while (shownExpected[at] === shownActual[at]) at += 1;
  return `${where}: strings part at character ${at}: expected ${around(shownExpected, at)}, got ${around(shownActual, at)}`;
}
function report(name, found, redact) {
  const shown = found.slice(0, REPORT_LINES - 2).map((each) => {
    return `  ${describeDifference(each, redact)}`;
  });
  const more = found.length - shown.length;
  if (more > 0) shown.push(`  (${more} more)`);
  const text = [`✗ ${name}`, ...shown].join("\n");
  const short = text.length > REPORT_CHARACTERS;
  return short ? `${text.slice(0, REPORT_CHARACTERS - 1)}…` : text;
}
function startReplayed(command2, args2) {
  const server = spawned(command2, () => {
    return spawn(command2, args2, { stdio: ["pipe", "pipe", "inherit"] });
  });
  server.on("error", (error) => {
    if (server.pid !== void 0) return;
    process.stderr.write(`wrap: cannot start ${command2}: ${error.message}
`);
    process.exit(CANNOT_START);
  });
  server.stdin.on("error", () => {
  });
  const exited = new AbortController();
  server.on("close", () => exited.abort());
  server.on("exit", () => setTimeout(() => server.stdout.destroy(), PIPES_GRACE_MS).unref());
  const replayed = {
    server,
    lines: createInterface({ input: server.stdout }),
    responses: [],
    requested: /* @__PURE__ */ new Set(),
    exited: exited.signal
  };
  replayed.lines.on("line", (line) => {
    for (const message of messagesOf(line)) {
      if (message.kind === "response") replayed.responses.push(message);
      if (message.kind === "request") replayed.requested.add(JSON.stringify(message.id));
    }
  });
  return replayed;
}
async function waitFor(replayed, check, timeoutMs2) {
  const signal = AbortSignal.any([replayed.exited, AbortSignal.timeout(timeoutMs2)]);
  while (!check() && !signal.aborted) {
    await once(replayed.lines, "line", { signal }).catch(() => void 0);
  }
}
var REQUEST_STATE_PATH = ["result", "requestState"];
function rememberState(states, recorded, actual) {
  const before = dig(recorded.result, "requestState");
  const now = dig(actual.result, "requestState");
  if (typeof before === "string" && typeof now === "string") states.set(before, now);
}
function withStates(text, states) {
  return text.replace(/"requestState":"([^"\\]*)"/g, (found, state) => {
    const replayed = states.get(state);
    return replayed === void 0 ? found : `"requestState":${JSON.stringify(replayed)}`;
  });
}
async function replay(events, command2, args2, options) {
  const { ignore, timeoutMs: timeoutMs2, redact } = options;
  const replayed = startReplayed(command2, args2);
  const { server, responses } = replayed;
  const methods = /* @__PURE__ */ new Map();
  const tally = { match: 0, differ: 0, missing: 0 };
  const states = /* @__PURE__ */ new Map();
  const ignored = [...ignore, REQUEST_STATE_PATH];
  for (const event of events) {
    for (const message of event.messages) {
      const id = JSON.stringify("id" in message ? message.id : null);
      if (message.kind === "request" && event.mark === "→") methods.set(id, message.method);
      const answersServer = message.kind === "response" && event.mark === "→";
      if (answersServer) await waitFor(replayed, () => replayed.requested.has(id), timeoutMs2);
      if (message.kind !== "response" || event.mark !== "←") continue;
      const answers = (each) => JSON.stringify(each.id) === id;
      await waitFor(replayed, () => responses.some(answers), timeoutMs2);
      const index = responses.findIndex(answers);
      const actual = index === -1 ? void 0 : responses.splice(index, 1)[0];
      if (actual !== void 0) rememberState(states, message, actual);
      const found = actual === void 0 ? [] : differences(message, actual, [], ignored);
      const outcome = actual === void 0 ? "missing" : found.length > 0 ? "differ" : "match";
      tally[outcome] += 1;
      const name = methods.has(id) ? `${id} ${JSON.stringify(methods.get(id))}` : id;
      if (actual === void 0) process.stdout.write(`✗ ${name}: missing
`);
      if (found.length > 0) process.stdout.write(`${report(name, found, redact)}
`);
    }
    if (event.mark === "→") server.stdin.write(`${withStates(event.text, states)}
`);
  }
  return finishReplay(replayed, tally, timeoutMs2);
}
async function finishReplay(replayed, tally, timeoutMs2) {
  const { server, responses, exited } = replayed;
  server.stdin.end();
  setTimeout(() => server.kill("SIGKILL"), timeoutMs2).unref();
  if (!exited.aborted) await once(exited, "abort");
  for (const left of responses) {
    process.stdout.write(`✗ ${JSON.stringify(left.id)}: unexpected
`);
  }
  const { match, differ, missing } = tally;
  process.stdout.write(`replay: ${match + differ + missing} responses, ${match} match, ${differ} differ, ${missing} missing, ${responses.length} unexpected
`);
  return differ + missing + responses.length === 0 ? 0 : 1;
}
var COLOURS = { "→": "36", "←": "35", "!": "33", "#": "1", error: "31" };
function methodOf(message) {
  if (message.kind !== "request" && message.kind !== "notification") return "";
  const tool = message.method === "tools/call" ? dig(message.params, "name") : void 0;
  return typeof tool === "string" ? `${message.method} ${tool}` : message.method;
}
function failed(message) {
  if (message.kind !== "response") return false;
  return message.error !== void 0 || dig(message.result, "isError") === true;
}
function requestSummary(message, place) {
  const args2 = dig(message.params, "arguments") ?? message.params;
  const asked = elicitationMessage(message.method, message.params);
  const carried = asked ?? (args2 === void 0 ? void 0 : JSON.stringify(args2));
  return words(methodOf(message), `#${JSON.stringify(message.id)}`, place, carried);
}
function notificationSummary(message) {
  if (message.method === "notifications/cancelled") {
    const requestId = JSON.stringify(dig(message.params, "requestId"));
    return `${message.method} #${requestId} ${String(dig(message.params, "reason") ?? "")}`;
  }
  const progress = dig(message.params, "progress");
  const total = dig(message.params, "total");
  const of = total === void 0 ? "" : `/${String(total)}`;
  const step = `${String(progress)}${of}`;
  return progress === void 0 ? methodOf(message) : `${methodOf(message)} ${step}`;
}
function responseSummary(message, elapsed) {
  const time = elapsed === void 0 ? void 0 : `${elapsed} ms`;
  const id = words(`#${JSON.stringify(message.id)}`, time);
  if (message.error !== void 0) {
    const code = dig(message.error, "code");
    return `${id} error ${String(code)} ${String(dig(message.error, "message"))}`;
  }
  const asks = inputRequestsOf(message);
  const quoted = (text) => JSON.stringify(text);
  if (asks !== void 0) return `${id} input_required ${briefAsks(asks, quoted)}`;
  const said = dig(message.result, "content", "0", "text");
  const result = elicitAnswer(message) ?? (typeof said === "string" ? said : JSON.stringify(message.result));
  return `${id} ${dig(message.result, "isError") === true ? "isError" : "result"} ${result}`;
}
function summary(message, elapsed, text, place) {
  if (message.kind === "other") return `not JSON-RPC: ${text}`;
  if (message.kind === "request") return requestSummary(message, place);
  if (message.kind === "notification") return notificationSummary(message);
  return responseSummary(message, elapsed);
}
function passes(shower, mark, message) {
  if (message.kind === "request") {
    shower.asked.set(`${mark}${JSON.stringify(message.id)}`, methodOf(message));
  }
  if (shower.errorsOnly && !failed(message)) return false;
  if (shower.methods.length === 0) return true;
  const id = "id" in message ? JSON.stringify(message.id) : "";
  const asked = shower.asked.get(`${OPPOSITE[mark]}${id}`);
  const method = message.kind === "response" ? asked : methodOf(message);
  return shower.methods.some((wanted) => method === wanted || method?.startsWith(`${wanted} `));
}
function fitted(shower, time, mark, text, colour) {
  const characters = Array.from(`${time} ${mark} ${text.replace(/[\u0000-\u001f\u007f]/g, " ")}`);
  const long = characters.length > shower.width;
  const cut = long ? [...characters.slice(0, shower.width - 1), "…"] : characters;
  const line = cut.join("");
  return shower.colour ? `\x1B[${colour}m${line}\x1B[0m` : line;
}
function showEvent(shower, event) {
  const at = Date.parse(event.time);
  const start = event.mark === "#" && event.text.startsWith("start ");
  if (start) shower.sessionStart = at;
  if (start) shower.rounds = newRounds();
  if (start) return [fitted(shower, "───", "#", event.text, COLOURS["#"])];
  const time = `+${((at - shower.sessionStart) / 1e3).toFixed(3)}s`;
  const tags = event.tags.map((tag) => `[${tag}] `).join("");
  const filtering = shower.methods.length > 0 || shower.errorsOnly;
  if (event.mark === "!" || event.mark === "#") {
    const line = fitted(shower, time, event.mark, tags + event.text, COLOURS[event.mark]);
    return filtering ? [] : [line];
  }
  const mark = event.mark;
  return event.messages.flatMap((message) => {
    const place = followRounds(shower.rounds, mark, message);
    if (!passes(shower, mark, message)) return [];
    const colour = failed(message) ? COLOURS.error : COLOURS[mark];
    const said = summary(message, event.elapsed, event.text, place);
    return [fitted(shower, time, mark, tags + said, colour)];
  });
}
function showLines(shower, text) {
  const lines = text.split("\n");
  const rest = lines.pop() ?? "";
  const printed = [];
  for (const line of lines) {
    const event = parseEvent(shower.redact ? redactLog(line) : line);
    if (event === void 0 && line !== "") shower.skipped += 1;
    if (event !== void 0) printed.push(...showEvent(shower, event));
  }
  if (printed.length > 0) process.stdout.write(`${printed.join("\n")}
`);
  return rest;
}
async function showFrom(shower, path, offset, rest) {
  const file = await open(path, "r");
  const slice = Buffer.alloc(1048576);
  let at = offset;
  let held = rest;
  for (; ; ) {
    const { bytesRead } = await file.read(slice, 0, slice.length, at);
    if (bytesRead === 0) break;
    at += bytesRead;
    const text = Buffer.concat([held, slice.subarray(0, bytesRead)]);
    const end = text.lastIndexOf(10) + 1;
    showLines(shower, text.subarray(0, end).toString("utf8"));
    held = Buffer.from(text.subarray(end));
  }
  await file.close();
  return { offset: at, rest: held };
}
async function follow(shower, path, start) {
  let read = start;
  let reading = Promise.resolve();
  const catchUp2 = () => {
    reading = reading.then(async () => {
      const size = (await stat(path).catch(() => void 0))?.size ?? read.offset;
      if (size < read.offset) {
        process.stdout.write("─── the log was cut or replaced: reading it from its start\n");
        read = { offset: 0, rest: Buffer.alloc(0) };
      }
      read = await showFrom(shower, path, read.offset, read.rest).catch(() => read);
    });
  };
  watch(path, catchUp2).on("error", () => {
  });
  watchFile(path, { interval: 1e3 }, catchUp2);
  process.on("SIGINT", () => process.exit(0));
  await new Promise(() => {
  });
}
async function show(path, options, following) {
  const shower = {
    ...options,
    sessionStart: 0,
    asked: /* @__PURE__ */ new Map(),
    rounds: newRounds(),
    skipped: 0
  };
  const read = await showFrom(shower, path, 0, Buffer.alloc(0)).catch((error) => {
    return cannot(`read ${path}`, error);
  });
  if (following) await follow(shower, path, read);
  showLines(shower, `${read.rest.toString("utf8")}
`);
  if (shower.skipped > 0) {
    process.stdout.write(`skipped ${shower.skipped} lines that are not wire.log events
`);
  }
}
function newSession(start, command2) {
  return {
    start,
    end: start,
    command: command2,
    requests: /* @__PURE__ */ new Map(),
    waiting: /* @__PURE__ */ new Map(),
    notifications: /* @__PURE__ */ new Map(),
    tags: /* @__PURE__ */ new Map(),
    stderrLines: 0,
    messages: { "→": { count: 0, bytes: 0 }, "←": { count: 0, bytes: 0 } }
  };
}
function countIn(counts, key) {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}
function countRequest(session, mark, message) {
  if (message.kind !== "request") return;
  const name = dig(message.params, "name");
  const tool = message.method === "tools/call" && typeof name === "string" ? name : void 0;
  const key = `${mark} ${message.method}${tool === void 0 ? "" : ` ${tool}`}`;
  const figures = session.requests.get(key) ?? { direction: mark, method: message.method, tool, count: 0, errors: 0, roundTrips: /* @__PURE__ */ new Map() };
  figures.count += 1;
  session.requests.set(key, figures);
  session.waiting.set(`${mark}${JSON.stringify(message.id)}`, key);
}
function countResponse(session, mark, message, elapsed) {
  if (message.kind !== "response") return;
  const waitingKey = `${OPPOSITE[mark]}${JSON.stringify(message.id)}`;
  const figures = session.requests.get(session.waiting.get(waitingKey) ?? "");
  if (figures === void 0) return;
  session.waiting.delete(waitingKey);
  const toolError = figures.tool !== void 0 && dig(message.result, "isError") === true;
  if (message.error !== void 0 || toolError) figures.errors += 1;
  if (elapsed === void 0) return;
  const tenths = Math.round(Number(elapsed) * 10);
  figures.roundTrips.set(tenths, (figures.roundTrips.get(tenths) ?? 0) + 1);
}
function countEvent(session, event) {
  session.end = event.time;
  for (const tag of event.tags) countIn(session.tags, /^\d+ bytes$/.test(tag) ? "over 1 MiB" : tag);
  if (event.mark === "!") session.stderrLines += 1;
  if (event.mark !== "→" && event.mark !== "←") return;
  const mark = event.mark;
  session.messages[mark].bytes += Buffer.byteLength(event.text) + 1;
  for (const message of event.messages) {
    if (message.kind !== "other") session.messages[mark].count += 1;
    const notified = message.kind === "notification" ? `${mark} ${message.method}` : void 0;
    if (notified !== void 0) countIn(session.notifications, notified);
    countRequest(session, mark, message);
    countResponse(session, mark, message, event.elapsed);
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
  const requests = [...session.requests.values()].map((figures) => ({
    direction: figures.direction,
    method: figures.method,
    tool: figures.tool ?? null,
    count: figures.count,
    errors: figures.errors,
    p50Ms: percentileOf(figures.roundTrips, 50),
    p95Ms: percentileOf(figures.roundTrips, 95),
    maxMs: percentileOf(figures.roundTrips, 100)
  }));
  const notifications = [...session.notifications].map(([key, count]) => {
    return { direction: key.slice(0, 1), method: key.slice(2), count };
  });
  return {
    start: session.start,
    command: session.command,
    lengthMs: Date.parse(session.end) - Date.parse(session.start),
    requests,
    notifications,
    messages: session.messages,
    unanswered: session.waiting.size,
    tags: Object.fromEntries(session.tags),
    stderrLines: session.stderrLines
  };
}
function ms(value) {
  return value === null ? "—" : value.toFixed(1);
}
function sessionText(figures, index) {
  const seconds = (figures.lengthMs / 1e3).toFixed(1);
  const lines = [`session ${index + 1} · ${figures.start} · ${seconds} s · ${figures.command}`];
  const widths = [36, 6, 7, 8, 8, 8];
  const cells = (row) => {
    return `  ${row.map((cell, at) => at === 0 ? cell.padEnd(widths[at] ?? 0) : cell.padStart(widths[at] ?? 0)).join("")}`;
  };
  lines.push(cells(["request", "count", "errors", "p50 ms", "p95 ms", "max ms"]));
  for (const each of figures.requests) {
    const name = `${each.direction} ${each.method}${each.tool === null ? "" : ` ${each.tool}`}`;
    const times = [ms(each.p50Ms), ms(each.p95Ms), ms(each.maxMs)];
    lines.push(cells([label(name, 36), String(each.count), String(each.errors), ...times]));
  }
  const listed = (items) => items.length === 0 ? "none" : items.join(" · ");
  const notes = figures.notifications.map((each) => {
    return `${each.direction} ${each.method} ${each.count}`;
  });
  lines.push(`  notifications: ${listed(notes)}`);
  const way = (mark) => {
    const { count, bytes } = figures.messages[mark];
    return `${mark} ${count} (${bytes.toLocaleString("en-US")} bytes)`;
  };
  lines.push(`  messages: ${way("→")} · ${way("←")}`);
  const tags = Object.entries(figures.tags).map(([tag, count]) => `[${tag}] ${count}`);
  lines.push(`  unanswered: ${figures.unanswered} · stderr lines: ${figures.stderrLines} · tags: ${listed(tags)}`);
  return lines;
}
async function readStats(path) {
  const sessions = [];
  let skipped = 0;
  const lines = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
  for await (const line of lines) {
    const event = parseEvent(line);
    if (event === void 0) {
      if (line !== "") skipped += 1;
      continue;
    }
    const start = event.mark === "#" && event.text.startsWith("start ");
    if (start || sessions.length === 0) {
      const command2 = start ? event.text.replace(/^start pid \d+: /, "") : "(no start line)";
      sessions.push(newSession(event.time, command2));
    }
    const session = sessions.at(-1);
    if (session !== void 0) countEvent(session, event);
  }
  return { sessions, skipped };
}
async function stats(path, json) {
  const read = await readStats(path).catch((error) => cannot(`read ${path}`, error));
  const sessions = read.sessions.map(sessionJson);
  if (json) {
    process.stdout.write(`${JSON.stringify({ sessions, skipped: read.skipped }, null, 2)}
`);
    return;
  }
  const blocks = sessions.map((session, index) => sessionText(session, index).join("\n"));
  if (blocks.length === 0) blocks.push("no session: this file holds no wire.log event");
  if (read.skipped > 0) blocks.push(`skipped ${read.skipped} lines that are not wire.log events`);
  process.stdout.write(`${blocks.join("\n\n")}
`);
}
var OPTIONS = {
  log: { type: "string" },
  out: { type: "string" },
  "no-redact": { type: "boolean" },
  ignore: { type: "string", multiple: true },
  timeout: { type: "string" },
  json: { type: "boolean" },
  follow: { type: "boolean" },
  errors: { type: "boolean" },
  method: { type: "string", multiple: true }
};
var TAKES = /* @__PURE__ */ new Map([
  [void 0, ["log"]],
  ["diagram", ["out", "no-redact"]],
  ["replay", ["ignore", "timeout", "no-redact"]],
  ["redact", []],
  ["stats", ["json"]],
  ["show", ["follow", "method", "errors", "no-redact"]]
]);
var USAGE = `Usage: wrap [--log FILE] [-- COMMAND [ARGS...]]
Runs COMMAND (default: server.mjs beside wrap.mjs), passing its stdio through unchanged,
and records every line to FILE (default: wire.log beside wrap.mjs).
Reading a log back (README, "Read a log back"):
  wrap diagram [--out FILE] [--no-redact] WIRE_LOG
  wrap replay [--ignore PATH]... [--timeout MS] [--no-redact] WIRE_LOG -- COMMAND [ARGS...]
  wrap redact WIRE_LOG
  wrap show [--follow] [--method NAME]... [--errors] [--no-redact] WIRE_LOG
  wrap stats [--json] WIRE_LOG
`;
var MISUSE = 2;
var LONGEST_TIMEOUT_MS = 2147483647;
function misuse() {
  process.stderr.write(USAGE);
  process.exit(MISUSE);
}
function cannot(what, error) {
  process.stderr.write(`wrap: cannot ${what}: ${String(error)}
`);
  process.exit(1);
}
function showOptions() {
  const terminal = process.stdout.isTTY === true;
  const noColour = (process.env.NO_COLOR ?? "") !== "";
  const columns = terminal ? process.stdout.columns ?? 0 : 0;
  return {
    width: columns >= 20 ? columns : 80,
    colour: terminal && !noColour,
    redact: values["no-redact"] !== true,
    methods: values.method ?? [],
    errorsOnly: values.errors === true
  };
}
var argv = process.argv.slice(2);
var here = dirname(fileURLToPath(import.meta.url));
if (argv.length === 1 && argv[0] === "--help") {
  process.stdout.write(USAGE);
  process.exit(0);
}
var split = argv.indexOf("--");
var ownWords = split === -1 ? argv : argv.slice(0, split);
var defaultServer = [process.execPath, join(here, "server.mjs")];
var [command, ...args] = split === -1 ? defaultServer : argv.slice(split + 1);
var config = { args: ownWords, options: OPTIONS, allowPositionals: true };
var parsed = attempt(() => parseArgs(config));
if (parsed === void 0) misuse();
var { values, positionals: [reader, logPath, ...extra] } = parsed;
var allowed = TAKES.get(reader) ?? [];
var timeoutMs = Number(values.timeout ?? 5e3);
var unknownWord = !TAKES.has(reader) || extra.length > 0;
var foreignOption = Object.keys(values).some((option) => !allowed.includes(option));
var emptyWord = [values.log, values.out, logPath, command].includes("");
var badTimeout = !Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > LONGEST_TIMEOUT_MS;
var commandMisplaced = reader === "replay" ? split === -1 : reader !== void 0 && split !== -1;
var wrong = unknownWord || foreignOption || emptyWord || badTimeout || commandMisplaced;
if (wrong || command === void 0) misuse();
if (reader === void 0) {
  proxy(command, args, values.log ?? join(here, "wire.log"));
} else if (logPath === void 0) {
  misuse();
} else {
  process.stdout.on("error", () => process.exit(128 + constants.signals.SIGPIPE));
  if (reader === "stats") await stats(logPath, values.json === true);
  if (reader === "show") await show(logPath, showOptions(), values.follow === true);
  const streamed = reader === "stats" || reader === "show";
  const log = streamed ? "" : await readFile(logPath, "utf8").catch((error) => {
    cannot(`read ${logPath}`, error);
  });
  if (reader === "redact") process.stdout.write(redactLog(log));
  if (reader === "diagram") {
    const markdown = diagram(parseLog(values["no-redact"] === true ? log : redactLog(log)));
    const out = values.out;
    if (out === void 0) process.stdout.write(markdown);
    else await writeFile(out, markdown).catch((error) => cannot(`write ${out}`, error));
  }
  if (reader === "replay") {
    const ignore = (values.ignore ?? []).map((path) => path.split("."));
    const redact = values["no-redact"] !== true;
    process.exitCode = await replay(parseLog(log), command, args, { ignore, timeoutMs, redact });
  }
}
