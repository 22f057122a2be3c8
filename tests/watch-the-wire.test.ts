/**
 * The commands that record a log, in README's "Watch the wire with wrap" and in
 * docs/wire-log.md, run as written in a copy of the clone: each must work, and the log it
 * leaves must be the one the document shows, with the times, the round-trip times, the pid
 * and the clone's path masked. The server's stderr (`!`) is a pipe of its own, so its lines
 * are compared apart from the rest. (readme.test.ts records each shown log again through
 * wrap, and runs each reader on it; this checks the reader's own command.)
 */
import { before, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { documentText, fences } from "./documents.ts";
import { cloneCopy, lines } from "./helpers.ts";

/** A line of wire.log: an ISO-8601 UTC time, a mark, and the text. */
const LOG_LINE = /^\S+ ([→←!#]) /;

/** The recording commands: the document, and the log its command writes, as the document names it. */
const RECORDINGS = [
  { file: "README.md", log: "dist/wire.log" },
  { file: "README.ja.md", log: "dist/wire.log" },
  { file: "docs/wire-log.md", log: "session.log" },
  { file: "docs/wire-log.md", log: "polluted.log" },
];

/** A log line with what changes from run to run masked. */
function masked(line: string, copy: string): string {
  return line
    .replaceAll(`${copy}/`, "/absolute/path/")
    .replace(/^\S+ /, "<time> ")
    .replace(/^<time> ([←→]) \(\d+\.\d ms\) /, "<time> $1 (<ms>) ")
    .replace(/^<time> # start pid \d+: \S*node /, "<time> # start pid <pid>: node ");
}

/** The lines of a log, masked, the stderr lines apart from the rest. */
function streams(log: readonly string[], copy: string): { events: string[]; stderr: string[] } {
  const stderr = (line: string) => LOG_LINE.exec(line)?.[1] === "!";
  return {
    events: log.filter((line) => !stderr(line)).map((line) => masked(line, copy)),
    stderr: log.filter(stderr).map((line) => masked(line, copy)),
  };
}

let copy = "";

before(() => {
  copy = cloneCopy();
});

for (const { file, log } of RECORDINGS) {
  test(`${file}'s command that writes ${log} works as written, and leaves the log it shows`, { timeout: 30_000 }, () => {
    const blocks = fences(documentText(file));
    const shown = blocks.find((fence) => fence.info === `text ${log}`);
    assert.ok(shown !== undefined, `${file} shows no \`\`\`text ${log} block`);
    const logged = log === "dist/wire.log" ? "| node dist/wrap.mjs\n" : `--log ${log}`;
    const commands = blocks.find((fence) => fence.info === "sh" && `${fence.body.join("\n")}\n`.includes(logged));
    assert.ok(commands !== undefined, `${file} has no command that writes ${log}`);
    // The block's commands, run as a reader pastes them; `cat` only prints what is checked below.
    const script = commands.body.filter((line) => !line.startsWith("cat ")).join("\n");
    // A limit, since a command that hangs would hold the whole file (spawnSync blocks the loop).
    const ran = spawnSync("sh", ["-c", script], { cwd: copy, encoding: "utf8", timeout: 60_000 });
    assert.equal(ran.status, 0, ran.stderr);
    const real = lines(readFileSync(join(copy, log), "utf8"));
    const expected = streams(shown.body.filter((line) => line !== ""), copy);
    assert.deepEqual(streams(real, copy), expected);
    spawnSync("rm", ["-f", log], { cwd: copy });
  });
}
