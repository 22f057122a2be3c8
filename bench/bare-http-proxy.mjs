#!/usr/bin/env node
// bare-http-proxy.mjs — the limit for a Streamable HTTP proxy: bare node:http that passes each
// request on to one upstream and streams the answer back, logging nothing.
//
// Usage: node bench/bare-http-proxy.mjs --listen [HOST:]PORT URL   (as `wrap --listen`, no log)
//
// It listens on HOST (127.0.0.1 unless given) at PORT (0: a free one), and names its endpoint
// in one stderr line, as `wrap --listen` does. A request for /mcp goes to URL's path, with its
// query; any other path goes to URL's origin unchanged. Method, status, headers and bodies pass
// as they are, both ways, with `.pipe()`, which forwards each chunk as it comes, so an event
// stream stays a stream; only the hop-by-hop headers are the proxy's own (RFC 9110 §7.6.1). A
// client that closes its answer early closes the upstream request too, as 2026-07-28 cancels a
// call.
import { createServer, globalAgent, request } from "node:http";
import process from "node:process";

const [option, address = "", url = ""] = process.argv.slice(2);
const listen = /^(?:\[?([^\]]*?)\]?:)?(\d{1,5})$/.exec(address);
const target = URL.canParse(url) ? new URL(url) : undefined;
if (option !== "--listen" || listen === null || target?.protocol !== "http:") {
  process.stderr.write("Usage: node bench/bare-http-proxy.mjs --listen [HOST:]PORT URL\n");
  process.exit(2);
}
const [, host = "127.0.0.1", port] = listen;

/** The headers of one connection, never passed on (RFC 9110 §7.6.1). */
const HOP_BY_HOP = ["connection", "proxy-connection", "keep-alive", "te", "trailer",
  "transfer-encoding", "upgrade"];

/** `headers` without the hop-by-hop ones, and without those that Connection names. */
function endToEnd(headers) {
  const named = String(headers.connection ?? "").toLowerCase().split(",").map((n) => n.trim());
  const dropped = new Set([...HOP_BY_HOP, ...named]);
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !dropped.has(name)));
}

/** The upstream path of a request's: URL's own for /mcp, with the query; else unchanged. */
function upstreamPath(path = "/") {
  const [pathname, query] = path.split(/\?(.*)/s);
  if (pathname !== "/mcp") return path;
  const joined = [target.search.slice(1), query].filter((part) => part).join("&");
  return `${target.pathname}${joined === "" ? "" : `?${joined}`}`;
}

// Towards the upstream, node:http's default agent, as wrap uses: keep-alive (a proxy keeps its
// connections warm), Nagle off (noDelay), an idle socket closed after 5 s, LIFO reuse.
const agent = globalAgent;

const server = createServer((incoming, outgoing) => {
  const options = { host: target.hostname, port: target.port, agent, method: incoming.method,
    path: upstreamPath(incoming.url), headers: endToEnd(incoming.headers) };
  const forward = request(options, (answer) => {
    outgoing.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
    answer.pipe(outgoing);
  });
  forward.on("error", () => {
    if (!outgoing.headersSent) outgoing.writeHead(502).end();
    else outgoing.destroy();
  });
  // The client closed before the answer ended: the upstream request goes too.
  outgoing.on("close", () => {
    if (!outgoing.writableFinished) forward.destroy();
  });
  incoming.pipe(forward);
});

server.listen(Number(port), host, () => {
  const authority = host.includes(":") ? `[${host}]` : host;
  const endpoint = `http://${authority}:${server.address().port}/mcp`;
  process.stderr.write(`bare-http-proxy: listening on ${endpoint}, forwarding to ${target.href}\n`);
});
process.on("SIGTERM", () => process.exit(0));
