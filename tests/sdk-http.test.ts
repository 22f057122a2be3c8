/**
 * Real MCP clients over Streamable HTTP: the official TypeScript SDKs' clients call
 * `node dist/server.mjs --http 127.0.0.1:0` through a recording proxy (tests/fixtures/
 * http-recorder.ts), so that each test sees every HTTP request a client made, headers and all.
 *
 * - SDK v1 (`@modelcontextprotocol/sdk`) speaks the handshake era: it POSTs `initialize` with
 *   2025-11-25, then sends `MCP-Protocol-Version: 2025-11-25` on every later request. It also
 *   tries a GET for a server stream, which the stateless server refuses with 405.
 * - SDK v2 (`@modelcontextprotocol/client`) speaks 2026-07-28: in `"auto"` mode, and pinned to
 *   2026-07-28 too, it opens with `server/discover`; either way each POST carries the era in the
 *   body's `_meta` and in the `MCP-Protocol-Version` and `Mcp-Method` headers (and `Mcp-Name` on
 *   a call), and it never sends `initialize`. In `"legacy"` mode it runs the handshake.
 *
 * Both call `add`, list the tools, and get an unknown tool back as a protocol error (-32602),
 * not as a result. The last tests run legacy elicitation over HTTP: the server's
 * `elicitation/create` goes out on the call's event stream, and the client POSTs its answer.
 */
import { after, before, describe, test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as StreamableHTTPClientTransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as StreamableHTTPClientTransportV2,
  type VersionNegotiationMode,
} from "@modelcontextprotocol/client";
import { serverPath, SUITE } from "./helpers.ts";
import { build } from "./fixtures/runtime-tools.ts";
import {
  exchangesText,
  header,
  isObject,
  methodOf,
  methodsOf,
  startHttpServer,
  startRecorder,
  type Exchange,
  type HttpServer,
  type Recorder,
} from "./fixtures/http-recorder.ts";

/** Who the server says it is. */
const SERVER_INFO = { name: "json-rpc-study", version: "0.1.0" };

/** What add answers for the calls below. */
const SUM = [{ type: "text", text: "19 + 23 = 42" }];

/** The `_meta` key that carries a 2026-07-28 request's version. */
const VERSION_KEY = "io.modelcontextprotocol/protocolVersion";

/** The POSTs that carried a JSON-RPC request or notification, with the method each carried. */
function posts(exchanges: readonly Exchange[]): { exchange: Exchange; method: string }[] {
  return exchanges.flatMap((exchange) => {
    const method = methodOf(exchange);
    return exchange.method === "POST" && method !== undefined ? [{ exchange, method }] : [];
  });
}

/** The `_meta` of a POST's params, or undefined. */
function metaOf(exchange: Exchange): { [key: string]: unknown } | undefined {
  const message = exchange.message;
  const params = isObject(message) ? message.params : undefined;
  return isObject(params) && isObject(params._meta) ? params._meta : undefined;
}

/** Checks that no answer minted a session: the server is stateless in every era. */
function assertNoSession(exchanges: readonly Exchange[]): void {
  const minted = exchanges.filter((exchange) => exchange.responseHeaders["mcp-session-id"] !== undefined);
  assert.deepEqual(minted, [], "no answer carries Mcp-Session-Id");
}

/** dist/server.mjs and a recorder in front of it, for the tests of one describe block. */
function serverBehindRecorder() {
  const running: { server?: HttpServer; recorder?: Recorder } = {};
  before(async () => {
    running.server = await startHttpServer(serverPath);
    running.recorder = await startRecorder(running.server.url);
  });
  after(async () => {
    await running.recorder?.close();
    await running.server?.stop();
  });
  return () => {
    if (running.recorder === undefined) throw new Error("the recorder runs only inside the block's tests");
    return running.recorder;
  };
}

describe("SDK v1 client over Streamable HTTP", SUITE, () => {
  const recorder = serverBehindRecorder();
  const errors: Error[] = [];
  let client: ClientV1;
  let transport: StreamableHTTPClientTransportV1;

  before(async () => {
    client = new ClientV1({ name: "sdk-v1-http", version: "1.0.0" });
    client.onerror = (error) => errors.push(error);
    transport = new StreamableHTTPClientTransportV1(new URL(recorder().url));
    await client.connect(transport);
  });
  after(async () => {
    await client.close();
  });

  test("opens with initialize, negotiates 2025-11-25, and is given no session", () => {
    const exchanges = recorder().exchanges;
    const [first] = posts(exchanges);
    assert.equal(first?.method, "initialize", exchangesText(exchanges));
    assert.equal(header(first.exchange, "mcp-protocol-version"), undefined, "the handshake itself names no version");
    assert.equal(first.exchange.status, 200);
    assert.match(String(first.exchange.responseHeaders["content-type"]), /^application\/json/);
    const answer: unknown = JSON.parse(first.exchange.responseBody);
    assert.ok(isObject(answer) && isObject(answer.result), first.exchange.responseBody);
    assert.equal(answer.result.protocolVersion, "2025-11-25");
    assert.deepEqual(client.getServerVersion(), SERVER_INFO);
    assert.deepEqual(client.getServerCapabilities(), { tools: {}, logging: {} });
    assert.equal(transport.sessionId, undefined);
    assertNoSession(exchanges);
  });

  test("lists the add tool", async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((tool) => [tool.name, tool.inputSchema.required]),
      [["add", ["a", "b"]]],
    );
  });

  test("calls add and gets 19 + 23 = 42", async () => {
    const result = await client.callTool({ name: "add", arguments: { a: 19, b: 23 } });
    assert.deepEqual(result, { content: SUM });
  });

  test("gets an unknown tool back as a protocol error, -32602, not as a result", async () => {
    await assert.rejects(client.callTool({ name: "nope", arguments: {} }), { code: -32602 });
    const call = posts(recorder().exchanges).find(({ exchange }) => exchange.body.includes('"nope"'));
    assert.equal(call?.exchange.status, 200, "a legacy error other than -32700/-32600 is HTTP 200");
  });

  test("sends MCP-Protocol-Version 2025-11-25 on every POST after initialize, and never server/discover", () => {
    const exchanges = recorder().exchanges;
    const methods = methodsOf(exchanges);
    assert.deepEqual(methods.slice(0, 2), ["initialize", "notifications/initialized"]);
    assert.ok(methods.includes("tools/list") && methods.includes("tools/call"), methods.join(", "));
    assert.ok(!methods.includes("server/discover"));
    for (const { exchange, method } of posts(exchanges).slice(1)) {
      assert.equal(header(exchange, "mcp-protocol-version"), "2025-11-25", method);
      assert.equal(metaOf(exchange)?.[VERSION_KEY], undefined, `${method} carries no 2026 _meta`);
    }
    // The notification is acknowledged with 202 and no body.
    const initialized = posts(exchanges).find(({ method }) => method === "notifications/initialized");
    assert.equal(initialized?.exchange.status, 202);
    assert.equal(initialized.exchange.responseBody, "");
  });

  test("tries a GET for a server stream, gets 405 with Allow: POST, and goes on without it", () => {
    const gets = recorder().exchanges.filter((exchange) => exchange.method !== "POST");
    assert.deepEqual(
      gets.map((exchange) => [exchange.method, exchange.status, exchange.responseHeaders.allow]),
      [["GET", 405, "POST"]],
    );
  });

  test("never sees a transport or protocol error", () => {
    assert.deepEqual(errors, []);
  });
});

describe("SDK v2 client over Streamable HTTP", SUITE, () => {
  const recorder = serverBehindRecorder();
  const modes: { mode: VersionNegotiationMode; version: string; opening: string[] }[] = [
    { mode: "auto", version: "2026-07-28", opening: ["server/discover"] },
    // Pinned, it probes all the same: the probe's answer is where it learns the server's info.
    { mode: { pin: "2026-07-28" }, version: "2026-07-28", opening: ["server/discover"] },
    { mode: "legacy", version: "2025-11-25", opening: ["initialize", "notifications/initialized"] },
  ];

  for (const { mode, version, opening } of modes) {
    test(`with versionNegotiation ${JSON.stringify(mode)} it speaks ${version}, calls add and lists tools`, { timeout: 20_000 }, async (t) => {
      const client = new ClientV2({ name: "sdk-v2-http", version: "2.0.0" }, { versionNegotiation: { mode } });
      const errors: Error[] = [];
      client.onerror = (error) => errors.push(error);
      const from = recorder().exchanges.length;
      await client.connect(new StreamableHTTPClientTransportV2(new URL(recorder().url)));
      t.after(() => client.close());

      assert.equal(client.getNegotiatedProtocolVersion(), version);
      assert.deepEqual(client.getServerVersion(), SERVER_INFO);
      const { tools } = await client.listTools();
      assert.deepEqual(
        tools.map((tool) => tool.name),
        ["add"],
      );
      const sum = await client.callTool({ name: "add", arguments: { a: 19, b: 23 } });
      assert.deepEqual(sum.content, SUM);
      await assert.rejects(client.callTool({ name: "nope", arguments: {} }), { code: -32602 });

      const exchanges = recorder().exchanges.slice(from);
      const sent = posts(exchanges);
      const calls = sent.filter(({ method }) => method === "tools/call");
      assert.deepEqual(
        sent.map(({ method }) => method).filter((method) => method !== "tools/call"),
        [...opening, "tools/list"],
        exchangesText(exchanges),
      );
      assert.equal(calls.length, 2);
      // Every POST names the era in its header; only the legacy handshake itself cannot yet.
      for (const { exchange, method } of sent.filter(({ method }) => method !== "initialize")) {
        assert.equal(header(exchange, "mcp-protocol-version"), version, method);
      }
      if (version === "2026-07-28") assertModern(exchanges);
      // The unknown tool's call is a -32602 error, and so HTTP 200, not the 404 of -32601.
      const unknown = calls.find(({ exchange }) => exchange.body.includes('"nope"'));
      assert.equal(unknown?.exchange.status, 200, unknown?.exchange.responseBody);
      assertNoSession(exchanges);
      assert.deepEqual(errors, []);
    });
  }
});

/** Checks what a 2026-07-28 client sends: POSTs only, each with the era in _meta and headers. */
function assertModern(exchanges: readonly Exchange[]): void {
  assert.deepEqual(
    exchanges.filter((exchange) => exchange.method !== "POST").map((exchange) => exchange.method),
    [],
    "no GET and no DELETE",
  );
  for (const { exchange, method } of posts(exchanges)) {
    assert.notEqual(method, "initialize");
    assert.equal(metaOf(exchange)?.[VERSION_KEY], "2026-07-28", `${method} has the era in _meta`);
    assert.equal(header(exchange, "mcp-method"), method);
    const message = exchange.message;
    const params = isObject(message) && isObject(message.params) ? message.params : {};
    if (method === "tools/call") assert.equal(header(exchange, "mcp-name"), params.name);
  }
}

/** The user's answers to the ask tool's two questions, and the questions a handler was asked. */
function user() {
  const asked: string[] = [];
  const answers = [{ action: "accept", content: { ok: true } }, { action: "decline" }] as const;
  const answer = (message: string) => {
    asked.push(message);
    const next = answers[asked.length - 1];
    if (next === undefined) throw new Error(`no answer for ${message}`);
    return next;
  };
  return { asked, answers, answer };
}

/** Starts `file` with `--http` and a recorder in front of it, both ended after test `t`. */
async function serveRecorded(t: TestContext, file: string): Promise<Recorder> {
  const server = await startHttpServer(file);
  t.after(() => server.stop());
  const recorder = await startRecorder(server.url);
  t.after(() => recorder.close());
  return recorder;
}

// Each test has a server of its own: the ask tool counts its starts for the whole process.
describe("elicitation over Streamable HTTP", SUITE, () => {
  let built: { server: string; remove: () => void } | undefined;
  before(async () => {
    built = await build();
  });
  after(() => built?.remove());
  const askServer = () => {
    if (built === undefined) throw new Error("the server with the ask tool is built first");
    return built.server;
  };

  test("SDK v1 (legacy): the questions come on the call's event stream, and the answers POSTed back reach the tool", async (t) => {
    const { asked, answers, answer } = user();
    const client = new ClientV1({ name: "sdk-v1-http-elicitation", version: "1.0.0" }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, (request) => answer(request.params.message));
    const recorder = await serveRecorded(t, askServer());
    await client.connect(new StreamableHTTPClientTransportV1(new URL(recorder.url)));
    t.after(() => client.close());

    const result = await client.callTool({ name: "ask", arguments: { n: 2 } });
    assert.deepEqual(asked, ["Question 1?", "Question 2?"]);
    // The handshake era asks while the handler runs: it starts once.
    assert.deepEqual(result.content, [{ type: "text", text: JSON.stringify({ answers, starts: 1 }) }]);

    const exchanges = recorder.exchanges;
    const call = posts(exchanges).find(({ method }) => method === "tools/call");
    assert.ok(call !== undefined, exchangesText(exchanges));
    assert.match(String(call.exchange.responseHeaders["content-type"]), /^text\/event-stream/);
    const events = call.exchange.responseBody.split("\n\n").filter((event) => event.trim() !== "");
    const methods = events.map((event) => {
      const data = event.split("\n").find((line) => line.startsWith("data: "));
      const message: unknown = data === undefined ? undefined : JSON.parse(data.slice("data: ".length));
      return isObject(message) ? (message.method ?? "response") : "(not JSON)";
    });
    assert.deepEqual(methods, ["elicitation/create", "elicitation/create", "response"]);
    // Each answer is its own POST, a JSON-RPC response, acknowledged with 202 and no body.
    const replies = exchanges.filter((exchange) => isObject(exchange.message) && "result" in exchange.message);
    assert.deepEqual(
      replies.map((exchange) => [exchange.status, exchange.responseBody]),
      [
        [202, ""],
        [202, ""],
      ],
    );
  });

  test("SDK v2 (2026-07-28): each round is a call of its own, retried with the answers and the signed requestState", async (t) => {
    const { asked, answers, answer } = user();
    const capabilities = { elicitation: { form: {} } };
    const versionNegotiation = { mode: { pin: "2026-07-28" } } as const;
    const client = new ClientV2({ name: "sdk-v2-http-elicitation", version: "2.0.0" }, { capabilities, versionNegotiation });
    client.setRequestHandler("elicitation/create", (request) => answer(request.params.message));
    const recorder = await serveRecorded(t, askServer());
    await client.connect(new StreamableHTTPClientTransportV2(new URL(recorder.url)));
    t.after(() => client.close());

    const result = await client.callTool({ name: "ask", arguments: { n: 2 } });
    assert.deepEqual(asked, ["Question 1?", "Question 2?"]);
    // Each round runs the handler again from the start: three starts for two questions.
    assert.deepEqual(result.content, [{ type: "text", text: JSON.stringify({ answers, starts: 3 }) }]);

    const exchanges = recorder.exchanges;
    const calls = posts(exchanges).filter(({ method }) => method === "tools/call");
    const rounds = calls.map(({ exchange }) => {
      const message = exchange.message;
      const params = isObject(message) && isObject(message.params) ? message.params : {};
      return [typeof params.requestState, isObject(params.inputResponses), exchange.status];
    });
    assert.deepEqual(rounds, [
      ["undefined", false, 200],
      ["string", true, 200],
      ["string", true, 200],
    ], exchangesText(exchanges));
    // No request of the server's own: nothing goes back to it but the retried calls.
    assert.ok(exchanges.every((exchange) => methodOf(exchange) !== undefined), exchangesText(exchanges));
    assertModern(exchanges);
  });
});
