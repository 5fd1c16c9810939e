// Property tests run with one fixed seed so CI is reproducible; QPI_FUZZ_SEED=random (or a number)
// explores other inputs locally. A failure prints its seed and counterexample either way. Every property
// test takes its seed from here: fast-check's through the global configuration, hand-rolled ones (random
// edits of a file) through fuzzRandom.
import fc from 'fast-check';
import { prng } from './integration/support/seed';

const wanted = process.env['QPI_FUZZ_SEED'];
export const FUZZ_SEED = wanted === 'random' ? Date.now() | 0 : wanted !== undefined ? Number(wanted) : 20261122;
fc.configureGlobal({ seed: FUZZ_SEED });

/** A random stream for a property test, from the one seed; `stream` keeps two tests' streams apart. */
export function fuzzRandom(stream: number): () => number {
  return prng(Math.imul(FUZZ_SEED ^ stream, 0x9e3779b1));
}
