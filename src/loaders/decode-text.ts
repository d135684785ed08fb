/** Result of decoding a workflow file's bytes. */
export type DecodedText = { ok: true; text: string } | { ok: false; line: number; col: number; message: string };

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Decodes UTF-8 strictly (a bad byte is an error, never a silent U+FFFD) and
 * drops a leading byte order mark, so columns on line 1 match what editors show.
 */
export function decodeText(input: string | Uint8Array): DecodedText {
  if (typeof input === "string") return { ok: true, text: stripBom(input) };
  const utf16 = utf16Order(input);
  if (utf16 !== undefined) return { ok: false, line: 1, col: 1, message: `the file is UTF-16 (${utf16}), not UTF-8; save it as UTF-8` };
  try {
    return { ok: true, text: stripBom(decoder.decode(input)) };
  } catch {
    return describeBadByte(input);
  }
}

/** Said of a file whose lines end in CR alone; see crOnlyLineEnding. */
export const CR_ONLY_MESSAGE = "line endings are CR only (classic Mac): convert them to LF";
/** Said of a file where some lines, not all, end in CR alone. */
export const CR_MIXED_MESSAGE = "this line ends in CR alone (classic Mac), as lines before or after it do not: convert the line endings to LF";

/**
 * The offset of the first line break of a text whose lines end in CR alone (classic Mac OS),
 * or of the first CR alone in a text whose other lines end in LF or CRLF (`mixed`), else
 * undefined. yaml takes only LF and CRLF as line breaks, so it read such lines as one and
 * told of a nested mapping, with a hint to quote `: ` that did not help. YAML itself counts a
 * CR alone as a line break, never as text. Cheap: a usual file has no CR.
 */
export function crOnlyLineEnding(text: string): { offset: number; mixed: boolean } | undefined {
  for (let cr = text.indexOf("\r"); cr !== -1; cr = text.indexOf("\r", cr + 1)) {
    if (text.charCodeAt(cr + 1) !== 0x0a) return { offset: cr, mixed: text.includes("\n") };
  }
  return undefined;
}

/**
 * "big-endian" or "little-endian" for a file saved as UTF-16 (as some Windows editors and
 * PowerShell's `>` do): its byte order mark, or, without one, a NUL byte every other byte of
 * its start, where YAML text has none. Such a file was read as UTF-8 and reported as a top
 * level that is not a mapping, quoting "\u0000t\u0000a...".
 */
function utf16Order(bytes: Uint8Array): string | undefined {
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return "big-endian, with a byte order mark";
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return "little-endian, with a byte order mark";
  const pairs = Math.min(bytes.length, 64) >> 1;
  if (pairs < 2) return undefined;
  let even = 0;
  let odd = 0;
  for (let index = 0; index < 2 * pairs; index += 2) {
    if (bytes[index] === 0) even++;
    if (bytes[index + 1] === 0) odd++;
  }
  if (even === pairs && odd === 0) return "big-endian";
  if (odd === pairs && even === 0) return "little-endian";
  return undefined;
}

function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** Finds the first invalid byte; only called once decoding failed, so speed does not matter. */
function describeBadByte(bytes: Uint8Array): DecodedText {
  const offset = firstInvalidByte(bytes);
  // Lines as the file's editor shows them: a CR alone ends a line too (see crOnlyLineEnding).
  let lineStart = 0;
  let line = 1;
  for (let index = 0; index < offset; index++) {
    if (bytes[index] === 0x0a || (bytes[index] === 0x0d && bytes[index + 1] !== 0x0a)) {
      line++;
      lineStart = index + 1;
    }
  }
  if (line === 1 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) lineStart = 3;
  const col = decoder.decode(bytes.subarray(lineStart, offset)).length + 1;
  const byte = bytes[offset]?.toString(16).padStart(2, "0") ?? "end of file";
  return { ok: false, line, col, message: `the file is not valid UTF-8 (byte 0x${byte} at byte offset ${offset}); save it as UTF-8` };
}

/** Byte offset of the first byte that breaks UTF-8 (RFC 3629: no overlongs, no surrogates, max U+10FFFF). */
function firstInvalidByte(bytes: Uint8Array): number {
  let index = 0;
  while (index < bytes.length) {
    const lead = bytes[index]!;
    let length: number;
    let min = 0x80;
    let max = 0xbf;
    if (lead < 0x80) length = 1;
    else if (lead >= 0xc2 && lead <= 0xdf) length = 2;
    else if (lead >= 0xe0 && lead <= 0xef) {
      length = 3;
      if (lead === 0xe0) min = 0xa0;
      if (lead === 0xed) max = 0x9f;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      length = 4;
      if (lead === 0xf0) min = 0x90;
      if (lead === 0xf4) max = 0x8f;
    } else return index;
    for (let next = 1; next < length; next++) {
      const byte = bytes[index + next];
      // Only the second byte has a narrowed range; later ones are plain continuations.
      const low = next === 1 ? min : 0x80;
      const high = next === 1 ? max : 0xbf;
      if (byte === undefined || byte < low || byte > high) return index;
    }
    index += length;
  }
  return bytes.length;
}
