/**
 * `wrap replay LOG --url URL`: a log of a Streamable HTTP session sent again to an HTTP server,
 * each client's message as a POST of its own with the MCP headers its exchange's head note
 * names, and each answer, JSON or an event stream, compared as the stdio replay compares.
 *
 * The logs are written by hand, as `wrap --listen` writes one (docs/wire-log.md): the test is the
 * client, POSTs to `node dist/server.mjs --http 127.0.0.1:0` (a copy with docs/tools.md's `wait`,
 * whose progress makes its answer an event stream), and writes each exchange's lines: the head
 * note `# <3> POST /mcp from … · Mcp-Method: …`, the body `→ <3> …`, the answer's head and its
 * messages `← <3> …`, and `# <3> closed by the client` for a stream it closes. Many clients send
 * id 1 at once over HTTP, so this one does too. A server that answers `add` in other words is the
 * changed server; an in-process node:http server shows which headers replay sends. And the round
 * trip: a session recorded through `wrap --listen` replays clean.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { once } from "node:events";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer, request, type IncomingHttpHeaders } from "node:http";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { bundle } from "../build.mjs";
import { block } from "./documents.ts";
import { root, run, serverPath, start, tempFolder, waitUntil, withEntries, wrapPath } from "./helpers.ts";
import { startHttpServer, type HttpServer } from "./fixtures/http-recorder.ts";

const LIMIT = { timeout: 60_000 };

// ---- The servers ----

/** server.ts with docs/tools.md's `wait`, and `add` answering as written, or in other words. */
async function buildServer(folder: string, changed: boolean): Promise<string> {
  let source = withEntries(readFileSync(join(root, "server.ts"), "utf8"), [block("docs/tools.md", "ts wait")],
    block("docs/tools.md", "ts imports"));
  if (changed) source = source.replace("`${a} + ${b} = ${sum}`", "`${a} plus ${b} is ${sum}`");
  const name = changed ? "changed" : "same";
  writeFileSync(join(folder, `${name}.ts`), source);
  const built = join(folder, `${name}.mjs`);
  assert.deepEqual(await bundle(join(folder, `${name}.ts`), built), []);
  return built;
}

let same: HttpServer;
let changed: HttpServer;
let scratch = "";

before(async () => {
  scratch = tempFolder("replay-http-");
  same = await startHttpServer(await buildServer(scratch, false));
  changed = await startHttpServer(await buildServer(scratch, true));
});
after(async () => {
  await same?.stop();
  await changed?.stop();
});

// ---- A log written by hand ----

/** A log being written, as wrap --listen writes one, of a client talking to `url`. */
interface HandLog {
  url: string;
  lines: string[];
  exchanges: number;
}

/** One exchange under way: its answer so far ends with `ended`; `close` closes it early. */
interface Open {
  ended: Promise<unknown>;
  close: () => void;
}

/** What a client accepts on every POST (basic/transports/streamable-http §Sending Messages). */
const ACCEPT = "application/json, text/event-stream";

/** Adds a line to the log. */
function write(log: HandLog, mark: string, text: string): void {
  log.lines.push(`${new Date().toISOString()} ${mark} ${text}`);
}

/** POSTs a message with `headers`, and logs the exchange; resolves at its first message (or its
 * end, when it has none), with how to wait for its end or close it first. */
function exchange(log: HandLog, headers: Record<string, string>, message: object): Promise<Open> {
  const number = (log.exchanges += 1);
  const fields = Object.entries(headers).map(([name, value]) => ` · ${name}: ${value}`).join("");
  write(log, "#", `<${number}> POST /mcp from 127.0.0.1:40000${fields}`);
  write(log, "→", `<${number}> ${JSON.stringify(message)}`);
  const sentAt = performance.now();
  return new Promise((resolve, reject) => {
    const sent = request(log.url, { method: "POST", agent: false, headers: { ...headers, "Content-Type": "application/json", Accept: ACCEPT } }, (answer) => {
      const type = answer.headers["content-type"] ?? "";
      write(log, "#", `<${number}> ${answer.statusCode}${type === "" ? "" : ` ${type}`}`);
      // A stream the client closes ends in an error, which is the client's doing.
      const lines = createInterface({ input: answer }).on("error", () => {});
      const ended = new Promise((resolve) => lines.on("close", resolve));
      // A response gets its round-trip time; a notification on a stream none.
      const heard = (data: string) => {
        const timed = /"id":/.test(data) && !/"method":/.test(data) ? `(${(performance.now() - sentAt).toFixed(1)} ms) ` : "";
        write(log, "←", `<${number}> ${timed}${data}`);
        resolve({ ended, close });
      };
      let data = "";
      lines.on("line", (line) => {
        if (!type.startsWith("text/event-stream")) {
          if (line !== "") heard(line);
        } else if (line.startsWith("data:")) {
          data += line.slice(5).trimStart();
        } else if (line === "" && data !== "") {
          heard(data);
          data = "";
        }
      });
      void ended.then(() => resolve({ ended, close }));
    });
    const close = () => {
      sent.destroy();
      write(log, "#", `<${number}> closed by the client`);
    };
    sent.on("error", reject);
    sent.end(JSON.stringify(message));
  });
}

/** POSTs a message and waits for the whole answer. */
async function exchanged(log: HandLog, headers: Record<string, string>, message: object): Promise<void> {
  await (await exchange(log, headers, message)).ended;
}

/** The `_meta` every 2026-07-28 request carries. */
const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "replay-http-test", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

/** The headers a 2026-07-28 request repeats from its body. */
function modern(method: string, name?: string): Record<string, string> {
  return { "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method, ...(name === undefined ? {} : { "Mcp-Name": name }) };
}

/** A 2026-07-28 request. */
function call(id: number, method: string, params: object = {}) {
  return { jsonrpc: "2.0", id, method, params: { ...params, _meta: META } };
}

/**
 * Records a session with the server at `url`, as Claude Code has one: the probe, a
 * subscriptions/listen stream held open, tools/list under the same id 1, `add`, and `wait` with
 * a progress token (an event stream); then a 2025-11-25 handshake and `add` again under a
 * reused id. The listen stream is closed last, by the client. Resolves with the log's path.
 */
async function recordSession(url: string): Promise<string> {
  const log: HandLog = { url, lines: [], exchanges: 0 };
  write(log, "#", `listen http://127.0.0.1:40001/mcp → ${url}`);
  await exchanged(log, modern("server/discover"), call(1, "server/discover"));
  const listening = await exchange(log, modern("subscriptions/listen"), call(1, "subscriptions/listen", { notifications: {} }));
  await exchanged(log, modern("tools/list"), call(1, "tools/list"));
  await exchanged(log, modern("tools/call", "add"), call(2, "tools/call", { name: "add", arguments: { a: 1, b: 2 } }));
  const wait = { name: "wait", arguments: { seconds: 1 }, _meta: { ...META, progressToken: "wait-1" } };
  await exchanged(log, modern("tools/call", "wait"), { jsonrpc: "2.0", id: 3, method: "tools/call", params: wait });
  const hello = { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "replay-http-test", version: "1" } };
  await exchanged(log, {}, { jsonrpc: "2.0", id: 1, method: "initialize", params: hello });
  const legacy = { "MCP-Protocol-Version": "2025-11-25" };
  await exchanged(log, legacy, { jsonrpc: "2.0", method: "notifications/initialized" });
  await exchanged(log, legacy, { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "add", arguments: { a: 2, b: 2 } } });
  listening.close();
  write(log, "#", "exit signal SIGTERM");
  const path = join(scratch, `session-${Math.random().toString(36).slice(2)}.log`);
  writeFileSync(path, `${log.lines.join("\n")}\n`);
  return path;
}

/** Runs a reader of dist/wrap.mjs. */
function wrap(...args: string[]) {
  return run(process.execPath, [wrapPath, ...args], "");
}

// ---- The tests ----

test("an HTTP session replayed to the same server matches, exit code 0", LIMIT, async () => {
  const path = await recordSession(same.url);
  const log = readFileSync(path, "utf8");
  assert.match(log, /^\S+ ← <5> \{"jsonrpc":"2\.0","method":"notifications\/progress"/m, "the wait's answer is an event stream");
  assert.match(log, /^\S+ # <2> closed by the client$/m);
  const { code, stdout, stderr } = await wrap("replay", path, "--url", same.url);
  assert.equal(stdout, "replay: 6 responses, 6 match, 0 differ, 0 missing, 0 unexpected\n", stderr);
  assert.equal(stderr, "");
  assert.equal(code, 0);
});

test("the same session replayed to a changed server reports each difference, exit code 1", LIMIT, async () => {
  const path = await recordSession(same.url);
  const { code, stdout } = await wrap("replay", path, "--url", changed.url);
  for (const [a, b] of [[1, 2], [2, 2]] as const) {
    const report = `✗ 2 "tools/call"\n  result.content.0.text: strings part at character 2: ` +
      `expected "${a} + ${b} = ${a + b}", got "${a} plus ${b} is ${a + b}"\n`;
    assert.ok(stdout.includes(report), stdout);
  }
  assert.match(stdout, /^replay: 6 responses, 4 match, 2 differ, 0 missing, 0 unexpected$/m);
  assert.equal(code, 1);
});

test("replay to an HTTP server that is not there reports every response missing, exit code 1", LIMIT, async () => {
  const path = await recordSession(same.url);
  const gone = "http://127.0.0.1:1/mcp";
  const { code, stdout, stderr } = await wrap("replay", "--timeout", "500", path, "--url", gone);
  assert.match(stdout, /^replay: 6 responses, 0 match, 0 differ, 6 missing, 0 unexpected$/m);
  assert.match(stderr, /^wrap: replay: POST http:\/\/127\.0\.0\.1:1\/mcp: connect ECONNREFUSED/m);
  assert.equal(code, 1);
});

test("a session recorded through wrap --listen replays to the same server, exit code 0", LIMIT, async () => {
  const path = join(scratch, "recorded.log");
  const recorder = start(process.execPath, [wrapPath, "--log", path, "--listen", "127.0.0.1:0", same.url]);
  try {
    const listening = /listening on (http:\/\/\S+?\/mcp)\b/;
    await waitUntil(() => listening.test(recorder.errors()), "wrap's endpoint on stderr", 20_000);
    await recordSession(listening.exec(recorder.errors())?.[1] ?? "");
    // wrap notes the stream the client closed once it sees the connection close.
    await waitUntil(() => readFileSync(path, "utf8").includes("# <2> closed by the client\n"), "the closed stream in the log", 20_000);
  } finally {
    recorder.child.kill("SIGTERM");
    await recorder.finish;
  }
  const { code, stdout, stderr } = await wrap("replay", path, "--url", same.url);
  assert.equal(stdout, "replay: 6 responses, 6 match, 0 differ, 0 missing, 0 unexpected\n", stderr);
  assert.equal(code, 0);
});

test("Claude Code's recorded HTTP session replays to dist/server.mjs --http, its capabilities aside", LIMIT, async (t) => {
  const plain = await startHttpServer(serverPath);
  t.after(() => plain.stop());
  // Recorded against a copy that offered tools.listChanged, before the server offered logging.
  const path = join(root, "tests", "fixtures", "claude-code-http.log");
  const { code, stdout } = await wrap("replay", "--ignore", "result.capabilities", path, "--url", plain.url);
  assert.equal(stdout, "replay: 3 responses, 3 match, 0 differ, 0 missing, 0 unexpected\n");
  assert.equal(code, 0);
});

/** An in-process HTTP server that records what it is sent: each request's headers, and how many
 * of its streams the client closed. It answers a request with `{"echo": params.word}` (a word
 * "slow" after 300 ms) and a session of its own, a notification with 202, and
 * subscriptions/listen with an event stream it holds open. */
async function startFake(t: { after: (done: () => void) => void }) {
  const seen: IncomingHttpHeaders[] = [];
  const closed = { streams: 0 };
  const server = createServer((incoming, outgoing) => {
    seen.push(incoming.headers);
    let body = "";
    incoming.on("data", (chunk: Buffer) => (body += chunk.toString()));
    incoming.on("end", () => {
      const message: unknown = JSON.parse(body);
      const field = (key: string) => typeof message === "object" && message !== null && key in message ? Object.entries(message).find(([name]) => name === key)?.[1] : undefined;
      const [id, method, params] = [field("id"), field("method"), field("params")];
      if (id === undefined) return outgoing.writeHead(202).end();
      const headers = { "Mcp-Session-Id": "live-session" };
      if (method === "subscriptions/listen") {
        outgoing.writeHead(200, { ...headers, "Content-Type": "text/event-stream" });
        outgoing.write('data: {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{}}\n\n');
        outgoing.on("close", () => (closed.streams += 1));
        return;
      }
      const word = typeof params === "object" && params !== null && "word" in params ? params.word : undefined;
      const answer = () => outgoing.writeHead(200, { ...headers, "Content-Type": "application/json" })
        .end(JSON.stringify({ jsonrpc: "2.0", id, result: { echo: word ?? null } }));
      setTimeout(answer, word === "slow" ? 300 : 0);
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  const address = server.address();
  const url = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}/mcp`;
  return { url, seen, closed };
}

/** Writes a log of `lines` (each `<mark> <text>`, all at one time) and returns its path. */
function logOf(name: string, lines: readonly string[]): string {
  const path = join(scratch, `${name}.log`);
  writeFileSync(path, lines.map((line) => `2026-12-06T00:00:00.000Z ${line}\n`).join(""));
  return path;
}

test("replay sends each exchange's MCP headers as recorded, and the live server's session, never the recorded one", LIMIT, async (t) => {
  const fake = await startFake(t);
  const hello = '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}';
  const path = logOf("headers", [
    `# listen http://127.0.0.1:40001/mcp → ${fake.url}`,
    "# <1> POST /mcp from 127.0.0.1:40000",
    `→ <1> ${hello}`,
    "# <1> 200 application/json · Mcp-Session-Id: recorded-session",
    '← <1> (2.0 ms) {"jsonrpc":"2.0","id":1,"result":{"echo":null}}',
    "# <2> POST /mcp from 127.0.0.1:40000 · MCP-Protocol-Version: 2025-11-25 · Mcp-Session-Id: recorded-session",
    '→ <2> {"jsonrpc":"2.0","method":"notifications/initialized"}',
    "# <2> 202",
    "# <3> POST /mcp from 127.0.0.1:40000 · MCP-Protocol-Version: 2026-07-28 · Mcp-Method: tools/call · " +
      "Mcp-Name: =?base64?6Laz44GZ?= · Mcp-Session-Id: recorded-session · Authorization: [redacted]",
    '→ <3> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"足す","arguments":{}}}',
    "# <3> 200 application/json",
    '← <3> (1.0 ms) {"jsonrpc":"2.0","id":1,"result":{"echo":null}}',
  ]);
  const { code, stdout } = await wrap("replay", path, "--url", fake.url);
  assert.equal(stdout, "replay: 2 responses, 2 match, 0 differ, 0 missing, 0 unexpected\n");
  assert.equal(code, 0);
  const [first, second, third] = fake.seen.map((headers) => ({
    type: headers["content-type"], accept: headers.accept, version: headers["mcp-protocol-version"],
    method: headers["mcp-method"], name: headers["mcp-name"], session: headers["mcp-session-id"],
    authorization: headers.authorization,
  }));
  const none = { version: undefined, method: undefined, name: undefined, authorization: undefined };
  assert.deepEqual(first, { type: "application/json", accept: ACCEPT, ...none, session: undefined });
  assert.deepEqual(second, { type: "application/json", accept: ACCEPT, ...none, version: "2025-11-25", session: "live-session" });
  assert.deepEqual(third, { type: "application/json", accept: ACCEPT, version: "2026-07-28", method: "tools/call",
    name: "=?base64?6Laz44GZ?=", session: "live-session", authorization: undefined });
});

test("replay pairs each answer with its own exchange's request, though both have id 1", LIMIT, async (t) => {
  const fake = await startFake(t);
  // Recorded, the first call was answered first; live, it is answered last.
  const path = logOf("same-id", [
    '→ <1> {"jsonrpc":"2.0","id":1,"method":"echo","params":{"word":"slow"}}',
    '→ <2> {"jsonrpc":"2.0","id":1,"method":"echo","params":{"word":"fast"}}',
    '← <1> (1.0 ms) {"jsonrpc":"2.0","id":1,"result":{"echo":"slow"}}',
    '← <2> (1.0 ms) {"jsonrpc":"2.0","id":1,"result":{"echo":"fast"}}',
  ]);
  const { code, stdout } = await wrap("replay", path, "--url", fake.url);
  assert.equal(stdout, "replay: 2 responses, 2 match, 0 differ, 0 missing, 0 unexpected\n");
  assert.equal(code, 0);
});

test("replay closes a stream where the log says the client closed it", LIMIT, async (t) => {
  const fake = await startFake(t);
  const path = logOf("closed", [
    "# <1> POST /mcp from 127.0.0.1:40000 · MCP-Protocol-Version: 2026-07-28 · Mcp-Method: subscriptions/listen",
    '→ <1> {"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{}}',
    "# <1> 200 text/event-stream",
    '← <1> {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{}}',
    '→ <2> {"jsonrpc":"2.0","id":2,"method":"echo","params":{"word":"slow"}}',
    '← <2> (1.0 ms) {"jsonrpc":"2.0","id":2,"result":{"echo":"slow"}}',
    "# <1> closed by the client",
  ]);
  // A replay that left the stream open would wait for it past this test's own time limit.
  const { code, stdout } = await wrap("replay", "--timeout", "600000", path, "--url", fake.url);
  assert.equal(stdout, "replay: 1 responses, 1 match, 0 differ, 0 missing, 0 unexpected\n");
  assert.equal(code, 0);
  assert.equal(fake.closed.streams, 1);
});

test("replay takes either a command or --url, and an http(s) URL", LIMIT, async () => {
  const path = join(scratch, "empty.log");
  writeFileSync(path, "");
  for (const args of [["--url", same.url, path, "--", process.execPath, serverPath], ["--url", "ftp://127.0.0.1/mcp", path],
    ["--url", "", path], ["--url", same.url]]) {
    const { code, stderr } = await wrap("replay", ...args);
    assert.equal(code, 2, args.join(" "));
    assert.match(stderr, /WIRE_LOG --url URL/);
  }
});
