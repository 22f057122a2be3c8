/**
 * A stand-in for the Anthropic Messages API on 127.0.0.1, so that the real Claude Code can
 * run a whole turn with no account and nothing leaving loopback.
 *
 * Claude Code talks to `ANTHROPIC_BASE_URL` over plain HTTP: `POST /v1/messages` with
 * `"stream": true` for each model turn, answered as server-sent events (`message_start`,
 * then `content_block_start`, `content_block_delta`s and `content_block_stop` per block,
 * then `message_delta` with the stop reason, then `message_stop`), and
 * `POST /v1/messages/count_tokens` for a token count. The script of this stand-in is the
 * article's unless a test gives another: when the request offers the MCP tool
 * `mcp__json-rpc-study__add` (or any tool of that server) and the last user message holds no
 * tool result yet, the model "decides" to call add with `{"a":100,"b":111}`; when the last
 * user message carries a `tool_result`, it answers with text quoting that result. A test may
 * give other calls, and further ones made one after each tool result before that text. Any
 * other request gets a short text answer. Every request is recorded, so a test can read what
 * the model was shown.
 */
import { createServer, type ServerResponse } from "node:http";
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { parseBody, readBody } from "../helpers.ts";

/** One HTTP request as Claude Code sent it. */
export interface RecordedRequest {
  method: string;
  path: string;
  /** The body parsed as JSON, or the raw text when it is not JSON (or undefined when empty). */
  body: unknown;
}

/** A tool as the Messages API request offers it to the model. */
export interface OfferedTool {
  name: string;
  description?: string;
  input_schema?: unknown;
}

/** A running stand-in: its base URL, what it received, and how to stop it. */
export interface MessagesApi {
  url: string;
  requests: RecordedRequest[];
  close: () => Promise<void>;
}

/** One content block of an answer: what the model "says". */
type AnswerBlock =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: { [key: string]: unknown } };

/** The name under which Claude Code shows our add tool to the model: mcp__<server>__<tool>. */
export const ADD_TOOL = "mcp__json-rpc-study__add";

/** The arguments the model asks for, as in the article. */
export const ADD_INPUT = { a: 100, b: 111 } as const;

/**
 * A fixed tool_use id, so that the recorded session is the same on every run. Claude Code
 * passes it on to the server in `_meta` as `claudecode/toolUseId`.
 */
export const TOOL_USE_ID = "toolu_01JsonRpcStudyAdd100111";

/** The one tool call the model makes: which tool, with what input, under which tool_use id. */
export interface ToolScript {
  tool: string;
  input: { readonly [key: string]: unknown };
  toolUseId: string;
}

/** The article's call: add, 100 and 111. */
export const ADD_SCRIPT: ToolScript = { tool: ADD_TOOL, input: ADD_INPUT, toolUseId: TOOL_USE_ID };

/** The model name the stand-in reports when a request names none. */
const DEFAULT_MODEL = "claude-stand-in";

// ---- Pure functions: read a request, write an answer ----

/** A plain JSON object, narrowed from unknown. */
function isObject(value: unknown): value is { [key: string]: unknown } {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The tools a Messages API request offers to the model; none when the body has no list. */
export function offeredTools(body: unknown): OfferedTool[] {
  if (!isObject(body) || !Array.isArray(body.tools)) return [];
  return body.tools.flatMap((tool: unknown): OfferedTool[] => {
    if (!isObject(tool) || typeof tool.name !== "string") return [];
    const offered: OfferedTool = { name: tool.name, input_schema: tool.input_schema };
    if (typeof tool.description === "string") offered.description = tool.description;
    return [offered];
  });
}

/** The text of every tool_result in a content block, whether a string or a list of text blocks. */
function resultText(block: { [key: string]: unknown }): string {
  if (typeof block.content === "string") return block.content;
  if (!Array.isArray(block.content)) return "";
  return block.content
    .map((part: unknown) => (isObject(part) && typeof part.text === "string" ? part.text : ""))
    .join("");
}

/**
 * The tool results carried by the last user message of a request, in order. Claude Code may
 * put a message of another role after it (a "system" one with the environment), so this is
 * the last message whose role is "user", not the last message.
 */
export function lastToolResults(body: unknown): string[] {
  if (!isObject(body) || !Array.isArray(body.messages)) return [];
  const users = body.messages.filter((message: unknown) => isObject(message) && message.role === "user");
  const last: unknown = users.at(-1);
  if (!isObject(last) || !Array.isArray(last.content)) return [];
  return last.content.flatMap((block: unknown) => {
    const isResult = isObject(block) && block.type === "tool_result";
    return isResult ? [resultText(block)] : [];
  });
}

/** How many tool results a request's whole conversation holds: how many calls were made. */
function toolResultCount(body: unknown): number {
  if (!isObject(body) || !Array.isArray(body.messages)) return 0;
  return body.messages.flatMap((message: unknown) => {
    const content = isObject(message) && Array.isArray(message.content) ? message.content : [];
    return content.filter((block: unknown) => isObject(block) && block.type === "tool_result");
  }).length;
}

/** What the model answers to a request: the script's turn, step by step, a call per step. */
function answerTo(body: unknown, scripts: readonly ToolScript[]): AnswerBlock[] {
  const results = lastToolResults(body);
  const made = results.length > 0 ? toolResultCount(body) : 0;
  const script = scripts[made];
  if (script === undefined) {
    // The tool's own name is what follows the last "__" of mcp__<server>__<tool>.
    const named = scripts[made - 1]?.tool.split("__").at(-1);
    return [{ type: "text", text: `The ${named} tool says: ${results.join(" ")}` }];
  }
  // A tool of the same server is offered (mcp__<server>__…): the model may also call a name
  // the server does not have.
  const server = script.tool.slice(0, script.tool.lastIndexOf("__") + 2);
  const offered = offeredTools(body).some((tool) => tool.name.startsWith(server));
  const call = { type: "tool_use", id: script.toolUseId, name: script.tool, input: { ...script.input } } as const;
  if (offered) return [call];
  return [{ type: "text", text: "OK" }];
}

/** The model a request names, echoed back as the API does. */
function modelOf(body: unknown): string {
  return isObject(body) && typeof body.model === "string" ? body.model : DEFAULT_MODEL;
}

/** The stop reason that goes with an answer. */
function stopReason(blocks: readonly AnswerBlock[]): string {
  return blocks.some((block) => block.type === "tool_use") ? "tool_use" : "end_turn";
}

/** A usage object: small numbers, for a client that adds them up. */
function usage(output: number) {
  return { input_tokens: 10, output_tokens: output, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
}

/** The whole answer as one JSON message, for a request without `"stream": true`. */
function messageOf(body: unknown, id: string, blocks: readonly AnswerBlock[]) {
  return {
    id,
    type: "message",
    role: "assistant",
    model: modelOf(body),
    content: blocks,
    stop_reason: stopReason(blocks),
    stop_sequence: null,
    usage: usage(20),
  };
}

/** One server-sent event: `event:` and `data:` lines, then a blank line. */
function event(data: { type: string; [key: string]: unknown }): string {
  return `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** The answer as the event stream the Messages API sends for `"stream": true`. */
function streamOf(body: unknown, id: string, blocks: readonly AnswerBlock[]): string {
  const start = { ...messageOf(body, id, []), stop_reason: null, usage: usage(1) };
  const events = [event({ type: "message_start", message: start })];
  for (const [index, block] of blocks.entries()) {
    if (block.type === "text") {
      events.push(event({ type: "content_block_start", index, content_block: { type: "text", text: "" } }));
      events.push(event({ type: "content_block_delta", index, delta: { type: "text_delta", text: block.text } }));
    } else {
      const opened = { ...block, input: {} };
      const partial_json = JSON.stringify(block.input);
      events.push(event({ type: "content_block_start", index, content_block: opened }));
      events.push(event({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json } }));
    }
    events.push(event({ type: "content_block_stop", index }));
  }
  const delta = { stop_reason: stopReason(blocks), stop_sequence: null };
  events.push(event({ type: "message_delta", delta, usage: usage(20) }));
  events.push(event({ type: "message_stop" }));
  return events.join("");
}

// ---- I/O: the HTTP server ----

/** Sends a JSON answer. */
function sendJson(response: ServerResponse, status: number, value: unknown): void {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(value));
}

/**
 * Starts the stand-in on 127.0.0.1 with a port the system picks; its model makes `script`'s
 * call, then each of `next`, one after each tool result, in the same session.
 */
export async function startMessagesApi(script: ToolScript = ADD_SCRIPT,
  next: readonly ToolScript[] = []): Promise<MessagesApi> {
  const requests: RecordedRequest[] = [];
  let count = 0;
  const server = createServer(async (request, response) => {
    const body = parseBody((await readBody(request)).toString("utf8"));
    const path = (request.url ?? "/").split("?")[0] ?? "/";
    requests.push({ method: request.method ?? "", path, body });
    count += 1;
    const id = `msg_stand_in_${count}`;
    if (request.method === "POST" && path === "/v1/messages/count_tokens") {
      sendJson(response, 200, { input_tokens: 10 });
      return;
    }
    if (request.method !== "POST" || path !== "/v1/messages") {
      // Anything else is recorded and refused, as the real API refuses an unknown route.
      const error = { type: "not_found_error", message: `Not found: ${path}` };
      sendJson(response, 404, { type: "error", error });
      return;
    }
    const blocks = answerTo(body, [script, ...next]);
    const streamed = isObject(body) && body.stream === true;
    if (!streamed) {
      sendJson(response, 200, messageOf(body, id, blocks));
      return;
    }
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    response.end(streamOf(body, id, blocks));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address: AddressInfo | string | null = server.address();
  if (address === null || typeof address === "string") throw new Error("The stand-in has no TCP address");
  const close = async (): Promise<void> => {
    server.closeAllConnections();
    server.close();
    await once(server, "close");
  };
  return { url: `http://127.0.0.1:${address.port}`, requests, close };
}
