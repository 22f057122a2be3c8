/**
 * A recording reverse proxy for Streamable HTTP: a CLI is given the tap's URL, the tap passes
 * every request on to the server unchanged and streams the answer back, and records both sides
 * of each exchange. What wrap's log is for stdio, this is for http.test.ts.
 *
 * How it works: the tap reads a request's whole body (a JSON-RPC POST is small), records the
 * method, path, headers and body, and sends the same method, path and headers to the server,
 * `Host` and `Origin` included, so that the server judges what the CLI sent. Only the
 * hop-by-hop headers (`Connection`, `Keep-Alive`, `Transfer-Encoding`) are the tap's own. The
 * server's status and headers go back as they came, and its body chunk by chunk, so that an
 * event stream reaches the CLI as it is written. A CLI that closes its side closes the server's
 * too, as a closed stream cancels a call.
 *
 * Sections: what is recorded, reading a recording, the proxy.
 */
import {
  Agent, createServer, request as forward, type IncomingHttpHeaders, type IncomingMessage,
  type ServerResponse,
} from "node:http";
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { isObject } from "../claude-code/claude.ts";

// ---- What is recorded ----

/** One request a CLI sent, and the server's answer as far as it went. */
export interface Exchange {
  method: string;
  path: string;
  /** The request's headers, names in lower case, as the CLI sent them. */
  headers: IncomingHttpHeaders;
  /** The body parsed as JSON, or its text when it is not JSON (undefined when empty). */
  body: unknown;
  /** The server's status, once it answered. */
  status?: number;
  responseHeaders?: IncomingHttpHeaders;
  /** The server's body as it passed the tap: whole, or up to where either side closed. */
  responseBody: string;
}

/** A running tap: the URL a CLI is given, what passed it, and how to stop it. */
export interface Tap {
  url: string;
  exchanges: Exchange[];
  close: () => Promise<void>;
}

/** Parses a body: JSON when it is JSON, else the text itself. */
function parseBody(text: string): unknown {
  if (text === "") return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed;
  } catch {
    return text;
  }
}

// ---- Reading a recording ----

/** The JSON-RPC messages of a body: one message, or each of a batch. */
function messagesIn(body: unknown): { [key: string]: unknown }[] {
  const all: unknown[] = Array.isArray(body) ? body : [body];
  return all.filter(isObject);
}

/** The JSON-RPC messages a CLI posted, in order. */
export function messagesSent(exchanges: readonly Exchange[]): { [key: string]: unknown }[] {
  return exchanges.filter((exchange) => exchange.method === "POST")
    .flatMap((exchange) => messagesIn(exchange.body));
}

/** The JSON-RPC messages of a server's answer: a JSON body, or each `data:` of an event stream. */
export function messagesReceived(exchange: Exchange): { [key: string]: unknown }[] {
  const type = exchange.responseHeaders?.["content-type"] ?? "";
  if (!type.startsWith("text/event-stream")) return messagesIn(parseBody(exchange.responseBody));
  return exchange.responseBody.split("\n")
    .filter((line) => line.startsWith("data:"))
    .flatMap((line) => messagesIn(parseBody(line.slice("data:".length).trim())));
}

/** The values a header took across the exchanges that sent it, in order of first use. */
export function headerValues(exchanges: readonly Exchange[], name: string): string[] {
  const values = exchanges.flatMap((exchange) => {
    const value = exchange.headers[name.toLowerCase()];
    return value === undefined ? [] : [String(value)];
  });
  return [...new Set(values)];
}

// ---- The proxy ----

/** The headers that belong to one connection, never passed on (RFC 9110, section 7.6.1). */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding"]);

/** `headers` without the hop-by-hop ones. */
function endToEnd(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name)));
}

/** Reads a whole request body. */
async function readBody(incoming: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of incoming) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

/** Records one request, passes it to the server at `port`, and streams the answer back. */
async function relay(incoming: IncomingMessage, response: ServerResponse, port: number,
  agent: Agent, exchanges: Exchange[]): Promise<void> {
  const body = await readBody(incoming);
  const exchange: Exchange = {
    method: incoming.method ?? "", path: incoming.url ?? "/", headers: incoming.headers,
    body: parseBody(body.toString("utf8")), responseBody: "",
  };
  exchanges.push(exchange);
  const headers = endToEnd(incoming.headers);
  if (body.length > 0) headers["content-length"] = String(body.length);
  const outgoing = forward({ host: "127.0.0.1", port, agent, method: exchange.method,
    path: exchange.path, headers });
  outgoing.on("response", (answer) => {
    // Always set on a response the client made (node:http's IncomingMessage).
    const status = answer.statusCode ?? 502;
    exchange.status = status;
    exchange.responseHeaders = answer.headers;
    response.writeHead(status, endToEnd(answer.headers));
    answer.on("data", (chunk: Buffer) => {
      exchange.responseBody += chunk.toString("utf8");
      response.write(chunk);
    });
    answer.on("end", () => response.end());
    answer.on("error", () => response.destroy());
  });
  outgoing.on("error", () => {
    if (!response.headersSent) response.writeHead(502);
    response.destroy();
  });
  // The CLI closed its side before the answer ended: the server sees its stream closed too.
  response.on("close", () => {
    if (!response.writableFinished) outgoing.destroy();
  });
  outgoing.end(body);
}

/** Starts a tap on 127.0.0.1 in front of the server at `target` (`http://127.0.0.1:PORT/mcp`). */
export async function startTap(target: string): Promise<Tap> {
  const { port, pathname } = new URL(target);
  const agent = new Agent({ keepAlive: true });
  const exchanges: Exchange[] = [];
  const server = createServer((incoming, response) => {
    relay(incoming, response, Number(port), agent, exchanges).catch(() => response.destroy());
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address: AddressInfo | string | null = server.address();
  if (address === null || typeof address === "string") throw new Error("The tap has no address");
  const close = async (): Promise<void> => {
    server.closeAllConnections();
    server.close();
    agent.destroy();
    await once(server, "close");
  };
  return { url: `http://127.0.0.1:${address.port}${pathname}`, exchanges, close };
}
