// Per-task overhead: N independent `true` tasks at -j 2 through taskq, against a raw Node
// spawn loop (child_process.spawn of `sh -c true`, 2 in flight, stdio ignored), xargs -P2
// and GNU parallel -j2.   node bench/overhead.js [--runs N] [--tasks N]
import { execFileSync } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { alternate, fileCreationMicros, isMain, log, measure, median, ms, msCell, numberArg, ROOT, rssCell, scratch, table, TASKQ, verdict } from "./lib.js";
import { independentTasks } from "./workflows.js";

function hasParallel() {
  try {
    return /GNU parallel/.test(execFileSync("parallel", ["--version"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }));
  } catch {
    return false;
  }
}

export async function run({ runs = 5, tasks = 1000 } = {}) {
  const work = scratch("overhead");
  try {
    const file = join(work.dir, "tasks.yaml");
    independentTasks(file, tasks);
    const opts = { cwd: work.dir };
    const sh = (script) => () => measure(["sh", "-c", script], opts);
    const commands = [
      { name: "raw Node spawn loop", run: () => measure([process.execPath, join(ROOT, "bench/baselines/spawn-loop.js"), String(tasks), "2"], opts) },
      {
        name: "taskq run -j 2 --output plain",
        run: () => measure([TASKQ, "run", file, "-j", "2", "--output", "plain", "--log-dir", join(work.dir, "logs")], { ...opts, stdout: undefined }),
      },
      { name: "xargs -P2 sh -c true", run: sh(`seq ${tasks} | xargs -P2 -I{} sh -c true`) },
      {
        name: "spawn loop keeping output (own group, pipes into a log file per task)",
        run: () => measure([process.execPath, join(ROOT, "bench/baselines/spawn-loop.js"), String(tasks), "2", "--keep-output"], opts),
      },
    ];
    const tmpfs = "/dev/shm";
    if (existsSync(tmpfs)) {
      commands.push({
        name: `taskq run -j 2 --output plain, logs on tmpfs (${tmpfs})`,
        run: () => measure([TASKQ, "run", file, "-j", "2", "--output", "plain", "--log-dir", join(tmpfs, `taskq-bench-${process.pid}`)], opts),
      });
    }
    if (hasParallel()) commands.push({ name: "GNU parallel -j2 sh -c true", run: sh(`seq ${tasks} | parallel --will-cite -j2 -N0 sh -c true`) });
    // Where inodes were freed minutes ago (a filesystem without a journal skips them for a
    // while), creating a file can cost 10-50x more than on a quiet one: measured before and after.
    const diskCreateBefore = fileCreationMicros(work.dir);
    log(`overhead: ${tasks} tasks, ${runs} alternating runs of ${commands.length} commands`);
    const results = await alternate(commands, runs, { warmup: 0 });
    const perTask = (i) => median(ms(results[i])) / tasks;
    const raw = perTask(0);
    const taskq = perTask(1);
    const rows = commands.map((command, i) => [
      command.name,
      msCell(ms(results[i])),
      `${perTask(i).toFixed(2)} ms`,
      `${(perTask(i) / raw).toFixed(2)}x`,
      rssCell(results[i]),
    ]);
    const targets = [{ name: `overhead: taskq <= 1.5x the raw spawn loop`, pass: taskq <= 1.5 * raw }];
    const parallelIndex = commands.findIndex((command) => command.name.startsWith("GNU parallel"));
    if (parallelIndex >= 0) targets.push({ name: "overhead: taskq faster than GNU parallel", pass: taskq < perTask(parallelIndex) });
    const diskCreate = fileCreationMicros(work.dir);
    const tmpfsCreate = existsSync(tmpfs) ? fileCreationMicros(tmpfs) : undefined;
    if (existsSync(tmpfs)) rmSync(join(tmpfs, `taskq-bench-${process.pid}`), { recursive: true, force: true });
    const markdown = [
      `${tasks} independent \`true\` tasks, 2 at a time; ${runs} runs, alternating; median (min-max) wall time of the whole process. taskq's stdout goes to /dev/null; its logs to a scratch folder (and, in the last row, to tmpfs). Every task gets a log file: creating one empty file costs ${diskCreateBefore.toFixed(0)} µs in the scratch folder on this machine before the runs and ${diskCreate.toFixed(0)} µs after them${tmpfsCreate === undefined ? "" : `, and ${tmpfsCreate.toFixed(0)} µs on tmpfs`}. That cost is on taskq's main thread, between one task's end and the next one's start; the loop keeping output pays it too.`,
      "",
      table(["runner", "wall time", "per task", "vs raw loop", "peak RSS"], rows),
      "",
      ...targets.map((t) => `- ${t.name}: ${verdict(t.pass)}`),
    ].join("\n");
    return { title: "Per-task overhead", markdown, targets, perTaskRatio: taskq / raw };
  } finally {
    work.remove();
  }
}

if (isMain(import.meta.url)) {
  const result = await run({ runs: numberArg("--runs", 5), tasks: numberArg("--tasks", 1000) });
  process.stdout.write(`${result.markdown}\n`);
}
