/**
 * bench/stress.ts — wrap under hostile sizes: how much memory it and its readers take when the
 * input is as large as a client or a server can make it. It prints figures and asserts nothing.
 *
 * Each figure is a peak resident set (VmHWM, read from /proc as the process runs):
 * - burst →: a client writes BURST_BYTES of notifications at once, through dist/wrap.mjs, to a
 *   server that reads them and answers nothing;
 * - burst ←: a server writes BURST_BYTES of notifications at once, through wrap, to a client
 *   that reads them;
 * - unanswered: a client sends UNANSWERED requests, each padded so that the log is over 600 MB,
 *   to a server that never answers, and then ends its input;
 * - long line: a client sends one line of LONG_LINE bytes, then a ping, to a server that
 *   answers the ping;
 * - then each reader (show, stats, diagram, redact, and replay to a server that reads and
 *   answers nothing) on the unanswered session's log.
 * And how much of a burst's log a client that kills wrap leaves: SIGTERM, then SIGKILL a few
 * milliseconds later (killAfterBurst).
 * The logs take a few GB of disk in the system's temporary folder, one at a time.
 *
 * Usage: npm run build && npm run stress
 *   STRESS_DIST=DIR   measure DIR/wrap.mjs instead of dist/, such as an earlier commit's build:
 *                       base=$(mktemp -d) && git show REV:dist/wrap.mjs > "$base/wrap.mjs"
 *   STRESS_ONLY=NAME  run the figures whose names start with NAME (burst, long, kill,
 *                     unanswered, readers)
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import process from "node:process";
import type { Writable } from "node:stream";
import { highWaterMark } from "./proc.ts";

/** The project's root folder, and the build under test. */
const root = join(import.meta.dirname, "..");
const wrap = resolve(root, process.env.STRESS_DIST ?? "dist", "wrap.mjs");

/** The sizes of the hostile inputs. */
const BURST_BYTES = 1_000_000_000;
const UNANSWERED = 1_000_000;
const PADDING = 600;
const LONG_LINE = 520 * 2 ** 20;

/** How often a running command's peak memory is read. */
const SAMPLE_MS = 20;

/** A server that reads its input and answers nothing. */
const SILENT = "process.stdin.resume()";

/** A server that writes BURST_BYTES of notifications, then waits for the end of its input. */
const TALKER = String.raw`
const line = JSON.stringify({ jsonrpc: "2.0", method: "notifications/message",
  params: { level: "info", data: "x".repeat(900) } }) + "\n";
const chunk = Buffer.from(line.repeat(64));
let left = Number(process.argv[1]);
const write = () => {
  while (left > 0) {
    left -= chunk.length;
    if (!process.stdout.write(chunk)) return process.stdout.once("drain", write);
  }
};
write();
process.stdin.resume();`;

/** A server that reads the start of each line, and answers each line that is a ping. */
const PINGED = String.raw`
let head = "";
process.stdin.on("data", (chunk) => {
  let start = 0;
  for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, start)) {
    const text = head + chunk.subarray(start, Math.min(at, start + 200)).toString();
    head = "";
    start = at + 1;
    if (!text.includes('"ping"')) continue;
    const { id } = JSON.parse(text);
    process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id, result: {} }) + "\n");
  }
  if (head.length < 200) head += chunk.subarray(start, start + 200).toString();
});`;

/** What one run gave: its peak memory, its wall time, and how it ended. */
type Figure = { peakBytes: number; seconds: number; ended: string };

/** Writes `total` bytes of `chunk` repeated to a stream, as fast as it takes them. */
async function pour(to: Writable, chunk: Buffer, total: number): Promise<void> {
  for (let left = total; left > 0; left -= chunk.length) {
    if (!to.write(chunk)) await once(to, "drain");
  }
}

/**
 * Runs node with `args`, feeding its stdin with `feed` and reading its stdout (counted, then
 * dropped), and samples its peak memory until it exits.
 */
async function measured(args: readonly string[], feed: (stdin: Writable) => Promise<void>,
  onOutput: (chunk: Buffer) => void = () => {}): Promise<Figure> {
  const began = process.hrtime.bigint();
  const child = spawn(process.execPath, args, { stdio: ["pipe", "pipe", "pipe"] });
  let peakBytes = 0;
  const sampler = setInterval(() => {
    peakBytes = Math.max(peakBytes, highWaterMark(child.pid ?? 0));
  }, SAMPLE_MS);
  let stderr = "";
  child.stdout.on("data", onOutput);
  child.stderr.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-300);
  });
  child.stdin.on("error", () => {});
  const closed = once(child, "close");
  await feed(child.stdin).catch(() => undefined);
  child.stdin.end();
  const [code, signal] = await closed;
  clearInterval(sampler);
  const seconds = Number(process.hrtime.bigint() - began) / 1e9;
  const why = stderr.trim().split("\n").at(-1) ?? "";
  const ended = code === 0 ? "exit 0" : `exit ${code ?? signal}: ${why.slice(0, 120)}`;
  return { peakBytes, seconds, ended };
}

/** One row of the report. */
function row(name: string, figure: Figure, limitMiB: number): string {
  const mib = figure.peakBytes / 2 ** 20;
  const verdict = figure.ended === "exit 0" && mib <= limitMiB ? "PASS" : "MISS";
  return `| ${name} | ${mib.toFixed(0)} MiB | at most ${limitMiB} MiB | ` +
    `${figure.seconds.toFixed(1)} s | ${figure.ended} | ${verdict} |`;
}

/** The size of a file, in MB. */
function megabytes(path: string): string {
  return `${(statSync(path).size / 1e6).toFixed(0)} MB`;
}

/** wrap's arguments to log to `log` and run one line of JavaScript as the server. */
function wrapped(log: string, script: string, ...args: string[]): string[] {
  return [wrap, "--log", log, "--", process.execPath, "-e", script, ...args];
}

/** The client's burst: notifications to a server that answers nothing. */
async function burstIn(folder: string): Promise<string> {
  const log = join(folder, "burst-in.log");
  const line = JSON.stringify({ jsonrpc: "2.0", method: "notifications/message",
    params: { level: "info", data: "x".repeat(900) } });
  const chunk = Buffer.from(`${line}\n`.repeat(64));
  const figure = await measured(wrapped(log, SILENT), (stdin) => pour(stdin, chunk, BURST_BYTES));
  rmSync(log, { force: true });
  return row(`wrap, a client's burst of ${BURST_BYTES / 1e9} GB`, figure, 256);
}

/** The server's burst: notifications to a client that reads them. */
async function burstOut(folder: string): Promise<string> {
  const log = join(folder, "burst-out.log");
  let received = 0;
  const figure = await measured(wrapped(log, TALKER, String(BURST_BYTES)), async () => {
    while (received < BURST_BYTES) await new Promise((go) => setTimeout(go, 50));
  }, (chunk) => {
    received += chunk.length;
  });
  rmSync(log, { force: true });
  return row(`wrap, a server's burst of ${BURST_BYTES / 1e9} GB`, figure, 256);
}

/** The unanswered session: its figure, and its log for the readers. */
async function unanswered(folder: string): Promise<{ line: string; log: string }> {
  const log = join(folder, "unanswered.log");
  const feed = async (stdin: Writable) => {
    const batch: string[] = [];
    for (let id = 0; id < UNANSWERED; id++) {
      const params = { name: "wait", arguments: { pad: "p".repeat(PADDING) } };
      batch.push(`${JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params })}\n`);
      if (batch.length === 100 && !stdin.write(batch.splice(0).join(""))) {
        await once(stdin, "drain");
      }
    }
    stdin.write(batch.join(""));
  };
  const figure = await measured(wrapped(log, SILENT), feed);
  const name = `wrap, ${UNANSWERED.toLocaleString("en-US")} requests never answered`;
  return { line: row(name, figure, 256), log };
}

/** The burst a client kills wrap after, and how many times each kill is tried. */
const KILL_BURST = 2_000;
const KILL_RUNS = 10;

/**
 * How much of a burst a killed wrap leaves in its log: a client writes KILL_BURST tools/call
 * requests at once to dist/server.mjs through wrap, reads every answer, then sends SIGTERM and,
 * `delay` ms later, SIGKILL. The median over KILL_RUNS of the ← lines the log holds.
 */
async function killAfterBurst(folder: string, delay: number): Promise<string> {
  const kept: number[] = [];
  for (let run = 0; run < KILL_RUNS; run++) {
    const log = join(folder, `kill-${delay}-${run}.log`);
    const child = spawn(process.execPath, [wrap, "--log", log, "--", process.execPath,
      join(root, "dist", "server.mjs")], { stdio: ["pipe", "pipe", "ignore"] });
    let answers = 0;
    child.stdout.on("data", (chunk: Buffer) => {
      for (const byte of chunk) answers += byte === 0x0a ? 1 : 0;
    });
    const call = (id: number) => JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call",
      params: { name: "add", arguments: { a: id, b: 1 } } });
    child.stdin.write(Array.from({ length: KILL_BURST }, (_, id) => `${call(id)}\n`).join(""));
    while (answers < KILL_BURST) await new Promise((go) => setTimeout(go, 1));
    child.kill("SIGTERM");
    setTimeout(() => child.kill("SIGKILL"), delay);
    await once(child, "close");
    const lines = readFileSync(log, "utf8").split("\n");
    kept.push(lines.filter((line) => / ← \(\d+\.\d ms\) /.test(line)).length);
    rmSync(log, { force: true });
  }
  const median = kept.sort((a, b) => a - b)[Math.floor(kept.length / 2)] ?? 0;
  return `| SIGTERM, then SIGKILL ${delay} ms later | ${median} | ${kept[0]}–${kept.at(-1)} |`;
}

/** One line of LONG_LINE bytes, then a ping that must be answered. */
async function longLine(folder: string): Promise<string> {
  const log = join(folder, "long.log");
  let answered = false;
  const feed = async (stdin: Writable) => {
    const opening = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"data":"';
    stdin.write(opening);
    await pour(stdin, Buffer.alloc(2 ** 20, "x"), LONG_LINE - opening.length - 4);
    stdin.write('"}}\n{"jsonrpc":"2.0","id":2,"method":"ping"}\n');
    for (let waited = 0; !answered && waited < 60_000; waited += 50) {
      await new Promise((go) => setTimeout(go, 50));
    }
  };
  const figure = await measured(wrapped(log, PINGED), feed, (chunk) => {
    answered ||= chunk.toString().includes('"id":2');
  });
  if (!answered) figure.ended = `${figure.ended}; the ping after it was never answered`;
  rmSync(log, { force: true });
  return row(`wrap, one client line of ${LONG_LINE / 2 ** 20} MiB, then a ping`, figure, 256);
}

/** Each reader on a log, one at a time. */
async function readers(log: string): Promise<string[]> {
  const size = megabytes(log);
  const none = async () => {};
  const rows: string[] = [];
  for (const [reader, limit] of [["show", 256], ["stats", 256], ["diagram", 512],
    ["redact", 512]] as const) {
    process.stderr.write(`[stress] ${reader} on the ${size} log\n`);
    rows.push(row(`wrap ${reader} on that log (${size})`, await measured([wrap, reader, log], none),
      limit));
  }
  process.stderr.write(`[stress] replay on the ${size} log\n`);
  const replay = await measured([wrap, "replay", log, "--", process.execPath, "-e", SILENT], none);
  rows.push(row(`wrap replay on that log (${size})`, replay, 512));
  return rows;
}

/** Runs the figures STRESS_ONLY asks for, all by default, and prints the report. */
async function main(): Promise<void> {
  const only = process.env.STRESS_ONLY ?? "";
  const wanted = (name: string) => name.startsWith(only) || only.startsWith(name);
  const folder = mkdtempSync(join(tmpdir(), "bench-stress-"));
  process.on("exit", () => rmSync(folder, { recursive: true, force: true }));
  const rows: string[] = [];
  const step = async (name: string, run: () => Promise<string>) => {
    if (!wanted(name)) return;
    process.stderr.write(`[stress] ${name}\n`);
    rows.push(await run());
  };
  await step("burst in", () => burstIn(folder));
  await step("burst out", () => burstOut(folder));
  await step("long line", () => longLine(folder));
  const kills: string[] = [];
  for (const delay of [1, 10, 50]) {
    if (wanted("kill")) kills.push(await killAfterBurst(folder, delay));
  }
  if (wanted("unanswered") || wanted("readers")) {
    process.stderr.write("[stress] unanswered\n");
    const { line, log } = await unanswered(folder);
    rows.push(line);
    if (wanted("readers")) rows.push(...await readers(log));
  }
  const header = ["| What | Peak memory | Target | Time | Ended | |", "|---|---|---|---|---|---|"];
  const killed = kills.length === 0 ? [] : ["", `A client reads the answers to ${KILL_BURST} ` +
    `tools/call requests written at once, then kills wrap; the ← lines its log holds, of ` +
    `${KILL_BURST}, over ${KILL_RUNS} runs:`, "", "| Kill | Median | Range |", "|---|---|---|",
    ...kills];
  const report = [`Build: ${wrap}`, "", ...header, ...rows, ...killed];
  process.stdout.write(`${report.join("\n")}\n`);
}

await main();
