import type { ChalkInstance } from "chalk";
import { formatMs } from "../../engine/index.js";
import type { RunSummary } from "./types.js";

/** The end-of-run summary as text: counts, wall time, dead letters, then what they cancelled. */
export function formatSummary(summary: RunSummary, c: ChalkInstance): string {
  const { counts } = summary;
  const out: string[] = [""];
  const parts = [
    c.green(`${counts.SUCCEEDED} succeeded`),
    counts.FAILED > 0 ? c.red(`${counts.FAILED} failed`) : `${counts.FAILED} failed`,
    counts.CANCELLED > 0 ? c.yellow(`${counts.CANCELLED} cancelled`) : `${counts.CANCELLED} cancelled`,
  ];
  const unfinished = counts.BLOCKED + counts.SCHEDULED + counts.READY + counts.RUNNING;
  if (unfinished > 0) parts.push(`${unfinished} unfinished`);
  const interrupted = summary.interrupted ? c.yellow(` (interrupted by ${summary.interrupted})`) : "";
  out.push(`${c.bold("Summary")}: ${parts.join(", ")} in ${formatWall(summary.wallMs)}${interrupted}`);
  if (summary.deadLetters.length > 0) {
    out.push("", c.bold.red(`Dead letters (${summary.deadLetters.length}):`));
    for (const dead of summary.deadLetters) {
      const tries = dead.attempts === 1 ? "1 attempt" : `${dead.attempts} attempts`;
      out.push(`  ${c.red("✗")} ${c.bold(dead.id)}: ${dead.error} (${tries})`);
      out.push(`    log: ${dead.logPath}`);
      if (dead.tail.length > 0) {
        out.push(`    last ${dead.tail.length === 1 ? "line" : `${dead.tail.length} lines`}:`);
        for (const line of dead.tail) out.push(c.dim(`      ${line}`));
      }
      const victims = summary.cancelled.filter((x) => x.reason === "dependency" && x.dependency === dead.id);
      if (victims.length > 0) out.push(`    cancelled because of it: ${victims.map((v) => v.id).join(", ")}`);
    }
  }
  const others = summary.cancelled.filter((x) => !(x.reason === "dependency" && summary.deadLetters.some((d) => d.id === x.dependency)));
  if (others.length > 0) {
    out.push("", c.bold.yellow(`Cancelled (${others.length}):`));
    const shown = others.slice(0, 50);
    for (const x of shown) out.push(`  ${c.yellow("-")} ${x.id}: ${x.message}`);
    if (others.length > shown.length) out.push(`  ... and ${others.length - shown.length} more`);
  }
  out.push("", c.dim(`logs: ${summary.logDir}`));
  return `${out.join("\n")}\n`;
}

function formatWall(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)}ms` : formatMs(Math.round(ms / 100) * 100);
}
