// build.mjs — bundles each TypeScript entry into one dependency-free dist/*.mjs file.
//
// Usage: node build.mjs [OUTDIR]   (OUTDIR defaults to dist; the freshness test builds elsewhere and compares)
//
// The output runs with plain `node` wherever it is copied: ESM for Node 20 and up, a
// `#!/usr/bin/env node` first line and the run bit, UTF-8 kept as is, not minified so
// that a reader can still follow it. The same sources give the same bytes every time.
// The build fails when an output would import anything but a `node:` builtin.
import { build } from "esbuild";
import { chmod, mkdir } from "node:fs/promises";
import { existsSync } from "node:fs";
import { join } from "node:path";

const outdir = process.argv[2] ?? "dist";
const entries = ["server", "wrap"].filter((name) => existsSync(`${name}.ts`));

await mkdir(outdir, { recursive: true });
for (const name of entries) {
  const outfile = join(outdir, `${name}.mjs`);
  const { metafile } = await build({
    entryPoints: [`${name}.ts`],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    charset: "utf8",
    banner: { js: "#!/usr/bin/env node" },
    metafile: true,
    logLevel: "warning",
  });
  const imports = Object.values(metafile.outputs).flatMap((output) => output.imports.map((entry) => entry.path));
  const foreign = imports.filter((path) => !path.startsWith("node:"));
  if (foreign.length > 0) {
    console.error(`build: ${outfile} imports ${foreign.join(", ")}; only node: builtins are allowed`);
    process.exit(1);
  }
  await chmod(outfile, 0o755);
}
