import { lstatSync, readFileSync, readlinkSync, realpathSync, statSync } from "node:fs";
import path from "node:path";
import { systemWords } from "../system-words.js";

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
    // `--log-dir /proc/x`: mkdir in /proc answers ENOENT, "no such file or directory", of the folder it was asked to make;
    // in /sys EPERM, "operation not permitted", which left the user looking for a permission to change.
    const made = (code === "ENOENT" || code === "EPERM") && (error as NodeJS.ErrnoException).syscall === "mkdir" ? notMadeInKernelFiles(folder) : undefined;
    if (made !== undefined) return `${made} (${code}): give --log-dir a folder elsewhere`;
    words = explain(code, folder) ?? WORDS[code] ?? systemWords(error);
  } catch {
    // the code alone, then
  }
  return words === undefined ? code : `${words} (${code})`;
}

/** Why `folder` cannot be made where the folder above it is on a file system whose entries the kernel alone makes (/proc, /sys), or undefined. */
function notMadeInKernelFiles(folder: string): string | undefined {
  if (currentFolderGone()) return undefined;
  const there = deepestThere(folder);
  const kind = there === undefined || !statSync(there).isDirectory() ? undefined : fileSystemOf(there);
  if (there === undefined || kind === undefined || !KERNEL_FILE_SYSTEMS.has(kind)) return undefined;
  const made = path.join(there, path.relative(there, path.resolve(folder)).split(path.sep)[0]!);
  return `${made} cannot be made in ${there}, a ${kind} file system, whose entries only the kernel makes`;
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

/** File systems whose entries the kernel alone makes: mkdir in them fails, with ENOENT in /proc, EPERM in /sys. */
const KERNEL_FILE_SYSTEMS = new Set(["proc", "sysfs", "devpts", "debugfs", "tracefs", "securityfs", "pstore", "efivarfs", "binfmt_misc", "bpf"]);

/** The type of the file system `folder` is on (`proc`, `ext4`), from /proc/self/mountinfo; undefined where that cannot be read. */
function fileSystemOf(folder: string): string | undefined {
  let mounts: string;
  try {
    mounts = readFileSync("/proc/self/mountinfo", "utf8");
  } catch {
    return undefined;
  }
  const real = realpathSync(folder);
  let best: { point: string; type: string } | undefined;
  for (const line of mounts.split("\n")) {
    // `21 26 0:20 / /proc rw,relatime - proc proc rw`: the mount point is the 5th field, the type the 1st after " - ".
    const [before, after] = line.split(" - ");
    const point = before?.split(" ")[4]?.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
    const type = after?.split(" ")[0];
    if (point === undefined || type === undefined) continue;
    const holds = real === point || real.startsWith(point === "/" ? "/" : `${point}/`);
    if (holds && (best === undefined || point.length >= best.point.length)) best = { point, type };
  }
  return best?.type;
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

