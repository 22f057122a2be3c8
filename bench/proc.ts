/**
 * bench/proc.ts — what Linux's /proc tells of a process as it runs, for the scripts that print
 * figures (bench/readers.ts, bench/stress.ts). Not a benchmark itself.
 */
import { readFileSync } from "node:fs";

/** A process's peak resident memory so far, in bytes, or 0 once it is gone. */
export function highWaterMark(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    return Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}
