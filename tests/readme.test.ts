/**
 * README.md, README.ja.md and the chapters in docs/, run as tests: every transcript in them is
 * replayed against dist/server.mjs, every recorded log is recorded again through dist/wrap.mjs,
 * and every reader's output is printed again, so the text cannot drift from the code.
 *
 * A transcript is a fenced code block whose info string is `jsonl`:
 *
 *     ```jsonl
 *     # A note for the reader: neither sent nor compared.
 *     {"jsonrpc":"2.0","id":1,"method":"ping"}
 *     ← {"jsonrpc":"2.0","id":1,"result":{}}
 *     ```
 *
 * A line that starts with "← " is a line the server must print, exactly as written after
 * the arrow and its space. A line that starts with "#" is a note, and a blank line is
 * spacing. Every other line is sent to the server's stdin as written: it is what a reader
 * types. The replies written under a sent line must be all of that line's replies, in order.
 * (A block marked `jsonl after-adding-…` runs against a server with a tool added; see
 * add-a-tool.test.ts.)
 *
 * Each block runs in a fresh server process. The test sends every line at once, each
 * followed by a ping with a marker id; the server answers lines in order, so the marker's
 * reply tells where one line's replies end. Then stdin closes and the server exits, so no
 * test waits on a clock. Nothing is masked: the replies hold no time, process id or random
 * value.
 *
 * A log excerpt is a code block of wrap's log lines, `<time> <mark> <text>`, opening with
 * wrap's `# start pid N: COMMAND` line. The test runs that command through dist/wrap.mjs and
 * does what the excerpt's client did, in the excerpt's order: it sends each `→` line once the
 * `←` lines shown before it have come, ends the input where the excerpt shows `# end of
 * input`, and sends wrap SIGINT where it shows `# received SIGINT` (as Claude Code ends a
 * server). The new log must then be the excerpt, line for line, with the times, round-trip
 * times, the start line and requestStates masked. (An excerpt that opens with `# listen` was
 * recorded over HTTP, by a test that runs its client: it must be one of the recordings kept in
 * tests/fixtures/, line for line.) The `!` lines are compared apart, because
 * the server's stderr and stdout are two pipes that race: the server's own log lines
 * (`[server] …`) must be the same, so that a new log line fails until the excerpt is recorded
 * again; any other stderr (Node's message when the command cannot start) must be there in
 * order, and may have more.
 *
 * An excerpt whose info string names a file (```` ```text session.log ````) is that file: a
 * `console` block below it that runs a reader on the file (`$ node dist/wrap.mjs show
 * session.log`) must show what the reader prints for it, and a Mermaid block in the same
 * document must be what `wrap diagram` draws from one of its excerpts. A `console` block's
 * `$ node dist/wrap.mjs check -- COMMAND` runs the server live, in a copy of the clone, and must
 * print what the block shows. The Japanese edition of
 * each document must show the same blocks as the English one; only the notes of its
 * transcripts are translated.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { type Fence, documentPairs, documentText, documents, fences } from "./documents.ts";
import { cloneCopy, lines, root, run, runServer, start, tempFolder, waitUntil, wrapPath } from "./helpers.ts";

/** One line a reader sends, and every line the server prints in reply to it. */
interface Exchange {
  sent: string;
  replies: string[];
}

/** One transcript block: where it starts, and its exchanges in order. */
interface Transcript {
  where: string;
  exchanges: Exchange[];
}

/** One log excerpt: where it starts, the file it is if its block names one, and its lines. */
interface Excerpt {
  where: string;
  name: string | undefined;
  log: string[];
}

/** One command of a console block, and the lines it printed. */
interface Command {
  where: string;
  command: string;
  output: string[];
}

/** The info string that makes a fenced block a transcript. */
const TRANSCRIPT_INFO = "jsonl";

/** How a reply line starts: the arrow wire.log uses for server-to-client lines. */
const REPLY_MARK = "← ";

/** A line of wire.log: an ISO-8601 UTC time, a mark, and the text. */
const LOG_LINE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z ([→←!#]) /;

/** A 2026-07-28 requestState: signed with a key the server makes for each run, so it differs on
 * every run. An excerpt's line that carries one is sent with the one the server last wrote, as
 * a client echoes it, and it is masked when the logs are compared. */
const REQUEST_STATE = /"requestState":"[^"]*"/g;

/** The path the documents write for the reader's clone. */
const CLONE_PLACEHOLDER = "/absolute/path/";

/** A reader's command in a console block: the reader, its options, and the log it reads. */
const READER_COMMAND = /^node dist\/wrap\.mjs (show|stats|diagram|replay) (.*)$/;

/** `wrap check` run live in a console block: it starts the server the words after `--` name,
 * and records its sessions beside wrap, so it runs in a copy of the clone. */
const CHECK_COMMAND = /^node dist\/wrap\.mjs check (?:.* )?-- .*$/;

/** Whether an excerpt was recorded over HTTP: it opens with wrap's `# listen` line. */
function overHttp(log: readonly string[]): boolean {
  return / # listen /.test(log[0] ?? "");
}

/** The recordings kept in tests/fixtures/ (`*.log`), each as its lines. */
function keptRecordings(): string[][] {
  const folder = join(root, "tests", "fixtures");
  return readdirSync(folder).filter((name) => name.endsWith(".log")).map((name) => lines(readFileSync(join(folder, name), "utf8")));
}

/** How long a recorded session may take to record again: the slow tool's takes seconds. */
const RECORDING = { timeout: 30_000 };

/** The ping sent after the line at `index`; its reply marks the end of that line's replies. */
function marker(index: number): { request: string; reply: string } {
  const id = `readme-test-marker-${index}`;
  return {
    request: JSON.stringify({ jsonrpc: "2.0", id, method: "ping" }),
    reply: JSON.stringify({ jsonrpc: "2.0", id, result: {} }),
  };
}

/** Reads a transcript block into exchanges; a reply with no sent line above it is a writing mistake. */
function exchangesOf(body: readonly string[], where: string): Exchange[] {
  const exchanges: Exchange[] = [];
  for (const text of body) {
    if (text.trim() === "" || text.startsWith("#")) continue;
    if (!text.startsWith(REPLY_MARK)) {
      exchanges.push({ sent: text, replies: [] });
      continue;
    }
    const last = exchanges.at(-1);
    if (last === undefined) throw new Error(`${where}: a reply comes before any sent line`);
    last.replies.push(text.slice(REPLY_MARK.length));
  }
  return exchanges;
}

/** The mark of a wire.log line: → ← ! or #. */
function markOf(line: string): string {
  return LOG_LINE.exec(line)?.[1] ?? "";
}

/** Whether a `!` line is one of the server's own log lines, which this server and the article's begin with `[server]`. */
function serverLogLine(line: string): boolean {
  return markOf(line) === "!" && line.replace(LOG_LINE, "").startsWith("[server] ");
}

/** A wire.log line with what changes from run to run masked: the time, a round-trip time, the start line's pid and command, a requestState. */
function masked(line: string): string {
  return line
    .replace(REQUEST_STATE, '"requestState":"<state>"')
    .replace(/^\S+ /, "<time> ")
    .replace(/^<time> ([←→]) \(\d+\.\d ms\) /, "<time> $1 (<ms>) ")
    .replace(/^<time> # start pid \d+: .*$/, "<time> # start pid <pid>: <command>")
    .replace(/^<time> # unanswered (.*) \(waited \d+\.\d ms\)$/, "<time> # unanswered $1 (waited <ms>)");
}

/**
 * The command an excerpt's start line names, as spawn's arguments. wrap logs the words
 * joined by spaces, so `node -e SCRIPT` keeps its script whole and anything else is split
 * at spaces; `node` is this Node, and /absolute/path/ is this clone.
 */
function commandOf(startLine: string): string[] {
  const command = /# start pid \d+: (.*)$/.exec(startLine)?.[1] ?? "";
  const script = /^\S*node -e (.*)$/.exec(command);
  const words = script === null ? command.split(" ") : ["node", "-e", script[1] ?? ""];
  return words.map((word, index) => (index === 0 && /(^|\/)node$/.test(word) ? process.execPath : word.replace(CLONE_PLACEHOLDER, `${root}/`)));
}

/** The lines of `part` that are not in `whole` in the same order. */
function missing(part: readonly string[], whole: readonly string[]): string[] {
  let from = 0;
  return part.filter((line) => {
    const found = whole.indexOf(line, from);
    if (found === -1) return true;
    from = found + 1;
    return false;
  });
}

// ---- Reading the documents ----

/** Every transcript of one document. */
function transcriptsOf(file: string): Transcript[] {
  return fences(documentText(file))
    .filter((fence) => fence.info === TRANSCRIPT_INFO)
    .map((fence) => {
      const where = `${file}:${fence.line}`;
      return { where, exchanges: exchangesOf(fence.body, where) };
    });
}

/** Whether a fenced block is a log excerpt: every line of it a log line. */
function isExcerpt(fence: Fence): boolean {
  const log = fence.body.filter((text) => text !== "");
  return log.length > 0 && log.every((text) => LOG_LINE.test(text));
}

/** Every log excerpt of one document. */
function excerptsOf(file: string): Excerpt[] {
  return fences(documentText(file)).filter(isExcerpt).map((fence) => {
    const log = fence.body.filter((text) => text !== "");
    return { where: `${file}:${fence.line}`, name: fence.info.split(/\s+/)[1], log };
  });
}

/** Every command of the `console` blocks of one document, each with what it printed. */
function commandsOf(file: string): Command[] {
  return fences(documentText(file)).filter((fence) => fence.info === "console").flatMap((fence) => {
    const commands: Command[] = [];
    for (const [index, text] of fence.body.entries()) {
      if (text.startsWith("$ ")) commands.push({ where: `${file}:${fence.line + 1 + index}`, command: text.slice(2), output: [] });
      else commands.at(-1)?.output.push(text);
    }
    return commands;
  });
}

// ---- Running the server and wrap ----

/** Sends a transcript's lines to a fresh server and returns what it really answered to each. */
async function replay(exchanges: readonly Exchange[]): Promise<{ exchanges: Exchange[]; trailing: string[]; code: number | null }> {
  const input = exchanges.flatMap(({ sent }, index) => [sent, marker(index).request]);
  const { code, stdout } = await runServer(input);
  const groups: string[][] = [[]];
  for (const line of lines(stdout)) {
    if (line === marker(groups.length - 1).reply) groups.push([]);
    else groups.at(-1)?.push(line);
  }
  return {
    exchanges: exchanges.map(({ sent }, index) => ({ sent, replies: groups[index] ?? [] })),
    trailing: groups.slice(exchanges.length).flat(),
    code,
  };
}

/** Runs an excerpt's session through dist/wrap.mjs, doing what its client did, and returns the log wrap wrote. */
async function rerecord(excerpt: readonly string[]): Promise<string[]> {
  const logPath = join(tempFolder("readme-wire-"), "wire.log");
  const [command = "", ...args] = commandOf(excerpt[0] ?? "");
  const wrap = start(process.execPath, [wrapPath, "--log", logPath, "--", command, ...args]);
  try {
    return await recordInto(wrap, excerpt, logPath);
  } finally {
    wrap.child.kill();
  }
}

/** Does what an excerpt's client did, to a wrap that `rerecord` started, and returns its log. */
async function recordInto(wrap: ReturnType<typeof start>, excerpt: readonly string[], logPath: string): Promise<string[]> {
  let shownAnswers = 0;
  let ended = false;
  // The client sent each line, ended its input or sent its signal once what it had seen by then had come.
  const caughtUp = () => waitUntil(() => lines(wrap.output()).length >= shownAnswers, `${shownAnswers} lines from the server`, 20_000);
  for (const line of excerpt) {
    const mark = markOf(line);
    if (mark === "←") shownAnswers += 1;
    if (mark === "→") {
      await caughtUp();
      const state = wrap.output().match(REQUEST_STATE)?.at(-1);
      // A client's response to the server's own request carries its round-trip time too.
      const sent = line.replace(LOG_LINE, "").replace(/^\(\d+\.\d ms\) /, "");
      wrap.child.stdin.write(`${state === undefined ? sent : sent.replace(REQUEST_STATE, state)}\n`);
    }
    if (mark === "#" && line.endsWith(" # end of input")) {
      await caughtUp();
      wrap.child.stdin.end();
      ended = true;
    }
    if (mark === "#" && line.includes(" # received SIGINT")) {
      await caughtUp();
      // Only once wrap has logged its start has it set its signal handlers and started the server.
      await waitUntil(() => existsSync(logPath) && readFileSync(logPath, "utf8").includes(" # start pid "), "wrap's start line", 20_000);
      // And the server has had the time to set its own, as a user's Ctrl+C would give it.
      await new Promise((resolve) => setTimeout(resolve, 500));
      wrap.child.kill("SIGINT");
      ended = true;
    }
  }
  // A session that shows no end of its own ended with its server: wait for that, then end it.
  if (!ended) {
    await Promise.race([wrap.finish, new Promise((resolve) => setTimeout(resolve, 10_000))]);
    wrap.child.stdin.end();
  }
  await wrap.finish;
  return lines(readFileSync(logPath, "utf8"));
}

/** The excerpt a reader's command reads, by the file name it gives, written out with this clone's paths. */
function logFileFor(file: string, name: string): string {
  const excerpt = excerptsOf(file).find((each) => each.name === name);
  assert.ok(excerpt !== undefined, `${file} runs a reader on ${name}, but shows no \`\`\`text ${name} block`);
  const path = join(tempFolder("readme-reader-"), "wire.log");
  writeFileSync(path, `${excerpt.log.join("\n")}\n`);
  return path;
}

/** Runs a reader's command on the excerpt it names, as the document gives it, and returns what it printed. */
async function runReader(file: string, command: string): Promise<string[]> {
  const [, reader = "", rest = ""] = READER_COMMAND.exec(command) ?? [];
  const [own = "", server = ""] = rest.split(" -- ");
  const words = own.split(" ");
  const name = words.at(-1) ?? "";
  const served = server === "" ? [] : ["--", ...server.split(" ").map((word) => (word === "node" ? process.execPath : word))];
  const args = [wrapPath, reader, ...words.slice(0, -1), logFileFor(file, name), ...served];
  const { stdout } = await run(process.execPath, args, "", { cwd: root, env: { ...process.env, NO_COLOR: "" } });
  return stdout.split("\n").slice(0, -1);
}

// ---- The tests ----

for (const file of documents()) {
  for (const { where, exchanges } of transcriptsOf(file)) {
    test(`the transcript at ${where} is what dist/server.mjs answers`, async () => {
      assert.ok(exchanges.length > 0, `${where} sends nothing`);
      const actual = await replay(exchanges);
      assert.deepEqual(actual.exchanges, exchanges);
      assert.deepEqual(actual.trailing, [], "the server printed more after the last marker");
      assert.equal(actual.code, 0, "the server exits 0 when stdin ends");
    });
  }

  test(`every reply line in ${file} sits in a transcript block`, () => {
    const stray = fences(documentText(file))
      .filter((fence) => fence.info.split(/\s+/)[0] !== TRANSCRIPT_INFO)
      .flatMap((fence) => fence.body.filter((text) => text.startsWith(REPLY_MARK)).map(() => `${file}:${fence.line}`));
    assert.deepEqual(stray, [], `a block with "${REPLY_MARK}" lines must be \`\`\`${TRANSCRIPT_INFO} to be run`);
  });

  for (const { where, log } of excerptsOf(file).filter((excerpt) => overHttp(excerpt.log))) {
    test(`the HTTP log excerpt at ${where} is a recording kept in tests/fixtures/`, () => {
      const kept = keptRecordings().some((recording) => isDeepStrictEqual(recording, log));
      assert.ok(kept, `${where} is no recording in tests/fixtures/*.log: paste one, whole`);
    });
  }

  for (const { where, log } of excerptsOf(file).filter((excerpt) => !overHttp(excerpt.log))) {
    test(`the log excerpt at ${where} is what dist/wrap.mjs records`, RECORDING, async () => {
      assert.match(log[0] ?? "", /# start pid \d+: /, `${where} must open with wrap's start line`);
      const real = await rerecord(log);
      const shown = `the real log:\n${real.map(masked).join("\n")}`;
      const events = (all: string[]) => all.filter((line) => markOf(line) !== "!").map(masked);
      assert.deepEqual(events(real), events(log), shown);
      const ours = (all: string[]) => all.filter(serverLogLine).map(masked);
      assert.deepEqual(ours(real), ours(log), `the server's log lines differ: record the excerpt again\n${shown}`);
      const foreign = (all: string[]) => all.filter((line) => markOf(line) === "!" && !serverLogLine(line)).map(masked);
      assert.deepEqual(missing(foreign(log), foreign(real)), [], shown);
    });
  }

  for (const { where, command, output } of commandsOf(file).filter(({ command }) => READER_COMMAND.test(command))) {
    test(`\`${command}\` at ${where} prints what the document shows`, RECORDING, async () => {
      assert.deepEqual(await runReader(file, command), output);
    });
  }

  for (const { where, command, output } of commandsOf(file).filter(({ command }) => CHECK_COMMAND.test(command))) {
    test(`\`${command}\` at ${where} prints what the document shows`, RECORDING, async () => {
      const words = command.split(" ").map((word) => (word === "node" ? process.execPath : word));
      const [node = "", ...args] = words;
      const { stdout } = await run(node, args, "", { cwd: cloneCopy() });
      assert.deepEqual(stdout.split("\n").slice(0, -1), output);
    });
  }

  test(`each Mermaid block in ${file} is what wrap diagram draws from one of its excerpts`, async () => {
    const drawn = fences(documentText(file)).filter((fence) => fence.info === "mermaid");
    const diagrams: string[] = [];
    for (const { log } of excerptsOf(file)) {
      const path = join(tempFolder("readme-diagram-"), "session.log");
      writeFileSync(path, `${log.join("\n")}\n`);
      const { code, stdout } = await run(process.execPath, [wrapPath, "diagram", path], "");
      assert.equal(code, 0);
      diagrams.push(stdout);
    }
    for (const fence of drawn) {
      const markdown = ["```mermaid", ...fence.body, "```", ""].join("\n");
      assert.ok(diagrams.includes(markdown), `${file}:${fence.line} is drawn from no excerpt of ${file}`);
    }
  });
}

for (const { english, japanese } of documentPairs()) {
  test(`${japanese} shows the same code blocks as ${english}`, () => {
    // A transcript's notes are translated; everything else in a block is what a machine reads or prints.
    const blocks = (file: string) => fences(documentText(file)).map((fence) => ({
      info: fence.info,
      body: fence.info.startsWith(TRANSCRIPT_INFO) ? fence.body.filter((text) => !text.startsWith("#")) : fence.body,
    }));
    assert.ok(existsSync(join(root, japanese)), `${japanese} is missing`);
    assert.deepEqual(blocks(japanese), blocks(english));
  });
}

test("the documents have transcripts and excerpts to run", () => {
  assert.ok(transcriptsOf("README.md").length > 0);
  assert.ok(documents().some((file) => excerptsOf(file).length > 0));
  assert.ok(documents().some((file) => commandsOf(file).some(({ command }) => READER_COMMAND.test(command))));
});

test("each README reads in one sitting: at most 450 lines, the deep dives left to docs/", () => {
  for (const file of ["README.md", "README.ja.md"]) {
    const count = documentText(file).split("\n").length - 1;
    assert.ok(count <= 450, `${file} has ${count} lines`);
  }
});

test("both READMEs give the test command that .ci/run runs", () => {
  const command = "npm ci && npm test";
  // .ci/run runs the command verbatim, perhaps followed by `|| exit 1`, among other steps of its own.
  const steps = lines(readFileSync(join(root, ".ci", "run"), "utf8")).filter((text) => !text.startsWith("#"));
  assert.ok(steps.some((text) => text === command || text.startsWith(`${command} ||`)), `.ci/run does not run ${command}`);
  for (const file of ["README.md", "README.ja.md"]) {
    const blocks = fences(documentText(file)).flatMap((fence) => fence.body);
    assert.ok(blocks.includes(command), `${file} does not show \`${command}\` in a code block`);
  }
});

/** The anchor GitHub gives a heading: lower case, punctuation gone, spaces made hyphens. */
function anchorOf(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/ /g, "-");
}

/** The anchors of a document's headings, outside code blocks. */
function anchorsOf(file: string): string[] {
  const inCode = new Set(fences(documentText(file)).flatMap((fence) => fence.body));
  return documentText(file).split("\n")
    .filter((line) => /^#{1,6} /.test(line) && !inCode.has(line))
    .map((line) => anchorOf(line.replace(/^#+ /, "")));
}

test("every link between the documents leads to a file that is there, and to a heading in it", () => {
  for (const file of documents()) {
    const folder = join(root, file, "..");
    for (const [, target = "", anchor] of documentText(file).matchAll(/\]\(((?!https?:)[^)#\s]*)(?:#([^)]*))?\)/g)) {
      const path = target === "" ? join(root, file) : join(folder, target);
      assert.ok(existsSync(path), `${file} links to ${target}, which is not there`);
      if (anchor === undefined) continue;
      const linked = target === "" ? file : join(file, "..", target);
      assert.ok(anchorsOf(linked).includes(decodeURIComponent(anchor)), `${file} links to ${target}#${anchor}, a heading ${linked} does not have`);
    }
  }
});
