/**
 * The server in the handshake era (2024-11-05 to 2025-11-25) and its framing, tested
 * from outside: spawn dist/server.mjs, write JSON-RPC lines to its stdin, read lines
 * from its stdout.
 *
 * Most tests ask one question and read one line back from a server shared by the
 * file: the server keeps no state between requests, so sharing it only saves start-up
 * time. A test that expects silence, reads stderr, or ends the process runs its own
 * server, so that a missing or extra reply cannot spill into the next test.
 *
 * The article tests reproduce the transcripts of "MCPサーバは「SDKなし100行」で作れる"
 * (Qiita, 2026-08-17) byte for byte.
 */
import { describe, test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { once } from "node:events";
import { spawn } from "node:child_process";
import { setTimeout as delay } from "node:timers/promises";
import { ARTICLE_LINES, SERVER_REPLIES, SERVER_SESSION } from "./fixtures/article-session.ts";
import { ask, lines, messages, run, runServer, serverPath, sharedServer, start, SUITE, track, type Reply } from "./helpers.ts";

/** A tool as tools/list describes it. */
interface Tool {
  name: string;
  description: string;
  inputSchema: { type: string; properties: { [name: string]: { type: string } | undefined }; required: string[] };
}

/** Handshake-era versions the server speaks, newest first. */
const LEGACY_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/** A ping, sent after input that must get no reply: its answer must be the only line. */
const PING = '{"jsonrpc":"2.0","id":"alive","method":"ping"}';
const PONG = '{"jsonrpc":"2.0","id":"alive","result":{}}';

/** A request line. */
function request(id: string | number, method: string, params?: unknown): string {
  return JSON.stringify({ jsonrpc: "2.0", id, method, params });
}

/** A tools/call of add, with `args` as raw JSON text so that 1e400 reaches the server as written. */
function add(args: string, id: string | number = 1): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"tools/call","params":{"name":"add","arguments":${args}}}`;
}

/** Starts a server of the test's own, killed when the test ends even if an assertion failed first. */
function startServer(t: TestContext): ReturnType<typeof start> {
  const started = start(process.execPath, [serverPath]);
  t.after(() => {
    started.child.kill();
  });
  return started;
}

/** The server most tests share; a test that ends or breaks its server starts its own. */
const shared = sharedServer();
const call = shared.call;

/** The text of a tool result's first content block. */
function text(reply: Reply | undefined): string {
  return reply?.result?.content?.[0]?.text ?? "";
}

describe("the article's transcripts", SUITE, () => {
  // The article's session, one exchange per step: [initialize, initialized, add, no/such/method, not JSON].
  const [initialize, initialized, addCall, noSuchMethod, notJSON] = SERVER_SESSION;
  assert.ok(initialize && initialized && addCall && noSuchMethod && notJSON);

  test("initialize from manual-test gets the article's reply byte for byte", async () => {
    assert.equal(await shared.ask(initialize.send), initialize.reply);
  });

  test("notifications/initialized gets no reply and is logged to stderr", async () => {
    const { stdout, stderr } = await runServer([initialized.send, PING]);
    assert.equal(stdout, `${PONG}\n`);
    assert.match(stderr, /initialized/);
  });

  test("tools/call add 19 and 23 gets the article's reply byte for byte", async () => {
    assert.equal(await shared.ask(addCall.send), addCall.reply);
  });

  test("an unknown method gets the article's -32601 reply byte for byte", async () => {
    assert.equal(await shared.ask(noSuchMethod.send), noSuchMethod.reply);
  });

  test("a line that is not JSON gets the article's -32700 reply byte for byte", async () => {
    assert.equal(await shared.ask(notJSON.send), notJSON.reply);
  });

  test("the article's whole session prints exactly its four replies and exits 0", async () => {
    const { code, stdout } = await runServer(ARTICLE_LINES);
    assert.equal(stdout, SERVER_REPLIES.map((line) => `${line}\n`).join(""));
    assert.equal(SERVER_REPLIES.length, 4);
    assert.equal(code, 0);
  });
});

describe("initialize", SUITE, () => {
  test("initialize answers each legacy version the client asks for with that version", async () => {
    for (const protocolVersion of LEGACY_VERSIONS) {
      const reply = await call(request(1, "initialize", { protocolVersion, capabilities: {}, clientInfo: { name: "t", version: "1" } }));
      assert.equal(reply.result?.protocolVersion, protocolVersion);
    }
  });

  test("initialize answers 2025-11-25 to a version it does not speak, a number or no version", async () => {
    const asked = ['"2099-01-01"', '"2024-10-07"', '"2026-07-28"', '""', "20250618", "null", '{"toString":1}'];
    for (const version of asked) {
      const reply = await call(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":${version},"capabilities":{}}}`);
      assert.equal(reply.result?.protocolVersion, "2025-11-25", `protocolVersion ${version}`);
    }
    const missing = await call('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}');
    assert.equal(missing.result?.protocolVersion, "2025-11-25");
    const noParams = await call('{"jsonrpc":"2.0","id":1,"method":"initialize"}');
    assert.equal(noParams.result?.protocolVersion, "2025-11-25");
  });

  test("initialize declares the tools capability and names the server", async () => {
    const reply = await call(request("init", "initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } }));
    assert.deepEqual(reply, {
      jsonrpc: "2.0",
      id: "init",
      result: { protocolVersion: "2025-11-25", capabilities: { tools: {}, logging: {} }, serverInfo: { name: "json-rpc-study", version: "0.1.0" } },
    });
  });

  test("initialize logs the client's name, version and protocol to stderr, not stdout", async () => {
    const { stdout, stderr } = await runServer([
      request(1, "initialize", { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "log-probe", version: "9.8.7" } }),
    ]);
    const logged = stderr.split("\n").find((line) => line.includes("log-probe")) ?? "";
    assert.match(logged, /initialize/);
    assert.match(logged, /9\.8\.7/);
    assert.match(logged, /2025-03-26/);
    assert.doesNotMatch(stdout, /log-probe/);
  });
});

describe("requests and notifications", SUITE, () => {
  test("notifications, known or unknown, are never answered", async () => {
    const { stdout } = await runServer([
      '{"jsonrpc":"2.0","method":"notifications/initialized"}',
      '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"test"}}',
      '{"jsonrpc":"2.0","method":"notifications/no-such-notification","params":{}}',
      '{"jsonrpc":"2.0","method":"no/such/method"}',
      '{"jsonrpc":"2.0","method":"ping"}',
      '{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":"2025-06-18"}}',
      '{"jsonrpc":"2.0","method":"tools/call","params":{"name":"nope"}}',
      '{"jsonrpc":"2.0","method":"toString"}',
      PING,
    ]);
    assert.equal(stdout, `${PONG}\n`);
  });

  test("ping returns an empty result", async () => {
    assert.deepEqual(await call('{"jsonrpc":"2.0","id":7,"method":"ping"}'), { jsonrpc: "2.0", id: 7, result: {} });
  });

  test("tools/list returns the add tool with numbers a and b both required", async () => {
    const reply: { result: { tools: Tool[]; resultType?: unknown } } = JSON.parse(await shared.ask('{"jsonrpc":"2.0","id":1,"method":"tools/list"}'));
    const { tools, resultType } = reply.result;
    assert.deepEqual(
      tools.map((tool) => tool.name),
      ["add"],
    );
    const [tool] = tools;
    assert.ok(tool);
    const { description, inputSchema } = tool;
    assert.equal(typeof description, "string");
    assert.equal(inputSchema.type, "object");
    assert.equal(inputSchema.properties.a?.type, "number");
    assert.equal(inputSchema.properties.b?.type, "number");
    assert.deepEqual([...inputSchema.required].sort(), ["a", "b"]);
    assert.equal(resultType, undefined, "a legacy result has no resultType");
  });

  test("string ids and integer ids are echoed exactly", async () => {
    for (const id of ["abc", "", "日本語", 0, -1, 42, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER]) {
      const reply = await call(request(id, "ping"));
      assert.deepEqual(reply, { jsonrpc: "2.0", id, result: {} }, `id ${JSON.stringify(id)}`);
    }
  });

  test("an integer id too large to hold exactly is never answered under a different id", async () => {
    // 2^53 + 1 parses to 2^53 in JavaScript: echoing that would answer a request the client never sent.
    const line = await shared.ask('{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}');
    const id = /"id":([^,}]*)/.exec(line)?.[1];
    if (id === "null") {
      assert.equal(JSON.parse(line).error?.code, -32600);
    } else {
      assert.equal(id, "9007199254740993", `answered as ${line}`);
    }
  });
});

describe("tools/call", SUITE, () => {
  test("add returns the sum of two numbers as text", async () => {
    assert.deepEqual(await call(add('{"a":1.5,"b":-2.25}')), {
      jsonrpc: "2.0",
      id: 1,
      result: { content: [{ type: "text", text: "1.5 + -2.25 = -0.75" }] },
    });
  });

  test("an argument that is not a finite number is a tool error naming it, never a sum", async () => {
    const notFinite = ['"1"', "null", "[]", "{}", "true", "1e400", "-1e400", '"NaN"'];
    for (const name of ["a", "b"]) {
      const other = name === "a" ? "b" : "a";
      for (const value of [...notFinite, undefined]) {
        const args = value === undefined ? `{"${other}":2}` : `{"${name}":${value},"${other}":2}`;
        const reply = await call(add(args));
        assert.equal(reply.result?.isError, true, `arguments ${args}`);
        assert.match(text(reply), new RegExp(`"${name}"`), `arguments ${args}`);
        assert.doesNotMatch(text(reply), /=|NaN|Infinity|12/, `arguments ${args}`);
      }
    }
  });

  test("no arguments at all is a tool error naming a", async () => {
    const reply = await call('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add"}}');
    assert.equal(reply.result?.isError, true);
    assert.match(text(reply), /"a"/);
  });

  test("a sum that overflows to Infinity is a tool error", async () => {
    for (const args of ['{"a":1e308,"b":1e308}', '{"a":-1e308,"b":-1e308}']) {
      const reply = await call(add(args));
      assert.equal(reply.result?.isError, true, `arguments ${args}`);
      assert.doesNotMatch(text(reply), /Infinity|= /, `arguments ${args}`);
    }
  });

  test("an unknown tool is a -32602 protocol error naming it", async () => {
    const reply = await call('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nope","arguments":{}}}');
    assert.deepEqual(reply, { jsonrpc: "2.0", id: 3, error: { code: -32602, message: "Unknown tool: nope" } });
  });

  test("tools/call without params or without a string name is a -32602 protocol error", async () => {
    const calls = [
      '{"jsonrpc":"2.0","id":1,"method":"tools/call"}',
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}',
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5,"arguments":{"a":1,"b":2}}}',
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":null,"arguments":{"a":1,"b":2}}}',
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":["add"],"arguments":{"a":1,"b":2}}}',
    ];
    for (const line of calls) {
      assert.equal((await call(line)).error?.code, -32602, line);
    }
  });

  test("arguments that are not an object are a -32602 protocol error", async () => {
    for (const args of ["[1,2]", "[]", '"a=1,b=2"', "42", "null"]) {
      const reply = await call(add(args));
      assert.equal(reply.error?.code, -32602, `arguments ${args}`);
      assert.match(reply.error?.message ?? "", /arguments/);
    }
  });

  test("a __proto__ key never supplies arguments", async () => {
    const hidden = await call(add('{"__proto__":{"a":1,"b":2}}'));
    assert.equal(hidden.result?.isError, true);
    const beside = await call(add('{"__proto__":{"a":100},"a":1,"b":2}'));
    assert.equal(text(beside), "1 + 2 = 3");
  });
});

describe("framing", SUITE, () => {
  test("a line that is not valid JSON gets -32700 with id null", async () => {
    for (const line of ["this is not json", "{", '{"jsonrpc":"2.0","id":1,', "[1,]", "{'id':1}", "NaN", '{"jsonrpc":"2.0","id":1,"method":"ping"}}']) {
      assert.deepEqual(await call(line), { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } }, line);
    }
  });

  test("a JSON value that is not a message gets -32600 with id null", async () => {
    for (const line of ["null", "42", '"str"', "true", "false", "{}", '{"id":1.5}', '{"jsonrpc":"2.0"}']) {
      const reply = await call(line);
      assert.equal(reply.error?.code, -32600, line);
      assert.equal(reply.id, null, line);
    }
  });

  test("an invalid request names its id when a string or integer id can be read", async () => {
    const cases: [line: string, id: string | number][] = [
      ['{"jsonrpc":"1.0","id":7,"method":"ping"}', 7],
      ['{"id":8,"method":"ping"}', 8],
      ['{"jsonrpc":2,"id":"nine","method":"ping"}', "nine"],
      ['{"jsonrpc":"2.0","id":10,"method":5}', 10],
      ['{"jsonrpc":"2.0","id":11,"method":null}', 11],
      ['{"jsonrpc":"2.0","id":12}', 12],
      ['{"jsonrpc":"2.0","id":13,"method":"ping","params":"string"}', 13],
      ['{"jsonrpc":"2.0","id":14,"method":"ping","params":14}', 14],
      ['{"jsonrpc":"2.0","id":15,"method":"ping","params":null}', 15],
      ['{"jsonrpc":"2.0","id":16,"method":"ping","params":true}', 16],
    ];
    for (const [line, id] of cases) {
      const reply = await call(line);
      assert.equal(reply.error?.code, -32600, line);
      assert.equal(reply.id, id, line);
    }
  });

  test("an id that is a float, an object, a boolean, an array or null gets -32600 with id null", async () => {
    for (const id of ["1.5", "{}", '{"id":1}', "true", "[1]", "null", "1e400"]) {
      const line = `{"jsonrpc":"2.0","id":${id},"method":"ping"}`;
      const reply = await call(line);
      assert.equal(reply.error?.code, -32600, line);
      assert.equal(reply.id, null, line);
    }
  });

  test("a malformed notification gets -32600 with id null", async () => {
    for (const line of ['{"jsonrpc":"2.0","method":5}', '{"jsonrpc":"2.0","method":null}', '{"jsonrpc":"2.0","method":"x","params":"s"}', '{"jsonrpc":"1.0","method":"x"}']) {
      const reply = await call(line);
      assert.equal(reply.error?.code, -32600, line);
      assert.equal(reply.id, null, line);
    }
  });

  test("names from Object.prototype are not methods", async () => {
    const names = ["toString", "constructor", "__proto__", "hasOwnProperty", "valueOf", "isPrototypeOf", "toLocaleString", "__defineGetter__"];
    for (const method of names) {
      assert.deepEqual(await call(request(1, method)), { jsonrpc: "2.0", id: 1, error: { code: -32601, message: `Method not found: ${method}` } });
    }
  });

  test("responses sent to the server get no answer", async () => {
    const { stdout } = await runServer([
      '{"jsonrpc":"2.0","id":1,"result":{}}',
      '{"jsonrpc":"2.0","id":"x","result":{"content":[]}}',
      '{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found"}}',
      '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}',
      '{"jsonrpc":"2.0","id":3,"result":null}',
      PING,
    ]);
    assert.equal(stdout, `${PONG}\n`);
  });

  test("blank lines and whitespace-only lines are ignored", async () => {
    const { stdout, code } = await run(process.execPath, [serverPath], `\n\n   \n\t\n \t \r\n\r\n${PING}\n\n`);
    assert.equal(stdout, `${PONG}\n`);
    assert.equal(code, 0);
  });

  test("CRLF line endings work", async () => {
    const { stdout } = await run(process.execPath, [serverPath], `${request(1, "ping")}\r\n${add('{"a":2,"b":3}', 2)}\r\n`);
    assert.deepEqual(messages(stdout), [
      { jsonrpc: "2.0", id: 1, result: {} },
      { jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text: "2 + 3 = 5" }] } },
    ]);
  });

  test("a last line without a newline is answered at the end of input", async () => {
    const { stdout, code } = await run(process.execPath, [serverPath], `${request(1, "ping")}\n${request(2, "ping")}`);
    assert.deepEqual(messages(stdout), [
      { jsonrpc: "2.0", id: 1, result: {} },
      { jsonrpc: "2.0", id: 2, result: {} },
    ]);
    assert.equal(code, 0);
  });

  test("a line that arrives in pieces, split inside a UTF-8 character, is answered once whole", async (t) => {
    const { child, finish } = startServer(t);
    const bytes = Buffer.from(`${request(1, "héllo/wörld")}\n`);
    const cut = bytes.indexOf(0xc3) + 1; // between the two bytes of "é"
    const reply = new Promise<string>((resolve) => child.stdout.once("data", resolve));
    child.stdin.write(bytes.subarray(0, cut));
    await delay(50);
    child.stdin.write(bytes.subarray(cut, cut + 10));
    await delay(50);
    child.stdin.end(bytes.subarray(cut + 10));
    assert.equal(await reply, '{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found: héllo/wörld"}}\n');
    await finish;
  });
});

describe("batches (JSON-RPC 2.0 §6)", SUITE, () => {
  test("an empty batch gets one -32600 error that is not an array", async () => {
    const reply: Reply = JSON.parse(await shared.ask("[]"));
    assert.ok(!Array.isArray(reply));
    assert.equal(reply.id, null);
    assert.equal(reply.error?.code, -32600);
  });

  test("a batch of requests gets one array line of answers in order", async () => {
    const batch = `[${request(1, "ping")},${add('{"a":2,"b":3}', 2)},${request("three", "tools/list")},${request(4, "nope")}]`;
    const replies: Reply[] = JSON.parse(await shared.ask(batch));
    assert.ok(Array.isArray(replies));
    assert.deepEqual(
      replies.map((reply) => reply.id),
      [1, 2, "three", 4],
    );
    assert.deepEqual(replies[0], { jsonrpc: "2.0", id: 1, result: {} });
    assert.equal(text(replies[1]), "2 + 3 = 5");
    assert.ok(Array.isArray(replies[2]?.result?.tools));
    assert.equal(replies[3]?.error?.code, -32601);
  });

  test("a batch of only notifications gets no reply at all", async () => {
    const { stdout } = await runServer(['[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","method":"x/y"}]', PING]);
    assert.equal(stdout, `${PONG}\n`);
  });

  test("a batch of only responses gets no reply at all", async () => {
    const { stdout } = await runServer(['[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"m"}}]', PING]);
    assert.equal(stdout, `${PONG}\n`);
  });

  test("each invalid element of a batch gets its own -32600 in place, and notifications none", async () => {
    const batch = `[${request(1, "ping")},1,{"foo":"bar"},{"jsonrpc":"2.0","method":"notifications/initialized"},${request(2, "nope")},{"jsonrpc":"2.0","id":3,"method":"ping","params":"x"}]`;
    const replies: Reply[] = JSON.parse(await shared.ask(batch));
    assert.deepEqual(
      replies.map((reply) => [reply.id, reply.error?.code ?? "result"]),
      [
        [1, "result"],
        [null, -32600],
        [null, -32600],
        [2, -32601],
        [3, -32600],
      ],
    );
  });

  test("a nested empty batch gets an array holding one -32600", async () => {
    const replies: Reply[] = JSON.parse(await shared.ask("[[]]"));
    assert.ok(Array.isArray(replies));
    assert.equal(replies.length, 1);
    assert.equal(replies[0]?.id, null);
    assert.equal(replies[0]?.error?.code, -32600);
  });
});

describe("hostile input", SUITE, () => {
  const hostile: { [name: string]: string | Buffer } = {
    "a clientInfo name with its own toString": '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":{"toString":1}}}}',
    "a clientInfo that is not an object": '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":"x","protocolVersion":{"valueOf":1}}}',
    "arrays nested 100000 deep": `${"[".repeat(100_000)}${"]".repeat(100_000)}`,
    "objects nested 100000 deep in params": `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":${'{"x":'.repeat(100_000)}1${"}".repeat(100_000)}}}`,
    "a 5 MB line": request(1, "ping", { padding: "x".repeat(5_000_000) }),
    "a 5 MB method name": request(1, "m".repeat(5_000_000)),
    "bytes that are not UTF-8": Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80, 0x80]),
    "bytes that are not UTF-8 inside a JSON string": Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":1,"method":"'), Buffer.from([0xff, 0xc3, 0x28]), Buffer.from('"}')]),
    "a lone surrogate escape in a method": '{"jsonrpc":"2.0","id":1,"method":"\\ud800"}',
    "a __proto__ key in params": '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"__proto__":{"name":"add"},"arguments":{"a":1,"b":2}}}',
    "a __proto__ key in the message": '{"__proto__":{"jsonrpc":"2.0","method":"ping"},"id":1}',
    "a hostile protocolVersion object in _meta": '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":{"toString":1,"valueOf":1}}}}',
    "a NUL byte": '{"jsonrpc":"2.0","id":1,"method":"ping\u0000"}',
  };

  for (const [name, input] of Object.entries(hostile)) {
    test(`${name} leaves the server answering, with only JSON on stdout`, async () => {
      const { code, stdout } = await run(process.execPath, [serverPath], Buffer.concat([Buffer.from(input), Buffer.from(`\n${PING}\n`)]));
      const replies = messages(stdout);
      assert.deepEqual(replies.at(-1), JSON.parse(PONG));
      assert.equal(replies.length, 2, "one answer for the hostile line, one for the ping");
      assert.equal(code, 0);
    });
  }

  test("after every hostile input in one session the server still answers a ping", async () => {
    const input = Buffer.concat(Object.values(hostile).flatMap((line) => [Buffer.from(line), Buffer.from("\n")]));
    const { code, stdout } = await run(process.execPath, [serverPath], Buffer.concat([input, Buffer.from(`${PING}\n`)]));
    const replies = messages(stdout);
    assert.equal(replies.length, Object.keys(hostile).length + 1);
    assert.deepEqual(replies.at(-1), JSON.parse(PONG));
    assert.equal(code, 0);
  });

  test("a line longer than the longest JavaScript string does not crash the server", { timeout: 15_000 }, async (t) => {
    // V8 caps a string at 2^29 - 24 UTF-16 units on 64-bit builds; one ASCII byte is one unit.
    const longest = 2 ** 29 - 24;
    const chunk = Buffer.alloc(1 << 20, "a");
    const { child, finish } = startServer(t);
    child.stdin.on("error", () => {}); // a crashed server closes the pipe under our last writes
    // One listener for the exit, not one per write that waits: 512 of them would leak.
    const exited = new Promise((resolve) => child.once("exit", resolve));
    for (let sent = 0; sent <= longest && child.exitCode === null; sent += chunk.length) {
      if (!child.stdin.write(chunk)) await Promise.race([once(child.stdin, "drain"), exited]);
    }
    child.stdin.end(`\n${PING}\n`);
    const { code, stdout, stderr } = await finish;
    assert.doesNotMatch(stderr, /RangeError|\n\s+at /);
    assert.deepEqual(messages(stdout).at(-1), JSON.parse(PONG));
    assert.equal(code, 0);
  });
});

describe("pipelining", SUITE, () => {
  test("10,000 tools/call requests written at once are answered in order with correct sums", async () => {
    const count = 10_000;
    const input = Array.from({ length: count }, (_, index) => add(`{"a":${index + 1},"b":${(index + 1) * 2}}`, index + 1));
    const { code, stdout } = await runServer(input);
    const replies: Reply[] = lines(stdout).map((line) => JSON.parse(line));
    assert.equal(replies.length, count);
    replies.forEach((reply, index) => {
      const n = index + 1;
      assert.equal(reply.id, n);
      assert.equal(text(reply), `${n} + ${n * 2} = ${n * 3}`);
    });
    assert.equal(code, 0);
  });
});

describe("lifecycle", SUITE, () => {
  test("at the end of input the server writes every pending reply and exits 0", { timeout: 5_000 }, async (t) => {
    const { child, finish } = startServer(t);
    child.stdin.end(Array.from({ length: 1000 }, (_, index) => `${request(index, "tools/list")}\n`).join(""));
    const { code, signal, stdout } = await finish;
    const replies: Reply[] = lines(stdout).map((line) => JSON.parse(line));
    assert.deepEqual(
      replies.map((reply) => reply.id),
      Array.from({ length: 1000 }, (_, index) => index),
    );
    assert.deepEqual({ code, signal }, { code: 0, signal: null });
  });

  test("an idle server exits 0 as soon as its stdin closes", { timeout: 2_000 }, async (t) => {
    // 2 s is the grace an SDK client gives before it escalates to SIGTERM (stdio §Shutdown).
    const { child, finish } = startServer(t);
    assert.equal(await ask(child, PING), PONG);
    child.stdin.end();
    const { code, signal } = await finish;
    assert.deepEqual({ code, signal }, { code: 0, signal: null });
  });

  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    test(`${signal} ends the server`, { timeout: 5_000 }, async (t) => {
      const { child, finish } = startServer(t);
      assert.equal(await ask(child, PING), PONG);
      child.kill(signal);
      const ended = await finish;
      assert.equal(ended.signal, signal);
    });
  }

  test("stdout carries only JSON-RPC: the start-up log goes to stderr", async () => {
    const { stdout, stderr } = await runServer([PING]);
    assert.equal(stdout, `${PONG}\n`);
    assert.match(stderr, /started/);
    assert.ok(lines(stderr).every((line) => line.startsWith("[server] ")));
  });

  test("a client that stops reading stdout makes the server stop reading stdin", { timeout: 10_000 }, async (t) => {
    const { child, finish, output } = startServer(t);
    assert.equal(await ask(child, PING), PONG);
    child.stdout.pause();
    // ~2 MB of tools/list asks for ~14 MB of replies; a server that keeps reading buffers them all.
    const count = 40_000;
    const input = Array.from({ length: count }, (_, index) => `${request(index, "tools/list")}\n`).join("");
    const written = new Promise<string>((resolve) => child.stdin.write(input, () => resolve("read by the server")));
    // A server that respects backpressure never takes all of it while stdout is unread; we watch for 1.5 s.
    assert.equal(await Promise.race([written, delay(1500, "held back")]), "held back");
    child.stdout.resume();
    child.stdin.end();
    const { code } = await finish;
    assert.equal(lines(output()).length, count + 1, "every request is answered once the client reads again");
    assert.equal(code, 0);
  });
});

test("a response is never answered, even a malformed one: its id is not the client's to receive", async () => {
  const { code, stdout } = await runServer([
    '{"jsonrpc":"2.0","id":1,"result":{},"error":null}',
    '{"id":2,"result":{}}',
    '{"jsonrpc":"2.0","error":{"code":-32600,"message":"x"}}',
    '{"jsonrpc":"2.0","id":3,"method":"ping"}',
  ]);
  assert.equal(code, 0);
  assert.deepEqual(lines(stdout), ['{"jsonrpc":"2.0","id":3,"result":{}}']);
});

describe("tool arguments, checked against the tool's inputSchema", SUITE, () => {
  test("a missing argument is a tool error saying it is required", async () => {
    const reply = await call(add('{"a":1}'));
    assert.equal(reply.result?.isError, true);
    assert.equal(text(reply), 'Invalid arguments: "b" is required');
  });

  test("an argument of the wrong JSON type is a tool error naming the type", async () => {
    for (const value of ['"1"', "null", "[]", "{}", "true"]) {
      const reply = await call(add(`{"a":${value},"b":2}`));
      assert.equal(text(reply), 'Invalid arguments: "a" must be a number', value);
    }
  });

  test("a number too large for a double passes the schema but not the handler", async () => {
    assert.equal(text(await call(add('{"a":1,"b":1e400}'))), 'Invalid arguments: "b" must be finite');
  });
});

describe("strict where the wire is strict", SUITE, () => {
  test("a line that is not valid UTF-8 is a parse error, not an id the client never sent", async () => {
    const line = Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":"a'), Buffer.from([0xff]), Buffer.from('b","method":"ping"}\n')]);
    const { stdout } = await run(process.execPath, [serverPath], Buffer.concat([line, Buffer.from(`${PING}\n`)]));
    assert.deepEqual(messages(stdout), [{ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } }, JSON.parse(PONG)]);
  });

  test("bytes that are not UTF-8 are refused even when they fall across two chunks", async (t) => {
    const { child, finish } = startServer(t);
    // 0xe6 starts a three-byte character; the next chunk's "A" cannot continue it.
    const reply = new Promise<string>((resolve) => child.stdout.once("data", resolve));
    child.stdin.write(Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":1,"method":"'), Buffer.from([0xe6])]));
    await delay(50);
    child.stdin.end('A"}\n');
    assert.equal(await reply, '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}\n');
    await finish;
  });

  test("a line of whitespace that JSON does not know is a parse error, not a blank line", async () => {
    for (const space of ["\v", "\f", "\u00a0", "\u2028", "\ufeff\ufeff"]) {
      const { stdout } = await runServer([space, PING]);
      assert.equal(messages(stdout).length, 2, JSON.stringify(space));
      assert.equal((messages(stdout)[0] as Reply).error?.code, -32700, JSON.stringify(space));
    }
  });

  test("a line over 64 MiB is answered with one -32600 naming its size, and the next line is served", { timeout: 30_000 }, async (t) => {
    const { child, finish } = startServer(t);
    const size = 64 * 1024 * 1024 + 1;
    const chunk = Buffer.alloc(1 << 20, "a");
    for (let sent = 0; sent < size; sent += chunk.length) {
      const piece = sent + chunk.length > size ? chunk.subarray(0, size - sent) : chunk;
      if (!child.stdin.write(piece)) await once(child.stdin, "drain");
    }
    child.stdin.end(`\n${PING}\n`);
    const { code, stdout } = await finish;
    assert.deepEqual(messages(stdout), [
      { jsonrpc: "2.0", id: null, error: { code: -32600, message: `Invalid Request: line too long (${size} bytes)` } },
      JSON.parse(PONG),
    ]);
    assert.equal(code, 0);
  });

  test("a line of exactly 64 MiB is still read", { timeout: 30_000 }, async () => {
    const head = '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"';
    const tail = '"}}';
    const padding = "x".repeat(64 * 1024 * 1024 - head.length - tail.length);
    const { stdout } = await runServer([`${head}${padding}${tail}`]);
    assert.deepEqual(messages(stdout), [{ jsonrpc: "2.0", id: 1, result: {} }]);
  });

  test("at the end of stdin the server exits once stdout is written, though no one reads its stderr", { timeout: 10_000 }, async () => {
    // Each initialize logs the client's name: 400 of 1 KiB names fill the stderr pipe (64 KiB).
    const name = "n".repeat(1024);
    const input = Array.from({ length: 400 }, (_, index) => `${request(index, "initialize", { clientInfo: { name, version: "1" } })}\n`).join("");
    const child = track(spawn(process.execPath, [serverPath], { stdio: ["pipe", "pipe", "pipe"] }));
    let stdout = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stdin.end(input);
    const [code] = await once(child, "exit");
    assert.equal(code, 0);
    assert.equal(lines(stdout).length, 400);
    child.stderr.destroy();
  });

  test("client text in the log has every control character escaped", async () => {
    const name = "a\u0085b\u2028c\u007fd\u001be\u009b";
    const { stderr } = await runServer([request(1, "initialize", { clientInfo: { name, version: "1" } })]);
    const logged = lines(stderr).find((line) => line.includes("initialize:")) ?? "";
    assert.match(logged, /client=\{"name":"a\\u0085b\\u2028c\\u007fd\\u001be\\u009b"/);
    assert.doesNotMatch(stderr, /[\u0080-\u009f\u2028\u007f\u001b]/);
  });
});

describe("help for the person at the keyboard, on stderr only", SUITE, () => {
  test("a pretty-printed request gets one parse error per line and one hint to keep it on one line", async () => {
    const pretty = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }, null, 2).split("\n");
    const { stdout, stderr } = await runServer(pretty);
    assert.equal(pretty.length, 5);
    assert.deepEqual(messages(stdout), pretty.map(() => ({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } })));
    assert.equal(lines(stderr).filter((line) => line.includes("one line")).length, 1, stderr);
  });

  test("a line that is simply not JSON gets no hint about pretty-printing", async () => {
    const { stderr } = await runServer(["this is not json", "{'id':1}"]);
    assert.doesNotMatch(stderr, /one line/);
  });

  test("a UTF-8 byte-order mark at the start of input is skipped", async () => {
    const { stdout } = await run(process.execPath, [serverPath], `\ufeff${request(1, "ping")}\n`);
    assert.deepEqual(messages(stdout), [{ jsonrpc: "2.0", id: 1, result: {} }]);
  });
});
