// The build of a checkout by `npm install` (package.json's `prepare`), skipped when dist/ was
// built from these very sources; and, run with --record at the end of `npm run build`, the
// record of what it was built from.
//
// Why: `npx taskq` in a checkout of taskq installs the checkout itself into npm's npx cache,
// to link its bin there, and that install runs `prepare` again. The README's first command,
// `npm install && npx taskq run workflows/demo.yaml`, built taskq twice: the second time
// silently, for 7-8 s, before the demo started. Now the build writes a digest of its inputs
// (the sources, the build's scripts and settings, the installed packages, which it bundles,
// and the Node version, whose V8 the code cache is for) to dist/.build-inputs, and `prepare`
// builds only when they differ or an output is missing. `npm run build` always builds.
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { builtFromSources, inputsDigest, RECORD } from "./build-inputs.js";

if (process.argv[2] === "--record") {
  writeFileSync(RECORD, `${inputsDigest()}\n`);
} else {
  if (builtFromSources()) {
    process.stderr.write("taskq: dist/ is built from these sources already; `npm run build` builds it again\n");
  } else {
    // npm's own script when npm runs this one (no second lookup of npm on the PATH).
    const npm = process.env.npm_execpath;
    const [command, args] = npm?.endsWith(".js") || npm?.endsWith(".cjs") ? [process.execPath, [npm]] : ["npm", []];
    try {
      execFileSync(command, [...args, "run", "build"], { stdio: "inherit" });
    } catch (error) {
      process.exit(typeof error.status === "number" ? error.status : 1);
    }
  }
}
