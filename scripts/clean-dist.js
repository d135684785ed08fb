// The first step of `npm run build`: removes dist/, which tsc and the bundler then write whole.
//
// Why: tsc writes what the sources hold now and deletes nothing, so a module removed or renamed
// in src/ stayed in dist/ as the last build left it; under dist/engine (which `npm pack` ships
// whole, as the library), that stale copy went into the package, loaded by nothing.
import { rmSync } from "node:fs";

rmSync("dist", { recursive: true, force: true });
