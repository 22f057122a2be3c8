/**
 * Streamable HTTP (issue 40), black-box: `node dist/server.mjs --http 127.0.0.1:0`, and a copy of
 * server.ts with docs/tools.md's tools pasted in (count_lines, wait, deploy), talked to over real
 * sockets as a client would. node:http sends most requests; a raw node:net socket sends those
 * whose bytes must be exact (header names and spaces as written, a 20 MiB body, headers dribbled
 * one byte at a time).
 *
 * The server's URL is on its stderr, on the line that names the endpoint. A 2026-07-28 request
 * carries its version in `_meta` and repeats it in headers (MCP-Protocol-Version, Mcp-Method,
 * Mcp-Name); a legacy one (2025-11-25 and earlier) does not. Tests run concurrently: those that
 * end their server, or read its memory or its whole output, start one of their own.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { Agent, request, type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders } from "node:http";
import { connect, type Socket } from "node:net";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { bundle } from "../build.mjs";
import { block } from "./documents.ts";
import { root, run, runServer, serverPath, start, tempFolder, waitUntil, withEntries, type Finished } from "./helpers.ts";

// ---- The servers ----

/** How long a server gets to close after SIGTERM before it is killed. */
const STOP_GRACE_MS = 5_000;

/** The line on stderr that names the endpoint (http-contract: one line gives the URL). */
const URL_LINE = /(http:\/\/\S+\/mcp)\b/;

/** A server started with --http: where it listens, and what it has printed. */
interface HttpServer {
  port: number;
  pid: number;
  errors: () => string;
  output: () => string;
  /** Sends SIGTERM and resolves once the process has closed. */
  stop: () => Promise<Finished>;
  finish: Promise<Finished>;
}

/** The environment the tests run in, without a bearer token that would lock every server. */
function cleanEnvironment(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("MCP_")));
}

/** Starts `file --http 127.0.0.1:0 ...options` and resolves once it has named its URL. */
async function serveHttp(file: string, options: readonly string[] = [], env: NodeJS.ProcessEnv = {}): Promise<HttpServer> {
  const server = start(process.execPath, [file, "--http", "127.0.0.1:0", ...options], { env: { ...cleanEnvironment(), ...env } });
  let closed = false;
  void server.finish.then(() => (closed = true));
  await waitUntil(() => closed || URL_LINE.test(server.errors()), "the server's URL on stderr", 20_000);
  const url = URL_LINE.exec(server.errors())?.[1];
  if (url === undefined) throw new Error(`the server named no URL; its stderr:\n${server.errors()}`);
  // SIGTERM, as the contract ends it; SIGKILL if it has not closed after a while, so that a server
  // that would not exit fails its test instead of hanging the file.
  const stop = async () => {
    server.child.kill("SIGTERM");
    const killed = setTimeout(() => server.child.kill("SIGKILL"), STOP_GRACE_MS);
    const finished = await server.finish;
    clearTimeout(killed);
    return finished;
  };
  return { port: Number(new URL(url).port), pid: server.child.pid ?? 0, errors: server.errors, output: server.output, stop, finish: server.finish };
}

/** The chapter whose tools the fixture server adds, as a reader adds them. */
const CHAPTER = "docs/tools.md";

/** server.ts with docs/tools.md's imports and its count_lines, wait and deploy entries pasted in,
 * built the project's way into a temporary folder; resolves with the built file. */
async function buildWithTools(): Promise<string> {
  const folder = tempFolder("http-tools-");
  const entries = ["ts count_lines", "ts wait", "ts deploy"].map((info) => block(CHAPTER, info));
  const source = withEntries(readFileSync(join(root, "server.ts"), "utf8"), entries, block(CHAPTER, "ts imports"));
  writeFileSync(join(folder, "server.ts"), source);
  const built = join(folder, "server.mjs");
  const foreign = await bundle(join(folder, "server.ts"), built);
  if (foreign.length > 0) throw new Error(`the fixture server imports ${foreign.join(", ")}`);
  return built;
}

// ---- Messages ----

/** A JSON-RPC message off the wire, as the tests read it. */
interface Wire {
  jsonrpc?: string;
  id?: string | number | null;
  method?: string;
  params?: { [key: string]: unknown };
  result?: { [key: string]: unknown; content?: { type: string; text: string }[]; isError?: boolean };
  error?: { code: number; message: string; data?: { [key: string]: unknown } };
}

/** The stateless revision. */
const MODERN = "2026-07-28";
const PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion";

/** What a 2026-07-28 request carries in `_meta`, with anything else given (a progressToken). */
function modernMeta(extra: object = {}) {
  return {
    [PROTOCOL_VERSION_KEY]: MODERN,
    "io.modelcontextprotocol/clientInfo": { name: "http-test", version: "1" },
    "io.modelcontextprotocol/clientCapabilities": {},
    ...extra,
  };
}

/** A 2026-07-28 request. */
function modernRequest(id: string | number, method: string, params: object = {}, meta: object = {}) {
  return { jsonrpc: "2.0", id, method, params: { ...params, _meta: modernMeta(meta) } };
}

/** A 2026-07-28 tools/call of add. */
function addCall(id: string | number, a: number, b: number) {
  return modernRequest(id, "tools/call", { name: "add", arguments: { a, b } });
}

/** The headers a 2026-07-28 request repeats from its body (basic/transports/streamable-http). */
function modernHeaders(method: string, name?: string): OutgoingHttpHeaders {
  return { "MCP-Protocol-Version": MODERN, "Mcp-Method": method, ...(name === undefined ? {} : { "Mcp-Name": name }) };
}

/** A legacy request: no version anywhere, as after a 2025-11-25 initialize. */
function legacyRequest(id: string | number, method: string, params: object = {}) {
  return { jsonrpc: "2.0", id, method, params };
}

/** The text of a tool result. */
function textOf(message: Wire): string {
  return message.result?.content?.[0]?.text ?? "";
}

// ---- Speaking HTTP ----

/** What a client accepts on every POST (basic/transports/streamable-http §Sending Messages). */
const ACCEPT = "application/json, text/event-stream";

/** An HTTP answer: its status, its headers (names in lower case) and its whole body. */
interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** How `send` shapes a request; a POST of JSON to /mcp unless told otherwise. */
interface Ask {
  path?: string;
  method?: string;
  headers?: OutgoingHttpHeaders;
  /** A keep-alive agent to send it through; none means a connection of its own. */
  agent?: Agent;
  /** Told which socket carries the request. */
  onSocket?: (socket: Socket) => void;
}

/** The request as node:http sends it, unsent. */
function requestFor(port: number, ask: Ask) {
  const headers = { "Content-Type": "application/json", Accept: ACCEPT, ...ask.headers };
  const options = { host: "127.0.0.1", port, path: ask.path ?? "/mcp", method: ask.method ?? "POST", headers, agent: ask.agent ?? false };
  const sent = request(options);
  if (ask.onSocket !== undefined) sent.on("socket", ask.onSocket);
  return sent;
}

/** Sends a message (or no body, for "") and resolves with the whole answer, once it has ended. */
function send(port: number, message: object | string, ask: Ask = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const sent = requestFor(port, ask);
    sent.on("error", reject);
    sent.on("response", (response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (body += chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
      response.on("error", reject);
    });
    sent.end(typeof message === "string" ? message : JSON.stringify(message));
  });
}

/** The one JSON-RPC message of a JSON answer; the answer is in the message when it is not JSON. */
function json(answer: Answer): Wire {
  try {
    return JSON.parse(answer.body);
  } catch {
    throw new Error(`not a JSON answer: ${answer.status} ${JSON.stringify(answer.headers)} ${JSON.stringify(answer.body)}`);
  }
}

/** One server-sent event: its type, and its data as JSON. */
interface StreamEvent {
  event: string | undefined;
  data: Wire;
}

/** The complete events of an event stream's text; comments (keep-alives) are skipped. */
function eventsOf(text: string): StreamEvent[] {
  const blocks = text.split(/\r?\n\r?\n/).slice(0, -1);
  const events: StreamEvent[] = [];
  for (const lines of blocks.map((each) => each.split(/\r?\n/))) {
    const data = lines.filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trimStart());
    const event = lines.find((line) => line.startsWith("event:"))?.slice(6).trim();
    if (data.length > 0) events.push({ event, data: JSON.parse(data.join("\n")) });
  }
  return events;
}

/** A request left open: its answer's status and headers, then its body as it arrives. */
interface OpenCall {
  status: number;
  headers: IncomingHttpHeaders;
  text: () => string;
  events: () => StreamEvent[];
  ended: () => boolean;
  /** Closes the connection, as a client that gives up on the call does. */
  close: () => void;
}

/** Sends a message and resolves as soon as its answer's head has arrived. */
function open(port: number, message: object, ask: Ask = {}): Promise<OpenCall> {
  return new Promise((resolve, reject) => {
    const sent = requestFor(port, ask);
    sent.on("error", reject);
    sent.on("response", (response: IncomingMessage) => {
      let text = "";
      let ended = false;
      sent.off("error", reject).on("error", () => {});
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (text += chunk));
      response.on("close", () => (ended = true));
      response.on("error", () => {});
      const [status, headers] = [response.statusCode ?? 0, response.headers];
      resolve({ status, headers, text: () => text, events: () => eventsOf(text), ended: () => ended, close: () => sent.destroy() });
    });
    sent.end(JSON.stringify(message));
  });
}

/** Writes bytes as they are over a connection of their own, and resolves with every byte that
 * came back (as latin1, one character a byte) once the connection has closed. A write the server
 * refused halfway, or a reset, ends the exchange as a close does. */
function exchangeRaw(port: number, bytes: string | Buffer): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", () => {});
    socket.on("close", () => resolve(Buffer.concat(chunks).toString("latin1")));
    // A server that never closes the connection fails the test, not the whole file.
    socket.setTimeout(30_000, () => socket.destroy());
    socket.write(bytes);
  });
}

/** An HTTP/1.1 answer read off a raw socket, its body un-chunked and decoded as UTF-8. */
function parseAnswer(raw: string): Answer {
  const split = raw.indexOf("\r\n\r\n");
  if (split === -1) throw new Error(`no HTTP answer came back, only ${JSON.stringify(raw)}`);
  const [statusLine = "", ...fields] = raw.slice(0, split).split("\r\n");
  const headers: IncomingHttpHeaders = {};
  for (const field of fields) {
    const colon = field.indexOf(":");
    headers[field.slice(0, colon).toLowerCase()] = field.slice(colon + 1).trim();
  }
  let body = raw.slice(split + 4);
  if (headers["transfer-encoding"] === "chunked") body = unchunk(body);
  return { status: Number(/^HTTP\/1\.[01] (\d{3}) /.exec(statusLine)?.[1]), headers, body: Buffer.from(body, "latin1").toString("utf8") };
}

/** A chunked body's data (RFC 9112 §7.1), from latin1 text. */
function unchunk(text: string): string {
  let data = "";
  for (let at = 0; ; ) {
    const end = text.indexOf("\r\n", at);
    const size = Number.parseInt(text.slice(at, end), 16);
    if (end === -1 || !(size > 0)) return data;
    data += text.slice(end + 2, end + 2 + size);
    at = end + 2 + size + 2;
  }
}

/** A POST of a message to /mcp, written byte for byte: the given header lines after the usual
 * ones, and `Connection: close` so that the server ends the exchange. */
async function postRaw(port: number, headerLines: readonly string[], message: object): Promise<Answer> {
  const body = JSON.stringify(message);
  const head = [
    "POST /mcp HTTP/1.1",
    `Host: 127.0.0.1:${port}`,
    "Content-Type: application/json",
    `Accept: ${ACCEPT}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
    "Connection: close",
    ...headerLines,
  ];
  return parseAnswer(await exchangeRaw(port, `${head.join("\r\n")}\r\n\r\n${body}`));
}

/** An exchange as a failure message shows it. */
function shown(answer: Answer): string {
  return `${answer.status} ${JSON.stringify(answer.headers)} ${JSON.stringify(answer.body)}`;
}

/** Asserts a JSON-RPC error answer: its HTTP status, its code, and the request's id echoed. */
function assertError(answer: Answer, status: number, code: number, id: string | number | null): Wire {
  assert.equal(answer.status, status, shown(answer));
  const reply = json(answer);
  assert.equal(reply.error?.code, code, shown(answer));
  assert.equal(reply.id, id, shown(answer));
  return reply;
}

/** Asserts the answer to addCall(id, 2, 3): 200, JSON, 5. */
function assertSum(answer: Answer, id: string | number): void {
  assert.equal(answer.status, 200, shown(answer));
  const reply = json(answer);
  assert.equal(reply.id, id);
  assert.equal(textOf(reply), "2 + 3 = 5", shown(answer));
}

/** The peak resident memory of a process so far, in KiB (Linux /proc: VmHWM). */
function peakMemoryKiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const peak = /^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1];
  if (peak === undefined) throw new Error(`no VmHWM in /proc/${pid}/status`);
  return Number(peak);
}

/** A log that holds a character no terminal should get raw: C0 but tab and newline, DEL, C1, bidi
 * controls, the line and paragraph separators (server.ts, section 4). */
const UNPRINTABLE = /[\0-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

// ---- The tests ----

describe("Streamable HTTP", { concurrency: true }, () => {
  /** dist/server.mjs, shared by the tests that neither end it nor read all it prints. */
  let shared: HttpServer;
  /** The copy with docs/tools.md's tools, built once; `tools` is one instance of it, shared. */
  let withTools = "";
  let tools: HttpServer;
  before(async () => {
    [shared, withTools] = await Promise.all([serveHttp(serverPath), buildWithTools()]);
    tools = await serveHttp(withTools);
  });
  after(async () => {
    await Promise.all([shared?.stop(), tools?.stop()]);
  });

  describe("the endpoint", { concurrency: true }, () => {
    test("a 2026-07-28 tools/call is answered in JSON", async () => {
      const answer = await send(shared.port, addCall(1, 2, 3), { headers: modernHeaders("tools/call", "add") });
      assert.equal(answer.status, 200, shown(answer));
      assert.match(String(answer.headers["content-type"]), /^application\/json\b/);
      const reply = json(answer);
      assert.deepEqual(reply, {
        jsonrpc: "2.0",
        id: 1,
        result: {
          content: [{ type: "text", text: "2 + 3 = 5" }],
          resultType: "complete",
          _meta: { "io.modelcontextprotocol/serverInfo": { name: "json-rpc-study", version: "0.1.0" } },
        },
      });
    });

    test("a notification is answered 202 with no body", async () => {
      const answer = await send(shared.port, { jsonrpc: "2.0", method: "notifications/initialized" });
      assert.equal(answer.status, 202, shown(answer));
      assert.equal(answer.body, "");
    });

    test("an unknown 2026-07-28 method is answered 404 with -32601", async () => {
      const message = modernRequest(3, "resources/list");
      assertError(await send(shared.port, message, { headers: modernHeaders("resources/list") }), 404, -32601, 3);
    });

    for (const method of ["GET", "DELETE"]) {
      test(`${method} on the endpoint is answered 405, with Allow: POST`, async () => {
        const answer = await send(shared.port, "", { method });
        assert.equal(answer.status, 405, shown(answer));
        assert.equal(answer.headers.allow, "POST");
      });
    }

    test("a POST to another path is answered 404", async () => {
      const answer = await send(shared.port, legacyRequest(1, "ping"), { path: "/other" });
      assert.equal(answer.status, 404, shown(answer));
    });

    test("a body that is not JSON is answered 400 with -32700", async () => {
      assertError(await send(shared.port, "{not json"), 400, -32700, null);
    });

    test("a 2026-07-28 call of an unknown tool stays a protocol error, -32602, answered 200", async () => {
      const message = modernRequest(12, "tools/call", { name: "nope", arguments: {} });
      assertError(await send(shared.port, message, { headers: modernHeaders("tools/call", "nope") }), 200, -32602, 12);
    });

    test("a 2026-07-28 call with bad arguments stays a tool error, answered 200", async () => {
      const message = modernRequest(13, "tools/call", { name: "add", arguments: { a: "1", b: 2 } });
      const answer = await send(shared.port, message, { headers: modernHeaders("tools/call", "add") });
      assert.equal(answer.status, 200, shown(answer));
      assert.equal(json(answer).result?.isError, true, shown(answer));
    });

    test("an MCP-Protocol-Version header naming a version we do not speak is answered 400 with -32022 and the supported versions", async () => {
      // The body names no version: only the header says which one the client wants.
      const answer = await send(shared.port, legacyRequest(4, "tools/list"), { headers: { "MCP-Protocol-Version": "2099-01-01", "Mcp-Method": "tools/list" } });
      const reply = assertError(answer, 400, -32022, 4);
      const supported = reply.error?.data?.supported;
      assert.ok(Array.isArray(supported), shown(answer));
      assert.ok(supported.includes(MODERN) && supported.includes("2025-11-25"), shown(answer));
    });
  });

  describe("the headers of a 2026-07-28 request", { concurrency: true }, () => {
    const VERSION = `MCP-Protocol-Version: ${MODERN}`;
    const METHOD = "Mcp-Method: tools/call";
    const NAME = "Mcp-Name: add";
    /** add with a body whose `_meta` names another version. */
    const legacyBodied = { ...addCall(5, 2, 3), params: { name: "add", arguments: { a: 2, b: 3 }, _meta: { ...modernMeta(), [PROTOCOL_VERSION_KEY]: "2025-11-25" } } };
    const mismatches: { name: string; lines: string[]; message: object }[] = [
      { name: "an MCP-Protocol-Version header of 2026-07-28 over a body of 2025-11-25", lines: [VERSION, METHOD, NAME], message: legacyBodied },
      { name: "an MCP-Protocol-Version header of 2025-11-25 over a body of 2026-07-28", lines: ["MCP-Protocol-Version: 2025-11-25", METHOD, NAME], message: addCall(5, 2, 3) },
      { name: "an Mcp-Method header that names another method", lines: [VERSION, "Mcp-Method: tools/list", NAME], message: addCall(5, 2, 3) },
      { name: "an Mcp-Name header that names another tool", lines: [VERSION, METHOD, "Mcp-Name: nope"], message: addCall(5, 2, 3) },
      { name: "a missing MCP-Protocol-Version header", lines: [METHOD, NAME], message: addCall(5, 2, 3) },
      { name: "a missing Mcp-Method header", lines: [VERSION, NAME], message: addCall(5, 2, 3) },
      { name: "a missing Mcp-Name header", lines: [VERSION, METHOD], message: addCall(5, 2, 3) },
      { name: "an Mcp-Method header in another case (values are case-sensitive)", lines: [VERSION, "Mcp-Method: Tools/Call", NAME], message: addCall(5, 2, 3) },
      { name: "an Mcp-Name header in another case (values are case-sensitive)", lines: [VERSION, METHOD, "Mcp-Name: ADD"], message: addCall(5, 2, 3) },
      { name: "an =?base64?…?= Mcp-Name header that decodes to another tool", lines: [VERSION, METHOD, `Mcp-Name: =?base64?${Buffer.from("nope").toString("base64")}?=`], message: addCall(5, 2, 3) },
    ];
    for (const { name, lines, message } of mismatches) {
      test(`${name} is answered 400 with -32020`, async () => {
        const answer = await postRaw(shared.port, lines, message);
        const reply = assertError(answer, 400, -32020, 5);
        assert.match(reply.error?.message ?? "", /^Header mismatch: /, shown(answer));
      });
    }

    const matches: { name: string; lines: string[] }[] = [
      { name: "header names in other cases", lines: [`mcp-protocol-version: ${MODERN}`, "MCP-METHOD: tools/call", "mCP-nAME: add"] },
      { name: "header values with spaces around them", lines: [`MCP-Protocol-Version:   ${MODERN}  `, "Mcp-Method: \t tools/call \t", "Mcp-Name:  add  "] },
      { name: "an =?base64?…?= Mcp-Name header that decodes to the tool's name", lines: [VERSION, METHOD, `Mcp-Name: =?base64?${Buffer.from("add").toString("base64")}?=`] },
    ];
    for (const { name, lines } of matches) {
      test(`${name} match the body, and the call is answered`, async () => {
        assertSum(await postRaw(shared.port, lines, addCall(6, 2, 3)), 6);
      });
    }

    test("a batch under a 2026-07-28 header is answered 400 with -32600, as its headers could name no one method, and nothing in it runs", async () => {
      const answer = await send(shared.port, [addCall(12, 2, 3)], { headers: modernHeaders("tools/list") });
      assertError(answer, 400, -32600, null);
    });

    test("a batch with no version header is 2025-03-26's, and answered as a batch", async () => {
      const answer = await send(shared.port, [legacyRequest(13, "ping"), legacyRequest(14, "ping")]);
      assert.equal(answer.status, 200, shown(answer));
      assert.deepEqual(JSON.parse(answer.body), [{ jsonrpc: "2.0", id: 13, result: {} }, { jsonrpc: "2.0", id: 14, result: {} }]);
    });
  });

  describe("event streams", { concurrency: true }, () => {
    test("a call that reports progress is answered with an event stream: its progress, then its response, then the end", async () => {
      const message = modernRequest(7, "tools/call", { name: "wait", arguments: { seconds: 2 } }, { progressToken: "wait-7" });
      const answer = await send(tools.port, message, { headers: modernHeaders("tools/call", "wait") });
      assert.equal(answer.status, 200, shown(answer));
      assert.match(String(answer.headers["content-type"]), /^text\/event-stream\b/);
      assert.match(answer.body, /^(event: message\ndata: [^\n]+\n\n)+$/, "each event is `event: message` and one line of data");
      const messages = eventsOf(answer.body).map(({ data }) => data);
      const progress = (step: number) => ({
        jsonrpc: "2.0",
        method: "notifications/progress",
        params: { progressToken: "wait-7", progress: step, total: 2, message: `${step} of 2 seconds` },
      });
      assert.deepEqual(messages.slice(0, 2), [progress(1), progress(2)]);
      assert.equal(messages.length, 3, shown(answer));
      assert.equal(messages[2]?.id, 7);
      assert.equal(textOf(messages[2] ?? {}), "Waited 2 seconds");
    });

    test("closing a call's event stream cancels the call: its handler's signal aborts", async () => {
      const message = modernRequest(8, "tools/call", { name: "wait", arguments: { seconds: 30 } }, { progressToken: "wait-8" });
      const call = await open(tools.port, message, { headers: modernHeaders("tools/call", "wait") });
      try {
        await waitUntil(() => call.events().length > 0, "the call's first progress event", 20_000);
        assert.equal(call.events()[0]?.data.method, "notifications/progress");
      } finally {
        call.close();
      }
      // docs/tools.md: as sleep() rejects with the abort, the server logs that the tool stopped.
      await waitUntil(() => /tool "wait" stopped: The operation was aborted/.test(tools.errors()), "the wait tool's abort on stderr", 20_000);
    });

    test("a notifications/cancelled POSTed by anyone cancels nothing: with no sessions an id names no one client's call", async (t) => {
      const server = await serveHttp(withTools);
      t.after(() => server.stop());
      const message = modernRequest(1, "tools/call", { name: "wait", arguments: { seconds: 2 } }, { progressToken: "wait-1" });
      const call = await open(server.port, message, { headers: modernHeaders("tools/call", "wait") });
      try {
        await waitUntil(() => call.events().length > 0, "the first progress", 20_000);
        const cancel = { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1, reason: "another client" } };
        assert.equal((await send(server.port, cancel)).status, 202);
        await waitUntil(() => call.ended(), "the end of the call's stream", 20_000);
        const last = call.events().at(-1)?.data;
        assert.equal(last?.id, 1, call.text());
        assert.equal(textOf(last ?? {}), "Waited 2 seconds");
      } finally {
        call.close();
      }
    });

    test("closing the connection of a call not yet answered, in JSON, cancels the call too", async (t) => {
      const server = await serveHttp(withTools);
      t.after(() => server.stop());
      // No progressToken: nothing comes back before the response, so the answer's head never does.
      const sent = requestFor(server.port, { headers: modernHeaders("tools/call", "wait") });
      sent.on("error", () => {});
      sent.end(JSON.stringify(modernRequest(9, "tools/call", { name: "wait", arguments: { seconds: 30 } })));
      await new Promise((resolve) => sent.on("finish", resolve));
      // Nothing tells a client that its call has started; a second is ample for it to.
      await sleep(1_000);
      sent.destroy();
      await waitUntil(() => /tool "wait" stopped: The operation was aborted/.test(server.errors()), "the wait tool's abort on stderr", 20_000);
    });

    test("subscriptions/listen is acknowledged first, with the request's id as subscriptionId, and its stream stays open", async () => {
      const message = modernRequest("listen-1", "subscriptions/listen", { notifications: { toolsListChanged: true } });
      const stream = await open(shared.port, message, { headers: modernHeaders("subscriptions/listen") });
      try {
        assert.equal(stream.status, 200);
        assert.match(String(stream.headers["content-type"]), /^text\/event-stream\b/);
        await waitUntil(() => stream.events().length > 0 || stream.ended(), "the acknowledgement", 20_000);
        assert.deepEqual(stream.events()[0]?.data, {
          jsonrpc: "2.0",
          method: "notifications/subscriptions/acknowledged",
          params: { _meta: { "io.modelcontextprotocol/subscriptionId": "listen-1" }, notifications: {} },
        });
        await sleep(1_000);
        assert.equal(stream.ended(), false, `the stream ended: ${JSON.stringify(stream.text())}`);
      } finally {
        stream.close();
      }
    });

    test("the server exits at once on SIGTERM while subscriptions/listen streams are open", async (t) => {
      const server = await serveHttp(serverPath);
      t.after(() => server.stop());
      const listen = (id: string) => open(server.port, modernRequest(id, "subscriptions/listen", { notifications: {} }), { headers: modernHeaders("subscriptions/listen") });
      const streams = await Promise.all(["a", "b", "c"].map(listen));
      t.after(() => streams.forEach((stream) => stream.close()));
      await waitUntil(() => streams.every((stream) => stream.events().length > 0), "every acknowledgement", 20_000);
      let exited = false;
      void server.finish.then(() => (exited = true));
      process.kill(server.pid, "SIGTERM");
      // A server that waits for its open streams to end never exits: they never do.
      await waitUntil(() => exited, "the server's exit after SIGTERM", 10_000);
      await waitUntil(() => streams.every((stream) => stream.ended()), "every stream closed", 10_000);
    });
  });

  describe("the legacy eras", { concurrency: true }, () => {
    const INITIALIZE = legacyRequest(0, "initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "http-test", version: "1" } });

    test("initialize by POST is answered in JSON, with the protocolVersion", async () => {
      const answer = await send(shared.port, INITIALIZE);
      assert.equal(answer.status, 200, shown(answer));
      assert.match(String(answer.headers["content-type"]), /^application\/json\b/);
      assert.equal(json(answer).result?.protocolVersion, "2025-11-25");
    });

    test("no answer carries an Mcp-Session-Id header", async () => {
      const answers = await Promise.all([
        send(shared.port, INITIALIZE),
        send(shared.port, { jsonrpc: "2.0", method: "notifications/initialized" }),
        send(shared.port, legacyRequest(1, "tools/list")),
        send(shared.port, addCall(2, 2, 3), { headers: modernHeaders("tools/call", "add") }),
        send(shared.port, modernRequest(3, "resources/list"), { headers: modernHeaders("resources/list") }),
        send(shared.port, "", { method: "GET" }),
      ]);
      for (const answer of answers) assert.equal(answer.headers["mcp-session-id"], undefined, shown(answer));
    });

    test("Mcp-Session-Id and Last-Event-ID in a request are ignored", async () => {
      const headers = { ...modernHeaders("tools/call", "add"), "Mcp-Session-Id": "no-such-session", "Last-Event-ID": "42" };
      assertSum(await send(shared.port, addCall(9, 2, 3), { headers }), 9);
      const legacy = await send(shared.port, legacyRequest(10, "ping"), { headers: { "Mcp-Session-Id": "no-such-session", "Last-Event-ID": "42" } });
      assert.deepEqual(json(legacy), { jsonrpc: "2.0", id: 10, result: {} }, shown(legacy));
    });

    test("a legacy elicitation goes out on the call's event stream under an id no other client can guess, the client's answer is accepted 202, and the call's result follows", async () => {
      const initialize = legacyRequest(0, "initialize", { protocolVersion: "2025-11-25", capabilities: { elicitation: {} }, clientInfo: { name: "http-test", version: "1" } });
      assert.equal((await send(tools.port, initialize)).status, 200);
      const call = await open(tools.port, legacyRequest(11, "tools/call", { name: "deploy", arguments: { environment: "production" } }));
      try {
        assert.equal(call.status, 200);
        assert.match(String(call.headers["content-type"]), /^text\/event-stream\b/);
        await waitUntil(() => call.events().length > 0 || call.ended(), "the server's question", 20_000);
        const question = call.events()[0]?.data;
        assert.equal(question?.method, "elicitation/create", call.text());
        assert.equal(question?.params?.message, "Deploy to production?");
        // Any client can POST a response: the question's id is one no other client can guess, so
        // an answer to the plain count is nobody's, and the question still waits for its own.
        assert.match(String(question?.id), /^elicitation-\d+-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
        const guessed = { jsonrpc: "2.0", id: String(question?.id).replace(/-[0-9a-f-]{36}$/, ""), result: { action: "decline" } };
        assert.equal((await send(tools.port, guessed)).status, 202);
        const reply = { jsonrpc: "2.0", id: question?.id, result: { action: "accept", content: { confirm: true } } };
        const accepted = await send(tools.port, reply);
        assert.equal(accepted.status, 202, shown(accepted));
        assert.equal(accepted.body, "");
        await waitUntil(() => call.ended(), "the end of the call's stream", 20_000);
        const messages = call.events().map(({ data }) => data);
        assert.equal(messages.length, 2, call.text());
        assert.equal(messages[1]?.id, 11);
        assert.equal(textOf(messages[1] ?? {}), "Deployed to production (a dry run: nothing was changed)");
      } finally {
        call.close();
      }
    });
  });

  describe("many instances", { concurrency: true }, () => {
    /** The first round of a 2026-07-28 deploy, and its retry with the answer and the state. */
    const deploy = (id: number, extra: object = {}) => modernRequest(id, "tools/call",
      { name: "deploy", arguments: { environment: "production" }, ...extra }, { "io.modelcontextprotocol/clientCapabilities": { elicitation: {} } });
    const headers = { headers: modernHeaders("tools/call", "deploy") };

    test("a requestState signed with MCP_STATE_SECRET opens on an instance given the same secret in MCP_STATE_SECRET_FILE, and on no instance with another", async (t) => {
      const folder = tempFolder("http-secret-");
      const file = join(folder, "state.secret");
      writeFileSync(file, "a secret the instances share\n", { mode: 0o600 });
      const [first, second, other] = await Promise.all([
        serveHttp(withTools, [], { MCP_STATE_SECRET: "a secret the instances share" }),
        serveHttp(withTools, [], { MCP_STATE_SECRET_FILE: file }),
        serveHttp(withTools, [], { MCP_STATE_SECRET: "another secret" }),
      ]);
      t.after(() => Promise.all([first.stop(), second.stop(), other.stop()]));
      const round = json(await send(first.port, deploy(1), headers));
      const requestState = round.result?.requestState;
      assert.equal(typeof requestState, "string", JSON.stringify(round));
      const retry = deploy(2, { requestState, inputResponses: { "elicitation-1": { action: "accept", content: { confirm: true } } } });
      const done = json(await send(second.port, retry, headers));
      assert.equal(textOf(done), "Deployed to production (a dry run: nothing was changed)", JSON.stringify(done));
      const refused = json(await send(other.port, retry, headers));
      assert.equal(refused.error?.code, -32602, JSON.stringify(refused));
      for (const server of [first, second]) assert.doesNotMatch(server.errors(), /a secret the instances share/);
    });
  });

  describe("security", { concurrency: true }, () => {
    const refused: { name: string; headers: (port: number) => OutgoingHttpHeaders }[] = [
      { name: "an Origin that is not allowed, with a loopback Host", headers: (port) => ({ Host: `127.0.0.1:${port}`, Origin: "http://evil.example" }) },
      { name: "a Host that is not allowed, with no Origin", headers: () => ({ Host: "evil.example" }) },
      { name: "a Host that is not allowed, with an Origin that is", headers: (port) => ({ Host: "evil.example", Origin: `http://127.0.0.1:${port}` }) },
      { name: "a Host and an Origin that are both not allowed", headers: () => ({ Host: "evil.example", Origin: "http://evil.example" }) },
    ];
    for (const { name, headers } of refused) {
      test(`a request with ${name} is refused 403`, async () => {
        const answer = await send(shared.port, addCall(1, 2, 3), { headers: { ...modernHeaders("tools/call", "add"), ...headers(shared.port) } });
        assert.equal(answer.status, 403, shown(answer));
      });
    }

    test("loopback Hosts and Origins are admitted", async () => {
      const port = shared.port;
      const admitted: OutgoingHttpHeaders[] = [
        { Host: `localhost:${port}` },
        { Host: `[::1]:${port}` },
        { Host: "localhost" },
        { Host: `127.0.0.1:${port}`, Origin: `http://127.0.0.1:${port}` },
        { Host: `localhost:${port}`, Origin: `http://localhost:${port}` },
      ];
      for (const headers of admitted) assertSum(await send(port, addCall(1, 2, 3), { headers: { ...modernHeaders("tools/call", "add"), ...headers } }), 1);
    });

    /** An add call with the given headers, to a server started with the given options. */
    const callWith = (server: HttpServer, headers: OutgoingHttpHeaders) =>
      send(server.port, addCall(1, 2, 3), { headers: { ...modernHeaders("tools/call", "add"), ...headers } });

    test("--allow-host admits its host, in Host and in Origin, and no other", async (t) => {
      const server = await serveHttp(serverPath, ["--allow-host", "mcp.example"]);
      t.after(() => server.stop());
      assertSum(await callWith(server, { Host: "mcp.example" }), 1);
      assertSum(await callWith(server, { Host: "mcp.example:8080", Origin: "https://mcp.example:8080" }), 1);
      assert.equal((await callWith(server, { Host: "evil.example" })).status, 403);
      assert.equal((await callWith(server, { Origin: "https://evil.example" })).status, 403);
    });

    test("--allow-host with no name after it ends the server with its usage, and admits no empty host", async () => {
      const ended = await run(process.execPath, [serverPath, "--http", "127.0.0.1:0", "--allow-host"], "");
      assert.equal(ended.code, 2, ended.stderr);
      assert.match(ended.stderr, /usage: server\.mjs --http/);
    });

    test("an option --http does not know, such as --allow-origin, ends the server with its usage and exit code 2", async () => {
      const ended = await run(process.execPath, [serverPath, "--http", "127.0.0.1:0", "--allow-origin", "https://app.example"], "");
      assert.equal(ended.code, 2, ended.stderr);
      assert.match(ended.stderr, /usage: server\.mjs --http \[HOST:\]PORT \[--allow-host HOST\]\.\.\./);
      assert.equal(ended.stdout, "");
    });

    test("with MCP_BEARER_TOKEN, a request without the token or with another is refused 401, and one with it is answered", async (t) => {
      const server = await serveHttp(serverPath, [], { MCP_BEARER_TOKEN: "token-for-http-test" });
      t.after(() => server.stop());
      const call = (headers: OutgoingHttpHeaders) => send(server.port, addCall(1, 2, 3), { headers: { ...modernHeaders("tools/call", "add"), ...headers } });
      const none = await call({});
      assert.equal(none.status, 401, shown(none));
      assert.match(String(none.headers["www-authenticate"]), /^Bearer\b/, shown(none));
      const wrong = await call({ Authorization: "Bearer not-the-token" });
      assert.equal(wrong.status, 401, shown(wrong));
      assertSum(await call({ Authorization: "Bearer token-for-http-test" }), 1);
    });

    /** A ping padded to 20 MiB: five times the server's limit. */
    const HUGE = Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", params: { pad: "x".repeat(20 * 1024 * 1024) } }));
    const HEAD = (port: number, framing: string) => `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nAccept: ${ACCEPT}\r\n${framing}\r\n\r\n`;
    const bodies: { name: string; bytes: (port: number) => Buffer }[] = [
      { name: "with a Content-Length", bytes: (port) => Buffer.concat([Buffer.from(HEAD(port, `Content-Length: ${HUGE.length}`)), HUGE]) },
      {
        name: "chunked",
        bytes: (port) => {
          const chunks = [];
          for (let at = 0; at < HUGE.length; at += 1024 * 1024) {
            const piece = HUGE.subarray(at, at + 1024 * 1024);
            chunks.push(Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from("\r\n"));
          }
          return Buffer.concat([Buffer.from(HEAD(port, "Transfer-Encoding: chunked")), ...chunks, Buffer.from("0\r\n\r\n")]);
        },
      },
    ];
    for (const { name, bytes } of bodies) {
      test(`a 20 MiB body ${name} is answered 413, and the server answers a ping after it`, async () => {
        const raw = await exchangeRaw(shared.port, bytes(shared.port));
        assert.match(raw, /^HTTP\/1\.1 413 /, `the client read ${JSON.stringify(raw.slice(0, 300))}`);
        assert.match(raw, /\r\nconnection: close\r\n/i, JSON.stringify(raw.slice(0, 300)));
        const ping = await send(shared.port, legacyRequest(2, "ping"));
        assert.deepEqual(json(ping), { jsonrpc: "2.0", id: 2, result: {} });
      });
    }

    test("a client that dribbles its headers is cut off within 60 s, and another client's call is answered meanwhile", async (t) => {
      const dribbler = connect(shared.port, "127.0.0.1");
      let closed = false;
      let received = "";
      dribbler.on("data", (chunk: Buffer) => (received += chunk.toString("latin1")));
      dribbler.on("close", () => (closed = true));
      dribbler.on("error", () => {});
      dribbler.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${shared.port}\r\nX-Dribble: `);
      const dribbling = setInterval(() => dribbler.write("x"), 500);
      try {
        await sleep(1_500);
        assertSum(await send(shared.port, addCall(1, 2, 3), { headers: modernHeaders("tools/call", "add") }), 1);
        await waitUntil(() => closed, "the server to cut the dribbling client off", 60_000);
        t.diagnostic(`the dribbling client read ${JSON.stringify(received.split("\r\n")[0] ?? "")}`);
      } finally {
        clearInterval(dribbling);
        dribbler.destroy();
      }
    });
  });

  describe("load", () => {
    test("500 concurrent keep-alive connections, each with a tools/call of id 1, each get their own answer, within 128 MiB", async (t) => {
      const server = await serveHttp(serverPath);
      const agent = new Agent({ keepAlive: true, maxSockets: 500, maxFreeSockets: 500 });
      t.after(async () => {
        agent.destroy();
        await server.stop();
      });
      const sockets = new Set<Socket>();
      const ask = { agent, headers: modernHeaders("tools/call", "add"), onSocket: (socket: Socket) => sockets.add(socket) };
      for (const b of [1000, 2000]) {
        const answers = await Promise.all(Array.from({ length: 500 }, (_, a) => send(server.port, addCall(1, a, b), ask)));
        for (const [a, answer] of answers.entries()) {
          assert.equal(answer.status, 200, shown(answer));
          const reply = json(answer);
          assert.equal(reply.id, 1);
          assert.equal(textOf(reply), `${a} + ${b} = ${a + b}`);
        }
        // The first round opens 500 connections at once; the second finds them all still open.
        assert.equal(sockets.size, 500, "500 connections, kept alive");
      }
      const peak = peakMemoryKiB(server.pid);
      t.diagnostic(`the server's peak resident memory: ${(peak / 1024).toFixed(1)} MiB`);
      assert.ok(peak <= 128 * 1024, `peak resident memory ${peak} KiB is over 128 MiB`);
    });
  });

  describe("output", { concurrency: true }, () => {
    test("nothing is written to stdout in HTTP mode", async () => {
      const server = await serveHttp(withTools);
      try {
        const progress = modernRequest(1, "tools/call", { name: "wait", arguments: { seconds: 1 } }, { progressToken: "p" });
        const answers = await Promise.all([
          send(server.port, progress, { headers: modernHeaders("tools/call", "wait") }),
          send(server.port, addCall(2, 2, 3), { headers: modernHeaders("tools/call", "add") }),
          send(server.port, legacyRequest(3, "initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "quiet", version: "1" } })),
          send(server.port, { jsonrpc: "2.0", method: "notifications/initialized" }),
          send(server.port, legacyRequest(4, "tools/call", { name: "count_lines", arguments: { path: join(root, "LICENSE") } })),
          send(server.port, modernRequest(5, "resources/list"), { headers: modernHeaders("resources/list") }),
          send(server.port, "{not json"),
        ]);
        assert.equal(eventsOf(answers[0]?.body ?? "").length, 2, "the wait call's progress and response came on its stream");
      } finally {
        await server.stop();
      }
      assert.equal(server.output(), "");
    });

    test("a client's control and bidi characters reach stderr escaped", async () => {
      const name = "evil\u001b]0;owned\u0007 \u009b31m \u202egnp.exe \u2028end";
      const answer = await send(shared.port, legacyRequest(1, "initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name, version: "1" } }));
      assert.equal(answer.status, 200, shown(answer));
      await waitUntil(() => shared.errors().includes("owned"), "the client's name on stderr", 20_000);
      const line = shared.errors().split("\n").find((each) => each.includes("owned")) ?? "";
      assert.doesNotMatch(shared.errors(), UNPRINTABLE, `a raw control character on stderr: ${JSON.stringify(line)}`);
      for (const escaped of ["\\u001b", "\\u0007", "\\u009b", "\\u202e", "\\u2028"]) assert.ok(line.includes(escaped), `${escaped} is not in ${JSON.stringify(line)}`);
    });

    test("without --http, the stdio server answers a ping on stdout as before", async () => {
      const { code, stdout, stderr } = await runServer(['{"jsonrpc":"2.0","id":1,"method":"ping"}']);
      assert.equal(stdout, '{"jsonrpc":"2.0","id":1,"result":{}}\n');
      assert.equal(code, 0);
      assert.match(stderr, /stdio server started/);
    });
  });
});
