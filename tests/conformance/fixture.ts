/**
 * The server the conformance suite tests: server.ts with the suite's tools (tools.md, beside this
 * file) pasted into TOOLS after add's, and their imports after server.ts's own, as README's "Add
 * a tool" tells a reader; then built as README builds a reader's copy, `node build.mjs FILE.ts`,
 * which type-checks it first. Nothing else of server.ts changes: what the suite sees is the
 * server as shipped, with more tools.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { root, withEntries } from "../helpers.ts";

/** The chapter of tool entries, one fenced block each. */
const TOOLS_FILE = join(import.meta.dirname, "tools.md");

/** The fenced blocks of tools.md: their info strings (`ts NAME`) and bodies, in order. */
function blocks(): { info: string; body: string }[] {
  const text = readFileSync(TOOLS_FILE, "utf8");
  return [...text.matchAll(/\n```(ts [\w-]+)\n([\s\S]*?)\n```\n/g)]
    .map((found) => ({ info: found[1] ?? "", body: found[2] ?? "" }));
}

/** The names of the tools the fixture adds, in the order tools/list shows them after add. */
export function suiteToolNames(): string[] {
  return blocks().map(({ info }) => info.slice("ts ".length)).filter((name) => name !== "imports");
}

/** server.ts with every entry of tools.md pasted in, and its imports. */
export function fixtureSource(): string {
  const found = blocks();
  const imports = found.find(({ info }) => info === "ts imports")?.body ?? "";
  const entries = found.filter(({ info }) => info !== "ts imports").map(({ body }) => body);
  const source = readFileSync(join(root, "server.ts"), "utf8");
  return withEntries(source, entries, imports);
}

/** Writes the fixture's source into `folder` as conformance-server.ts, builds it with build.mjs,
 * and returns the path of the .mjs it becomes. A type error stops here, with tsc's message. */
export function buildFixture(folder: string): string {
  const source = join(folder, "conformance-server.ts");
  // The copy is an ES module, as server.ts is in the project: tsc reads that off package.json.
  writeFileSync(join(folder, "package.json"), '{ "type": "module" }\n');
  writeFileSync(source, fixtureSource());
  const built = spawnSync(process.execPath, [join(root, "build.mjs"), source], { encoding: "utf8" });
  if (built.status !== 0) throw new Error(`node build.mjs ${source} failed:\n${built.stdout}${built.stderr}`);
  return join(folder, "conformance-server.mjs");
}

// As a script, `node --import tsx tests/conformance/fixture.ts FOLDER` builds the fixture into
// FOLDER and prints its path: to run the suite by hand against `node PATH --http 127.0.0.1:0`.
if (import.meta.filename === process.argv[1]) console.log(buildFixture(process.argv[2] ?? "."));
