/**
 * wrap in a real terminal: util-linux's `script` runs it under a pseudo-terminal, as a person
 * trying wrap by hand does, with stdout a TTY. wrap must exit with the server's status, the
 * code or 128 + the signal's number, there as through a pipe. A terminal's stdout never emits
 * "finish", so a wrap that waits for it exits 0, late, whatever the server did.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { track, wrapPath, tempFolder } from "./helpers.ts";

/** A server as a line of shell: node running one line of JavaScript. */
function server(script: string): string {
  return `${process.execPath} -e "${script}"`;
}

/** Runs wrap around a server under a pseudo-terminal, and resolves with wrap's exit status as
 * the terminal saw it. With `typed`, that text is typed into the terminal once wrap has started
 * the server; without, wrap's stdin is /dev/null, so the input ends at once. */
async function inTerminal(serverLine: string, typed?: string): Promise<number | null> {
  const logPath = join(tempFolder("pty-"), "wire.log");
  const redirect = typed === undefined ? " </dev/null" : "";
  const line = `${process.execPath} ${wrapPath} --log ${logPath} -- ${serverLine}${redirect}`;
  // -e: script exits with the status of the command it ran; -q: no banner; -f: flush at once.
  const terminal = track(spawn("script", ["-qefc", line, "/dev/null"], { stdio: ["pipe", "pipe", "pipe"] }));
  terminal.stdout.resume();
  terminal.stderr.resume();
  if (typed !== undefined) {
    while (!readFileSync(logPath, { flag: "a+", encoding: "utf8" }).includes("# start pid")) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    terminal.stdin.write(typed);
  }
  const [code] = await once(terminal, "exit");
  return code;
}

test("in a terminal, wrap exits 0 when the server does", { timeout: 20_000 }, async () => {
  assert.equal(await inTerminal(server("setTimeout(()=>process.exit(0),300)")), 0);
});

test("in a terminal, wrap exits 3 when the server exits 3", { timeout: 20_000 }, async () => {
  assert.equal(await inTerminal(server("setTimeout(()=>process.exit(3),300)")), 3);
});

test("in a terminal, wrap exits 137 when the server is killed with SIGKILL", { timeout: 20_000 }, async () => {
  const killed = server("setTimeout(()=>process.kill(process.pid,'SIGKILL'),300)");
  assert.equal(await inTerminal(killed), 137);
});

test("Ctrl+C typed into the terminal ends wrap and its server with 130", { timeout: 20_000 }, async () => {
  // The terminal turns Ctrl+C into SIGINT for wrap and the server alike; 130 is 128 + 2.
  assert.equal(await inTerminal(server("setInterval(()=>{},1000)"), "\x03"), 130);
});
