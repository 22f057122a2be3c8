/**
 * bench/http.ts — the third part of `npm run bench`: tools/call over Streamable HTTP with
 * keep-alive, our server beside the official SDK v2's and a bare node:http responder, on this
 * machine, now.
 *
 * Each contender is a command that serves MCP's Streamable HTTP transport (2026-07-28
 * basic/transports/streamable-http) on 127.0.0.1, on a free port, and names its endpoint's URL
 * in one stderr line. Every call is one POST of the same tools/call of `add`, as a 2026-07-28
 * client sends it: the `_meta` envelope (protocolVersion, clientInfo, clientCapabilities) in the
 * body, and the headers MCP-Protocol-Version, Mcp-Method and Mcp-Name that must match it. SDK v2
 * serves that era natively, statelessly, so it gets the very same requests, with no
 * `initialize`. The client is node:http with a keep-alive Agent, measured from outside:
 * - latency: over one connection, after a warm-up, sequential round trips (request written
 *   until the last byte of the answer), p50 and p99;
 * - throughput: CONNECTIONS connections, each sending its next call as soon as its last is
 *   answered, until BURST_CALLS calls are answered; calls per second, the median of a few bursts;
 * - peak memory: a fresh process, then CROWD connections opened at once, each with one call (all
 *   with id 1, each with its own arguments, so that each must get its own answer); the server's
 *   peak resident memory (VmHWM in /proc/PID/status) once every answer has come.
 * Every answer is checked: HTTP 200 and the right sum (the bare responder's canned one as it is).
 *
 * The contenders run interleaved, as in bench/run.ts: each round runs every contender in turn,
 * starting from a different one each round. A figure is the median over rounds; a ratio is the
 * median of the ratios taken within each round. Beside each target stands what the bare
 * responder scores on it. The SDK server is bundled first, the way build.mjs bundles ours.
 *
 * Usage: npm run build && node --import tsx bench/http.ts
 *   BENCH_RUNS=N     rounds (5 by default)
 *   BENCH_DIST=DIR   measure DIR/server.mjs instead of dist/server.mjs
 * Markdown goes to stdout and progress to stderr. The exit code is 1 only when a contender fails
 * to run or answers wrongly; a missed target is a finding, not a failure.
 */
import { join } from "node:path";
import process from "node:process";
import { stop as stopEsbuild } from "esbuild";
import {
  DIST_NAME, ROUNDS, Samples, bundleServer, bundleSize, decimal, installedVersion, measuredOn,
  mebibytes, median, percentile, root, rotate, serverUnderTest, table, target,
} from "./figures.ts";
import {
  PROTOCOL_VERSION, callBody, client, launch as launchFile, post, type Answer, type Client,
  type Running,
} from "./http-client.ts";
import { highWaterMark } from "./proc.ts";

/** A server under test: how to start it, and the file whose size is its bundle size. */
interface Contender {
  name: string;
  file: string;
  /** Whether its tools/call answer is computed, or one canned body (the bare responder's). */
  answers: "computed" | "canned";
  args: string[];
}

/** One round's figures for one contender. */
interface Figures {
  p50Us: number;
  p99Us: number;
  callsPerSecond: number;
  /** VmHWM once the fresh process of the crowd listens, before any call. */
  startMemoryBytes: number;
  peakMemoryBytes: number;
}

/** Sequential calls before latency is measured, so that every contender's JIT has warmed up. */
const WARM_UP_CALLS = 200;
/** Sequential calls, over one connection, whose round trips give p50 and p99. */
const LATENCY_CALLS = 1_000;
/** Connections that send calls at once for throughput, the calls of one burst, and the bursts
 * a round sends. */
const CONNECTIONS = 64;
const BURST_CALLS = 20_000;
const BURSTS_PER_ROUND = 3;
/** Connections opened at once, each with one call, while the peak memory is read. */
const CROWD = 500;
/** The peak memory a server may reach under CROWD connections (issue 40). */
const MEMORY_LIMIT_MIB = 128;

/** Every figure of every contender, one value per round. */
const samples = new Samples<keyof Figures>();

/** The connections each contender's client opened, by "name/phase": a server that closes
 * keep-alive connections makes the client open more. */
const connections = new Map<string, number>();

// ---- I/O: the servers' processes and the client's connections ----

/** Writes a line of progress to stderr. */
function progress(text: string): void {
  process.stderr.write(`[bench http] ${text}\n`);
}

/** Starts a contender and waits until it listens. */
function launch(contender: Contender): Promise<Running> {
  return launchFile(contender.name, contender.file, contender.args);
}

/** Throws unless an answer is a 200 with the sum of add(a, 1) (the canned one, as it is). */
function check(contender: Contender, answer: Answer, a: number): void {
  const sum = contender.answers === "canned" ? "2 + 3 = 5" : `${a} + 1 = ${a + 1}`;
  const right = answer.status === 200 && answer.body.includes(`"text":"${sum}"`);
  if (!right) {
    const shown = `${answer.status} ${answer.body.slice(0, 500)}`;
    throw new Error(`${contender.name}: a wrong answer to add(${a}, 1): ${shown}`);
  }
}

/** Ends a client's connections and notes how many it opened. */
function close(contender: Contender, phase: string, used: Client): void {
  used.agent.destroy();
  const key = `${contender.name}/${phase}`;
  connections.set(key, Math.max(connections.get(key) ?? 0, used.sockets.size));
}

// ---- The measurements ----

/** Sequential round trips over one connection, after a warm-up: p50 and p99, in µs. */
async function latency(contender: Contender, url: URL): Promise<Partial<Figures>> {
  const one = client(1);
  const roundTrips: number[] = [];
  try {
    for (let call = 0; call < WARM_UP_CALLS + LATENCY_CALLS; call++) {
      const sent = process.hrtime.bigint();
      const answer = await post(url, one, callBody(call, call));
      const arrived = process.hrtime.bigint();
      check(contender, answer, call);
      if (call >= WARM_UP_CALLS) roundTrips.push(Number(arrived - sent) / 1e3);
    }
  } finally {
    close(contender, "sequential", one);
  }
  return { p50Us: percentile(roundTrips, 50), p99Us: percentile(roundTrips, 99) };
}

/** One burst: CONNECTIONS connections, each calling again once answered, until BURST_CALLS
 * calls are answered; calls per second. */
async function burst(contender: Contender, url: URL): Promise<number> {
  const pool = client(CONNECTIONS);
  let next = 0;
  const caller = async () => {
    while (next < BURST_CALLS) {
      const a = next++;
      check(contender, await post(url, pool, callBody(a, a)), a);
    }
  };
  try {
    const began = process.hrtime.bigint();
    await Promise.all(Array.from({ length: CONNECTIONS }, caller));
    const seconds = Number(process.hrtime.bigint() - began) / 1e9;
    return BURST_CALLS / seconds;
  } finally {
    close(contender, "concurrent", pool);
  }
}

/** Latency, then throughput (the median of a few bursts), from one process. */
async function calls(contender: Contender): Promise<Partial<Figures>> {
  const server = await launch(contender);
  try {
    const figures = await latency(contender, server.url);
    // One burst alone is noisy: each round takes the median of a few.
    const rates: number[] = [];
    for (let time = 0; time < BURSTS_PER_ROUND; time++) {
      rates.push(await burst(contender, server.url));
    }
    return { ...figures, callsPerSecond: median(rates) };
  } finally {
    await server.stop();
  }
}

/** A fresh process, CROWD connections at once, each with one call, all with id 1: the
 * server's peak resident memory once every answer has come. */
async function crowd(contender: Contender): Promise<Partial<Figures>> {
  const server = await launch(contender);
  const startMemoryBytes = highWaterMark(server.pid);
  const many = client(CROWD);
  try {
    const asked = Array.from({ length: CROWD }, (_, a) => post(server.url, many, callBody(1, a)));
    const answers = await Promise.all(asked);
    answers.forEach((answer, a) => check(contender, answer, a));
    return { startMemoryBytes, peakMemoryBytes: highWaterMark(server.pid) };
  } finally {
    close(contender, "crowd", many);
    await server.stop();
  }
}

// ---- Rounds, and the figures they gather ----

/** Runs every round: calls, then the crowd, for every contender in the round's order. */
async function runRounds(contenders: readonly Contender[]): Promise<void> {
  const began = Date.now();
  for (let round = 0; round < ROUNDS; round++) {
    const order = rotate(contenders, round);
    const elapsed = Math.round((Date.now() - began) / 1000);
    progress(`round ${round + 1}/${ROUNDS}: latency, throughput, ${CROWD} connections ` +
      `(${elapsed} s so far)`);
    for (const contender of order) samples.record(contender, await calls(contender));
    for (const contender of order) samples.record(contender, await crowd(contender));
  }
  progress(`done in ${Math.round((Date.now() - began) / 1000)} s`);
}

// ---- The report ----

/** The opening lines of the report: when, where, and what each figure is. */
function preamble(): string[] {
  return [
    "Streamable HTTP over keep-alive connections, `node --import tsx bench/http.ts`.",
    measuredOn(),
    "",
    `Every call is one POST of a ${PROTOCOL_VERSION} tools/call of add (the _meta envelope, ` +
      "MCP-Protocol-Version,",
    "Mcp-Method, Mcp-Name), the same to every server; the client is node:http with a keep-alive " +
      "Agent.",
    `p50 and p99: of ${decimal(LATENCY_CALLS, 0)} sequential calls over one connection, after ` +
      `${WARM_UP_CALLS} to warm up.`,
    `Throughput: ${CONNECTIONS} connections, each calling again once answered, until ` +
      `${decimal(BURST_CALLS, 0)} calls; the median of ${BURSTS_PER_ROUND} bursts.`,
    `Peak memory: VmHWM of a fresh process once ${CROWD} connections, opened at once, have each ` +
      "had one call answered;",
    "memory at start: its VmHWM once it listens, before any call.",
  ];
}

/** The contenders' table. */
function serverTable(ours: Contender, sdk: Contender, bare: Contender): string {
  const row = (contender: Contender, label: string) => {
    const figure = (name: keyof Figures) => median(samples.values(contender, name));
    return [
      label,
      bundleSize(contender.file),
      `${decimal(figure("p50Us"), 0)} µs`,
      `${decimal(figure("p99Us"), 0)} µs`,
      `${decimal(figure("callsPerSecond"), 0)}/s`,
      mebibytes(figure("startMemoryBytes")),
      mebibytes(figure("peakMemoryBytes")),
    ];
  };
  const sdkName = "@modelcontextprotocol/server";
  const rows = [
    row(ours, `${DIST_NAME}/server.mjs --http`),
    row(sdk, `SDK v2 createMcpHandler (${sdkName} ${installedVersion(sdkName)})`),
    row(bare, "bare node:http responder, no JSON (the limit)"),
  ];
  const header = ["Server", "Bundle (gzip)", "p50", "p99", `Throughput (${CONNECTIONS} conn.)`];
  return table([...header, "Memory at start", `Peak memory (${CROWD} conn.)`], rows);
}

/** The targets of issue 40; the bare responder scores each beside ours. */
function targets(ours: Contender, sdk: Contender, bare: Contender): string[][] {
  const calls = "callsPerSecond";
  const memory = samples.values(ours, "peakMemoryBytes");
  const peak = median(memory);
  const range = memory.map((bytes) => decimal(bytes / 2 ** 20, 1)).join(", ");
  const memoryRow = [
    `Server peak memory, ${CROWD} connections`, `at most ${MEMORY_LIMIT_MIB} MiB`,
    `${mebibytes(peak)} (rounds ${range})`,
    mebibytes(median(samples.values(bare, "peakMemoryBytes"))),
    peak <= MEMORY_LIMIT_MIB * 2 ** 20 ? "PASS" : "MISS",
  ];
  return [
    target("Server throughput / SDK v2's", "at least", 3,
      samples.ratio(ours, sdk, calls), samples.ratio(bare, sdk, calls)),
    target("Server throughput / bare responder's", "at least", 0.5,
      samples.ratio(ours, bare, calls), "itself"),
    target("Server p50 / SDK v2's", "at most", 0.5,
      samples.ratio(ours, sdk, "p50Us"), samples.ratio(bare, sdk, "p50Us")),
    memoryRow,
  ];
}

/** How many connections each client opened: more than asked for means a server closed some. */
function connectionsLine(contenders: readonly Contender[]): string {
  const phases = ["sequential", "concurrent", "crowd"];
  const counts = contenders.map((contender) => {
    const opened = phases.map((phase) => connections.get(`${contender.name}/${phase}`) ?? 0);
    return `${contender.name} ${opened.map((count) => decimal(count, 0)).join(" / ")}`;
  });
  return `Connections the client opened (at most, per run; sequential / concurrent / crowd, ` +
    `asked 1 / ${CONNECTIONS} / ${CROWD}): ${counts.join("; ")}.`;
}

/** Measures everything and prints the report. */
async function main(): Promise<void> {
  const server = serverUnderTest();
  progress("bundling SDK v2's HTTP server into bench/.build/");
  const ours: Contender = {
    name: "server.mjs", file: server, answers: "computed", args: ["--http", "127.0.0.1:0"],
  };
  const sdk: Contender = {
    name: "SDK v2", file: await bundleServer("sdk-v2-http-server"), answers: "computed", args: [],
  };
  await stopEsbuild();
  const bare: Contender = {
    name: "bare responder", file: join(root, "bench", "bare-http-responder.mjs"),
    answers: "canned", args: [],
  };
  await runRounds([ours, sdk, bare]);
  const report = [
    ...preamble(), "", serverTable(ours, sdk, bare), "", connectionsLine([ours, sdk, bare]), "",
    table(["Target", "Goal", "Measured", "Bare responder's score", ""], targets(ours, sdk, bare)),
  ];
  process.stdout.write(`\n${report.join("\n")}\n`);
}

process.on("SIGINT", () => process.exit(130));

process.exitCode = await main().then(() => 0, (error: unknown) => {
  progress(`failed: ${error instanceof Error ? error.message : String(error)}`);
  return 1;
});
