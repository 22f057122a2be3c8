/**
 * README's "Add your own tool", run as a test: the section's entry is pasted into a copy of
 * server.ts after add's entry, as the section says, the copy is built the project's way, and
 * the section's transcript is replayed against it, with a tools/list that must show both
 * tools. Both READMEs must show the same entry and the same transcript.
 */
import { before, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bundle } from "../build.mjs";
import { lines, root, run } from "./helpers.ts";

/** The READMEs, and the heading of the section in each. */
const SECTIONS = { "README.md": "## Add your own tool", "README.ja.md": "## 自分のツールを足す" };

/** The info string of the section's transcript. */
const TRANSCRIPT_INFO = "jsonl after-adding-repeat";

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

/** The entry, pasted into server.ts before the `];` that closes TOOLS. */
function withEntry(source: string, entry: string): string {
  const tools = source.indexOf("const TOOLS: Tool[] = [");
  assert.notEqual(tools, -1, "server.ts has no TOOLS table");
  const close = source.indexOf("\n];\n", tools);
  return `${source.slice(0, close)}\n${entry}${source.slice(close)}`;
}

const english = section("README.md", SECTIONS["README.md"]);
const entry = block(english, "ts");
let built = "";

before(async () => {
  const folder = mkdtempSync(join(tmpdir(), "add-a-tool-"));
  const source = join(folder, "server.ts");
  writeFileSync(source, withEntry(readFileSync(join(root, "server.ts"), "utf8"), entry));
  // Type-checked with the project's own settings: the entry must fit the Tool type as it stands.
  const settings = { extends: join(root, "tsconfig.json"), include: ["server.ts"] };
  writeFileSync(join(folder, "tsconfig.json"), JSON.stringify(settings));
  writeFileSync(join(folder, "package.json"), '{"type":"module"}');
  symlinkSync(join(root, "node_modules"), join(folder, "node_modules"));
  const checked = spawnSync(join(root, "node_modules", ".bin", "tsc"), ["-p", folder], { encoding: "utf8" });
  assert.equal(checked.status, 0, `the pasted entry does not type-check:\n${checked.stdout}`);
  built = join(folder, "server.mjs");
  assert.deepEqual(await bundle(source, built), []);
});

test("both READMEs show the same entry and the same transcript", () => {
  const japanese = section("README.ja.md", SECTIONS["README.ja.md"]);
  assert.equal(block(japanese, "ts"), entry);
  const sent = (text: string) => lines(block(text, TRANSCRIPT_INFO)).filter((line) => !line.startsWith("#"));
  assert.deepEqual(sent(japanese), sent(english));
});

test("the pasted entry type-checks, and tools/list shows add and the new tool", async () => {
  const { stdout } = await run(process.execPath, [built], '{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n');
  const names = JSON.parse(stdout).result.tools.map((tool: { name: string }) => tool.name);
  assert.deepEqual(names, ["add", "repeat"]);
});

test("the section's transcript is what the built server answers, line for line", async () => {
  const transcript = lines(block(english, TRANSCRIPT_INFO)).filter((line) => !line.startsWith("#"));
  const sent = transcript.filter((line) => !line.startsWith("← "));
  const expected = transcript.filter((line) => line.startsWith("← ")).map((line) => line.slice(2));
  assert.ok(sent.length >= 4);
  const { code, stdout } = await run(process.execPath, [built], sent.map((line) => `${line}\n`).join(""));
  assert.deepEqual(lines(stdout), expected);
  assert.equal(code, 0);
});
