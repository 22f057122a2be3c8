/**
 * bench/run.ts — `npm run bench`: our server and proxy measured side by side with the
 * official SDK's servers and with bare-node floors, on this machine, now.
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
 *   the last answer arrives; the median of three such bursts.
 * - burst CPU: a fresh process, `initialize`, then PIPELINED_CALLS tools/call add requests
 *   written at once; the CPU its threads have used (user and system, start-up included, as in a
 *   real run) once the last answer arrives, from /proc/PID/task/TID/schedstat. The article's
 *   own server (tests/fixtures/article-server.mjs) runs beside ours as the peer to beat.
 * Then a burst of a slow async tool: SLOW_CALLS calls of a tool that awaits SLOW_MS, written
 * at once to a build of server.ts with that tool pasted in, until the last answer. The calls
 * overlap, so the burst takes far less than SLOW_CALLS × SLOW_MS.
 *
 * The contenders run interleaved: each round runs every contender in turn for each
 * figure (cold start and session five times over, as single spawns are the noisiest),
 * starting from a different contender each round, so that a burst of noise on this
 * shared machine falls on all of them alike. A figure is the median over rounds of each
 * round's median; a ratio is the median of the ratios taken within each round. Beside
 * each target stands what a bare-node floor scores on the same ratio. The SDK servers
 * are bundled first, the way build.mjs bundles ours, into bench/.build/.
 *
 * Usage: npm run build && npm run bench
 *   BENCH_RUNS=N        rounds (5 by default; fewer make the medians noisier)
 *   BENCH_DIST=DIR      measure DIR/server.mjs and DIR/wrap.mjs instead of dist/, such as a
 *                       patched copy built with `node build.mjs DIR`
 *   BENCH_BASELINE=DIR  measure DIR/server.mjs too, as "baseline server.mjs", in the same
 *                       rounds, with targets against it. dist/ is committed, so an earlier
 *                       commit's build is one command away:
 *                         base=$(mktemp -d) && git show REV:dist/server.mjs > "$base/server.mjs"
 * Markdown goes to stdout and progress to stderr. The exit code is 1 only when a
 * contender fails to run; a missed target is a finding, not a failure.
 */
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync }
  from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import process from "node:process";
import { stop } from "esbuild";
import { bundle } from "../build.mjs";
import { start as startProcess } from "../tests/helpers.ts";
import {
  DIST, DIST_NAME, ROUNDS, Samples, bundleServer, bundleSize, decimal, installedVersion,
  measuredOn, mebibytes, median, percentile, root, rotate, serverUnderTest, table, target,
} from "./figures.ts";

/** A program under test: how to start it, and the file whose size is its bundle size. */
interface Contender {
  name: string;
  file: string;
  /** Whether its tools/call answer is computed, or one canned line (the responders'). */
  answers: "computed" | "canned";
  /** The command line of one run; a function, so that each run of a proxy gets its own log. */
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
  /** Whole-process CPU of a fresh process over one burst of pipelined calls, in ms. */
  burstCpuMs: number;
}

/** Someone waiting for the `count`-th answer line of a peer. */
interface Waiting {
  count: number;
  resolve: (time: bigint) => void;
  reject: (error: Error) => void;
}

/** Every contender of a run, by role; baseline and the proxies only when there are files. */
interface Field {
  ours: Contender;
  v1: Contender;
  v2: Contender;
  bare: Contender;
  parse: Contender;
  /** The article's server.mjs, which ours must not cost more CPU than on a burst. */
  article: Contender;
  baseline: Contender | undefined;
  wrapped: Contender | undefined;
  piped: Contender | undefined;
}

/** The folder of an earlier build to measure beside ours, if any. */
const BASELINE = process.env.BENCH_BASELINE;

/** Spawns per contender and round for cold start and session, the noisiest single figures. */
const SPAWNS_PER_ROUND = 5;

/** Sequential calls before latency is measured, so that every contender's JIT has warmed up. */
const WARM_UP_CALLS = 200;
/** Sequential calls whose round trips give p50 and p99. */
const LATENCY_CALLS = 1_000;
/** Calls written at once for throughput, and how many such bursts a round sends. */
const PIPELINED_CALLS = 20_000;
const BURSTS_PER_ROUND = 3;
/** How long one answer, or one exit, may take before the contender counts as failed. */
const TIMEOUT_MS = 60_000;

/** The slow-tool burst: this many calls at once, of a tool that awaits this long. */
const SLOW_CALLS = 1_000;
const SLOW_MS = 5;

/** The slow tool, pasted into a copy of server.ts's TOOLS as README's tools are. */
const SLOW_TOOL = `  {
    name: "sleep",
    description: "Wait ms milliseconds",
    inputSchema: { type: "object", properties: { ms: { type: "number" } }, required: ["ms"] },
    handler: async ({ ms }) => {
      await new Promise((resolve) => setTimeout(resolve, Number(ms)));
      return toolResult("slept", false);
    },
  },`;

/** The client's side of a session (2025-06-18 basic/lifecycle, server/tools §Listing Tools). */
const INITIALIZE = line({
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "bench", version: "0.1.0" },
  },
});
const INITIALIZED = line({ jsonrpc: "2.0", method: "notifications/initialized" });
const TOOLS_LIST = line({ jsonrpc: "2.0", id: 1, method: "tools/list" });

/** The figures, in the order of the tables. */
const FIGURES = [
  "coldStartMs", "sessionMs", "peakMemoryBytes", "p50Us", "p99Us", "callsPerSecond", "burstCpuMs",
] as const satisfies readonly (keyof Figures)[];

/** Marks of an error answer, counted in every chunk a contender writes. */
const ERROR_MARKS = ['"error":', '"isError":true'];

/** Every process we started and that has not closed yet, to be killed if we stop early. */
const running = new Set<ChildProcessWithoutNullStreams>();

/** One message as one line of the stdio transport. */
function line(message: unknown): string {
  return `${JSON.stringify(message)}\n`;
}

/** A tools/call request for a tool; ids 0 and 1 are taken by the opening. */
function callTool(id: number, name: string, args: object): string {
  return line({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } });
}

/** A tools/call request for the `add` tool. */
function callAdd(id: number): string {
  return callTool(id, "add", { a: id, b: 1 });
}

/** Milliseconds between two process.hrtime.bigint() readings. */
function msBetween(start: bigint, end: bigint): number {
  return Number(end - start) / 1e6;
}

/** How many times `needle` occurs in `chunk` (one split across two chunks is missed, which
 * only undercounts). */
function occurrences(chunk: string, needle: string): number {
  let count = 0;
  let at = chunk.indexOf(needle);
  while (at !== -1) {
    count++;
    at = chunk.indexOf(needle, at + needle.length);
  }
  return count;
}

/** A target on a difference in MiB rather than a ratio, as a row. */
function differenceTarget(goal: string, limitMiB: number, perRound: readonly number[]): string[] {
  const value = median(perRound) / 2 ** 20;
  const range = perRound.map((bytes) => decimal(bytes / 2 ** 20, 1));
  const shown = `${value >= 0 ? "+" : ""}${decimal(value, 1)} MiB (rounds ${range.join(", ")})`;
  return [goal, `at most +${limitMiB} MiB`, shown, "—", value <= limitMiB ? "PASS" : "MISS"];
}

// ---- I/O: processes, /proc, esbuild, and the printed report ----

/** The peak resident memory of a process and all its descendants, in bytes (0 once gone). */
function treeHighWaterMark(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const own = Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) * 1024;
    const children = readdirSync(`/proc/${pid}/task`).flatMap((task) => {
      const listed = readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").split(" ");
      return listed.filter((child) => child !== "");
    });
    return children.reduce((sum, child) => sum + treeHighWaterMark(Number(child)), own);
  } catch {
    return 0;
  }
}

/**
 * A started contender: write to its stdin, await its answers by count, end it. It owns the
 * child process, how many answer lines and error marks it has written so far, and the one
 * caller waiting for an answer.
 */
class Peer {
  readonly pid: number;
  readonly #name: string;
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #stdout: () => string;
  readonly #stderr: () => string;
  readonly #closed: Promise<number | null>;
  #lines = 0;
  #errors = 0;
  #exited = false;
  #waiting: Waiting | undefined = undefined;

  constructor(contender: Contender) {
    const [command = "", ...args] = contender.commandLine();
    const started = startProcess(command, args);
    this.#name = contender.name;
    this.#child = started.child;
    this.#stdout = started.output;
    this.#stderr = started.errors;
    this.pid = started.child.pid ?? 0;
    running.add(started.child);
    this.#closed = this.#watch(started.finish);
    // The harness decodes stdout as UTF-8; each chunk is counted as it arrives.
    started.child.stdout.on("data", (chunk: string) => this.#count(chunk));
    // A contender that stops reading is reported by `line` or `finish`, not as an error.
    started.child.stdin.on("error", () => {});
  }

  /** Writes to its stdin. */
  send(text: string): void {
    this.#child.stdin.write(text);
  }

  /** Resolves with the time (process.hrtime.bigint) at which the `count`-th answer came. */
  line(count: number): Promise<bigint> {
    if (this.#lines >= count) return Promise.resolve(process.hrtime.bigint());
    if (this.#exited) return Promise.reject(this.#failure(`exited before answer #${count}`));
    const arrival = new Promise<bigint>((resolve, reject) => {
      this.#waiting = { count, resolve, reject };
    });
    return this.#inTime(arrival, `answer #${count}`);
  }

  /** Everything it wrote to stdout. */
  output(): string {
    return this.#stdout();
  }

  /** How many error answers it wrote: JSON-RPC errors and tool errors. */
  errors(): number {
    return this.#errors;
  }

  /** Ends its stdin and resolves when it has exited 0. */
  async finish(): Promise<void> {
    this.#child.stdin.end();
    const code = await this.#inTime(this.#closed, "exit after the end of stdin").catch(
      (error: unknown) => {
        this.#child.kill("SIGKILL");
        throw error;
      },
    );
    if (code !== 0) throw this.#failure(`exited with ${code}`);
  }

  /** Counts a chunk's answer lines and error marks, and wakes the caller waiting for them. */
  #count(chunk: string): void {
    const now = process.hrtime.bigint();
    this.#lines += occurrences(chunk, "\n");
    for (const mark of ERROR_MARKS) this.#errors += occurrences(chunk, mark);
    const waiting = this.#waiting;
    if (waiting !== undefined && this.#lines >= waiting.count) {
      this.#waiting = undefined;
      waiting.resolve(now);
    }
  }

  /** Resolves with the exit code once the process has closed; a waiting caller is failed. */
  async #watch(finish: ReturnType<typeof startProcess>["finish"]): Promise<number | null> {
    const spawnFailed = new Promise<never>((_, reject) => {
      this.#child.on("error", (error) => reject(this.#failure(error.message)));
    });
    const { code } = await Promise.race([finish, spawnFailed]);
    this.#exited = true;
    running.delete(this.#child);
    this.#waiting?.reject(this.#failure(`exited with ${code} before answering`));
    return code;
  }

  /** An error that names the contender and quotes the end of its stderr. */
  #failure(what: string): Error {
    const tail = this.#stderr().slice(-2_000);
    const quoted = tail === "" ? "" : `; its stderr ends:\n${tail}`;
    return new Error(`${this.#name}: ${what}${quoted}`);
  }

  /** Rejects a promise that has not settled within TIMEOUT_MS. */
  #inTime<T>(promise: Promise<T>, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      const late = () => reject(this.#failure(`no ${what} within ${TIMEOUT_MS / 1000} s`));
      timer = setTimeout(late, TIMEOUT_MS);
    });
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
  }
}

/** Cold start: spawn until the initialize result arrives. */
async function coldStart(contender: Contender): Promise<number> {
  const begin = process.hrtime.bigint();
  const peer = new Peer(contender);
  peer.send(INITIALIZE);
  const answered = await peer.line(1);
  await peer.finish();
  return msBetween(begin, answered);
}

/** A session like Claude Code's, checked answer by answer: its wall time and peak memory. */
async function session(contender: Contender): Promise<Partial<Figures>> {
  const begin = process.hrtime.bigint();
  const peer = new Peer(contender);
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
  // A contender that answers wrongly is not measured; a canned answer is checked as it is.
  const answers = peer.output().split("\n");
  const sum = contender.answers === "canned" ? "2 + 3 = 5" : "2 + 1 = 3";
  const right = answers.length === 4 && (answers[2] ?? "").includes(`"text":"${sum}"`);
  if (peer.errors() > 0 || !right) {
    throw new Error(`${contender.name}: unexpected answers in a session:\n${peer.output()}`);
  }
  return { sessionMs, peakMemoryBytes };
}

/** Sequential latency after a warm-up, then pipelined throughput, in one process. */
async function calls(contender: Contender, pipelined: string): Promise<Partial<Figures>> {
  const peer = new Peer(contender);
  peer.send(INITIALIZE);
  await peer.line(1);
  peer.send(INITIALIZED);
  let answered = 1;
  const roundTrips: number[] = [];
  for (let call = 0; call < WARM_UP_CALLS + LATENCY_CALLS; call++) {
    const sent = process.hrtime.bigint();
    peer.send(callAdd(2 + call));
    answered += 1;
    const arrived = await peer.line(answered);
    if (call >= WARM_UP_CALLS) roundTrips.push(Number(arrived - sent) / 1e3);
  }
  // One burst alone is the noisiest figure of all: each round takes the median of a few.
  const rates: number[] = [];
  for (let burst = 0; burst < BURSTS_PER_ROUND; burst++) {
    const sent = process.hrtime.bigint();
    peer.send(pipelined);
    answered += PIPELINED_CALLS;
    const arrived = await peer.line(answered);
    rates.push(PIPELINED_CALLS / (msBetween(sent, arrived) / 1e3));
  }
  await peer.finish();
  if (peer.errors() > 0) {
    throw new Error(`${contender.name}: ${peer.errors()} of its tools/call answers were errors`);
  }
  const callsPerSecond = median(rates);
  return { p50Us: percentile(roundTrips, 50), p99Us: percentile(roundTrips, 99), callsPerSecond };
}

/** The CPU a process's threads have used so far, in ms: each thread's time on a CPU, user and
 * system alike, as the scheduler counts it in nanoseconds. */
function cpuMs(pid: number): number {
  const threads = readdirSync(`/proc/${pid}/task`);
  const nanoseconds = threads.map((thread) => {
    return Number(readFileSync(`/proc/${pid}/task/${thread}/schedstat`, "utf8").split(" ")[0]);
  });
  return nanoseconds.reduce((sum, each) => sum + each, 0) / 1e6;
}

/** Burst CPU: a fresh process, initialize, PIPELINED_CALLS calls written at once; the CPU it has
 * used, start-up included, when the last answer has come. */
async function burstCpu(contender: Contender, pipelined: string): Promise<Partial<Figures>> {
  const peer = new Peer(contender);
  peer.send(INITIALIZE);
  await peer.line(1);
  peer.send(pipelined);
  await peer.line(1 + PIPELINED_CALLS);
  const burstCpuMs = cpuMs(peer.pid);
  await peer.finish();
  if (peer.errors() > 0) throw new Error(`${contender.name}: its burst was answered with errors`);
  return { burstCpuMs };
}

/** The slow-tool burst: SLOW_CALLS calls written at once; ms until the last answer. */
async function slowBurst(contender: Contender): Promise<number> {
  const peer = new Peer(contender);
  peer.send(INITIALIZE);
  await peer.line(1);
  peer.send(INITIALIZED);
  const burst = Array.from({ length: SLOW_CALLS }, (_, call) => {
    return callTool(2 + call, "sleep", { ms: SLOW_MS });
  });
  const sent = process.hrtime.bigint();
  peer.send(burst.join(""));
  const arrived = await peer.line(1 + SLOW_CALLS);
  await peer.finish();
  if (peer.errors() > 0) throw new Error(`${contender.name}: slow calls answered with errors`);
  return msBetween(sent, arrived);
}

/** Builds server.ts with the slow tool pasted into TOOLS, into bench/.build/. */
async function bundleSlowServer(): Promise<string> {
  const source = readFileSync(join(root, "server.ts"), "utf8");
  const close = source.indexOf("\n];\n", source.indexOf("const TOOLS: Tool[] = ["));
  if (close === -1) throw new Error("server.ts has no TOOLS table to paste the slow tool into");
  const entry = join(root, "bench", ".build", "slow-server.ts");
  writeFileSync(entry, `${source.slice(0, close)}\n${SLOW_TOOL}${source.slice(close)}`);
  const outfile = join(root, "bench", ".build", "slow-server.mjs");
  await bundle(entry, outfile);
  return outfile;
}

/** Every figure of every contender, one value per round. */
const samples = new Samples<keyof Figures>();

/** Runs one measurement `times` over for every contender in the round's order, and records
 * the round's medians. */
async function measure(
  order: readonly Contender[],
  times: number,
  run: (contender: Contender) => Promise<Partial<Figures>>,
): Promise<void> {
  const round = new Map<string, number[]>();
  for (let time = 0; time < times; time++) {
    for (const contender of order) {
      const figures = await run(contender);
      for (const figure of FIGURES) {
        const value = figures[figure];
        const key = `${contender.name}/${figure}`;
        if (value !== undefined) round.set(key, [...(round.get(key) ?? []), value]);
      }
    }
  }
  for (const contender of order) {
    for (const figure of FIGURES) {
      const measured = round.get(`${contender.name}/${figure}`);
      if (measured !== undefined) samples.record(contender, { [figure]: median(measured) });
    }
  }
}

/** One table row of a contender's medians. */
function row(contender: Contender, label: string, size: string, extra: string[]): string[] {
  const figure = (name: keyof Figures) => median(samples.values(contender, name));
  return [
    label,
    size,
    `${decimal(figure("coldStartMs"), 1)} ms`,
    `${decimal(figure("sessionMs"), 1)} ms`,
    mebibytes(figure("peakMemoryBytes")),
    `${decimal(figure("p50Us"), 0)} µs`,
    ...extra,
    `${decimal(figure("p99Us"), 0)} µs`,
    `${decimal(figure("callsPerSecond"), 0)}/s`,
  ];
}

/** Writes a line of progress to stderr. */
function progress(text: string): void {
  process.stderr.write(`[bench] ${text}\n`);
}

/** Refuses a bad BENCH_RUNS or a missing build, and warns of a build older than its source. */
function checkInputs(): void {
  serverUnderTest();
  for (const name of ["server", "wrap"]) {
    const source = join(root, `${name}.ts`);
    const built = join(DIST, `${name}.mjs`);
    const both = existsSync(source) && existsSync(built);
    if (both && statSync(source).mtimeMs > statSync(built).mtimeMs) {
      progress(`warning: ${DIST_NAME}/${name}.mjs is older than ${name}.ts; run npm run build`);
    }
  }
}

/** A contender run as `node FILE`. */
function contender(name: string, file: string, answers: Contender["answers"]): Contender {
  return { name, file, answers, commandLine: () => [process.execPath, file] };
}

/** The contenders of this run; each run of wrap gets a log file of its own in `logs`. */
function fieldOf(sdkV1: string, sdkV2: string, logs: string): Field {
  const node = process.execPath;
  const server = join(DIST, "server.mjs");
  const wrap = join(DIST, "wrap.mjs");
  const proxy = join(root, "bench", "bare-proxy.mjs");
  let logCount = 0;
  const wrapLine = () => {
    logCount += 1;
    return [node, wrap, "--log", join(logs, `wire-${logCount}.log`), "--", node, server];
  };
  const proxyLine = () => [node, proxy, "--", node, server];
  const hasWrap = existsSync(wrap);
  const baseline = BASELINE === undefined ? undefined : resolve(BASELINE, "server.mjs");
  const wrapped = { ...contender("wrap.mjs", wrap, "computed"), commandLine: wrapLine };
  const piped = { ...contender("bare pipe proxy", proxy, "computed"), commandLine: proxyLine };
  return {
    ours: contender("server.mjs", server, "computed"),
    v1: contender("SDK v1 McpServer", sdkV1, "computed"),
    v2: contender("SDK v2 McpServer", sdkV2, "computed"),
    bare: contender("bare responder", join(root, "bench", "bare-responder.mjs"), "canned"),
    parse: contender("parse responder", join(root, "bench", "parse-responder.mjs"), "canned"),
    article: contender("article's server", join(root, "tests", "fixtures", "article-server.mjs"),
      "computed"),
    baseline: baseline === undefined ? undefined : contender("baseline", baseline, "computed"),
    wrapped: hasWrap ? wrapped : undefined,
    piped: hasWrap ? piped : undefined,
  };
}

/** The contenders that are there, in a fixed order that each round rotates. */
function contendersOf(field: Field): Contender[] {
  const { ours, v1, v2, bare, parse, article, baseline, wrapped, piped } = field;
  const all = [ours, v1, v2, bare, parse, article, baseline, wrapped, piped];
  return all.filter((each) => each !== undefined);
}

/** Runs every round: cold start, session, latency and throughput, for every contender; burst
 * CPU for the servers that answer add themselves, and the parse responder as the floor. */
async function runRounds(contenders: readonly Contender[], field: Field): Promise<void> {
  const { ours, parse, article, baseline } = field;
  const cpuRace = [ours, parse, article, baseline].filter((each) => each !== undefined);
  const first = 2 + WARM_UP_CALLS + LATENCY_CALLS;
  const requests = Array.from({ length: PIPELINED_CALLS }, (_, call) => callAdd(first + call));
  const pipelined = requests.join("");
  const began = Date.now();
  for (let round = 0; round < ROUNDS; round++) {
    const order = rotate(contenders, round);
    const elapsed = Math.round((Date.now() - began) / 1000);
    const figures = "cold start, session, calls, burst CPU";
    progress(`round ${round + 1}/${ROUNDS}: ${figures} (${elapsed} s so far)`);
    const timeStart = async (each: Contender) => ({ coldStartMs: await coldStart(each) });
    await measure(order, SPAWNS_PER_ROUND, timeStart);
    await measure(order, SPAWNS_PER_ROUND, session);
    await measure(order, 1, (each) => calls(each, pipelined));
    const burst = (each: Contender) => burstCpu(each, pipelined);
    await measure(rotate(cpuRace, round), BURSTS_PER_ROUND, burst);
  }
  progress(`done in ${Math.round((Date.now() - began) / 1000)} s`);
}

/** The slow-tool burst's line for the report: the median of ROUNDS bursts, or why not. */
async function slowBurstReport(): Promise<string> {
  let file: string;
  try {
    file = await bundleSlowServer();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return `Slow-tool burst: not measured (${reason}).`;
  }
  progress(`slow-tool burst: ${SLOW_CALLS} calls of a tool that awaits ${SLOW_MS} ms`);
  const slow = contender("server.mjs with a slow tool", file, "computed");
  const times: number[] = [];
  for (let round = 0; round < ROUNDS; round++) times.push(await slowBurst(slow));
  const serial = decimal(SLOW_CALLS * SLOW_MS, 0);
  return `Slow-tool burst: ${decimal(SLOW_CALLS, 0)} calls of a tool that awaits ${SLOW_MS} ms, ` +
    `written at once, answered in ${decimal(median(times), 0)} ms (median of ${ROUNDS}; ` +
    `one after another they would take ${serial} ms).`;
}

/** The burst CPU line of the report: each server's median. */
function burstCpuLine(field: Field): string {
  const { ours, parse, article, baseline } = field;
  const measured = [ours, article, parse, baseline].filter((each) => each !== undefined);
  const shown = measured.map((each) => {
    return `${each.name} ${decimal(median(samples.values(each, "burstCpuMs")), 0)} ms`;
  });
  return `Burst CPU: ${decimal(PIPELINED_CALLS, 0)} tools/call requests written at once to a ` +
    "fresh process, its CPU (user and system, start-up included) until the last answer: " +
    `${shown.join(", ")} (medians of ${BURSTS_PER_ROUND} a round).`;
}

/** The opening lines of the report: when, where, and what each figure is. */
function preamble(): string[] {
  return [
    measuredOn(),
    "Reproduce with `npm run build && npm run bench`.",
    "",
    "Cold start: spawn until the initialize result. Session: initialize, initialized, tools/list,",
    "tools/call, end of stdin, exit; its peak memory is the peak resident set (VmHWM) summed over",
    `its processes. p50 and p99: of ${decimal(LATENCY_CALLS, 0)} sequential tools/call round ` +
      `trips after ${WARM_UP_CALLS} to warm up.`,
    `Throughput: ${decimal(PIPELINED_CALLS, 0)} tools/call requests written at once, until the ` +
      `last answer; the median of ${BURSTS_PER_ROUND} bursts.`,
    "Bundle: the file node runs, esbuild-bundled alike, not minified.",
  ];
}

/** The servers' table. */
function serverTable(field: Field): string {
  const { ours, v1, v2, bare, parse, baseline } = field;
  const sdk = (name: string) => `${name} ${installedVersion(name)}`;
  const rows = [
    row(ours, `${DIST_NAME}/server.mjs`, bundleSize(ours.file), []),
    row(v1, `SDK v1 McpServer (${sdk("@modelcontextprotocol/sdk")})`, bundleSize(v1.file), []),
    row(v2, `SDK v2 McpServer (${sdk("@modelcontextprotocol/server")})`, bundleSize(v2.file), []),
    row(bare, "bare node responder, no JSON (a floor)", bundleSize(bare.file), []),
    row(parse, "parse responder, JSON in and out (a floor)", bundleSize(parse.file), []),
    row(field.article, "the article's server.mjs (its code as published)",
      bundleSize(field.article.file), []),
  ];
  if (baseline !== undefined) {
    rows.push(row(baseline, `baseline: ${BASELINE}/server.mjs`, bundleSize(baseline.file), []));
  }
  const header = ["Server", "Bundle (gzip)", "Cold start", "Session", "Peak memory", "p50"];
  return table([...header, "p99", "Throughput"], rows);
}

/** The median p50 a proxy adds to the direct connection, as a cell. */
function addedCell(proxy: Contender, direct: Contender): string[] {
  return [`+${decimal(median(samples.differences(proxy, direct, "p50Us")), 0)} µs`];
}

/** The proxies' table. */
function proxyTable(field: Field, wrapped: Contender, piped: Contender): string {
  const { ours } = field;
  const wrapLabel = `${DIST_NAME}/wrap.mjs --log FILE -- node ${DIST_NAME}/server.mjs`;
  const pipeLabel = "bare pipe proxy, logs nothing (the floor)";
  const rows = [
    row(ours, `none: ${DIST_NAME}/server.mjs directly`, "—", ["—"]),
    row(wrapped, wrapLabel, bundleSize(wrapped.file), addedCell(wrapped, ours)),
    row(piped, pipeLabel, bundleSize(piped.file), addedCell(piped, ours)),
  ];
  const header = ["Proxy", "Bundle (gzip)", "Cold start", "Session"];
  const figures = ["Peak memory (proxy + server)", "p50", "Added p50", "p99", "Throughput"];
  return table([...header, ...figures], rows);
}

/** The server's targets; a floor scores the same ratio beside each. */
function serverTargets(field: Field): string[][] {
  const { ours, v1, v2, bare, parse, article } = field;
  const calls = "callsPerSecond";
  const start = "coldStartMs";
  const memory = "peakMemoryBytes";
  const cpu = "burstCpuMs";
  return [
    target("Server throughput / SDK v1's", "at least", 3,
      samples.ratio(ours, v1, calls), samples.ratio(parse, v1, calls)),
    target("Server throughput / parse responder's", "at least", 0.7,
      samples.ratio(ours, parse, calls), "itself"),
    target("Server cold start / SDK v1's", "at most", 0.6,
      samples.ratio(ours, v1, start), samples.ratio(bare, v1, start)),
    target("Server cold start / SDK v2's", "at most", 0.6,
      samples.ratio(ours, v2, start), samples.ratio(bare, v2, start)),
    target("Server peak memory / bare responder's", "at most", 1.1,
      samples.ratio(ours, bare, memory), "itself"),
    target("Server burst CPU / the article's server's", "at most", 1.0,
      samples.ratio(ours, article, cpu), samples.ratio(parse, article, cpu)),
  ];
}

/** The targets against an earlier build, when one was measured. */
function baselineTargets(field: Field): string[][] {
  const { ours, baseline } = field;
  if (baseline === undefined) return [];
  return [
    target("Server throughput / baseline's", "at least", 0.9,
      samples.ratio(ours, baseline, "callsPerSecond"), "itself"),
    differenceTarget("Server peak memory − baseline's", 4,
      samples.differences(ours, baseline, "peakMemoryBytes")),
  ];
}

/** The proxy's targets against the bare pipe proxy. */
function proxyTargets(field: Field, wrapped: Contender, piped: Contender): string[][] {
  const byWrap = median(samples.differences(wrapped, field.ours, "p50Us"));
  const byPipe = median(samples.differences(piped, field.ours, "p50Us"));
  // A ratio of medians: within one round the bare proxy's few added µs can come out near zero
  // or below, and a ratio to that means nothing.
  const detail = `+${decimal(byWrap, 0)} µs / +${decimal(byPipe, 0)} µs`;
  // The client's wait for the last answer of a burst: the bare proxy's rate over wrap's.
  const calls = decimal(PIPELINED_CALLS, 0);
  const lastAnswer = `Wrap time to the last of ${calls} answers / bare pipe proxy's`;
  return [
    target("Wrap throughput / bare pipe proxy's", "at least", 0.8,
      samples.ratio(wrapped, piped, "callsPerSecond"), "itself"),
    target(lastAnswer, "at most", 1.05, samples.ratio(piped, wrapped, "callsPerSecond"), "itself"),
    // Issue 36's target: at most 1.3× what the bare proxy adds, every line still durable.
    target("Wrap added p50 / bare pipe proxy's", "at most", 1.3,
      { value: byWrap / byPipe, detail }, "itself"),
  ];
}

/** Measures everything and prints the report; resolves with the exit code. */
async function main(): Promise<number> {
  checkInputs();
  progress("bundling the SDK servers into bench/.build/");
  const sdkV1 = await bundleServer("sdk-v1-server");
  const sdkV2 = await bundleServer("sdk-v2-server");
  const slowLine = await slowBurstReport();
  await stop();
  const logs = mkdtempSync(join(tmpdir(), "bench-wrap-"));
  process.on("exit", () => rmSync(logs, { recursive: true, force: true }));
  const field = fieldOf(sdkV1, sdkV2, logs);
  const { wrapped, piped } = field;
  if (wrapped === undefined) progress(`${DIST_NAME}/wrap.mjs is missing: no proxy section`);
  await runRounds(contendersOf(field), field);
  // bench/readers.ts measures wrap's readers; `npm run bench` runs it after this.
  const report = [...preamble(), "", serverTable(field), "", burstCpuLine(field), "", slowLine];
  const targets = [...serverTargets(field), ...baselineTargets(field)];
  if (wrapped !== undefined && piped !== undefined) {
    report.push("", proxyTable(field, wrapped, piped));
    targets.push(...proxyTargets(field, wrapped, piped));
  }
  report.push("", table(["Target", "Goal", "Measured", "Floor's score", ""], targets));
  process.stdout.write(`${report.join("\n")}\n`);
  return wrapped === undefined ? 1 : 0;
}

// Whatever happens, no process of ours outlives the benchmark (a proxy's server sees its
// stdin end and exits).
process.on("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});
process.on("SIGINT", () => process.exit(130));

process.exitCode = await main().catch((error: unknown) => {
  progress(`failed: ${error instanceof Error ? error.message : String(error)}`);
  return 1;
});
