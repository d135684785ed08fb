import { access as accessCallback, readdir as readdirCallback, readFile as readFileCallback, stat as statCallback } from "node:fs";
import { promisify } from "node:util";

/*
 * The few asynchronous fs calls of a run, as promises over the callback API: loading
 * node:fs/promises costs ~1.6 ms (it pulls in readline), a few percent of `taskq validate`.
 */
export const stat = promisify(statCallback);
export const access = promisify(accessCallback);
export const readFile = promisify(readFileCallback);
export const readdir = promisify(readdirCallback);
