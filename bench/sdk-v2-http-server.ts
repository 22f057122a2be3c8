/**
 * sdk-v2-http-server.ts — the HTTP benchmark's contender from the official SDK, v2: an McpServer
 * with the same `add` tool as server.ts, served over Streamable HTTP on plain node:http as the
 * v2 docs show. `createMcpHandler` (@modelcontextprotocol/server) answers 2026-07-28 requests
 * from a per-request server factory, and stateless 2025-era ones; its docs say to mount it on
 * node:http with `toNodeHandler` (@modelcontextprotocol/node), behind the Host and Origin
 * guards that package's README puts in front of a hand-wired node:http server.
 *
 * It listens on 127.0.0.1, on a free port, and prints its endpoint's URL as one stderr line,
 * the way `server.mjs --http` does. bench/http.ts bundles this file with esbuild the same way
 * build.mjs bundles server.ts, and runs the bundle with plain `node`.
 */
import { createServer, type IncomingMessage } from "node:http";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import {
  localhostHostValidation,
  localhostOriginValidation,
  toNodeHandler,
} from "@modelcontextprotocol/node";
import { z } from "zod";

/** A fresh server for each request, named like ours so that both answer alike. */
function serverForRequest(): McpServer {
  const server = new McpServer({ name: "sdk-v2-bench", version: "0.1.0" });
  server.registerTool(
    "add",
    {
      description: "Add two numbers",
      inputSchema: z.object({
        a: z.number().describe("The first number"),
        b: z.number().describe("The second number"),
      }),
    },
    async ({ a, b }) => ({ content: [{ type: "text", text: `${a} + ${b} = ${a + b}` }] }),
  );
  return server;
}

/** Whether a request has its method and URL, as node:http always gives a server's request: the
 * adapter's types want both present, and this project checks with exactOptionalPropertyTypes. */
function isRoutable(
  request: IncomingMessage,
): request is IncomingMessage & { method: string; url: string } {
  return request.method !== undefined && request.url !== undefined;
}

const serve = toNodeHandler(createMcpHandler(serverForRequest));
const checkHost = localhostHostValidation();
const checkOrigin = localhostOriginValidation();

const http = createServer((request, response) => {
  // Each guard has answered 403 itself when it returns false.
  if (!checkHost(request, response) || !checkOrigin(request, response)) return;
  if (isRoutable(request)) void serve(request, response);
  else response.writeHead(400).end();
});

http.listen(0, "127.0.0.1", () => {
  const address = http.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  console.error(`[sdk-v2] Streamable HTTP server started at http://127.0.0.1:${port}/mcp`);
});
