#!/usr/bin/env node
// parse-responder.mjs — the floor for a stdio server that does its JSON work: bare node
// that parses each request line and stringifies one reply, and nothing else.
//
// It reads the way bare-responder.mjs does (stdin as UTF-8 text, each chunk split on "\n"
// with the unterminated tail kept for the next chunk, all of a chunk's replies in one
// write), but it parses every line with JSON.parse, and answers each message that has an
// id with JSON.stringify of a reply of the shape and size of server.ts's tools/call answer,
// carrying that id. No check, no dispatch: what no server that speaks JSON can skip.
import process from "node:process";

const CONTENT = [{ type: "text", text: "2 + 3 = 5" }];

let partial = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  const lines = `${partial}${chunk}`.split("\n");
  partial = lines.pop() ?? "";
  let out = "";
  for (const line of lines) {
    const message = JSON.parse(line);
    if (message.id === undefined) continue;
    out += `${JSON.stringify({ jsonrpc: "2.0", id: message.id, result: { content: CONTENT } })}\n`;
  }
  if (out !== "") process.stdout.write(out);
});
process.stdout.on("error", () => process.exit(0));
