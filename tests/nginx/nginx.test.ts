/**
 * Two instances of the server behind nginx, round robin: the "many instances" of issue 40.
 *
 * Since 2026-07-28 the transport is stateless: every message is its own POST, and any instance
 * may answer it. An elicitation is a round trip of several calls (basic/patterns/mrtr): the first
 * is answered `input_required` with a signed `requestState`, and the retry that carries the state
 * back may land on another instance. Instances that share MCP_STATE_SECRET accept each other's
 * states; an instance with another secret refuses them with -32602.
 *
 * nginx is Debian's package, run as a plain child of the test: its config is written into a
 * temporary folder (`-p TEMP -c TEMP/nginx.conf`, `daemon off`, every file it writes inside
 * TEMP), it listens on a free port of 127.0.0.1, and its upstream is two
 * `server.mjs --http 127.0.0.1:0`. The server is a copy of server.ts with docs/tools.md's `deploy`
 * tool pasted in, which asks "Deploy to production?". nginx names the instance that answered each
 * request in an X-Upstream header and in its access log ($upstream_addr): that is how a test
 * knows where each round landed.
 *
 * Run by .ci/run once nginx is installed:
 *   node --import tsx --test --test-timeout=600000 tests/nginx/*.test.ts
 */
import { after, before, test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { join } from "node:path";
import { block } from "../documents.ts";
import { root, start, tempFolder, waitUntil, withEntries, type Reply } from "../helpers.ts";

/** Debian's nginx; /usr/sbin may be missing from PATH for a user who is not root. */
const NGINX = existsSync("/usr/sbin/nginx") ? "/usr/sbin/nginx" : "nginx";

/** How long a process may take to say it is up, on a loaded two-core machine. */
const STARTUP_MS = 20_000;

/** The line an instance names its endpoint in (the HTTP contract). */
const ENDPOINT = /(http:\/\/\S+\/mcp)\b/;

/** The `_meta` of every request: a 2026-07-28 client that can show a form. */
const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "nginx-test", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } },
};

/** The deploy call of every test, and the user's answer to its question. */
const DEPLOY = { name: "deploy", arguments: { environment: "production" } };
const CONFIRMED = { "elicitation-1": { action: "accept", content: { confirm: true } } };
const DEPLOYED = "Deployed to production (a dry run: nothing was changed)";

/** The fixture: server.ts with docs/tools.md's deploy and wait tools, built once for every test. */
const builds = tempFolder("nginx-fixture-");
const fixture = join(builds, "server.mjs");
before(() => {
  const source = join(builds, "server.ts");
  const server = readFileSync(join(root, "server.ts"), "utf8");
  const entries = ["ts deploy", "ts wait"].map((info) => block("docs/tools.md", info));
  writeFileSync(source, withEntries(server, entries, block("docs/tools.md", "ts imports")));
  // Outside the project, the compiler takes a .ts file for CommonJS unless told otherwise.
  writeFileSync(join(builds, "package.json"), '{ "type": "module" }\n');
  const built = spawnSync(process.execPath, [join(root, "build.mjs"), source], { encoding: "utf8" });
  assert.equal(built.status, 0, `${built.stdout}${built.stderr}`);
});
after(() => rmSync(builds, { recursive: true, force: true }));

/** Ends a process made by `start`, and waits until it has. */
async function stop(child: ReturnType<typeof start>): Promise<void> {
  child.child.kill("SIGTERM");
  await child.finish;
}

/** A port of 127.0.0.1 that nothing listens on: the system picks it, and it is let go at once. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((listening) => probe.listen(0, "127.0.0.1", listening));
  const address = probe.address();
  await new Promise((closed) => probe.close(closed));
  if (address === null || typeof address === "string") throw new Error("no port was given");
  return address.port;
}

/** Whether something takes connections on a port of 127.0.0.1. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.on("connect", () => resolve(true)).on("error", () => resolve(false));
    socket.on("connect", () => socket.destroy());
  });
}

/** One instance of the fixture, on a port of its own, signing with `secret`; ended after `t`. */
async function startInstance(t: TestContext, secret: string) {
  const env = { ...process.env, MCP_STATE_SECRET: secret };
  const instance = start(process.execPath, [fixture, "--http", "127.0.0.1:0"], { env });
  t.after(() => stop(instance));
  await waitUntil(() => ENDPOINT.test(instance.errors()), "an instance's endpoint on stderr", STARTUP_MS);
  const endpoint = new URL(ENDPOINT.exec(instance.errors())?.[1] ?? "");
  // nginx's $upstream_addr names an instance by this address.
  return { address: endpoint.host, errors: instance.errors };
}

/** An instance as the tests see it. */
type Instance = Awaited<ReturnType<typeof startInstance>>;

/**
 * nginx's config: one worker, so that round robin takes turns strictly; every file it writes in
 * `folder`; the two instances as one upstream. The Host header is passed on as the client sent
 * it (127.0.0.1:port), since nginx would otherwise send the upstream's name, `mcp`, and the
 * server's DNS-rebinding check refuses a Host that is not a loopback name with 403 ("Forbidden:
 * Host mcp"). Buffering is off so that an event stream reaches the client event by event.
 */
function nginxConf(folder: string, port: number, instances: readonly Instance[]): string {
  const servers = instances.map(({ address }) => `    server ${address};`);
  // A master that runs as root would switch its workers to nobody, who may not enter `folder`.
  const user = process.getuid?.() === 0 ? ["user root root;"] : [];
  return [
    ...user,
    "worker_processes 1;",
    "daemon off;",
    `pid ${folder}/nginx.pid;`,
    `error_log ${folder}/error.log notice;`,
    "events { worker_connections 64; }",
    "http {",
    "  log_format upstream '$request_method $request_uri $status $upstream_addr';",
    `  access_log ${folder}/access.log upstream;`,
    ...["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map(
      (kind) => `  ${kind}_temp_path ${folder}/${kind}_temp;`,
    ),
    "  upstream mcp {",
    ...servers,
    "    keepalive 8;",
    "  }",
    "  server {",
    `    listen 127.0.0.1:${port};`,
    "    location /mcp {",
    "      proxy_pass http://mcp;",
    "      proxy_http_version 1.1;",
    '      proxy_set_header Connection "";',
    "      proxy_set_header Host $http_host;",
    "      proxy_buffering off;",
    "      add_header X-Upstream $upstream_addr always;",
    "    }",
    "  }",
    "}",
    "",
  ].join("\n");
}

/** Two instances behind nginx, each signing with its secret; all three ended after `t`, and
 * nginx's folder removed. */
async function balanced(t: TestContext, secrets: readonly [string, string]) {
  const instances = await Promise.all(secrets.map((secret) => startInstance(t, secret)));
  const folder = tempFolder("nginx-");
  const port = await freePort();
  writeFileSync(join(folder, "nginx.conf"), nginxConf(folder, port, instances));
  const args = ["-p", folder, "-c", join(folder, "nginx.conf"), "-e", join(folder, "error.log")];
  const nginx = start(NGINX, args);
  t.after(async () => {
    await stop(nginx);
    rmSync(folder, { recursive: true, force: true });
  });
  const errorLog = () => {
    const path = join(folder, "error.log");
    return existsSync(path) ? readFileSync(path, "utf8") : "";
  };
  // Up once its port takes a connection; a probe that sends nothing leaves the access log empty.
  const deadline = Date.now() + STARTUP_MS;
  while (!(await listening(port))) {
    const running = nginx.child.exitCode === null && nginx.child.signalCode === null;
    assert.ok(running, `nginx ended: ${nginx.errors()}${errorLog()}`);
    assert.ok(Date.now() < deadline, `nginx did not listen on ${port}: ${errorLog()}`);
    await sleep(10);
  }
  const accessLog = () => readFileSync(join(folder, "access.log"), "utf8");
  return { url: `http://127.0.0.1:${port}/mcp`, instances, accessLog };
}

/** The params of a tools/call, without `_meta`. */
type CallParams = { name: string; arguments: object; inputResponses?: object; requestState?: unknown };

/** What one POST through nginx gave: its status, the instance that answered, and the response. */
type Answered = { status: number; instance: string; reply: Reply };

/** The JSON-RPC response in a POST's body: the body itself, or an event stream's last event. */
function responseIn(body: string, contentType: string): Reply {
  if (!contentType.startsWith("text/event-stream")) return JSON.parse(body);
  const data = body.split("\n").filter((line) => line.startsWith("data:"));
  return JSON.parse(data.at(-1)?.slice("data:".length) ?? "");
}

/** A 2026-07-28 tools/call through nginx, headers and `_meta` as the era wants them, with a
 * progressToken when given; the response is read by the caller. */
function postCall(url: string, id: number, params: CallParams, options: Sending = {}) {
  const progress = options.progressToken === undefined ? {} : { progressToken: options.progressToken };
  const _meta = { ...META, ...progress };
  const request = { jsonrpc: "2.0", id, method: "tools/call", params: { ...params, _meta } };
  const response = fetch(url, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      "MCP-Protocol-Version": "2026-07-28",
      "Mcp-Method": "tools/call",
      "Mcp-Name": params.name,
    },
    body: JSON.stringify(request),
    signal: options.signal ?? null,
  });
  return { request, response };
}

/** What a call may be sent with beside its params. */
type Sending = { progressToken?: string; signal?: AbortSignal };

/** A tools/call through nginx, answered in full; the request and where it landed are printed as
 * the test's diagnostics. */
async function callTool(t: TestContext, url: string, id: number, params: CallParams):
  Promise<Answered> {
  const { request, response: sent } = postCall(url, id, params);
  const response = await sent;
  const body = await response.text();
  const reply = responseIn(body, response.headers.get("Content-Type") ?? "");
  const instance = response.headers.get("X-Upstream") ?? "";
  t.diagnostic(`→ ${JSON.stringify(request)}`);
  t.diagnostic(`← ${response.status} from ${instance}: ${JSON.stringify(reply)}`);
  return { status: response.status, instance, reply };
}

/** A new secret for MCP_STATE_SECRET. */
function newSecret(): string {
  return randomBytes(32).toString("base64url");
}

/** The instances nginx's access log names, a request a line. */
function upstreamsLogged(accessLog: string): string[] {
  return accessLog.split("\n").filter((line) => line !== "").map((line) => line.split(" ").at(-1) ?? "");
}

test("an elicitation whose rounds land on different instances completes when they share a secret", async (t) => {
  const secret = newSecret();
  const { url, instances, accessLog } = await balanced(t, [secret, secret]);
  const first = await callTool(t, url, 1, DEPLOY);
  assert.equal(first.status, 200);
  assert.equal(first.reply.result?.resultType, "input_required");
  const { requestState } = first.reply.result ?? {};
  assert.equal(typeof requestState, "string");
  const retry = await callTool(t, url, 2, { ...DEPLOY, inputResponses: CONFIRMED, requestState });
  assert.notEqual(retry.instance, first.instance, "round robin sends the retry to the other instance");
  assert.equal(retry.status, 200);
  assert.equal(retry.reply.result?.resultType, "complete", JSON.stringify(retry.reply));
  assert.deepEqual(retry.reply.result?.content, [{ type: "text", text: DEPLOYED }]);
  // nginx's log names the same two instances, and only the retry's ran the deploy to its end.
  // nginx writes a request's line once it has sent the response, so it may come just after it.
  await waitUntil(() => upstreamsLogged(accessLog()).length >= 2, "two lines of access log", STARTUP_MS);
  for (const line of accessLog().trimEnd().split("\n")) t.diagnostic(`nginx: ${line}`);
  assert.deepEqual(upstreamsLogged(accessLog()), [first.instance, retry.instance]);
  const deployer = instances.find(({ address }) => address === retry.instance);
  const other = instances.find(({ address }) => address === first.instance);
  const deployed = /deploy: would now deploy the build to production/;
  await waitUntil(() => deployed.test(deployer?.errors() ?? ""), "the deploy's log line", STARTUP_MS);
  assert.doesNotMatch(other?.errors() ?? "", deployed);
  for (const { errors } of instances) assert.ok(!errors().includes(secret), "the secret is never logged");
});

test("a requestState signed by one instance is refused by an instance with another secret", async (t) => {
  const { url } = await balanced(t, [newSecret(), newSecret()]);
  const first = await callTool(t, url, 1, DEPLOY);
  const { requestState } = first.reply.result ?? {};
  assert.equal(typeof requestState, "string");
  const retry = { ...DEPLOY, inputResponses: CONFIRMED, requestState };
  const refused = await callTool(t, url, 2, retry);
  assert.notEqual(refused.instance, first.instance, "round robin sends the retry to the other instance");
  assert.equal(refused.status, 200, "-32602 is an error of the call, not of the request's HTTP");
  assert.equal(refused.reply.error?.code, -32602);
  assert.match(refused.reply.error?.message ?? "", /requestState" is not one we wrote/);
  // The same retry on the instance that signed the state completes: it was the key that differed.
  const accepted = await callTool(t, url, 3, retry);
  assert.equal(accepted.instance, first.instance);
  assert.deepEqual(accepted.reply.result?.content, [{ type: "text", text: DEPLOYED }]);
});

test("add through nginx is answered by each of the two instances", async (t) => {
  const secret = newSecret();
  const { url, instances } = await balanced(t, [secret, secret]);
  const sums = [await callTool(t, url, 1, { name: "add", arguments: { a: 2, b: 3 } })];
  sums.push(await callTool(t, url, 2, { name: "add", arguments: { a: 4, b: 5 } }));
  assert.deepEqual(sums.map(({ status }) => status), [200, 200]);
  assert.deepEqual(sums.map(({ reply }) => reply.result?.content), [
    [{ type: "text", text: "2 + 3 = 5" }],
    [{ type: "text", text: "4 + 5 = 9" }],
  ]);
  const answeredBy = sums.map(({ instance }) => instance).sort();
  assert.deepEqual(answeredBy, instances.map(({ address }) => address).sort());
});

test("a call's progress comes through nginx as it is sent, ahead of the call's response", async (t) => {
  const secret = newSecret();
  const { url } = await balanced(t, [secret, secret]);
  const closed = new AbortController();
  t.after(() => closed.abort());
  const call = { name: "wait", arguments: { seconds: 60 } };
  const { response: sent } = postCall(url, 1, call, { progressToken: "wait-1", signal: closed.signal });
  const response = await sent;
  assert.match(response.headers.get("Content-Type") ?? "", /^text\/event-stream/);
  assert.ok(response.body !== null);
  // The first second's event, read as soon as it comes: a hop that held events back would hand it
  // over with the response, a minute later. (nginx 1.22 passes small events on even with
  // proxy_buffering on; off keeps a slow client's stream out of nginx's temporary files.)
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let received = "";
  while (!received.includes("\n\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    received += value;
  }
  // Closing the stream cancels the call (the HTTP contract): the instance stops waiting.
  closed.abort();
  const [first = ""] = received.split("\n\n");
  assert.match(first, /^event: message\ndata: /);
  const progress = { progressToken: "wait-1", progress: 1, total: 60, message: "1 of 60 seconds" };
  assert.deepEqual(JSON.parse(first.slice(first.indexOf("data: ") + "data: ".length)), {
    jsonrpc: "2.0", method: "notifications/progress", params: progress,
  });
  assert.doesNotMatch(received, /"result"/, "the response has not come yet");
});
