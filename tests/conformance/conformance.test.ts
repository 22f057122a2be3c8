/**
 * The official MCP conformance suite, @modelcontextprotocol/conformance (pinned in this folder's
 * package.json), against server.ts over Streamable HTTP: every server scenario of the suite's
 * requirement sets for 2025-11-25 and for 2026-07-28, each run in its own era (the initialize
 * handshake, then the stateless wire), on the Node 24 that tests/runtimes pins (the suite needs
 * 22 or later).
 *
 * The server is fixture.ts's: server.ts with the suite's tools pasted in (tools.md). Each era
 * gets a fresh one, started with `--http 127.0.0.1:0`. A scenario passes when none of its checks
 * is a FAILURE, the suite's own rule (a WARNING does not fail it). Every scenario must pass but
 * those listed in `expected-failures`, which names only capabilities the server does not offer;
 * a listed scenario or check that passes fails the test too, so that the list stays true. Each
 * era prints its table, and a failure quotes the suite's own message for each failed check.
 * .ci/run:
 *   npm ci --prefix tests/runtimes && npm ci --prefix tests/conformance
 *   node --import tsx --test tests/conformance/*.test.ts
 */
import { before, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { root, run, start, tempFolder, waitUntil } from "../helpers.ts";
import { buildFixture } from "./fixture.ts";

/** The eras the suite has requirement sets for, each run at its own wire. */
const ERAS = ["2025-11-25", "2026-07-28"] as const;
type Era = (typeof ERAS)[number];

/** The Node 24 binary of tests/runtimes, and the suite's command line program. */
const NODE_24 = join(root, "tests", "runtimes", "node_modules", "node24", "bin", "node");
const SUITE = join(import.meta.dirname, "node_modules", "@modelcontextprotocol", "conformance",
  "dist", "index.js");

/** The capabilities an expected failure may name: those the server does not offer. */
const NOT_OFFERED = [
  "resources", "prompts", "completions", "logging", "sampling", "roots", "tasks", "x-mcp-header",
];

/** Where the server says where it listens (the contract of `--http`). */
const ENDPOINT = /(http:\/\/\S+\/mcp)\b/;

/** One check of a scenario, as the suite writes it into checks.json. */
type Check = { id: string; status: string; errorMessage?: string };

/** An entry of expected-failures: a whole scenario, or one check of it. */
type ExpectedFailure = { era: string; scenario: string; check?: string; reason: string };

/** How one scenario came out, against the list. */
type Verdict = "passes" | "fails, as listed" | "FAILS" | "STALE: passes but is listed";

/** Whether a value is one check as checks.json holds it. */
function isCheck(value: unknown): value is Check {
  if (typeof value !== "object" || value === null || !("id" in value && "status" in value)) {
    return false;
  }
  const said = "errorMessage" in value ? value.errorMessage : undefined;
  const message = said === undefined || typeof said === "string";
  return typeof value.id === "string" && typeof value.status === "string" && message;
}

/** The entries of expected-failures, each checked to name a capability we do not offer. */
function expectedFailures(): ExpectedFailure[] {
  const text = readFileSync(join(import.meta.dirname, "expected-failures"), "utf8");
  const entries = text.split("\n").filter((line) => line.trim() !== "" && !line.startsWith("#"));
  return entries.map((line) => {
    const [era = "", target = "", ...words] = line.trim().split(/\s+/);
    const reason = words.join(" ");
    const capability = reason.split(":")[0] ?? "";
    assert.ok(NOT_OFFERED.includes(capability), `expected-failures: "${line}" names no capability`);
    const [scenario = "", check] = target.split(":");
    return check === undefined ? { era, scenario, reason } : { era, scenario, check, reason };
  });
}

/** The server scenarios of an era's requirement set, scored or not, as the suite lists them. */
async function scenariosOf(era: Era): Promise<string[]> {
  const listed = await run(NODE_24, [SUITE, "list", "--requirements", era], "");
  assert.equal(listed.code, 0, listed.stderr);
  const lines = listed.stdout.split("\n");
  const first = lines.indexOf("Server scenarios (test against a server):");
  const end = lines.indexOf("", first);
  const scored = lines.slice(first + 1, end).map((line) => line.replace(/^ {2}- /, ""));
  const unscored = lines.flatMap((line) => /^ {4}- (\S+) \[server\]$/.exec(line)?.[1] ?? []);
  return [...scored, ...unscored];
}

/** The checks of each scenario the suite ran, from the checks.json it wrote into `folder`. */
function checksIn(folder: string): Map<string, Check[]> {
  const results = new Map<string, Check[]>();
  for (const name of readdirSync(folder)) {
    // server-<scenario>-<ISO time with ":" and "." as "-">
    const scenario = /^server-(.+)-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z$/.exec(name)?.[1];
    const file = join(folder, name, "checks.json");
    if (scenario === undefined || !existsSync(file)) continue;
    const parsed: unknown = JSON.parse(readFileSync(file, "utf8"));
    results.set(scenario, Array.isArray(parsed) ? parsed.filter(isCheck) : []);
  }
  return results;
}

/** A check's status over all its occurrences: a FAILURE anywhere is a FAILURE. */
function statusOf(checks: Check[], id: string): string {
  const statuses = checks.filter((check) => check.id === id).map((check) => check.status);
  return statuses.includes("FAILURE") ? "FAILURE" : (statuses[0] ?? "absent");
}

/** A scenario's verdict, and the failed checks that the list does not excuse. */
function judge(checks: Check[], listed: ExpectedFailure[]): { verdict: Verdict; unexcused: Check[] } {
  const failed = checks.filter((check) => check.status === "FAILURE");
  const whole = listed.some((entry) => entry.check === undefined);
  const excusedIds = listed.flatMap((entry) => entry.check ?? []);
  if (whole) {
    return { verdict: failed.length > 0 ? "fails, as listed" : "STALE: passes but is listed", unexcused: [] };
  }
  const unexcused = failed.filter((check) => !excusedIds.includes(check.id));
  if (unexcused.length > 0) return { verdict: "FAILS", unexcused };
  const stale = excusedIds.some((id) => statusOf(checks, id) !== "FAILURE");
  if (stale) return { verdict: "STALE: passes but is listed", unexcused: [] };
  return { verdict: failed.length > 0 ? "fails, as listed" : "passes", unexcused: [] };
}

/** Runs the suite's requirement set for `era` against a fresh fixture server, and returns the
 * checks of each scenario. The server is ended before this returns, pass or fail. */
async function runEra(era: Era, fixture: string): Promise<Map<string, Check[]>> {
  const server = start(process.execPath, [fixture, "--http", "127.0.0.1:0"]);
  try {
    await waitUntil(() => ENDPOINT.test(server.errors()), "the server's endpoint line", 10_000);
    const url = ENDPOINT.exec(server.errors())?.[1] ?? "";
    const results = tempFolder(`conformance-${era}-`);
    const args = [SUITE, "server", "--url", url, "--requirements", era, "-o", results];
    const ran = await run(NODE_24, args, "", { cwd: results });
    // The suite exits 1 when a scored scenario fails; the verdicts below are ours to give.
    assert.ok(ran.code === 0 || ran.code === 1, `the suite stopped (${ran.code}):\n${ran.stderr}`);
    return checksIn(results);
  } finally {
    server.child.kill("SIGTERM");
    await server.finish;
  }
}

/** A row of an era's table: the scenario, its counts of checks, and its verdict. */
function row(scenario: string, checks: Check[], verdict: Verdict): string {
  const count = (status: string) => checks.filter((check) => check.status === status).length;
  const counts = `${count("SUCCESS")} passed, ${count("FAILURE")} failed, ${count("WARNING")} warnings`;
  return `${scenario.padEnd(46)} ${counts.padEnd(34)} ${verdict}`;
}

/** An era's table, one row a scenario, and what is wrong: a failure the list does not excuse
 * (with the suite's own message), a listed one that passes, a scenario with no results. */
function review(scenarios: string[], results: Map<string, Check[]>, expected: ExpectedFailure[]):
  { table: string[]; problems: string[] } {
  const table: string[] = [];
  const problems: string[] = [];
  for (const scenario of scenarios) {
    const checks = results.get(scenario);
    if (checks === undefined) {
      problems.push(`${scenario}: the suite wrote no checks.json (it stopped in the scenario)`);
      continue;
    }
    const listed = expected.filter((entry) => entry.scenario === scenario);
    const { verdict, unexcused } = judge(checks, listed);
    table.push(row(scenario, checks, verdict));
    if (verdict.startsWith("STALE")) problems.push(`${scenario}: passes; take it off expected-failures`);
    for (const check of unexcused) problems.push(`${scenario}: ${check.id}: ${check.errorMessage ?? ""}`);
  }
  return { table, problems };
}

/** The fixture server, built once for both eras. */
let fixture = "";
before(() => {
  fixture = buildFixture(tempFolder("conformance-fixture-"));
});

test("expected-failures names only eras the suite runs, and a capability for each", () => {
  const eras: readonly string[] = ERAS;
  assert.deepEqual(expectedFailures().filter((entry) => !eras.includes(entry.era)), []);
});

for (const era of ERAS) {
  test(`every ${era} scenario passes, but those whose capability the server does not offer`,
    { timeout: 600_000 }, async (t) => {
      const [scenarios, results] = await Promise.all([scenariosOf(era), runEra(era, fixture)]);
      const expected = expectedFailures().filter((entry) => entry.era === era);
      const unknown = expected.filter((entry) => !scenarios.includes(entry.scenario));
      assert.deepEqual(unknown, [], `expected-failures names scenarios ${era} does not run`);
      const { table, problems } = review(scenarios, results, expected);
      t.diagnostic(`conformance ${era}: ${scenarios.length} scenarios`);
      for (const line of table) t.diagnostic(line);
      assert.deepEqual(problems, [], `${era}:\n${problems.join("\n")}`);
    });
}
