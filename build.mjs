// build.mjs — bundles each TypeScript entry into one dependency-free dist/*.mjs file.
//
// Usage: node build.mjs [OUTDIR]   (OUTDIR defaults to dist; the freshness test builds elsewhere and compares)
//
// The output runs with plain `node` wherever it is copied: ESM for Node 20 and up, a
// `#!/usr/bin/env node` first line and the run bit, UTF-8 kept as is, not minified so
// that a reader can still follow it. The same sources give the same bytes every time.
// The build fails when an output would import anything but a `node:` builtin.
// bench/ imports `bundle` to build the SDK servers it measures exactly the same way.
import { build } from "esbuild";
import { chmod, mkdir } from "node:fs/promises";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

/**
 * Bundles one entry the project's way and returns the paths its output imports that are not
 * `node:` builtins (none, for a good build).
 * @param {string} entry the TypeScript file to bundle
 * @param {string} outfile the .mjs file to write
 * @param {string} [prelude] lines to put after the shebang
 * @returns {Promise<string[]>}
 */
export async function bundle(entry, outfile, prelude = "") {
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

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const outdir = process.argv[2] ?? "dist";
  await mkdir(outdir, { recursive: true });
  for (const name of ["server", "wrap"]) {
    // A missing entry fails the build: skipping it would leave a stale or missing dist file.
    if (!existsSync(`${name}.ts`)) {
      console.error(`build: ${name}.ts is missing; nothing was built from it`);
      process.exit(1);
    }
    const outfile = join(outdir, `${name}.mjs`);
    const foreign = await bundle(`${name}.ts`, outfile);
    if (foreign.length > 0) {
      console.error(`build: ${outfile} imports ${foreign.join(", ")}; only node: builtins are allowed`);
      process.exit(1);
    }
  }
}
