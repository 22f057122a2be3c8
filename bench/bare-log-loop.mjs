#!/usr/bin/env node
// bare-log-loop.mjs — the floor for reading a wire.log: read it line by line as a stream
// and JSON.parse each message, and nothing else. `wrap stats` is measured against it.
//
// A message line is `<time> <mark> [(<ms> ms) ][<tags> ]<message>`: the message starts at
// its first "{" or "[" after the mark. Lines of the server's stderr and wrap's own events
// hold no message. It prints how many messages it parsed.
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";

let parsed = 0;
const input = createReadStream(process.argv[2] ?? "");
const lines = createInterface({ input, crlfDelay: Infinity });
for await (const line of lines) {
  const mark = line.charAt(line.indexOf(" ") + 1);
  if (mark !== "→" && mark !== "←") continue;
  const start = line.search(/[{[]/);
  try {
    JSON.parse(line.slice(start));
    parsed += 1;
  } catch {
    // Not JSON: counted by nothing, as wrap stats counts it as no message.
  }
}
process.stdout.write(`${parsed}\n`);
