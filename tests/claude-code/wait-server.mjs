// wait-server.mjs — server.ts with README's `wait` tool pasted in, as "Add your own tool" says,
// built in memory and run: a server with a slow tool that leaves no file behind.
//
// Usage: node tests/claude-code/wait-server.mjs   (then it is the server, on stdin and stdout)
//
// The `ts wait` entry goes into TOOLS after add's, and the `ts imports` block beside server.ts's
// own import, as tests/add-a-tool.test.ts does it; esbuild bundles the copy the project's way,
// without writing it, and the bundle is imported from a data: URL. Its `sourceURL` names this
// file in stack traces, so that the server's log lines stay short. slow-tool.test.ts registers
// this file with Claude Code, and README's excerpt of that session names it in its start line,
// so tests/readme.test.ts can run the excerpt again.
import { build } from "esbuild";
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** The project's root folder. */
const root = join(import.meta.dirname, "..", "..");

/**
 * The body of the fenced block with this info string in README's "Add your own tool".
 * @param {string} info
 * @returns {string}
 */
function readmeBlock(info) {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("\n## Add your own tool\n"));
  const found = new RegExp("\\n```" + info + "\\n([\\s\\S]*?)\\n```\\n").exec(section);
  if (found?.[1] === undefined) throw new Error(`README.md has no \`\`\`${info} block`);
  return found[1];
}

/**
 * server.ts with the entry before the `];` that closes TOOLS and the imports after its own.
 * @returns {string}
 */
function withWait() {
  const source = readFileSync(join(root, "server.ts"), "utf8");
  const close = source.indexOf("\n];\n", source.indexOf("const TOOLS: Tool[] = ["));
  const ownImport = 'import process from "node:process";\n';
  if (close === -1 || !source.includes(ownImport)) throw new Error("server.ts has changed shape");
  const pasted = `${source.slice(0, close)}\n${readmeBlock("ts wait")}${source.slice(close)}`;
  return pasted.replace(ownImport, `${ownImport}${readmeBlock("ts imports")}\n`);
}

const { outputFiles } = await build({
  stdin: { contents: withWait(), resolveDir: root, sourcefile: "server.ts", loader: "ts" },
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  charset: "utf8",
  write: false,
  logLevel: "warning",
});
const code = `${outputFiles[0]?.text ?? ""}\n//# sourceURL=wait-server.mjs\n`;
await import(`data:text/javascript;base64,${Buffer.from(code).toString("base64")}`);
