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
import { parseArgs } from "node:util";
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
  const messages = mark === "→" || mark === "←" ? classify(text) : [];
  return { mark, elapsed: head[2], tags, head: head[0], text, messages };
}
function parseLog(log) {
  return log.split("\n").flatMap((line) => parseEvent(line) ?? []);
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
function parseJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return void 0;
  }
}
function classify(text) {
  const value = parseJson(text);
  return (Array.isArray(value) ? value : [value]).map((entry) => {
    const [id, method, params, result, error] = ["id", "method", "params", "result", "error"].map((key) => dig(entry, key));
    const validId = typeof id === "string" || typeof id === "number";
    if (typeof method === "string" && validId) return { kind: "request", id, method, params };
    if (typeof method === "string") return { kind: "notification", method, params };
    const answers = id !== void 0 && (result !== void 0 || error !== void 0);
    return answers ? { kind: "response", id, result, error } : { kind: "other" };
  });
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
    for (const message of classify(line).filter((each) => each.kind === "response")) {
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
