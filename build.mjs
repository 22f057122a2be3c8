// build.mjs — type-checks each TypeScript entry, then bundles it into one dependency-free .mjs file.
//
// Usage:
//   node build.mjs            server.ts and wrap.ts into dist/ (`npm run build`)
//   node build.mjs OUTDIR     the same into OUTDIR (the freshness test builds elsewhere and compares)
//   node build.mjs FILE.ts    FILE.ts into FILE.mjs beside it: your own copy of server.ts
//
// The type-check comes first, with the project's tsconfig.json, and a type error stops the build
// with the compiler's message: a handler that returns a string must not become a server that
// answers {"0":"o","1":"o",…}. The output runs with plain `node` wherever it is copied: ESM for
// Node 20 and up, a `#!/usr/bin/env node` first line and the run bit, UTF-8 kept as is, not
// minified so that a reader can still follow it. The same sources give the same bytes every
// time. The build fails when an output would import anything but a `node:` builtin.
// bench/ imports `bundle` to build the SDK servers it measures exactly the same way.
import { spawnSync } from "node:child_process";
import { chmod, mkdir } from "node:fs/promises";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** The project's root folder: where tsconfig.json and node_modules are. (import.meta.dirname
 * would need Node 20.11; the project runs on 20.3.) */
const root = dirname(fileURLToPath(import.meta.url));

/** The entries `npm run build` builds into dist/. */
const ENTRIES = ["server.ts", "wrap.ts"];

/**
 * Bundles one entry the project's way and returns the paths its output imports that are not
 * `node:` builtins (none, for a good build).
 * @param {string} entry the TypeScript file to bundle
 * @param {string} outfile the .mjs file to write
 * @param {string} [prelude] lines to put after the shebang
 * @returns {Promise<string[]>}
 */
export async function bundle(entry, outfile, prelude = "") {
  const { build } = await import("esbuild");
  const { metafile } = await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    charset: "utf8",
    banner: { js: `#!/usr/bin/env node${prelude === "" ? "" : `\n${prelude}`}` },
    metafile: true,
    logLevel: "warning",
  });
  await chmod(outfile, 0o755);
  const imports = Object.values(metafile.outputs).flatMap((output) => output.imports.map((entry) => entry.path));
  return imports.filter((path) => !path.startsWith("node:"));
}

/**
 * Type-checks the given files with the project's compiler settings, and nothing else: the tests
 * and a reader's other copies do not stop a build. The compiler prints its own messages.
 * @param {string[]} files absolute paths
 * @returns {boolean} whether the files type-check
 */
export function typeCheck(files) {
  const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
  // The settings are tsconfig.json's; only the list of files is new, so they go in a config of
  // their own, in a temporary folder that is removed at once.
  const folder = mkdtempSync(join(tmpdir(), "build-"));
  try {
    const config = {
      extends: join(root, "tsconfig.json"),
      compilerOptions: { typeRoots: [join(root, "node_modules", "@types")] },
      files,
      include: [],
    };
    writeFileSync(join(folder, "tsconfig.json"), JSON.stringify(config));
    const checked = spawnSync(process.execPath, [tsc, "-p", folder], { stdio: "inherit" });
    return checked.status === 0;
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/**
 * Stops the build with one plain line on stderr.
 * @param {string} why
 * @returns {never}
 */
function fail(why) {
  console.error(`build: ${why}`);
  process.exit(1);
}

/**
 * The builds a command line asks for: each TypeScript entry and the .mjs file it becomes.
 * @param {string | undefined} argument OUTDIR, FILE.ts, or nothing
 * @returns {{ entry: string, outfile: string }[]}
 */
function buildsOf(argument) {
  if (argument !== undefined && argument.endsWith(".ts")) {
    const entry = resolve(argument);
    return [{ entry, outfile: join(dirname(entry), `${basename(entry, ".ts")}.mjs`) }];
  }
  const outdir = argument ?? "dist";
  return ENTRIES.map((name) => ({ entry: resolve(root, name), outfile: join(outdir, name.replace(/\.ts$/, ".mjs")) }));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const builds = buildsOf(process.argv[2]);
  // A missing entry fails the build: skipping it would leave a stale or missing file.
  for (const { entry } of builds) if (!existsSync(entry)) fail(`${basename(entry)} is missing; nothing was built from it`);
  if (!existsSync(join(root, "node_modules", "esbuild"))) fail(`run \`npm ci\` in ${root} first: the build needs its dev tools`);
  if (!typeCheck(builds.map(({ entry }) => entry))) fail("the type-check failed (above); nothing was built");
  for (const { entry, outfile } of builds) {
    await mkdir(dirname(outfile), { recursive: true });
    const foreign = await bundle(entry, outfile);
    if (foreign.length > 0) fail(`${outfile} imports ${foreign.join(", ")}; only node: builtins are allowed`);
    if (builds.length === 1) console.error(`build: ${relative(".", entry)} → ${relative(".", outfile)}`);
  }
}
