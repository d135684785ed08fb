import { mkdirSync, statSync, type Stats } from "node:fs";
import path from "node:path";

/**
 * `mkdir -p`: makes `dir` and every folder missing above it; a folder that is already
 * there is fine. Node 20's `mkdirSync(dir, { recursive: true })` never returns where mkdir
 * answers ENOENT under a folder that exists (in /proc, say): it goes up, finds the parent,
 * and tries the child again, forever, at full CPU. This goes up once, then makes each
 * missing folder in turn; the first error is thrown (ENOENT, EACCES, ENOTDIR...).
 */
export function makeDirectory(dir: string): void {
  const missing: string[] = [];
  for (let current = path.resolve(dir); ; current = path.dirname(current)) {
    const stats = statIfThere(current);
    if (stats !== undefined) {
      if (!stats.isDirectory()) throw Object.assign(new Error(`ENOTDIR: not a folder: ${current}`), { code: "ENOTDIR", path: current });
      break;
    }
    missing.push(current);
    if (path.dirname(current) === current) break; // the root is missing: mkdir will say why
  }
  for (const folder of missing.reverse()) {
    try {
      mkdirSync(folder);
    } catch (error) {
      // Made meanwhile by someone else (another worker with the same log folder): fine.
      if ((error as NodeJS.ErrnoException).code === "EEXIST" && statIfThere(folder)?.isDirectory() === true) continue;
      throw error;
    }
  }
}

/** The folder's stats, or undefined where nothing is (ENOENT); other errors (ENOTDIR, EACCES) are thrown. */
function statIfThere(file: string): Stats | undefined {
  try {
    return statSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}
