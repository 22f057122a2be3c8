/**
 * README's "Add your own tool", run as a test: the section's entries are pasted into a copy of
 * server.ts after add's entry, and its imports beside the file's own, as the section says; the
 * copy is type-checked and built the project's way, and each of the section's transcripts is
 * replayed against it a line at a time, as a person would type it: a line is sent once every
 * answer the transcript shows before it has come. Both READMEs must show the same entries and
 * the same transcripts.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bundle } from "../build.mjs";
import { lines, root, run, start, waitUntil, withEntries } from "./helpers.ts";

/** The READMEs, and the heading of the section in each. */
const SECTIONS = { "README.md": "## Add your own tool", "README.ja.md": "## 自分のツールを足す" };

/** The info strings of the section's entries, in the order they are pasted. */
const ENTRIES = ["ts", "ts count_lines", "ts wait", "ts deploy"];

/** The tools the copy lists once every entry is in. */
const TOOL_NAMES = ["add", "repeat", "count_lines", "wait", "deploy"];

/** The info strings of the section's transcripts. */
const TRANSCRIPTS = [
  "jsonl after-adding-repeat",
  "jsonl after-adding-count_lines",
  "jsonl after-adding-wait",
  "jsonl after-adding-deploy",
  "jsonl after-adding-deploy-2026",
];

/** A requestState as README shows it: it is signed with a key made for each run, so it differs
 * on every run. A line that carries it is sent with the one the server last wrote, and the
 * server's lines are compared with it shortened so. */
const STATE = /"requestState":"[^"]*"/g;
const SHOWN_STATE = '"requestState":"…"';

/** How long one transcript may take: the wait tool's takes two seconds. */
const REPLAY = { timeout: 30_000 };

/** The section of a README: from its heading to the next. */
function section(file: string, heading: string): string {
  const text = readFileSync(join(root, file), "utf8");
  const start = text.indexOf(`\n${heading}\n`);
  assert.notEqual(start, -1, `${file} has no "${heading}" section`);
  const end = text.indexOf("\n## ", start + heading.length + 2);
  return text.slice(start, end === -1 ? undefined : end);
}

/** The body of the first fenced block with this info string in a text. */
function block(text: string, info: string): string {
  const found = new RegExp("\\n```" + info + "\\n([\\s\\S]*?)\\n```\\n").exec(text);
  assert.ok(found?.[1], `no \`\`\`${info} block`);
  return found[1];
}

/** A transcript's lines without its comments. */
function transcript(text: string, info: string): string[] {
  return lines(block(text, info)).filter((line) => !line.startsWith("#"));
}

const english = section("README.md", SECTIONS["README.md"]);
const folder = mkdtempSync(join(tmpdir(), "add-a-tool-"));
let built = "";

before(async () => {
  const source = join(folder, "server.ts");
  const entries = ENTRIES.map((info) => block(english, info));
  const original = readFileSync(join(root, "server.ts"), "utf8");
  writeFileSync(source, withEntries(original, entries, block(english, "ts imports")));
  // Type-checked with the project's own settings: the entries must fit the Tool type as it stands.
  const settings = { extends: join(root, "tsconfig.json"), include: ["server.ts"] };
  writeFileSync(join(folder, "tsconfig.json"), JSON.stringify(settings));
  writeFileSync(join(folder, "package.json"), '{"type":"module"}');
  symlinkSync(join(root, "node_modules"), join(folder, "node_modules"));
  const tsc = join(root, "node_modules", ".bin", "tsc");
  const checked = spawnSync(tsc, ["-p", folder], { encoding: "utf8" });
  assert.equal(checked.status, 0, `the pasted entries do not type-check:\n${checked.stdout}`);
  built = join(folder, "server.mjs");
  assert.deepEqual(await bundle(source, built), []);
});

after(() => rmSync(folder, { recursive: true, force: true }));

/** Replays a transcript a line at a time and resolves with everything the server wrote. */
async function replay(lines: readonly string[]): Promise<{ code: number | null; stdout: string }> {
  // The server runs in the clone's folder, where count_lines finds LICENSE.
  const server = start(process.execPath, [built], { cwd: root });
  let expected = 0;
  for (const line of lines) {
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
}

test("both READMEs show the same entries, imports and transcripts", () => {
  const japanese = section("README.ja.md", SECTIONS["README.ja.md"]);
  for (const info of [...ENTRIES, "ts imports"]) assert.equal(block(japanese, info), block(english, info));
  for (const info of TRANSCRIPTS) {
    const sent = (text: string) => transcript(text, info).filter((line) => !line.startsWith("← "));
    assert.deepEqual(sent(japanese), sent(english));
  }
});

test("the pasted entries type-check, and tools/list shows add and every new tool", async () => {
  const { stdout } = await run(process.execPath, [built], '{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n');
  const names = JSON.parse(stdout).result.tools.map((tool: { name: string }) => tool.name);
  assert.deepEqual(names, TOOL_NAMES);
});

for (const info of TRANSCRIPTS) {
  test(`the ${info.split(" ")[1]} transcript is what the built server answers, line for line`, REPLAY, async () => {
    const sent = transcript(english, info);
    const expected = sent.filter((line) => line.startsWith("← ")).map((line) => line.slice(2));
    assert.ok(sent.length >= 4);
    const { code, stdout } = await replay(sent);
    assert.deepEqual(lines(stdout.replace(STATE, SHOWN_STATE)), expected);
    assert.equal(code, 0);
  });
}
