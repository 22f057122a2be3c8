#!/usr/bin/env node
// bare-http-responder.mjs — the limit for a Streamable HTTP server: bare node:http that answers
// every POST with one canned tools/call result, without any JSON work.
//
// It reads each request's body to its end, as any server must before the keep-alive connection
// can carry the next request, and answers 200 with the body server.mjs gives a 2026-07-28
// tools/call of `add` (2 + 3), with a Content-Length. Its id is always 1, since the client that
// measures this only checks the text. It listens on 127.0.0.1, on a free port, and prints its
// URL as one stderr line, the way `server.mjs --http` does.
import { createServer } from "node:http";

const REPLY = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  result: {
    content: [{ type: "text", text: "2 + 3 = 5" }],
    resultType: "complete",
    _meta: { "io.modelcontextprotocol/serverInfo": { name: "json-rpc-study", version: "0.1.0" } },
  },
});
const HEADERS = { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(REPLY) };

const server = createServer((request, response) => {
  request.on("end", () => response.writeHead(200, HEADERS).end(REPLY));
  request.resume();
});

server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  console.error(`[bare] HTTP responder started at http://127.0.0.1:${port}/mcp`);
});
