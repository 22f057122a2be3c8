#!/usr/bin/env node
// event-upstream.mjs — an upstream that answers a POST with an event stream whose every event
// says when it was sent, so that a client can tell how long a proxy held each one.
//
// Every POST's body is a JSON-RPC request whose params name how many events to send and how
// far apart: `{"count": 1000, "everyMs": 1}`. The answer is 200 text/event-stream (2026-07-28
// basic/transports/streamable-http §Sending Messages): that many notifications/progress events,
// one each `everyMs`, each written on its own, whose params carry `sentAt`, the time it was
// written in ms on the clock every process on the machine shares (performance.timeOrigin +
// performance.now()); then the request's response, which ends the stream. It listens on
// 127.0.0.1, on a free port, and names its URL in one stderr line, as `server.mjs --http` does.
import { createServer } from "node:http";
import { performance } from "node:perf_hooks";
import process from "node:process";

/** The time now, in ms, on the clock the client reads too. */
function now() {
  return performance.timeOrigin + performance.now();
}

/** One event of the stream, as a server writes it. */
function event(message) {
  return `event: message\ndata: ${JSON.stringify(message)}\n\n`;
}

const server = createServer((request, response) => {
  const chunks = [];
  request.on("data", (chunk) => chunks.push(chunk));
  request.on("end", () => {
    const { id, params } = JSON.parse(Buffer.concat(chunks).toString());
    const { count, everyMs } = params;
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    let sent = 0;
    const timer = setInterval(() => {
      if (sent === count) {
        clearInterval(timer);
        response.end(event({ jsonrpc: "2.0", id, result: { content: [], events: count } }));
        return;
      }
      sent += 1;
      const progress = { progressToken: id, progress: sent, total: count, sentAt: now() };
      response.write(event({ jsonrpc: "2.0", method: "notifications/progress", params: progress }));
    }, everyMs);
    response.on("close", () => clearInterval(timer));
  });
});

server.listen(0, "127.0.0.1", () => {
  const { port } = server.address();
  process.stderr.write(`[events] upstream started at http://127.0.0.1:${port}/mcp\n`);
});
process.on("SIGTERM", () => process.exit(0));
