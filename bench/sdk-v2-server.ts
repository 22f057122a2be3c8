/**
 * sdk-v2-server.ts — the benchmark's contender from the official SDK, v2
 * (`@modelcontextprotocol/server`): an McpServer over stdio with the same `add`
 * tool as server.ts, wired by hand to a StdioServerTransport as the v2 docs show.
 *
 * bench/run.ts bundles this file with esbuild the same way build.mjs bundles
 * server.ts, and runs the bundle with plain `node`.
 */
import { McpServer } from "@modelcontextprotocol/server";
import { StdioServerTransport } from "@modelcontextprotocol/server/stdio";
import { z } from "zod";

/** The server, named like ours so that both answer `initialize` alike. */
const server = new McpServer({ name: "sdk-v2-bench", version: "0.1.0" });

server.registerTool(
  "add",
  {
    description: "Add two numbers",
    inputSchema: z.object({ a: z.number().describe("The first number"), b: z.number().describe("The second number") }),
  },
  async ({ a, b }) => ({ content: [{ type: "text", text: `${a} + ${b} = ${a + b}` }] }),
);

await server.connect(new StdioServerTransport());
