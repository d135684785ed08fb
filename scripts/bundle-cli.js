// Bundles the CLI (run by `npm run build`, after tsc) and writes its V8 code cache.
//
// Why: Node 20 has no compile cache of its own, and resolving, reading and compiling the
// JavaScript of commander, yaml, zod and taskq was most of `taskq validate`'s and
// `taskq run`'s start-up. So:
// - dist/bundle/cli.cjs is the whole CLI in one CommonJS file. Modules that the source
//   imports dynamically stay lazy: esbuild wraps each in an init function, run on first use.
//   CommonJS because only a classic script can be compiled with a code cache on Node 20
//   (vm.Script's cachedData); ES modules cannot.
// - dist/bundle/cli.cjs.cache is V8's code cache for it, taken after a training run of a
//   small workflow, so it holds the bytecode of every function a run uses: bin/taskq.cjs
//   loads the bundle with it, and V8 skips parsing and compiling them.
// - dist/bundle/load-worker.js is the thread that parses large workflow files (ESM).
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { build } from "esbuild";

// Start clean so old files do not pile up.
rmSync("dist/bundle", { recursive: true, force: true });

/**
 * zod re-exports every one of its ~60 locales through `z.locales`; taskq writes its own
 * messages and never reads them. Serve zod's locale index with English only, in case a
 * bundle keeps the namespace.
 */
const englishOnlyZodLocales = {
  name: "english-only-zod-locales",
  setup(builder) {
    builder.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      // Relative to the project: an absolute path would be written into the bundle (its module's name), so a build elsewhere would differ.
      /[\\/]zod[\\/]v4[\\/](classic|core|mini)[\\/]/.test(args.importer) ? { path: relative(process.cwd(), args.importer), namespace: "zod-locales" } : undefined,
    );
    builder.onLoad({ filter: /.*/, namespace: "zod-locales" }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(`./${join(dirname(args.path), "../locales/en.js")}`)};`,
      resolveDir: ".",
    }));
  },
};

/**
 * ora counts the rows of each frame of the live board with string-width, whose first look at a
 * character outside ASCII (the spinner's) compiles its emoji pattern: 0.1-0.6 s of CPU before the
 * first frame. It gets src/cli/render/text-width.ts instead, which counts the board's own
 * symbols as one column each and asks string-width about anything else.
 */
const boardTextWidth = {
  name: "board-text-width",
  setup(builder) {
    builder.onResolve({ filter: /^string-width$/ }, (args) =>
      /[\\/]node_modules[\\/]ora[\\/]/.test(args.importer) ? { path: join(process.cwd(), "src/cli/render/text-width.ts") } : undefined,
    );
  },
};

const common = {
  bundle: true,
  platform: "node",
  target: "node20",
  sourcemap: true,
  logLevel: "warning",
  // Whitespace and syntax minified (names kept, lines of at most ~200 characters, so an error's
  // source line stays readable): V8 keeps the bundle's source for the whole run, and every
  // task's fork copies the pages it is in. 1.33 MB became 0.89 MB, and 1,000 `true` tasks at
  // -j 2 took 0.7-6.3% less time (mean 3.8%, four A/B passes of 20 alternating runs).
  minifyWhitespace: true,
  minifySyntax: true,
  lineLimit: 200,
  plugins: [englishOnlyZodLocales, boardTextWidth],
};

await build({
  ...common,
  entryPoints: ["src/cli/main.ts"],
  outfile: "dist/bundle/cli.cjs",
  format: "cjs",
  // The durable mode's client and metrics (CommonJS), required from node_modules when a
  // durable command needs them. Everything else is in the bundle: code compiled with a
  // cache cannot use import() on Node 20 (the callback is lost with the cache).
  external: ["pg", "prom-client"],
  // The source is ESM: its import.meta.url becomes the bundle's own file URL.
  define: { "import.meta.url": "__taskqBundleUrl" },
  // The file is the function CommonJS would wrap it in (as Module.wrap does), so bin/taskq.cjs
  // compiles the file's text as it is: wrapping it there made a second 0.9 MB copy of the
  // source, kept on the heap until a full garbage collection (see ASCII below).
  banner: { js: "(function (exports, require, module, __filename, __dirname) { const __taskqBundleUrl = require('node:url').pathToFileURL(__filename).href;" },
  footer: { js: "});" },
});

// bin/taskq.cjs compiles the bundle with a code cache, which on Node 20 loses import()'s
// callback: every dynamic import must have become a require() or a bundled init function.
const bundled = readFileSync("dist/bundle/cli.cjs", "utf8");
const dynamicImport = /\bimport\(/.exec(bundled);
if (dynamicImport) throw new Error("dist/bundle/cli.cjs calls import(): bundle the module or require() it");
// ASCII: V8 keeps the bundle's source for the whole run, as one byte per character only when
// every character fits in one (else two per character: 1.9 instead of 0.9 MB of heap, which
// every task's fork copies the page tables of). esbuild escapes strings and names; what is
// left is in comments and regular expressions, where \uXXXX means the same character.
if (/[^\x00-\x7f]/.test(bundled)) {
  const ascii = bundled.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  writeFileSync("dist/bundle/cli.cjs", ascii);
}

await build({
  ...common,
  entryPoints: ["src/cli/load-worker.ts"],
  outfile: "dist/bundle/load-worker.js",
  format: "esm",
  // Bundled CommonJS (none today, but yaml's and zod's builds may change) may call require().
  banner: { js: "import { createRequire as __taskqRequire } from 'node:module'; const require = __taskqRequire(import.meta.url);" },
});

/**
 * The training run: `taskq run` of a small workflow (validate, plan, run, log, summary) with
 * TASKQ_WRITE_CODE_CACHE set, so bin/taskq.cjs writes the cache when the process exits.
 * The workflow passes through both readers: the fast one reads most of it (block and flow
 * collections, quoted and plain scalars) and gives up at the anchor on its last lines, so
 * yaml's parser and composer run too, and both are in the cache.
 */
const work = mkdtempSync(join(tmpdir(), "taskq-build-"));
try {
  const workflow = join(work, "train.yaml");
  writeFileSync(
    workflow,
    [
      "tasks:",
      '  a: { run: "echo a", env: { A: \'1\' } }',
      '  b: { run: "echo b >&2", dependsOn: a, retries: 1, timeout: 10s }',
      "  c:",
      "    run: echo c # comment",
      "    dependsOn:",
      "      - a",
      "      - b",
      "    env: &e { B: '2' }",
      "  d: { run: 'true', dependsOn: [c], env: *e }",
      "",
    ].join("\n"),
  );
  const env = { ...process.env, TASKQ_WRITE_CODE_CACHE: "1" };
  delete env.NODE_OPTIONS;
  execFileSync(process.execPath, ["bin/taskq.cjs", "run", workflow, "--output", "plain", "--log-dir", join(work, "logs")], { env, stdio: "ignore" });
} finally {
  rmSync(work, { recursive: true, force: true });
}
