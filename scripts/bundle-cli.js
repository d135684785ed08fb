// Bundles the CLI into a few files under dist/bundle/ (run by `npm run build`, after tsc).
// Why: Node 20 has no compile cache, and resolving and loading the ~250 small files of
// commander, yaml and zod is most of `taskq validate`'s start-up; one bundle loads in a
// fraction of that. Dynamic imports stay lazy: each becomes its own chunk.
import { rmSync } from "node:fs";
import { build } from "esbuild";

// Chunk names carry content hashes: start clean so old chunks do not pile up.
rmSync("dist/bundle", { recursive: true, force: true });

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
});
