// Bytes of a saved plan to text, for the command line (the editor reads files through its own API).
export type Decoded = { ok: true; text: string } | { ok: false; refusal: string };

/** Share of a sample that must match a NUL pattern before the text is taken for UTF-16 or UTF-32. */
const NUL_SHARE = 0.6;

/**
 * Bytes of a saved plan to text. A byte order mark says UTF-8, UTF-16 or UTF-32 (Windows PowerShell writes
 * UTF-16 LE with one by default); without one, the text is UTF-8 unless its NUL bytes show a wider
 * encoding, which is then named in the refusal rather than guessed.
 */
export function decodeText(bytes: Uint8Array): Decoded {
  const b = bytes;
  if (b[0] === 0xff && b[1] === 0xfe && b[2] === 0 && b[3] === 0) return { ok: true, text: utf32(b.subarray(4), true) };
  if (b[0] === 0 && b[1] === 0 && b[2] === 0xfe && b[3] === 0xff) return { ok: true, text: utf32(b.subarray(4), false) };
  if (b[0] === 0xff && b[1] === 0xfe) return { ok: true, text: Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('utf16le').replace(/^\uFEFF/, '') };
  if (b[0] === 0xfe && b[1] === 0xff) return { ok: true, text: Buffer.from(b.subarray(0, b.length & ~1)).swap16().toString('utf16le').replace(/^\uFEFF/, '') };
  const sample = b.subarray(0, 4096);
  if (sample.includes(0)) {
    const wide = nulPattern(sample);
    if (wide) {
      return { ok: false, refusal: `the text looks like ${wide} without a byte order mark; save it as UTF-8 (or ${wide} with a byte order mark) and try again.` };
    }
    return { ok: false, refusal: 'this is binary data (it holds NUL bytes), not an explain output.' };
  }
  return { ok: true, text: Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('utf8') };
}

/** Names the encoding whose NUL bytes fall where ASCII text in that encoding puts them, if one fits. */
function nulPattern(s: Uint8Array): string | undefined {
  const zeroAt = (step: number, offset: number): number => {
    let zeros = 0;
    let units = 0;
    for (let i = offset; i < s.length; i += step, units++) if (s[i] === 0) zeros++;
    return units === 0 ? 0 : zeros / units;
  };
  if (zeroAt(4, 1) > NUL_SHARE && zeroAt(4, 2) > NUL_SHARE && zeroAt(4, 3) > NUL_SHARE && zeroAt(4, 0) < 1 - NUL_SHARE) return 'UTF-32 LE';
  if (zeroAt(4, 0) > NUL_SHARE && zeroAt(4, 1) > NUL_SHARE && zeroAt(4, 2) > NUL_SHARE && zeroAt(4, 3) < 1 - NUL_SHARE) return 'UTF-32 BE';
  if (zeroAt(2, 1) > NUL_SHARE && zeroAt(2, 0) < 1 - NUL_SHARE) return 'UTF-16 LE';
  if (zeroAt(2, 0) > NUL_SHARE && zeroAt(2, 1) < 1 - NUL_SHARE) return 'UTF-16 BE';
  return undefined;
}

/** Node has no UTF-32 decoder; code points are read four bytes at a time. */
function utf32(b: Uint8Array, little: boolean): string {
  const parts: string[] = [];
  const points: number[] = [];
  for (let i = 0; i + 3 < b.length; i += 4) {
    const cp = little ? b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24) : (b[i]! << 24) | (b[i + 1]! << 16) | (b[i + 2]! << 8) | b[i + 3]!;
    points.push(cp >= 0 && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff) ? cp : 0xfffd);
    if (points.length === 8192) parts.push(String.fromCodePoint(...points.splice(0)));
  }
  parts.push(String.fromCodePoint(...points));
  return parts.join('');
}
