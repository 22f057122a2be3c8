// asking-server.mjs — server.ts with docs/tools.md's `project_roots` and `summarize` tools pasted
// in, as "Asking the client" says, built in memory and run (see readme-server.mjs): a server whose
// tools ask the client for its roots and for its model.
//
// Usage: node tests/claude-code/asking-server.mjs [--legacy]   (then it is the server)
//
// With --legacy, the server does not serve server/discover, so Claude Code falls back to the
// initialize handshake and is asked with requests of the server's own (see deploy-server.mjs).
import { runServer, withReadmeTools } from "./readme-server.mjs";

const source = withReadmeTools(["ts project_roots", "ts summarize"]);
const legacy = process.argv.includes("--legacy");
await runServer(legacy ? `${source}\nMETHODS.delete("server/discover");\n` : source, "asking-server.mjs");
