/**
 * server.ts cut at its stop line is the article's server, whole. README's "How to read server.ts"
 * gives the command that takes the cut; it runs here as written, in a copy of the clone, and the
 * cut it builds is held to what README promises: it answers the article's session byte for byte,
 * and every edge case that applies to a handshake-era server with synchronous tools (JSON-RPC's
 * errors, ids, params, notifications, responses from the client, blank lines, `toString` as a
 * method) exactly as the whole file does. Its size is held to the article's scale, and README's
 * count of its lines to the truth. tests/claude-code/session.test.ts registers the cut with the
 * real Claude Code.
 */
import { before, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ARTICLE_SESSION } from "./fixtures/article-session.ts";
import { documentText } from "./documents.ts";
import { cutCommands, takeCut } from "./fixtures/cut.ts";
import { lines, root, serverPath, start } from "./helpers.ts";

/** How README's command finds the stop line, and the limits README and the issue set. */
const STOP_LINE = /^\s*\/\/.*THE STOP LINE/;
const MAX_CODE_LINES = 130;
const MAX_LINES = 260;

/** A line of code, as the project counts them: not blank, not a comment. */
const CODE_LINE = /^\s*($|\/\/|\/\*|\*)/;

/** A ping sent after each case: its answer ends what the case made the server write. */
const PING = '{"jsonrpc":"2.0","id":"after","method":"ping"}';
const PONG = '{"jsonrpc":"2.0","id":"after","result":{}}';

/** A request line. */
function request(id: unknown, method: string, params?: unknown): string {
  return JSON.stringify({ jsonrpc: "2.0", id, method, params });
}

/** An error reply line. */
function error(id: string | number | null, code: number, message: string): string {
  return JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } });
}

/** A tool call of add with its arguments as raw JSON, so that 1e400 arrives as written. */
function add(id: number, args: string): string {
  return `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"add","arguments":${args}}}`;
}

/** A tool result line. */
function toolText(id: number, text: string, isError = false): string {
  const content = [{ type: "text", text }];
  return JSON.stringify({ jsonrpc: "2.0", id, result: isError ? { content, isError } : { content } });
}

/** An edge case: a line sent, and the lines it must be answered with (none for silence). */
type EdgeCase = { name: string; send: string; replies: string[] };

const NOT_A_CALL = 'Invalid params: "name" must be a string and "arguments" an object';

/** The edge cases of a handshake-era server with synchronous tools, each answered the same by the
 * cut and by the whole file. */
const EDGE_CASES: EdgeCase[] = [
  { name: "a line that is not JSON", send: "this is not json", replies: [error(null, -32700, "Parse error")] },
  { name: "an empty line", send: "", replies: [] },
  { name: "a line of JSON's own whitespace", send: " \t \r", replies: [] },
  { name: "null", send: "null", replies: [error(null, -32600, "Invalid Request: not a JSON object")] },
  { name: "a number", send: "42", replies: [error(null, -32600, "Invalid Request: not a JSON object")] },
  { name: "jsonrpc 1.0", send: '{"jsonrpc":"1.0","id":1,"method":"ping"}', replies: [error(1, -32600, 'Invalid Request: "jsonrpc" must be "2.0"')] },
  { name: "no jsonrpc", send: '{"id":"x","method":"ping"}', replies: [error("x", -32600, 'Invalid Request: "jsonrpc" must be "2.0"')] },
  { name: "a method that is a number", send: '{"jsonrpc":"2.0","id":2,"method":5}', replies: [error(2, -32600, 'Invalid Request: "method" must be a string')] },
  { name: "params that are a string", send: '{"jsonrpc":"2.0","id":3,"method":"ping","params":"x"}', replies: [error(3, -32600, 'Invalid Request: "params" must be an object or an array')] },
  { name: "params by position", send: '{"jsonrpc":"2.0","id":4,"method":"ping","params":[1]}', replies: ['{"jsonrpc":"2.0","id":4,"result":{}}'] },
  { name: "an id of null", send: '{"jsonrpc":"2.0","id":null,"method":"ping"}', replies: [error(null, -32600, 'Invalid Request: "id" must be a string or an integer')] },
  { name: "an id of 1.5", send: '{"jsonrpc":"2.0","id":1.5,"method":"ping"}', replies: [error(null, -32600, 'Invalid Request: "id" must be a string or an integer')] },
  { name: "an id that is an object", send: '{"jsonrpc":"2.0","id":{},"method":"ping"}', replies: [error(null, -32600, 'Invalid Request: "id" must be a string or an integer')] },
  { name: "an id past 2^53", send: '{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}', replies: [error(null, -32600, 'Invalid Request: "id" must be a string or an integer')] },
  { name: "a string id", send: request("abc", "ping"), replies: ['{"jsonrpc":"2.0","id":"abc","result":{}}'] },
  { name: "toString as a method", send: request(5, "toString"), replies: [error(5, -32601, "Method not found: toString")] },
  { name: "__proto__ as a method", send: request(6, "__proto__"), replies: [error(6, -32601, "Method not found: __proto__")] },
  { name: "an unknown method", send: request(7, "no/such/method"), replies: [error(7, -32601, "Method not found: no/such/method")] },
  { name: "an unknown notification", send: '{"jsonrpc":"2.0","method":"no/such/notification"}', replies: [] },
  { name: "a known notification", send: '{"jsonrpc":"2.0","method":"notifications/initialized"}', replies: [] },
  { name: "a notification named toString", send: '{"jsonrpc":"2.0","method":"toString"}', replies: [] },
  { name: "a response from the client", send: '{"jsonrpc":"2.0","id":8,"result":{}}', replies: [] },
  { name: "a malformed response", send: '{"id":9,"error":1}', replies: [] },
  { name: "an initialize of 2099", send: request(10, "initialize", { protocolVersion: "2099-01-01" }), replies: ['{"jsonrpc":"2.0","id":10,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"json-rpc-study","version":"0.1.0"}}}'] },
  { name: "tools/call with no params", send: request(11, "tools/call"), replies: [error(11, -32602, NOT_A_CALL)] },
  { name: "tools/call with a name that is a number", send: request(12, "tools/call", { name: 5 }), replies: [error(12, -32602, NOT_A_CALL)] },
  { name: "tools/call with arguments that are a string", send: request(13, "tools/call", { name: "add", arguments: "x" }), replies: [error(13, -32602, NOT_A_CALL)] },
  { name: "an unknown tool", send: request(14, "tools/call", { name: "nope", arguments: {} }), replies: [error(14, -32602, "Unknown tool: nope")] },
  { name: "add 19 and 23", send: add(15, '{"a":19,"b":23}'), replies: [toolText(15, "19 + 23 = 42")] },
  { name: "add with 1e400", send: add(16, '{"a":1e400,"b":1}'), replies: [toolText(16, 'Invalid arguments: "a" must be finite', true)] },
  { name: "add that overflows", send: add(17, '{"a":1e308,"b":1e308}'), replies: [toolText(17, "Invalid arguments: 1e+308 + 1e+308 overflows", true)] },
];

/** Where the copy of the clone is, and the cut README's command built in it. */
let copy = "";
let cut = "";

before(() => {
  ({ copy, cut } = takeCut());
});

/** A server started for a test, and a reader of its stdout a line at a time. */
function startServer(path: string) {
  const server = start(process.execPath, [path]);
  let consumed = 0;
  const nextLine = async (): Promise<string> => {
    for (;;) {
      const rest = server.output().slice(consumed);
      const end = rest.indexOf("\n");
      if (end !== -1) {
        consumed += end + 1;
        return rest.slice(0, end);
      }
      await new Promise((go) => setTimeout(go, 5));
    }
  };
  return { ...server, nextLine };
}

/** The lines a server writes for a line sent, `expected` of them at least: those besides the
 * answer to a ping sent after it. In the cut a tool call is answered once its Promise settles,
 * after the ping's answer, as JSON-RPC allows; so the answers are read in any order. */
async function answered(server: ReturnType<typeof startServer>, send: string, expected: number):
  Promise<string[]> {
  server.child.stdin.write(`${send}\n${PING}\n`);
  const written: string[] = [];
  let ponged = false;
  while (!ponged || written.length < expected) {
    const line = await server.nextLine();
    if (line === PONG) ponged = true;
    else written.push(line);
  }
  return written;
}

test("README's two commands take the cut and build it, in the clone's folder", () => {
  assert.deepEqual(cutCommands("README.md"), [
    "sed '/THE STOP LINE/,$d' server.ts > my-server.ts",
    "node build.mjs my-server.ts",
  ]);
  assert.deepEqual(cutCommands("README.ja.md"), cutCommands("README.md"));
});

test("the cut is the article's scale: at most 130 code lines, 260 in all, as README counts them", () => {
  const source = readFileSync(join(root, "server.ts"), "utf8").split("\n");
  const stop = source.findIndex((line) => STOP_LINE.test(line));
  assert.ok(stop > 0, "server.ts has no stop line");
  const above = source.slice(0, stop);
  const code = above.filter((line) => !CODE_LINE.test(line)).length;
  assert.ok(code <= MAX_CODE_LINES, `${code} code lines above the stop line`);
  assert.ok(above.length <= MAX_LINES, `${above.length} lines above the stop line`);
  assert.equal(readFileSync(join(copy, "my-server.ts"), "utf8").split("\n").length - 1, stop);
  assert.match(documentText("README.md"), new RegExp(`The first ${stop} lines of \`server.ts\``));
  assert.match(documentText("README.ja.md"), new RegExp(`先頭の${stop}行`));
});

test("the cut, run alone, answers the article's session byte for byte, typed a line at a time", async () => {
  const server = startServer(cut);
  try {
    for (const { send, reply } of ARTICLE_SESSION) {
      const replies = reply === undefined ? [] : [reply];
      assert.deepEqual(await answered(server, send, replies.length), replies, send);
    }
  } finally {
    server.child.kill();
  }
});

for (const [label, path] of [["the cut", () => cut], ["the whole file", () => serverPath]] as const) {
  test(`${label} answers every edge case of a handshake-era server with synchronous tools`, async () => {
    const server = startServer(path());
    try {
      for (const { name, send, replies } of EDGE_CASES) {
        // The whole file offers logging too (section 7); the cut offers tools alone.
        const offered = label === "the cut" ? replies : replies.map((reply) =>
          reply.replace('"capabilities":{"tools":{}}', '"capabilities":{"tools":{},"logging":{}}'));
        assert.deepEqual(await answered(server, send, replies.length), offered, name);
      }
      // Client text reaches the log only as JSON: a line break in it cannot start a line of log.
      const initialize = request(20, "initialize", { clientInfo: { name: "a\n[server] forged" } });
      await answered(server, initialize, 1);
      assert.doesNotMatch(server.errors(), /\n\[server\] forged/);
    } finally {
      server.child.kill();
    }
  });
}

test("the cut's add checks its own arguments: \"1\" + 2 is never \"12\"", async () => {
  const server = startServer(cut);
  try {
    const [reply] = await answered(server, add(1, '{"a":"1","b":2}'), 1);
    assert.equal(reply, toolText(1, 'Invalid arguments: "a" must be finite', true));
    const [missing] = await answered(server, add(2, '{"a":1}'), 1);
    assert.equal(missing, toolText(2, 'Invalid arguments: "b" must be finite', true));
    // A __proto__ key is a key like any other, and supplies no argument.
    const [proto] = await answered(server, add(3, '{"__proto__":{"a":1},"b":2}'), 1);
    assert.equal(proto, toolText(3, 'Invalid arguments: "a" must be finite', true));
  } finally {
    server.child.kill();
  }
});

test("the cut answers what lies below the stop line as the article's server would", async () => {
  const server = startServer(cut);
  try {
    // No 2026-07-28 era: the probe is no method, and Claude Code falls back to initialize.
    const probe = await answered(server, request(1, "server/discover"), 1);
    assert.deepEqual(probe, [error(1, -32601, "Method not found: server/discover")]);
    // No batches: an array is no JSON object.
    const batch = await answered(server, "[]", 1);
    assert.deepEqual(batch, [error(null, -32600, "Invalid Request: not a JSON object")]);
    assert.ok(lines(server.errors()).includes("[server] stdio server started — waiting for JSON-RPC messages on stdin"));
  } finally {
    server.child.kill();
  }
});
