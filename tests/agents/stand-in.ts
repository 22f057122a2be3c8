/**
 * The HTTP side that every stand-in model API shares (codex.ts, gemini.ts, qwen.ts, copilot.ts).
 *
 * A stand-in is a node:http server on 127.0.0.1, on a port the system picks. It records each
 * request a CLI sends it (method, path, body) in the order they arrive, then asks the stand-in's
 * own `respond` for the reply: each CLI.ts keeps only what its API speaks, the route(s) it
 * answers, the format of its answer and the model's script. A request to any other route is
 * recorded too and refused with 404, as a real API refuses a route it does not have, so that a
 * test can see a CLI that asked for something the stand-in does not speak.
 *
 * Qwen Code and Copilot CLI both speak the OpenAI Chat Completions API, so what their requests
 * say (the tools offered, the tool results) is read here once; each answers in its own way.
 *
 * Sections: what is recorded, the replies, the server, reading a Chat Completions request.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { isObject } from "../claude-code/claude.ts";
import { parseBody, readBody } from "../helpers.ts";

// ---- What is recorded ----

/** One HTTP request as the CLI sent it, and when it arrived (Date.now()). */
export interface RecordedRequest {
  method: string;
  /** The path without its query, as in `/v1/responses`. */
  path: string;
  /** The body parsed as JSON, or the raw text when it is not JSON (undefined when empty). */
  body: unknown;
  receivedAt: number;
}

/** A running stand-in: the base URL a CLI is given, what it received, and how to stop it. */
export interface StandIn {
  url: string;
  requests: RecordedRequest[];
  close: () => Promise<void>;
}

// ---- The replies ----

/** What a stand-in sends back for one request. */
export interface Reply {
  status: number;
  headers: { [name: string]: string };
  body: string;
}

/**
 * How a stand-in answers the request numbered `count` (from 1): the reply for a route its API
 * speaks, or undefined for any other route.
 */
export type Respond = (request: RecordedRequest, count: number) =>
  Reply | undefined | Promise<Reply | undefined>;

/** A JSON body, as an API answers a request without `"stream": true`. */
export function jsonReply(value: unknown, status = 200): Reply {
  return { status, headers: { "content-type": "application/json" }, body: JSON.stringify(value) };
}

/** Server-sent events, already written out, as an API answers `"stream": true`. */
export function eventsReply(events: string): Reply {
  const headers = { "content-type": "text/event-stream", "cache-control": "no-cache" };
  return { status: 200, headers, body: events };
}

/** The reply to a route the stand-in does not speak: 404, as the real APIs answer. */
function notFound(request: RecordedRequest): Reply {
  return jsonReply({ error: { message: `Not found: ${request.method} ${request.path}` } }, 404);
}

// ---- The server ----

/** Records one request in `requests`, then sends what `respond` makes of it, or 404. */
async function serve(incoming: IncomingMessage, response: ServerResponse,
  requests: RecordedRequest[], respond: Respond): Promise<void> {
  const body = parseBody((await readBody(incoming)).toString("utf8"));
  const path = (incoming.url ?? "/").split("?")[0] ?? "/";
  const request = { method: incoming.method ?? "", path, body, receivedAt: Date.now() };
  requests.push(request);
  const reply = (await respond(request, requests.length)) ?? notFound(request);
  response.writeHead(reply.status, reply.headers);
  response.end(reply.body);
}

/**
 * Starts a stand-in on 127.0.0.1 with a port the system picks; `respond` answers each request.
 * `basePath` ends the URL a CLI is given (`/v1` for one that adds `/responses` to it).
 */
export async function startStandIn(respond: Respond, basePath = ""): Promise<StandIn> {
  const requests: RecordedRequest[] = [];
  const server = createServer(async (incoming, response) => {
    await serve(incoming, response, requests, respond);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address: AddressInfo | string | null = server.address();
  if (address === null || typeof address === "string") {
    throw new Error("The stand-in has no TCP address");
  }
  const close = async (): Promise<void> => {
    server.closeAllConnections();
    server.close();
    await once(server, "close");
  };
  return { url: `http://127.0.0.1:${address.port}${basePath}`, requests, close };
}

// ---- Reading a Chat Completions request (qwen.ts, copilot.ts) ----

/** The names of the functions a Chat Completions request offers to the model. */
export function offeredTools(body: unknown): string[] {
  if (!isObject(body) || !Array.isArray(body.tools)) return [];
  return body.tools.flatMap((tool: unknown) => {
    const named = isObject(tool) && isObject(tool.function) ? tool.function.name : undefined;
    return typeof named === "string" ? [named] : [];
  });
}

/** A message's content as text: a string, or a list of `{ type: "text", text }` parts. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part: unknown) => (isObject(part) && typeof part.text === "string" ? part.text : ""))
    .join("");
}

/** The text of every tool result (a message with role "tool") in a request, in order. */
export function toolResults(body: unknown): string[] {
  if (!isObject(body) || !Array.isArray(body.messages)) return [];
  return body.messages.flatMap((message: unknown) => {
    return isObject(message) && message.role === "tool" ? [textOf(message.content)] : [];
  });
}
