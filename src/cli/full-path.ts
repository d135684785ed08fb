import path from "node:path";

/**
 * A folder by its full path, for what taskq says and holds: a relative one says nothing of
 * where it is to someone reading a worker's journal or an error, and a task may delete the
 * folder taskq was started in, where a relative path then leads nowhere (path.resolve: Node
 * keeps the current folder it was told at start).
 */
export function fullPath(folder: string): string {
  try {
    return path.resolve(folder);
  } catch {
    return folder; // the current folder was gone before Node was told it (uv_cwd): no full path to be had
  }
}

/** A folder as given, with its full path after it when it was relative: `.taskq/logs (/srv/ci/.taskq/logs)`. */
export function withFullPath(folder: string): string {
  const full = fullPath(folder);
  return full === folder || path.isAbsolute(folder) ? folder : `${folder} (${full})`;
}
