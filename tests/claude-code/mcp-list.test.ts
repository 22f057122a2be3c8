/**
 * README's registration commands, run with the real Claude Code in a HOME of its own:
 * `claude mcp add NAME -- COMMAND...` then `claude mcp list`, which starts each server,
 * checks that it answers, and prints `✔ Connected` or `✘ Failed to connect`.
 *
 * A wrong path fails as every broken registration does, with CONNECTION_CLOSED and nothing
 * more; registered through wrap, the same mistake leaves the reason in wrap's log, as `!`
 * lines: the server's own stderr. A stray debug line on stdout (tests/fixtures/
 * polluting-server.mjs) does not stop Claude Code from connecting, as docs/errors.md's
 * Troubleshooting says. Where `claude mcp add` writes its entry, and which folders see it,
 * is as README's "Register it with a client" says.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { root, serverPath, wrapPath } from "../helpers.ts";
import { claude, isolatedEnv, requireClaude, saveExcerpt, scratch, settledLog } from "./claude.ts";

/** Nothing answers here: `claude mcp` never calls the model, and if it did, it must fail. */
const NO_API = "http://127.0.0.1:9";

/** `claude mcp add` and `claude mcp list` are quick; this is slack for a loaded machine. */
const MCP_TIMEOUT = { timeout: 180_000 };

/** The line `claude mcp list` prints for the server `name`. */
function lineOf(listing: string, name: string): string {
  return listing.split("\n").find((line) => line.startsWith(`${name}: `)) ?? `(no line for ${name})`;
}

test("claude mcp list shows dist/server.mjs and dist/wrap.mjs as Connected, and a wrong path as Failed", MCP_TIMEOUT, async () => {
  requireClaude();
  const home = scratch("mcp-home");
  const project = scratch("mcp-project");
  const env = isolatedEnv(home, NO_API);
  const wireLog = join(project, "wire.log");
  const brokenLog = join(project, "broken.log");
  const missing = join(project, "no-such-folder", "server.mjs");
  const registrations: [string, string[]][] = [
    ["json-rpc-study", ["node", serverPath]],
    ["json-rpc-study-wrap", ["node", wrapPath, "--log", wireLog]],
    ["broken", ["node", missing]],
    ["broken-wrap", ["node", wrapPath, "--log", brokenLog, "--", "node", missing]],
  ];
  for (const [name, command] of registrations) {
    const added = await claude(["mcp", "add", name, "--", ...command], env, project);
    assert.equal(added.code, 0, `claude mcp add ${name} failed:\n${added.stderr}`);
    assert.match(added.stdout, new RegExp(`Added stdio MCP server ${name} `));
  }

  const listed = await claude(["mcp", "list"], env, project);
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(lineOf(listed.stdout, "json-rpc-study"), /✔ Connected$/);
  assert.match(lineOf(listed.stdout, "json-rpc-study-wrap"), /✔ Connected$/);
  assert.match(lineOf(listed.stdout, "broken"), /✘ Failed to connect — CONNECTION_CLOSED/);
  assert.match(lineOf(listed.stdout, "broken-wrap"), /✘ Failed to connect — CONNECTION_CLOSED/);

  // The health check really talked to our server: wrap saw it answer.
  const wire = await settledLog(wireLog);
  assert.ok(wire.some((event) => event.mark === "←" && event.text.includes('"json-rpc-study"')), "no answer in the log");
  // The reason is in the log through wrap: Node's own error, from the server's stderr.
  const broken = await settledLog(brokenLog);
  saveExcerpt("a wrong path, through wrap (docs/errors.md)", brokenLog, [project]);
  const stderr = broken.filter((event) => event.mark === "!").map((event) => event.text);
  assert.ok(stderr.some((text) => text.includes(`Cannot find module '${missing}'`)), `no reason in the log:\n${stderr.join("\n")}`);
  assert.ok(broken.some((event) => event.mark === "#" && event.text === "exit code 1"), "wrap logs the server's exit code");
  // Claude Code tries twice: once with the server/discover probe, once with initialize.
  const starts = broken.filter((event) => event.mark === "#" && event.text.startsWith("start pid "));
  assert.equal(starts.length, 2, "one start for the probe, one for the fallback to initialize");
});

test("claude mcp list still shows Connected when the server prints a debug line on stdout", MCP_TIMEOUT, async () => {
  requireClaude();
  const home = scratch("mcp-pollute-home");
  const project = scratch("mcp-pollute-project");
  const env = isolatedEnv(home, NO_API);
  const logPath = join(project, "wire.log");
  const fixture = join(root, "tests", "fixtures", "polluting-server.mjs");
  const command = ["node", wrapPath, "--log", logPath, "--", "node", fixture, "start"];
  const added = await claude(["mcp", "add", "polluted", "--", ...command], env, project);
  assert.equal(added.code, 0, added.stderr);
  const listed = await claude(["mcp", "list"], env, project);
  assert.match(lineOf(listed.stdout, "polluted"), /✔ Connected$/);
  // The line really crossed: wrap logged it as the server wrote it.
  const events = await settledLog(logPath);
  assert.ok(events.some((event) => event.mark === "←" && event.text === "debug: server starting"), "no debug line in the log");
});

test("claude mcp add refuses a second server of the same name", MCP_TIMEOUT, async () => {
  requireClaude();
  const home = scratch("mcp-twice-home");
  const project = scratch("mcp-twice-project");
  const env = isolatedEnv(home, NO_API);
  const first = await claude(["mcp", "add", "json-rpc-study", "--", "node", serverPath], env, project);
  assert.equal(first.code, 0, first.stderr);
  const second = await claude(["mcp", "add", "json-rpc-study", "--", "node", wrapPath], env, project);
  assert.equal(second.code, 1);
  assert.match(second.stderr, /MCP server json-rpc-study already exists in local config/);
  const removed = await claude(["mcp", "remove", "json-rpc-study"], env, project);
  assert.equal(removed.code, 0, removed.stderr);
  const third = await claude(["mcp", "add", "json-rpc-study", "--", "node", wrapPath], env, project);
  assert.equal(third.code, 0, `after claude mcp remove, the name is free again:\n${third.stderr}`);
});

test("claude mcp add registers for its folder; --scope user for every folder; --scope project writes .mcp.json", MCP_TIMEOUT, async () => {
  requireClaude();
  const home = scratch("mcp-scope-home");
  const project = scratch("mcp-scope-project");
  const elsewhere = scratch("mcp-scope-elsewhere");
  const env = isolatedEnv(home, NO_API);
  const local = await claude(["mcp", "add", "json-rpc-study", "--", "node", serverPath], env, project);
  assert.equal(local.code, 0, local.stderr);
  assert.match(local.stdout, /to local config/);
  const config: unknown = JSON.parse(readFileSync(join(home, ".claude.json"), "utf8"));
  assert.ok(JSON.stringify(config).includes(JSON.stringify(project)), "~/.claude.json holds the entry under the folder's path");
  assert.match((await claude(["mcp", "list"], env, elsewhere)).stdout, /No MCP servers configured/);
  const user = await claude(["mcp", "add", "--scope", "user", "everywhere", "--", "node", serverPath], env, project);
  assert.equal(user.code, 0, user.stderr);
  assert.match(lineOf((await claude(["mcp", "list"], env, elsewhere)).stdout, "everywhere"), /✔ Connected$/);
  const shared = await claude(["mcp", "add", "--scope", "project", "shared", "--", "node", serverPath], env, elsewhere);
  assert.equal(shared.code, 0, shared.stderr);
  const written: unknown = JSON.parse(readFileSync(join(elsewhere, ".mcp.json"), "utf8"));
  assert.deepEqual(written, { mcpServers: { shared: { type: "stdio", command: "node", args: [serverPath], env: {} } } });
});

test("a relative path connects where claude runs in its folder, and fails from a subfolder of the repository", MCP_TIMEOUT, async () => {
  requireClaude();
  const home = scratch("mcp-relative-home");
  const project = scratch("mcp-relative-project");
  const env = isolatedEnv(home, NO_API);
  // A clone of its own: a git repository with the built server in dist/, and a subfolder.
  cpSync(join(root, "dist", "server.mjs"), join(project, "dist", "server.mjs"));
  mkdirSync(join(project, "docs"));
  execFileSync("git", ["init", "--quiet", project]);
  assert.ok(existsSync(join(project, ".git")));
  const added = await claude(["mcp", "add", "json-rpc-study", "--", "node", "dist/server.mjs"], env, project);
  assert.equal(added.code, 0, added.stderr);
  assert.match(lineOf((await claude(["mcp", "list"], env, project)).stdout, "json-rpc-study"), /✔ Connected$/);
  const below = await claude(["mcp", "list"], env, join(project, "docs"));
  assert.match(lineOf(below.stdout, "json-rpc-study"), /✘ Failed to connect — CONNECTION_CLOSED/);
});
