import { readFileSync } from "node:fs";
import { endianness } from "node:os";

/** The auxiliary vector's entry for the page size (AT_PAGESZ, <elf.h>). */
const AT_PAGESZ = 6n;

let cached: number | undefined;

/**
 * The most bytes, its terminating NUL included, that one argument or one environment variable
 * of a process may hold: Linux's MAX_ARG_STRLEN, 32 pages, which is 128 KiB on 4 KiB pages and
 * more where pages are larger (2 MiB on an arm64 kernel with 64 KiB pages). A longer one makes
 * every exec fail with E2BIG, so a task with it could never start. Infinity elsewhere than
 * Linux (no such limit); 128 KiB, the least it can be, where the page size cannot be read.
 */
export function oneArgumentMax(): number {
  cached ??= process.platform === "linux" ? 32 * (pageSize() ?? 4096) : Number.POSITIVE_INFINITY;
  return cached;
}

/** The page size from /proc/self/auxv: pairs of native words (type, value), ending with type 0. */
function pageSize(): number | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync("/proc/self/auxv");
  } catch {
    return undefined;
  }
  const wide = process.arch.endsWith("64") || process.arch === "s390x";
  const word = wide ? 8 : 4;
  const read = (offset: number): bigint => {
    if (wide) return endianness() === "LE" ? bytes.readBigUInt64LE(offset) : bytes.readBigUInt64BE(offset);
    return BigInt(endianness() === "LE" ? bytes.readUInt32LE(offset) : bytes.readUInt32BE(offset));
  };
  for (let offset = 0; offset + 2 * word <= bytes.length; offset += 2 * word) {
    const type = read(offset);
    if (type === 0n) break;
    if (type === AT_PAGESZ) {
      const size = Number(read(offset + word));
      return size >= 4096 ? size : undefined;
    }
  }
  return undefined;
}

/**
 * Why a process could never be given `text` as one argument (`kind` "argument") or, after its
 * name and `=`, as one variable (`kind` "variable"): a message to follow a field label
 * (`run`, `env.A`), to which the caller adds what follows; undefined when it fits.
 */
export function tooLongToStart(text: string, kind: "argument" | "variable", name = ""): string | undefined {
  const limit = oneArgumentMax();
  // At least one byte per UTF-16 unit and at most three: most texts are judged without counting.
  const extra = kind === "variable" ? name.length + 2 : 1; // `NAME=` and the NUL, or the NUL
  if (text.length * 3 + extra <= limit) return undefined;
  const bytes = Buffer.byteLength(text);
  if (bytes + extra <= limit) return undefined;
  const holds = kind === "argument" ? "with an argument" : "with a variable (its name, = and value)";
  return `is ${bytes.toLocaleString("en-US")} bytes: Linux starts no process ${holds} over ${limit / 1024} KiB (E2BIG)`;
}
