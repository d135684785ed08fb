#!/bin/sh
":" //; [ "${MALLOC_TRIM_THRESHOLD_+set}" ] || export MALLOC_TRIM_THRESHOLD_=131072 TASKQ_MALLOC_TRIM=1; true 2>&- 3>&1 || export TASKQ_STDOUT_CLOSED=$$; exec node --v8-pool-size=1 "$0" "$@"
// The line above is for sh (this file is both a shell script and JavaScript): run as an
// executable (`taskq`, npm's bin link), sh execs node on this same file with V8's worker
// pool cut to one thread, which node cannot be told once it runs. Node spawns each task
// with fork(): each thread's mappings (stack, malloc arena) are copied by every fork and torn
// down by every child's exec, and glibc's fork locks and unlocks each arena (writes that
// fault on pages the fork made copy-on-write). With one worker instead of four, 1,000 `true`
// tasks at -j 2 took 1.54 s instead of 1.68 s (medians of 11, alternating). `exec` replaces
// sh: same pid, signals go straight to node. For node, line 2 is a string and a comment.
//
// The line also gives glibc's malloc its default trim threshold (128 KiB), unless the user set
// one, since glibc reads it only as the process starts. Set at all, it stops glibc from
// raising the threshold each time a large block is freed (the bundle's and its cache's reads
// raise it past a megabyte), which leaves that much freed memory in each thread's arena, pages
// that every task's fork copies: taskq ran on with ~2 MB less, and 1,000 `true` tasks at -j 2
// took ~3-5% less time (alternating runs, logs on tmpfs). It is for taskq alone: taskq
// removes it from its environment (below), so its tasks get the environment they were given.
//
// The executable. Loads the bundled CLI (dist/bundle/cli.cjs) with V8's code cache
// (dist/bundle/cli.cjs.cache, written by the build), so V8 does not parse and compile the
// bundle's functions again: Node 20 has no compile cache of its own. A cache from another
// Node version (or other V8 flags) is rejected by V8 and the bundle compiles as usual;
// the cache is then rewritten at exit where the folder is writable. TASKQ_CODE_CACHE=0
// neither reads nor writes it.
"use strict";
const fs = require("node:fs");
const path = require("node:path");

/**
 * The cache file starts with the SHA-1 of the bundle it was made from, then a byte that says
 * whether a `run` wrote it (1), which compiled what `run` needs (see runBundle).
 */
const DIGEST_BYTES = 20;
const HEADER_BYTES = DIGEST_BYTES + 1;

// Set by the line at the top for this process's malloc, which has read it: not for the tasks.
if (process.env.TASKQ_MALLOC_TRIM === "1") {
  delete process.env.MALLOC_TRIM_THRESHOLD_;
  delete process.env.TASKQ_MALLOC_TRIM;
}

// Set by the line at the top when taskq's stdout was closed (`taskq list f.yaml >&-`), which sh
// alone can see (there `true 3>&1` fails: a closed descriptor cannot be copied; 2>&- keeps sh's
// complaint unsaid, with no /dev/null needed): node opens /dev/null in its place, where every write
// succeeds and is lost. A command whose output is what it is for then exits 1, saying so
// (src/cli/stdout-lost.ts). The tasks do not get the variable.
const STDOUT_CLOSED = Symbol.for("taskq.stdoutClosed");
if (process.env.TASKQ_STDOUT_CLOSED !== undefined) {
  // Its value is the pid sh had, which node keeps (exec): one already in the environment (a task's
  // own taskq, a user's export) names another process, and says nothing of this one's stdout.
  if (process.env.TASKQ_STDOUT_CLOSED === String(process.pid)) globalThis[STDOUT_CLOSED] = true;
  delete process.env.TASKQ_STDOUT_CLOSED;
}

const argv = process.argv.slice(2);
// Fast path: `taskq --version` loads nothing but package.json.
if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V")) {
  // As the CLI's main does: a reader gone (EPIPE) is no error; a stdout that cannot be written
  // (a full disk) is one, said in a line, not as an unhandled 'error' event's stack trace.
  process.stdout.on("error", (error) => {
    if (error.code === "EPIPE") return;
    process.stderr.write(`taskq: cannot write to stdout (${error.code ?? error.message})\n`);
    process.exitCode = 1;
  });
  if (globalThis[STDOUT_CLOSED] === true) {
    process.stderr.write("taskq: cannot write to stdout (EBADF: it is closed)\n");
    process.exitCode = 1;
  }
  process.stdout.write(`${JSON.parse(fs.readFileSync(path.join(__dirname, "../package.json"), "utf8")).version}\n`);
} else {
  runBundle(path.join(__dirname, "../dist/bundle/cli.cjs"));
}

function runBundle(file) {
  const vm = require("node:vm");
  const Module = require("node:module");
  let bytes;
  try {
    bytes = fs.readFileSync(file);
  } catch (error) {
    process.stderr.write(`taskq: cannot read ${file} (${error.code ?? error.message}); build it with: npm run build\n`);
    process.exit(1);
  }
  const cacheFile = cacheFileFor(file);
  const useCache = process.env.TASKQ_CODE_CACHE !== "0";
  const cache = useCache ? readCache(cacheFile, file, bytes) : undefined;
  const cachedData = cache?.data;
  // The bundle has no import(): on Node 20, code compiled with a cache loses import()'s callback.
  // The file is the CommonJS wrapper function already, in ASCII (see scripts/bundle-cli.js).
  const script = new vm.Script(bytes.toString("latin1"), { filename: file, cachedData });
  // A cache holds what the process that wrote it compiled. One a `validate` wrote (the first
  // start after a Node upgrade, or under new flags) lacks the engine, the shell handler and the
  // renderer, which every `run` would then compile again (~10% of its start): the next `run`
  // that runs its tasks (exit 0 or 1, not a file's problems, 2) writes it again, with all it
  // compiled, its own and what the cache held, and says so in the cache.
  const running = argv.find((arg) => !arg.startsWith("-")) === "run" && !argv.some((arg) => arg === "--dry-run" || arg === "--help" || arg === "-h");
  const mustWrite = cachedData === undefined || script.cachedDataRejected || Boolean(process.env.TASKQ_WRITE_CODE_CACHE);
  if (useCache && (mustWrite || (running && !cache.byRun))) {
    process.once("exit", (code) => {
      const ranTasks = running && (code === 0 || code === 1);
      if (mustWrite || ranTasks) writeCache(script, file, cacheFile, bytes, ranTasks);
    });
  }
  const module = { exports: {} };
  script.runInThisContext().call(module.exports, module.exports, Module.createRequire(file), module, file, path.dirname(file));
}

/**
 * The cache for this process's node flags. V8 stamps a cache with a hash of its flags and
 * rejects it under others, and a rejected cache is written again at exit. So one run under
 * flags of its own (`NODE_OPTIONS=--max-old-space-size=4096`, `node --expose-gc`) replaced the
 * build's cache with one that every later run rejected in turn, and replaced with what that run
 * alone had compiled: after one `validate` so, every `run` started ~10% slower (63 against 58
 * ms, where node starts in 23), until a run rewrote it again. A process given node flags, in its
 * command line or NODE_OPTIONS (but the line above's --v8-pool-size, which V8 does not see),
 * keeps a cache of its own beside the build's, named by those flags (FNV-1a: no crypto to load).
 */
function cacheFileFor(file) {
  const flags = process.execArgv.filter((arg) => !arg.startsWith("--v8-pool-size")).join("\0");
  const options = (process.env.NODE_OPTIONS ?? "").trim();
  if (flags === "" && options === "") return `${file}.cache`;
  let hash = 0x811c9dc5;
  for (const char of `${flags}\0\0${options}`) hash = Math.imul(hash ^ char.charCodeAt(0), 0x01000193) >>> 0;
  return `${file}.cache-${hash.toString(16).padStart(8, "0")}`;
}

/**
 * V8 checks a cache against the source's length only: a cache of other code of the same
 * length (an edited or half-updated dist/) would run that code's bytecode. So a cache is
 * used when it was written after the bundle (as the build and later runs write it), or else
 * when its SHA-1 of the bundle still matches (npm gives installed files their install time,
 * in no set order; hashing costs ~1.5 ms, once where the cache's time can be updated).
 */
function readCache(cacheFile, file, bytes) {
  let raw;
  try {
    const older = fs.statSync(cacheFile).mtimeMs < fs.statSync(file).mtimeMs;
    raw = fs.readFileSync(cacheFile);
    if (older) {
      if (!raw.subarray(0, DIGEST_BYTES).equals(digest(bytes))) return undefined;
      touch(cacheFile); // the next runs can skip the hash
    }
  } catch {
    return undefined; // no cache yet: compile as usual
  }
  return raw.length > HEADER_BYTES ? { data: raw.subarray(HEADER_BYTES), byRun: raw[DIGEST_BYTES] === 1 } : undefined;
}

function touch(file) {
  try {
    const now = new Date();
    fs.utimesSync(file, now, now);
  } catch {
    // a read-only install hashes every time
  }
}

function digest(bytes) {
  return require("node:crypto").createHash("sha1").update(bytes).digest();
}

/**
 * Written whole or not at all (a temporary file renamed over the old one). The file is
 * opened before the cache is serialized (~10 ms): a read-only install pays one failed open.
 * It gets the bundle's permissions, not the umask's: on a machine users share, a cache that
 * root rewrote under `umask 077` (after a Node upgrade) would be unreadable to every other
 * user of the install, who could not write another, and start without one for good.
 */
function writeCache(script, file, cacheFile, bytes, byRun) {
  const temporary = `${cacheFile}.${process.pid}.tmp`;
  let fd;
  try {
    fd = fs.openSync(temporary, "wx");
  } catch {
    return;
  }
  try {
    fs.fchmodSync(fd, fs.statSync(file).mode & 0o666);
    // V8 stamps the cache with a hash of its flags: a V8 flag the run changed
    // (src/cli/small-heap.ts) goes back first, or every later start would reject the cache.
    globalThis[Symbol.for("taskq.restoreV8Flags")]?.();
    fs.writeFileSync(fd, Buffer.concat([digest(bytes), Buffer.of(byRun ? 1 : 0), script.createCachedData()]));
    fs.closeSync(fd);
    fd = undefined;
    fs.renameSync(temporary, cacheFile);
  } catch {
    try {
      if (fd !== undefined) fs.closeSync(fd);
      fs.rmSync(temporary, { force: true });
    } catch {
      // nothing to clean
    }
  }
}
