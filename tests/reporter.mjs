/**
 * tests/reporter.mjs — the report `npm test` prints: one line per test file as it finishes, then each failure with
 * its message and where it failed, then the counts. The spec reporter's whole report, every
 * test with what the files wrote, goes to tests/last-run.log in the same run (package.json
 * names both), so nothing is lost by keeping this one short.
 *
 * node:test hands a reporter its events in order (nodejs.org/api/test.html, "Custom
 * reporters"): a test's `test:start`, then its `test:pass` or `test:fail`; a file's own
 * `test:complete`, named by its path, when all of it is done; and `test:diagnostic` lines with
 * the counts at the very end.
 */
import { relative } from "node:path";

/** @typedef {import("node:test/reporters").TestEvent} TestEvent */

/** Where package.json sends the spec reporter's whole report. */
const FULL_REPORT = "tests/last-run.log";

/** The most lines of one failure's message shown here; the whole is in the full report. */
const MESSAGE_LINES = 20;

/**
 * One failed test: its names from the file down, its message, and where it failed.
 * @typedef {{ path: string[], message: string, at: string | undefined }} Failure
 */

/**
 * A file's counts so far.
 * @typedef {{ passed: number, failed: number }} FileCounts
 */

/**
 * A path as the reader typed it: relative to the folder npm test runs in.
 * @param {string} path
 * @returns {string}
 */
function shortPath(path) {
  return relative(process.cwd(), path);
}

/**
 * The error a test threw: node:test wraps it, and keeps it as the wrapper's cause.
 * @param {Error} error
 * @returns {unknown}
 */
function thrown(error) {
  return error.cause ?? error;
}

/**
 * Where a test failed: the first line of its stack in the project's own files, as
 * `tests/x.test.ts:12:5`.
 * @param {unknown} error
 * @returns {string | undefined}
 */
function whereFailed(error) {
  if (!(error instanceof Error) || error.stack === undefined) return undefined;
  const own = (/** @type {string} */ line) => line.includes(process.cwd()) && !line.includes("/node_modules/");
  const frame = error.stack.split("\n").slice(1).find(own);
  const location = frame === undefined ? undefined : /(?:file:\/\/)?(\/[^\s()]+:\d+:\d+)/.exec(frame)?.[1];
  return location === undefined ? undefined : shortPath(location);
}

/**
 * A failure's message, cut to MESSAGE_LINES lines.
 * @param {unknown} error
 * @returns {string}
 */
function messageOf(error) {
  const text = (error instanceof Error ? `${error.name}: ${error.message}` : String(error)).trimEnd();
  const lines = text.split("\n");
  const more = lines.length - MESSAGE_LINES;
  return more > 0 ? [...lines.slice(0, MESSAGE_LINES), `… (${more} more lines)`].join("\n") : text;
}

/**
 * Seconds, with one decimal.
 * @param {number} ms
 * @returns {string}
 */
function seconds(ms) {
  return `${(ms / 1000).toFixed(1)} s`;
}

/**
 * A failure as it is printed: its names, then its message and place, indented.
 * @param {Failure} failure
 * @returns {string}
 */
function failureText({ path, message, at }) {
  const body = message.split("\n").map((line) => `    ${line}`);
  return [`✖ ${path.join(" › ")}`, ...body, ...(at === undefined ? [] : [`    at ${at}`]), ""].join("\n");
}

/**
 * The counts line, from the runner's closing diagnostics (`tests 298`, `pass 298`, …).
 * @param {Map<string, number>} counts
 * @returns {string}
 */
function countsText(counts) {
  /** @param {string} name */
  const count = (name) => counts.get(name) ?? 0;
  const parts = [`${count("pass")} passed`, `${count("fail")} failed`];
  for (const name of ["cancelled", "skipped", "todo"]) if (count(name) > 0) parts.push(`${count(name)} ${name}`);
  return `${count("tests")} tests: ${parts.join(", ")} · ${seconds(count("duration_ms"))}`;
}

/**
 * The reporter: node:test calls it with the run's events and prints what it yields.
 * @param {AsyncIterable<TestEvent>} source
 * @returns {AsyncGenerator<string>}
 */
export default async function* summary(source) {
  /** @type {string[]} */
  const names = [];
  /** @type {Map<string, FileCounts>} */
  const files = new Map();
  /** @type {Failure[]} */
  const failures = [];
  /** @type {Map<string, number>} */
  const counts = new Map();
  /** The last lines each file wrote to stderr, for a file that fails as a whole.
   * @type {Map<string, string[]>} */
  const stderr = new Map();
  for await (const event of source) {
    if (event.type === "test:start") names[event.data.nesting] = event.data.name;
    if (event.type === "test:stderr" && event.data.file !== undefined) {
      const lines = stderr.get(event.data.file) ?? [];
      stderr.set(event.data.file, [...lines, event.data.message].slice(-MESSAGE_LINES));
    }
    if (event.type === "test:pass" || event.type === "test:fail") {
      const file = event.data.file ?? "(no file)";
      const fileCounts = files.get(file) ?? { passed: 0, failed: 0 };
      files.set(file, fileCounts);
      // A suite passes or fails with its tests; only the tests are counted.
      if (event.data.details.type === "suite") continue;
      // A test left out by a name pattern, or marked todo, passes without having run.
      const ran = event.data.skip === undefined && event.data.todo === undefined;
      if (event.type === "test:pass" && ran) fileCounts.passed += 1;
      if (event.type !== "test:fail") continue;
      fileCounts.failed += 1;
      const error = thrown(event.data.details.error);
      if (event.data.name === file) {
        // A file that failed as a whole (it did not load, say): what it wrote says why.
        const said = (stderr.get(file) ?? []).join("").trimEnd();
        failures.push({ path: [shortPath(file)], message: messageOf(said || error), at: undefined });
        continue;
      }
      const path = [shortPath(file), ...names.slice(0, event.data.nesting), event.data.name];
      failures.push({ path, message: messageOf(error), at: whereFailed(error) });
    }
    if (event.type === "test:complete" && event.data.name === event.data.file) {
      const { passed, failed } = files.get(event.data.file) ?? { passed: 0, failed: 0 };
      const mark = failed > 0 || !event.data.details.passed ? "✖" : "✔";
      const tally = failed > 0 ? `${passed} passed, ${failed} failed` : `${passed} passed`;
      yield `${mark} ${shortPath(event.data.file)} · ${tally} · ${seconds(event.data.details.duration_ms)}\n`;
    }
    if (event.type === "test:diagnostic") {
      const [name, value] = event.data.message.split(" ");
      if (name !== undefined && value !== undefined) counts.set(name, Number(value));
    }
  }
  if (failures.length > 0) yield `\nFailures:\n\n${failures.map(failureText).join("\n")}`;
  yield `\n${countsText(counts)}\nThe whole report: ${FULL_REPORT}\n`;
}
