/**
 * bench/run.ts — `npm run bench`: our server and proxy measured side by side with the
 * official SDK's servers and with bare-node limits, on this machine, now.
 *
 * Every contender is a command that speaks MCP over stdio, one JSON-RPC message per
 * line (MCP basic/transports/stdio), and is measured from outside, as a client sees it:
 * - cold start: from spawn until the `initialize` result line arrives;
 * - session: a session like Claude Code's (initialize, notifications/initialized,
 *   tools/list, tools/call, end of stdin) from spawn until the process has exited,
 *   and its peak memory: the high-water mark of resident memory (VmHWM in
 *   /proc/PID/status), summed over the contender's process tree and read after the
 *   last answer, so a proxy is charged for itself and the server behind it;
 * - latency: after a warm-up, sequential tools/call round trips, p50 and p99;
 * - throughput: then many tools/call requests written at once, calls per second until
 *   the last answer arrives.
 *
 * The contenders run interleaved: each round runs every contender in turn for each
 * figure (cold start and session five times over, as single spawns are the noisiest),
 * starting from a different contender each round, so that a burst of noise on this
 * shared machine falls on all of them alike. A figure is the median over rounds of each
 * round's median; a ratio is the median of the ratios taken within each round. Beside
 * each target stands what the bare-node limit scores on the same ratio. The SDK servers
 * are bundled first, the way build.mjs bundles ours, into bench/.build/.
 *
 * Usage: npm run build && npm run bench
 *   BENCH_RUNS=N    rounds (5 by default; fewer make the medians noisier)
 *   BENCH_DIST=DIR  measure DIR/server.mjs and DIR/wrap.mjs instead of dist/, such as a
 *                   patched copy built with `node build.mjs DIR`
 * Markdown goes to stdout and progress to stderr. The exit code is 1 only when a
 * contender fails to run; a missed target is a finding, not a failure.
 */
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { cpus, release, tmpdir, totalmem } from "node:os";
import { join, resolve } from "node:path";
import process from "node:process";
import { gzipSync } from "node:zlib";
import { stop } from "esbuild";
import { bundle } from "../build.mjs";
import { start as startProcess } from "../tests/helpers.ts";

/** A program under test: how to start it, and the file whose size is its bundle size. */
interface Contender {
  name: string;
  file: string;
  /** Whether its tools/call answer is computed, or one canned line (the bare responder's). */
  answers: "computed" | "canned";
  /** The command line of one run; a function, so that each run of a proxy gets its own log file. */
  commandLine: () => string[];
}

/** One round's figures for one contender. */
interface Figures {
  coldStartMs: number;
  sessionMs: number;
  peakMemoryBytes: number;
  p50Us: number;
  p99Us: number;
  callsPerSecond: number;
}

/** A started contender: write to its stdin, await its answers by count, end it. */
interface Peer {
  pid: number;
  send(text: string): void;
  /** Resolves with the time (process.hrtime.bigint) at which the `count`-th answer line arrived. */
  line(count: number): Promise<bigint>;
  /** Everything it wrote to stdout. */
  output(): string;
  /** How many error answers it wrote: JSON-RPC errors and tool errors. */
  errors(): number;
  /** Ends its stdin and resolves when it has exited 0. */
  finish(): Promise<void>;
}

/** A ratio for a target: its value, and how it came about. */
interface Ratio {
  value: number;
  detail: string;
}

/** The project's root folder. */
const root = join(import.meta.dirname, "..");

/** Rounds; five by default, as fewer make the medians noisy on a shared machine. */
const ROUNDS = Number(process.env.BENCH_RUNS ?? 5);

/** The folder of the bundles under test. */
const DIST = resolve(root, process.env.BENCH_DIST ?? "dist");

/** Spawns per contender in each round for cold start and session, whose single runs are the noisiest figures. */
const SPAWNS_PER_ROUND = 5;

/** Sequential calls before latency is measured, so that every contender's JIT has warmed up. */
const WARM_UP_CALLS = 200;
/** Sequential calls whose round trips give p50 and p99. */
const LATENCY_CALLS = 1_000;
/** Calls written at once for throughput. */
const PIPELINED_CALLS = 20_000;
/** How long one answer, or one exit, may take before the contender counts as failed. */
const TIMEOUT_MS = 60_000;

/** The client's side of a session (2025-06-18 basic/lifecycle §Initialization, server/tools §Listing Tools). */
const INITIALIZE = line({
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "0.1.0" } },
});
const INITIALIZED = line({ jsonrpc: "2.0", method: "notifications/initialized" });
const TOOLS_LIST = line({ jsonrpc: "2.0", id: 1, method: "tools/list" });

/** The figures, in the order of the tables. */
const FIGURES = ["coldStartMs", "sessionMs", "peakMemoryBytes", "p50Us", "p99Us", "callsPerSecond"] as const satisfies readonly (keyof Figures)[];

/** Marks of an error answer, counted in every chunk a contender writes. */
const ERROR_MARKS = ['"error":', '"isError":true'];

/** Every process we started and that has not closed yet, to be killed if we stop early. */
const running = new Set<ChildProcessWithoutNullStreams>();

/** One message as one line of the stdio transport. */
function line(message: unknown): string {
  return `${JSON.stringify(message)}\n`;
}

/** A tools/call request for the `add` tool; ids 0 and 1 are taken by the opening. */
function callAdd(id: number): string {
  return line({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "add", arguments: { a: id, b: 1 } } });
}

/** Milliseconds between two process.hrtime.bigint() readings. */
function msBetween(start: bigint, end: bigint): number {
  return Number(end - start) / 1e6;
}

/** The middle value of a list (the mean of the middle two for an even count). */
function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? NaN) : ((sorted[middle - 1] ?? NaN) + (sorted[middle] ?? NaN)) / 2;
}

/** The nearest-rank percentile of a list. */
function percentile(values: readonly number[], percent: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((percent / 100) * sorted.length) - 1)] ?? NaN;
}

/** The contenders, rotated to start at the round's own place. */
function rotate<T>(items: readonly T[], by: number): T[] {
  const start = by % items.length;
  return [...items.slice(start), ...items.slice(0, start)];
}

/** How many times `needle` occurs in `chunk` (one split across two chunks is missed, which only undercounts). */
function occurrences(chunk: string, needle: string): number {
  let count = 0;
  for (let at = chunk.indexOf(needle); at !== -1; at = chunk.indexOf(needle, at + needle.length)) count++;
  return count;
}

/** Formats a number with thousands separators and the given decimals. */
function decimal(value: number, digits = 0): string {
  return value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** A file's size, and its size gzipped, for the tables. */
function bundleSize(file: string): string {
  const bytes = readFileSync(file);
  return `${decimal(bytes.length / 1024, 1)} kB (${decimal(gzipSync(bytes).length / 1024, 1)} kB)`;
}

/** A Markdown table with padded columns, so that it reads in a terminal too. */
function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? "").length)));
  const format = (cells: readonly string[]) => `| ${cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join(" | ")} |`;
  return [format(header), `|${widths.map((width) => "-".repeat(width + 2)).join("|")}|`, ...rows.map(format)].join("\n");
}

/** The median of per-round ratios, with their range. */
function overRounds(perRound: readonly number[]): Ratio {
  return { value: median(perRound), detail: `rounds ${decimal(Math.min(...perRound), 2)}–${decimal(Math.max(...perRound), 2)}` };
}

/** A target, as a row: the goal, our ratio, what the bare-node limit scores on the same ratio, and PASS or MISS. */
function target(goal: string, direction: "at least" | "at most", threshold: number, measured: Ratio, limit: Ratio | "itself"): string[] {
  const pass = direction === "at least" ? measured.value >= threshold : measured.value <= threshold;
  const limitScore = limit === "itself" ? "1× (itself)" : `${decimal(limit.value, 2)}×`;
  return [goal, `${direction} ${threshold}×`, `${decimal(measured.value, 2)}× (${measured.detail})`, limitScore, pass ? "PASS" : "MISS"];
}

// ---- I/O: processes, /proc, esbuild, and the printed report ----

/** The peak resident memory of a process and all its descendants, in bytes (0 for one that is gone). */
function treeHighWaterMark(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const own = Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) * 1024;
    const children = readdirSync(`/proc/${pid}/task`).flatMap((task) =>
      readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").split(" ").filter((child) => child !== ""),
    );
    return children.reduce((sum, child) => sum + treeHighWaterMark(Number(child)), own);
  } catch {
    return 0;
  }
}

/** Starts a contender with the tests' process harness, and counts its answer lines as they come. */
function start(contender: Contender): Peer {
  const [command = "", ...args] = contender.commandLine();
  const { child, finish, output, errors: stderr } = startProcess(command, args);
  running.add(child);
  let lines = 0;
  let errors = 0;
  let exited = false;
  let waiting: { count: number; resolve: (time: bigint) => void; reject: (error: Error) => void } | undefined;

  const failure = (what: string) => {
    const tail = stderr().slice(-2_000);
    return new Error(`${contender.name}: ${what}${tail === "" ? "" : `; its stderr ends:\n${tail}`}`);
  };
  const closed = new Promise<number | null>((resolve, reject) => {
    child.on("error", (error) => reject(failure(error.message)));
    finish.then(({ code }) => {
      exited = true;
      running.delete(child);
      waiting?.reject(failure(`exited with ${code} before answering`));
      resolve(code);
    }, reject);
  });
  closed.catch(() => {});

  // The harness decodes stdout as UTF-8; each chunk is counted as it arrives.
  child.stdout.on("data", (chunk: string) => {
    const now = process.hrtime.bigint();
    for (let at = chunk.indexOf("\n"); at !== -1; at = chunk.indexOf("\n", at + 1)) lines++;
    for (const mark of ERROR_MARKS) errors += occurrences(chunk, mark);
    if (waiting !== undefined && lines >= waiting.count) {
      const { resolve } = waiting;
      waiting = undefined;
      resolve(now);
    }
  });
  // A contender that stops reading is reported by `line` or `finish`, not as an unhandled error.
  child.stdin.on("error", () => {});

  /** Rejects a promise that has not settled within TIMEOUT_MS. */
  function inTime<T>(promise: Promise<T>, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(failure(`no ${what} within ${TIMEOUT_MS / 1000} s`)), TIMEOUT_MS);
    });
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
  }

  return {
    pid: child.pid ?? 0,
    send(text) {
      child.stdin.write(text);
    },
    line(count) {
      if (lines >= count) return Promise.resolve(process.hrtime.bigint());
      if (exited) return Promise.reject(failure(`exited before answer #${count}`));
      const arrival = new Promise<bigint>((resolve, reject) => {
        waiting = { count, resolve, reject };
      });
      return inTime(arrival, `answer #${count}`);
    },
    output,
    errors: () => errors,
    async finish() {
      child.stdin.end();
      const code = await inTime(closed, "exit after the end of stdin").catch((error: unknown) => {
        child.kill("SIGKILL");
        throw error;
      });
      if (code !== 0) throw failure(`exited with ${code}`);
    },
  };
}

/** Cold start: spawn until the initialize result arrives. */
async function coldStart(contender: Contender): Promise<number> {
  const begin = process.hrtime.bigint();
  const peer = start(contender);
  peer.send(INITIALIZE);
  const answered = await peer.line(1);
  await peer.finish();
  return msBetween(begin, answered);
}

/** A session like Claude Code's, checked answer by answer; returns its wall time and peak memory. */
async function session(contender: Contender): Promise<{ sessionMs: number; peakMemoryBytes: number }> {
  const begin = process.hrtime.bigint();
  const peer = start(contender);
  peer.send(INITIALIZE);
  await peer.line(1);
  peer.send(INITIALIZED);
  peer.send(TOOLS_LIST);
  await peer.line(2);
  peer.send(callAdd(2));
  await peer.line(3);
  const peakMemoryBytes = treeHighWaterMark(peer.pid);
  await peer.finish();
  const sessionMs = msBetween(begin, process.hrtime.bigint());
  // A contender that answers wrongly is not measured. The bare responder's canned answer is checked as it is.
  const answers = peer.output().split("\n");
  const sum = contender.answers === "canned" ? "2 + 3 = 5" : "2 + 1 = 3";
  if (peer.errors() > 0 || answers.length !== 4 || !(answers[2] ?? "").includes(`"text":"${sum}"`)) {
    throw new Error(`${contender.name}: unexpected answers in a session:\n${peer.output()}`);
  }
  return { sessionMs, peakMemoryBytes };
}

/** Sequential latency after a warm-up, then pipelined throughput, in one process. */
async function calls(contender: Contender, pipelined: string): Promise<{ p50Us: number; p99Us: number; callsPerSecond: number }> {
  const peer = start(contender);
  peer.send(INITIALIZE);
  await peer.line(1);
  peer.send(INITIALIZED);
  let answered = 1;
  const roundTrips: number[] = [];
  for (let call = 0; call < WARM_UP_CALLS + LATENCY_CALLS; call++) {
    const sent = process.hrtime.bigint();
    peer.send(callAdd(2 + call));
    const arrived = await peer.line(++answered);
    if (call >= WARM_UP_CALLS) roundTrips.push(Number(arrived - sent) / 1e3);
  }
  const sent = process.hrtime.bigint();
  peer.send(pipelined);
  const arrived = await peer.line((answered += PIPELINED_CALLS));
  await peer.finish();
  if (peer.errors() > 0) throw new Error(`${contender.name}: ${peer.errors()} of its tools/call answers were errors`);
  return {
    p50Us: percentile(roundTrips, 50),
    p99Us: percentile(roundTrips, 99),
    callsPerSecond: PIPELINED_CALLS / (msBetween(sent, arrived) / 1e3),
  };
}

/** Bundles an SDK server with build.mjs's own `bundle`, and checks that it imports nothing but node: builtins. */
async function bundleServer(name: string): Promise<string> {
  const entry = join(root, "bench", `${name}.ts`);
  const outfile = join(root, "bench", ".build", `${name}.mjs`);
  const foreign = await bundle(entry, outfile);
  if (foreign.length > 0) throw new Error(`${outfile} imports ${foreign.join(", ")}; only node: builtins are allowed`);
  // esbuild turns a CommonJS dependency's require() of a builtin into a shim that throws in ESM: give it a real require.
  if (readFileSync(outfile, "utf8").includes("Dynamic require of")) {
    await bundle(entry, outfile, 'import { createRequire } from "node:module"; const require = createRequire(import.meta.url);');
  }
  return outfile;
}

/** Every figure of every contender, one value per round, by "name/figure". */
const samples = new Map<string, number[]>();

/** Records one round's value of a figure. */
function record(contender: Contender, figure: keyof Figures, value: number): void {
  const key = `${contender.name}/${figure}`;
  samples.set(key, [...(samples.get(key) ?? []), value]);
}

/** A figure's values, one per round. */
function values(contender: Contender, figure: keyof Figures): number[] {
  return samples.get(`${contender.name}/${figure}`) ?? [];
}

/** One contender's figure over another's: the median of the ratios taken within each round. */
function ratio(contender: Contender, to: Contender, figure: keyof Figures): Ratio {
  const other = values(to, figure);
  return overRounds(values(contender, figure).map((value, round) => value / (other[round] ?? NaN)));
}

/** The per-round p50 latency a proxy adds to the direct connection. */
function addedLatency(proxy: Contender, direct: Contender): number[] {
  const baseline = values(direct, "p50Us");
  return values(proxy, "p50Us").map((value, round) => value - (baseline[round] ?? NaN));
}

/** Runs one measurement `times` over for every contender in the round's order, and records the round's medians. */
async function measure(order: readonly Contender[], times: number, run: (contender: Contender) => Promise<Partial<Figures>>): Promise<void> {
  const round = new Map<string, { contender: Contender; figure: keyof Figures; values: number[] }>();
  for (let time = 0; time < times; time++) {
    for (const contender of order) {
      const figures = await run(contender);
      for (const figure of FIGURES) {
        const value = figures[figure];
        const key = `${contender.name}/${figure}`;
        if (value !== undefined) round.set(key, { contender, figure, values: [...(round.get(key)?.values ?? []), value] });
      }
    }
  }
  for (const { contender, figure, values } of round.values()) record(contender, figure, median(values));
}

/** One table row of a contender's medians. */
function row(contender: Contender, label: string, size: string, extra: string[] = []): string[] {
  const figure = (name: keyof Figures) => median(values(contender, name));
  return [
    label,
    size,
    `${decimal(figure("coldStartMs"), 1)} ms`,
    `${decimal(figure("sessionMs"), 1)} ms`,
    `${decimal(figure("peakMemoryBytes") / 2 ** 20, 1)} MiB`,
    `${decimal(figure("p50Us"))} µs`,
    ...extra,
    `${decimal(figure("p99Us"))} µs`,
    `${decimal(figure("callsPerSecond"))}/s`,
  ];
}

/** The installed version of a package, for the table. */
function installedVersion(name: string): string {
  const manifest: unknown = JSON.parse(readFileSync(join(root, "node_modules", name, "package.json"), "utf8"));
  return typeof manifest === "object" && manifest !== null && "version" in manifest ? String(manifest.version) : "?";
}

/** Writes a line of progress to stderr. */
function progress(text: string): void {
  process.stderr.write(`[bench] ${text}\n`);
}

/** Measures everything and prints the report; resolves with the exit code. */
async function main(): Promise<number> {
  if (!Number.isInteger(ROUNDS) || ROUNDS < 1) throw new Error(`BENCH_RUNS must be a positive integer, not ${process.env.BENCH_RUNS}`);
  const node = process.execPath;
  const server = join(DIST, "server.mjs");
  const wrap = join(DIST, "wrap.mjs");
  const bareResponder = join(root, "bench", "bare-responder.mjs");
  const bareProxy = join(root, "bench", "bare-proxy.mjs");
  const dist = process.env.BENCH_DIST ?? "dist";
  if (!existsSync(server)) throw new Error(`${dist}/server.mjs is missing: run npm run build first`);
  for (const name of ["server", "wrap"]) {
    const source = join(root, `${name}.ts`);
    const built = join(DIST, `${name}.mjs`);
    if (existsSync(source) && existsSync(built) && statSync(source).mtimeMs > statSync(built).mtimeMs) {
      progress(`warning: ${dist}/${name}.mjs is older than ${name}.ts; run npm run build to measure the current source`);
    }
  }

  progress("bundling the SDK servers into bench/.build/");
  const [sdkV1, sdkV2] = await Promise.all([bundleServer("sdk-v1-server"), bundleServer("sdk-v2-server")]);
  await stop();
  const logs = mkdtempSync(join(tmpdir(), "bench-wrap-"));
  process.on("exit", () => rmSync(logs, { recursive: true, force: true }));
  let logCount = 0;
  const ours: Contender = { name: "server.mjs", file: server, answers: "computed", commandLine: () => [node, server] };
  const v1: Contender = { name: "SDK v1 McpServer", file: sdkV1, answers: "computed", commandLine: () => [node, sdkV1] };
  const v2: Contender = { name: "SDK v2 McpServer", file: sdkV2, answers: "computed", commandLine: () => [node, sdkV2] };
  const bare: Contender = { name: "bare responder", file: bareResponder, answers: "canned", commandLine: () => [node, bareResponder] };
  const wrapped: Contender = {
    name: "wrap.mjs",
    file: wrap,
    answers: "computed",
    commandLine: () => [node, wrap, "--log", join(logs, `wire-${++logCount}.log`), "--", node, server],
  };
  const piped: Contender = { name: "bare pipe proxy", file: bareProxy, answers: "computed", commandLine: () => [node, bareProxy, "--", node, server] };
  const hasWrap = existsSync(wrap);
  if (!hasWrap) progress(`${dist}/wrap.mjs is missing (npm run build): the proxy section is left out`);
  const contenders = hasWrap ? [ours, v1, v2, bare, wrapped, piped] : [ours, v1, v2, bare];

  const pipelined = Array.from({ length: PIPELINED_CALLS }, (_, call) => callAdd(2 + WARM_UP_CALLS + LATENCY_CALLS + call)).join("");
  const began = Date.now();
  for (let round = 0; round < ROUNDS; round++) {
    const order = rotate(contenders, round);
    progress(`round ${round + 1}/${ROUNDS}: cold start, session, latency and throughput (${Math.round((Date.now() - began) / 1000)} s so far)`);
    await measure(order, SPAWNS_PER_ROUND, async (contender) => ({ coldStartMs: await coldStart(contender) }));
    await measure(order, SPAWNS_PER_ROUND, session);
    await measure(order, 1, (contender) => calls(contender, pipelined));
  }
  progress(`done in ${Math.round((Date.now() - began) / 1000)} s`);

  const cpu = cpus();
  const machine = `${cpu.length} × ${cpu[0]?.model.trim() ?? "unknown CPU"}, ${decimal(totalmem() / 2 ** 30)} GiB, Linux ${release()}, Node ${process.version}`;
  const header = ["", "Bundle (gzip)", "Cold start", "Session", "Peak memory", "p50", "p99", "Throughput"];
  const report = [
    `Measured on ${new Date().toISOString().slice(0, 10)}, ${machine}: the median of ${ROUNDS} interleaved rounds.`,
    "Reproduce with `npm run build && npm run bench`.",
    "",
    "Cold start: spawn until the initialize result. Session: initialize, initialized, tools/list, tools/call, end of stdin, exit;",
    "its peak memory is the peak resident set (VmHWM) summed over its processes. p50 and p99: of",
    `${decimal(LATENCY_CALLS)} sequential tools/call round trips after ${WARM_UP_CALLS} to warm up. Throughput: ${decimal(PIPELINED_CALLS)} tools/call`,
    "requests written at once, until the last answer. Bundle: the file node runs, esbuild-bundled alike, not minified.",
    "",
    table(
      ["Server", ...header.slice(1)],
      [
        row(ours, `${dist}/server.mjs`, bundleSize(server)),
        row(v1, `SDK v1 McpServer (@modelcontextprotocol/sdk ${installedVersion("@modelcontextprotocol/sdk")})`, bundleSize(sdkV1)),
        row(v2, `SDK v2 McpServer (@modelcontextprotocol/server ${installedVersion("@modelcontextprotocol/server")})`, bundleSize(sdkV2)),
        row(bare, "bare node responder (the limit)", bundleSize(bareResponder)),
      ],
    ),
  ];
  const targets = [
    target("Server throughput / SDK v1's", "at least", 3, ratio(ours, v1, "callsPerSecond"), ratio(bare, v1, "callsPerSecond")),
    target("Server throughput / bare responder's", "at least", 0.7, ratio(ours, bare, "callsPerSecond"), "itself"),
    target("Server cold start / SDK v1's", "at most", 0.6, ratio(ours, v1, "coldStartMs"), ratio(bare, v1, "coldStartMs")),
    target("Server cold start / SDK v2's", "at most", 0.6, ratio(ours, v2, "coldStartMs"), ratio(bare, v2, "coldStartMs")),
    target("Server peak memory / SDK v1's", "at most", 0.5, ratio(ours, v1, "peakMemoryBytes"), ratio(bare, v1, "peakMemoryBytes")),
    target("Server peak memory / SDK v2's", "at most", 0.5, ratio(ours, v2, "peakMemoryBytes"), ratio(bare, v2, "peakMemoryBytes")),
  ];
  if (hasWrap) {
    const addedByWrap = median(addedLatency(wrapped, ours));
    const addedByPipe = median(addedLatency(piped, ours));
    const added = (proxy: Contender) => [`+${decimal(median(addedLatency(proxy, ours)))} µs`];
    // A ratio of medians: within one round the bare proxy's few added µs can come out near zero or below, and a ratio to that means nothing.
    const addedRatio = { value: addedByWrap / addedByPipe, detail: `+${decimal(addedByWrap)} µs / +${decimal(addedByPipe)} µs` };
    report.push(
      "",
      table(
        ["Proxy", "Bundle (gzip)", "Cold start", "Session", "Peak memory (proxy + server)", "p50", "Added p50", "p99", "Throughput"],
        [
          row(ours, `none: ${dist}/server.mjs directly`, "—", ["—"]),
          row(wrapped, `${dist}/wrap.mjs --log FILE -- node ${dist}/server.mjs`, bundleSize(wrap), added(wrapped)),
          row(piped, "bare pipe proxy, logs nothing (the limit)", bundleSize(bareProxy), added(piped)),
        ],
      ),
    );
    targets.push(
      target("Wrap throughput / bare pipe proxy's", "at least", 0.8, ratio(wrapped, piped, "callsPerSecond"), "itself"),
      target("Wrap added p50 / bare pipe proxy's", "at most", 1.2, addedRatio, "itself"),
    );
  } else {
    report.push("", `Proxy: not measured, ${dist}/wrap.mjs is missing (run npm run build).`);
  }
  report.push("", table(["Target", "Goal", "Measured", "Bare-node limit", ""], targets));
  process.stdout.write(`${report.join("\n")}\n`);
  return hasWrap ? 0 : 1;
}

// Whatever happens, no process of ours outlives the benchmark (a proxy's server sees its stdin end and exits).
process.on("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});
process.on("SIGINT", () => process.exit(130));

process.exitCode = await main().catch((error: unknown) => {
  progress(`failed: ${error instanceof Error ? error.message : String(error)}`);
  return 1;
});
