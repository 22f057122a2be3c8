/**
 * The server in the stateless era (2026-07-28), tested over raw stdio.
 *
 * A modern request names its version in `params._meta["io.modelcontextprotocol/protocolVersion"]`
 * and declares its client's capabilities beside it (basic/index §_meta); there is no
 * handshake. A dual-era server serves such a request statelessly, and serves a request
 * without that `_meta`, or naming a legacy version, as before (basic/versioning
 * §Backward Compatibility). Every modern result says `resultType: "complete"` and
 * names the server in its `_meta`.
 *
 * The tests share one server: each request is served on its own, which is exactly
 * what the era promises, and the tests that interleave eras check that promise.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { lines, runServer, sharedServer, SUITE } from "./helpers.ts";

/** Every version the server speaks, newest first, as server/discover and -32022 list them. */
const SUPPORTED_VERSIONS = ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/** The reserved `_meta` keys (2026-07-28 basic/index §_meta). */
const PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion";
const CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities";
const CLIENT_INFO = "io.modelcontextprotocol/clientInfo";
const SERVER_INFO = "io.modelcontextprotocol/serverInfo";

/** The `_meta` of a well-formed modern request. */
const MODERN_META = { [PROTOCOL_VERSION]: "2026-07-28", [CLIENT_CAPABILITIES]: {}, [CLIENT_INFO]: { name: "modern-test", version: "1.0.0" } };

/** What every modern result carries. */
const MODERN_FIELDS = { resultType: "complete", _meta: { [SERVER_INFO]: { name: "json-rpc-study", version: "0.1.0" } } };

/** A request line with `meta` as its params._meta: a modern request unless told otherwise. */
function request(id: string | number, method: string, params: { [key: string]: unknown } = {}, meta: unknown = MODERN_META): string {
  return JSON.stringify({ jsonrpc: "2.0", id, method, params: { ...params, _meta: meta } });
}

/** A request line with no _meta at all, as a handshake-era client sends it. */
function legacy(id: string | number, method: string, params: { [key: string]: unknown } = {}): string {
  return JSON.stringify({ jsonrpc: "2.0", id, method, params });
}

/** The server most tests share; a test that ends or breaks its server starts its own. */
const shared = sharedServer();
const call = shared.call;

describe("server/discover", SUITE, () => {
  test("server/discover with modern _meta returns versions, capabilities, server info and cache hints", async () => {
    const reply = await call(request("discover-1", "server/discover"));
    assert.equal(reply.id, "discover-1");
    const { supportedVersions, capabilities, ttlMs, cacheScope, resultType, _meta } = reply.result ?? {};
    assert.deepEqual(supportedVersions, SUPPORTED_VERSIONS);
    assert.deepEqual(capabilities, { tools: {}, logging: {} });
    assert.ok(Number.isInteger(ttlMs) && Number(ttlMs) >= 0, `ttlMs ${ttlMs}`);
    assert.equal(cacheScope, "public");
    assert.equal(resultType, "complete");
    assert.deepEqual(_meta, MODERN_FIELDS._meta);
  });

  test("server/discover without _meta gives the same result", async () => {
    const modern = await call(request(1, "server/discover"));
    const bare = await call('{"jsonrpc":"2.0","id":1,"method":"server/discover"}');
    assert.deepEqual(bare, modern);
  });

  test("server/discover gives the same result after an initialize", async () => {
    const { stdout } = await runServer([
      request(1, "server/discover"),
      legacy(2, "initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } }),
      '{"jsonrpc":"2.0","method":"notifications/initialized"}',
      request(1, "server/discover"),
    ]);
    const [before, initialized, after] = lines(stdout);
    assert.equal(JSON.parse(initialized ?? "{}").result?.protocolVersion, "2025-06-18");
    assert.equal(after, before);
  });

  test("server/discover naming an unsupported version gets -32022, the answer a stdio probe expects", async () => {
    const reply = await call(request(1, "server/discover", {}, { ...MODERN_META, [PROTOCOL_VERSION]: "2099-01-01" }));
    assert.equal(reply.error?.code, -32022);
  });
});

describe("protocol version and client capabilities", SUITE, () => {
  test("an unsupported version gets -32022 with the supported and requested versions", async () => {
    for (const requested of ["1900-01-01", "2099-01-01", "2024-10-07", "2026-07-29", ""]) {
      const reply = await call(request(5, "tools/list", {}, { ...MODERN_META, [PROTOCOL_VERSION]: requested }));
      assert.deepEqual(
        reply,
        { jsonrpc: "2.0", id: 5, error: { code: -32022, message: "Unsupported protocol version", data: { supported: SUPPORTED_VERSIONS, requested } } },
        `requested ${JSON.stringify(requested)}`,
      );
    }
  });

  test("the version is checked before the method and the client capabilities", async () => {
    for (const method of ["server/discover", "tools/call", "no/such/method", "initialize"]) {
      const reply = await call(request(1, method, {}, { [PROTOCOL_VERSION]: "1900-01-01" }));
      assert.equal(reply.error?.code, -32022, method);
    }
  });

  test("a protocol version that is not a string gets -32602", async () => {
    for (const version of [20260728, null, {}, ["2026-07-28"], true, { toString: 1, valueOf: 1 }]) {
      const reply = await call(request(1, "tools/list", {}, { ...MODERN_META, [PROTOCOL_VERSION]: version }));
      assert.equal(reply.error?.code, -32602, `version ${JSON.stringify(version)}`);
      assert.equal(reply.id, 1);
    }
  });

  test("a modern request without client capabilities gets -32602", async () => {
    const missing = await call(request(1, "tools/list", {}, { [PROTOCOL_VERSION]: "2026-07-28" }));
    assert.equal(missing.error?.code, -32602);
    assert.match(missing.error?.message ?? "", /clientCapabilities/);
    for (const capabilities of [null, "tools", [], 1]) {
      const reply = await call(request(1, "server/discover", {}, { [PROTOCOL_VERSION]: "2026-07-28", [CLIENT_CAPABILITIES]: capabilities }));
      assert.equal(reply.error?.code, -32602, `clientCapabilities ${JSON.stringify(capabilities)}`);
    }
  });

  test("optional and foreign _meta keys are accepted beside the required ones", async () => {
    const meta = { ...MODERN_META, "io.modelcontextprotocol/logLevel": "debug", traceparent: "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01", "com.example/x": 1 };
    const reply = await call(request(1, "tools/list", {}, meta));
    assert.equal(reply.result?.resultType, "complete");
  });
});

describe("modern methods", SUITE, () => {
  test("modern tools/list returns the tools with cache hints, resultType and server info", async () => {
    const legacyList = await call(legacy(1, "tools/list"));
    const reply = await call(request(1, "tools/list"));
    const { tools, ttlMs, cacheScope, resultType, _meta, ...rest } = reply.result ?? {};
    assert.deepEqual(tools, legacyList.result?.tools);
    assert.ok(Number.isInteger(ttlMs) && Number(ttlMs) >= 0, `ttlMs ${ttlMs}`);
    assert.ok(cacheScope === "public" || cacheScope === "private", `cacheScope ${cacheScope}`);
    assert.deepEqual({ resultType, _meta }, MODERN_FIELDS);
    assert.deepEqual(rest, {});
  });

  test("modern tools/call add returns the sum with resultType complete", async () => {
    const reply = await call(request(2, "tools/call", { name: "add", arguments: { a: 19, b: 23 } }));
    assert.deepEqual(reply, { jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text: "19 + 23 = 42" }], ...MODERN_FIELDS } });
  });

  test("modern tools/call with a bad argument returns a tool error with resultType complete", async () => {
    const reply = await call(request(3, "tools/call", { name: "add", arguments: { a: "19", b: 23 } }));
    assert.equal(reply.result?.isError, true);
    assert.match(reply.result?.content?.[0]?.text ?? "", /"a"/);
    assert.equal(reply.result?.resultType, "complete");
    assert.deepEqual(reply.result?._meta, MODERN_FIELDS._meta);
  });

  test("modern tools/call with an unknown tool is a -32602 protocol error", async () => {
    const reply = await call(request(4, "tools/call", { name: "nope", arguments: {} }));
    assert.deepEqual(reply, { jsonrpc: "2.0", id: 4, error: { code: -32602, message: "Unknown tool: nope" } });
  });

  test("initialize with modern _meta is method not found: 2026-07-28 removed the handshake", async () => {
    const reply = await call(request(1, "initialize", { protocolVersion: "2026-07-28", capabilities: {}, clientInfo: { name: "t", version: "1" } }));
    assert.equal(reply.error?.code, -32601);
  });

  test("ping with modern _meta is method not found: 2026-07-28 removed ping", async () => {
    const reply = await call(request(1, "ping"));
    assert.equal(reply.error?.code, -32601);
  });

  test("an unknown method with modern _meta is method not found", async () => {
    const reply = await call(request(1, "no/such/method"));
    assert.deepEqual(reply, { jsonrpc: "2.0", id: 1, error: { code: -32601, message: "Method not found: no/such/method" } });
  });

  test("a modern notification is never answered", async () => {
    const { stdout } = await runServer([
      JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1, _meta: MODERN_META } }),
      JSON.stringify({ jsonrpc: "2.0", method: "notifications/x", params: { _meta: { [PROTOCOL_VERSION]: "1900-01-01" } } }),
      '{"jsonrpc":"2.0","id":"alive","method":"ping"}',
    ]);
    assert.equal(stdout, '{"jsonrpc":"2.0","id":"alive","result":{}}\n');
  });
});

describe("legacy requests beside modern ones", SUITE, () => {
  test("a _meta naming a legacy version is served as legacy", async () => {
    for (const version of ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]) {
      const meta = { [PROTOCOL_VERSION]: version };
      assert.deepEqual(await call(request(1, "ping", {}, meta)), { jsonrpc: "2.0", id: 1, result: {} }, version);
      const listed = await call(request(2, "tools/list", {}, meta));
      assert.deepEqual(listed, await call(legacy(2, "tools/list")), version);
      const added = await call(request(3, "tools/call", { name: "add", arguments: { a: 1, b: 2 } }, meta));
      assert.deepEqual(added, { jsonrpc: "2.0", id: 3, result: { content: [{ type: "text", text: "1 + 2 = 3" }] } }, version);
    }
  });

  test("requests without _meta get the legacy answers, with no resultType", async () => {
    assert.equal(
      await shared.ask('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}'),
      '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"1 + 2 = 3"}]}}',
    );
    assert.equal(await shared.ask('{"jsonrpc":"2.0","id":2,"method":"ping"}'), '{"jsonrpc":"2.0","id":2,"result":{}}');
    const listed = await call('{"jsonrpc":"2.0","id":3,"method":"tools/list"}');
    assert.deepEqual(Object.keys(listed.result ?? {}), ["tools"]);
  });

  test("a _meta without a protocol version, or that is not an object, is served as legacy", async () => {
    for (const meta of [{}, { progressToken: 1 }, { [CLIENT_CAPABILITIES]: {} }, "x", null, []]) {
      const reply = await call(request(1, "tools/call", { name: "add", arguments: { a: 1, b: 2 } }, meta));
      assert.deepEqual(reply.result, { content: [{ type: "text", text: "1 + 2 = 3" }] }, JSON.stringify(meta));
    }
  });

  test("modern and legacy requests interleave without either changing the other", async () => {
    const legacyCall = legacy(1, "tools/call", { name: "add", arguments: { a: 1, b: 2 } });
    const modernCall = request(2, "tools/call", { name: "add", arguments: { a: 1, b: 2 } });
    const { stdout } = await runServer([legacyCall, modernCall, legacyCall, modernCall, legacy(3, "ping")]);
    const [legacy1, modern1, legacy2, modern2, pong] = lines(stdout);
    assert.equal(legacy2, legacy1);
    assert.equal(modern2, modern1);
    assert.doesNotMatch(legacy1 ?? "", /resultType/);
    assert.match(modern1 ?? "", /"resultType":"complete"/);
    assert.equal(pong, '{"jsonrpc":"2.0","id":3,"result":{}}');
  });
});

test("server/discover logs who is calling from _meta to stderr, once, and not on other requests", async () => {
  const meta = JSON.stringify(MODERN_META);
  const { stdout, stderr } = await runServer([
    `{"jsonrpc":"2.0","id":"probe","method":"server/discover","params":{"_meta":${meta}}}`,
    `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":${meta}}}`,
  ]);
  assert.equal(lines(stdout).length, 2);
  const said = lines(stderr).filter((line) => line.includes("client="));
  const client = '{"name":"modern-test","version":"1.0.0"}';
  assert.deepEqual(said, [`[server] server/discover: client=${client} protocol="2026-07-28"`]);
});
