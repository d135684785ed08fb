// Large workflows: `taskq validate` of generated files (1-3 dependencies per task) at
// 1k, 10k and 40k tasks, time and peak RSS; then `taskq run` of the 10k file at -j 2
// against the raw spawn loop of as many tasks.   node bench/large.js [--runs N] [--no-run]
import { join } from "node:path";
import { alternate, fileCreationMicros, isMain, log, measure, median, ms, msCell, numberArg, ROOT, rssCell, scratch, table, TASKQ, verdict } from "./lib.js";
import { layeredTasks } from "./workflows.js";

const SIZES = [1000, 10_000, 40_000];

export async function run({ runs = 5, runWorkflow = true, runTasks = 10_000, overheadRatio } = {}) {
  const work = scratch("large");
  try {
    const files = new Map(SIZES.map((size) => [size, join(work.dir, `tasks-${size}.yaml`)]));
    for (const [size, file] of files) layeredTasks(file, size);
    const opts = { cwd: work.dir };
    const commands = [
      { name: "node -e ''", run: () => measure([process.execPath, "-e", ""], opts) },
      ...SIZES.map((size) => ({ name: `taskq validate, ${size / 1000}k tasks`, size, run: () => measure([TASKQ, "validate", files.get(size)], opts) })),
    ];
    log(`large: validate, ${runs} alternating runs`);
    const results = await alternate(commands, runs);
    const timeOf = (size) => median(ms(results[1 + SIZES.indexOf(size)]));
    const node = median(ms(results[0]));
    const rows = commands.map((command, i) => [command.name, msCell(ms(results[i])), `${(median(ms(results[i])) / node).toFixed(1)}x`, rssCell(results[i])]);
    const growth = timeOf(40_000) / timeOf(10_000);
    const targets = [
      { name: "large: validate 10k tasks <= 1.5 s (whole process)", pass: timeOf(10_000) <= 1500 },
      { name: "large: validate 40k <= 5x the 10k time", pass: growth <= 5 },
    ];
    const lines = [
      `Generated files: each task after the third depends on 1-3 earlier ones; block style with \`defaults\` and some priorities. ${runs} runs, alternating with bare node; median (min-max).`,
      "",
      table(["command", "wall time", "vs node -e ''", "peak RSS"], rows),
      "",
      `- 40k / 10k validate time: ${growth.toFixed(2)}x (target <= 5x): ${verdict(growth <= 5)}`,
      `- 10k validate: ${Math.round(timeOf(10_000))} ms (target <= 1500 ms): ${verdict(timeOf(10_000) <= 1500)}`,
    ];

    if (runWorkflow) {
      const size = runTasks;
      const file = join(work.dir, "run-10k.yaml");
      layeredTasks(file, size);
      const runCommands = [
        { name: `raw Node spawn loop, ${size / 1000}k`, run: () => measure([process.execPath, join(ROOT, "bench/baselines/spawn-loop.js"), String(size), "2"], opts) },
        { name: `taskq run -j 2, ${size / 1000}k tasks with dependencies`, run: () => measure([TASKQ, "run", file, "-j", "2", "--output", "plain", "--log-dir", join(work.dir, "logs")], opts) },
      ];
      // As many runs as the rest (5 by default): each pair is 20,000 spawns, about 30 s here.
      const runRuns = runs;
      log(`large: run ${size} tasks, ${runRuns} alternating runs`);
      const createBefore = fileCreationMicros(work.dir);
      const ran = await alternate(runCommands, runRuns, { warmup: 0 });
      const createAfter = fileCreationMicros(work.dir);
      const ratio10k = median(ms(ran[1])) / median(ms(ran[0]));
      const perTask = (r) => `${(median(ms(r)) / size).toFixed(2)} ms`;
      const pass = overheadRatio === undefined ? ratio10k <= 1.5 : ratio10k <= Math.max(1.5, overheadRatio * 1.05);
      targets.push({ name: `large: ${size / 1000}k run overhead per task no worse than in the overhead benchmark`, pass });
      lines.push(
        "",
        `\`taskq run\` of a ${size / 1000}k-task file (every task \`true\`, with its dependencies) at -j 2, against the raw spawn loop of ${size / 1000}k \`sh -c true\`; ${runRuns} runs, alternating. Every task gets a log file, in a run folder of its own under the scratch folder (the loop creates none): creating one empty file there costs ${createBefore.toFixed(0)} µs on this machine before the runs and ${createAfter.toFixed(0)} µs after them, ${((createAfter * size) / 1e6).toFixed(1)} s of a run at that cost.`,
        "",
        table(["runner", "wall time", "per task", "vs raw loop", "peak RSS"], [
          [runCommands[0].name, msCell(ms(ran[0])), perTask(ran[0]), "1.00x", rssCell(ran[0])],
          [runCommands[1].name, msCell(ms(ran[1])), perTask(ran[1]), `${ratio10k.toFixed(2)}x`, rssCell(ran[1])],
        ]),
        "",
        `- ${size / 1000}k run vs raw loop: ${ratio10k.toFixed(2)}x${overheadRatio === undefined ? "" : ` (1k independent tasks: ${overheadRatio.toFixed(2)}x)`}: ${verdict(pass)}`,
      );
    }
    return { title: "Large workflows", markdown: lines.join("\n"), targets };
  } finally {
    work.remove();
  }
}

if (isMain(import.meta.url)) {
  const result = await run({ runs: numberArg("--runs", 5), runWorkflow: !process.argv.includes("--no-run"), runTasks: numberArg("--run-tasks", 10_000) });
  process.stdout.write(`${result.markdown}\n`);
}
