/**
 * README.md and README.ja.md, run as tests: every transcript in them is replayed against
 * dist/server.mjs, so the text cannot drift from the code.
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
 *
 * Each block runs in a fresh server process. The test sends every line at once, each
 * followed by a ping with a marker id; the server answers lines in order, so the marker's
 * reply tells where one line's replies end. Then stdin closes and the server exits, so no
 * test waits on a clock. Nothing is masked: the replies hold no time, process id or random
 * value. The Japanese edition must show the same sessions as the English one; only the
 * notes are translated.
 *
 * The wire.log excerpts are checked too. An excerpt is a code block of wrap's log lines,
 * `<time> <mark> <text>`, opening with wrap's `# start pid N: COMMAND` line. The test runs
 * that command through dist/wrap.mjs, sends the excerpt's `→` lines one by one, waiting
 * for the `←` lines that follow each, then ends the input, or sends wrap SIGINT if the
 * excerpt shows `# received SIGINT` (as Claude Code ends a server). Every line of the excerpt must
 * then be in the real log, in the same order, with the time, the round-trip time and the
 * start line masked; an excerpt may leave lines out. `!` lines are compared on their own,
 * because the server's stderr and stdout are two pipes that race.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { once } from "node:events";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { lines, root, run, runServer, start, wrapPath, tempFolder } from "./helpers.ts";

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

/** A fenced code block of a Markdown file: its info string, the line of its opening fence, and its lines. */
interface Fence {
  info: string;
  line: number;
  body: string[];
}

/** One wire.log excerpt: where it starts, and its log lines. */
interface Excerpt {
  where: string;
  log: string[];
}

/** The info string that makes a fenced block a transcript. */
const TRANSCRIPT_INFO = "jsonl";

/** How a reply line starts: the arrow wire.log uses for server-to-client lines. */
const REPLY_MARK = "← ";

/** The READMEs whose transcripts are run, English first. */
const READMES = ["README.md", "README.ja.md"];

/** A line of wire.log: an ISO-8601 UTC time, a mark, and the text. */
const LOG_LINE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z ([→←!#]) /;

/** A 2026-07-28 requestState: signed with a key the server makes for each run, so it differs on
 * every run. An excerpt's line that carries one is sent with the one the server last wrote, as
 * a client echoes it, and it is masked when the logs are compared. */
const REQUEST_STATE = /"requestState":"[^"]*"/g;

/** The path the READMEs write for the reader's clone. */
const CLONE_PLACEHOLDER = "/absolute/path/";

/** The ping sent after the line at `index`; its reply marks the end of that line's replies. */
function marker(index: number): { request: string; reply: string } {
  const id = `readme-test-marker-${index}`;
  return {
    request: JSON.stringify({ jsonrpc: "2.0", id, method: "ping" }),
    reply: JSON.stringify({ jsonrpc: "2.0", id, result: {} }),
  };
}

/** Finds the fenced code blocks of a Markdown text (CommonMark: a run of 3 or more backticks or tildes). */
function fences(markdown: string): Fence[] {
  const found: Fence[] = [];
  let open: { marker: string; fence: Fence } | undefined;
  for (const [index, text] of markdown.split("\n").entries()) {
    if (open === undefined) {
      const opener = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(text);
      if (opener !== null) open = { marker: opener[1] ?? "", fence: { info: (opener[2] ?? "").trim(), line: index + 1, body: [] } };
      continue;
    }
    // A closing fence is a run of the same character, at least as long as the opening one.
    const closer = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(text);
    if (closer !== null && (closer[1] ?? "").startsWith(open.marker)) {
      found.push(open.fence);
      open = undefined;
    } else {
      open.fence.body.push(text);
    }
  }
  return found;
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

/** A wire.log line with what changes from run to run masked: the time, a round-trip time, the start line's pid and command, a requestState. */
function masked(line: string): string {
  return line
    .replace(REQUEST_STATE, '"requestState":"<state>"')
    .replace(/^\S+ /, "<time> ")
    .replace(/^<time> ([←→]) \(\d+\.\d ms\) /, "<time> $1 (<ms>) ")
    .replace(/^<time> # start pid \d+: .*$/, "<time> # start pid <pid>: <command>");
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

// ---- I/O: read the READMEs, run the server and wrap ----

/** The text of a README; a missing file reads as empty, so that its tests fail with a plain message. */
function readme(file: string): string {
  const path = join(root, file);
  return existsSync(path) ? readFileSync(path, "utf8") : "";
}

/** Every transcript of one README file. */
function transcriptsOf(file: string): Transcript[] {
  return fences(readme(file))
    // A block marked `jsonl after-adding-…` shows the server as "Add your own tool" changes it;
    // tests/add-a-tool.test.ts replays it against that server.
    .filter((fence) => fence.info === TRANSCRIPT_INFO)
    .map((fence) => {
      const where = `${file}:${fence.line}`;
      return { where, exchanges: exchangesOf(fence.body, where) };
    });
}

/** Every wire.log excerpt of one README: code blocks whose lines are all log lines. */
function excerptsOf(file: string): Excerpt[] {
  return fences(readme(file))
    .map((fence) => ({ where: `${file}:${fence.line}`, log: fence.body.filter((text) => text !== "") }))
    .filter(({ log }) => log.length > 0 && log.every((text) => LOG_LINE.test(text)));
}

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

/** Runs an excerpt's session through dist/wrap.mjs and returns the log wrap wrote. */
async function rerecord(excerpt: readonly string[]): Promise<string[]> {
  const logPath = join(tempFolder("readme-wire-"), "wire.log");
  const [command = "", ...args] = commandOf(excerpt[0] ?? "");
  const { child, finish, output } = start(process.execPath, [wrapPath, "--log", logPath, "--", command, ...args]);
  let expected = 0;
  for (const [index, line] of excerpt.entries()) {
    if (markOf(line) !== "→") continue;
    const next = excerpt.slice(index + 1).findIndex((later) => markOf(later) === "→");
    expected += excerpt.slice(index + 1, next === -1 ? undefined : index + 1 + next).filter((later) => markOf(later) === "←").length;
    const state = output().match(REQUEST_STATE)?.at(-1);
    // A client's response to the server's own request carries its round-trip time too.
    const sent = line.replace(LOG_LINE, "").replace(/^\(\d+\.\d ms\) /, "");
    child.stdin.write(`${state === undefined ? sent : sent.replace(REQUEST_STATE, state)}\n`);
    while (lines(output()).length < expected) await once(child.stdout, "data");
  }
  // A session ends as the excerpt's client ended it: Claude Code sends SIGINT, others close stdin.
  if (excerpt.some((line) => markOf(line) === "#" && line.includes(" # received SIGINT"))) {
    // Only once wrap has logged its start has it set its signal handlers and started the server.
    const started = () => existsSync(logPath) && readFileSync(logPath, "utf8").includes(" # start pid ");
    while (!started()) await new Promise((resolve) => setTimeout(resolve, 10));
    // And the server has had the time to set its own, as a user's Ctrl+C would give it.
    await new Promise((resolve) => setTimeout(resolve, 500));
    child.kill("SIGINT");
  } else child.stdin.end();
  await finish;
  return lines(readFileSync(logPath, "utf8"));
}

for (const file of READMES) {
  test(`${file} has transcripts`, () => {
    assert.ok(transcriptsOf(file).length > 0, `${file} has no \`\`\`${TRANSCRIPT_INFO} block`);
  });

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
    const stray = fences(readme(file))
      .filter((fence) => fence.info.split(/\s+/)[0] !== TRANSCRIPT_INFO)
      .flatMap((fence) => fence.body.filter((text) => text.startsWith(REPLY_MARK)).map(() => `${file}:${fence.line}`));
    assert.deepEqual(stray, [], `a block with "${REPLY_MARK}" lines must be \`\`\`${TRANSCRIPT_INFO} to be run`);
  });

  for (const { where, log } of excerptsOf(file)) {
    test(`the wire.log excerpt at ${where} is what dist/wrap.mjs records`, { timeout: 20_000 }, async () => {
      assert.match(log[0] ?? "", /# start pid \d+: /, `${where} must open with wrap's start line`);
      const real = await rerecord(log);
      for (const stderr of [false, true]) {
        const stream = (all: string[]) => all.filter((line) => (markOf(line) === "!") === stderr).map(masked);
        assert.deepEqual(missing(stream(log), stream(real)), [], `missing from the real log:\n${real.map(masked).join("\n")}`);
      }
    });
  }
}

test("README.ja.md shows the same sessions as README.md", () => {
  const sessions = (file: string) => transcriptsOf(file).map(({ exchanges }) => exchanges);
  assert.deepEqual(sessions("README.ja.md"), sessions("README.md"));
});

test("both READMEs give the test command that .ci/run runs", () => {
  const command = "npm ci && npm test";
  // .ci/run runs the command verbatim, perhaps followed by `|| exit 1`, among other steps of its own.
  const steps = lines(readFileSync(join(root, ".ci", "run"), "utf8")).filter((text) => !text.startsWith("#"));
  assert.ok(steps.some((text) => text === command || text.startsWith(`${command} ||`)), `.ci/run does not run ${command}`);
  for (const file of READMES) {
    const blocks = fences(readme(file)).flatMap((fence) => fence.body);
    assert.ok(blocks.includes(command), `${file} does not show \`${command}\` in a code block`);
  }
});

/** The READMEs' diagrams of Claude Code sessions, each by what marks its log and itself: the
 * first session shown, and the 2026-07-28 elicitation round trip. */
const DIAGRAMS = [
  { name: "Claude Code session", log: '"claude-code"', diagram: "tools/call add" },
  { name: "elicitation round trip", log: '"resultType":"input_required"', diagram: "input required" },
];

for (const { name, log: inLog, diagram: inDiagram } of DIAGRAMS) {
  test(`each README's ${name} diagram is what wrap diagram draws from the log it shows`, async () => {
    const folder = tempFolder("readme-diagram-");
    for (const file of READMES) {
      const session = excerptsOf(file).find(({ log }) => log.some((text) => text.includes(inLog)));
      assert.ok(session !== undefined, `${file} shows no log with ${inLog}`);
      const drawn = fences(readme(file)).find((fence) => fence.info === "mermaid" && fence.body.some((text) => text.includes(inDiagram)));
      assert.ok(drawn !== undefined, `${file} shows no diagram with ${inDiagram}`);
      const path = join(folder, "session.log");
      writeFileSync(path, `${session.log.join("\n")}\n`);
      const { code, stdout } = await run(process.execPath, [wrapPath, "diagram", path], "");
      assert.equal(code, 0);
      assert.equal(stdout, ["```mermaid", ...drawn.body, "```", ""].join("\n"), `${file}:${drawn.line}`);
    }
  });
}
