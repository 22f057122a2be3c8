/**
 * The article's part 2 experiment: Claude Code registered over Streamable HTTP to
 * `wrap --listen`, in front of `dist/server.mjs --http`, calls add through the stand-in model
 * (messages-api.ts), and wrap records the session in the stdio log's format:
 *
 *     node dist/wrap.mjs --log wire.log --listen 127.0.0.1:0 http://127.0.0.1:PORT/mcp
 *     claude mcp add --transport http json-rpc-study http://127.0.0.1:WRAP_PORT/mcp
 *     claude -p "addツールで100と111を足して" --allowedTools mcp__json-rpc-study__add
 *
 * The server is a copy of server.ts that offers `tools.listChanged`, so that Claude Code also
 * opens a `subscriptions/listen` stream (tests/claude-code/http.test.ts says why). The log
 * must show server/discover, subscriptions/listen, tools/list and tools/call, each with its
 * head (MCP-Protocol-Version, Mcp-Method, and Mcp-Name on the call), the call's answer paired
 * with it, and the stream closed by Claude Code as it exits.
 *
 * UPDATE_FIXTURES=1 keeps the recording as tests/fixtures/claude-code-http.log, times and all,
 * for the readers' and the browser's tests. .ci/run runs this folder under `unshare -n`.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseBody, root, run, start, waitUntil, wrapPath } from "../helpers.ts";
import { httpRegistration } from "../documents.ts";
import { startHttpServer } from "../fixtures/http-recorder.ts";
import { buildListChanged, claude, isolatedEnv, isObject, requireClaude, scratch } from "./claude.ts";
import { ADD_TOOL, lastToolResults, startMessagesApi, type MessagesApi } from "./messages-api.ts";

/** The prompt, in the article's words. */
const PROMPT = "addツールで100と111を足して";

/** Registration, one turn and its end, on a loaded 2-core machine. */
const SESSION_TIMEOUT = { timeout: 300_000 };

/** Where the recording is kept for other tests, when asked to. */
const FIXTURE = join(root, "tests", "fixtures", "claude-code-http.log");

/** What one session left behind: how the turn ended, and wrap's log as lines. */
interface Session { code: number | null; stderr: string; output: unknown; toolResults: string[][]; lines: string[];
  built: string }

let api: MessagesApi | undefined;

before(async () => {
  requireClaude();
  api = await startMessagesApi();
});

after(async () => {
  await api?.close();
});

/** Serves the copy over HTTP behind `wrap --listen`, registers wrap's URL and runs one turn. */
async function recordSession(): Promise<Session> {
  if (api === undefined) throw new Error("The session runs only inside this file's tests");
  const env = isolatedEnv(scratch("wrap-http-home"), api.url);
  const project = scratch("wrap-http-project");
  const logPath = join(scratch("wrap-http-log"), "wire.log");
  const built = await buildListChanged("wrap-http-list-changed");
  const server = await startHttpServer(built);
  const wrap = start(process.execPath, [wrapPath, "--log", logPath, "--listen", "127.0.0.1:0", server.url]);
  try {
    await waitUntil(() => /listening on http:\/\/\S+\/mcp/.test(wrap.errors()), "wrap's listening line", 20_000);
    const url = /listening on (http:\/\/\S+?\/mcp)\b/.exec(wrap.errors())?.[1] ?? "";
    const added = await claude(httpRegistration("claude", url), env, project);
    assert.equal(added.code, 0, added.stderr);
    const from = api.requests.length;
    const finished = await claude(["-p", PROMPT, "--allowedTools", ADD_TOOL, "--output-format", "json"], env, project);
    const text = () => readFileSync(logPath, "utf8");
    // Claude Code has exited; the stream it held is closed a moment later.
    await waitUntil(() => / closed by the client\n/.test(text()), "the listen stream to close", 10_000).catch(() => {});
    wrap.child.kill("SIGTERM");
    await wrap.finish;
    if (process.env.UPDATE_FIXTURES === "1") copyFileSync(logPath, FIXTURE);
    const toolResults = api.requests.slice(from).map((request) => lastToolResults(request.body));
    return { code: finished.code, stderr: finished.stderr, output: parseBody(finished.stdout),
      toolResults: toolResults.filter((found) => found.length > 0), lines: text().split("\n").filter((line) => line !== ""),
      built };
  } finally {
    wrap.child.kill("SIGKILL");
    await server.stop();
  }
}

/** The session, run once however many tests read it. */
let recorded: Promise<Session> | undefined;
function session(): Promise<Session> {
  recorded ??= recordSession();
  return recorded;
}

/** A log's lines without their times. */
function events(lines: readonly string[]): string[] {
  return lines.map((line) => line.slice(line.indexOf(" ") + 1));
}

/** The exchange whose → line carries a request for `method`: its number, head, lines and end. */
function exchangeOf(all: readonly string[], method: string) {
  const sent = all.find((line) => line.startsWith("→ <") && line.includes(`"method":"${method}"`));
  const number = /^→ <(\d+)> /.exec(sent ?? "")?.[1];
  assert.ok(number !== undefined, `no → line for ${method}:\n${all.join("\n")}`);
  const own = all.filter((line) => line.startsWith(`# <${number}> `) || line.startsWith(`← <${number}> `));
  return { number, head: own[0] ?? "", answerHead: own[1] ?? "", own };
}

test("Claude Code through wrap --listen gets 100 + 111 = 211 from add, and the log shows discover, listen, list and call with their headers", SESSION_TIMEOUT, async () => {
  const { code, stderr, output, toolResults, lines } = await session();
  assert.equal(code, 0, `claude exited ${code}:\n${stderr}`);
  assert.ok(isObject(output) && output.is_error === false, JSON.stringify(output));
  assert.deepEqual(toolResults, [["100 + 111 = 211"]]);

  const all = events(lines);
  assert.match(all[0] ?? "", /^# listen http:\/\/127\.0\.0\.1:\d+\/mcp → http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  for (const method of ["server/discover", "subscriptions/listen", "tools/list", "tools/call"]) {
    const { head, answerHead } = exchangeOf(all, method);
    assert.match(head, /^# <\d+> POST \/mcp from 127\.0\.0\.1:\d+ · /, method);
    assert.match(head, / · MCP-Protocol-Version: 2026-07-28( ·|$)/i, head);
    assert.match(head, new RegExp(` · Mcp-Method: ${method}( ·|$)`, "i"), head);
    if (method === "tools/call") assert.match(head, / · Mcp-Name: add( ·|$)/i, head);
    assert.match(answerHead, /^# <\d+> 200 (application\/json|text\/event-stream)/, method);
  }
  const call = exchangeOf(all, "tools/call");
  assert.ok(call.own.some((line) => /^← <\d+> \(\d+\.\d ms\) .*"text":"100 \+ 111 = 211"/.test(line)), call.own.join("\n"));
  const listen = exchangeOf(all, "subscriptions/listen");
  assert.match(listen.answerHead, /^# <\d+> 200 text\/event-stream/);
  assert.ok(listen.own.some((line) => line.includes('"method":"notifications/subscriptions/acknowledged"')), listen.own.join("\n"));
  assert.ok(listen.own.includes(`# <${listen.number}> closed by the client`), listen.own.join("\n"));
  assert.equal(all.at(-1), "# exit signal SIGTERM");
  assert.ok(!all.some((line) => /\[(no request|id in use|not JSON-RPC)\]/.test(line)), all.join("\n"));
});

test("wrap show reads the recorded HTTP session like a stdio one", SESSION_TIMEOUT, async () => {
  const { lines } = await session();
  const logPath = join(scratch("wrap-http-show"), "wire.log");
  writeFileSync(logPath, `${lines.join("\n")}\n`);
  const shown = await run(process.execPath, [wrapPath, "show", logPath], "");
  assert.equal(shown.code, 0);
  assert.match(shown.stdout, /^─── # listen http:\/\/127\.0\.0\.1:\d+\/mcp → /);
  assert.match(shown.stdout, /→ tools\/call add #\S+ \{"a":100,"b":111\}/);
  assert.match(shown.stdout, /← #\S+ \d+\.\d ms result 100 \+ 111 = 211/);
});

test("stats, diagram and check read the recorded HTTP session, and a replay of it to the same server exits 0", SESSION_TIMEOUT, async () => {
  const { lines, built } = await session();
  const logPath = join(scratch("wrap-http-readers"), "wire.log");
  writeFileSync(logPath, `${lines.join("\n")}\n`);
  const stats = await run(process.execPath, [wrapPath, "stats", logPath], "");
  assert.equal(stats.code, 0, stats.stderr);
  assert.match(stats.stdout, /tools\/call/);
  const diagram = await run(process.execPath, [wrapPath, "diagram", logPath], "");
  assert.equal(diagram.code, 0, diagram.stderr);
  assert.match(diagram.stdout, /C->>S: tools\/call add/);
  const check = await run(process.execPath, [wrapPath, "check", logPath], "");
  assert.match(check.stdout, /Over HTTP, not applied: /, check.stdout);
  const server = await startHttpServer(built);
  try {
    const replay = await run(process.execPath, [wrapPath, "replay", logPath, "--url", server.url], "");
    assert.equal(replay.code, 0, `${replay.stdout}${replay.stderr}`);
    assert.match(replay.stdout, /replay: \d+ responses, \d+ match, 0 differ, 0 missing, 0 unexpected/);
  } finally {
    await server.stop();
  }
});
