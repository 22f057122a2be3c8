/**
 * sdk-v1-server.ts — the benchmark's contender from the official SDK, v1
 * (`@modelcontextprotocol/sdk`): an McpServer over stdio with the same `add` tool
 * as server.ts, written the way the SDK's own README writes a stdio server.
 *
 * bench/run.ts bundles this file with esbuild the same way build.mjs bundles
 * server.ts, and runs the bundle with plain `node`.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

/** The server, named like ours so that both answer `initialize` alike. */
const server = new McpServer({ name: "sdk-v1-bench", version: "0.1.0" });

server.registerTool(
  "add",
  {
    description: "Add two numbers",
    inputSchema: z.object({ a: z.number().describe("The first number"), b: z.number().describe("The second number") }),
  },
  async ({ a, b }) => ({ content: [{ type: "text", text: `${a} + ${b} = ${a + b}` }] }),
);

await server.connect(new StdioServerTransport());
