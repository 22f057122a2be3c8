/**
 * The log format is defined once (wrap.ts, "The log format"): the tap writes a line's tags in
 * the order of TAGS, and every reader reads them back. Here dist/wrap.mjs records every
 * combination of tags it can write, each on a batch line of its own, and show, stats, diagram
 * and replay must each read every message of every line: none may take a tag for the start of
 * the line's text. Each side's lines carry all six tags. (tests/hostile.test.ts has lines that
 * only look like notes.)
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { lines, mermaidBlocks, run, tempFolder, wrapPath } from "./helpers.ts";

/** A line's tags, in the log's order. */
const TAGS = ["bytes", "not UTF-8", "CRLF", "no request", "id in use", "not JSON-RPC"] as const;

/** A server that writes the prepared lines at its start and keeps what it reads in a file. */
const SERVER = String.raw`
const fs = require("node:fs");
process.stdout.write(fs.readFileSync(process.argv[1]));
process.stdin.pipe(fs.createWriteStream(process.argv[2]));`;

/** One crafted line: its bytes, the tags it must get, and how many messages it holds. */
type Crafted = { bytes: Buffer; tags: string[]; messages: number };

/**
 * A batch line whose tags are `tags`, sent `from` the client (→) or the server (←): a
 * notification, then a value that is no message, a request whose id waits, a response to
 * nothing, as the tags ask; bytes that are not UTF-8 in the notification, a CRLF at the end,
 * and enough padding to be over 1 MiB.
 */
function crafted(from: "→" | "←", tags: readonly string[], index: number): Crafted {
  const has = (tag: string) => tags.includes(tag);
  const side = from === "→" ? "client" : "server";
  const pad = has("bytes") ? "x".repeat(1_048_600) : "";
  const notification = `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"${side} ${index} ${pad}`;
  // In the reverse of the tags' order: the tap meets them so, and must write them in order.
  const entries = [
    ...has("not JSON-RPC") ? ['{"debug":true}'] : [],
    ...has("id in use") ? [`{"jsonrpc":"2.0","id":"held-${side}","method":"ping"}`] : [],
    ...has("no request") ? [`{"jsonrpc":"2.0","id":"stray-${side}-${index}","result":{}}`] : [],
  ];
  const bytes = Buffer.concat([Buffer.from(`[${notification}`), Buffer.from(has("not UTF-8") ? [0xff] : []),
    Buffer.from(`"}}${entries.map((entry) => `,${entry}`).join("")}]${has("CRLF") ? "\r" : ""}`)]);
  const shown = tags.map((tag) => (tag === "bytes" ? `${bytes.length} bytes` : tag));
  return { bytes, tags: shown, messages: 1 + entries.length };
}

/** Every subset of some tags, each in the order they are given. */
function subsets(tags: readonly string[]): string[][] {
  return tags.reduce<string[][]>((all, tag) => [...all, ...all.map((subset) => [...subset, tag])], [[]]);
}

/** The first line from each side: a request whose id stays in use, so that later ones say so. */
const OPENING = { "→": '{"jsonrpc":"2.0","id":"held-client","method":"ping"}', "←": '{"jsonrpc":"2.0","id":"held-server","method":"ping"}' };

/** The client's lines and the server's, each with every combination of its tags. */
function session() {
  const client = subsets(TAGS).map((tags, index) => crafted("→", tags, index));
  const server = subsets(TAGS).map((tags, index) => crafted("←", tags, index));
  const join = (opening: string, all: Crafted[]) => Buffer.concat([Buffer.from(`${opening}\n`), ...all.flatMap((line) => [line.bytes, Buffer.from("\n")])]);
  return { client, server, input: join(OPENING["→"], client), output: join(OPENING["←"], server) };
}

/** A folder with the server's script and its lines, and the session those lines make. */
function recordingSetup() {
  const folder = tempFolder("format-");
  const crafted = session();
  writeFileSync(join(folder, "server.js"), SERVER);
  writeFileSync(join(folder, "output"), crafted.output);
  const server = (copy: string) => [process.execPath, "-e", SERVER, join(folder, "output"), join(folder, copy)];
  return { folder, crafted, server, logPath: join(folder, "wire.log") };
}

/** Runs a reader of dist/wrap.mjs, stdout a pipe and no colour. */
function reader(...args: string[]) {
  return run(process.execPath, [wrapPath, ...args], "", { env: { ...process.env, NO_COLOR: "" } });
}

test("every combination of tags is written in the format's order, and every reader reads each line whole", { timeout: 120_000 }, async () => {
  const { folder, crafted, server, logPath } = recordingSetup();
  const recorded = await run(process.execPath, [wrapPath, "--log", logPath, "--", ...server("recorded")], crafted.input);
  assert.equal(recorded.code, 0);
  const log = readFileSync(logPath, "utf8").split("\n");
  for (const [mark, all] of [["→", crafted.client], ["←", crafted.server]] as const) {
    for (const line of all) {
      const prefix = ` ${mark} ${line.tags.map((tag) => `[${tag}] `).join("")}[{`;
      const marker = `"data":"${mark === "→" ? "client" : "server"} ${all.indexOf(line)} `;
      assert.ok(log.some((event) => event.includes(prefix) && event.includes(marker)), `${mark} ${line.tags.join(", ")}`);
    }
  }
  const messages = (all: Crafted[]) => 1 + all.reduce((sum, line) => sum + line.messages, 0);
  const others = (all: Crafted[]) => all.filter((line) => line.tags.includes("not JSON-RPC")).length;

  // show: one line per message, the tags before it.
  const shown = lines((await reader("show", "--no-redact", logPath)).stdout);
  assert.equal(shown.filter((line) => /^\S+ → /.test(line)).length, messages(crafted.client));
  assert.equal(shown.filter((line) => /^\S+ ← /.test(line)).length, messages(crafted.server));

  // stats: every message counted, and every tag as often as a line carries it.
  const [figures] = JSON.parse((await reader("stats", "--json", logPath)).stdout).sessions;
  assert.equal(figures.messages["→"].count, messages(crafted.client) - others(crafted.client));
  assert.equal(figures.messages["←"].count, messages(crafted.server) - others(crafted.server));
  const half = (tag: string, all: Crafted[]) => all.filter((line) => line.tags.some((each) => each === tag || (tag === "over 1 MiB" && each.endsWith(" bytes")))).length;
  for (const tag of ["over 1 MiB", "not UTF-8", "CRLF", "no request", "id in use", "not JSON-RPC"]) {
    assert.equal(figures.tags[tag], half(tag, crafted.client) + half(tag, crafted.server), tag);
  }

  // diagram: an arrow per message, and a note per tag.
  const drawn = mermaidBlocks((await reader("diagram", "--no-redact", logPath)).stdout).join("\n").split("\n");
  assert.equal(drawn.filter((line) => /^C(->>|-\)|-->>)S: /.test(line)).length, messages(crafted.client));
  assert.equal(drawn.filter((line) => /^S(->>|-\)|-->>)C: /.test(line)).length, messages(crafted.server));

  // replay: the client's lines reach the server as they crossed, and the server's stray
  // responses come back again, each matching.
  const replayed = await reader("replay", "--timeout", "2000", logPath, "--", ...server("replayed"));
  const responses = crafted.server.filter((line) => line.tags.includes("no request")).length;
  assert.equal(replayed.stdout, `replay: ${responses} responses, ${responses} match, 0 differ, 0 missing, 0 unexpected\n`);
  assert.equal(replayed.code, 0);
  const sent = readFileSync(join(folder, "replayed"), "utf8");
  assert.equal(sent, `${[OPENING["→"], ...crafted.client.map((line) => line.bytes.toString())].join("\n")}\n`);
});

test("the batch that reuses an id beside a stray response reads back alike in every reader", async () => {
  const folder = tempFolder("format-batch-");
  const logPath = join(folder, "wire.log");
  const batch = '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":99,"result":{}}]';
  const input = `{"jsonrpc":"2.0","id":1,"method":"ping"}\n${batch}\n`;
  const copy = join(folder, "replayed");
  const server = [process.execPath, "-e", "process.stdin.pipe(require('node:fs').createWriteStream(process.argv[1]))"];
  assert.equal((await run(process.execPath, [wrapPath, "--log", logPath, "--", ...server, join(folder, "recorded")], input)).code, 0);
  assert.ok(readFileSync(logPath, "utf8").includes(` → [no request] [id in use] ${batch}\n`));
  const shown = lines((await reader("show", logPath)).stdout).map((line) => line.replace(/^\S+ /, ""));
  assert.deepEqual(shown.slice(1, 4), ["→ ping #1", "→ [no request] [id in use] ping #1", "→ [no request] [id in use] #99 result {}"]);
  const [figures] = JSON.parse((await reader("stats", "--json", logPath)).stdout).sessions;
  assert.equal(figures.messages["→"].count, 3);
  assert.deepEqual(figures.tags, { "no request": 1, "id in use": 1 });
  const drawn = mermaidBlocks((await reader("diagram", logPath)).stdout)[0] ?? "";
  assert.equal(drawn.match(/^C->>S: ping$/gm)?.length, 2);
  assert.match(drawn, /^C-->>S: result$/m);
  const replayed = await reader("replay", "--timeout", "1000", logPath, "--", ...server, copy);
  assert.equal(replayed.stdout, "replay: 0 responses, 0 match, 0 differ, 0 missing, 0 unexpected\n");
  assert.equal(readFileSync(copy, "utf8"), input);
});
