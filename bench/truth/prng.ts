// Seeded pseudo-random helpers for the truth generator. Everything the generator makes (data, query
// shapes, values) comes from these, so one seed always gives the same case on every machine.

// mulberry32, the same generator the plan benchmarks use.
export { rng as mulberry32 } from '../generate';

export type Rand = () => number;

/** A whole number from lo to hi, both included. */
export function int(rand: Rand, lo: number, hi: number): number {
  return lo + Math.floor(rand() * (hi - lo + 1));
}

export function pick<T>(rand: Rand, xs: readonly T[]): T {
  return xs[Math.floor(rand() * xs.length)]!;
}

/** Distinct items, in the order drawn. */
export function pickSome<T>(rand: Rand, xs: readonly T[], n: number): T[] {
  const pool = [...xs];
  const out: T[] = [];
  while (out.length < n && pool.length > 0) out.push(pool.splice(Math.floor(rand() * pool.length), 1)[0]!);
  return out;
}

/** Draws a value with the given weights (any positive numbers). */
export function weighted<T>(rand: Rand, values: readonly T[], weights: readonly number[]): () => T {
  const total = weights.reduce((a, b) => a + b, 0);
  const cum: number[] = [];
  let acc = 0;
  for (const w of weights) cum.push((acc += w / total));
  return () => {
    const u = rand();
    const i = cum.findIndex((c) => u < c);
    return values[i < 0 ? values.length - 1 : i]!;
  };
}

/** Zipf over ranks 0..n-1 with exponent s: rank 0 is the most frequent. */
export function zipf(rand: Rand, n: number, s: number): () => number {
  const cum: number[] = [];
  let acc = 0;
  for (let k = 1; k <= n; k++) cum.push((acc += 1 / k ** s));
  return () => {
    const u = rand() * acc;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cum[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

export function letters(rand: Rand, len: number): string {
  let s = '';
  for (let k = 0; k < len; k++) s += String.fromCharCode(97 + Math.floor(rand() * 26));
  return s;
}

/** Up to n distinct values of draw(), giving up after `tries` draws (a small domain may hold fewer). */
export function distinct<T>(rand: Rand, n: number, draw: (r: Rand) => T, tries = n * 20): T[] {
  const values = new Set<T>();
  for (let i = 0; i < tries && values.size < n; i++) values.add(draw(rand));
  return [...values];
}
