import { mkdir as mkdirCallback, readdir as readdirCallback, readFile as readFileCallback, stat as statCallback } from "node:fs";
import { promisify } from "node:util";

/*
 * The fs calls of the start-up path, as promises over the callback API: loading
 * node:fs/promises costs ~1.6 ms (it pulls in readline), a few percent of `taskq validate`.
 */
export const stat = promisify(statCallback);
export const readFile = promisify(readFileCallback);
export const readdir = promisify(readdirCallback);
export const mkdir = promisify(mkdirCallback);
