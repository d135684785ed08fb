import { mkdirSync } from "node:fs";
import path from "node:path";
import { TaskqError } from "../errors.js";
import { makeDirectory } from "../make-directory.js";
import { folderProblem } from "./folder-problem.js";
import { withFullPath } from "./full-path.js";

/** Run ids tried before giving up: each taken one means another run started in the same second. */
const ATTEMPTS = 32;
const SUFFIX_IDS = 36 ** 4;

export interface RunFolder {
  runId: string;
  logDir: string;
}

/**
 * Makes `<logRoot>/<runId>`, a folder no other run has: runs started in the same second
 * (a CI matrix sharing one log root) differ in the id's four random characters, and a
 * folder that is there already (the same four) is never shared: another id is tried.
 * Synchronous, as the log files are: no thread-pool round trip before the first task.
 */
export function createRunFolder(logRoot: string, now: number, random: () => number = Math.random): RunFolder {
  let runId = makeRunId(now, random);
  let logDir = path.join(logRoot, runId);
  try {
    makeDirectory(logRoot);
    for (let attempt = 1; ; attempt++) {
      try {
        mkdirSync(logDir);
        return { runId, logDir };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        if (attempt === ATTEMPTS) throw new TaskqError("LOG_DIR", `cannot create the log folder ${logDir}: it is there, as were the ${ATTEMPTS - 1} tried before it (EEXIST)`, { cause: error, exitCode: 1 });
      }
      runId = makeRunId(now, random);
      logDir = path.join(logRoot, runId);
    }
  } catch (error) {
    if (error instanceof TaskqError) throw error;
    throw new TaskqError("LOG_DIR", `cannot create the log folder ${withFullPath(logDir)}: ${folderProblem(error, logDir)}`, { cause: error, exitCode: 1 });
  }
}

/** 20261130-074512-a3f9: sortable, readable, always four random characters. */
export function makeRunId(now: number, random: () => number = Math.random): string {
  const iso = new Date(now).toISOString();
  const stamp = `${iso.slice(0, 10).replaceAll("-", "")}-${iso.slice(11, 19).replaceAll(":", "")}`;
  const suffix = Math.min(Math.floor(random() * SUFFIX_IDS), SUFFIX_IDS - 1);
  return `${stamp}-${suffix.toString(36).padStart(4, "0")}`;
}
