// A short stable hash for identities and fingerprints: FNV-1a over UTF-16 code units in two 32-bit
// lanes with different offsets, printed as 16 hex digits. Not cryptographic: it names a query, it does
// not protect anything, and it is the same in Node, the language server and a browser.

export function stableHash(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193) ^ (b >>> 15);
  }
  return (a >>> 0).toString(16).padStart(8, '0') + (b >>> 0).toString(16).padStart(8, '0');
}
