// The few standard globals the pure core may use, because every host it runs in (Node, the language
// server, the browser) has them: TextDecoder (WHATWG Encoding). Only tsconfig.core.json reads this file;
// the Node and browser configurations get the same names from their own libraries.

interface TextDecoder {
  decode(input?: Uint8Array): string;
}
declare const TextDecoder: {
  new (label?: string, options?: { fatal?: boolean; ignoreBOM?: boolean }): TextDecoder;
};
