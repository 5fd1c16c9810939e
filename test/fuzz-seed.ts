// Property tests run with one fixed seed so CI is reproducible; QPI_FUZZ_SEED=random (or a number)
// explores other inputs locally. A failure prints its seed and counterexample either way.
import fc from 'fast-check';

const wanted = process.env['QPI_FUZZ_SEED'];
const seed = wanted === 'random' ? Date.now() | 0 : wanted !== undefined ? Number(wanted) : 20261122;
fc.configureGlobal({ seed });
