/**
 * bench/server-stress.ts — the server's memory under input meant to make it grow, a figure per
 * case, side by side with an earlier build when one is given. Not a test: it prints figures.
 *
 * Cases, each in a fresh process, peak resident memory (VmHWM) read once the last answer is in:
 * - logged errors, stderr unread: 1,000,000 responses that no request waits for, each of which
 *   the server logs, while nobody reads its stderr; then a ping, whose answer ends the case;
 * - big results: 600 pipelined calls of a tool that returns 1 MiB, read as they come.
 *
 * Usage: npm run build && node --import tsx bench/server-stress.ts [EARLIER/server.mjs]
 *   An earlier build is one command away, as dist/ is committed:
 *     base=$(mktemp -d) && git show REV:dist/server.mjs > "$base/server.mjs"
 *   (the big-results case needs server.ts's own source, so it runs for this build only)
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { bundle } from "../build.mjs";
import { withEntries } from "../tests/helpers.ts";

/** The project's root folder. */
const root = join(import.meta.dirname, "..");

/** How many responses nobody asked for, each logged, in the first case. */
const LOGGED = 1_000_000;

/** A tool whose result is one mebibyte of text, pasted into a copy of server.ts. */
const BIG_TOOL = `  {
    name: "big",
    description: "Return a mebibyte of text",
    inputSchema: { type: "object", properties: {} },
    handler: () => toolResult("x".repeat(1024 * 1024), false),
  },`;

/** Every server this script started: none outlives it, whatever happens. */
const started = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of started) child.kill("SIGKILL");
});

/** Starts a server, remembered for the end. */
function startServer(server: string, stderr: "pipe" | "ignore"): ChildProcess {
  const child = spawn(process.execPath, [server], { stdio: ["pipe", "pipe", stderr] });
  started.add(child);
  return child;
}

/** A process's peak resident memory, in MiB, from /proc. */
function peakMiB(child: ChildProcess): number {
  const status = readFileSync(`/proc/${child.pid}/status`, "utf8");
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN) / 1024;
}

/** Resolves once a line of stdout includes `text`. */
function answered(child: ChildProcess, text: string): Promise<void> {
  return new Promise((resolve) => {
    let tail = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      const seen = tail + chunk.toString("latin1");
      if (seen.includes(text)) resolve();
      tail = seen.slice(-text.length);
    });
  });
}

/** The first case: a million logged errors while nobody reads stderr. */
async function loggedErrors(server: string): Promise<number> {
  const child = startServer(server, "pipe");
  child.stderr?.pause();
  const pong = answered(child, '"id":"end"');
  const line = '{"jsonrpc":"2.0","id":"nobody","result":{}}\n';
  for (let sent = 0; sent < LOGGED; sent += 10_000) {
    if (child.stdin?.write(line.repeat(10_000)) === false) await once(child.stdin, "drain");
  }
  child.stdin?.write('{"jsonrpc":"2.0","id":"end","method":"ping"}\n');
  await pong;
  const peak = peakMiB(child);
  child.kill();
  return peak;
}

/** The second case: 600 pipelined results of 1 MiB, read as they come. */
async function bigResults(server: string): Promise<number> {
  const child = startServer(server, "ignore");
  const last = answered(child, '"id":599,');
  const call = (id: number) =>
    `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"big","arguments":{}}}\n`;
  child.stdin?.write(Array.from({ length: 600 }, (_, id) => call(id)).join(""));
  await last;
  const peak = peakMiB(child);
  child.kill();
  return peak;
}

/** server.ts with the big tool, built into a temporary folder; removed by the caller. */
async function buildBig(folder: string): Promise<string> {
  const source = withEntries(readFileSync(join(root, "server.ts"), "utf8"), [BIG_TOOL], "");
  writeFileSync(join(folder, "server.ts"), source);
  await bundle(join(folder, "server.ts"), join(folder, "server.mjs"));
  return join(folder, "server.mjs");
}

const earlier = process.argv[2];
const folder = mkdtempSync(join(tmpdir(), "server-stress-"));
try {
  const rows = [["dist/server.mjs", await loggedErrors(join(root, "dist", "server.mjs"))]];
  if (earlier !== undefined) rows.push([earlier, await loggedErrors(earlier)]);
  console.log(`Peak memory, ${LOGGED.toLocaleString("en")} logged errors with stderr unread:`);
  for (const [name, peak] of rows) console.log(`  ${name}: ${Number(peak).toFixed(1)} MiB`);
  const big = await bigResults(await buildBig(folder));
  console.log(`Peak memory, 600 pipelined results of 1 MiB (server.ts): ${big.toFixed(1)} MiB`);
} finally {
  rmSync(folder, { recursive: true, force: true });
}
