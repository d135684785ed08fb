// What a build of dist/ was made from: a digest of its inputs, written by `npm run build` (see
// prepare.js) and read back by `prepare`, which skips a build that would change nothing, and by
// the benchmarks, which refuse to measure a dist/ that is not built from the checkout's sources.
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

export const RECORD = "dist/.build-inputs";
const INPUT_FOLDERS = ["src", "scripts"];
const INPUT_FILES = ["package.json", "package-lock.json", "tsconfig.json", "tsconfig.build.json", "node_modules/.package-lock.json"];
const OUTPUTS = ["dist/index.js", "dist/bundle/cli.cjs", "dist/bundle/cli.cjs.cache", "dist/bundle/load-worker.js"];

/** SHA-256 of every input's path (relative to `root`) and bytes (a missing file counts as missing), and of Node's version. */
export function inputsDigest(root = ".") {
  const hash = createHash("sha256").update(`${process.version}\0`);
  const files = [...INPUT_FOLDERS.flatMap((folder) => filesUnder(root, folder)), ...INPUT_FILES];
  for (const file of files.sort()) {
    hash.update(`${file}\0`);
    const full = join(root, file);
    hash.update(existsSync(full) ? readFileSync(full) : "\0missing\0");
  }
  return hash.digest("hex");
}

/** Whether every output of the build is in `root`'s dist/ and its record matches the inputs there now. */
export function builtFromSources(root = ".") {
  const record = join(root, RECORD);
  return existsSync(record) && OUTPUTS.every((file) => existsSync(join(root, file))) && readFileSync(record, "utf8").trim() === inputsDigest(root);
}

function filesUnder(root, folder) {
  const base = join(root, folder);
  return readdirSync(base, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(folder, relative(base, join(entry.parentPath ?? entry.path, entry.name))));
}
