// Bundles the CLI into a few files under dist/bundle/ (run by `npm run build`, after tsc).
// Why: Node 20 has no compile cache, and resolving and loading the ~250 small files of
// commander, yaml and zod is most of `taskq validate`'s start-up; one bundle loads in a
// fraction of that. Dynamic imports stay lazy: each becomes its own chunk.
import { rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { build } from "esbuild";

// Chunk names carry content hashes: start clean so old chunks do not pile up.
rmSync("dist/bundle", { recursive: true, force: true });

/**
 * zod re-exports every one of its ~60 locales through `z.locales`; taskq writes its own
 * messages and never reads them, yet a bundle of `z` keeps them all. Serve zod's locale
 * index with English only: a third of the bundle less to read and compile at start-up.
 */
const englishOnlyZodLocales = {
  name: "english-only-zod-locales",
  setup(builder) {
    builder.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]v4[\\/](classic|core)[\\/]/.test(args.importer) ? { path: args.importer, namespace: "zod-locales" } : undefined,
    );
    builder.onLoad({ filter: /.*/, namespace: "zod-locales" }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(join(dirname(args.path), "../locales/en.js"))};`,
      resolveDir: ".",
    }));
  },
};

await build({
  entryPoints: ["src/cli/main.ts", "src/cli/load-worker.ts"],
  outdir: "dist/bundle",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  sourcemap: true,
  // Loaded only by the commands that need them, from node_modules as usual.
  external: ["pg", "prom-client", "ora", "chalk"],
  // Bundled CommonJS (commander) calls require() for Node's built-ins.
  banner: { js: "import { createRequire as __taskqRequire } from 'node:module'; const require = __taskqRequire(import.meta.url);" },
  logLevel: "warning",
  plugins: [englishOnlyZodLocales],
});
