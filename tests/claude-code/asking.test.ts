/**
 * What the pinned Claude Code does when a tool asks the client (server.ts, "Asking the client";
 * docs/tools.md): in print mode, with the model stand-in on loopback (messages-api.ts) calling
 * docs/tools.md's `project_roots`, then `summarize`, on asking-server.mjs registered through
 * dist/wrap.mjs, in each era.
 *
 * Claude Code declares `roots` (and `elicitation`), not `sampling` (docs/clients.md): so the roots
 * tool gets the project folder, Claude Code's working directory, as a `file://` root, and the
 * sampling tool is never let ask: its answer is that the client does not offer sampling, and no
 * sampling/createMessage crosses the wire in either era.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { claude, isolatedEnv, logText, requireClaude, scratch, settledLog, wrappedConfig } from "./claude.ts";
import { SERVER_NAME, withMethod } from "./deploy.ts";
import { lastToolResults, startMessagesApi, type MessagesApi, type ToolScript } from "./messages-api.ts";

const asking = join(import.meta.dirname, "asking-server.mjs");

const ROOTS: ToolScript = { tool: `mcp__${SERVER_NAME}__project_roots`, input: {}, toolUseId: "toolu_01JsonRpcStudyRoots" };
const SAMPLE: ToolScript = {
  tool: `mcp__${SERVER_NAME}__summarize`,
  input: { text: "A long text." },
  toolUseId: "toolu_01JsonRpcStudySummarize",
};

const apis: MessagesApi[] = [];
before(() => requireClaude());
after(async () => {
  for (const api of apis) await api.close();
});

/** One `claude -p` turn whose model calls `script`'s tool; the log and the tool results. */
async function turn(label: string, script: ToolScript, serverArgs: readonly string[]) {
  const api = await startMessagesApi(script);
  apis.push(api);
  const home = scratch(`${label}-home`);
  const project = scratch(`${label}-project`);
  const logPath = join(project, "wire.log");
  const configPath = wrappedConfig(project, SERVER_NAME, logPath, ["--", process.execPath, asking, ...serverArgs]);
  const args = ["-p", `Use ${script.tool}`, "--mcp-config", configPath, "--strict-mcp-config",
    "--allowedTools", script.tool, "--output-format", "json"];
  const finished = await claude(args, isolatedEnv(home, api.url), project);
  const events = await settledLog(logPath);
  assert.equal(finished.code, 0, `claude exited ${finished.code}:\n${finished.stderr}`);
  const toolResults = api.requests.map((request) => lastToolResults(request.body)).filter((found) => found.length > 0);
  return { events, toolResults, project };
}

for (const [era, serverArgs] of [["2026-07-28", []], ["legacy", ["--legacy"]]] as const) {
  test(`${era}: a tool that lists the roots gets Claude Code's project folder`, { timeout: 180_000 }, async () => {
    const { events, toolResults, project } = await turn(`roots-${era}`, ROOTS, serverArgs);
    const folder = pathToFileURL(project).href;
    assert.ok(toolResults.flat().some((text) => text.split("\n").includes(folder)),
      `the model did not get ${folder}: ${JSON.stringify(toolResults)}\n${logText(events)}`);
    const asked = era === "legacy" ? withMethod(events, "←", "roots/list") : [];
    assert.equal(asked.length, era === "legacy" ? 1 : 0, "legacy: one roots/list request of the server's own");
  });

  test(`${era}: a tool that samples is told the client does not offer sampling, and nothing is asked`, { timeout: 180_000 }, async () => {
    const { events, toolResults } = await turn(`sampling-${era}`, SAMPLE, serverArgs);
    assert.deepEqual(toolResults, [["This client does not offer sampling"]], logText(events));
    assert.deepEqual(withMethod(events, "←", "sampling/createMessage"), []);
  });
}
