// Shared helpers for the CLI benchmarks: timing child processes, peak RSS, medians, tables.
// Plain ESM, no imports from src: every benchmark spawns bin/taskq and its baselines.
import { spawn } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { builtFromSources } from "../scripts/build-inputs.js";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const TASKQ = join(ROOT, "bin/taskq.cjs");
/** GNU time reports a child's peak RSS; without it RSS columns say "n/a". */
export const GNU_TIME = existsSync("/usr/bin/time") ? "/usr/bin/time" : undefined;

/**
 * Exits (2) unless the checkout of each of `bins` (its bin/taskq.cjs) has a dist/ built from the
 * sources it holds now: a benchmark spawns dist/, and one of a build made before a source changed
 * (or before an experiment was reverted) measures code that is in no commit.
 */
export function requireBuilt(...bins) {
  const stale = bins.map((bin) => resolve(dirname(bin), "..")).filter((root) => !builtFromSources(root));
  if (stale.length === 0) return;
  for (const root of stale) console.error(`bench: ${join(root, "dist")} is not built from the sources in ${root} (one changed since its last build, or it was never built): run \`npm run build\` there first`);
  process.exit(2);
}

/**
 * The environment every measured command gets: ours, less what makes every Node process start
 * slower. NODE_EXTRA_CA_CERTS (set on some CI machines, this one included) makes Node read and
 * parse a CA bundle before running anything: ~50-90 ms here, which would hide taskq's own
 * start-up cost inside bare node's. NODE_OPTIONS could change any of the runs.
 */
export const BENCH_ENV = Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== "NODE_EXTRA_CA_CERTS" && name !== "NODE_OPTIONS"));
// taskq is run as users run it, as an executable: bin/taskq.cjs is a shell line that execs
// `node` from PATH (see that file). The node running the benchmarks comes first, so taskq and
// the Node baselines run on the same Node.
BENCH_ENV.PATH = `${dirname(process.execPath)}:${BENCH_ENV.PATH ?? ""}`;

/**
 * A fresh scratch folder; the returned function has it removed when the benchmark process
 * exits, not at once. On ext4 without a journal (these VMs' disks), the inodes of deleted
 * files are passed over for 1-5 minutes when new files are made, so one section removing its
 * thousands of task logs made creating files in the next one's taskq runs slow: 223 us per
 * file before the 10k runs of one full run and 19 us after them, where the raw loop they are
 * measured against creates no file at all (46 us before them once removals waited for the exit).
 */
export function scratch(prefix) {
  const dir = mkdtempSync(join(tmpdir(), `taskq-bench-${prefix}-`));
  return { dir, remove: () => removeAtExit(dir) };
}

const leftToRemove = [];

/** Removes `dir` (recursively) when this process exits. */
function removeAtExit(dir) {
  if (leftToRemove.length === 0) process.once("exit", () => leftToRemove.forEach((folder) => rmSync(folder, { recursive: true, force: true })));
  leftToRemove.push(dir);
}

/**
 * Runs one command and resolves with its wall time (ms) and, when `rss` is set and
 * GNU time exists, its peak RSS (KiB). stdout goes to `stdout` (a path) or /dev/null.
 * Rejects on a non-zero exit unless `allowFail`.
 */
export function measure(argv, { cwd = ROOT, env = BENCH_ENV, rss = true, stdout, allowFail = false } = {}) {
  const rssFile = rss && GNU_TIME ? join(tmpdir(), `taskq-bench-rss-${process.pid}-${Math.random().toString(36).slice(2)}`) : undefined;
  const full = rssFile ? [GNU_TIME, "-f", "%U %S %M", "-o", rssFile, ...argv] : argv;
  return new Promise((resolvePromise, reject) => {
    const out = stdout === undefined ? "ignore" : "pipe";
    const start = performance.now();
    const child = spawn(full[0], full.slice(1), { cwd, env, stdio: ["ignore", out, "pipe"] });
    let stderr = "";
    const chunks = [];
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.stdout?.on("data", (chunk) => chunks.push(chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      const ms = performance.now() - start;
      let rssKb;
      /** CPU time (user + system) of the command and the children it waited for, from GNU time: steadier than wall time on a busy machine. */
      let cpuMs;
      if (rssFile) {
        try {
          const [user, system, rss] = readFileSync(rssFile, "utf8").trim().split("\n").pop().split(" ").map(Number);
          rssKb = rss;
          cpuMs = (user + system) * 1000;
          rmSync(rssFile, { force: true });
        } catch {
          rssKb = undefined;
        }
      }
      if (code !== 0 && !allowFail) reject(new Error(`${argv.join(" ")} exited with ${code}: ${stderr.slice(-2000)}`));
      else resolvePromise({ ms, rssKb, cpuMs, code, stderr, stdout: stdout === undefined ? "" : Buffer.concat(chunks).toString("utf8") });
    });
  });
}

/**
 * Runs every command `runs` times, alternating between them (A B C A B C ...), so
 * background load hits each alike. Returns one list of results per command.
 */
export async function alternate(commands, runs, { warmup = 1 } = {}) {
  for (let w = 0; w < warmup; w++) for (const command of commands) await command.run();
  const results = commands.map(() => []);
  for (let r = 0; r < runs; r++) {
    for (const [i, command] of commands.entries()) results[i].push(await command.run());
  }
  return results;
}

/**
 * An A/B of this build against `other` (another checkout's bin/taskq.cjs; check both with
 * requireBuilt first): `runOne(bin, name, round)` (a measure() result) `rounds` times for each,
 * alternating, the order flipped each round so that neither always goes first. Returns each
 * build's results by name ("this", "other").
 */
export async function abRounds(other, rounds, runOne) {
  const builds = [
    ["this", TASKQ],
    ["other", other],
  ];
  const results = new Map(builds.map(([name]) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const [name, bin] of round % 2 === 0 ? builds : [...builds].reverse()) results.get(name).push(await runOne(bin, name, round));
  }
  return results;
}

/** abRounds' results, a line each: median wall time (min-max), the ratio to the other build's, and the peak RSS where it was measured. */
export function printAB(results) {
  const base = median(ms(results.get("other")));
  const cpuOf = (runs) => runs.map((r) => r.cpuMs).filter((cpu) => cpu !== undefined && Number.isFinite(cpu));
  const cpuBase = median(cpuOf(results.get("other")));
  for (const [name, runs] of results) {
    const times = ms(runs);
    const rss = runs.some((r) => r.rssKb !== undefined) ? `  peak RSS ${(Math.max(...runs.map((r) => r.rssKb ?? 0)) / 1024).toFixed(0)} MiB` : "";
    // CPU time (taskq's and its tasks'): on a shared, noisy machine the steadier of the two.
    const cpus = cpuOf(runs);
    const cpu = cpus.length === runs.length ? `  CPU ${median(cpus).toFixed(0)} ms, ${(median(cpus) / cpuBase).toFixed(3)}x` : "";
    console.log(`${name.padEnd(6)} ${median(times).toFixed(0).padStart(6)} ms (${Math.min(...times).toFixed(0)}-${Math.max(...times).toFixed(0)})  ${(median(times) / base).toFixed(3)}x of other${rss}${cpu}`);
  }
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function quantile(values, q) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/** "123 ms (110-140)" from a list of milliseconds. */
export function msCell(values, digits = 0) {
  const f = (x) => x.toFixed(digits);
  return `${f(median(values))} ms (${f(Math.min(...values))}-${f(Math.max(...values))})`;
}

/** Peak RSS over runs, in MiB. */
export function rssCell(results) {
  const values = results.map((r) => r.rssKb).filter((x) => typeof x === "number" && x > 0);
  if (values.length === 0) return "n/a";
  return `${Math.round(median(values) / 1024)} MiB (max ${Math.round(Math.max(...values) / 1024)})`;
}

export function ratio(a, b) {
  return `${(median(a) / median(b)).toFixed(2)}x`;
}

/** Target verdict: "ok" or "MISSED". */
export function verdict(pass) {
  return pass ? "ok" : "**MISSED**";
}

export function table(header, rows) {
  return [`| ${header.join(" | ")} |`, `|${header.map(() => "---").join("|")}|`, ...rows.map((row) => `| ${row.join(" | ")} |`)].join("\n");
}

export const ms = (results) => results.map((r) => r.ms);

export function log(text) {
  process.stderr.write(`${text}\n`);
}

/** True when the module at `url` (its import.meta.url) is the script node was started with. */
export function isMain(url) {
  return url === pathToFileURL(process.argv[1]).href;
}

/** The number after `name` on the command line (`--runs 7`), or `fallback`. */
export function numberArg(name, fallback) {
  const at = process.argv.indexOf(name);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
}

/** Microseconds to create (and close) one empty file in `dir`: the part of a task's cost that is the filesystem's. */
export function fileCreationMicros(dir, count = 300) {
  const folder = mkdtempSync(join(dir, "create-"));
  // Kept until exit, as scratch folders are: removed now, its files would slow the creates after it.
  removeAtExit(folder);
  const start = performance.now();
  for (let i = 0; i < count; i++) closeSync(openSync(join(folder, `${i}.log`), "w"));
  return ((performance.now() - start) * 1000) / count;
}
