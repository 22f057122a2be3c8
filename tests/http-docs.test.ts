/**
 * docs/http.md and docs/http.ja.md, "The same handlers over HTTP", run as tests: each curl
 * transcript of the chapter is run again against a live server, and must print what it shows.
 *
 * A transcript is a `console` block. The test walks the chapter's blocks in order, as a reader
 * does with two terminals:
 * - A command that starts a server (`[NAME=VALUE ]... node SCRIPT --http 8080`) starts SCRIPT from
 *   the project's root with those variables, on a free port of 127.0.0.1 (`--http 127.0.0.1:0`),
 *   and its first stderr line must be the block's, with the port it got in place of 8080. It
 *   serves every curl command after it, up to the next server; then it is ended.
 * - A `$ curl …` command, with its `\` continuation lines, runs in /bin/sh as a reader pastes it,
 *   with the server's port in place of 8080, and must print the lines under it.
 *
 * Masked, and nothing else: the `Date`, `Connection` and `Keep-Alive` headers, which the chapter
 * leaves out (Node adds them to every reply, and Date changes); the CRLF that ends a header line;
 * blank lines at the end; and a `requestState`, which the server signs with a key it makes at
 * start. The chapter writes a state `…`; a command that carries `…` is sent with the state the
 * server last gave, as a client echoes it.
 *
 * curl is /usr/bin/curl on Debian. Where it is missing, each command is sent by a stand-in over
 * node:http instead: the command line is split into words as sh splits it, and the reply printed
 * as `curl -si` prints it. Where curl is there, the stand-in runs the English chapter once more,
 * so that it is held to what curl printed.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { request } from "node:http";
import { type Fence, documentText, fences } from "./documents.ts";
import { lines, root, start, track } from "./helpers.ts";

/** The chapter, in both languages: their blocks are the same, which readme.test.ts checks. */
const CHAPTERS = ["docs/http.md", "docs/http.ja.md"];

/** Where curl is, on Debian. */
const CURL = "/usr/bin/curl";

/** The port the chapter writes; each server the test starts gets a free one in its place. */
const CHAPTER_PORT = "8080";

/** A command that starts a server: variables, the script, and the chapter's port. */
const SERVER_COMMAND = /^((?:[A-Z_]+=\S+ )*)node (\S+) --http 8080$/;

/** The line a server names its endpoint in. */
const ENDPOINT = /http:\/\/127\.0\.0\.1:(\d+)\/mcp/;

/** The headers the chapter leaves out of every reply. */
const LEFT_OUT = /^(date|connection|keep-alive):/i;

/** A requestState in a reply or a command; the chapter writes each one `…`. */
const REQUEST_STATE = /"requestState":"[^"]*"/g;

/** The environment variables that change what a server does; a test sets only the chapter's. */
const SERVER_VARIABLES = ["MCP_BEARER_TOKEN", "MCP_STATE_SECRET", "MCP_STATE_SECRET_FILE"];

/** How long a server may take to say where it listens: agents-server.mjs builds first. */
const STARTUP_MS = 20_000;

/** One step of the chapter: a server to start or a curl command to run, and what it printed. */
interface Step {
  where: string;
  command: string;
  output: string[];
}

/** Sends a curl command line and returns what it printed. */
type Sender = (command: string) => Promise<string>;

/** The commands of a console block, each with its continuation lines and the lines it printed. */
function commandsOf(file: string, fence: Fence): Step[] {
  const steps: Step[] = [];
  let continued = false;
  for (const [index, text] of fence.body.entries()) {
    const last = steps.at(-1);
    if (continued && last !== undefined) last.command += `\n${text}`;
    else if (text.startsWith("$ ")) steps.push({ where: `${file}:${fence.line + 1 + index}`, command: text.slice(2), output: [] });
    else last?.output.push(text);
    continued = text.endsWith("\\") && (continued || text.startsWith("$ "));
  }
  return steps;
}

/** The chapter's steps in order: every server it starts and every curl command it runs. */
function stepsOf(file: string): Step[] {
  return fences(documentText(file))
    .filter((fence) => fence.info === "console")
    .flatMap((fence) => commandsOf(file, fence))
    .filter(({ command }) => SERVER_COMMAND.test(command) || command.startsWith("curl "));
}

/** What a command printed, as the chapter shows it: line ends and left-out headers gone, a
 * requestState shortened, and no blank lines at the end. */
function shown(printed: string, port: string): string[] {
  const [head = "", ...body] = printed.replaceAll(`127.0.0.1:${port}`, `127.0.0.1:${CHAPTER_PORT}`).split("\r\n\r\n");
  const headers = head.split("\r\n").filter((line) => !LEFT_OUT.test(line));
  const all = [...headers, "", ...body.join("\r\n\r\n").replace(REQUEST_STATE, '"requestState":"…"').split("\n")];
  while (all.at(-1) === "") all.pop();
  return all;
}

/** The output lines of a step, without the blank lines at its end. */
function trimmed(output: readonly string[]): string[] {
  const all = [...output];
  while (all.at(-1) === "") all.pop();
  return all;
}

// ---- Sending a command: curl, or a stand-in over node:http ----

/** Runs a command line in sh, from the project's root, with no input (stdin is /dev/null, so
 * that a command done before it would read has no pipe to break). */
async function shell(command: string, env: NodeJS.ProcessEnv = process.env) {
  const child = track(spawn("/bin/sh", ["-c", command], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] }));
  let [stdout, stderr] = ["", ""];
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const [code]: unknown[] = await once(child, "close");
  return { code, stdout, stderr };
}

/** Runs a curl command line in sh, as a reader pastes it. */
async function sendWithCurl(command: string): Promise<string> {
  const { code, stdout, stderr } = await shell(command, withoutProxies());
  assert.equal(code, 0, `curl failed: ${stderr}`);
  return stdout;
}

/** This environment without the variables that would send curl through a proxy. */
function withoutProxies(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !/_proxy$/i.test(name)));
}

/** The words of a command line as sh splits them: `\` and a newline join lines, single quotes
 * keep what they hold as it is, and a backslash outside them keeps the next character. The
 * chapter quotes with single quotes only; a double quote is refused rather than read wrong. */
function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  for (let at = 0; at < line.length; at++) {
    const char = line[at] ?? "";
    if (char === "\\" && line[at + 1] === "\n") at += 1;
    else if (char === "\\") word = `${word ?? ""}${line[++at] ?? ""}`;
    else if (char === '"') throw new Error("the stand-in reads single quotes only");
    else if (char === "'") {
      const end = line.indexOf("'", at + 1);
      word = `${word ?? ""}${line.slice(at + 1, end)}`;
      at = end;
    } else if (/\s/.test(char)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else word = `${word ?? ""}${char}`;
  }
  return word === undefined ? words : [...words, word];
}

/** What a curl command asks for. */
interface CurlRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
}

/** What a curl command asks for, from the options the chapter uses: -s, -i, -N, -H and -d. */
function curlRequest(command: string): CurlRequest {
  const [program, ...words] = shellWords(command);
  assert.equal(program, "curl");
  const parsed: CurlRequest = { url: "", method: "GET", headers: { accept: "*/*" }, body: undefined };
  for (let at = 0; at < words.length; at++) {
    const [word = "", value = ""] = [words[at], words[at + 1]];
    if (/^-[siN]+$/.test(word)) continue;
    if (word !== "-H" && word !== "-d") {
      if (word.startsWith("-")) throw new Error(`the stand-in does not know curl's ${word}`);
      parsed.url = word;
      continue;
    }
    at += 1;
    if (word === "-H") parsed.headers[value.slice(0, value.indexOf(":")).toLowerCase()] = value.slice(value.indexOf(":") + 1).trim();
    else [parsed.body, parsed.method] = [value, "POST"];
  }
  // curl's own default for a body: a form, unless a header says otherwise.
  if (parsed.body !== undefined) parsed.headers["content-type"] ??= "application/x-www-form-urlencoded";
  return parsed;
}

/** Sends what a curl command asks for over node:http, and prints the reply as `curl -si` does. */
async function sendWithNode(command: string): Promise<string> {
  const { url, method, headers, body } = curlRequest(command);
  const length = body === undefined ? {} : { "content-length": String(Buffer.byteLength(body)) };
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { method, headers: { ...headers, ...length }, agent: false }, (reply) => {
      const pairs = [];
      for (let at = 0; at < reply.rawHeaders.length; at += 2) pairs.push(`${reply.rawHeaders[at]}: ${reply.rawHeaders[at + 1]}\r\n`);
      let text = `HTTP/${reply.httpVersion} ${reply.statusCode} ${reply.statusMessage}\r\n${pairs.join("")}\r\n`;
      reply.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
      reply.on("end", () => resolve(text)).on("error", reject);
    });
    outgoing.on("error", reject).end(body);
  });
}

// ---- Walking the chapter ----

/** A server the chapter started, as the test runs it. */
type Server = { port: string; stop: () => Promise<void> };

/** Starts the server a step names, on a free port, and checks the line it says where. */
async function startServer(step: Step): Promise<Server> {
  const [, variables = "", script = ""] = SERVER_COMMAND.exec(step.command) ?? [];
  const given = Object.fromEntries(variables.trim().split(" ").filter((word) => word !== "").map((word) => word.split("=", 2)));
  const inherited = Object.entries(process.env).filter(([name]) => !SERVER_VARIABLES.includes(name));
  const env = { ...Object.fromEntries(inherited), ...given };
  const server = start(process.execPath, [script, "--http", "127.0.0.1:0"], { cwd: root, env });
  const stop = async () => {
    server.child.kill("SIGTERM");
    await server.finish;
  };
  const deadline = Date.now() + STARTUP_MS;
  while (!ENDPOINT.test(server.errors()) && server.child.exitCode === null && Date.now() < deadline) {
    await new Promise((go) => setTimeout(go, 10));
  }
  const port = ENDPOINT.exec(server.errors())?.[1];
  if (port === undefined) {
    await stop();
    assert.fail(`${step.where}: the server said no endpoint:\n${server.errors()}`);
  }
  const said = lines(server.errors()).slice(0, trimmed(step.output).length);
  assert.deepEqual(said.map((line) => line.replace(`127.0.0.1:${port}`, `127.0.0.1:${CHAPTER_PORT}`)), trimmed(step.output));
  return { port, stop };
}

/** Runs one curl step against the server: the port swapped in, the last requestState echoed. */
async function runCurl(step: Step, server: Server, send: Sender, lastState: string | undefined): Promise<string> {
  const state = lastState === undefined ? '"requestState":"…"' : lastState;
  const command = step.command.replaceAll(`127.0.0.1:${CHAPTER_PORT}`, `127.0.0.1:${server.port}`).replaceAll('"requestState":"…"', state);
  return send(command);
}

/** Walks a chapter's steps with a sender, each a subtest, every server ended when it is done. */
async function walkChapter(t: TestContext, file: string, send: Sender): Promise<void> {
  let server: Server | undefined;
  let lastState: string | undefined;
  t.after(() => server?.stop());
  for (const step of stepsOf(file)) {
    if (SERVER_COMMAND.test(step.command)) {
      await server?.stop();
      server = undefined;
      await t.test(`the server started at ${step.where} says where it listens`, async () => {
        server = await startServer(step);
      });
      continue;
    }
    const current = server;
    await t.test(`the curl command at ${step.where} prints what the chapter shows`, async () => {
      assert.ok(current !== undefined, `${step.where}: no server runs here; the chapter must start one before it`);
      const printed = await runCurl(step, current, send, lastState);
      lastState = printed.match(REQUEST_STATE)?.at(-1) ?? lastState;
      assert.deepEqual(shown(printed, current.port), trimmed(step.output));
    });
  }
}

// ---- The tests ----

/** Whether curl is here; if not, the stand-in sends every command. */
const curlHere = existsSync(CURL);

for (const file of CHAPTERS) {
  const how = curlHere ? "curl" : "the node:http stand-in for curl (curl is not installed)";
  test(`the curl transcripts of ${file}, sent with ${how}, print what the chapter shows`, async (t) => {
    await walkChapter(t, file, curlHere ? sendWithCurl : sendWithNode);
  });
}

test("the node:http stand-in prints what curl printed, for every command of docs/http.md", { skip: !curlHere && "curl is not installed" }, async (t) => {
  await walkChapter(t, "docs/http.md", sendWithNode);
});

test("the chapter starts a server, then runs curl commands against it", () => {
  for (const file of CHAPTERS) {
    const steps = stepsOf(file);
    assert.ok(SERVER_COMMAND.test(steps[0]?.command ?? ""), `${file} runs curl before it starts a server`);
    assert.ok(steps.filter(({ command }) => command.startsWith("curl ")).length >= 10, `${file} has few curl commands`);
  }
});

test("the stand-in splits each curl command of the chapter into the words sh hands curl", async () => {
  const commands = stepsOf("docs/http.md").filter(({ command }) => command.startsWith("curl "));
  for (const { where, command } of commands) {
    // printf in place of curl prints each word it is given, each ended by a NUL.
    const { stdout } = await shell(command.replace(/^curl /, "printf '%s\\0' curl "));
    assert.deepEqual(shellWords(command), stdout.split("\0").slice(0, -1), where);
  }
});
