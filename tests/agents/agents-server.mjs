// agents-server.mjs — server.ts with every tool of docs/tools.md pasted in (count_lines, wait,
// deploy), built in memory and run (see ../claude-code/readme-server.mjs): the server that the
// agent CLI tests register with each client, so that one session can show how the client
// treats a tool error, a slow tool with progress, and a tool that asks the user.
//
// Usage: node tests/agents/agents-server.mjs [--legacy]   (then it is the server)
//
// With --legacy, the server does not serve server/discover. A client that probes with it first
// (Claude Code, Copilot CLI) gets -32601 and falls back to the initialize handshake, so this is
// how a test makes such a client take the legacy road against the same server.ts.
import { runServer, withReadmeTools } from "../claude-code/readme-server.mjs";

/** What takes the probe's entry out of the dispatch table, run after the whole file has run, as a
 * section of server.ts plugs in. */
const NO_DISCOVER = '\nMETHODS.delete("server/discover");\n';

/**
 * server.ts with the chapter's tools, and without server/discover when `legacy` is true.
 * @param {boolean} legacy
 * @returns {string}
 */
function agentsServer(legacy) {
  const source = withReadmeTools(["ts count_lines", "ts wait", "ts deploy"], { imports: true });
  return legacy ? `${source}${NO_DISCOVER}` : source;
}

await runServer(agentsServer(process.argv.includes("--legacy")), "agents-server.mjs");
