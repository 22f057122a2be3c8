/**
 * The four agent CLIs of tests/agents over Streamable HTTP: each registers a running
 * `node dist/server.mjs --http 127.0.0.1:0` by its URL with its own `mcp add` line, then runs
 * one non-interactive prompt against its stand-in model (codex.ts, gemini.ts, qwen.ts,
 * copilot.ts) in which the model calls `add` with 100 and 111.
 *
 * The CLI is given the URL of a recording proxy (tests/fixtures/http-recorder.ts) in front of
 * the server, so each
 * test reads what the CLI sent over HTTP, request by request: its first message and protocol
 * version, the verbs, and the headers that the transport defines (Origin, Mcp-Session-Id,
 * MCP-Protocol-Version, Mcp-Method, Mcp-Name). The lines, as a reader types them:
 *
 *     codex mcp add json-rpc-study --url http://127.0.0.1:PORT/mcp
 *     gemini mcp add --transport http json-rpc-study http://127.0.0.1:PORT/mcp
 *     qwen mcp add --transport http json-rpc-study http://127.0.0.1:PORT/mcp
 *     copilot mcp add --transport http json-rpc-study http://127.0.0.1:PORT/mcp
 *
 * In short: none sends Origin, Mcp-Session-Id or DELETE. Codex's `mcp add` looks for OAuth
 * metadata (GET /mcp, then seven /.well-known paths); its session posts `initialize`
 * 2025-06-18 and never GETs. Gemini CLI posts `initialize` 2025-06-18, tries one GET for a
 * stream, and sends no MCP-Protocol-Version at all (its McpComplianceTransport wrapper does not
 * pass the SDK's setProtocolVersion on). Qwen Code posts `initialize` 2025-11-25 (it probes
 * with server/discover only for a stdio entry that asks for it) and tries one GET. Copilot CLI
 * opens with `server/discover` and stays in 2026-07-28, every request with its
 * MCP-Protocol-Version and Mcp-Method, tools/call with Mcp-Name; it opens no
 * subscriptions/listen. To record every exchange for the docs, set HTTP_EXCERPT to a file.
 *
 * Run as .ci/run runs the agents suite, in a network namespace where only loopback exists:
 *
 *     unshare -n sh -c 'ip link set lo up && exec node --import tsx --test \
 *       --test-timeout=600000 tests/agents/http.test.ts'
 */
import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { appendFileSync, readFileSync } from "node:fs";
import { serverPath, type Finished } from "../helpers.ts";
import { httpRegistration } from "../documents.ts";
import { isObject } from "../claude-code/claude.ts";
import {
  SERVER_NAME, cliPath, endProcessesOf, isolatedEnv, processesLeft, runCli, scratch,
} from "./agents.ts";
import {
  ADD_CALL as CODEX_ADD, codexExec, configPath, configureEntry, prepareHome, startResponsesApi,
  textsOf, toolOutputs,
} from "./codex.ts";
import {
  ADD_CALL as GEMINI_ADD, MODEL, configure as configureGemini, functionResponses, gemini,
  geminiEnv, projectServers, startGeminiApi,
} from "./gemini.ts";
import {
  ADD_CALL as QWEN_ADD, askQwen, configure as configureQwen, entryOf,
  startChatCompletionsApi as startQwenApi,
} from "./qwen.ts";
import {
  configEntry, copilotEnv, prompt, startChatCompletionsApi as startCopilotApi, toolName,
} from "./copilot.ts";
import { toolResults, type StandIn } from "./stand-in.ts";
import {
  headerValues, messagesReceived, messagesSent, methodsOf, startHttpServer, startRecorder,
  type Exchange,
} from "../fixtures/http-recorder.ts";

// ---- The CLIs' lines ----

/** The four CLIs, by the names of their commands. */
type Cli = "codex" | "gemini" | "qwen" | "copilot";

/**
 * Each CLI's line that registers a server by URL, as words after the CLI's name: docs/http.md's
 * own (its ```sh register-http block). Codex takes `--url`; the others take the URL in place of
 * the command and `--transport http`, which Gemini CLI needs (without it the URL is stored as a
 * command) and Qwen Code and Copilot CLI would infer from the `http://`.
 */
function httpLine(cli: Cli, url: string): string[] {
  return httpRegistration(cli, url);
}

// ---- The server, the recorder, one session ----

/** What the server answers to the article's call. */
const SUM = "100 + 111 = 211";

/** The prompt; no stand-in reads it, it is there for the reader. */
const PROMPT = "Add 100 and 111 with the add tool of json-rpc-study";

/** How long the processes of a session may take to end once the CLI has exited. */
const SETTLE_MS = 10_000;

/** How long one group's session may take on a loaded 2-core machine. */
const TIMEOUT = { timeout: 300_000 };

/** What one session gave. */
interface Session {
  /** How `mcp add` ended. */
  added: Finished;
  /** The server's entry as `mcp add` wrote it. */
  entry: unknown;
  /** How the prompt's command ended. */
  finished: Finished;
  /** What the model was told of each call, as text. */
  told: string[];
  /** What `mcp add` sent the server, if anything, with the server's answers. */
  registration: Exchange[];
  /** Every request the CLI sent the server during the prompt, with the server's answers. */
  exchanges: Exchange[];
  /** The CLI's processes still running SETTLE_MS after it exited (then ended). */
  left: number[];
  /** The URL the CLI was given. */
  url: string;
  /** The server's stderr. */
  serverLog: string;
}

/** What a runner does in a HOME and project of its own: register by `url`, then prompt. */
interface Runner {
  start: () => Promise<StandIn>;
  register: (home: string, project: string, api: StandIn, url: string) => Promise<Finished>;
  entry: (home: string, project: string) => unknown;
  prompt: (home: string, project: string, api: StandIn) => Promise<Finished>;
  told: (api: StandIn) => string[];
}

/**
 * Starts the server on a free port and a recorder in front of it, runs `runner` in a new HOME
 * and project, and ends all of it: the CLI's processes, the stand-in, the recorder, the server.
 */
async function session(cli: Cli, runner: Runner): Promise<Session> {
  const home = scratch(`http-${cli}-home`);
  const project = scratch(`http-${cli}-project`);
  const server = await startHttpServer(serverPath);
  const cleanups: (() => Promise<void>)[] = [server.stop];
  try {
    const recorder = await startRecorder(server.url);
    cleanups.push(recorder.close);
    const api = await runner.start();
    cleanups.push(api.close);
    const added = await runner.register(home, project, api, recorder.url);
    assert.equal(added.code, 0, `${cli} mcp add exited ${added.code}:\n${added.stderr}`);
    const entry = runner.entry(home, project);
    const registration = recorder.exchanges.splice(0);
    const finished = await runner.prompt(home, project, api);
    const left = await processesLeft(home, SETTLE_MS);
    return { added, entry, registration, finished, told: runner.told(api),
      exchanges: [...recorder.exchanges], left, url: recorder.url, serverLog: server.errors() };
  } finally {
    await endProcessesOf(home);
    for (const cleanup of cleanups.reverse()) await cleanup();
  }
}

/** Runs `cli`'s session once before the tests of the enclosing group; the getter returns it. */
function sessionBefore(cli: Cli, runner: Runner): () => Session {
  let recorded: Session | undefined;
  before(async () => {
    recorded = await session(cli, runner);
    saveExcerpt(cli, recorded);
  }, TIMEOUT);
  return () => {
    if (recorded === undefined) throw new Error(`The ${cli} session did not run`);
    return recorded;
  };
}

// ---- One runner per CLI ----

/** Codex: `codex exec`, its entry approving every call and required (see codex.ts). */
const CODEX: Runner = {
  start: () => startResponsesApi([CODEX_ADD]),
  register: async (home, project, api, url) => {
    prepareHome(home, api);
    const added = await runCli(cliPath("codex"), httpLine("codex", url), isolatedEnv(home, {}),
      project);
    configureEntry(home, { default_tools_approval_mode: "approve", required: true });
    return added;
  },
  entry: (home) => readFileSync(configPath(home), "utf8"),
  prompt: (home, project) => codexExec(PROMPT, home, project),
  // After Codex's "Wall time: … Output:" part, the result's own text.
  told: (api) => toolOutputs(api.requests.at(-1)?.body)
    .map((result) => textsOf(result.output).join("\n").replace(/^Wall time: .*\nOutput:\n?/, "")),
};

/** Gemini CLI: `gemini -p PROMPT --yolo -m MODEL` in a trusted project (see gemini.ts). */
const GEMINI: Runner = {
  start: () => startGeminiApi([GEMINI_ADD]),
  register: (home, project, _api, url) => {
    configureGemini(home, project);
    return gemini(httpLine("gemini", url), geminiEnv(home), project);
  },
  entry: (_home, project) => projectServers(project)[SERVER_NAME],
  prompt: (home, project, api) =>
    gemini(["-p", PROMPT, "--yolo", "-m", MODEL], geminiEnv(home, api.url), project),
  told: (api) => functionResponses(api.requests.at(-1)?.body).map((told) => JSON.stringify(told)),
};

/** Qwen Code: `qwen PROMPT --auth-type openai`, the entry loading every tool (see qwen.ts). */
const QWEN: Runner = {
  start: () => startQwenApi([QWEN_ADD]),
  register: async (home, project, _api, url) => {
    const added = await runCli(cliPath("qwen"), httpLine("qwen", url), isolatedEnv(home, {}),
      project);
    configureQwen(home);
    return added;
  },
  entry: (home) => entryOf(home),
  prompt: (home, project, api) => askQwen(PROMPT, home, project, api),
  told: (api) => toolResults(api.requests.at(-1)?.body),
};

/** Copilot CLI: `copilot -p`, offline, every tool allowed (see copilot.ts). */
const COPILOT: Runner = {
  start: () => startCopilotApi([{ tool: toolName("add"), arguments: { a: 100, b: 111 } }]),
  register: (home, project, api, url) =>
    runCli(cliPath("copilot"), httpLine("copilot", url), copilotEnv(home, api.url), project),
  entry: (home) => configEntry(home),
  prompt: (home, project, api) => prompt(PROMPT, home, project, api.url),
  told: (api) => toolResults(api.requests.at(-1)?.body),
};

// ---- Reading what crossed ----

/** Each kind of request the CLI made, once, in order of first use: `GET /mcp -> 405`. */
function kindsOf(exchanges: readonly Exchange[]): string[] {
  const kinds = exchanges.map((exchange) => {
    return `${exchange.method} ${exchange.path} -> ${exchange.status ?? "no answer"}`;
  });
  return [...new Set(kinds)];
}

/** The protocol version of the CLI's first message: initialize's, or the 2026-07-28 _meta's. */
function firstVersion(exchanges: readonly Exchange[]): unknown {
  const [first] = messagesSent(exchanges);
  const params = isObject(first?.params) ? first.params : {};
  if (first?.method === "initialize") return params.protocolVersion;
  const meta = isObject(params._meta) ? params._meta : {};
  return meta["io.modelcontextprotocol/protocolVersion"];
}

/** The exchange that carried the tools/call of add, with the server's answer. */
function addExchange(exchanges: readonly Exchange[]): Exchange | undefined {
  return exchanges.find((exchange) => messagesSent([exchange]).some((message) => {
    const params = isObject(message.params) ? message.params : {};
    return message.method === "tools/call" && params.name === "add";
  }));
}

/** The text of the first text block of the result in an exchange's answer. */
function resultText(exchange: Exchange | undefined): unknown {
  if (exchange === undefined) return undefined;
  const [answer] = messagesReceived(exchange).filter((message) => "result" in message);
  const result = isObject(answer?.result) ? answer.result : {};
  const [block] = Array.isArray(result.content) ? result.content : [];
  return isObject(block) ? block.text : undefined;
}

/** One line per request, with every header the CLI sent: for a failure message and the docs. */
function transcript(exchanges: readonly Exchange[]): string {
  return exchanges.map((exchange) => {
    const headers = Object.entries(exchange.headers)
      .filter(([name]) => name !== "host" && name !== "content-length")
      .map(([name, value]) => `${name}: ${String(value)}`);
    const body = exchange.message === undefined ? "" : ` ${JSON.stringify(exchange.message)}`;
    const answer = exchange.responseBody === "" ? "" : `\n  <- ${exchange.responseBody.trim()}`;
    return `${exchange.method} ${exchange.path} -> ${exchange.status ?? "no answer"}`
      + ` [${headers.join("; ")}]${body}${answer}`;
  }).join("\n");
}

/** The server's URL as the docs write it. */
const URL_IN_DOCS = "http://127.0.0.1:PORT/mcp";

/** When HTTP_EXCERPT names a file, appends what crossed in a session there, for the docs. */
function saveExcerpt(cli: Cli, session: Session): void {
  const { added, registration, exchanges, serverLog } = session;
  const excerptFile = process.env.HTTP_EXCERPT;
  if (excerptFile === undefined) return;
  const said = `${added.stdout}${added.stderr}`.trim();
  const text = `---- ${cli}: mcp add ----\n${said}\n${transcript(registration)}\n`
    + `---- ${cli}: the prompt ----\n${transcript(exchanges)}\n`
    + `---- ${cli}: the server's stderr ----\n${serverLog}`;
  appendFileSync(excerptFile, text.replace(/http:\/\/127\.0\.0\.1:\d+\/mcp/g, URL_IN_DOCS));
}

/** What one CLI is measured to send: the facts the tests of its group hold it to. */
interface Expected {
  /** The JSON-RPC methods of the prompt, in order. */
  methods: string[];
  /** The protocol version of its first message. */
  version: string;
  /** Each kind of request of the prompt, once: verb, path and the server's status. */
  kinds: string[];
  /** The values of MCP-Protocol-Version it sent. */
  protocolVersions: string[];
  /** The values of Mcp-Method it sent. */
  mcpMethods: string[];
  /** The values of Mcp-Name it sent. */
  mcpNames: string[];
}

/**
 * Checks the server's side of every exchange as the contract has it: another path gets 404,
 * another verb on /mcp 405 with `Allow: POST`, and a POST that carries a request its answer as
 * JSON (add sends nothing before its result).
 */
function assertAnswers(exchanges: readonly Exchange[]): void {
  for (const exchange of exchanges) {
    const seen = transcript([exchange]);
    if (exchange.path !== "/mcp") {
      assert.equal(exchange.status, 404, seen);
    } else if (exchange.method !== "POST") {
      assert.equal(exchange.status, 405, seen);
      assert.equal(exchange.responseHeaders.allow, "POST", seen);
    } else if (exchange.status === 200) {
      assert.match(exchange.responseHeaders["content-type"] ?? "", /^application\/json/, seen);
    }
  }
}

/** Checks a session against what its CLI is measured to send, and that the sum came back. */
function assertSession(cli: Cli, session: Session, expected: Expected): void {
  const { finished, told, exchanges } = session;
  const seen = transcript(exchanges);
  assert.equal(finished.code, 0, `${cli} exited ${finished.code}:\n${finished.stderr}`);
  // The first message and the call keep their places; a CLI may send the lists between at once.
  const methods = methodsOf(exchanges);
  assert.deepEqual(methods.toSorted(), expected.methods.toSorted(), seen);
  assert.equal(methods[0], expected.methods[0], seen);
  assert.equal(methods.at(-1), "tools/call", seen);
  assert.equal(firstVersion(exchanges), expected.version, seen);
  assert.deepEqual(kindsOf(exchanges), expected.kinds, seen);
  assert.deepEqual(headerValues(exchanges, "mcp-protocol-version"), expected.protocolVersions);
  assert.deepEqual(headerValues(exchanges, "mcp-method"), expected.mcpMethods);
  assert.deepEqual(headerValues(exchanges, "mcp-name"), expected.mcpNames);
  // The server never mints a session, and no CLI here is a browser.
  assert.deepEqual(headerValues(exchanges, "mcp-session-id"), [], seen);
  assert.deepEqual(headerValues(exchanges, "origin"), [], seen);
  assertAnswers(exchanges);
  const call = addExchange(exchanges);
  assert.equal(resultText(call), SUM, seen);
  assert.ok(told.some((text) => text.includes(SUM)), `the model was told ${told.join(" | ")}`);
  assert.deepEqual(session.left, [], "processes left running with the session's HOME");
}

// ---- The sessions ----

/** The answers of a legacy session: a request gets 200, a notification 202. */
const POSTS = ["POST /mcp -> 200", "POST /mcp -> 202"];

/** The handshake era's opening, as every legacy client here sends it. */
const HANDSHAKE = ["initialize", "notifications/initialized"];

describe("Codex, registered with codex mcp add NAME --url URL", () => {
  const recorded = sessionBefore("codex", CODEX);

  test("mcp add looks for OAuth metadata with GETs that get 405 and 404, then writes the URL",
    () => {
      const { added, entry, url, registration } = recorded();
      // No "may or may not require login" line: the 404s told Codex there is no OAuth.
      assert.equal(added.stdout, `Added global MCP server '${SERVER_NAME}'.\n`);
      const table = `\n[mcp_servers.${SERVER_NAME}]\nurl = "${url}"\n`;
      assert.ok(String(entry).includes(table), String(entry));
      const seen = transcript(registration);
      const paths = registration.map((exchange) => `${exchange.method} ${exchange.path}`);
      assert.equal(paths[0], "GET /mcp", seen);
      const wellKnown = /^GET \/(mcp\/)?\.well-known\/(oauth-|openid-)\S+$/;
      assert.ok(paths.length > 1 && paths.slice(1).every((path) => wellKnown.test(path)), seen);
      assertAnswers(registration);
    });

  test("codex exec posts initialize 2025-06-18, no GET, and the model reads the sum", () => {
    assertSession("codex", recorded(), {
      methods: [...HANDSHAKE, "tools/list", "tools/call"],
      version: "2025-06-18",
      kinds: POSTS,
      protocolVersions: ["2025-06-18"],
      mcpMethods: [],
      mcpNames: [],
    });
  });
});

describe("Gemini CLI, registered with gemini mcp add --transport http NAME URL", () => {
  const recorded = sessionBefore("gemini", GEMINI);

  test("mcp add writes the URL with type http to the project, and sends nothing", () => {
    const { entry, url, registration } = recorded();
    assert.deepEqual(entry, { url, type: "http" });
    assert.deepEqual(registration, []);
  });

  test("gemini -p posts initialize 2025-06-18, tries one GET, sends no MCP-Protocol-Version, and the model reads the sum",
    () => {
      assertSession("gemini", recorded(), {
        methods: [...HANDSHAKE, "tools/list", "tools/call"],
        version: "2025-06-18",
        kinds: [...POSTS, "GET /mcp -> 405"],
        protocolVersions: [],
        mcpMethods: [],
        mcpNames: [],
      });
    });
});

describe("Qwen Code, registered with qwen mcp add --transport http NAME URL", () => {
  const recorded = sessionBefore("qwen", QWEN);

  test("mcp add writes the URL as httpUrl to the user's settings, and sends nothing", () => {
    const { entry, url, registration } = recorded();
    // alwaysLoadTools is the test's own addition (qwen.ts).
    assert.deepEqual(entry, { httpUrl: url, alwaysLoadTools: true });
    assert.deepEqual(registration, []);
  });

  test("qwen posts initialize 2025-11-25, tries one GET, and the model reads the sum", () => {
    assertSession("qwen", recorded(), {
      methods: [...HANDSHAKE, "prompts/list", "resources/list", "tools/list", "tools/call"],
      version: "2025-11-25",
      kinds: [...POSTS, "GET /mcp -> 405"],
      protocolVersions: ["2025-11-25"],
      mcpMethods: [],
      mcpNames: [],
    });
  });
});

describe("Copilot CLI, registered with copilot mcp add --transport http NAME URL", () => {
  const recorded = sessionBefore("copilot", COPILOT);

  test("mcp add writes the URL with type http to the user's config, and sends nothing", () => {
    const { entry, url, registration } = recorded();
    assert.deepEqual(entry, { tools: ["*"], type: "http", url });
    assert.deepEqual(registration, []);
  });

  test("copilot -p stays in 2026-07-28: server/discover, then tools/list and tools/call, each with its headers, and the model reads the sum",
    () => {
      const methods = ["server/discover", "tools/list", "tools/call"];
      assertSession("copilot", recorded(), {
        methods,
        version: "2026-07-28",
        kinds: ["POST /mcp -> 200"],
        protocolVersions: ["2026-07-28"],
        mcpMethods: methods,
        mcpNames: ["add"],
      });
    });
});
