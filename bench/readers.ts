/**
 * bench/readers.ts — the second half of `npm run bench`: wrap's readers on a large log.
 *
 * - `wrap stats` over a log of about 1,000,000 events (a 20,000-call burst recorded through
 *   dist/wrap.mjs, repeated), against bench/bare-log-loop.mjs, a loop that reads the same
 *   file line by line and JSON.parses each message: wall time and peak resident memory
 *   (VmHWM, read from /proc as the process runs), the two run in turn, RUNS times over,
 *   medians and the median of the ratios taken run by run.
 * - `wrap show --follow` on a log nobody writes to: CPU seconds (utime + stime from
 *   /proc/PID/stat) over IDLE_MS, once it has printed what the log holds.
 *
 * Usage: npm run build && node --import tsx bench/readers.ts   (BENCH_RUNS=N, 5 by default)
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { median } from "./figures.ts";
import { highWaterMark } from "./proc.ts";

/** One run of a command: its wall time and the peak of its resident memory. */
interface Run {
  wallMs: number;
  peakBytes: number;
}

/** The project's root folder. */
const root = join(import.meta.dirname, "..");

/** Runs of each command; five by default. */
const RUNS = Number(process.env.BENCH_RUNS ?? 5);

/** The burst recorded once, and how many times its log is repeated. */
const BURST_CALLS = 20_000;
const REPEATS = 25;

/** How long `show --follow` waits on a quiet log while its CPU time is counted. */
const IDLE_MS = 10_000;

/** How often a running command's peak memory is read. */
const SAMPLE_MS = 20;

/** Clock ticks per second, as /proc/PID/stat counts CPU time (USER_HZ on Linux). */
const TICKS_PER_SECOND = 100;

/** A process's CPU time so far, in seconds: utime and stime of /proc/PID/stat. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** Runs a command to its end, reading its peak memory as it goes. */
async function timed(args: readonly string[]): Promise<Run> {
  const began = process.hrtime.bigint();
  const child = spawn(process.execPath, args, { stdio: ["ignore", "ignore", "inherit"] });
  let peakBytes = 0;
  const sampler = setInterval(() => {
    peakBytes = Math.max(peakBytes, highWaterMark(child.pid ?? 0));
  }, SAMPLE_MS);
  const [code] = await once(child, "exit");
  clearInterval(sampler);
  if (code !== 0) throw new Error(`${args.join(" ")} exited with ${String(code)}`);
  return { wallMs: Number(process.hrtime.bigint() - began) / 1e6, peakBytes };
}

/** Records a burst through wrap, and writes it REPEATS times over into one log. */
async function largeLog(folder: string): Promise<string> {
  const once20k = join(folder, "burst.log");
  const requests = Array.from({ length: BURST_CALLS }, (_, id) => {
    const params = { name: "add", arguments: { a: id, b: 1 } };
    return `${JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params })}\n`;
  });
  const wrap = join(root, "dist", "wrap.mjs");
  const server = join(root, "dist", "server.mjs");
  const child = spawn(process.execPath, [wrap, "--log", once20k, "--", process.execPath, server],
    { stdio: ["pipe", "ignore", "ignore"] });
  child.stdin.end(requests.join(""));
  await once(child, "exit");
  const burst = readFileSync(once20k);
  const large = join(folder, "large.log");
  writeFileSync(large, "");
  for (let time = 0; time < REPEATS; time++) appendFileSync(large, burst);
  return large;
}

/** stats and the bare loop in turn, RUNS times; the report's lines. */
async function statsFigures(log: string): Promise<string[]> {
  const events = readFileSync(log, "utf8").split("\n").length - 1;
  const stats: Run[] = [];
  const bare: Run[] = [];
  for (let run = 0; run < RUNS; run++) {
    stats.push(await timed([join(root, "dist", "wrap.mjs"), "stats", log]));
    bare.push(await timed([join(root, "bench", "bare-log-loop.mjs"), log]));
  }
  const ratio = (figure: keyof Run) => median(stats.map((each, at) => {
    return each[figure] / (bare[at]?.[figure] ?? NaN);
  }));
  const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
  const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  const row = (name: string, runs: Run[]) => {
    const wall = seconds(median(runs.map((each) => each.wallMs)));
    return `| ${name} | ${wall} | ${mib(median(runs.map((each) => each.peakBytes)))} |`;
  };
  return [
    `wrap stats over ${events.toLocaleString("en-US")} events, the median of ${RUNS} runs each:`,
    "",
    "| Reader | Time | Peak memory |",
    "|---|---|---|",
    row("wrap stats", stats),
    row("bare loop: read line by line, JSON.parse each message", bare),
    "",
    `Targets: time at most 2× the bare loop's: ${ratio("wallMs").toFixed(2)}×; ` +
      `peak memory at most 1.25×: ${ratio("peakBytes").toFixed(2)}×.`,
  ];
}

/** CPU seconds of `show --follow` over IDLE_MS on a log nobody writes to. */
async function followIdle(folder: string): Promise<string> {
  const log = join(folder, "quiet.log");
  writeFileSync(log, "2026-12-04T10:00:00.000Z # start pid 1: node server.mjs\n");
  const args = [join(root, "dist", "wrap.mjs"), "show", "--follow", log];
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
  await once(child.stdout, "data");
  const pid = child.pid ?? 0;
  const before = cpuSeconds(pid);
  await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
  const used = cpuSeconds(pid) - before;
  child.kill("SIGINT");
  await once(child, "exit");
  return `wrap show --follow on a quiet log: ${used.toFixed(2)} CPU seconds over ` +
    `${IDLE_MS / 1000} s (no busy loop: inotify, and a look at the file once a second).`;
}

const folder = mkdtempSync(join(tmpdir(), "bench-readers-"));
process.on("exit", () => rmSync(folder, { recursive: true, force: true }));
process.stderr.write("[bench] readers: recording a burst and repeating it into a large log\n");
const report = [...await statsFigures(await largeLog(folder)), "", await followIdle(folder)];
process.stdout.write(`\n${report.join("\n")}\n`);
