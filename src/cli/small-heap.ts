import { setFlagsFromString } from "node:v8";

/** Where bin/taskq.cjs finds how to undo the flags before it writes the code cache. */
const RESTORE_FLAGS = Symbol.for("taskq.restoreV8Flags");

/** How far the old generation may grow past its live size before V8 collects it (see below). */
const OLD_GENERATION_GROWTH_PERCENT = 30;

/**
 * Keeps V8's young generation at the size it has now (2 MiB at the start of a run) for
 * the rest of the process, instead of letting it double up to 32 MiB under the steady
 * allocation of a run. Every task is started with fork(), which copies the page tables
 * of all our memory, and the child's exec() then tears them down while we wait: with
 * the young generation left to grow, `run` of 1,000 `true` tasks peaked at 91 instead of
 * 71 MB and each task cost ~6% more (2.78 against 2.61 ms, medians of 10 alternating
 * runs). Scavenges come more often, each with as little to copy as before; a 300 MB
 * output flood is no slower. The flag is read by V8 each time it considers growing the
 * space, so it takes effect when set at run time.
 *
 * Only for Node majors known to have the flag: V8 prints an error for flags it does not
 * know. V8 stamps the code cache with a hash of its flags, so the default goes back
 * before bin/taskq.cjs writes one (through RESTORE_FLAGS), or every later start would
 * reject the cache.
 *
 * V8 raises the flag back to 2 whenever it creates an isolate (Heap::ConfigureHeap), so
 * a worker thread undoes it for the whole process: call this again once such a thread
 * is running (measured: after the parser thread of a 10k-task file, the young
 * generation grew to 32 MiB for the rest of the run).
 *
 * The old generation is kept tight too. With a young generation this small, a run's
 * short-lived objects that happen to live through two scavenges (a few KB per task) are
 * promoted, and V8 lets the old generation grow up to 4x its live size before it collects
 * it: a 10k-task run's heap grew from 13 MB live to 49 MB (a full collection at every GC
 * showed 13 MB live throughout), and its peak RSS reached 100 MB. Letting it grow by 30%
 * (V8 still grows it by at least ~8 MB) kept that heap between 14 and 22 MB and the peak
 * RSS at 82 MB, in the same time (6 alternating runs of the 10k file: medians 19.6
 * against 19.4 s; 1,000 tasks, 10 runs: 2.60 against 2.64 s). It cost two more full
 * collections while the 10k file loaded (12 ms) and one during the run (2 ms, and 5 ms
 * of incremental steps); a 200-task run has none.
 */
export function keepHeapSmall(): void {
  const major = Number(process.versions.node.split(".")[0]);
  if (major < 20 || major > 24) return;
  setFlagsFromString("--semi-space-growth-factor=1");
  setFlagsFromString(`--heap-growing-percent=${OLD_GENERATION_GROWTH_PERCENT}`);
  (globalThis as Record<symbol, unknown>)[RESTORE_FLAGS] = () => {
    setFlagsFromString("--semi-space-growth-factor=2");
    setFlagsFromString("--heap-growing-percent=0");
  };
}
