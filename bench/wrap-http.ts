/**
 * bench/wrap-http.ts — the fourth part of `npm run bench`: wrap over Streamable HTTP, in front of
 * `dist/server.mjs --http`, beside a bare node:http reverse proxy that logs nothing and beside
 * no proxy at all, on this machine, now.
 *
 * Three paths to the same upstream, a fresh `node dist/server.mjs --http 127.0.0.1:0` each
 * round: direct (no proxy), the bare proxy (bench/bare-http-proxy.mjs, the floor: it streams
 * both ways and does nothing else; it reaches the upstream through node:http's default agent,
 * as wrap does, so that neither has a warmer pool), and
 * `node dist/wrap.mjs --log FILE --listen 127.0.0.1:0 URL`, which records every exchange. Each
 * proxy names its endpoint in one stderr line, the one that says "listening on". Every call is
 * the 2026-07-28 tools/call of `add` that bench/http.ts sends, from a node:http client over
 * keep-alive connections:
 * - latency: over one connection, after a warm-up, sequential round trips, p50 and p99; what a
 *   proxy adds is its p50 less the direct p50 of the same round;
 * - a burst: CONNECTIONS calls in flight, each connection calling again once answered, until
 *   BURST_CALLS calls are answered; the time to the last answer, the median of a few bursts;
 * - events: one POST to bench/event-upstream.mjs, which answers with an event stream of EVENTS
 *   events, one a millisecond, each carrying the time it was written on the clock every process
 *   shares (performance.timeOrigin + performance.now()); the client takes each event's arrival
 *   less that time, so a proxy's share is what it adds to the direct figure. p50 and p99.
 * Every answer is checked: HTTP 200 and the right sum; every event arrives, in order.
 *
 * The paths run interleaved, as in bench/http.ts: each round runs every path in turn, starting
 * from a different one each round. A figure is the median over rounds.
 *
 * Usage: npm run build && node --import tsx bench/wrap-http.ts
 *   BENCH_RUNS=N      rounds (5 by default)
 *   BENCH_DIST=DIR    measure DIR/server.mjs and DIR/wrap.mjs instead of dist/
 *   BENCH_WRAP=FILE   measure FILE as wrap (another build of wrap.mjs)
 * Markdown goes to stdout and progress to stderr. The exit code is 1 only when a path fails to
 * run or answers wrongly; a missed target is a finding, not a failure.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import process from "node:process";
import {
  DIST, DIST_NAME, ROUNDS, Samples, bundleSize, decimal, measuredOn, median, percentile, root,
  rotate, serverUnderTest, table, target, type Ratio,
} from "./figures.ts";
import {
  TIMEOUT_MS, callBody, client, launch, post, type Answer, type Running,
} from "./http-client.ts";

/** A path to the upstream: none (direct), or a proxy started as `node file ...args URL`. */
interface Path {
  name: string;
  file: string | undefined;
  args: (log: string) => string[];
}

/** One round's figures for one path. */
interface Figures {
  p50Us: number;
  p99Us: number;
  burstMs: number;
  eventP50Ms: number;
  eventP99Ms: number;
}

/** Sequential calls before latency is measured, then the calls that are. */
const WARM_UP_CALLS = 200;
const LATENCY_CALLS = 1_000;
/** Calls in flight in a burst, the calls of one burst, and the bursts a round sends. */
const CONNECTIONS = 64;
const BURST_CALLS = 20_000;
const BURSTS_PER_ROUND = 3;
/** Events the upstream sends on one stream, one each EVENT_EVERY_MS; the first
 * WARM_UP_EVENTS are not counted. */
const EVENTS = 1_100;
const WARM_UP_EVENTS = 100;
const EVENT_EVERY_MS = 1;
/** The targets of issue 42: wrap's added p50 and its time to a burst's last answer over the
 * bare proxy's, and what wrap adds to the p99 of how long an event takes to arrive. */
const ADDED_P50_LIMIT = 1.3;
const BURST_LIMIT = 1.1;
const EVENT_LIMIT_MS = 1;

/** The line a proxy prints once it listens (issue 42's contract for wrap --listen). */
const LISTENING = /listening on (http:\/\/\S+?\/mcp)\b/;

/** Every figure of every path, one value per round. */
const samples = new Samples<keyof Figures>();

/** wrap, as measured: BENCH_WRAP, or the build's. */
const WRAP = resolve(root, process.env.BENCH_WRAP ?? join(DIST, "wrap.mjs"));

// ---- I/O ----

/** Writes a line of progress to stderr. */
function progress(text: string): void {
  process.stderr.write(`[bench wrap-http] ${text}\n`);
}

/** The time now, in ms, on the clock bench/event-upstream.mjs stamps its events with. */
function now(): number {
  return performance.timeOrigin + performance.now();
}

/** Starts a path in front of an upstream; direct is the upstream itself. */
async function open(path: Path, upstream: Running, log: string): Promise<Running> {
  if (path.file === undefined) return { ...upstream, stop: async () => {} };
  return launch(path.name, path.file, [...path.args(log), upstream.url.href], LISTENING);
}

/** Throws unless an answer is a 200 with the sum of add(a, 1). */
function check(path: Path, answer: Answer, a: number): void {
  const right = answer.status === 200 && answer.body.includes(`"text":"${a} + 1 = ${a + 1}"`);
  if (!right) {
    const shown = `${answer.status} ${answer.body.slice(0, 500)}`;
    throw new Error(`${path.name}: a wrong answer to add(${a}, 1): ${shown}`);
  }
}

// ---- The measurements ----

/** Sequential round trips over one connection, after a warm-up: p50 and p99, in µs. */
async function latency(path: Path, url: URL): Promise<Partial<Figures>> {
  const one = client(1);
  const roundTrips: number[] = [];
  try {
    for (let call = 0; call < WARM_UP_CALLS + LATENCY_CALLS; call++) {
      const sent = process.hrtime.bigint();
      const answer = await post(url, one, callBody(call, call));
      const arrived = process.hrtime.bigint();
      check(path, answer, call);
      if (call >= WARM_UP_CALLS) roundTrips.push(Number(arrived - sent) / 1e3);
    }
  } finally {
    one.agent.destroy();
  }
  return { p50Us: percentile(roundTrips, 50), p99Us: percentile(roundTrips, 99) };
}

/** One burst: CONNECTIONS calls in flight until BURST_CALLS are answered; the time to the last
 * answer, in ms. */
async function burst(path: Path, url: URL): Promise<number> {
  const pool = client(CONNECTIONS);
  let next = 0;
  const caller = async () => {
    while (next < BURST_CALLS) {
      const a = next++;
      check(path, await post(url, pool, callBody(a, a)), a);
    }
  };
  try {
    const began = process.hrtime.bigint();
    await Promise.all(Array.from({ length: CONNECTIONS }, caller));
    return Number(process.hrtime.bigint() - began) / 1e6;
  } finally {
    pool.agent.destroy();
  }
}

/** The `sentAt` of each event of an event stream's text, up to its last whole event. */
function sentTimes(text: string): { times: number[]; rest: string } {
  const events = text.split("\n\n");
  const rest = events.pop() ?? "";
  const times = events.flatMap((event) => {
    const message: unknown = JSON.parse(/^data: (.*)$/m.exec(event)?.[1] ?? "{}");
    const params = typeof message === "object" && message !== null && "params" in message ?
      message.params : undefined;
    const sentAt = typeof params === "object" && params !== null && "sentAt" in params ?
      params.sentAt : undefined;
    return typeof sentAt === "number" ? [sentAt] : [];
  });
  return { times, rest };
}

/** One POST whose answer is a stream of EVENTS events: each one's arrival less its sending,
 * in ms, as the chunk that completes it is read. */
function events(url: URL): Promise<number[]> {
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call",
    params: { name: "events", arguments: {}, count: EVENTS, everyMs: EVENT_EVERY_MS } });
  const headers = { "Content-Type": "application/json",
    Accept: "application/json, text/event-stream" };
  return new Promise((resolve, reject) => {
    const sent = httpRequest(url, { method: "POST", headers, timeout: TIMEOUT_MS }, (response) => {
      const delays: number[] = [];
      let held = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        const arrived = now();
        const { times, rest } = sentTimes(held + chunk);
        held = rest;
        for (const sentAt of times) delays.push(arrived - sentAt);
      });
      response.on("end", () => resolve(delays));
      response.on("error", reject);
    });
    sent.on("timeout", () => sent.destroy(new Error(`no answer within ${TIMEOUT_MS / 1000} s`)));
    sent.on("error", reject);
    sent.end(body);
  });
}

/** Latency, then bursts, through a path to a calling upstream; then events, through the same
 * path to an event upstream. */
async function measure(path: Path, upstreams: Running[], logs: string): Promise<Partial<Figures>> {
  const [calling, streaming] = upstreams;
  if (calling === undefined || streaming === undefined) throw new Error("no upstream");
  mkdirSync(logs, { recursive: true });
  const proxy = await open(path, calling, join(logs, "calls.log"));
  const figures: Partial<Figures> = {};
  try {
    Object.assign(figures, await latency(path, proxy.url));
    const times: number[] = [];
    for (let time = 0; time < BURSTS_PER_ROUND; time++) times.push(await burst(path, proxy.url));
    figures.burstMs = median(times);
  } finally {
    await proxy.stop();
  }
  const eventProxy = await open(path, streaming, join(logs, "events.log"));
  try {
    const delays = await events(eventProxy.url);
    if (delays.length !== EVENTS) throw new Error(`${path.name}: ${delays.length} events came`);
    const counted = delays.slice(WARM_UP_EVENTS);
    return { ...figures, eventP50Ms: percentile(counted, 50), eventP99Ms: percentile(counted, 99) };
  } finally {
    await eventProxy.stop();
    rmSync(logs, { recursive: true, force: true });
  }
}

/** Runs every round: fresh upstreams, then every path in the round's order. */
async function runRounds(paths: readonly Path[], server: string, logs: string): Promise<void> {
  const began = Date.now();
  const eventUpstream = join(root, "bench", "event-upstream.mjs");
  for (let round = 0; round < ROUNDS; round++) {
    const elapsed = Math.round((Date.now() - began) / 1000);
    progress(`round ${round + 1}/${ROUNDS}: latency, bursts, events (${elapsed} s so far)`);
    const upstreams = [await launch("server.mjs", server, ["--http", "127.0.0.1:0"]),
      await launch("event upstream", eventUpstream, [])];
    try {
      for (const path of rotate(paths, round)) {
        samples.record(path, await measure(path, upstreams, join(logs, `${path.name}-${round}`)));
      }
    } finally {
      for (const upstream of upstreams) await upstream.stop();
    }
  }
  progress(`done in ${Math.round((Date.now() - began) / 1000)} s`);
}

// ---- The report ----

/** The opening lines of the report: when, where, and what each figure is. */
function preamble(): string[] {
  return [
    "wrap over Streamable HTTP, `node --import tsx bench/wrap-http.ts`.",
    measuredOn(),
    "",
    `Upstream: a fresh \`${DIST_NAME}/server.mjs --http 127.0.0.1:0\` each round, the same to ` +
      "every path; the calls are bench/http.ts's.",
    `p50 and p99: of ${decimal(LATENCY_CALLS, 0)} sequential calls over one connection, after ` +
      `${WARM_UP_CALLS} to warm up; added p50: less the direct p50 of the round.`,
    "Towards the upstream both proxies use node:http's default agent (http.globalAgent: " +
      "keep-alive, Nagle off, an idle socket closed after 5 s); towards the client, node:http's " +
      "server defaults (Nagle off, keep-alive).",
    `Burst: ${CONNECTIONS} calls in flight until ${decimal(BURST_CALLS, 0)} are answered, the ` +
      `time to the last answer; the median of ${BURSTS_PER_ROUND} bursts.`,
    `Events: one stream of ${decimal(EVENTS, 0)} events from bench/event-upstream.mjs, one ` +
      `each ${EVENT_EVERY_MS} ms; arrival less sending, the first ${WARM_UP_EVENTS} not counted.`,
  ];
}

/** A figure's median over rounds, as a cell. */
function cell(path: Path, figure: keyof Figures, unit: "µs" | "ms", digits = 0): string {
  return `${decimal(median(samples.values(path, figure)), digits)} ${unit}`;
}

/** The paths' table. */
function pathTable(direct: Path, bare: Path, wrap: Path): string {
  const added = (path: Path) => {
    return `+${decimal(median(samples.differences(path, direct, "p50Us")), 0)} µs`;
  };
  const row = (path: Path, label: string, size: string, plus: string) => [label, size,
    cell(path, "p50Us", "µs"), plus, cell(path, "p99Us", "µs"), cell(path, "burstMs", "ms"),
    cell(path, "eventP50Ms", "ms", 3), cell(path, "eventP99Ms", "ms", 3)];
  const wrapLabel = `${relative(root, WRAP)} --log FILE --listen 127.0.0.1:0 URL`;
  const rows = [
    row(direct, `none: ${DIST_NAME}/server.mjs --http directly`, "—", "—"),
    row(bare, "bare node:http proxy, logs nothing (the floor)", bundleSize(bare.file ?? ""),
      added(bare)),
    row(wrap, wrapLabel, bundleSize(WRAP), added(wrap)),
  ];
  const burstName = `Last of ${decimal(BURST_CALLS, 0)} (${CONNECTIONS} in flight)`;
  const header = ["Path", "Bundle (gzip)", "p50", "Added p50", "p99", burstName];
  return table([...header, "Event p50", "Event p99"], rows);
}

/** The targets of issue 42; the bare proxy scores each beside wrap. */
function targets(direct: Path, bare: Path, wrap: Path): string[][] {
  const byWrap = median(samples.differences(wrap, direct, "p50Us"));
  const byBare = median(samples.differences(bare, direct, "p50Us"));
  // A ratio of medians: within one round the bare proxy's few added µs can come out near zero
  // or below, and a ratio to that means nothing.
  const added: Ratio = { value: byWrap / byBare,
    detail: `+${decimal(byWrap, 0)} µs / +${decimal(byBare, 0)} µs` };
  // The time from an event's arrival at wrap to its passing on, seen from outside: what wrap
  // adds to the direct p99 in the same round (the machine's own delays are in both).
  const addedP99 = samples.differences(wrap, direct, "eventP99Ms");
  const wrapEvent = median(addedP99);
  const bareEvent = median(samples.differences(bare, direct, "eventP99Ms"));
  const eventRow = [
    "Wrap added event p99 (arrival less sending)", `at most ${EVENT_LIMIT_MS} ms`,
    `+${decimal(wrapEvent, 3)} ms (rounds ${addedP99.map((ms) => decimal(ms, 3)).join(", ")})`,
    `+${decimal(bareEvent, 3)} ms`, wrapEvent <= EVENT_LIMIT_MS ? "PASS" : "MISS",
  ];
  return [
    target("Wrap added p50 / bare proxy's", "at most", ADDED_P50_LIMIT, added, "itself"),
    target(`Wrap time to the last of ${decimal(BURST_CALLS, 0)} / bare proxy's`, "at most",
      BURST_LIMIT, samples.ratio(wrap, bare, "burstMs"), "itself"),
    eventRow,
  ];
}

/** Measures everything and prints the report. */
async function main(): Promise<void> {
  const server = serverUnderTest();
  const direct: Path = { name: "direct", file: undefined, args: () => [] };
  const bare: Path = { name: "bare proxy", file: join(root, "bench", "bare-http-proxy.mjs"),
    args: () => ["--listen", "127.0.0.1:0"] };
  const wrap: Path = { name: "wrap", file: WRAP,
    args: (log) => ["--log", log, "--listen", "127.0.0.1:0"] };
  const logs = mkdtempSync(join(tmpdir(), "bench-wrap-http-"));
  try {
    await runRounds([direct, bare, wrap], server, logs);
  } finally {
    rmSync(logs, { recursive: true, force: true });
  }
  const report = [
    ...preamble(), "", pathTable(direct, bare, wrap), "",
    table(["Target", "Goal", "Measured", "Bare proxy's score", ""], targets(direct, bare, wrap)),
  ];
  process.stdout.write(`\n${report.join("\n")}\n`);
}

process.on("SIGINT", () => process.exit(130));

process.exitCode = await main().then(() => 0, (error: unknown) => {
  progress(`failed: ${error instanceof Error ? error.message : String(error)}`);
  return 1;
});
