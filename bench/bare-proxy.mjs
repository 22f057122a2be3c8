#!/usr/bin/env node
// bare-proxy.mjs — the limit for a stdio proxy: bare node that starts a command and
// pipes bytes both ways, logging nothing.
//
// Usage: node bench/bare-proxy.mjs -- COMMAND [ARGS...]   (the same CLI as dist/wrap.mjs)
//
// Our stdin goes to the command's stdin and its stdout to ours with `.pipe()`, which
// forwards each chunk as it comes and ends the far side at the end. Its stderr is ours.
// When our stdin ends, the command sees its stdin end; when it exits, we exit with its code.
import { spawn } from "node:child_process";
import { constants } from "node:os";
import process from "node:process";

const dashes = process.argv.indexOf("--");
const [command, ...args] = dashes === -1 ? [] : process.argv.slice(dashes + 1);
if (command === undefined) {
  process.stderr.write("Usage: node bench/bare-proxy.mjs -- COMMAND [ARGS...]\n");
  process.exit(2);
}

const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
process.stdin.pipe(child.stdin);
child.stdout.pipe(process.stdout);
// A client that hung up, or a command that stopped reading, ends the session: no error to report.
child.stdin.on("error", () => {});
process.stdout.on("error", () => child.kill());
child.on("error", (error) => {
  process.stderr.write(`bare-proxy: cannot start ${command}: ${error.message}\n`);
  process.exit(127);
});
// Our exit code is the command's, or 128 + the number of the signal that ended it, as shells report it.
child.on("exit", (code, signal) => {
  process.exitCode = signal === null ? (code ?? 1) : 128 + constants.signals[signal];
});
