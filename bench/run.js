// `npm run bench`: every benchmark in one invocation, results as Markdown.
//   node bench/run.js [--only startup,overhead,large,flood,schedule,engine,postgres] [--runs N] [--write]
// --runs sets the runs per measurement (default 5; startup uses twice as many, being cheap).
// --large-run-tasks N: size of the `taskq run` part of the large benchmark (default 10000).
// --full runs the engine benchmark at 1M tasks too (slow). --write replaces BENCHMARKS.md. Build first: npm run build (the bundle and its code cache; tsc alone leaves them out, and the benchmarks refuse a dist/ not built from the sources).
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { join } from "node:path";
import { log, requireBuilt, ROOT, TASKQ } from "./lib.js";

const ALL = ["startup", "overhead", "large", "flood", "schedule", "engine", "postgres"];

function parseArgs(argv) {
  const value = (name) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
  const only = value("--only")?.split(",").map((s) => s.trim()).filter(Boolean) ?? ALL;
  for (const name of only) if (!ALL.includes(name)) throw new Error(`unknown benchmark ${name}; choose from ${ALL.join(", ")}`);
  const runs = Number(value("--runs") ?? 5);
  if (!Number.isInteger(runs) || runs < 1) throw new Error("--runs must be a positive whole number");
  const largeRunTasks = Number(value("--large-run-tasks") ?? 10_000);
  return { only, runs, write: argv.includes("--write"), full: argv.includes("--full"), largeRunTasks };
}

/** The engine and PostgreSQL benchmarks are scripts of their own: run them as they are. */
function external(script, args, env) {
  const result = spawnSync(process.execPath, [join(ROOT, script), ...args], { cwd: ROOT, encoding: "utf8", env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "inherit"] });
  if (result.status !== 0) return { markdown: `Failed (exit ${result.status}); see the console.`, targets: [] };
  return { markdown: result.stdout.trim(), targets: [] };
}

function machine() {
  const cpu = cpus();
  const load = loadavg().map((x) => x.toFixed(1)).join(" ");
  return `Node ${process.version} on ${process.platform}/${process.arch}, ${cpu.length} x ${cpu[0]?.model.trim() ?? "cpu"}, ${Math.round(totalmem() / 2 ** 30)} GiB RAM; load average at start: ${load}.`;
}

async function main() {
  const { only, runs, write, full, largeRunTasks } = parseArgs(process.argv.slice(2));
  requireBuilt(TASKQ);
  const startedAt = new Date();
  const header = machine();
  log(header);
  const sections = [];
  let overheadRatio;
  for (const name of only) {
    const t0 = performance.now();
    log(`== ${name}`);
    let result;
    if (name === "engine") result = { title: "Engine (library)", ...external("bench/engine/run.js", ["--runs", String(runs), ...(full ? [] : ["--quick"])]) };
    else if (name === "postgres") result = { title: "Durable mode (PostgreSQL)", ...external("bench/postgres/run.js", [], { BENCH_RUNS: String(runs) }) };
    else {
      const module = await import(`./${name}.js`);
      const options = { runs: name === "startup" ? runs * 2 : runs };
      if (name === "large") Object.assign(options, { overheadRatio, runTasks: largeRunTasks });
      result = await module.run(options);
      if (name === "overhead") overheadRatio = result.perTaskRatio;
    }
    result.seconds = (performance.now() - t0) / 1000;
    sections.push(result);
    process.stdout.write(`\n## ${result.title}\n\n${result.markdown}\n`);
    log(`== ${name}: ${result.seconds.toFixed(0)} s`);
  }
  const targets = sections.flatMap((section) => section.targets);
  const summary = targets.map((t) => `- ${t.pass ? "met" : "**missed**"}: ${t.name}`).join("\n");
  process.stdout.write(`\n## Targets (this invocation)\n\n${summary}\n`);
  if (write) writeReport({ startedAt, header, only, runs, largeRunTasks, sections });
}

const MARK = "<!-- results: written by `npm run bench -- --write`; text above this line is kept -->";
const ORDER = ["Startup", "Per-task overhead", "Large workflows", "Output flood", "Scheduling precision", "Engine (library)", "Durable mode (PostgreSQL)"];

/** Sections of an earlier report, by title, so that `--only x --write` replaces only x. */
function previousSections(text) {
  const sections = new Map();
  const parts = text.split(/^## /m).slice(1);
  for (const part of parts) {
    const title = part.slice(0, part.indexOf("\n")).trim();
    if (ORDER.includes(title)) sections.set(title, part.slice(part.indexOf("\n") + 1).trim());
  }
  return sections;
}

function writeReport({ startedAt, header, only, runs, largeRunTasks, sections }) {
  const file = join(ROOT, "BENCHMARKS.md");
  const previous = existsSync(file) ? readFileSync(file, "utf8") : "";
  const intro = previous.includes(MARK) ? previous.slice(0, previous.indexOf(MARK)) : "# Benchmarks\n\n";
  const kept = previous.includes(MARK) ? previousSections(previous.slice(previous.indexOf(MARK))) : new Map();
  const command = `npm run bench -- --runs ${runs}${only.length === ALL.length ? "" : ` --only ${only.join(",")}`}${largeRunTasks === 10_000 ? "" : ` --large-run-tasks ${largeRunTasks}`} --write`;
  const when = startedAt.toISOString().slice(0, 16).replace("T", " ");
  for (const section of sections) {
    kept.set(section.title, [`_${when} UTC, \`${command}\`, ${section.seconds.toFixed(0)} s. ${header}_`, "", section.markdown].join("\n"));
  }
  const body = [MARK, ""];
  for (const title of ORDER) if (kept.has(title)) body.push(`## ${title}`, "", kept.get(title), "");
  writeFileSync(file, `${intro}${body.join("\n")}`);
  log(`wrote ${file}`);
}

await main();
