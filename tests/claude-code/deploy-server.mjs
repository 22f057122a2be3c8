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

/** The entry of the dispatch table that answers the probe. */
const DISCOVER = '\n  "server/discover": discover,\n';

/**
 * server.ts with the deploy tool, and without server/discover when `legacy` is true.
 * @param {boolean} legacy
 * @returns {string}
 */
function deployServer(legacy) {
  const source = withReadmeTool("ts deploy");
  if (!legacy) return source;
  if (!source.includes(DISCOVER)) throw new Error("server.ts has changed shape");
  return source.replace(DISCOVER, "\n");
}

await runServer(deployServer(process.argv.includes("--legacy")), "deploy-server.mjs");
