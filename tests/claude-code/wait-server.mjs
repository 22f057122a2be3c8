// wait-server.mjs — server.ts with docs/tools.md's `wait` tool pasted in, as "Tools that do real work" says,
// built in memory and run (see readme-server.mjs): a server with a slow tool.
//
// Usage: node tests/claude-code/wait-server.mjs   (then it is the server, on stdin and stdout)
//
// slow-tool.test.ts registers this file with Claude Code, and docs/claude-code.md's excerpt of that session
// names it in its start line, so tests/readme.test.ts can run the excerpt again.
import { runServer, withReadmeTool } from "./readme-server.mjs";

await runServer(withReadmeTool("ts wait", { imports: true }), "wait-server.mjs");
