#!/usr/bin/env node

// wrap.ts
import { spawn } from "node:child_process";
import { isUtf8 } from "node:buffer";
import { createWriteStream } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { constants } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { finished } from "node:stream/promises";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
var PIPES_GRACE_MS = 2e3;
var KILL_AFTER_MS = 1e3;
var PARENT_CHECK_MS = 500;
var QUIET_MS = 25;
var MAX_BEHIND = 16 * 1048576;
var MAX_DELAY_MS = 1e3;
var SLICE = 65536;
var LARGE_LINE = 1048576;
var OPPOSITE = { "→": "←", "←": "→" };
var MISUSE = 2;
var CANNOT_START = 127;
var CR = 13;
var NEWLINE = Buffer.from("\n");
var POLLUTION = "[not JSON-RPC]";
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
function messagesOf(text) {
  try {
    const value = JSON.parse(text);
    const values = Array.isArray(value) ? value : [value];
    return values.length === 0 ? [{ kind: "other" }] : values.map(classify);
  } catch {
    return [{ kind: "other" }];
  }
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
function proxy(command, args, logPath) {
  const log = createWriteStream(logPath, { flags: "a", mode: 384 });
  log.on("error", (error) => {
    const what = `wrap: cannot write log ${logPath}: ${error.message}`;
    process.stderr.write(`${what}; traffic still flows
`);
  });
  const pending = /* @__PURE__ */ new Map();
  const unread = [];
  let behind = 0;
  let lastChunkAt = 0;
  const pieces = { "→": [], "←": [], "!": [] };
  let warned = false;
  function tap(crossing) {
    if (unread.length === 0) setTimeout(whenQuiet, QUIET_MS);
    unread.push(crossing);
    if (crossing.kind === "chunk") {
      behind += crossing.chunk.length;
      lastChunkAt = crossing.now;
    }
  }
  function note(text) {
    tap({ kind: "note", text, now: performance.now() });
  }
  function whenQuiet() {
    const now = performance.now();
    const quiet = now - lastChunkAt >= QUIET_MS;
    const oldest = unread[0]?.now ?? now;
    const due = quiet || behind > MAX_BEHIND || now - oldest > MAX_DELAY_MS;
    if (due) catchUp(SLICE);
    if (unread.length > 0) setTimeout(whenQuiet, due ? 0 : QUIET_MS);
  }
  function catchUp(bytes) {
    let count = 0;
    let read = 0;
    while (count < unread.length && read < bytes) {
      const crossing = unread[count];
      read += crossing?.kind === "chunk" ? crossing.chunk.length : 0;
      count += 1;
    }
    behind -= read;
    const events = unread.splice(0, count).flatMap(eventsOf);
    if (log.writable && events.length > 0) log.write(Buffer.concat(events));
  }
  function eventsOf(crossing) {
    const time = new Date(performance.timeOrigin + crossing.now).toISOString();
    if (crossing.kind === "note") return [Buffer.from(`${time} # ${crossing.text}
`)];
    const { mark, now } = crossing;
    const waiting = pieces[mark];
    const lines = crossing.kind === "chunk" ? splitLines(waiting, crossing.chunk) : [];
    if (crossing.kind === "end" && waiting.length > 0) lines.push(Buffer.concat(waiting));
    return lines.flatMap((line) => {
      const notes = mark === "!" ? [] : annotate(pending, mark, line, now);
      if (!warned && notes.includes(POLLUTION)) {
        warned = true;
        process.stderr.write(pollutionWarning(line));
      }
      return [Buffer.from(`${[time, mark, ...notes].join(" ")} `), line, NEWLINE];
    });
  }
  function relay(from, to, mark, end) {
    from.pipe(to, { end });
    from.on("data", (chunk) => tap({ kind: "chunk", mark, chunk, now: performance.now() }));
    from.on("end", () => tap({ kind: "end", mark, now: performance.now() }));
    to.on("error", (error) => {
      note(`cannot pass ${mark} on: ${error.message}`);
      from.resume();
      if (mark === "←") stop("SIGTERM", "the client is gone: wrap's stdout is closed");
    });
  }
  function stop(signal, why) {
    if (child.exitCode !== null || child.signalCode !== null) return;
    note(`${why}: sending ${signal}`);
    child.kill(signal);
    if (signal === "SIGKILL") return;
    const still = `still running ${KILL_AFTER_MS} ms after ${signal}`;
    setTimeout(() => stop("SIGKILL", still), KILL_AFTER_MS);
  }
  async function finish(code, last) {
    catchUp(Infinity);
    const now = performance.now();
    for (const [key, request] of pending) {
      const waited = `waited ${(now - request.sentAt).toFixed(1)} ms`;
      note(`unanswered ${key} ${JSON.stringify(request.method)} (${waited})`);
    }
    note(last);
    catchUp(Infinity);
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
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
    process.on(signal, () => stop(signal, `received ${signal}`));
  }
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(watch);
    stop("SIGTERM", `the client is gone: its pid ${parent} exited`);
  }, PARENT_CHECK_MS);
  watch.unref();
  child.on("exit", () => {
    setTimeout(() => {
      child.stdout.push(null);
      child.stderr.push(null);
    }, PIPES_GRACE_MS);
  });
  child.on("close", (code, signal) => {
    if (child.pid === void 0) return;
    if (signal === null) void finish(code ?? 0, `exit code ${code}`);
    else void finish(128 + constants.signals[signal], `exit signal ${signal}`);
  });
}
var MARKS = ["→", "←", "!", "#"];
var EVENT_HEAD = new RegExp(String.raw`^\S+ ([→←!#]) (?:\((\d+(?:\.\d+)?) ms\) )?` + [String.raw`\d+ bytes`, "not UTF-8", "CRLF", "no request", "id in use", "not JSON-RPC"].map((tag) => String.raw`(?:\[${tag}\] )?`).join(""));
var READERS = /* @__PURE__ */ new Map([
  ["diagram", ["out", "no-redact"]],
  ["replay", ["ignore", "timeout"]],
  ["redact", []]
]);
var READER_OPTIONS = {
  out: { type: "string" },
  "no-redact": { type: "boolean" },
  ignore: { type: "string", multiple: true },
  timeout: { type: "string" }
};
var READER_USAGE = `Reading a log back (README, "Read a log back"):
  wrap diagram [--out FILE] [--no-redact] WIRE_LOG
  wrap replay [--ignore PATH]... [--timeout MS] WIRE_LOG -- COMMAND [ARGS...]
  wrap redact WIRE_LOG
`;
function parseReaderArguments(reader2, args) {
  try {
    const config = { args, options: READER_OPTIONS, allowPositionals: true };
    const { values, positionals } = parseArgs(config);
    const [logPath, command, ...commandArgs] = positionals;
    const timeoutMs = Number(values.timeout ?? 5e3);
    const foreign = Object.keys(values).some((name) => !READERS.get(reader2)?.includes(name));
    const replaying = reader2 === "replay";
    const wellFormed = !foreign && timeoutMs > 0 && command !== void 0 === replaying;
    if (logPath === void 0 || !wellFormed) return void 0;
    const ignore = (values.ignore ?? []).map((path) => path.split("."));
    const redact = values["no-redact"] !== true;
    return { reader: reader2, logPath, command, commandArgs, out: values.out, redact, ignore, timeoutMs };
  } catch {
    return void 0;
  }
}
function parseEvent(line) {
  const head = EVENT_HEAD.exec(line);
  const mark = MARKS.find((each) => each === head?.[1]);
  if (head === null || mark === void 0) return void 0;
  const text = line.slice(head[0].length);
  const tags = Array.from(head[0].matchAll(/\[(.+?)\] /g), ([tag]) => tag.slice(1, -2));
  const messages = mark === "→" || mark === "←" ? messagesOf(text) : [];
  return { mark, elapsed: head[2], tags, head: head[0], text, messages };
}
function parseLog(log) {
  return log.split("\n").flatMap((line) => parseEvent(line) ?? []);
}
function dig(value, ...keys) {
  let found = value;
  for (const key of keys) {
    found = isRecord(found) && Object.hasOwn(found, key) ? found[key] : void 0;
  }
  return found;
}
function parseJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return void 0;
  }
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
  const value = parseJson(text);
  if (value === void 0) {
    return text.replace(SECRET_PAIR, `$1$2${REDACTED}`).replace(SECRET_TEXT, REDACTED);
  }
  const redacted = JSON.stringify(JSON.parse(text, hideSecret));
  return redacted === JSON.stringify(value) ? text : redacted;
}
function redactLog(log) {
  return log.split("\n").map((line) => {
    const event = parseEvent(line);
    return event === void 0 ? redactText(line) : `${event.head}${redactText(event.text)}`;
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
function label(text, max) {
  const safe = text.replace(/[#;<>%&"{}]/g, (character) => LOOKALIKES.get(character) ?? "");
  const characters = Array.from(safe.replace(/[\s\u0000-\u001f\u007f]+/g, " ").trim());
  const short = characters.length > max ? [...characters.slice(0, max - 1), "…"] : characters;
  return short.length === 0 ? "(empty)" : short.join("");
}
function sideName(messages, field, info) {
  for (const message of messages) {
    const holder = dig(message, field);
    const modern = dig(holder, "_meta", `io.modelcontextprotocol/${info}`, "name");
    const name = dig(holder, info, "name") ?? modern;
    if (typeof name === "string") return name;
  }
  return void 0;
}
function describe(message, event) {
  if (message.kind === "other") return ["->>", `not JSON-RPC ${label(event.text, 20)}`];
  if (message.kind === "notification") return ["-)", message.method];
  if (message.kind === "request") {
    const tool = message.method === "tools/call" ? dig(message.params, "name") : void 0;
    return ["->>", typeof tool === "string" ? `${message.method} ${tool}` : message.method];
  }
  const time = event.elapsed === void 0 ? "" : `${event.elapsed} ms `;
  const text = dig(message.result, "content", "0", "text");
  const code = dig(message.error, "code");
  if (message.error !== void 0) return ["-->>", `${time}error ${String(code)}`];
  if (dig(message.result, "isError") === true) return ["-->>", `${time}isError ${String(text)}`];
  return ["-->>", typeof text === "string" ? `${time}${text}` : `${time}result`];
}
function statements(event) {
  if (event.mark === "#") return [`Note over C,S: ${label(event.text, 70)}`];
  if (event.mark === "!") return [`Note right of S: ${label(event.text, 50)}`];
  const [from, to] = event.mark === "→" ? ["C", "S"] : ["S", "C"];
  const arrows = event.messages.map((message) => {
    const [arrow, text] = describe(message, event);
    return `${from}${arrow}${to}: ${label(text, 50)}`;
  });
  return [...arrows, ...event.tags.map((tag) => `Note over C,S: ${label(tag, 30)}`)];
}
function diagram(events) {
  const messages = events.flatMap((event) => event.messages);
  const start = events.find((event) => event.mark === "#" && event.text.startsWith("start pid "));
  const words = start?.text.replace(/^start pid \d+: /, "").split(" ").slice(0, 2) ?? ["server"];
  const command = words.map((word) => word.split("/").at(-1)).join(" ");
  const head = [
    "sequenceDiagram",
    `participant C as ${label(sideName(messages, "params", "clientInfo") ?? "client", 40)}`,
    `participant S as ${label(sideName(messages, "result", "serverInfo") ?? command, 40)}`
  ];
  let part = [];
  const parts = [part];
  for (const statement of events.flatMap(statements)) {
    if ([...head, ...part, statement].join("\n").length > BLOCK_LIMIT - 100) {
      part = [];
      parts.push(part);
    }
    part.push(statement);
  }
  return parts.map((lines, index) => {
    const count = `${index + 1} of ${parts.length}`;
    const joint = index > 0 ? [`Note over C,S: part ${count}, continued from part ${index}`] : [];
    const title = parts.length > 1 ? `Part ${count}

` : "";
    return `${title}${["```mermaid", ...head, ...joint, ...lines, "```"].join("\n")}
`;
  }).join("\n");
}
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
  const show = (value) => value === void 0 ? "nothing" : JSON.stringify(value);
  return [`${path.join(".")}: expected ${show(expected)}, got ${show(actual)}`];
}
async function replay(events, command, args, ignore, timeoutMs) {
  const server = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
  server.stdin.on("error", () => {
  });
  const exited = new AbortController();
  server.on("close", () => exited.abort());
  const replayed = /* @__PURE__ */ new Map();
  const lines = createInterface({ input: server.stdout });
  lines.on("line", (line) => {
    for (const message of messagesOf(line).filter((each) => each.kind === "response")) {
      const id = JSON.stringify(message.id);
      replayed.set(id, [...replayed.get(id) ?? [], message]);
    }
  });
  const methods = /* @__PURE__ */ new Map();
  const tally = { match: 0, differ: 0, missing: 0 };
  for (const event of events) {
    for (const message of event.messages) {
      if (message.kind === "request" && event.mark === "→") {
        methods.set(JSON.stringify(message.id), message.method);
      }
      if (message.kind !== "response" || event.mark !== "←") continue;
      const id = JSON.stringify(message.id);
      const signal = AbortSignal.any([exited.signal, AbortSignal.timeout(timeoutMs)]);
      while ((replayed.get(id) ?? []).length === 0 && !signal.aborted) {
        await once(lines, "line", { signal }).catch(() => []);
      }
      const actual = replayed.get(id)?.shift();
      const found = actual === void 0 ? [] : differences(message, actual, [], ignore);
      const outcome = actual === void 0 ? "missing" : found.length > 0 ? "differ" : "match";
      tally[outcome] += 1;
      const name = methods.has(id) ? `${id} ${JSON.stringify(methods.get(id))}` : id;
      const problem = outcome === "missing" ? "missing" : found.slice(0, 3).join("; ");
      if (outcome !== "match") process.stdout.write(`✗ ${name}: ${problem}
`);
    }
    if (event.mark === "→") server.stdin.write(`${event.text}
`);
  }
  server.stdin.end();
  const stopping = setTimeout(() => server.kill("SIGKILL"), timeoutMs);
  if (!exited.signal.aborted) await once(exited.signal, "abort");
  clearTimeout(stopping);
  const unexpected = [...replayed].flatMap(([id, left]) => left.map(() => id));
  for (const id of unexpected) process.stdout.write(`✗ ${id}: unexpected
`);
  const { match, differ, missing } = tally;
  process.stdout.write(`replay: ${match + differ + missing} responses, ${match} match, ${differ} differ, ${missing} missing, ${unexpected.length} unexpected
`);
  return differ + missing + unexpected.length === 0 ? 0 : 1;
}
var argv = process.argv.slice(2);
var reader = [...READERS.keys()].find((name) => name === argv[0]);
var reading = reader === void 0 ? void 0 : parseReaderArguments(reader, argv.slice(1));
var invocation = parseArguments(argv, process.execPath, dirname(fileURLToPath(import.meta.url)));
if (reading !== void 0) {
  const log = await readFile(reading.logPath, "utf8").catch((error) => {
    process.stderr.write(`wrap: cannot read ${reading.logPath}: ${String(error)}
`);
    process.exit(1);
  });
  if (reading.reader === "redact") process.stdout.write(redactLog(log));
  if (reading.reader === "diagram") {
    const markdown = diagram(parseLog(reading.redact ? redactLog(log) : log));
    if (reading.out === void 0) process.stdout.write(markdown);
    else await writeFile(reading.out, markdown);
  }
  if (reading.reader === "replay" && reading.command !== void 0) {
    const { command, commandArgs, ignore, timeoutMs } = reading;
    process.exitCode = await replay(parseLog(log), command, commandArgs, ignore, timeoutMs);
  }
} else if (reader === void 0 && invocation.action === "run") {
  proxy(invocation.command, invocation.args, invocation.logPath);
} else {
  const help = reader === void 0 && invocation.action === "help";
  (help ? process.stdout : process.stderr).write(USAGE + READER_USAGE);
  process.exit(help ? 0 : MISUSE);
}
