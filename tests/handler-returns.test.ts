/**
 * Whatever a tool's handler returns or throws, its call is answered and the server lives on
 * (issue 31). Handlers written in plain JavaScript can hand back anything: each row below is
 * pasted into a copy of server.ts four times, as `(args, context) => VALUE`,
 * `async (args, context) => VALUE` (handlers that take their context) and `(args) => VALUE`,
 * `async (args) => VALUE` (handlers that take their arguments alone, as add does), and built. Over real pipes, each call is followed by a ping;
 * every call must get a tool error naming what came back, every ping its answer, the log one
 * line per call, and the server must exit 0 at the end of input.
 */
import { before, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bundle } from "../build.mjs";
import { messages, root, start, tempFolder, withEntries, type Reply } from "./helpers.ts";

/** What a handler hands back: returned or thrown, the code that does it, and the text the client
 * must get for it. */
interface Row {
  name: string;
  gives: "returns" | "throws";
  code: string;
  text: string;
}

/** Each value, returned; the text names what came back. */
const RETURNED: Row[] = [
  ["undefined", "undefined", "undefined"],
  ["null", "null", "null"],
  ["a_string", '"oops"', "a string"],
  ["a_number", "42", "a number"],
  ["an_empty_object", "({})", "an object whose content is undefined"],
  ["content_as_text", '({ content: "text" })', "an object whose content is a string"],
].map(([name = "", code = "", what = ""]) => ({
  name, gives: "returns", code, text: `The tool returned ${what}, not a result with a content array`,
}));

/** Each value, thrown: a tool error with the value as its text, as before (issue 31's last row). */
const THROWN: Row[] = [
  ["a_string", '"oops"', "oops"],
  ["null", "null", "null"],
  ["undefined", "undefined", "undefined"],
].map(([name = "", code = "", text = ""]) => ({ name, gives: "throws", code, text }));

/** The four handler forms: whether they take a context, and whether they are async. */
const FORMS = [
  { suffix: "sync", head: "(args, context) =>" },
  { suffix: "async", head: "async (args, context) =>" },
  { suffix: "sync_args_only", head: "(args) =>" },
  { suffix: "async_args_only", head: "async (args) =>" },
];

/** The tool names of a row, one per form. */
function toolsOf(row: Row): string[] {
  return FORMS.map(({ suffix }) => `${row.gives}_${row.name}_${suffix}`);
}

/** A row's four entries for TOOLS. */
function entriesOf(row: Row): string[] {
  return FORMS.map(({ suffix, head }) => {
    const body = row.gives === "returns" ? row.code : `{ throw ${row.code}; }`;
    return `  {
    name: "${row.gives}_${row.name}_${suffix}",
    description: "${row.gives} ${row.code.replaceAll('"', "'")}",
    inputSchema: { type: "object", properties: {} },
    handler: ${head} ${body},
  },`;
  });
}

let server = "";

before(async () => {
  const folder = tempFolder("handler-returns-");
  const rows = [...RETURNED, ...THROWN];
  const source = withEntries(readFileSync(join(root, "server.ts"), "utf8"), rows.flatMap(entriesOf), "");
  writeFileSync(join(folder, "server.ts"), source);
  server = join(folder, "server.mjs");
  const foreign = await bundle(join(folder, "server.ts"), server);
  assert.deepEqual(foreign, []);
});

/** One JSON-RPC request as a line. */
function request(id: number, method: string, params?: object): string {
  return `${JSON.stringify({ jsonrpc: "2.0", id, method, ...(params && { params }) })}\n`;
}

for (const row of [...RETURNED, ...THROWN]) {
  const what = `${row.gives === "returns" ? "returns" : "throws"} ${row.code}`;
  test(`a handler that ${what}, sync or async, gets a tool error, and the server answers a ping and exits 0`,
    async (t) => {
      const peer = start(process.execPath, [server]);
      t.after(() => peer.child.kill());
      const tools = toolsOf(row);
      const input = tools.map((name, call) => {
        return request(call + 1, "tools/call", { name, arguments: {} }) + request(call + 101, "ping");
      });
      peer.child.stdin.end(input.join(""));
      const { code, stdout, stderr } = await peer.finish;
      assert.equal(code, 0, stderr);
      const replies = messages(stdout).filter((reply): reply is Reply => typeof reply === "object");
      const byId = new Map(replies.map((reply) => [reply.id, reply]));
      for (const [call, name] of tools.entries()) {
        const reply = byId.get(call + 1);
        assert.deepEqual(reply?.result, { content: [{ type: "text", text: row.text }], isError: true }, name);
        assert.deepEqual(byId.get(call + 101)?.result, {}, `the ping after ${name}`);
        assert.ok(stderr.includes(`[server] tool "${name}" failed: ${row.text}\n`), `the log of ${name}`);
      }
    });
}
