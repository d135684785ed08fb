import { lstatSync, readlinkSync, statSync } from "node:fs";
import path from "node:path";
import { getSystemErrorMap } from "node:util";

/** Words for the errors a folder's creation meets most, where the system's are terse or misleading. */
const WORDS: Record<string, string> = {
  EROFS: "the file system is read-only",
  EACCES: "permission denied",
  EPERM: "not permitted",
  ENOSPC: "no space left on the device",
  EDQUOT: "the disk quota is used up",
  ELOOP: "too many symbolic links (a loop?)",
  ENAMETOOLONG: "the name is too long",
  ENOTDIR: "a part of the path is not a folder",
};

/**
 * Why `folder` could not be made or written, in words, with the code last: "the file system
 * is read-only (EROFS)". Looks at the path where the code alone would mislead: EEXIST from
 * a dangling symbolic link ("exists" where nothing does), ENOENT where the current folder is
 * gone (a relative path then starts nowhere), ENOTDIR with the file in the way. Never throws.
 */
export function folderProblem(error: unknown, folder: string): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code ?? "error";
  let words: string | undefined;
  try {
    words = explain(code, folder) ?? WORDS[code] ?? systemWords(error);
  } catch {
    // the code alone, then
  }
  return words === undefined ? code : `${words} (${code})`;
}

function explain(code: string, folder: string): string | undefined {
  if (code === "ENOENT" && currentFolderGone()) return "the current folder no longer exists";
  if (code === "EEXIST") {
    const link = danglingLink(folder);
    if (link !== undefined) return `${link} is a symbolic link to ${readlinkSync(link)}, which does not exist`;
  }
  if (code === "ENOTDIR") {
    const file = deepestThere(folder);
    if (file !== undefined && !statSync(file).isDirectory()) return `${file} is not a folder`;
  }
  return undefined;
}

/** Whether this process's current folder was deleted: a relative path then leads nowhere. */
function currentFolderGone(): boolean {
  try {
    process.cwd(); // throws (uv_cwd) once it is gone, unless Node asked before
    return statSync(".").nlink === 0;
  } catch {
    return true;
  }
}

/** The deepest of `folder` and the folders above it that is there (following links). */
function deepestThere(folder: string): string | undefined {
  for (let current = path.resolve(folder); ; current = path.dirname(current)) {
    try {
      statSync(current);
      return current;
    } catch {
      if (path.dirname(current) === current) return undefined;
    }
  }
}

/** The symbolic link on `folder`'s path (itself included) that leads nowhere, or undefined. */
function danglingLink(folder: string): string | undefined {
  for (let current = path.resolve(folder); path.dirname(current) !== current; current = path.dirname(current)) {
    let isLink: boolean;
    try {
      isLink = lstatSync(current).isSymbolicLink();
    } catch {
      continue; // not there: one above may be the link
    }
    if (!isLink) continue;
    try {
      statSync(current);
    } catch {
      return current;
    }
  }
  return undefined;
}

/** The system's words for the error's errno ("no such file or directory"), if it has one. */
function systemWords(error: unknown): string | undefined {
  const errno = (error as NodeJS.ErrnoException | undefined)?.errno;
  return typeof errno === "number" ? getSystemErrorMap().get(errno)?.[1] : undefined;
}
