/**
 * The project's documents, as the tests read them: README.md, README.ja.md and the chapters in
 * docs/, each English file paired with its Japanese edition (`X.md` and `X.ja.md`), and their
 * fenced code blocks.
 */
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { root } from "./helpers.ts";

/** An English document and its Japanese edition, as paths from the project's root. */
export interface Pair {
  english: string;
  japanese: string;
}

/** A fenced code block: its info string, the line of its opening fence, and its lines. */
export interface Fence {
  info: string;
  line: number;
  body: string[];
}

/** Every document pair: the README first, then each chapter in docs/, by name. */
export function documentPairs(): Pair[] {
  const chapters = readdirSync(join(root, "docs"))
    .filter((name) => name.endsWith(".md") && !name.endsWith(".ja.md"))
    .sort()
    .map((name) => ({ english: `docs/${name}`, japanese: `docs/${name.replace(/\.md$/, ".ja.md")}` }));
  return [{ english: "README.md", japanese: "README.ja.md" }, ...chapters];
}

/** Every document, English and Japanese. */
export function documents(): string[] {
  return documentPairs().flatMap(({ english, japanese }) => [english, japanese]);
}

/** The text of a document; a missing file reads as empty, so that its tests fail with a plain message. */
export function documentText(file: string): string {
  const path = join(root, file);
  return existsSync(path) ? readFileSync(path, "utf8") : "";
}

/** The fenced code blocks of a Markdown text (CommonMark: a run of 3 or more backticks or tildes). */
export function fences(markdown: string): Fence[] {
  const found: Fence[] = [];
  let open: { marker: string; fence: Fence } | undefined;
  for (const [index, text] of markdown.split("\n").entries()) {
    if (open === undefined) {
      const opener = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(text);
      if (opener !== null) open = { marker: opener[1] ?? "", fence: { info: (opener[2] ?? "").trim(), line: index + 1, body: [] } };
      continue;
    }
    // A closing fence is a run of the same character, at least as long as the opening one.
    const closer = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(text);
    if (closer !== null && (closer[1] ?? "").startsWith(open.marker)) {
      found.push(open.fence);
      open = undefined;
    } else {
      open.fence.body.push(text);
    }
  }
  return found;
}

/** The body of the first block whose info string is `info`, in a document; fails when there is none. */
export function block(file: string, info: string): string {
  const found = fences(documentText(file)).find((fence) => fence.info === info);
  if (found === undefined) throw new Error(`${file} has no \`\`\`${info} block`);
  return found.body.join("\n");
}

/** The URL docs/http.md registers; the tests put the server's own in its place. */
const DOCUMENTED_URL = "http://127.0.0.1:8080/mcp";

/** docs/http.md's line that registers the HTTP server with `cli`, from its ```sh register-http
 * block, as words after the CLI's name, with `url` in place of the documented one. */
export function httpRegistration(cli: string, url: string): string[] {
  const line = block("docs/http.md", "sh register-http").split("\n").find((each) => each.startsWith(`${cli} `));
  if (line === undefined) throw new Error(`docs/http.md's register-http block has no line for ${cli}`);
  return line.split(" ").slice(1).map((word) => (word === DOCUMENTED_URL ? url : word));
}
