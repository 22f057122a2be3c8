#!/usr/bin/env node

// wrap.ts
import { spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
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
Runs COMMAND (default: server.mjs beside wrap.mjs), passing its stdio through unchanged, and records every line to FILE (default: wire.log beside wrap.mjs).
`;
function parseArguments(argv, runtime, here) {
  const split = argv.indexOf("--");
  const options = split === -1 ? argv : argv.slice(0, split);
  const [command2, ...args2] = split === -1 ? [runtime, join(here, "server.mjs")] : argv.slice(split + 1);
  if (options.length === 1 && options[0] === "--help") return { action: "help" };
  if (!command2 || options.length > 0 && (options.length !== 2 || options[0] !== "--log" || !options[1])) return { action: "misuse" };
  return { action: "run", command: command2, args: args2, logPath: options[1] ?? join(here, "wire.log") };
}
function splitLines(pieces, chunk) {
  const lines = [];
  let start = 0;
  for (let end = chunk.indexOf("\n"); end !== -1; start = end + 1, end = chunk.indexOf("\n", start)) {
    lines.push(pieces.length === 0 ? chunk.subarray(start, end) : Buffer.concat([...pieces.splice(0), chunk.subarray(start, end)]));
  }
  if (start < chunk.length) pieces.push(chunk.subarray(start));
  return lines;
}
function pair(pending2, mark, line, now) {
  let message;
  try {
    message = JSON.parse(line.toString());
  } catch {
    return void 0;
  }
  if (typeof message !== "object" || message === null || !("id" in message)) return void 0;
  if (typeof message.id !== "string" && typeof message.id !== "number") return void 0;
  const id = JSON.stringify(message.id);
  if ("method" in message && typeof message.method === "string") return void pending2.set(`${mark} ${id}`, { method: message.method, sentAt: now });
  const request = pending2.get(`${OPPOSITE[mark]} ${id}`);
  pending2.delete(`${OPPOSITE[mark]} ${id}`);
  return request === void 0 ? void 0 : now - request.sentAt;
}
var invocation = parseArguments(process.argv.slice(2), process.execPath, dirname(fileURLToPath(import.meta.url)));
if (invocation.action !== "run") {
  (invocation.action === "help" ? process.stdout : process.stderr).write(USAGE);
  process.exit(invocation.action === "help" ? 0 : MISUSE);
}
var { command, args, logPath } = invocation;
var log = createWriteStream(logPath, { flags: "a", mode: 384 });
log.on("error", (error) => process.stderr.write(`wrap: cannot write log ${logPath}: ${error.message}; traffic still flows
`));
var pending = /* @__PURE__ */ new Map();
var backlog = [];
function record(mark, lines, at = /* @__PURE__ */ new Date(), now = performance.now()) {
  if (backlog.push(() => write(mark, lines, at, now)) === 1) setImmediate(catchUp);
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
    return [Buffer.from(elapsed === void 0 ? head : `${head}(${elapsed.toFixed(1)} ms) `), line, NEWLINE];
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
  for (const [key, request] of pending) note(`unanswered ${key} ${JSON.stringify(request.method)}`);
  note(last);
  await Promise.allSettled([finished(log.end()), finished(process.stdout.end())]);
  process.exit(code);
}
var child = spawn(command, args, { stdio: "pipe" });
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
process.stdin.on("end", () => setTimeout(() => stop("SIGTERM", `still running ${GRACE_MS} ms after the end of input`), GRACE_MS));
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => stop(signal, `received ${signal}`));
child.on("exit", () => setTimeout(() => [child.stdout, child.stderr].forEach((stream) => stream.push(null)), GRACE_MS));
child.on("close", (code, signal) => {
  if (child.pid === void 0) return;
  void finish(signal === null ? code ?? 0 : 128 + constants.signals[signal], signal === null ? `exit code ${code}` : `exit signal ${signal}`);
});
