import { getSystemErrorMap } from "node:util";

/** The system's words for an error's errno ("no such file or directory"), if it has one. */
export function systemWords(error: unknown): string | undefined {
  const errno = (error as NodeJS.ErrnoException | undefined)?.errno;
  return typeof errno === "number" ? getSystemErrorMap().get(errno)?.[1] : undefined;
}
