// Scheduling precision: 200 tasks with `delay` spread evenly over 2 s, run with -j 200 so
// that concurrency never holds a task back. Lateness of each task against its runAt, from
// the `--output json` events (the `submitted` event carries runAt; `ready` is when the timer
// fired, `started` when the attempt began; ts has ms resolution). Alternates with the floor:
// a bare Node process that sets the same timers and spawns `sh -c true` at each
// (bench/baselines/timer-spawn.js), and with the same floor starting each process ahead of
// its time, held on a pipe until then (bench/baselines/prestart-spawn.js): what a runner
// that did so could reach on this machine.   node bench/schedule.js [--runs N]
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { isMain, log, measure, median, numberArg, quantile, ROOT, scratch, table, TASKQ, verdict } from "./lib.js";

const TASKS = 200;
const SPREAD_MS = 2000;
/** How long before its time the held floor starts a task's process. */
const LEAD_MS = 200;

export async function run({ runs = 5 } = {}) {
  const work = scratch("schedule");
  try {
    const file = join(work.dir, "delays.yaml");
    const lines = ["tasks:"];
    for (let i = 0; i < TASKS; i++) lines.push(`  t${i}: { run: "true", delay: ${Math.round(((i + 1) * SPREAD_MS) / TASKS)}ms }`);
    writeFileSync(file, `${lines.join("\n")}\n`);
    const perRun = [];
    for (let r = 0; r < runs; r++) {
      log(`schedule: run ${r + 1}/${runs}`);
      const result = await measure([TASKQ, "run", file, "-j", String(TASKS), "--output", "json", "--log-dir", join(work.dir, "logs")], {
        cwd: work.dir,
        stdout: "pipe",
      });
      const runAt = new Map();
      const ready = [];
      const started = [];
      for (const line of result.stdout.split("\n")) {
        if (line === "") continue;
        const event = JSON.parse(line);
        const ts = Date.parse(event.ts);
        // Only tasks that waited on a timer count: one already due when submitted (a slow start) did not.
        if (event.event === "submitted" && event.status === "SCHEDULED") runAt.set(event.id, event.runAt);
        else if (event.event === "ready" && runAt.has(event.id)) ready.push(ts - runAt.get(event.id));
        else if (event.event === "started" && runAt.has(event.id)) started.push(ts - runAt.get(event.id));
      }
      if (started.length < TASKS / 2) throw new Error(`schedule: only ${started.length} of ${TASKS} tasks waited on a timer; the machine is too slow`);
      const floor = JSON.parse((await measure([process.execPath, join(ROOT, "bench/baselines/timer-spawn.js"), String(TASKS), String(SPREAD_MS)], { cwd: work.dir, stdout: "pipe" })).stdout);
      const held = JSON.parse((await measure([process.execPath, join(ROOT, "bench/baselines/prestart-spawn.js"), String(TASKS), String(SPREAD_MS), String(LEAD_MS)], { cwd: work.dir, stdout: "pipe" })).stdout);
      perRun.push({ ready, started, timed: started.length, rssKb: result.rssKb, floor: floor.lateness, floorSpawnMs: floor.spawnMs, held: held.lateness, heldSpawnMs: held.spawnMs });
    }
    const stat = (key, q) => median(perRun.map((r) => quantile(r[key], q)));
    const range = (key, q) => {
      const values = perRun.map((r) => quantile(r[key], q));
      return `${Math.min(...values)}-${Math.max(...values)}`;
    };
    const p50 = stat("started", 0.5);
    const p99 = stat("started", 0.99);
    const targets = [
      { name: "schedule: start lateness p50 <= 5 ms", pass: p50 <= 5 },
      { name: "schedule: start lateness p99 <= 20 ms", pass: p99 <= 20 },
    ];
    const rss = perRun.map((r) => r.rssKb).filter((x) => x > 0);
    const markdown = [
      `${TASKS} \`true\` tasks with \`delay\` from ${SPREAD_MS / TASKS} ms to ${SPREAD_MS} ms, -j ${TASKS}, ${runs} runs; median over runs of each run's percentile (min-max), lateness in ms against runAt (json \`ts\` is whole ms). Each taskq run alternates with a run of each floor.`,
      "",
      table(["moment", "p50", "p99", "max"], [
        ["timer fired (`ready`)", `${stat("ready", 0.5)} (${range("ready", 0.5)})`, `${stat("ready", 0.99)} (${range("ready", 0.99)})`, `${stat("ready", 1)}`],
        ["attempt began (`started`)", `${p50} (${range("started", 0.5)})`, `${p99} (${range("started", 0.99)})`, `${stat("started", 1)}`],
        ["floor: bare Node, a timer per task, spawning `sh -c true` (piped) at each", `${stat("floor", 0.5)} (${range("floor", 0.5)})`, `${stat("floor", 0.99)} (${range("floor", 0.99)})`, `${stat("floor", 1)}`],
        [`floor, each process started ${LEAD_MS} ms ahead and held on a pipe: its release`, `${stat("held", 0.5)} (${range("held", 0.5)})`, `${stat("held", 0.99)} (${range("held", 0.99)})`, `${stat("held", 1)}`],
      ]),
      "",
      `- tasks that waited on a timer per run: ${perRun.map((r) => r.timed).join(", ")} of ${TASKS} (\`delay\` counts from the start of the run, so none is due at submission; one that was would not count).`,
      `- time inside spawn() for the ${TASKS} tasks (forking, and waiting for the child's exec, on the main thread), median per run: ${median(perRun.map((r) => r.floorSpawnMs))} ms for the floor, ${median(perRun.map((r) => r.heldSpawnMs))} ms for the held floor, of the ${SPREAD_MS} ms over which the tasks fall due. Each fork, made ahead or at the task's time, holds the main thread: a release or timer due meanwhile waits for it.`,
      `- p50 <= 5 ms: ${verdict(p50 <= 5)}; p99 <= 20 ms: ${verdict(p99 <= 20)} (targets are for an idle machine; the floor's p99 is what this machine allows a single-threaded Node spawner: spawn() forks on the main thread and holds back every timer due meanwhile); taskq peak RSS ${rss.length ? Math.round(median(rss) / 1024) : "n/a"} MiB.`,
    ].join("\n");
    return { title: "Scheduling precision", markdown, targets };
  } finally {
    work.remove();
  }
}

if (isMain(import.meta.url)) {
  const result = await run({ runs: numberArg("--runs", 5) });
  process.stdout.write(`${result.markdown}\n`);
}
