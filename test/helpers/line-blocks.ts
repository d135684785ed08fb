/** Where each line of `bytes` ends, just past its "\n". */
export function lineEnds(bytes: Buffer): number[] {
  const ends: number[] = [];
  for (let at = bytes.indexOf(0x0a); at !== -1; at = bytes.indexOf(0x0a, at + 1)) ends.push(at + 1);
  return ends;
}

/** A block of lines as a LineSplitter hands it on: bytes, line count, and where each line ends. */
export function lineBlock(text: string): [Buffer, number, Int32Array] {
  const bytes = Buffer.from(text);
  const ends = lineEnds(bytes);
  return [bytes, ends.length, Int32Array.from(ends)];
}
