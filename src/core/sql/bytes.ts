// libpg-query reports UTF-8 byte offsets; JavaScript strings are indexed by UTF-16 code units. One map
// for every reader of the parser's positions.

export class ByteMap {
  private readonly map: Int32Array | undefined;
  /** The text's length in UTF-8 bytes. */
  readonly byteLength: number;

  constructor(text: string) {
    // Plain ASCII is the common case: bytes and indexes agree, so no table is built.
    if (!/[^\x00-\x7f]/.test(text)) {
      this.byteLength = text.length;
      return;
    }
    const out: number[] = [];
    for (let i = 0; i < text.length; i++) {
      const cp = text.codePointAt(i)!;
      const n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
      for (let b = 0; b < n; b++) out.push(i);
      if (cp >= 0x10000) i++;
    }
    out.push(text.length);
    this.map = Int32Array.from(out);
    this.byteLength = out.length - 1;
  }

  /** The string index of a byte offset (clamped to the text). */
  char(byte: number): number {
    if (!this.map) return byte;
    return this.map[Math.max(0, Math.min(byte, this.map.length - 1))]!;
  }
}
