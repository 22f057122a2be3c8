/**
 * Every Mermaid block that `wrap diagram` writes for the fixture sessions, rendered by the real
 * mermaid package in Debian's chromium, headless: Mermaid 8.10 (Zenn), 11 (GitHub, Qiita) and
 * 12 (the newest). A parse error fails the test. Mermaid loads from this folder's node_modules
 * and nothing leaves the machine. Run by .ci/run after `npm ci --prefix tests/browser`:
 *   node --import tsx --test tests/browser/render.test.ts
 * One session is recorded for the run, with server-everything through wrap, so it needs
 * `npm ci --prefix tests/everything` too (tests/fixtures/everything-session.ts). Claude Code's
 * session over HTTP is the recording kept in tests/fixtures/claude-code-http.log.
 * RENDER_SCREENSHOT=FILE saves a picture of the eventful session, to look at by eye.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { mermaidBlocks, run, wrapPath } from "../helpers.ts";
import { documentText, documents } from "../documents.ts";
import { sessions } from "../fixtures/wire-logs.ts";
import { recordSession } from "../fixtures/everything-session.ts";

const LIMIT = { timeout: 120_000 };
const modules = join(import.meta.dirname, "node_modules");
const RENDERERS = {
  "8.10": join(modules, "mermaid-8", "dist", "mermaid.min.js"),
  "11": join(modules, "mermaid", "dist", "mermaid.min.js"),
  "12": join(modules, "mermaid-12", "dist", "mermaid.min.js"),
} satisfies Record<string, string>;

const profile = mkdtempSync(join(tmpdir(), "render-test-"));
/** Claude Code's session over Streamable HTTP, recorded through wrap --listen. */
const claudeCodeHttp = join(import.meta.dirname, "..", "fixtures", "claude-code-http.log");
let context: BrowserContext | undefined;
/** The log of a session with server-everything: progress, and the server's own requests. */
let everythingLog: string | undefined;

before(async () => {
  context = await chromium.launchPersistentContext(join(profile, "user-data"), {
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
      "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  // Nothing may leave the machine: every request the page makes is refused.
  await context.route("**/*", (route) => route.abort());
  const { logPath } = await recordSession(mkdtempSync(join(profile, "everything-")), true);
  everythingLog = readFileSync(logPath, "utf8");
});
after(async () => {
  await context?.close();
  rmSync(profile, { recursive: true, force: true });
});

/** The Mermaid blocks of one session's diagram, as `wrap diagram` writes them. */
async function diagramBlocks(log: string): Promise<string[]> {
  const path = join(profile, `${Math.random().toString(36).slice(2)}.log`);
  writeFileSync(path, log);
  const { code, stdout } = await run(process.execPath, [wrapPath, "diagram", path], "");
  assert.equal(code, 0);
  return mermaidBlocks(stdout);
}

/** The Mermaid blocks the READMEs and the chapters in docs/ show, which GitHub draws in place. */
function readmeBlocks(): string[] {
  return documents().flatMap((file) => mermaidBlocks(documentText(file)));
}

/** A page with one Mermaid version loaded. */
async function pageWith(script: string): Promise<Page> {
  if (context === undefined) throw new Error("no browser");
  const page = await context.newPage();
  await page.setContent("<!doctype html><html><body></body></html>");
  await page.addScriptTag({ path: script });
  return page;
}

/** Renders one block into the page; resolves with the SVG, rejects with Mermaid's parse error. */
function render(page: Page, version: string, text: string, index: number): Promise<string> {
  return page.evaluate(async ({ version, text, index }) => {
    const api = Reflect.get(window, "mermaid");
    const id = `diagram${index}`;
    let svg: string;
    if (version === "8.10") {
      api.mermaidAPI.initialize({ startOnLoad: false });
      api.parse(text); // Throws on a parse error; render alone may draw an error picture.
      svg = await new Promise<string>((resolve) => api.mermaidAPI.render(id, text, resolve));
    } else {
      api.initialize({ startOnLoad: false });
      await api.parse(text);
      svg = (await api.render(id, text)).svg;
    }
    const holder = document.createElement("div");
    holder.innerHTML = svg;
    document.body.append(holder);
    return svg;
  }, { version, text, index });
}

for (const [version, script] of Object.entries(RENDERERS)) {
  test(`every block of every fixture session, and of the documents, renders in Mermaid ${version}`, LIMIT, async () => {
    const page = await pageWith(script);
    let index = 0;
    if (everythingLog === undefined) throw new Error("the server-everything session was not recorded");
    const logs = { ...sessions, "server-everything, recorded": everythingLog,
      "Claude Code over HTTP, recorded": readFileSync(claudeCodeHttp, "utf8") };
    const sources = Object.entries(logs).map(async ([name, log]) => [name, await diagramBlocks(log)] as const);
    for (const [name, blocks] of [...await Promise.all(sources), ["the documents", readmeBlocks()] as const]) {
      assert.ok(blocks.length > 0, name);
      for (const block of blocks) {
        index += 1;
        const svg = await render(page, version, block, index).catch((error: unknown) => {
          throw new Error(`${name}, block ${index}, Mermaid ${version}: ${String(error)}\n${block}`);
        });
        assert.match(svg, /<svg/, name);
        assert.doesNotMatch(svg, /Syntax error|Parse error/i, `${name} in Mermaid ${version}`);
        // Every participant and arrow of the block is drawn: one text per statement at least.
        const arrows = block.split("\n").filter((line) => /^[CS]-/.test(line)).length;
        assert.ok((svg.match(/messageText/g)?.length ?? 0) >= arrows, `${name}: arrows drawn`);
      }
    }
    if (process.env.RENDER_SCREENSHOT !== undefined && version === "11") {
      await page.screenshot({ path: process.env.RENDER_SCREENSHOT, fullPage: true });
    }
    await page.close();
  });
}

test("a block Mermaid cannot parse fails the render", LIMIT, async () => {
  // The check above is only worth something if a broken block really throws in each version.
  for (const [version, script] of Object.entries(RENDERERS)) {
    const page = await pageWith(script);
    await assert.rejects(render(page, version, "sequenceDiagram\nC->>S: a\nC-->>>: ;#<", 1));
    await page.close();
  }
});
