#!/usr/bin/env node
// bare-responder.mjs — the limit for a stdio server: bare node that answers each
// request line with one canned line, without any JSON work.
//
// It reads and writes the way a minimal node program would, and the way server.ts
// does minus the JSON: stdin as UTF-8 text, each chunk split on "\n" with the
// unterminated tail kept for the next chunk, and all of a chunk's replies in one
// write. A line that names no "id" is a notification and gets no reply, so that a
// client sees one line back per request, as from a real server. The reply is the
// size of server.ts's answer to tools/call; its id is always 0, since the client
// that measures this only counts lines.
import process from "node:process";

const REPLY = '{"jsonrpc":"2.0","id":0,"result":{"content":[{"type":"text","text":"2 + 3 = 5"}]}}\n';

let partial = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  const lines = `${partial}${chunk}`.split("\n");
  partial = lines.pop() ?? "";
  let out = "";
  for (const line of lines) if (line.includes('"id"')) out += REPLY;
  if (out !== "") process.stdout.write(out);
});
process.stdout.on("error", () => process.exit(0));
