#!/usr/bin/env node
// The executable. Loads the bundled CLI (dist/bundle/cli.cjs) with V8's code cache
// (dist/bundle/cli.cjs.cache, written by the build), so V8 does not parse and compile the
// bundle's functions again: Node 20 has no compile cache of its own. A cache from another
// Node version (or other V8 flags) is rejected by V8 and the bundle compiles as usual;
// the cache is then rewritten at exit where the folder is writable. TASKQ_CODE_CACHE=0
// neither reads nor writes it.
"use strict";
const fs = require("node:fs");
const path = require("node:path");

const argv = process.argv.slice(2);
// Fast path: `taskq --version` loads nothing but package.json.
if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V")) {
  process.stdout.write(`${JSON.parse(fs.readFileSync(path.join(__dirname, "../package.json"), "utf8")).version}\n`);
} else {
  runBundle(path.join(__dirname, "../dist/bundle/cli.cjs"));
}

function runBundle(file) {
  const vm = require("node:vm");
  const Module = require("node:module");
  let source;
  try {
    source = fs.readFileSync(file, "utf8");
  } catch (error) {
    process.stderr.write(`taskq: cannot read ${file} (${error.code ?? error.message}); build it with: npm run build\n`);
    process.exit(1);
  }
  const cacheFile = `${file}.cache`;
  const useCache = process.env.TASKQ_CODE_CACHE !== "0";
  let cachedData;
  try {
    // V8 checks a cache against the source's length only: one older than the bundle (an
    // edited or half-updated dist/) could belong to other code of the same length. Not used.
    if (useCache && fs.statSync(cacheFile).mtimeMs >= fs.statSync(file).mtimeMs) cachedData = fs.readFileSync(cacheFile);
  } catch {
    // no cache yet: compile as usual
  }
  // The bundle has no import(): on Node 20, code compiled with a cache loses import()'s callback.
  const script = new vm.Script(Module.wrap(source), { filename: file, cachedData });
  if (useCache && (cachedData === undefined || script.cachedDataRejected || process.env.TASKQ_WRITE_CODE_CACHE)) {
    process.once("exit", () => writeCache(script, cacheFile));
  }
  const module = { exports: {} };
  script.runInThisContext().call(module.exports, module.exports, Module.createRequire(file), module, file, path.dirname(file));
}

/**
 * Written whole or not at all (a temporary file renamed over the old one). The file is
 * opened before the cache is serialized (~10 ms): a read-only install pays one failed open.
 */
function writeCache(script, cacheFile) {
  const temporary = `${cacheFile}.${process.pid}.tmp`;
  let fd;
  try {
    fd = fs.openSync(temporary, "wx");
  } catch {
    return;
  }
  try {
    fs.writeFileSync(fd, script.createCachedData());
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
