// The per-file caps of inline advice, as the extension says them (without the editor API, unit-tested in
// Node). The language server applies the same figures (DEFAULT_OPTIONS in src/server/service.ts, a unit
// test holds them equal) and tells the extension when a document hits one (CapReached); the extension's
// own "Explain" lenses and the connection status bar read the finder under the same caps, so a file of
// any size is answered within 2 s and 300 MB (bench/caps.ts).

/** Files longer than this are not read for queries. */
export const MAX_FILE_CHARACTERS = 600_000;
/** Only a file's first this many queries get lenses and diagnostics. */
export const MAX_FILE_QUERIES = 750;

export type Cap = 'characters' | 'queries';

/** The last part of a URI's path, for a sentence. */
export function fileName(uri: string): string {
  const path = uri.replace(/[?#].*$/, '');
  return decodeURIComponent(path.slice(path.lastIndexOf('/') + 1)) || uri;
}

const n = (x: number) => x.toLocaleString('en-US');

/** The Output log's line, said once per document and cap. */
export function capSentence(uri: string, cap: Cap, limit: number, size: number): string {
  return cap === 'characters'
    ? `${fileName(uri)} has ${n(size)} characters, over the cap of ${n(limit)} per file: it gets no inline advice, lenses or diagnostics (Explain Query on a selection still works).`
    : `${fileName(uri)} has ${n(size)} queries, over the cap of ${n(limit)} per file: only its first ${n(limit)} get inline advice, lenses and diagnostics (Explain Query on a selection works on any).`;
}

/** The status bar's short text for a document over a cap. */
export function capHint(uri: string, cap: Cap, limit: number): string {
  return cap === 'characters' ? `$(warning) ${fileName(uri)}: over ${n(limit)} characters, no inline advice` : `$(warning) ${fileName(uri)}: inline advice on the first ${n(limit)} queries`;
}

/** What the extension's finder may read of a document's text: all of it, or nothing past the cap. */
export function underCharacterCap(length: number): boolean {
  return length <= MAX_FILE_CHARACTERS;
}
