import { randomBytes } from "node:crypto";
import { hostname } from "node:os";

/** A worker id as taskq makes it: `<host>-<pid>-<6 hex digits>`; the host may hold `-` itself, the other two never do. */
const WORKER_ID = /^(.+)-([1-9]\d*)-[0-9a-f]{6}$/;

/** A new worker id: this machine's host name, this process's id and a random suffix (a pid is reused over time). */
export function newWorkerId(): string {
  return `${hostname()}-${process.pid}-${randomBytes(3).toString("hex")}`;
}

/**
 * The host and process of a worker id taskq made, read from its end (a host name such as `ci-7` holds
 * `-` too); undefined for an id made otherwise (a library user's own).
 */
export function workerHostAndPid(workerId: string): { host: string; pid: number } | undefined {
  const match = WORKER_ID.exec(workerId);
  if (match === null) return undefined;
  return { host: match[1]!, pid: Number(match[2]) };
}
