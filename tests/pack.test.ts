/**
 * The npm package, as a user gets it: `npm pack` makes the tarball, `npm install` puts it
 * into an empty project, and the installed commands run the article's session. The package
 * holds only what a user needs: the two built files its commands run, the READMEs and the
 * chapters they link to, the license and package.json. It has no dependencies, so installing it offline must work.
 */
import { before, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { lines, root, run, tempFolder } from "./helpers.ts";
import { ARTICLE_LINES, SERVER_REPLIES } from "./fixtures/article-session.ts";

/** The commands package.json declares, and the file each runs. */
const BINS = { "json-rpc-study": "dist/server.mjs", "json-rpc-study-wrap": "dist/wrap.mjs" };

/** Every file the tarball holds. */
const PACKED_FILES = ["LICENSE", "README.ja.md", "README.md", "dist/server.mjs", "dist/wrap.mjs", ...chapters(), "package.json"];

/** The chapters in docs/, English and Japanese, as npm lists them. */
function chapters(): string[] {
  return readdirSync(join(root, "docs")).filter((name) => name.endsWith(".md")).map((name) => `docs/${name}`).sort();
}

/** Runs npm with the given arguments in a folder and returns its stdout. */
function npm(args: readonly string[], cwd: string): string {
  return execFileSync("npm", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

/** The value at `key` of a JSON object, or undefined for anything else. */
function field(value: unknown, key: string): unknown {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? Object.entries(value).find(([name]) => name === key)?.[1] : undefined;
}

/** The paths `npm pack --dry-run --json` lists for the package. */
function packedPaths(): unknown[] {
  const [report]: unknown[] = JSON.parse(npm(["pack", "--dry-run", "--json"], root));
  const files = field(report, "files");
  return Array.isArray(files) ? files.map((file: unknown) => field(file, "path")) : [];
}

/** The folder of an empty project with the packed tarball installed. */
let project = "";

before(() => {
  const work = tempFolder("pack-");
  const [report]: unknown[] = JSON.parse(npm(["pack", "--json", "--pack-destination", work], root));
  const tarball = field(report, "filename");
  assert.equal(typeof tarball, "string");
  project = join(work, "project");
  mkdirSync(project);
  writeFileSync(join(project, "package.json"), `${JSON.stringify({ name: "user-project", version: "1.0.0", private: true })}\n`);
  npm(["install", "--no-audit", "--no-fund", "--offline", join(work, String(tarball))], project);
});

test("package.json declares a command for the server and one for wrap", () => {
  const manifest: unknown = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  assert.deepEqual(field(manifest, "bin"), BINS);
});

test("the tarball holds only what a user needs", () => {
  assert.deepEqual(packedPaths().sort(), PACKED_FILES);
});

test("the installed json-rpc-study command answers the article's session", async () => {
  const bin = join(project, "node_modules", ".bin", "json-rpc-study");
  const { code, stdout } = await run(bin, [], ARTICLE_LINES.map((line) => `${line}\n`).join(""));
  assert.deepEqual(lines(stdout), SERVER_REPLIES);
  assert.equal(code, 0);
});

test("the installed json-rpc-study-wrap command runs the installed server and records the session", async () => {
  const bin = join(project, "node_modules", ".bin", "json-rpc-study-wrap");
  const logPath = join(project, "wire.log");
  const { code, stdout } = await run(bin, ["--log", logPath], ARTICLE_LINES.map((line) => `${line}\n`).join(""));
  assert.deepEqual(lines(stdout), SERVER_REPLIES);
  assert.equal(code, 0);
  const log = lines(readFileSync(logPath, "utf8")).map((line) => line.replace(/^\S+ /, ""));
  // Without a command, wrap runs the server.mjs installed beside it.
  assert.match(log[0] ?? "", /^# start pid \d+: /);
  assert.ok(log[0]?.endsWith(` ${join(project, "node_modules", "json-rpc-study", "dist", "server.mjs")}`), log[0]);
  // The article's line that is not JSON is tagged so, as wrap tags any such line.
  assert.deepEqual(
    log.filter((line) => line.startsWith("→ ")),
    ARTICLE_LINES.map((line) => `→ ${line.startsWith("{") ? "" : "[not JSON-RPC] "}${line}`),
  );
  assert.deepEqual(
    log.filter((line) => line.startsWith("← ")).map((line) => line.replace(/^← \(\d+\.\d ms\) /, "← ")),
    SERVER_REPLIES.map((line) => `← ${line}`),
  );
});
