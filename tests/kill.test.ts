/**
 * A client may end wrap as abruptly as it likes, and the log still holds every line that
 * crossed. GitHub Copilot CLI ends a server with SIGTERM and then SIGKILL 0.7 ms later; a
 * SIGKILL alone leaves no time at all. Here a client does ROUND_TRIPS pings through
 * dist/wrap.mjs around dist/server.mjs, each answered, then kills wrap, RUNS times over: each
 * log must hold every `→` and `←` line, every time.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ask, serverPath, start, tempFolder, wrapPath } from "./helpers.ts";

/** Round trips a session makes before it is killed, and sessions a test kills. */
const ROUND_TRIPS = 51;
const RUNS = 20;

/** Forty sessions on a loaded two-core machine, with room to spare; none may hang the run. */
const LIMIT = { timeout: 120_000 };

/** The ping with an id, as a client sends it. */
function ping(id: number): string {
  return JSON.stringify({ jsonrpc: "2.0", id, method: "ping" });
}

/** Ends the server wrap started, if it still runs: a killed wrap cannot end it itself. */
function endServer(logPath: string): void {
  const text = existsSync(logPath) ? readFileSync(logPath, "utf8") : "";
  const pid = Number(/ # start pid (\d+): /.exec(text)?.[1] ?? 0);
  const command = pid > 0 ? `/proc/${pid}/cmdline` : "";
  // A pid is checked to be our server's before it is signalled: pids are reused.
  if (command !== "" && existsSync(command) && readFileSync(command, "utf8").includes(serverPath)) {
    process.kill(pid, "SIGKILL");
  }
}

/**
 * One session killed by `kill` after its round trips; resolves with the lines missing from
 * its log, in the form `→ 3` and `← 3`, none when the log is whole.
 */
async function killedSession(kill: (wrap: ChildProcessWithoutNullStreams) => void) {
  const logPath = join(tempFolder("kill-"), "wire.log");
  const wrap = start(process.execPath, [wrapPath, "--log", logPath, "--", process.execPath,
    serverPath]);
  try {
    for (let id = 1; id <= ROUND_TRIPS; id++) await ask(wrap.child, ping(id));
    kill(wrap.child);
    await wrap.finish;
    const events = readFileSync(logPath, "utf8").split("\n");
    const answer = (id: number) => JSON.stringify({ jsonrpc: "2.0", id, result: {} });
    return Array.from({ length: ROUND_TRIPS }, (_, index) => index + 1).flatMap((id) => [
      ...events.some((event) => event.endsWith(` → ${ping(id)}`)) ? [] : [`→ ${id}`],
      ...events.some((event) => / ← \(\d+\.\d ms\) /.test(event) && event.endsWith(answer(id)))
        ? [] : [`← ${id}`],
    ]);
  } finally {
    wrap.child.kill("SIGKILL");
    endServer(logPath);
  }
}

/** Runs RUNS killed sessions in turn; the runs that lost lines, with what each lost. */
async function lossesOver(kill: (wrap: ChildProcessWithoutNullStreams) => void) {
  const losses: string[] = [];
  for (let run = 1; run <= RUNS; run++) {
    const missing = await killedSession(kill);
    const first = missing.slice(0, 4).join(", ");
    if (missing.length > 0) losses.push(`run ${run} lost ${missing.length} lines: ${first}…`);
  }
  return losses;
}

test("SIGTERM and SIGKILL 1 ms later leave every line that crossed in the log, 20 runs of 20",
  LIMIT, async () => {
    const losses = await lossesOver((wrap) => {
      wrap.kill("SIGTERM");
      setTimeout(() => wrap.kill("SIGKILL"), 1);
    });
    assert.deepEqual(losses, []);
  });

test("a SIGKILL alone, 10 ms after the last response, leaves every line in the log, 20 runs of 20",
  LIMIT, async () => {
    const losses = await lossesOver((wrap) => {
      setTimeout(() => wrap.kill("SIGKILL"), 10);
    });
    assert.deepEqual(losses, []);
  });

/** A server that answers each request with a 20 KB result, one line bigger than a burst's chunk. */
const BIG_ANSWERS = "require('node:readline').createInterface({ input: process.stdin }).on('line', (line) =>" +
  " process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: JSON.parse(line).id," +
  " result: { text: 'x'.repeat(20000) } }) + '\\n'))";

test("a SIGKILL at once after a response of 20 KB, one line in one chunk, leaves it in the log", LIMIT, async () => {
  for (let run = 1; run <= 10; run++) {
    const logPath = join(tempFolder("kill-big-"), "wire.log");
    const wrap = start(process.execPath, [wrapPath, "--log", logPath, "--", process.execPath, "-e", BIG_ANSWERS]);
    try {
      for (let id = 1; id <= 3; id++) await ask(wrap.child, ping(id));
      wrap.child.kill("SIGKILL");
      await wrap.finish;
      const answers = readFileSync(logPath, "utf8").split("\n").filter((event) => / ← \(\d+\.\d ms\) /.test(event));
      assert.equal(answers.length, 3, `run ${run}: the log holds ${answers.length} of the 3 answers the client got`);
    } finally {
      wrap.child.kill("SIGKILL");
    }
  }
});
