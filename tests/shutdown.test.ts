/**
 * Shutdown is the client's: wrap waits for a server after the end of input, and ends it only
 * when the client is gone. Black-box over real pipes against dist/wrap.mjs.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { run, start, wrapPath, tempFolder } from "./helpers.ts";

/** A fresh log path. */
function logPath(): string {
  return join(tempFolder("shutdown-"), "wire.log");
}

test("a server that answers 3 s after the end of input gets its answer through and exits 0",
  { timeout: 20_000 }, async () => {
    const late = "process.stdin.resume(); process.stdin.on('end', () => setTimeout(() => " +
      "process.stdout.write('{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\\n'), 3000))";
    const { code, stdout } = await run(process.execPath,
      [wrapPath, "--log", logPath(), "--", process.execPath, "-e", late],
      '{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    assert.equal(code, 0);
    assert.equal(stdout, '{"jsonrpc":"2.0","id":1,"result":{}}\n');
  });

test("a slow reader gets every byte a server writes after the end of input, and exit 0",
  { timeout: 20_000 }, async () => {
    const writer = "process.stdin.resume(); process.stdin.on('end', () => " +
      "process.stdout.write('x'.repeat(4000000) + '\\n'))";
    const { child, finish } = start(process.execPath,
      [wrapPath, "--log", logPath(), "--", process.execPath, "-e", writer]);
    child.stdout.pause();
    child.stdin.end();
    // Nobody reads for 3 s: wrap must neither give up on the server nor drop what it wrote.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    child.stdout.resume();
    const { code, stdout } = await finish;
    assert.equal(code, 0);
    assert.equal(stdout.length, 4_000_001);
  });

test("a client that dies without a signal gets its server ended, and wrap exits",
  { timeout: 20_000 }, async (t) => {
    const log = logPath();
    // A client that starts wrap around a server that ignores the end of input, then is killed.
    const client = "const { spawn } = require('node:child_process');" +
      `const wrap = spawn(process.execPath, [${JSON.stringify(wrapPath)}, '--log', ` +
      `${JSON.stringify(log)}, '--', process.execPath, '-e', 'setInterval(() => {}, 1000)'],` +
      " { stdio: ['pipe', 'pipe', 'inherit'] }); console.error(wrap.pid);";
    const { child, errors } = start(process.execPath, ["-e", client]);
    while (!/\d+\n/.test(errors())) await new Promise((resolve) => setTimeout(resolve, 20));
    const wrapPid = Number(errors().trim());
    // An exited wrap is a zombie until init reaps it, which here can take seconds: signal 0
    // still finds a zombie, and Linux's /proc tells it (state Z) from a running process.
    const alive = () => {
      try {
        process.kill(wrapPid, 0);
      } catch {
        return false;
      }
      let stat = "";
      try {
        stat = readFileSync(`/proc/${wrapPid}/stat`, "utf8");
      } catch {
        // No /proc (not Linux), or reaped just now: signal 0 is the answer, and the next look.
      }
      return /\) (\S)/.exec(stat)?.[1] !== "Z";
    };
    // wrap is no child of ours: should it outlive the check below, it is ended here, and it
    // passes the SIGTERM on to its server.
    t.after(() => {
      if (alive()) process.kill(wrapPid, "SIGTERM");
    });
    // wrap learns its parent as it starts: the client dies once wrap has started its server,
    // which on a loaded machine can take longer than any fixed wait.
    const started = () => existsSync(log) && readFileSync(log, "utf8").includes("# start pid");
    while (!started()) await new Promise((resolve) => setTimeout(resolve, 20));
    child.kill("SIGKILL");
    const began = Date.now();
    while (alive() && Date.now() - began < 10_000) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(alive(), false, "wrap is still running");
    const notes = readFileSync(log, "utf8");
    assert.match(notes, /# the client is gone: its pid \d+ exited: sending SIGTERM\n/);
    assert.match(notes, /# exit signal SIGTERM\n$/);
  });
