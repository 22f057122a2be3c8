/**
 * The rules of wrap's tap, each tested from outside through dist/wrap.mjs over real pipes:
 * how it cuts lines, what it notes, and how it pairs a response with its request. In a
 * conversation the tap reads each chunk as it crosses, and after a burst once the pipes have
 * been quiet for 5 ms (wrap.ts, QUIET_MS), so the tests that pause 200 ms between writes hand
 * it each piece on its own, with its state held in between.
 * The servers are one line of JavaScript each, run by node -e.
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { run, serverPath, start, wrapPath } from "./helpers.ts";

/** No test may hang the run. */
const LIMIT = { timeout: 20_000 };

/** Longer than the tap's quiet time (5 ms), with room for a loaded machine. */
const PAUSE_MS = 200;

const scratch = mkdtempSync(join(tmpdir(), "tap-test-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** A fresh log path in the suite's folder. */
function logPath(): string {
  return join(mkdtempSync(join(scratch, "log-")), "wire.log");
}

/** A log's events without their times: `<mark> [<notes> ]<line>`. */
function eventsIn(path: string): string[] {
  return readFileSync(path, "utf8").trimEnd().split("\n").map((line) => line.replace(/^\S+ /, ""))
    .map((event) => event.replace(/^([→←!]) \(\d+\.\d ms\) /, "$1 (time) "));
}

/** wrap's arguments to log to `path` and run one line of JavaScript as the server. */
function wrapScript(path: string, script: string): string[] {
  return [wrapPath, "--log", path, "--", process.execPath, "-e", script];
}

test("a line that comes in pieces, with the tap catching up between them, is logged once, whole",
  LIMIT, async () => {
    const path = logPath();
    const wrap = start(process.execPath, [wrapPath, "--log", path, "--", process.execPath,
      serverPath]);
    for (const piece of ['{"jsonrpc":"2.0",', '"id":1,', '"method":"ping"}\n']) {
      wrap.child.stdin.write(piece);
      await delay(PAUSE_MS);
    }
    wrap.child.stdin.end();
    assert.equal((await wrap.finish).code, 0);
    const crossed = eventsIn(path).filter((event) => !event.startsWith("#"));
    assert.deepEqual(crossed.filter((event) => !event.startsWith("!")), [
      '→ {"jsonrpc":"2.0","id":1,"method":"ping"}',
      '← (time) {"jsonrpc":"2.0","id":1,"result":{}}',
    ]);
  });

test("a server's stderr line is never noted or paired, even one that reads as a response",
  LIMIT, async () => {
    const path = logPath();
    const script = "process.stderr.write('{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\\n'); " +
      "process.stdin.resume()";
    const { code } = await run(process.execPath, wrapScript(path, script),
      '{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    assert.equal(code, 0);
    const events = eventsIn(path);
    assert.ok(events.includes('! {"jsonrpc":"2.0","id":1,"result":{}}'), events.join("\n"));
    assert.ok(events.some((event) => /^# unanswered → 1 "ping" \(waited/.test(event)));
  });

test("an answered id can be used again, and a response with id null pairs with nothing",
  LIMIT, async () => {
    const path = logPath();
    const ping = '{"jsonrpc":"2.0","id":5,"method":"ping"}';
    const wrap = start(process.execPath, [wrapPath, "--log", path, "--", process.execPath,
      serverPath]);
    // Each line waits for the one before to be answered, as the ids must not overlap.
    for (const line of [ping, ping, "not json"]) {
      const answered = wrap.output().split("\n").length;
      wrap.child.stdin.write(`${line}\n`);
      while (wrap.output().split("\n").length === answered) await delay(10);
    }
    wrap.child.stdin.end();
    assert.equal((await wrap.finish).code, 0);
    const crossed = eventsIn(path).filter((event) => /^[→←]/.test(event));
    const pong = '← (time) {"jsonrpc":"2.0","id":5,"result":{}}';
    assert.deepEqual(crossed.slice(0, 5), [`→ ${ping}`, pong, `→ ${ping}`, pong,
      "→ [not JSON-RPC] not json"]);
    // JSON-RPC 2.0 §5: a parse error's response has id null, which answers no request.
    assert.match(crossed[5] ?? "", /^← \{"jsonrpc":"2\.0","id":null,"error":\{"code":-32700,/);
  });

test("a batch of responses is timed once on its line, and settles every request it answers",
  LIMIT, async () => {
    const path = logPath();
    const batch = '[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{}}]';
    const script = `process.stdin.once('data', () => process.stdout.write('${batch}\\n')); ` +
      "process.stdin.resume()";
    const requests = '{"jsonrpc":"2.0","id":1,"method":"a"}\n' +
      '{"jsonrpc":"2.0","id":2,"method":"b"}\n';
    const { code } = await run(process.execPath, wrapScript(path, script), requests);
    assert.equal(code, 0);
    const events = eventsIn(path);
    assert.ok(events.includes(`← (time) ${batch}`), events.join("\n"));
    assert.deepEqual(events.filter((event) => event.startsWith("# unanswered")), []);
  });

test("a polluted stdout is warned of once, though its lines reach the tap one at a time",
  LIMIT, async () => {
    const path = logPath();
    const script = "process.stdout.write('debug one\\n'); " +
      `setTimeout(() => process.stdout.write('debug two\\n'), ${PAUSE_MS}); process.stdin.resume()`;
    const wrap = start(process.execPath, wrapScript(path, script));
    while (!wrap.output().includes("debug two")) await delay(10);
    await delay(PAUSE_MS);
    wrap.child.stdin.end();
    const { code, stderr } = await wrap.finish;
    assert.equal(code, 0);
    assert.equal(stderr.match(/not JSON-RPC/g)?.length, 1);
    assert.match(stderr, /"debug one"/);
    const events = eventsIn(path);
    assert.ok(events.includes("← [not JSON-RPC] debug one"));
    assert.ok(events.includes("← [not JSON-RPC] debug two"));
  });
