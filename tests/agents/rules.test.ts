/**
 * The rules of `wrap check`, measured against Codex, Gemini CLI, Qwen Code and Copilot CLI
 * (pinned in tests/agents/package.json; Claude Code's are in tests/claude-code/rules.test.ts).
 * Each test is one cell of docs/clients.md's table "What each CLI does with a defect", named
 * `ROW: what the CLI does` (ROWS in rules.ts) under the CLI's name and version: it runs the defect
 * against the real CLI and asserts what the CLI did with it, so that a new version that changes
 * its behaviour fails here, and the rule in wrap.ts's check is updated with the table.
 *
 * The server is tests/fixtures/defects-server.mjs, registered through wrap with README's line;
 * one session carries several defects, one per tool. Each CLI runs four or five sessions: the
 * tool defects with two calls (a result with a content block of an unknown type, then one with
 * structuredContent alone); an inputSchema without `type: "object"` (with the discover probe
 * refused and a name with a dot); a slow first answer with a stray stdout line before it; and a
 * stray stdout line after tools/list (with the probe answered `{}`).
 *
 * Run it in a loopback-only network namespace, as .ci/run does (about 3 minutes):
 *
 *     npm install --prefix tests/agents --no-audit --no-fund
 *     unshare -n sh -c 'ip link set lo up && exec node --import tsx --test \
 *       --test-timeout=600000 tests/agents/rules.test.ts'
 */
import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { logText } from "../claude-code/claude.ts";
import { methodsSent, paramsOf, withMethod } from "../claude-code/deploy.ts";
import { SERVER_NAME } from "./agents.ts";
import {
  ROWS, assertLoopbackOnly, codexSession, copilotSession, geminiSession, qwenSession, type Call,
  type Observed, type OfferedTool, type Plan,
} from "./rules.ts";

/** The tool defects of the table, one tool each, and the two results the model asks for. */
const TOOL_DEFECTS = ["dotted-name", "spaced-name", "long-names", "formats", "long-description",
  "mixed-result", "structured-only"];

/** The calls of the tools session: the unknown content block, then structuredContent alone. */
const RESULT_CALLS: Call[] = [{ name: "mixed", arguments: {} }, { name: "structured", arguments: {} }];

/** The article's call, to see that a server the CLI kept still answers. */
const ADD: Call[] = [{ name: "add", arguments: { a: 100, b: 111 } }];

/** What `add` answers to it. */
const SUM = "100 + 111 = 211";

/** What the fixture's structured tool answers, as JSON text. */
const STRUCTURED = '{"answer":42,"unit":"lines"}';

/** The text part of the mixed tool's result, which no CLI passes on. */
const MIXED_TEXT = "mixed: the text part";

/** The first 66 characters of the two 70-character names. */
const LONG = "count_every_line_of_every_file_in_the_folder_and_in_each_subfolder";

/** The sessions of one CLI, each run once, when a test first needs it. */
function sessions(run: (plan: Plan) => Promise<Observed>, plans: { [name: string]: Plan }) {
  const started = new Map<string, Promise<Observed>>();
  return (name: string): Promise<Observed> => {
    const plan = plans[name];
    if (plan === undefined) throw new Error(`no session ${name}`);
    const session = started.get(name) ?? run(plan);
    started.set(name, session);
    return session;
  };
}

/** The tool offered under `name`; fails when there is none. */
function offeredAs(observed: Observed, name: string): OfferedTool {
  const tool = observed.offered.find((each) => each.name === name);
  const names = observed.offered.map((each) => each.name).join("\n");
  assert.ok(tool !== undefined, `${name} was not offered; these were:\n${names}`);
  return tool;
}

/** The names offered that match `pattern`. */
function named(observed: Observed, pattern: RegExp): string[] {
  return observed.offered.map((each) => each.name).filter((name) => pattern.test(name)).sort();
}

/** The `day` property of the formats tool's schema, as the model was offered it. */
function dayOf(tool: OfferedTool): unknown {
  const schema = tool.schema;
  assert.ok(typeof schema === "object" && schema !== null && "properties" in schema);
  const properties = schema.properties;
  assert.ok(typeof properties === "object" && properties !== null && "day" in properties);
  return properties.day;
}

/** The protocolVersion of the session's initialize, or undefined when it sent none. */
function initializedIn(observed: Observed): unknown {
  const [initialize] = withMethod(observed.events, "→", "initialize");
  return initialize === undefined ? undefined : paramsOf(initialize).protocolVersion;
}

/** The sessions every CLI runs but Codex, whose slow start differs. */
const PLANS = {
  tools: { defects: TOOL_DEFECTS, calls: RESULT_CALLS },
  untyped: { defects: ["untyped-schema", "discover-refused", "dotted-name"] },
  slow: { defects: ["slow-5000", "noise-before"] },
  noise: { defects: ["noise-after-list", "discover-empty"], calls: ADD },
};

/** Room for a session on a loaded 2-core machine. */
const TIMEOUT = { timeout: 240_000 };

before(() => assertLoopbackOnly());

/** Whether a line of the server's stdout that is no message made it into the log. */
function strayLineLogged(observed: Observed): boolean {
  return observed.events.some((event) => event.text.startsWith("debug: "));
}

/** Whether the CLI sent server/discover in the session. */
function probed(observed: Observed): boolean {
  return methodsSent(observed.events).includes("server/discover");
}

describe("Codex 0.169.0", () => {
  const session = sessions(codexSession, {
    tools: PLANS.tools,
    untyped: PLANS.untyped,
    slow: { defects: ["slow-1500"], calls: ADD },
    required: { defects: ["slow-1500", "noise-before"], calls: ADD, entry: { required: true } },
    late: { defects: ["slow-5000"], calls: ADD },
    noise: PLANS.noise,
  });

  test(`${ROWS.slow}: tools missing, silently (kept with required = true)`, TIMEOUT, async () => {
    const slow = await session("slow");
    assert.deepEqual(slow.offered, [], "the server's tools were offered");
    assert.deepEqual(methodsSent(slow.events).slice(0, 1), ["initialize"], logText(slow.events));
    assert.doesNotMatch(slow.finished.stderr, new RegExp(SERVER_NAME), "Codex said why");
    assert.deepEqual((await session("required")).told, [SUM]);
  });

  test(`${ROWS.late}: tools missing`, TIMEOUT, async () => {
    assert.deepEqual((await session("late")).offered, []);
  });

  test(`${ROWS.noiseBefore}: ignored`, TIMEOUT, async () => {
    const required = await session("required");
    assert.ok(strayLineLogged(required));
    assert.deepEqual(required.told, [SUM]);
  });

  test(`${ROWS.noiseAfter}: ignored`, TIMEOUT, async () => {
    const noise = await session("noise");
    assert.ok(strayLineLogged(noise));
    assert.deepEqual(noise.told, [SUM]);
  });

  test(`${ROWS.names}: my_tool and a hash, each (my_tool alone)`, TIMEOUT, async () => {
    assert.equal(named(await session("tools"), /^my_tool_[0-9a-f]{12}$/).length, 2);
    assert.deepEqual(named(await session("untyped"), /^my/), ["my_tool"]);
  });

  test(`${ROWS.long}: sent as is`, TIMEOUT, async () => {
    const tools = await session("tools");
    assert.deepEqual(named(tools, /^count_/), [`${LONG}_one`, `${LONG}_two`]);
  });

  test(`${ROWS.untyped}: type added`, TIMEOUT, async () => {
    const tool = offeredAs(await session("untyped"), "untyped");
    assert.deepEqual(tool.schema, { type: "object", properties: { text: { type: "string" } } });
  });

  test(`${ROWS.keywords}: format dropped`, TIMEOUT, async () => {
    const tool = offeredAs(await session("tools"), "formats");
    assert.deepEqual(dayOf(tool), { type: "string", description: "The day" });
    assert.ok(JSON.stringify(tool.schema).includes('"additionalProperties":false'));
  });

  test(`${ROWS.description}: kept`, TIMEOUT, async () => {
    assert.equal(offeredAs(await session("tools"), "long_description").description.length, 10_000);
  });

  test(`${ROWS.discover}: never asked (initialize 2025-06-18)`, TIMEOUT, async () => {
    const noise = await session("noise");
    assert.ok(!probed(noise));
    assert.equal(initializedIn(noise), "2025-06-18");
  });

  test(`${ROWS.content}: the call fails`, TIMEOUT, async () => {
    const [mixed] = (await session("tools")).told;
    assert.match(mixed ?? "", /tool call failed for `json-rpc-study\/mixed`[\s\S]*Unexpected response type/);
    assert.ok(!mixed?.includes(MIXED_TEXT));
  });

  test(`${ROWS.structured}: the model gets the JSON`, TIMEOUT, async () => {
    assert.equal((await session("tools")).told[1], STRUCTURED);
  });
});

describe("Gemini CLI 0.61.0", () => {
  const session = sessions(geminiSession, PLANS);
  const prefix = `mcp_${SERVER_NAME}_`;

  test(`${ROWS.slow}: waits (seen at 5 s)`, TIMEOUT, async () => {
    offeredAs(await session("slow"), `${prefix}add`);
  });

  test(`${ROWS.late}: waits`, TIMEOUT, async () => {
    const slow = await session("slow");
    offeredAs(slow, `${prefix}add`);
    assert.ok(!probed(slow));
  });

  test(`${ROWS.noiseBefore}: ignored`, TIMEOUT, async () => {
    const slow = await session("slow");
    assert.ok(strayLineLogged(slow));
    offeredAs(slow, `${prefix}add`);
  });

  test(`${ROWS.noiseAfter}: server dropped`, TIMEOUT, async () => {
    const noise = await session("noise");
    const listed = noise.events.findIndex((event) => event.text.includes('"tools":['));
    const debug = noise.events.findIndex((event) => event.text.startsWith("debug: "));
    assert.ok(listed !== -1 && listed < debug, logText(noise.events));
    assert.deepEqual(noise.offered, []);
    assert.deepEqual(methodsSent(noise.events).filter((method) => method === "tools/call"), []);
    assert.match(noise.finished.stderr, /MCP issues detected/);
  });

  test(`${ROWS.names}: mcp_…_my.tool / mcp_…_my_tool`, TIMEOUT, async () => {
    const tools = await session("tools");
    assert.deepEqual(named(tools, /_my[. _]tool$/), [`${prefix}my.tool`, `${prefix}my_tool`]);
  });

  test(`${ROWS.long}: cut to 63 in the middle, with a warning`, TIMEOUT, async () => {
    const tools = await session("tools");
    const cut = named(tools, /\.\.\./);
    assert.equal(cut.length, 2);
    for (const name of cut) {
      assert.equal(name.length, 63);
      assert.ok(name.startsWith(`${prefix}count_every`) && /subfolder_(one|two)$/.test(name));
    }
    assert.match(tools.finished.stderr, /Truncating MCP tool name .* to fit within the 64 character limit/);
  });

  test(`${ROWS.untyped}: whole server dropped`, TIMEOUT, async () => {
    const untyped = await session("untyped");
    assert.deepEqual(untyped.offered, []);
    assert.ok(methodsSent(untyped.events).includes("tools/list"), logText(untyped.events));
  });

  test(`${ROWS.keywords}: kept`, TIMEOUT, async () => {
    const tool = offeredAs(await session("tools"), `${prefix}formats`);
    assert.deepEqual(dayOf(tool), { type: "string", format: "date", description: "The day" });
    assert.ok(JSON.stringify(tool.schema).includes('"additionalProperties":false'));
  });

  test(`${ROWS.description}: kept`, TIMEOUT, async () => {
    const tool = offeredAs(await session("tools"), `${prefix}long_description`);
    assert.equal(tool.description.length, 10_000);
  });

  test(`${ROWS.discover}: never asked (initialize 2025-06-18)`, TIMEOUT, async () => {
    const slow = await session("slow");
    assert.ok(!probed(slow));
    assert.equal(initializedIn(slow), "2025-06-18");
  });

  test(`${ROWS.content}: the call fails`, TIMEOUT, async () => {
    const [mixed] = (await session("tools")).told;
    assert.match(mixed ?? "", /^\{"error":"MCP tool 'mixed' reported tool error/);
    assert.ok(!mixed?.includes(MIXED_TEXT));
  });

  test(`${ROWS.structured}: the model gets {}, silently`, TIMEOUT, async () => {
    assert.equal((await session("tools")).told[1], "{}");
  });
});

describe("Qwen Code 0.24.4", () => {
  const session = sessions(qwenSession, PLANS);
  const prefix = `mcp__${SERVER_NAME}__`;

  test(`${ROWS.slow}: waits (seen at 5 s)`, TIMEOUT, async () => {
    offeredAs(await session("slow"), `${prefix}add`);
  });

  test(`${ROWS.late}: waits`, TIMEOUT, async () => {
    offeredAs(await session("slow"), `${prefix}add`);
  });

  test(`${ROWS.noiseBefore}: ignored`, TIMEOUT, async () => {
    const slow = await session("slow");
    assert.ok(strayLineLogged(slow));
    offeredAs(slow, `${prefix}add`);
  });

  test(`${ROWS.noiseAfter}: ignored`, TIMEOUT, async () => {
    const noise = await session("noise");
    assert.ok(strayLineLogged(noise));
    assert.deepEqual(noise.told, [SUM]);
  });

  test(`${ROWS.names}: mcp__…__my_tool and a hash, each`, TIMEOUT, async () => {
    const tools = await session("tools");
    assert.equal(named(tools, new RegExp(`^${prefix}my_tool_[0-9a-z]+$`)).length, 2);
  });

  test(`${ROWS.long}: cut to 63, with a hash`, TIMEOUT, async () => {
    const cut = named(await session("tools"), /count_every/);
    assert.equal(cut.length, 2);
    for (const name of cut) {
      assert.equal(name.length, 63);
      assert.match(name, new RegExp(`^${prefix}count_every_line_\\w+_[0-9a-z]+$`));
    }
  });

  test(`${ROWS.untyped}: whole server dropped`, TIMEOUT, async () => {
    const untyped = await session("untyped");
    assert.deepEqual(untyped.offered, []);
    assert.ok(methodsSent(untyped.events).includes("tools/list"), logText(untyped.events));
  });

  test(`${ROWS.keywords}: kept (with --auth-type openai)`, TIMEOUT, async () => {
    const tool = offeredAs(await session("tools"), `${prefix}formats`);
    assert.deepEqual(dayOf(tool), { type: "string", format: "date", description: "The day" });
    assert.ok(JSON.stringify(tool.schema).includes('"additionalProperties":false'));
  });

  test(`${ROWS.description}: kept`, TIMEOUT, async () => {
    const tool = offeredAs(await session("tools"), `${prefix}long_description`);
    assert.equal(tool.description.length, 10_000);
  });

  test(`${ROWS.discover}: never asked (initialize 2025-11-25)`, TIMEOUT, async () => {
    const noise = await session("noise");
    assert.ok(!probed(noise));
    assert.equal(initializedIn(noise), "2025-11-25");
  });

  test(`${ROWS.content}: the call fails`, TIMEOUT, async () => {
    const [mixed] = (await session("tools")).told;
    assert.match(mixed ?? "", /Invalid result for tools\/call/);
    assert.ok(!mixed?.includes(MIXED_TEXT));
  });

  test(`${ROWS.structured}: the model gets the JSON`, TIMEOUT, async () => {
    assert.equal((await session("tools")).told[1], STRUCTURED);
  });
});

describe("Copilot CLI 1.0.102", () => {
  const session = sessions(copilotSession, PLANS);
  const prefix = `${SERVER_NAME}-`;

  test(`${ROWS.slow}: waits (seen at 5 s)`, TIMEOUT, async () => {
    offeredAs(await session("slow"), `${prefix}add`);
  });

  test(`${ROWS.late}: waits, in 2026-07-28`, TIMEOUT, async () => {
    const slow = await session("slow");
    offeredAs(slow, `${prefix}add`);
    assert.deepEqual(methodsSent(slow.events).slice(0, 2), ["server/discover", "tools/list"]);
  });

  test(`${ROWS.noiseBefore}: ignored`, TIMEOUT, async () => {
    const slow = await session("slow");
    assert.ok(strayLineLogged(slow));
    offeredAs(slow, `${prefix}add`);
  });

  test(`${ROWS.noiseAfter}: ignored`, TIMEOUT, async () => {
    const noise = await session("noise");
    assert.ok(strayLineLogged(noise));
    assert.deepEqual(noise.told, [SUM]);
  });

  test(`${ROWS.names}: both ${SERVER_NAME}-my-tool, so one is lost`, TIMEOUT, async () => {
    assert.deepEqual(named(await session("tools"), /my.tool$/), [`${prefix}my-tool`]);
    assert.deepEqual(named(await session("untyped"), /my.tool$/), [`${prefix}my-tool`]);
  });

  test(`${ROWS.long}: tail cut to 64; a name the same after the cut gets another last character`,
    TIMEOUT, async () => {
      const cut = named(await session("tools"), /count_every/);
      const head = `${prefix}${LONG}`.slice(0, 63);
      assert.deepEqual(cut, [`${head}2`, `${head}_`]);
    });

  test(`${ROWS.untyped}: type added`, TIMEOUT, async () => {
    const tool = offeredAs(await session("untyped"), `${prefix}untyped`);
    assert.deepEqual(tool.schema, { properties: { text: { type: "string" } }, type: "object" });
  });

  test(`${ROWS.keywords}: format moved to the description`, TIMEOUT, async () => {
    const tool = offeredAs(await session("tools"), `${prefix}formats`);
    assert.deepEqual(dayOf(tool), { type: "string", description: 'The day\n\n{format: "date"}' });
    assert.ok(JSON.stringify(tool.schema).includes('"additionalProperties":false'));
  });

  test(`${ROWS.description}: kept`, TIMEOUT, async () => {
    const tool = offeredAs(await session("tools"), `${prefix}long_description`);
    assert.equal(tool.description.length, 10_000);
  });

  test(`${ROWS.discover}: falls back to initialize 2025-11-25`, TIMEOUT, async () => {
    for (const name of ["untyped", "noise"]) {
      const fellBack = await session(name);
      const methods = methodsSent(fellBack.events).slice(0, 2);
      assert.deepEqual(methods, ["server/discover", "initialize"], logText(fellBack.events));
      assert.equal(initializedIn(fellBack), "2025-11-25");
    }
  });

  test(`${ROWS.content}: the call fails (its error quotes the raw result)`, TIMEOUT, async () => {
    const [mixed] = (await session("tools")).told;
    const failed = `MCP server '${SERVER_NAME}': MCP request failed: expected CallToolResult`;
    assert.ok(mixed?.startsWith(failed), mixed);
  });

  test(`${ROWS.structured}: the model gets the JSON`, TIMEOUT, async () => {
    assert.equal((await session("tools")).told[1], STRUCTURED);
  });
});
