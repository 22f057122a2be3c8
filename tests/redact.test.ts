/**
 * `wrap redact` against the secrets people leak: each kind docs/wire-log.md lists is caught in
 * a request, a response and a stderr line alike, whether it is a JSON value, sits inside a
 * JSON string, or is plain text, and is replaced whole. Ordinary text stays byte for byte.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { run, serverPath, tempFolder, wrapPath } from "./helpers.ts";

const T = "2026-12-04T10:00:00.000Z";

/** Secrets in text, each with the part that must not survive (fake, in the shapes real ones
 * have). */
const IN_TEXT = [
  ["Authorization: Basic dXNlcjpodW50ZXIy", "dXNlcjpodW50ZXIy"],
  ["Authorization: Bearer abc.def-123", "abc.def-123"],
  ["token gho_16C7e42F292c6912E7710c838347Ae178B4a", "gho_16C7e42F292c6912E7710c838347Ae178B4a"],
  ["token ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"],
  ["github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "11ABCDEFG0123456789"],
  ["key id AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"],
  ["jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0T",
    "dozjgNryP4J3jVmNHl0w5N"],
  ["DB_PASSWORD=hunter2", "hunter2"],
  ["db at postgres://admin:s3cretpw@db.example.com/app", "s3cretpw"],
  ["api_key=k3y-value-1", "k3y-value-1"],
  ["AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI"],
  ["Cookie: session=c00kie-one; theme=c00kie-two", "c00kie-"],
  ["slack xoxb-123456789012-abcdefghijkl", "xoxb-123456789012"],
  ["anthropic sk-ant-api03-abcdefghijklmnopqrstuvwxyz", "abcdefghijklmnopqrstuvwxyz"],
  ["openai sk-proj-abcdefghijklmnopqrst", "sk-proj-abcdefghijklmnopqrst"],
  ["-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4C8Gr7lq3Tn1vQ2x\n-----END RSA PRIVATE KEY-----",
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4C8Gr7lq3Tn1vQ2x"],
] as const;

/** Keys whose values are secrets, whatever their case or separators. */
const SECRET_KEYS = ["accessToken", "clientSecret", "privateKey", "x-api-key", "passwd", "Password",
  "db-password", "SESSION_SECRET", "refresh_token", "Authorization", "cookie", "apiKey"];

/** Near-misses that must stay as they are. */
const KEPT = { max_tokens: 1024, keyboard: "qwerty", progressToken: "p-1", note: "task-abcdefghijklmnopqrst sk-short bearer", sortKey: "name" };

/** A message line as wrap logs it. */
function message(mark: "→" | "←", value: object): string {
  return `${T} ${mark} ${JSON.stringify(value)}`;
}

test("redact replaces every kind of secret whole, in requests, responses and stderr, as JSON values, inside JSON strings and in plain text", async () => {
  const secretKeys = Object.fromEntries(SECRET_KEYS.map((key, index) => [key, `value-${index}-of-a-secret`]));
  const texts = IN_TEXT.map(([text]) => text);
  const log = [
    message("→", { jsonrpc: "2.0", id: 1, method: "tools/call",
      params: { name: "x", arguments: { ...secretKeys, ...KEPT, texts } } }),
    message("←", { jsonrpc: "2.0", id: 1, result: { content: texts.map((text) => ({ type: "text", text })), structuredContent: secretKeys } }),
    ...texts.flatMap((text) => text.split("\n")).map((line) => `${T} ! ${line}`),
    `${T} ! ${JSON.stringify(texts.join(" "))}`,
    "",
  ].join("\n");
  const path = join(tempFolder("redact-"), "wire.log");
  writeFileSync(path, log);
  const { code, stdout } = await run(process.execPath, [wrapPath, "redact", path], "");
  assert.equal(code, 0);
  for (const [text, secret] of IN_TEXT) assert.ok(!stdout.includes(secret), `${text} leaked:\n${stdout}`);
  for (const value of Object.values(secretKeys)) assert.ok(!stdout.includes(value), `${value} leaked`);
  const [sent = "", received = "", ...stderr] = stdout.split("\n");
  const request = JSON.parse(sent.slice(`${T} → `.length));
  const { arguments: args } = request.params;
  for (const key of SECRET_KEYS) assert.equal(args[key], "[redacted]", key);
  for (const [key, value] of Object.entries(KEPT)) assert.deepEqual(args[key], value, key);
  // A value is replaced whole, the scheme of a credential with it.
  assert.equal(args.texts[0], "Authorization: [redacted]");
  assert.equal(args.texts[7], "DB_PASSWORD=[redacted]");
  assert.equal(args.texts[8], "db at postgres://[redacted]@db.example.com/app");
  assert.equal(args.texts[11], "Cookie: [redacted]");
  assert.equal(JSON.parse(received.slice(`${T} ← `.length)).result.structuredContent.accessToken, "[redacted]");
  assert.equal(stderr[0], `${T} ! Authorization: [redacted]`);
  assert.equal(stderr[1], `${T} ! Authorization: [redacted]`);
});

test("a plain add session comes out of redact byte for byte", async () => {
  const logPath = join(tempFolder("redact-plain-"), "wire.log");
  const input = [
    { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "by-hand", version: "1" } } },
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { jsonrpc: "2.0", id: 2, method: "tools/list" },
    { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "add", arguments: { a: 100, b: 111 } } },
    { jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "add", arguments: { a: "1", b: 2 } } },
  ].map((line) => `${JSON.stringify(line)}\n`).join("");
  const recorded = await run(process.execPath, [wrapPath, "--log", logPath, process.execPath, serverPath], input);
  assert.equal(recorded.code, 0);
  const { code, stdout } = await run(process.execPath, [wrapPath, "redact", logPath], "");
  assert.equal(code, 0);
  assert.equal(stdout, readFileSync(logPath, "utf8"));
});

/** Values that open a bracket after a secret's name, each text with what redact makes of it:
 * the value goes whole, to where its brackets close on its line. */
const BRACKETED = [
  // A server's console.error(req.headers), as node prints it.
  ["{ host: 'x', 'set-cookie': [ 'sid=s3ss10n' ], accept: '*/*' }",
    "{ host: 'x', 'set-cookie': [redacted], accept: '*/*' }"],
  ['password: {"value":"hunter2"} then more', "password: [redacted] then more"],
  // Nested brackets, and brackets held in quotes, close where the value does.
  ['"password": {"v": ["n3st3d", {"b": "]}"}], "c": ")"}, "next": 1', '"password": [redacted], "next": 1'],
  ["secret=(qu0t3d 'it]s' [y (z)]) after", "secret=[redacted] after"],
  // A bracket that does not close on its line: the value goes to the line's end.
  ["api_key: [ 'n3v3r closed", "api_key: [redacted]"],
  // A name inside a value already gone is passed over; one after it is not.
  ["token: [ 'a', password='b1nn3d' ] api_key=aft3r", "token: [redacted] api_key=[redacted]"],
] as const;

test("a value that opens a bracket after a secret's name is replaced whole, in stderr, in wrap's notes and inside a JSON string", async () => {
  const log = BRACKETED.flatMap(([text]) => [`${T} ! ${text}`, `${T} # ${text}`,
    message("←", { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: text } })]);
  const path = join(tempFolder("redact-bracket-"), "wire.log");
  writeFileSync(path, `${log.join("\n")}\n`);
  const { code, stdout } = await run(process.execPath, [wrapPath, "redact", path], "");
  assert.equal(code, 0);
  for (const secret of ["s3ss10n", "hunter2", "n3st3d", "qu0t3d", "n3v3r", "b1nn3d", "aft3r"]) {
    assert.ok(!stdout.includes(secret), `${secret} leaked:\n${stdout}`);
  }
  const expected = BRACKETED.flatMap(([, redacted]) => [`${T} ! ${redacted}`, `${T} # ${redacted}`,
    message("←", { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: redacted } })]);
  assert.deepEqual(stdout.split("\n"), [...expected, ""]);
});

test("redact catches the secret headers in an HTTP exchange's notes, and keeps what is already redacted", async () => {
  const notes = [
    ["# <3> POST /mcp from 127.0.0.1:5 · Authorization: Bearer abc · Cookie: a=1; b=2",
      "# <3> POST /mcp from 127.0.0.1:5 · Authorization: [redacted] · Cookie: [redacted]"],
    ["# <4> POST /mcp from 127.0.0.1:6 · Proxy-Authorization: Basic dXNlcjpwYXNz · X-Api-Key: k3y-1",
      "# <4> POST /mcp from 127.0.0.1:6 · Proxy-Authorization: [redacted] · X-Api-Key: [redacted]"],
    ["# <4> 200 text/event-stream · Mcp-Session-Id: s-1 · Set-Cookie: sid=abc; Path=/",
      "# <4> 200 text/event-stream · Mcp-Session-Id: s-1 · Set-Cookie: [redacted]"],
    ["# <5> POST /mcp from 127.0.0.1:7 · Authorization: [redacted] · Cookie: [redacted]",
      "# <5> POST /mcp from 127.0.0.1:7 · Authorization: [redacted] · Cookie: [redacted]"],
  ];
  const path = join(tempFolder("redact-http-"), "wire.log");
  writeFileSync(path, notes.map(([note]) => `${T} ${note}\n`).join(""));
  const { code, stdout } = await run(process.execPath, [wrapPath, "redact", path], "");
  assert.equal(code, 0);
  assert.equal(stdout, notes.map(([, redacted]) => `${T} ${redacted}\n`).join(""));
});
