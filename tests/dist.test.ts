/**
 * dist/ is committed so that users can run it without installing anything; these tests
 * keep it honest: it must be byte-for-byte what a fresh build of the sources gives.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, readFileSync, readdirSync, statSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { tempFolder } from "./helpers.ts";

const root = join(import.meta.dirname, "..");

test("dist/ equals a fresh build of the sources", () => {
  const fresh = tempFolder("dist-");
  execFileSync(process.execPath, ["build.mjs", fresh], { cwd: root });
  const built = readdirSync(fresh).sort();
  // Only the built files count: wrap's default wire.log lands in dist/ too, and git ignores it.
  assert.deepEqual(readdirSync(join(root, "dist")).filter((name) => name.endsWith(".mjs")).sort(), built);
  for (const name of built) {
    assert.ok(readFileSync(join(root, "dist", name)).equals(readFileSync(join(fresh, name))), `dist/${name} is stale: run npm run build`);
    assert.equal(statSync(join(root, "dist", name)).mode & 0o111, 0o111, `dist/${name} must be executable`);
  }
});

test("every dist file starts with a node shebang and imports only node: builtins", () => {
  for (const name of readdirSync(join(root, "dist")).filter((file) => file.endsWith(".mjs"))) {
    const text = readFileSync(join(root, "dist", name), "utf8");
    assert.ok(text.startsWith("#!/usr/bin/env node\n"), `${name} has no shebang`);
    const specifiers = [...text.matchAll(/^import .* from "([^"]+)";$/gm)].map((match) => match[1]);
    assert.ok(specifiers.length > 0);
    for (const specifier of specifiers) assert.match(specifier ?? "", /^node:/);
  }
});

test("the build fails, and says which, when server.ts or wrap.ts is missing", () => {
  for (const missing of ["server.ts", "wrap.ts"]) {
    const folder = tempFolder("build-");
    for (const file of ["build.mjs", "server.ts", "wrap.ts"].filter((name) => name !== missing)) {
      copyFileSync(join(root, file), join(folder, file));
    }
    symlinkSync(join(root, "node_modules"), join(folder, "node_modules"));
    const built = spawnSync(process.execPath, ["build.mjs"], { cwd: folder, encoding: "utf8" });
    assert.equal(built.status, 1, missing);
    assert.match(built.stderr, new RegExp(`${missing.replace(".", "\\.")} is missing`));
  }
});
