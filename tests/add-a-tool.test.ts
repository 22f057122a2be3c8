/**
 * README's "Make your own server", then docs/tools.md, walked as a newcomer walks them, in a copy
 * of the clone: README's `cp server.ts my-server.ts`; its entry pasted into TOOLS after add's;
 * its `node build.mjs my-server.ts`; its transcript typed to `node my-server.mjs` a line at a
 * time, each line once every answer the transcript shows before it has come. Then the mistake
 * README shows, a handler that returns a string, which must stop the build with the message
 * README prints. Then the chapter's imports and entries pasted in as it says, built again, and
 * each of its transcripts typed. Last, README's undo, `rm my-server.ts my-server.mjs`, must
 * leave the copy as it was, and git must ignore what the path makes. Both languages must show
 * the same entries and commands.
 */
import { before, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { block, documentText, fences } from "./documents.ts";
import { cloneCopy, filesUnder, lines, root, run, start, waitUntil, withEntries } from "./helpers.ts";

/** The README's section, and the chapter, whose steps this walks. */
const SECTION = "## Make your own server";
const CHAPTER = "docs/tools.md";

/** The info strings of the chapter's entries, in the order it pastes them. */
const ENTRIES = ["ts count_lines", "ts wait", "ts deploy", "ts project_roots", "ts summarize", "ts checked_sum"];

/** The tools the copy lists once every entry is in. */
const TOOL_NAMES = ["add", "repeat", "count_lines", "wait", "deploy", "project_roots", "summarize", "checked_sum"];

/** The info strings of the chapter's transcripts. */
const TRANSCRIPTS = [
  "jsonl after-adding-count_lines",
  "jsonl after-adding-wait",
  "jsonl after-adding-deploy",
  "jsonl after-adding-deploy-2026",
];

/** The files a reader's steps make, which git must ignore. */
const MADE_BY_READERS = [
  "my-server.ts", "my-server.mjs", "dist/wire.log", "session.log", "polluted.log", "stuck.log",
  "other.log", "tests/last-run.log",
];

/** A requestState as the documents show it: it is signed with a key made for each run, so it
 * differs on every run. A line that carries it is sent with the one the server last wrote, and
 * the server's lines are compared with it shortened so. */
const STATE = /"requestState":"[^"]*"/g;
const SHOWN_STATE = '"requestState":"…"';

/** How long one transcript may take: the wait tool's takes two seconds. */
const REPLAY = { timeout: 30_000 };

/** The README's section on making a server: from its heading to the next. */
function section(): string {
  const text = documentText("README.md");
  const start = text.indexOf(`\n${SECTION}\n`);
  assert.notEqual(start, -1, `README.md has no "${SECTION}" section`);
  const end = text.indexOf("\n## ", start + SECTION.length + 2);
  return text.slice(start, end === -1 ? undefined : end);
}

/** The blocks of the section, by info string, in order. */
function sectionBlocks(info: string): string[][] {
  return fences(section()).filter((fence) => fence.info === info).map((fence) => fence.body);
}

/** A transcript's lines without its notes. */
function transcript(body: string): string[] {
  return lines(body).filter((line) => !line.startsWith("#"));
}

/** Runs one of the section's shell lines in the copy, as a reader would; fails when it fails. */
function shell(copy: string, command: string): { stdout: string; stderr: string } {
  // A limit, since a command that hangs would hold the whole file (spawnSync blocks the loop).
  const ran = spawnSync("sh", ["-c", command], { cwd: copy, encoding: "utf8", timeout: 60_000 });
  assert.equal(ran.status, 0, `${command} failed:\n${ran.stdout}${ran.stderr}`);
  return { stdout: ran.stdout, stderr: ran.stderr };
}

/** Types a transcript to the built copy a line at a time and resolves with everything it wrote. */
async function typed(copy: string, sent: readonly string[]): Promise<{ code: number | null; stdout: string }> {
  // The server runs in the copy's folder, where count_lines finds LICENSE.
  const server = start(process.execPath, [join(copy, "my-server.mjs")], { cwd: copy });
  try {
    let expected = 0;
    for (const line of sent) {
      if (line.startsWith("← ")) {
        expected += 1;
        continue;
      }
      const answered = () => server.output().split("\n").length > expected;
      await waitUntil(answered, `${expected} answers before: ${line}`, 20_000);
      const written = server.output().match(STATE)?.at(-1);
      server.child.stdin.write(`${written === undefined ? line : line.replaceAll(SHOWN_STATE, written)}\n`);
    }
    server.child.stdin.end();
    const { code, stdout } = await server.finish;
    return { code, stdout };
  } finally {
    server.child.kill();
  }
}

/** Checks that typing a transcript to the built copy gives the lines it shows. */
async function checkTranscript(copy: string, body: string): Promise<void> {
  const sent = transcript(body);
  const expected = sent.filter((line) => line.startsWith("← ")).map((line) => line.slice(2));
  assert.ok(sent.length >= 4);
  const { code, stdout } = await typed(copy, sent);
  assert.deepEqual(lines(stdout.replace(STATE, SHOWN_STATE)), expected);
  assert.equal(code, 0);
}

let copy = "";
let initialFiles: string[] = [];

before(() => {
  copy = cloneCopy();
  initialFiles = filesUnder(copy);
});

test("README's copy command, entry and build give a my-server.mjs that answers its transcript", REPLAY, async () => {
  const [copyCommand = "", buildCommand = ""] = sectionBlocks("sh").map((body) => body.join("\n"));
  assert.equal(copyCommand, "cp server.ts my-server.ts");
  assert.equal(buildCommand, "node build.mjs my-server.ts");
  shell(copy, copyCommand);
  const entry = sectionBlocks("ts")[0]?.join("\n") ?? "";
  const source = join(copy, "my-server.ts");
  writeFileSync(source, withEntries(readFileSync(source, "utf8"), [entry], ""));
  shell(copy, buildCommand);
  await checkTranscript(copy, sectionBlocks("jsonl after-adding-repeat")[0]?.join("\n") ?? "");
});

test("a handler that returns a string stops the build, with the message README shows", () => {
  const console = sectionBlocks("console").find((body) => body[0] === "$ node build.mjs my-server.ts");
  assert.ok(console !== undefined, "README shows no failed build");
  const source = join(copy, "my-server.ts");
  const good = readFileSync(source, "utf8");
  // README: change repeat's handler to `handler: () => "oops",`.
  const handler = /( {4}handler: \(\{ text, times \}\) => \{\n[\s\S]*?\n {4}\},\n)/.exec(good)?.[1];
  assert.ok(handler !== undefined, "my-server.ts has no repeat handler");
  writeFileSync(source, good.replace(handler, '    handler: () => "oops",\n'));
  const built = spawnSync(process.execPath, ["build.mjs", "my-server.ts"], { cwd: copy, encoding: "utf8", timeout: 60_000 });
  writeFileSync(source, good);
  assert.equal(built.status, 1);
  assert.deepEqual(lines(built.stdout + built.stderr), console.slice(1));
});

test("the chapter's imports and entries, pasted into the copy, type-check and are listed", async () => {
  const source = join(copy, "my-server.ts");
  const entries = ENTRIES.map((info) => block(CHAPTER, info));
  writeFileSync(source, withEntries(readFileSync(source, "utf8"), entries, block(CHAPTER, "ts imports")));
  shell(copy, "node build.mjs my-server.ts");
  const { stdout } = await run(process.execPath, [join(copy, "my-server.mjs")], '{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n');
  const names = JSON.parse(stdout).result.tools.map((tool: { name: string }) => tool.name);
  assert.deepEqual(names, TOOL_NAMES);
});

for (const info of TRANSCRIPTS) {
  test(`the chapter's ${info.split(" ")[1]} transcript is what the built copy answers, line for line`, REPLAY, async () => {
    await checkTranscript(copy, block(CHAPTER, info));
  });
}

test("README's undo leaves the copy as it was, and git ignores every file the documents' steps make", () => {
  const undo = /`(rm my-server\.ts my-server\.mjs)`/.exec(section())?.[1];
  assert.ok(undo !== undefined, "README gives no undo");
  shell(copy, undo);
  assert.deepEqual(filesUnder(copy), initialFiles);
  const ignored = spawnSync("git", ["check-ignore", "--no-index", ...MADE_BY_READERS], { cwd: root, encoding: "utf8" });
  assert.deepEqual(lines(ignored.stdout), MADE_BY_READERS);
});

test("both languages show the same entries, commands and transcripts", () => {
  const japanese = documentText("README.ja.md");
  for (const info of ["ts", "sh", "console"]) {
    const inJapanese = fences(japanese).filter((fence) => fence.info === info).map((fence) => fence.body);
    for (const body of sectionBlocks(info)) assert.ok(inJapanese.some((each) => each.join("\n") === body.join("\n")), `README.ja.md lacks a ${info} block`);
  }
  for (const info of [...ENTRIES, "ts imports"]) assert.equal(block("docs/tools.ja.md", info), block(CHAPTER, info));
});
