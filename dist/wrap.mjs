#!/usr/bin/env node

// wrap.ts
import { spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { constants } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { finished } from "node:stream/promises";
import { fileURLToPath } from "node:url";
var GRACE_MS = 2e3;
var OPPOSITE = { "→": "←", "←": "→" };
var MISUSE = 2;
var CANNOT_START = 127;
var MAX_BACKLOG = 64;
var NEWLINE = Buffer.from("\n");
var USAGE = `Usage: wrap [--log FILE] [-- COMMAND [ARGS...]]
Runs COMMAND (default: server.mjs beside wrap.mjs), passing its stdio through unchanged,
and records every line to FILE (default: wire.log beside wrap.mjs).
`;
function parseArguments(argv2, runtime, here) {
  const split = argv2.indexOf("--");
  const options = split === -1 ? argv2 : argv2.slice(0, split);
  const defaultServer = [runtime, join(here, "server.mjs")];
  const [command, ...args] = split === -1 ? defaultServer : argv2.slice(split + 1);
  if (options.length === 1 && options[0] === "--help") return { action: "help" };
  const logOption = options.length === 2 && options[0] === "--log" && options[1] !== "";
  if (command === void 0 || command === "" || options.length > 0 && !logOption) {
    return { action: "misuse" };
  }
  return { action: "run", command, args, logPath: options[1] ?? join(here, "wire.log") };
}
function splitLines(pieces, chunk) {
  const lines = [];
  let start = 0;
  for (let end = chunk.indexOf("\n"); end !== -1; end = chunk.indexOf("\n", start)) {
    const piece = chunk.subarray(start, end);
    lines.push(pieces.length === 0 ? piece : Buffer.concat([...pieces.splice(0), piece]));
    start = end + 1;
  }
  if (start < chunk.length) pieces.push(chunk.subarray(start));
  return lines;
}
function pair(pending, mark, line, now) {
  let message;
  try {
    message = JSON.parse(line.toString());
  } catch {
    return void 0;
  }
  if (typeof message !== "object" || message === null || !("id" in message)) return void 0;
  if (typeof message.id !== "string" && typeof message.id !== "number") return void 0;
  const id = JSON.stringify(message.id);
  if ("method" in message && typeof message.method === "string") {
    pending.set(`${mark} ${id}`, { method: message.method, sentAt: now });
    return void 0;
  }
  const request = pending.get(`${OPPOSITE[mark]} ${id}`);
  pending.delete(`${OPPOSITE[mark]} ${id}`);
  return request === void 0 ? void 0 : now - request.sentAt;
}
function proxy(command, args, logPath) {
  const log = createWriteStream(logPath, { flags: "a", mode: 384 });
  log.on("error", (error) => {
    const what = `wrap: cannot write log ${logPath}: ${error.message}`;
    process.stderr.write(`${what}; traffic still flows
`);
  });
  const pending = /* @__PURE__ */ new Map();
  const backlog = [];
  function record(mark, lines) {
    const at = /* @__PURE__ */ new Date();
    const now = performance.now();
    backlog.push(() => write(mark, lines, at, now));
    if (backlog.length === 1) setImmediate(catchUp);
  }
  function catchUp(all = false) {
    backlog.shift()?.();
    while (backlog.length > (all ? 0 : MAX_BACKLOG)) backlog.shift()?.();
    if (backlog.length > 0) setImmediate(catchUp);
  }
  function write(mark, lines, at, now) {
    if (!log.writable || lines.length === 0) return;
    const head = `${at.toISOString()} ${mark} `;
    const events = lines.flatMap((line) => {
      const elapsed = mark === "→" || mark === "←" ? pair(pending, mark, line, now) : void 0;
      const prefix = elapsed === void 0 ? head : `${head}(${elapsed.toFixed(1)} ms) `;
      return [Buffer.from(prefix), line, NEWLINE];
    });
    log.write(Buffer.concat(events));
  }
  function note(text) {
    catchUp(true);
    write("#", [Buffer.from(text)], /* @__PURE__ */ new Date(), 0);
  }
  function relay(from, to, mark, end) {
    const pieces = [];
    from.pipe(to, { end });
    from.on("data", (chunk) => record(mark, splitLines(pieces, chunk)));
    from.on("end", () => record(mark, pieces.length > 0 ? [Buffer.concat(pieces)] : []));
    to.on("error", (error) => {
      note(`cannot pass ${mark} on: ${error.message}`);
      from.resume();
    });
  }
  function stop(signal, why) {
    if (child.exitCode !== null || child.signalCode !== null) return;
    note(`${why}: sending ${signal}`);
    child.kill(signal);
    setTimeout(() => stop("SIGKILL", `still running ${GRACE_MS} ms after ${signal}`), GRACE_MS);
  }
  async function finish(code, last) {
    catchUp(true);
    for (const [key, request] of pending) {
      note(`unanswered ${key} ${JSON.stringify(request.method)}`);
    }
    note(last);
    const flushed = new Promise((resolve) => process.stdout.write("", () => resolve()));
    await Promise.allSettled([finished(log.end()), flushed]);
    process.exit(code);
  }
  const child = spawn(command, args, { stdio: "pipe" });
  if (child.pid !== void 0) note(`start pid ${child.pid}: ${[command, ...args].join(" ")}`);
  child.on("error", (error) => {
    if (child.pid !== void 0) return;
    process.stderr.write(`wrap: cannot start ${command}: ${error.message}
`);
    void finish(CANNOT_START, `cannot start ${command}: ${error.message}`);
  });
  relay(process.stdin, child.stdin, "→", true);
  relay(child.stdout, process.stdout, "←", true);
  relay(child.stderr, process.stderr, "!", false);
  process.stdin.on("end", () => note("end of input"));
  process.stdin.on("end", () => {
    const why = `still running ${GRACE_MS} ms after the end of input`;
    setTimeout(() => stop("SIGTERM", why), GRACE_MS);
  });
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
    process.on(signal, () => stop(signal, `received ${signal}`));
  }
  child.on("exit", () => {
    setTimeout(() => {
      child.stdout.push(null);
      child.stderr.push(null);
    }, GRACE_MS);
  });
  child.on("close", (code, signal) => {
    if (child.pid === void 0) return;
    if (signal === null) void finish(code ?? 0, `exit code ${code}`);
    else void finish(128 + constants.signals[signal], `exit signal ${signal}`);
  });
}
var READERS = ["diagram", "replay", "redact"];
var MARKS = ["→", "←", "!", "#"];
var EVENT_HEAD = /^\S+ ([→←!#]) (?:\((\d+(?:\.\d+)?) ms\) )?/;
var HYGIENE_TAGS = [
  /^\d+ bytes$/,
  /^not UTF-8$/,
  /^CRLF$/,
  /^no request$/,
  /^id in use$/,
  /^not JSON-RPC$/
];
var READER_USAGE = `
Reading a log back:
  wrap diagram [--out FILE] [--no-redact] WIRE_LOG
      Markdown with Mermaid sequence diagrams of the session, secrets redacted.
  wrap replay [--ignore PATH]... [--timeout MS] WIRE_LOG -- COMMAND [ARGS...]
      Sends the log's client lines to COMMAND and compares its responses with the log's.
      PATH names a field to skip, as result.serverInfo.version (* matches any key).
      MS is how long to wait for each response (default 5000).
  wrap redact WIRE_LOG
      Writes a copy of the log with its secrets replaced by "[redacted]" to stdout.
`;
function parseReaderArguments(reader2, argv2) {
  const split = argv2.indexOf("--");
  const words = split === -1 ? argv2 : argv2.slice(0, split);
  const [command, ...args] = split === -1 ? [] : argv2.slice(split + 1);
  const options = { ignore: [], timeoutMs: 5e3 };
  const logPaths = [];
  let out;
  let redact = true;
  for (let index = 0; index < words.length; index += 1) {
    const word = words[index] ?? "";
    const value = words[index + 1] ?? "--";
    const takesValue = ["--out", "--ignore", "--timeout"].includes(word) && !value.startsWith("--");
    if (takesValue) index += 1;
    if (reader2 === "diagram" && word === "--no-redact") redact = false;
    else if (reader2 === "diagram" && word === "--out" && takesValue) out = value;
    else if (reader2 === "replay" && word === "--ignore" && takesValue) {
      options.ignore.push(value.split("."));
    } else if (reader2 === "replay" && word === "--timeout" && takesValue) {
      options.timeoutMs = Number(value);
    } else logPaths.push(word);
  }
  const [logPath] = logPaths;
  const wellFormed = logPaths.length === 1 && logPath !== void 0 && !logPath.startsWith("--");
  const commandWanted = reader2 === "replay";
  if (!wellFormed || !(options.timeoutMs > 0) || command !== void 0 !== commandWanted) {
    return void 0;
  }
  if (reader2 === "diagram") return { action: "diagram", logPath, out, redact };
  if (reader2 === "replay" && command !== void 0) {
    return { action: "replay", logPath, command, args, options };
  }
  return { action: "redact", logPath };
}
function parseEvent(line) {
  const head = EVENT_HEAD.exec(line);
  const mark = MARKS.find((candidate) => candidate === head?.[1]);
  if (head === null || mark === void 0) return void 0;
  const tags = [];
  let rest = line.slice(head[0].length);
  for (let next = 0; next < HYGIENE_TAGS.length; next += 1) {
    const tag = /^\[([^\]]*)\] /.exec(rest)?.[1];
    const known = HYGIENE_TAGS.findIndex((pattern) => tag !== void 0 && pattern.test(tag));
    if (tag === void 0 || known < next) break;
    tags.push(tag);
    rest = rest.slice(tag.length + 3);
    next = known;
  }
  const text = rest;
  return { mark, elapsed: head[2], tags, head: line.slice(0, line.length - text.length), text };
}
function isRecord(value) {
  return typeof value === "object" && value !== null;
}
function dig(value, ...keys) {
  let found = value;
  for (const key of keys) {
    found = isRecord(found) && Object.hasOwn(found, key) ? found[key] : void 0;
  }
  return found;
}
function messagesOf(text) {
  let value;
  try {
    value = JSON.parse(text);
  } catch {
    return [{ kind: "other" }];
  }
  return (Array.isArray(value) ? value : [value]).map(classify);
}
function classify(value) {
  const id = dig(value, "id");
  const method = dig(value, "method");
  const hasId = typeof id === "string" || typeof id === "number";
  const params = dig(value, "params");
  if (typeof method === "string") {
    if (hasId) return { kind: "request", id, method, params };
    return { kind: "notification", method, params };
  }
  const answers = isRecord(value) && (Object.hasOwn(value, "result") || Object.hasOwn(value, "error"));
  if (!answers || !Object.hasOwn(value, "id")) return { kind: "other" };
  return { kind: "response", id, result: dig(value, "result"), error: dig(value, "error") };
}
async function readLog(logPath) {
  try {
    return await readFile(logPath, "utf8");
  } catch (error) {
    process.stderr.write(`wrap: cannot read ${logPath}: ${String(error)}
`);
    process.exit(1);
  }
}
var REDACTED = "[redacted]";
var SECRET_KEY = /^(?:authorization|cookie|password|secret|token|api_?key)$|_(?:token|key)$/i;
var SECRET_TEXT = /\bBearer\s+[^\s"',;]+|\b(?:sk-[\w-]{16,}|ghp_[A-Za-z0-9]{20,}|xox[a-z]-[\w-]{8,})/g;
var SECRET_PAIR = new RegExp(String.raw`\b(authorization|cookie|password|secret|token|api_?key|` + String.raw`\w+_(?:token|key))("? ?[:=] ?"?)[^\s"',;&]+`, "gi");
function redactValue(value) {
  if (typeof value === "string") return value.replace(SECRET_TEXT, REDACTED);
  if (Array.isArray(value)) return value.map(redactValue);
  if (!isRecord(value)) return value;
  const entries = Object.entries(value).map(([key, inner]) => {
    return [key, SECRET_KEY.test(key) ? REDACTED : redactValue(inner)];
  });
  return Object.fromEntries(entries);
}
function redactText(text) {
  let value;
  try {
    value = JSON.parse(text);
  } catch {
    return text.replace(SECRET_PAIR, `$1$2${REDACTED}`).replace(SECRET_TEXT, REDACTED);
  }
  const redacted = JSON.stringify(redactValue(value));
  return redacted === JSON.stringify(value) ? text : redacted;
}
function redactLog(log) {
  return log.split("\n").map((line) => {
    const event = parseEvent(line);
    return event === void 0 ? redactText(line) : `${event.head}${redactText(event.text)}`;
  }).join("\n");
}
var BLOCK_LIMIT = 2e3;
var ENDS = { "→": ["C", "S"], "←": ["S", "C"] };
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
function label(text, max) {
  const flat = text.replace(/[\u0000-\u001f\u007f]+/g, " ").replace(/[#;<>%&"{}]/g, (character) => {
    return LOOKALIKES.get(character) ?? " ";
  });
  const characters = Array.from(flat.trim());
  const short = characters.length > max ? `${characters.slice(0, max - 1).join("")}…` : flat.trim();
  return short === "" ? "(empty)" : short;
}
function infoName(holder, info) {
  const modern = dig(holder, "_meta", `io.modelcontextprotocol/${info}`, "name");
  const name = dig(holder, info, "name") ?? modern;
  return typeof name === "string" ? name : void 0;
}
function summary(message, elapsed) {
  const time = elapsed === void 0 ? "" : `${elapsed} ms `;
  const text = dig(message.result, "content", "0", "text");
  if (message.error !== void 0) return `${time}error ${String(dig(message.error, "code"))}`;
  if (dig(message.result, "isError") === true) return `${time}isError ${String(text ?? "")}`;
  return typeof text === "string" ? `${time}${text}` : `${time}result`;
}
function statements(event, names) {
  if (event.mark === "#") return [`Note over C,S: ${label(event.text, 70)}`];
  if (event.mark === "!") return [`Note right of S: ${label(event.text, 50)}`];
  const [from, to] = ENDS[event.mark];
  const arrows = messagesOf(event.text).map((message) => {
    if (message.kind === "request") {
      const client = infoName(message.params, "clientInfo");
      if (client !== void 0 && !names.has("C")) names.set("C", client);
      const tool = message.method === "tools/call" ? dig(message.params, "name") : void 0;
      const name = typeof tool === "string" ? `${message.method} ${tool}` : message.method;
      return `${from}->>${to}: ${label(name, 50)}`;
    }
    if (message.kind === "notification") return `${from}-)${to}: ${label(message.method, 50)}`;
    if (message.kind === "other") return `${from}->>${to}: not JSON-RPC ${label(event.text, 20)}`;
    const server = infoName(message.result, "serverInfo");
    if (server !== void 0 && !names.has("S")) names.set("S", server);
    return `${from}-->>${to}: ${label(summary(message, event.elapsed), 50)}`;
  });
  const tags = event.tags.map((tag) => `Note over C,S: ${label(tag, 30)}`);
  return [...arrows, ...tags];
}
function diagram(events) {
  const names = /* @__PURE__ */ new Map();
  const body = events.flatMap((event) => statements(event, names));
  const start = events.find((event) => event.mark === "#" && event.text.startsWith("start pid "));
  const command = start?.text.replace(/^start pid \d+: /, "").split(" ").slice(0, 2);
  const fallback = command?.map((word) => word.split("/").at(-1)).join(" ") ?? "server";
  const head = [
    "```mermaid",
    "sequenceDiagram",
    `participant C as ${label(names.get("C") ?? "client", 40)}`,
    `participant S as ${label(names.get("S") ?? fallback, 40)}`
  ];
  const room = BLOCK_LIMIT - head.join("\n").length - 100;
  const parts = [[]];
  let size = 0;
  for (const statement of body) {
    const full = size + statement.length + 1 > room;
    if (full) parts.push([]);
    if (full) size = 0;
    parts.at(-1)?.push(statement);
    size += statement.length + 1;
  }
  return parts.map((part, index) => {
    const count = `${index + 1} of ${parts.length}`;
    const before = index > 0 ? [`Note over C,S: part ${count}, continued from part ${index}`] : [];
    const after = index < parts.length - 1 ? [`Note over C,S: continued in part ${index + 2}`] : [];
    const title = parts.length > 1 ? `Part ${count}

` : "";
    return `${title}${[...head, ...before, ...part, ...after, "```"].join("\n")}
`;
  }).join("\n");
}
function responseKey(counts, id) {
  const seen = counts.get(JSON.stringify(id)) ?? 0;
  counts.set(JSON.stringify(id), seen + 1);
  return `${JSON.stringify(id)} #${seen + 1}`;
}
function differences(expected, actual, path, ignore) {
  const ignored = ignore.some((pattern) => pattern.length === path.length && pattern.every((key, index) => key === "*" || key === path[index]));
  if (ignored) return [];
  const bothArrays = Array.isArray(expected) === Array.isArray(actual);
  if (isRecord(expected) && isRecord(actual) && bothArrays) {
    const keys = /* @__PURE__ */ new Set([...Object.keys(expected), ...Object.keys(actual)]);
    return [...keys].flatMap((key) => {
      return differences(dig(expected, key), dig(actual, key), [...path, key], ignore);
    });
  }
  if (JSON.stringify(expected) === JSON.stringify(actual)) return [];
  const show = (value) => value === void 0 ? "nothing" : JSON.stringify(value);
  return [`${path.join(".")}: expected ${show(expected)}, got ${show(actual)}`];
}
async function replay(logPath, command, args, options) {
  const events = parseLog(await readLog(logPath));
  const server = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
  server.stdin.on("error", () => {
  });
  const replayed = /* @__PURE__ */ new Map();
  const waiting = /* @__PURE__ */ new Map();
  const counts = /* @__PURE__ */ new Map();
  let exited = false;
  server.on("close", () => {
    exited = true;
    for (const wake of waiting.values()) wake();
  });
  createInterface({ input: server.stdout }).on("line", (line) => {
    for (const message of messagesOf(line).filter((each) => each.kind === "response")) {
      const key = responseKey(counts, message.id);
      replayed.set(key, message);
      waiting.get(key)?.();
    }
  });
  const arrival = (key) => new Promise((resolve) => {
    if (replayed.has(key) || exited) resolve();
    const timer = setTimeout(resolve, options.timeoutMs);
    waiting.set(key, () => {
      clearTimeout(timer);
      resolve();
    });
  });
  const recorded = /* @__PURE__ */ new Map();
  const methods = /* @__PURE__ */ new Map();
  const recordedCounts = /* @__PURE__ */ new Map();
  for (const event of events) {
    const messages = event.mark === "→" || event.mark === "←" ? messagesOf(event.text) : [];
    for (const message of messages) {
      if (message.kind === "request") methods.set(JSON.stringify(message.id), message.method);
      if (message.kind !== "response" || event.mark !== "←") continue;
      const key = responseKey(recordedCounts, message.id);
      recorded.set(key, message);
      await arrival(key);
    }
    if (event.mark === "→" && !exited) server.stdin.write(`${event.text}
`);
  }
  server.stdin.end();
  const stopping = setTimeout(() => server.kill("SIGKILL"), GRACE_MS);
  if (!exited) await once(server, "close");
  clearTimeout(stopping);
  let matched = 0;
  let missing = 0;
  for (const [key, expected] of recorded) {
    const actual = replayed.get(key);
    const method = methods.get(key.split(" #")[0] ?? "");
    const id = key.replace(/ #1$/, "");
    const name = method === void 0 ? id : `${id} ${JSON.stringify(method)}`;
    const expectedBody = { result: dig(expected, "result"), error: dig(expected, "error") };
    const actualBody = { result: dig(actual, "result"), error: dig(actual, "error") };
    const found = differences(expectedBody, actualBody, [], options.ignore);
    if (actual === void 0) missing += 1;
    if (actual !== void 0 && found.length === 0) matched += 1;
    if (actual === void 0) process.stdout.write(`✗ ${name}: missing
`);
    else if (found.length > 0) process.stdout.write(`✗ ${name}: ${found.slice(0, 3).join("; ")}
`);
  }
  const unexpected = [...replayed.keys()].filter((key) => !recorded.has(key));
  for (const key of unexpected) process.stdout.write(`✗ ${key.replace(/ #1$/, "")}: unexpected
`);
  const differ = recorded.size - matched - missing;
  process.stdout.write(`replay: ${recorded.size} responses, ${matched} match, ${differ} differ, ${missing} missing, ${unexpected.length} unexpected
`);
  return matched === recorded.size && unexpected.length === 0 ? 0 : 1;
}
function parseLog(log) {
  return log.split("\n").flatMap((line) => parseEvent(line) ?? []);
}
var argv = process.argv.slice(2);
var reader = READERS.find((name) => name === argv[0]);
var readerInvocation = reader === void 0 ? void 0 : parseReaderArguments(
  reader,
  argv.slice(1)
);
var invocation = parseArguments(argv, process.execPath, dirname(fileURLToPath(import.meta.url)));
if (reader !== void 0 && readerInvocation === void 0) {
  process.stderr.write(USAGE + READER_USAGE);
  process.exit(MISUSE);
}
if (readerInvocation?.action === "diagram") {
  const log = await readLog(readerInvocation.logPath);
  const events = parseLog(readerInvocation.redact ? redactLog(log) : log);
  if (readerInvocation.out === void 0) process.stdout.write(diagram(events));
  else await writeFile(readerInvocation.out, diagram(events));
} else if (readerInvocation?.action === "redact") {
  process.stdout.write(redactLog(await readLog(readerInvocation.logPath)));
} else if (readerInvocation?.action === "replay") {
  const { logPath, command, args, options } = readerInvocation;
  process.exitCode = await replay(logPath, command, args, options);
} else if (invocation.action === "run") {
  proxy(invocation.command, invocation.args, invocation.logPath);
} else {
  (invocation.action === "help" ? process.stdout : process.stderr).write(USAGE + READER_USAGE);
  process.exit(invocation.action === "help" ? 0 : MISUSE);
}
