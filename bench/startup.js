// Startup: `taskq --version`, `taskq validate` of 3 tasks and `taskq run` of one `true` task,
// against bare `node -e ''`; plus the import cost of each dependency and which command loads it.
//   node bench/startup.js [--runs N]
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { alternate, BENCH_ENV, isMain, log, measure, median, ms, msCell, numberArg, ratio, ROOT, rssCell, scratch, table, TASKQ, verdict } from "./lib.js";

const THREE_TASKS = `tasks:
  a: { run: "true" }
  b: { run: "true", dependsOn: a }
  c: { run: "true", dependsOn: [a, b] }
`;
const ONE_TASK = `tasks:
  a: { run: "true" }
`;

/** Modules whose import cost we report; the `dist` ones are taskq's own layers. */
const MODULES = [
  ["commander", "commander"],
  ["yaml", "yaml"],
  ["zod/mini (the zod API taskq imports)", "zod/mini"],
  ["chalk", "chalk"],
  ["ora", "ora"],
  ["the loader (dist/loaders, with yaml and zod)", pathToFileURL(join(ROOT, "dist/loaders/index.js")).href],
  ["the engine (dist/engine)", pathToFileURL(join(ROOT, "dist/engine/index.js")).href],
  ["the shell handler (dist/handlers)", pathToFileURL(join(ROOT, "dist/handlers/index.js")).href],
];

/** Milliseconds to import `specifier` in a fresh node process (cwd = repo root, so bare names resolve). */
function importCost(specifier) {
  const code = `const t = performance.now(); await import(${JSON.stringify(specifier)}); process.stdout.write(String(performance.now() - t));`;
  const result = spawnSync(process.execPath, ["--input-type=module", "-e", code], { cwd: ROOT, encoding: "utf8" });
  if (result.status !== 0) throw new Error(`import ${specifier} failed: ${result.stderr}`);
  return Number(result.stdout);
}

/**
 * Which packages a command loads. The bundle (dist/bundle/cli.cjs) keeps the source's lazy
 * imports lazy, so the unbundled build of the same source (dist/cli/main.js, from tsc) loads
 * the same modules for the same command, where a resolve hook can see them. `--version` is
 * answered by bin/taskq.cjs from package.json before any module loads.
 */
function loadedPackages(args, cwd) {
  if (args.length === 1 && args[0] === "--version") return new Set();
  const hook = `export async function resolve(s, c, n) { const r = await n(s, c); process._rawDebug("LOADED " + r.url); return r; }`;
  const register = `import { register } from "node:module"; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hook)}`)});`;
  const main = join(ROOT, "dist/cli/main.js");
  const result = spawnSync(process.execPath, ["--import", `data:text/javascript,${encodeURIComponent(register)}`, main, ...args], { cwd, encoding: "utf8" });
  const packages = new Set();
  for (const line of result.stderr.split("\n")) {
    const match = /^LOADED file:\/\/.*?\/(node_modules\/(?:@[^/]+\/)?[^/]+|dist\/[^/]+)\//.exec(line);
    if (match) packages.add(match[1].replace("node_modules/", ""));
  }
  return packages;
}

export async function run({ runs = 10 } = {}) {
  const work = scratch("startup");
  try {
    writeFileSync(join(work.dir, "three.yaml"), THREE_TASKS);
    writeFileSync(join(work.dir, "one.yaml"), ONE_TASK);
    const opts = { cwd: work.dir };
    const noCache = { ...BENCH_ENV, TASKQ_CODE_CACHE: "0" };
    const node = (args) => ({ run: () => measure([process.execPath, ...args], opts) });
    const commands = [
      { name: "node -e ''", ...node(["-e", ""]) },
      { name: "taskq --version", target: 1.5, run: () => measure([TASKQ, "--version"], opts) },
      { name: "taskq validate (3 tasks)", target: 2.5, run: () => measure([TASKQ, "validate", "three.yaml"], opts) },
      { name: "taskq run (1 `true` task)", target: 2.5, run: () => measure([TASKQ, "run", "one.yaml", "--output", "plain", "--log-dir", join(work.dir, "logs")], opts) },
      // What the code cache buys: the same two commands compiling the bundle as usual.
      { name: "taskq validate, no code cache", run: () => measure([TASKQ, "validate", "three.yaml"], { ...opts, env: noCache }) },
      {
        name: "taskq run, no code cache",
        run: () => measure([TASKQ, "run", "one.yaml", "--output", "plain", "--log-dir", join(work.dir, "logs")], { ...opts, env: noCache }),
      },
    ];
    log(`startup: ${runs} alternating runs of ${commands.length} commands`);
    const results = await alternate(commands, runs);
    const base = ms(results[0]);
    const targets = [];
    const rows = commands.map((command, i) => {
      const r = results[i];
      if (command.target === undefined) return [command.name, msCell(ms(r)), ratio(ms(r), base), "-", rssCell(r)];
      const x = median(ms(r)) / median(base);
      targets.push({ name: `startup: ${command.name} <= ${command.target}x node`, pass: x <= command.target });
      return [command.name, msCell(ms(r)), ratio(ms(r), base), `<= ${command.target}x ${verdict(x <= command.target)}`, rssCell(r)];
    });

    log("startup: import cost per module");
    const importRuns = Math.max(5, Math.min(runs, 7));
    const loaded = {
      version: loadedPackages(["--version"], work.dir),
      validate: loadedPackages(["validate", "three.yaml"], work.dir),
      run: loadedPackages(["run", "one.yaml", "--output", "plain", "--log-dir", join(work.dir, "logs")], work.dir),
    };
    const onPath = (key) =>
      ["version", "validate", "run"].filter((command) => [...loaded[command]].some((name) => name === key || (key.startsWith("dist/") && name === key))).join(", ") || "none";
    const importRows = MODULES.map(([label, specifier]) => {
      const times = Array.from({ length: importRuns }, () => importCost(specifier));
      const key = specifier.startsWith("file:") ? `dist/${specifier.split("/dist/")[1].split("/")[0]}` : specifier.split("/")[0];
      return [label, msCell(times, 1), onPath(key)];
    });

    const markdown = [
      `Each command ${runs} times, alternating with bare node (plus one warm-up round); median (min-max) wall time of the whole process.`,
      "",
      table(["command", "wall time", "vs node -e ''", "target", "peak RSS"], rows),
      "",
      `Import cost of each module, alone in a fresh process (median of ${importRuns}), and which commands load it (\`taskq run\` with \`--output plain\`):`,
      "",
      table(["module", "import time", "loaded by"], importRows),
    ].join("\n");
    return { title: "Startup", markdown, targets };
  } finally {
    work.remove();
  }
}

if (isMain(import.meta.url)) {
  const result = await run({ runs: numberArg("--runs", 10) });
  process.stdout.write(`${result.markdown}\n`);
}
