/**
 * server.ts reads as the article first, and a test keeps it so: the article's own session
 * (initialize, notifications/initialized, tools/list, tools/call add, ping, an unknown method, a
 * line that is not JSON) runs under V8's coverage (NODE_V8_COVERAGE), and no function it runs may
 * lie below the stop line. server.ts is bundled as build.mjs bundles it, with a source map, so
 * that each function V8 counted is found again on its line of server.ts. The check is shown to
 * fail, too: on a copy whose stop line sits higher, the same session runs functions below it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { SourceMap } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";
import { ARTICLE_LINES, ARTICLE_REPLIES } from "./fixtures/article-session.ts";
import { root, start, tempFolder } from "./helpers.ts";

/** How the stop line begins in server.ts. */
const STOP_LINE = "// THE STOP LINE.";

/** The article's session, with the two requests its transcript leaves out: tools/list, ping. */
const SESSION = [
  ...ARTICLE_LINES,
  '{"jsonrpc":"2.0","id":5,"method":"tools/list"}',
  '{"jsonrpc":"2.0","id":6,"method":"ping"}',
];

/** A function V8 saw run, where it starts in server.ts (lines counted from 1). */
interface Ran {
  name: string;
  line: number;
}

/** One function of V8's coverage: its name, and its ranges, the first being its whole body. */
interface FunctionCoverage {
  functionName: string;
  ranges: { startOffset: number; count: number }[];
}

/** The 1-based line of the stop line in a source text. */
function stopLineOf(source: string): number {
  const index = source.split("\n").findIndex((line) => line.startsWith(STOP_LINE));
  assert.notEqual(index, -1, `no "${STOP_LINE}" in the source`);
  return index + 1;
}

/** Bundles a copy of server.ts's text with a source map; resolves with the bundle's path. */
async function bundled(source: string, folder: string): Promise<string> {
  writeFileSync(join(folder, "server.ts"), source);
  const outfile = join(folder, "server.mjs");
  await build({
    entryPoints: [join(folder, "server.ts")],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    sourcemap: "external",
    logLevel: "warning",
  });
  return outfile;
}

/** Runs the session against a bundle with coverage on; resolves with the coverage's files. */
async function coverageOf(bundle: string, folder: string): Promise<string[]> {
  const coverage = join(folder, "coverage");
  const env = { ...process.env, NODE_V8_COVERAGE: coverage };
  const server = start(process.execPath, [bundle], { env });
  try {
    server.child.stdin.end(SESSION.map((line) => `${line}\n`).join(""));
    const { code, stdout } = await server.finish;
    assert.equal(code, 0);
    // The article's replies come first, in order: the session ran as the article shows it.
    assert.deepEqual(stdout.split("\n").slice(0, ARTICLE_REPLIES.length), ARTICLE_REPLIES);
  } finally {
    server.child.kill();
  }
  return readdirSync(coverage).map((name) => join(coverage, name));
}

/** The functions of the bundle that ran, each with its line in the source it was built from. */
function functionsRun(bundle: string, files: readonly string[]): Ran[] {
  const url = pathToFileURL(bundle).href;
  const scripts = files.flatMap((file) => {
    const { result } = JSON.parse(readFileSync(file, "utf8"));
    return result.filter((script: { url: string }) => script.url === url);
  });
  assert.equal(scripts.length, 1, "the bundle's coverage was not written");
  const functions: FunctionCoverage[] = scripts[0].functions;
  const map = new SourceMap(JSON.parse(readFileSync(`${bundle}.map`, "utf8")));
  const text = readFileSync(bundle, "utf8");
  return functions.flatMap(({ functionName, ranges }) => {
    const [whole] = ranges;
    // The module's own top level starts at 0; it is no function of ours.
    if (whole === undefined || whole.count === 0 || whole.startOffset === 0) return [];
    const before = text.slice(0, whole.startOffset).split("\n");
    const column = (before.at(-1) ?? "").length;
    const entry = map.findEntry(before.length - 1, column);
    if (!("originalLine" in entry)) return [];
    return [{ name: functionName || "(anonymous)", line: entry.originalLine + 1 }];
  });
}

/** The functions the article's session runs in a copy of server.ts, and its stop line. */
async function sessionOf(source: string): Promise<{ ran: Ran[]; stop: number }> {
  const folder = tempFolder("order-");
  const bundle = await bundled(source, folder);
  const ran = functionsRun(bundle, await coverageOf(bundle, folder));
  return { ran: ran.sort((a, b) => a.line - b.line), stop: stopLineOf(source) };
}

test("the article's session runs no function of server.ts below the stop line", async (t) => {
  const { ran, stop } = await sessionOf(readFileSync(join(root, "server.ts"), "utf8"));
  const listed = ran.map(({ name, line }) => `${name}:${line}`).join(" ");
  t.diagnostic(`stop line ${stop}; the session ran ${ran.length} functions: ${listed}`);
  assert.ok(ran.some(({ name }) => name === "callTool"), "the coverage holds the session");
  assert.deepEqual(ran.filter(({ line }) => line > stop), [], "functions below the stop line ran");
});

test("the check finds them when the stop line stands above functions the session runs", async () => {
  const source = readFileSync(join(root, "server.ts"), "utf8");
  const lines = source.split("\n");
  const stop = stopLineOf(source) - 1;
  // The stop line's banner, moved up to stand before serve: a file scattered as before.
  const banner = lines.slice(stop - 1, stop + 4);
  const rest = [...lines.slice(0, stop - 1), ...lines.slice(stop + 4)];
  const serve = rest.findIndex((line) => line.startsWith("function serve("));
  const scattered = [...rest.slice(0, serve - 3), ...banner, ...rest.slice(serve - 3)].join("\n");
  const { ran, stop: moved } = await sessionOf(scattered);
  const below = ran.filter(({ line }) => line > moved).map(({ name }) => name);
  assert.ok(below.includes("serve") && below.includes("send"), `found only: ${below.join(", ")}`);
});
