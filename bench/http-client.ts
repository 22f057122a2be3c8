/**
 * bench/http-client.ts — what the two benchmarks over Streamable HTTP share (bench/http.ts, the
 * servers; bench/wrap-http.ts, the proxies in front of one): the processes they start, each of
 * which names its endpoint in one stderr line, and the keep-alive client that calls them with a
 * 2026-07-28 tools/call of `add`. Not a benchmark itself.
 */
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { Agent, request as httpRequest } from "node:http";
import type { Socket } from "node:net";
import process from "node:process";
import { start } from "../tests/helpers.ts";

/** A started process that serves HTTP: its endpoint, its pid, and how to end it. */
export interface Running {
  url: URL;
  pid: number;
  stop: () => Promise<void>;
}

/** An HTTP answer as the client read it. */
export interface Answer {
  status: number;
  body: string;
}

/** A keep-alive client: the agent that pools its connections, and every socket it opened. */
export interface Client {
  agent: Agent;
  sockets: Set<Socket>;
}

/** How long a process may take to start, and one answer to come. */
export const TIMEOUT_MS = 60_000;

/** The protocol revision our client speaks. */
export const PROTOCOL_VERSION = "2026-07-28";

/** The headers of every call, as a 2026-07-28 client sends them (Content-Length aside). */
export const CALL_HEADERS = {
  "Content-Type": "application/json",
  Accept: "application/json, text/event-stream",
  "MCP-Protocol-Version": PROTOCOL_VERSION,
  "Mcp-Method": "tools/call",
  "Mcp-Name": "add",
};

/** The line a server prints once it listens, and where its endpoint is. */
export const URL_LINE = /(http:\/\/\S+\/mcp)\b/;

/** A tools/call of add(a, 1) with a 2026-07-28 client's `_meta` envelope. */
export function callBody(id: number, a: number): string {
  const _meta = {
    "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
    "io.modelcontextprotocol/clientInfo": { name: "bench", version: "0.1.0" },
    "io.modelcontextprotocol/clientCapabilities": {},
  };
  const params = { name: "add", arguments: { a, b: 1 }, _meta };
  return JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params });
}

/** Resolves with a process's URL once its stderr names it (the first match of `line`); rejects
 * if it exits or is late. */
function endpoint(child: ChildProcessWithoutNullStreams, name: string, stderr: () => string,
  line: RegExp): Promise<URL> {
  return new Promise((resolve, reject) => {
    const late = () => fail(`printed no URL within ${TIMEOUT_MS / 1000} s`);
    const timer = setTimeout(late, TIMEOUT_MS);
    const seen = () => {
      const found = line.exec(stderr())?.[1];
      if (found === undefined) return;
      done();
      resolve(new URL(found));
    };
    const exited = (code: number | null) => fail(`exited with ${code} before it listened`);
    function done() {
      clearTimeout(timer);
      child.stderr.off("data", seen);
      child.off("exit", exited);
    }
    function fail(why: string) {
      done();
      reject(new Error(`${name}: ${why}; its stderr:\n${stderr().slice(-2_000)}`));
    }
    child.stderr.on("data", seen);
    child.on("exit", exited);
  });
}

/** Starts `node file ...args`, and waits until its stderr names its endpoint with `line`. */
export async function launch(name: string, file: string, args: readonly string[],
  line = URL_LINE): Promise<Running> {
  const { child, finish, errors } = start(process.execPath, [file, ...args]);
  child.stdin.end();
  const stop = async () => {
    child.kill("SIGTERM");
    const late = setTimeout(() => child.kill("SIGKILL"), 5_000);
    await finish;
    clearTimeout(late);
  };
  try {
    return { url: await endpoint(child, name, errors, line), pid: child.pid ?? 0, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** A keep-alive client of at most `maxSockets` connections. */
export function client(maxSockets: number): Client {
  return { agent: new Agent({ keepAlive: true, maxSockets }), sockets: new Set() };
}

/** POSTs one call to the endpoint over the client's connections, and reads the whole answer. */
export function post(url: URL, through: Client, body: string): Promise<Answer> {
  const headers = { ...CALL_HEADERS, "Content-Length": Buffer.byteLength(body) };
  const options = { method: "POST", agent: through.agent, headers, timeout: TIMEOUT_MS };
  return new Promise((resolve, reject) => {
    const sent = httpRequest(url, options, (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (text += chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body: text }));
      response.on("error", reject);
    });
    sent.on("socket", (socket) => through.sockets.add(socket));
    sent.on("timeout", () => sent.destroy(new Error(`no answer within ${TIMEOUT_MS / 1000} s`)));
    sent.on("error", reject);
    sent.end(body);
  });
}
