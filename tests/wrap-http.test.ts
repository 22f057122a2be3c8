/**
 * wrap over Streamable HTTP, black-box: `node dist/wrap.mjs --log FILE --listen 127.0.0.1:0 URL`
 * in front of `dist/server.mjs --http`, of SDK v2's HTTP server, and of small servers made here,
 * each for one edge: an event stream whose next event waits for the client to have the last one,
 * a server that cannot be reached or fails mid-answer, a client that closes its exchange, secret
 * headers, hop-by-hop headers, 500 connections at once, a 1 GiB event stream, and a kill.
 *
 * wrap names its local URL on the stderr line that says "listening on". Every exchange is logged
 * in the stdio log's format: a `# <N> POST /mcp from …` head, the body's `→ <N>` lines, the
 * answer's `# <N> 200 …` head and its `← <N>` lines, one per event of an event stream.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Agent, createServer, request, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { once } from "node:events";
import { createReadStream, readFileSync, statSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { readBody, root, run, serverPath, start, tempFolder, waitUntil, wrapPath } from "./helpers.ts";
import { startHttpServer } from "./fixtures/http-recorder.ts";

/** The most a test may take on a loaded two-core machine; the 1 GiB stream takes longest. */
const LIMIT = { timeout: 180_000 };

/** The stderr line where wrap names its local endpoint. */
const LISTENING = /listening on (http:\/\/\S+?\/mcp)\b/;

/** The peak resident memory wrap may reach (issue 42, bounds). */
const MEMORY_LIMIT_MIB = 256;

/** The 2026-07-28 headers a tools/call of add carries (basic/transports/streamable-http). */
const MODERN_HEADERS = ["Content-Type", "application/json", "Accept", "application/json, text/event-stream",
  "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "add"];

/** A 2026-07-28 tools/call of add. */
function addCall(id: number, a: number, b: number): string {
  const meta = { "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": { name: "wrap-http-test", version: "1" },
    "io.modelcontextprotocol/clientCapabilities": {} };
  return JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "add", arguments: { a, b }, _meta: meta } });
}

// ---- wrap and the servers behind it ----

/** Starts wrap in front of `target`, logging to `logPath`, and resolves once it names its URL. */
async function startWrap(logPath: string, target: string) {
  const wrap = start(process.execPath, [wrapPath, "--log", logPath, "--listen", "127.0.0.1:0", target]);
  let closed = false;
  void wrap.finish.then(() => (closed = true));
  await waitUntil(() => closed || LISTENING.test(wrap.errors()), "wrap's listening line", 20_000);
  const url = LISTENING.exec(wrap.errors())?.[1];
  if (url === undefined) throw new Error(`wrap named no URL; its stderr:\n${wrap.errors()}`);
  const stop = async () => {
    wrap.child.kill("SIGTERM");
    return wrap.finish;
  };
  return { ...wrap, url, pid: wrap.child.pid ?? 0, stop };
}

/** Whether an address is a TCP one. */
function isTcp(address: string | AddressInfo | null): address is AddressInfo {
  return typeof address === "object" && address !== null;
}

/** A server made here, on 127.0.0.1: its /mcp URL, and how to close it, connections and all. */
async function upstream(handle: (incoming: IncomingMessage, outgoing: ServerResponse) => void) {
  const server: Server = createServer(handle);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  if (!isTcp(address)) throw new Error("no TCP address");
  const close = async () => {
    server.closeAllConnections();
    server.close();
    await once(server, "close");
  };
  return { url: `http://127.0.0.1:${address.port}/mcp`, port: address.port, close };
}

/** What a client got: status, reason, raw headers and body. */
interface Answer { status: number; reason: string; rawHeaders: string[]; body: Buffer }

/** Sends one request to a URL and resolves with the whole answer. Raw headers are sent as they
 * are, in their order, and a Host last, as node:http adds none to them. */
function send(url: string, options: { method?: string; headers?: string[]; body?: string | Buffer; agent?: Agent }): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const { body, headers = [], ...rest } = options;
    const host = ["Host", new URL(url).host];
    const sent = request(url, { method: "POST", ...rest, headers: [...headers, ...host] }, (answer) => {
      readBody(answer).then((received) => {
        resolve({ status: answer.statusCode ?? 0, reason: answer.statusMessage ?? "", rawHeaders: answer.rawHeaders, body: received });
      }, reject);
    });
    sent.on("error", reject);
    sent.end(body);
  });
}

/** A log's lines. */
function logLines(logPath: string): string[] {
  return readFileSync(logPath, "utf8").split("\n").filter((line) => line !== "");
}

/** A log's lines without their times. */
function logEvents(logPath: string): string[] {
  return logLines(logPath).map((line) => line.slice(line.indexOf(" ") + 1));
}

/** The peak resident memory of a process so far, in MiB (Linux /proc: VmHWM). */
function peakMemoryMiB(pid: number): number {
  const peak = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  if (peak === undefined) throw new Error(`no VmHWM in /proc/${pid}/status`);
  return Number(peak) / 1024;
}

/** Raw headers without the hop-by-hop ones (RFC 9110 §7.6.1) and those each hop adds. */
function endToEnd(raw: readonly string[], also: readonly string[] = []): string[][] {
  const dropped = ["connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade", "x-hop", ...also];
  const pairs = raw.flatMap((name, at) => (at % 2 === 0 ? [[name, raw[at + 1] ?? ""]] : []));
  return pairs.filter(([name = ""]) => !dropped.includes(name.toLowerCase()));
}

// ---- The tests ----

test("a tools/call through wrap to dist/server.mjs --http is answered as without it, and logged as heads, a → line and a ← line", LIMIT, async (t) => {
  const server = await startHttpServer(serverPath);
  t.after(() => server.stop());
  const logPath = join(tempFolder("wrap-http-"), "wire.log");
  const wrap = await startWrap(logPath, server.url);
  t.after(() => wrap.stop());
  const direct = await send(server.url, { headers: MODERN_HEADERS, body: addCall(7, 2, 3) });
  const through = await send(wrap.url, { headers: MODERN_HEADERS, body: addCall(7, 2, 3) });
  assert.equal(through.status, 200);
  assert.equal(through.body.toString(), direct.body.toString());
  assert.deepEqual(endToEnd(through.rawHeaders, ["date"]), endToEnd(direct.rawHeaders, ["date"]));

  const events = logEvents(logPath);
  const local = new URL(wrap.url);
  assert.equal(events[0], `# listen ${wrap.url} → ${server.url}`);
  assert.match(events[1] ?? "", new RegExp(`^# <1> POST /mcp from 127\\.0\\.0\\.1:\\d+ · MCP-Protocol-Version: 2026-07-28 · Mcp-Method: tools/call · Mcp-Name: add$`));
  assert.equal(events[2], `→ <1> ${addCall(7, 2, 3)}`);
  assert.equal(events[3], "# <1> 200 application/json");
  assert.match(events[4] ?? "", /^← <1> \(\d+\.\d ms\) \{"jsonrpc":"2\.0","id":7,"result":\{"content":\[\{"type":"text","text":"2 \+ 3 = 5"\}\]/);
  assert.equal(events.length, 5, events.join("\n"));
  assert.equal(statSync(logPath).mode & 0o777, 0o600, "the log is private");
  assert.ok(local.port !== "0");

  const finished = await wrap.stop();
  assert.equal(finished.code, 128 + 15, "wrap ends as SIGTERM would end it");
  assert.equal(logEvents(logPath).at(-1), "# exit signal SIGTERM");
  const shown = await run(process.execPath, [wrapPath, "show", logPath], "");
  assert.equal(shown.code, 0);
  assert.match(shown.stdout, /→ tools\/call add #7 \{"a":2,"b":3\}/);
  assert.match(shown.stdout, /← #7 \d+\.\d ms result 2 \+ 3 = 5/);
});

test("each event of an event stream reaches the client while the stream is open, and is one ← line", LIMIT, async (t) => {
  let answer: ServerResponse | undefined;
  const server = await upstream(async (incoming, outgoing) => {
    await readBody(incoming);
    outgoing.writeHead(200, { "content-type": "text/event-stream" });
    // A priming event (an id, no data) and a comment are no messages; a message may span lines.
    outgoing.write(": keep-alive\n\nid: 0\ndata:\n\n");
    outgoing.write('data: {"jsonrpc":"2.0",\r\ndata: "method":"notifications/progress",\r\n');
    outgoing.write('data:"params":{"progressToken":1,"progress":1}}\r\n\r\n');
    answer = outgoing;
  });
  t.after(() => server.close());
  const logPath = join(tempFolder("wrap-http-"), "wire.log");
  const wrap = await startWrap(logPath, server.url);
  t.after(() => wrap.stop());

  let received = "";
  const ended = new Promise<void>((resolve, reject) => {
    const sent = request(wrap.url, { method: "POST", headers: { "content-type": "application/json" } }, (stream) => {
      stream.setEncoding("utf8");
      stream.on("data", (chunk: string) => (received += chunk));
      stream.on("end", resolve);
    });
    sent.on("error", reject);
    sent.end('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}');
  });
  // The server sends its last event only once the client has the first: wrap must not hold it.
  await waitUntil(() => received.includes('"progress":1}}'), "the first event to reach the client while the stream is open", 20_000);
  assert.ok(answer !== undefined);
  answer.end('data: {"jsonrpc":"2.0","id":1,"result":{}}\n\n');
  await ended;
  assert.ok(received.startsWith(": keep-alive\n\nid: 0\ndata:\n\n"), "the bytes pass as they came");

  await waitUntil(() => logEvents(logPath).some((line) => line.startsWith("← <1> (")), "the last event in the log", 10_000);
  const events = logEvents(logPath).slice(1);
  assert.deepEqual(events.map((line) => line.replace(/\(\d+\.\d ms\)/, "(… ms)").replace(/:\d+$/, "")), [
    "# <1> POST /mcp from 127.0.0.1",
    '→ <1> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}',
    "# <1> 200 text/event-stream",
    '← <1> {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}',
    '← <1> (… ms) {"jsonrpc":"2.0","id":1,"result":{}}',
  ]);
});

test("method, path, query, status, reason, headers but the hop-by-hop ones, and bodies pass unchanged", LIMIT, async (t) => {
  const seen: { method: string; url: string; rawHeaders: string[]; body: Buffer }[] = [];
  const answerBody = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("\r\nsecond line\nthird")]);
  const answerHeaders = ["X-Answer", "A", "Set-Cookie", "a=1", "Set-Cookie", "b=2", "Connection", "X-Hop",
    "X-Hop", "dropped", "Keep-Alive", "timeout=9", "Content-Length", String(answerBody.length)];
  const server = await upstream(async (incoming, outgoing) => {
    seen.push({ method: incoming.method ?? "", url: incoming.url ?? "", rawHeaders: incoming.rawHeaders, body: await readBody(incoming) });
    outgoing.sendDate = false;
    outgoing.writeHead(299, "Made Up", answerHeaders);
    outgoing.end(answerBody);
  });
  t.after(() => server.close());
  const logPath = join(tempFolder("wrap-http-"), "wire.log");
  const wrap = await startWrap(logPath, `${server.url.replace("/mcp", "/base/mcp")}?key=1`);
  t.after(() => wrap.stop());

  const body = Buffer.concat([Buffer.from("{}\r\n"), Buffer.from([0xc3, 0x28]), Buffer.from("\n(5.0 ms) x")]);
  const headers = ["X-Mixed-Case", "One", "x-mixed-case", "Two", "Connection", "keep-alive, X-Hop", "X-Hop", "1",
    "Keep-Alive", "timeout=5", "TE", "trailers", "Proxy-Connection", "keep-alive", "Content-Length", String(body.length)];
  const answer = await send(wrap.url.replace("/mcp", "/mcp?session=abc"), { method: "PUT", headers, body });
  await send(wrap.url.replace("/mcp", "/.well-known/oauth-protected-resource?x"), { method: "GET" });

  assert.deepEqual(seen.map(({ method, url }) => `${method} ${url}`), ["PUT /base/mcp?key=1&session=abc", "GET /.well-known/oauth-protected-resource?x"]);
  assert.deepEqual(seen[0]?.body, body);
  const upstreamHost = `127.0.0.1:${server.port}`;
  assert.deepEqual(endToEnd(seen[0]?.rawHeaders ?? []), [...endToEnd(headers), ["Host", upstreamHost]]);
  assert.ok(!(seen[0]?.rawHeaders ?? []).some((name) => /^(x-hop|te|proxy-connection)$/i.test(name)));
  assert.equal(answer.status, 299);
  assert.equal(answer.reason, "Made Up");
  assert.deepEqual(answer.body, answerBody);
  assert.deepEqual(endToEnd(answer.rawHeaders), endToEnd(answerHeaders));
  assert.ok(!answer.rawHeaders.some((name) => /^(date|x-hop)$/i.test(name)), answer.rawHeaders.join(" "));

  const events = logEvents(logPath);
  assert.ok(events.includes("→ <1> [CRLF] [not JSON-RPC] {}\r"), events.join("\n"));
  assert.ok(events.includes("→ <1> [not UTF-8] [not JSON-RPC] \ufffd("), events.join("\n"));
  assert.ok(events.includes("→ <1> [not JSON-RPC] | (5.0 ms) x"), "a line that looks like a note gets the bar");
  assert.ok(events.includes("# <1> 299 · Set-Cookie: [redacted] · Set-Cookie: [redacted]"), "an answer with no Content-Type is its status");
  assert.ok(events.includes("← <1> [not JSON-RPC] second line"), events.join("\n"));
  assert.ok(events.some((line) => /^# <2> GET \/\.well-known\/oauth-protected-resource\?x from /.test(line)));
});

test("Authorization, Proxy-Authorization, Cookie, Set-Cookie and any secret-named header are logged [redacted], and passed on as they are", LIMIT, async (t) => {
  const seen: string[][] = [];
  const server = await upstream(async (incoming, outgoing) => {
    seen.push(incoming.rawHeaders);
    await readBody(incoming);
    outgoing.writeHead(200, ["Content-Type", "application/json", "Set-Cookie", "sid=answer-secret-1", "Mcp-Session-Id", "s-1"]);
    outgoing.end('{"jsonrpc":"2.0","id":1,"result":{}}');
  });
  t.after(() => server.close());
  const logPath = join(tempFolder("wrap-http-"), "wire.log");
  const wrap = await startWrap(logPath, server.url);
  t.after(() => wrap.stop());
  const secrets = ["Bearer token-secret-2", "Basic cHJveHk6c2VjcmV0LTM=", "sid=cookie-secret-4", "key-secret-5", "pw-secret-6"];
  const headers = ["Authorization", secrets[0] ?? "", "Proxy-Authorization", secrets[1] ?? "", "Cookie", secrets[2] ?? "",
    "X-Api-Key", secrets[3] ?? "", "X-Db-Password", secrets[4] ?? "", "Mcp-Session-Id", "s-1", "Content-Type", "application/json"];
  const answer = await send(wrap.url, { headers, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' });
  assert.equal(answer.status, 200);
  assert.ok(answer.rawHeaders.includes("sid=answer-secret-1"), "Set-Cookie reaches the client");
  for (const secret of secrets) assert.ok(seen[0]?.includes(secret), `${secret} reaches the server`);

  const text = readFileSync(logPath, "utf8");
  for (const secret of [...secrets, "sid=answer-secret-1", "answer-secret", "cHJveHk6"]) assert.ok(!text.includes(secret), `${secret} is in the log`);
  const events = logEvents(logPath);
  assert.match(events[1] ?? "", / · Authorization: \[redacted\] · Proxy-Authorization: \[redacted\] · Cookie: \[redacted\] · X-Api-Key: \[redacted\] · X-Db-Password: \[redacted\] · Mcp-Session-Id: s-1$/);
  assert.equal(events[3], "# <1> 200 application/json · Set-Cookie: [redacted] · Mcp-Session-Id: s-1");
  assert.equal(statSync(logPath).mode & 0o777, 0o600);
});

test("a server that cannot be reached is answered 502 by wrap, and one that fails mid-answer ends the client's answer; each is noted", LIMIT, async (t) => {
  const gone = await upstream(() => {});
  await gone.close();
  const logPath = join(tempFolder("wrap-http-"), "wire.log");
  const wrap = await startWrap(logPath, gone.url);
  t.after(() => wrap.stop());
  const answer = await send(wrap.url, { headers: ["Content-Type", "application/json"], body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' });
  assert.equal(answer.status, 502);
  assert.match(answer.body.toString(), /^wrap: upstream failed: ECONNREFUSED\n$/);
  assert.ok(logEvents(logPath).includes("# <1> 502 upstream failed: ECONNREFUSED"), logEvents(logPath).join("\n"));

  const failing = await upstream(async (incoming, outgoing) => {
    await readBody(incoming);
    outgoing.writeHead(200, { "content-type": "text/event-stream" });
    outgoing.write('data: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}\n\n', () => outgoing.socket?.destroy());
  });
  t.after(() => failing.close());
  const otherLog = join(tempFolder("wrap-http-"), "wire.log");
  const second = await startWrap(otherLog, failing.url);
  t.after(() => second.stop());
  await assert.rejects(send(second.url, { body: '{"jsonrpc":"2.0","id":1,"method":"tools/call"}' }));
  await waitUntil(() => logEvents(otherLog).some((line) => line.startsWith("# <1> upstream failed: ")), "the failure's note", 10_000);
  assert.ok(logEvents(otherLog).includes('← <1> {"jsonrpc":"2.0","method":"notifications/progress","params":{}}'));
  assert.ok(!logEvents(otherLog).some((line) => line.includes("closed by the client")));
});

test("a client that closes its exchange closes that one request to the server, and the log says so", LIMIT, async (t) => {
  const open = new Map<string, { closed: boolean; outgoing: ServerResponse }>();
  const server = await upstream(async (incoming, outgoing) => {
    const body = (await readBody(incoming)).toString();
    const entry = { closed: false, outgoing };
    open.set(body, entry);
    outgoing.on("close", () => (entry.closed = true));
    outgoing.writeHead(200, { "content-type": "text/event-stream" });
    outgoing.write('data: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}\n\n');
  });
  t.after(() => server.close());
  const logPath = join(tempFolder("wrap-http-"), "wire.log");
  const wrap = await startWrap(logPath, server.url);
  t.after(() => wrap.stop());
  const call = (id: number) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"slow"}}`;
  const opened = [1, 2].map((id) => {
    const sent = request(wrap.url, { method: "POST" });
    sent.on("error", () => {});
    sent.end(call(id));
    return sent;
  });
  await waitUntil(() => open.size === 2, "both calls to reach the server", 10_000);
  opened[0]?.destroy();
  await waitUntil(() => open.get(call(1))?.closed === true, "the server to see the first call closed", 10_000);
  assert.equal(open.get(call(2))?.closed, false, "the other call stays open");
  open.get(call(2))?.outgoing.end('data: {"jsonrpc":"2.0","id":2,"result":{}}\n\n');
  await waitUntil(() => logEvents(logPath).some((line) => / closed by the client$/.test(line)), "the note", 10_000);
  const closed = logEvents(logPath).filter((line) => line.endsWith("closed by the client"));
  const first = logEvents(logPath).find((line) => line.startsWith("→ ") && line.endsWith(call(1)));
  assert.deepEqual(closed, [`# ${first?.slice(2, first.indexOf(">") + 1)} closed by the client`]);
});

test("two clients that send id 1 at once are told apart: each answer is paired with its own exchange", LIMIT, async (t) => {
  const waiting: { body: string; outgoing: ServerResponse }[] = [];
  const server = await upstream(async (incoming, outgoing) => {
    waiting.push({ body: (await readBody(incoming)).toString(), outgoing });
    if (waiting.length < 2) return;
    // Answered in the other order: pairing by id alone would swap them.
    for (const { body, outgoing: each } of waiting.reverse()) {
      each.writeHead(200, { "content-type": "application/json" });
      each.end(`{"jsonrpc":"2.0","id":1,"result":{"echo":${body.includes('"b"') ? '"b"' : '"a"'}}}`);
    }
  });
  t.after(() => server.close());
  const logPath = join(tempFolder("wrap-http-"), "wire.log");
  const wrap = await startWrap(logPath, server.url);
  t.after(() => wrap.stop());
  const [a, b] = await Promise.all(["a", "b"].map((name) =>
    send(wrap.url, { agent: new Agent(), body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"${name}"}}` })));
  assert.match(a?.body.toString() ?? "", /"echo":"a"/);
  assert.match(b?.body.toString() ?? "", /"echo":"b"/);
  const events = logEvents(logPath);
  const froms = events.flatMap((line) => /^# <\d> POST \/mcp (from 127\.0\.0\.1:\d+)$/.exec(line)?.[1] ?? []);
  assert.equal(new Set(froms).size, 2, "each client by its own address");
  for (const name of ["a", "b"]) {
    const asked = events.find((line) => line.includes(`"name":"${name}"`));
    const exchange = /^→ (<\d>) /.exec(asked ?? "")?.[1];
    const answered = events.find((line) => line.includes(`"echo":"${name}"`));
    assert.match(answered ?? "", new RegExp(`^← ${exchange} \\(\\d+\\.\\d ms\\) `), events.join("\n"));
  }
  assert.ok(!events.some((line) => /\[(no request|id in use)\]/.test(line)), events.join("\n"));
});

test("500 connections at once: every client gets its own answer, and wrap stays within 256 MiB", LIMIT, async (t) => {
  const CONNECTIONS = 500;
  const waiting: { body: string; outgoing: ServerResponse }[] = [];
  const server = await upstream(async (incoming, outgoing) => {
    waiting.push({ body: (await readBody(incoming)).toString(), outgoing });
    if (waiting.length < CONNECTIONS) return;
    for (const { body, outgoing: each } of waiting) {
      const n = /"n":(\d+)/.exec(body)?.[1];
      each.writeHead(200, { "content-type": "application/json" });
      each.end(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"${n}"}]}}`);
    }
  });
  t.after(() => server.close());
  const logPath = join(tempFolder("wrap-http-"), "wire.log");
  const wrap = await startWrap(logPath, server.url);
  t.after(() => wrap.stop());
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
  t.after(() => agent.destroy());
  const answers = await Promise.all(Array.from({ length: CONNECTIONS }, (_, n) =>
    send(wrap.url, { agent, body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"n":${n}}}}` })));
  answers.forEach((answer, n) => assert.match(answer.body.toString(), new RegExp(`"text":"${n}"`)));
  const peak = peakMemoryMiB(wrap.pid);
  t.diagnostic(`wrap's peak memory, 500 connections at once: ${peak.toFixed(1)} MiB`);
  assert.ok(peak < MEMORY_LIMIT_MIB, `${peak} MiB`);
  const paired = logEvents(logPath).filter((line) => /^← <\d+> \(\d+\.\d ms\) /.test(line));
  assert.equal(paired.length, CONNECTIONS);
});

test("a 1 GiB event stream passes whole, each event logged as it passes, and wrap stays within 256 MiB", LIMIT, async (t) => {
  const message = JSON.stringify({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "x".repeat(1_000_000) } });
  const event = Buffer.from(`data: ${message}\n\n`);
  const EVENTS = Math.ceil(2 ** 30 / event.length);
  const server = await upstream(async (incoming, outgoing) => {
    await readBody(incoming);
    outgoing.writeHead(200, { "content-type": "text/event-stream" });
    for (let sent = 0; sent < EVENTS; sent++) {
      if (!outgoing.write(event)) await once(outgoing, "drain");
    }
    outgoing.end();
  });
  t.after(() => server.close());
  const logPath = join(tempFolder("wrap-http-"), "wire.log");
  const wrap = await startWrap(logPath, server.url);
  t.after(() => wrap.stop());
  const received = await new Promise<number>((resolve, reject) => {
    const sent = request(wrap.url, { method: "POST" }, (stream) => {
      let bytes = 0;
      stream.on("data", (chunk: Buffer) => (bytes += chunk.length));
      stream.on("end", () => resolve(bytes));
    });
    sent.on("error", reject);
    sent.end('{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{}}');
  });
  assert.equal(received, EVENTS * event.length);
  const peak = peakMemoryMiB(wrap.pid);
  t.diagnostic(`wrap's peak memory, a ${(received / 2 ** 30).toFixed(2)} GiB event stream: ${peak.toFixed(1)} MiB`);
  assert.ok(peak < MEMORY_LIMIT_MIB, `${peak} MiB`);
  // Every event is a line of the log: counted as the log streams by, never held.
  await wrap.stop();
  let newlines = 0;
  for await (const chunk of createReadStream(logPath)) {
    if (!Buffer.isBuffer(chunk)) continue;
    for (let at = chunk.indexOf(0x0a); at !== -1; at = chunk.indexOf(0x0a, at + 1)) newlines += 1;
  }
  // listen, the request's head and line, the answer's head, the events, the unanswered request, the exit.
  assert.equal(newlines, EVENTS + 6);
});

test("an answer line over 16 MiB passes whole and is logged cut, after the note the stdio tap writes", LIMIT, async (t) => {
  const body = `{"jsonrpc":"2.0","id":1,"result":{"text":"${"y".repeat(17 * 2 ** 20)}"}}`;
  const server = await upstream(async (incoming, outgoing) => {
    await readBody(incoming);
    outgoing.writeHead(200, { "content-type": "application/json" });
    outgoing.end(body);
  });
  t.after(() => server.close());
  const logPath = join(tempFolder("wrap-http-"), "wire.log");
  const wrap = await startWrap(logPath, server.url);
  t.after(() => wrap.stop());
  const answer = await send(wrap.url, { body: '{"jsonrpc":"2.0","id":1,"method":"tools/call"}' });
  assert.equal(answer.body.length, body.length);
  const events = logEvents(logPath);
  const size = Buffer.byteLength(body);
  assert.ok(events.includes(`# the next ← line is cut: the log keeps ${16 * 2 ** 20} of ${size} bytes`), events.map((line) => line.slice(0, 80)).join("\n"));
  const cut = events.find((line) => line.startsWith("← <1> "));
  assert.ok(cut?.startsWith(`← <1> [${size} bytes] {"jsonrpc":"2.0","id":1,"result":{"text":"yyy`));
  assert.equal(Buffer.byteLength(cut ?? ""), Buffer.byteLength(`← <1> [${size} bytes] `) + 16 * 2 ** 20);
});

test("a SIGKILL of wrap keeps every line a client has got; a SIGTERM also notes what was left unanswered", LIMIT, async (t) => {
  const server = await startHttpServer(serverPath);
  t.after(() => server.stop());
  const logPath = join(tempFolder("wrap-http-"), "wire.log");
  const killed = await startWrap(logPath, server.url);
  t.after(() => killed.child.kill("SIGKILL"));
  for (let id = 1; id <= 20; id++) await send(killed.url, { headers: MODERN_HEADERS, body: addCall(id, id, 1) });
  killed.child.kill("SIGKILL");
  await killed.finish;
  const events = logEvents(logPath);
  for (let id = 1; id <= 20; id++) {
    assert.ok(events.includes(`→ <${id}> ${addCall(id, id, 1)}`), `→ ${id}`);
    assert.ok(events.some((line) => line.startsWith(`← <${id}> (`) && line.includes(`"text":"${id} + 1 = ${id + 1}"`)), `← ${id}`);
  }

  const held = await upstream(async (incoming, outgoing) => {
    await readBody(incoming);
    outgoing.writeHead(200, { "content-type": "text/event-stream" });
    outgoing.write(": open\n\n");
  });
  t.after(() => held.close());
  const otherLog = join(tempFolder("wrap-http-"), "wire.log");
  const wrap = await startWrap(otherLog, held.url);
  const sent = request(wrap.url, { method: "POST" });
  sent.on("error", () => {});
  sent.end('{"jsonrpc":"2.0","id":9,"method":"subscriptions/listen","params":{}}');
  await waitUntil(() => logEvents(otherLog).includes("# <1> 200 text/event-stream"), "the stream to open", 10_000);
  const finished = await wrap.stop();
  assert.equal(finished.code, 143);
  const last = logEvents(otherLog).slice(-2);
  assert.match(last[0] ?? "", /^# unanswered → <1> 9 "subscriptions\/listen" \(waited \d+\.\d ms\)$/);
  assert.equal(last[1], "# exit signal SIGTERM");
});

test("--listen takes [HOST:]PORT and one http or https URL; anything else is a usage error", LIMIT, async () => {
  for (const words of [["--listen", "0"], ["--listen", "x:y", "http://127.0.0.1:1/mcp"], ["--listen", "0", "ftp://127.0.0.1/mcp"],
    ["--listen", "0", "http://127.0.0.1:1/mcp", "more"], ["--listen", "0", "not a url"]]) {
    const finished = await run(process.execPath, [wrapPath, ...words], "");
    assert.equal(finished.code, 2, words.join(" "));
    assert.match(finished.stderr, /^Usage: wrap /);
  }
});

test("SDK v2's client through wrap to SDK v2's HTTP server: discover, list and call are logged with their headers", LIMIT, async (t) => {
  const sdkServer = start(process.execPath, ["--import", "tsx", join(root, "bench", "sdk-v2-http-server.ts")], { cwd: root });
  t.after(async () => {
    sdkServer.child.kill("SIGTERM");
    await sdkServer.finish;
  });
  await waitUntil(() => /http:\/\/\S+\/mcp\b/.test(sdkServer.errors()), "the SDK server's URL", 30_000);
  const target = /(http:\/\/\S+\/mcp)\b/.exec(sdkServer.errors())?.[1] ?? "";
  const logPath = join(tempFolder("wrap-http-"), "wire.log");
  const wrap = await startWrap(logPath, target);
  t.after(() => wrap.stop());
  const client = new Client({ name: "wrap-http-sdk", version: "2.0.0" }, { versionNegotiation: { mode: "auto" } });
  await client.connect(new StreamableHTTPClientTransport(new URL(wrap.url)));
  t.after(() => client.close());
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((tool) => tool.name), ["add"]);
  const sum = await client.callTool({ name: "add", arguments: { a: 19, b: 23 } });
  assert.deepEqual(sum.content, [{ type: "text", text: "19 + 23 = 42" }]);

  const events = logEvents(logPath);
  const heads = events.filter((line) => / POST \/mcp from /.test(line));
  for (const [method, name] of [["server/discover"], ["tools/list"], ["tools/call", "add"]]) {
    const head = heads.find((line) => line.toLowerCase().includes(`· mcp-method: ${method}`));
    assert.ok(head !== undefined, `no head for ${method}:\n${events.join("\n")}`);
    assert.match(head, /· mcp-protocol-version: 2026-07-28/i);
    if (name !== undefined) assert.match(head, /· mcp-name: add/i);
    const exchange = /^# (<\d+>) /.exec(head)?.[1];
    assert.ok(events.some((line) => line.startsWith(`→ ${exchange} `) && line.includes(`"method":"${method}"`)), method);
    assert.ok(events.some((line) => new RegExp(`^← ${exchange} \\(\\d+\\.\\d ms\\) `).test(line)), `${method}'s answer, paired`);
  }
  assert.ok(!events.some((line) => /\[(no request|id in use|not JSON-RPC)\]/.test(line)), events.join("\n"));
});
