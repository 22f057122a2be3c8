// deploy-server.mjs — server.ts with docs/tools.md's `deploy` tool pasted in, as "Tools that do real work"
// says, built in memory and run (see readme-server.mjs): a server whose tool asks the user.
//
// Usage: node tests/claude-code/deploy-server.mjs [--legacy]   (then it is the server)
//
// With --legacy, the server does not serve server/discover: Claude Code probes with it first
// and, on -32601, falls back to the initialize handshake, so this is how a test makes Claude
// Code take the legacy road (elicitation/create) against the same server.ts, rather than the
// 2026-07-28 one (input_required), which it takes whenever the probe is answered.
import { runServer, withReadmeTool } from "./readme-server.mjs";

/** What takes the probe's entry out of the dispatch table, run after the whole file has run, as a
 * section of server.ts plugs in. */
const NO_DISCOVER = '\nMETHODS.delete("server/discover");\n';

/**
 * server.ts with the deploy tool, and without server/discover when `legacy` is true.
 * @param {boolean} legacy
 * @returns {string}
 */
function deployServer(legacy) {
  const source = withReadmeTool("ts deploy");
  return legacy ? `${source}${NO_DISCOVER}` : source;
}

await runServer(deployServer(process.argv.includes("--legacy")), "deploy-server.mjs");
