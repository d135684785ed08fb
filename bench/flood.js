// Output flood: one task writing 300 MB to stdout, and 8 tasks writing 20 MB each (at -j 8),
// against `sh -c '... > /dev/null'` of the same commands, with `--output plain` and `--output json`.
// Checks every byte reached the logs.
//   node bench/flood.js [--runs N]
import { readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { floodCommand, floodTasks } from "./workflows.js";
import { alternate, isMain, log, measure, median, ms, msCell, numberArg, rssCell, scratch, table, TASKQ, verdict } from "./lib.js";

const MB = 1_000_000;

/** Total bytes in every task log (`*.log`: not the folder's `.taskq-run` stamp) of every run under `logRoot`. */
function logBytes(logRoot) {
  let total = 0;
  for (const runId of readdirSync(logRoot)) {
    for (const file of readdirSync(join(logRoot, runId))) if (file.endsWith(".log")) total += statSync(join(logRoot, runId, file)).size;
  }
  return total;
}

export async function run({ runs = 5 } = {}) {
  const work = scratch("flood");
  try {
    const cases = [
      { name: "1 task x 300 MB", commands: [floodCommand(300)], bytes: 300 * MB },
      { name: "8 tasks x 20 MB", commands: Array.from({ length: 8 }, () => floodCommand(20)), bytes: 8 * 20 * MB },
    ];
    const rows = [];
    const jsonRows = [];
    const targets = [];
    for (const [index, flood] of cases.entries()) {
      const file = join(work.dir, `flood-${index}.yaml`);
      floodTasks(file, flood.commands);
      const parallel = flood.commands.length;
      // The baseline runs the same commands, as many at once, straight to /dev/null.
      const script = flood.commands.map((command) => `(${command}) > /dev/null &`).join("\n") + "\nwait";
      // The floor for anything that keeps every byte: the same commands writing straight to files.
      const fileScript = flood.commands.map((command, i) => `(${command}) > out-${index}-${i}.log &`).join("\n") + "\nwait";
      const checked = { plain: true, json: true };
      const logBytesSeen = {};
      /** taskq with `--output <mode>`; counts the bytes in its logs, then removes them. */
      const taskqRun = (mode) => async () => {
        const logRoot = join(work.dir, `logs-${index}-${mode}`);
        const result = await measure([TASKQ, "run", file, "-j", String(parallel), "--output", mode, "--log-dir", logRoot], { cwd: work.dir });
        const bytes = logBytes(logRoot);
        rmSync(logRoot, { recursive: true, force: true });
        if (bytes !== flood.bytes) checked[mode] = false;
        logBytesSeen[mode] = bytes;
        return result;
      };
      const commands = [
        { name: "sh -c '... > /dev/null'", run: () => measure(["sh", "-c", script], { cwd: work.dir }) },
        { name: "sh -c '... > file'", run: () => measure(["sh", "-c", fileScript], { cwd: work.dir }) },
        { name: "taskq run --output plain > /dev/null", run: taskqRun("plain") },
        { name: "taskq run --output json > /dev/null", run: taskqRun("json") },
      ];
      log(`flood: ${flood.name}, ${runs} alternating runs`);
      const results = await alternate(commands, runs, { warmup: 0 });
      const [devNull, toFile, taskq, json] = results;
      const x = median(ms(taskq)) / median(ms(devNull));
      const xFile = median(ms(taskq)) / median(ms(toFile));
      const peak = Math.max(...taskq.map((r) => r.rssKb ?? 0)) / 1024;
      const jsonPeak = Math.max(...json.map((r) => r.rssKb ?? 0)) / 1024;
      targets.push({ name: `flood (${flood.name}): taskq <= 1.3x sh`, pass: x <= 1.3 });
      targets.push({ name: `flood (${flood.name}): taskq peak RSS < 150 MB`, pass: peak > 0 && peak < 150 && jsonPeak > 0 && jsonPeak < 150 });
      targets.push({ name: `flood (${flood.name}): every byte in the logs`, pass: checked.plain && checked.json });
      const logCell = (mode) => `${logBytesSeen[mode].toLocaleString("en-US")} of ${flood.bytes.toLocaleString("en-US")} ${verdict(checked[mode])}`;
      rows.push([
        flood.name,
        msCell(ms(devNull)),
        msCell(ms(toFile)),
        msCell(ms(taskq)),
        `${x.toFixed(2)}x ${verdict(x <= 1.3)}`,
        `${xFile.toFixed(2)}x`,
        `${rssCell(taskq)} ${verdict(peak > 0 && peak < 150)}`,
        logCell("plain"),
      ]);
      jsonRows.push([
        flood.name,
        msCell(ms(json)),
        `${(median(ms(json)) / median(ms(toFile))).toFixed(2)}x`,
        `${(median(ms(json)) / median(ms(taskq))).toFixed(2)}x`,
        `${rssCell(json)} ${verdict(jsonPeak > 0 && jsonPeak < 150)}`,
        logCell("json"),
      ]);
    }
    const markdown = [
      `Each task runs \`yes xxx...x | head -c N\` (100-byte lines, exactly N bytes, as fast as the pipe takes them). taskq writes every byte to its log and, with \`--output plain\`, every line prefixed to stdout (here /dev/null). The second baseline runs the same commands with their output going straight to files: what keeping every byte costs with no runner at all, the floor for any tool that keeps the logs. ${runs} runs, alternating; median (min-max).`,
      "",
      table(["workload", "sh > /dev/null", "sh > file", "taskq", "taskq / sh > /dev/null (<= 1.3x)", "taskq / sh > file", "taskq peak RSS (< 150 MB)", "log bytes (every run)"], rows),
      "",
      "The same runs with `--output json` (one NDJSON record per line, to /dev/null), alternating with the rows above:",
      "",
      table(["workload", "taskq --output json", "vs sh > file", "vs --output plain", "peak RSS (< 150 MB)", "log bytes (every run)"], jsonRows),
    ].join("\n");
    return { title: "Output flood", markdown, targets };
  } finally {
    work.remove();
  }
}

if (isMain(import.meta.url)) {
  const result = await run({ runs: numberArg("--runs", 5) });
  process.stdout.write(`${result.markdown}\n`);
}
