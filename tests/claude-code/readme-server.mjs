// readme-server.mjs — server.ts with entries from docs/tools.md ("Tools that do real work") pasted
// in, as that chapter says, built in memory and run: a server with its tools that leaves no file
// behind.
//
// An entry goes into TOOLS after add's, and the `ts imports` block beside server.ts's own import,
// as tests/add-a-tool.test.ts does it; esbuild bundles the copy the project's way, without
// writing it, and the bundle is imported from a data: URL. Its `sourceURL` names the script that
// runs it in stack traces, so that the server's log lines stay short. wait-server.mjs and
// deploy-server.mjs are such scripts; the Claude Code tests register them through wrap.
import { build } from "esbuild";
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** The project's root folder. */
const root = join(import.meta.dirname, "..", "..");

/** The import that the `ts imports` block goes after, as docs/tools.md says. */
const OWN_IMPORT = 'import { createInterface } from "node:readline";\n';

/** The chapter whose tools the Claude Code tests run. */
const CHAPTER = join("docs", "tools.md");

/**
 * The body of the fenced block with this info string in docs/tools.md, "Tools that do real work".
 * @param {string} info
 * @returns {string}
 */
export function readmeBlock(info) {
  const chapter = readFileSync(join(root, CHAPTER), "utf8");
  const found = new RegExp("\\n```" + info + "\\n([\\s\\S]*?)\\n```\\n").exec(chapter);
  if (found?.[1] === undefined) throw new Error(`${CHAPTER} has no \`\`\`${info} block`);
  return found[1];
}

/**
 * server.ts with docs/tools.md's entry `info` before the `];` that closes TOOLS and, when `imports` is
 * true, its `ts imports` block after server.ts's own import.
 * @param {string} info
 * @param {{ imports?: boolean }} [options]
 * @returns {string}
 */
export function withReadmeTool(info, { imports = false } = {}) {
  return withReadmeTools([info], { imports });
}

/**
 * server.ts with docs/tools.md's entries `infos`, in that order, before the `];` that closes
 * TOOLS and, when `imports` is true, its `ts imports` block after server.ts's own import.
 * @param {readonly string[]} infos
 * @param {{ imports?: boolean }} [options]
 * @returns {string}
 */
export function withReadmeTools(infos, { imports = false } = {}) {
  const source = readFileSync(join(root, "server.ts"), "utf8");
  const close = source.indexOf("\n];\n", source.indexOf("const TOOLS: Tool[] = ["));
  if (close === -1 || !source.includes(OWN_IMPORT)) throw new Error("server.ts has changed shape");
  const entries = infos.map((info) => `\n${readmeBlock(info)}`).join("");
  const pasted = `${source.slice(0, close)}${entries}${source.slice(close)}`;
  return imports ? pasted.replace(OWN_IMPORT, `${OWN_IMPORT}${readmeBlock("ts imports")}\n`) : pasted;
}

/**
 * Bundles a server.ts source in memory and runs it; stack traces name it `name`.
 * @param {string} source
 * @param {string} name
 * @returns {Promise<void>}
 */
export async function runServer(source, name) {
  const { outputFiles } = await build({
    stdin: { contents: source, resolveDir: root, sourcefile: "server.ts", loader: "ts" },
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    charset: "utf8",
    write: false,
    logLevel: "warning",
  });
  const code = `${outputFiles[0]?.text ?? ""}\n//# sourceURL=${name}\n`;
  await import(`data:text/javascript;base64,${Buffer.from(code).toString("base64")}`);
}
