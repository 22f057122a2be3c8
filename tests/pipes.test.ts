/**
 * The server's pipes can close under it: a client that stops reading stdout has gone
 * away, and a client that closes stderr only loses the logs. Neither may crash the
 * server with a stack trace or cost a reply that can still be delivered.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { once } from "node:events";
import { spawn } from "node:child_process";
import { serverPath, track } from "./helpers.ts";

const initialize = (id: number) => `${JSON.stringify({ jsonrpc: "2.0", id, method: "initialize", params: {} })}\n`;

test("the server exits 0 without a stack trace when its stdout is closed", async () => {
  const child = track(spawn(process.execPath, [serverPath], { stdio: "pipe" }));
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  child.stdout.destroy();
  // Once the server has gone, our own writes to its stdin fail too; that is expected here.
  child.stdin.on("error", () => {});
  const timer = setInterval(() => child.stdin.write(initialize(1)), 5);
  const [code, signal] = await once(child, "close");
  clearInterval(timer);
  assert.deepEqual({ code, signal }, { code: 0, signal: null });
  assert.doesNotMatch(stderr, /Error|\n\s+at /);
});

test("the server keeps answering when its stderr is closed", async () => {
  const child = track(spawn(process.execPath, [serverPath], { stdio: "pipe" }));
  let stdout = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.destroy();
  // Wait for the start-up log to have been written, so the next log line meets the closed pipe.
  await new Promise((resolve) => setTimeout(resolve, 300));
  child.stdin.end(initialize(1) + initialize(2));
  const [code] = await once(child, "close");
  assert.equal(code, 0);
  assert.deepEqual(stdout.trim().split("\n").map((line) => JSON.parse(line).id), [1, 2]);
});

test("a client that reads stdout late still gets the replies in the order it asked", async () => {
  // A reply past a write's size fills the pipe: the rest of its chunk waits for "drain", and a
  // chunk that came meanwhile must not be answered before it.
  const child = track(spawn(process.execPath, [serverPath], { stdio: "pipe" }));
  child.stdout.pause();
  const big = JSON.stringify({ jsonrpc: "2.0", id: "big", method: "m".repeat(2_000_000) });
  const ping = (id: string) => `${JSON.stringify({ jsonrpc: "2.0", id, method: "ping" })}\n`;
  child.stdin.write(`${big}\n${ping("first")}`);
  await new Promise((resolve) => setTimeout(resolve, 300));
  child.stdin.end(ping("second"));
  await new Promise((resolve) => setTimeout(resolve, 300));
  let stdout = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk)).resume();
  const [code] = await once(child, "close");
  assert.equal(code, 0);
  assert.deepEqual(stdout.trim().split("\n").map((line) => JSON.parse(line).id), ["big", "first", "second"]);
});
