/**
 * bench/figures.ts — what the two benchmarks that race contenders in rounds share (bench/run.ts
 * over stdio, bench/http.ts over Streamable HTTP): the statistics over rounds, the Markdown of
 * their reports, and the SDK servers they bundle. Not a benchmark itself.
 *
 * A figure is the median over rounds; a ratio is the median of the ratios taken within each
 * round, shown with their range; a target is a row that says PASS or MISS beside what a floor
 * (a bare responder) scores on the same ratio.
 */
import { existsSync, readFileSync } from "node:fs";
import { cpus, release, totalmem } from "node:os";
import { join, resolve } from "node:path";
import process from "node:process";
import { gzipSync } from "node:zlib";
import { bundle } from "../build.mjs";

/** A ratio for a target: its value, and how it came about. */
export interface Ratio {
  value: number;
  detail: string;
}

/** The project's root folder. */
export const root = join(import.meta.dirname, "..");

// ---- What a run is asked to measure ----

/** Rounds (BENCH_RUNS); five by default, as fewer make the medians noisy on a shared machine. */
export const ROUNDS = Number(process.env.BENCH_RUNS ?? 5);

/** The folder of the bundles under test (BENCH_DIST), as given and as a path. */
export const DIST_NAME = process.env.BENCH_DIST ?? "dist";
export const DIST = resolve(root, DIST_NAME);

/** DIST/server.mjs; throws for a BENCH_RUNS that is not a positive integer or a missing build. */
export function serverUnderTest(): string {
  if (!Number.isInteger(ROUNDS) || ROUNDS < 1) {
    throw new Error(`BENCH_RUNS must be a positive integer, not ${process.env.BENCH_RUNS}`);
  }
  const server = join(DIST, "server.mjs");
  if (!existsSync(server)) throw new Error(`${DIST_NAME}/server.mjs is missing: run npm run build`);
  return server;
}

// ---- Statistics over rounds ----

/** The middle value of a list (the mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  if (sorted.length % 2 === 1) return sorted[middle] ?? NaN;
  return ((sorted[middle - 1] ?? NaN) + (sorted[middle] ?? NaN)) / 2;
}

/** The nearest-rank percentile of a list. */
export function percentile(values: readonly number[], percent: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((percent / 100) * sorted.length) - 1)] ?? NaN;
}

/** The contenders, rotated to start at the round's own place. */
export function rotate<T>(items: readonly T[], by: number): T[] {
  const start = by % items.length;
  return [...items.slice(start), ...items.slice(0, start)];
}

/** The median of per-round ratios, with their range. */
export function overRounds(perRound: readonly number[]): Ratio {
  const range = `${decimal(Math.min(...perRound), 2)}–${decimal(Math.max(...perRound), 2)}`;
  return { value: median(perRound), detail: `rounds ${range}` };
}

/**
 * Every figure of every contender, one value per round: a contender's figure is read back by
 * round, and set against another contender's in the same round.
 */
export class Samples<Figure extends string> {
  /** The values by "contender name/figure". */
  readonly #byKey = new Map<string, number[]>();

  /** Records one round's figures of a contender. */
  record(contender: { name: string }, figures: Partial<Record<Figure, number>>): void {
    for (const [figure, value] of Object.entries(figures)) {
      if (typeof value !== "number") continue;
      const key = `${contender.name}/${figure}`;
      this.#byKey.set(key, [...(this.#byKey.get(key) ?? []), value]);
    }
  }

  /** A figure's values, one per round. */
  values(contender: { name: string }, figure: Figure): number[] {
    return this.#byKey.get(`${contender.name}/${figure}`) ?? [];
  }

  /** One contender's figure over another's: the median of the ratios taken within each round. */
  ratio(contender: { name: string }, to: { name: string }, figure: Figure): Ratio {
    const other = this.values(to, figure);
    const perRound = this.values(contender, figure).map((value, round) => {
      return value / (other[round] ?? NaN);
    });
    return overRounds(perRound);
  }

  /** One contender's figure minus another's, round by round. */
  differences(contender: { name: string }, to: { name: string }, figure: Figure): number[] {
    const other = this.values(to, figure);
    return this.values(contender, figure).map((value, round) => value - (other[round] ?? NaN));
  }
}

// ---- The reports ----

/** A report's line that says when, on which machine, and over how many rounds. */
export function measuredOn(): string {
  const cpu = cpus();
  const model = cpu[0]?.model.trim() ?? "unknown CPU";
  const memory = `${decimal(totalmem() / 2 ** 30, 0)} GiB`;
  const system = `Linux ${release()}, Node ${process.version}`;
  const date = new Date().toISOString().slice(0, 10);
  return `Measured on ${date}, ${cpu.length} × ${model}, ${memory}, ${system}: the median of ` +
    `${ROUNDS} interleaved rounds.`;
}

/** Formats a number with thousands separators and the given decimals. */
export function decimal(value: number, digits: number): string {
  const options = { minimumFractionDigits: digits, maximumFractionDigits: digits };
  return value.toLocaleString("en-US", options);
}

/** Bytes as MiB, for the tables. */
export function mebibytes(bytes: number): string {
  return `${decimal(bytes / 2 ** 20, 1)} MiB`;
}

/** A Markdown table with padded columns, so that it reads in a terminal too. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((title, column) => {
    return Math.max(title.length, ...rows.map((row) => (row[column] ?? "").length));
  });
  const format = (cells: readonly string[]) => {
    return `| ${cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join(" | ")} |`;
  };
  const rule = `|${widths.map((width) => "-".repeat(width + 2)).join("|")}|`;
  return [format(header), rule, ...rows.map(format)].join("\n");
}

/** A target as a row: the goal, our ratio, what a floor scores on the same ratio, PASS or MISS. */
export function target(
  goal: string,
  direction: "at least" | "at most",
  threshold: number,
  measured: Ratio,
  floor: Ratio | "itself",
): string[] {
  const pass = direction === "at least" ? measured.value >= threshold : measured.value <= threshold;
  const floorScore = floor === "itself" ? "1× (itself)" : `${decimal(floor.value, 2)}×`;
  const shown = `${decimal(measured.value, 2)}× (${measured.detail})`;
  return [goal, `${direction} ${threshold}×`, shown, floorScore, pass ? "PASS" : "MISS"];
}

/** A file's size, and its size gzipped, for the tables. */
export function bundleSize(file: string): string {
  const bytes = readFileSync(file);
  const gzipped = gzipSync(bytes).length;
  return `${decimal(bytes.length / 1024, 1)} kB (${decimal(gzipped / 1024, 1)} kB)`;
}

/** The installed version of a package, for the tables. */
export function installedVersion(name: string): string {
  const path = join(root, "node_modules", name, "package.json");
  const manifest: unknown = JSON.parse(readFileSync(path, "utf8"));
  const known = typeof manifest === "object" && manifest !== null && "version" in manifest;
  return known ? String(manifest.version) : "?";
}

// ---- The SDK's servers ----

/**
 * Bundles bench/NAME.ts into bench/.build/NAME.mjs with build.mjs's own `bundle`, the way
 * build.mjs bundles ours; the bundle must import only node: builtins. Its path.
 */
export async function bundleServer(name: string): Promise<string> {
  const entry = join(root, "bench", `${name}.ts`);
  const outfile = join(root, "bench", ".build", `${name}.mjs`);
  const foreign = await bundle(entry, outfile);
  if (foreign.length > 0) {
    throw new Error(`${outfile} imports ${foreign.join(", ")}; only node: builtins are allowed`);
  }
  // esbuild turns a CommonJS dependency's require() of a builtin into a shim that throws in
  // ESM: give it a real require.
  if (readFileSync(outfile, "utf8").includes("Dynamic require of")) {
    const prelude = 'import { createRequire } from "node:module"; ' +
      "const require = createRequire(import.meta.url);";
    await bundle(entry, outfile, prelude);
  }
  return outfile;
}
