// Deterministic data for the integration tests: the same seed gives the same rows on every run and
// every machine, so the numbers the servers report (keys examined, rows read) can be asserted exactly.
// The shapes follow the scenarios the product teaches: a hot tenant, a unique sort key, a skewed range
// column, orders with embedded lines whose low product ids sit in old orders, customers with emails.

/** A small, fast, well-mixed 32-bit PRNG (mulberry32); returns floats in [0, 1). */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = state;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/** Picks values with the given relative weights. */
function weightedPick<T>(rand: () => number, values: readonly T[], weights: readonly number[]): () => T {
  const total = weights.reduce((a, b) => a + b, 0);
  const bounds: number[] = [];
  let acc = 0;
  for (const w of weights) bounds.push((acc += w / total));
  return () => {
    const u = rand();
    const k = bounds.findIndex((b) => u < b);
    return values[k === -1 ? values.length - 1 : k]!;
  };
}

/** Zipf-like rank in 0..n-1 (rank 0 the most frequent), by inverse CDF with binary search. */
export function zipfRank(rand: () => number, n: number, s: number): () => number {
  const cdf = new Float64Array(n);
  let acc = 0;
  for (let k = 0; k < n; k++) cdf[k] = acc += 1 / Math.pow(k + 1, s);
  for (let k = 0; k < n; k++) cdf[k]! /= acc;
  return () => {
    const u = rand();
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

/** A shuffled 0..n-1, used as a unique sort key uncorrelated with insertion order. */
function shuffled(rand: () => number, n: number): Int32Array {
  const a = new Int32Array(n);
  for (let i = 0; i < n; i++) a[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    const t = a[i]!;
    a[i] = a[j]!;
    a[j] = t;
  }
  return a;
}

export interface EsrDoc {
  _id: number;
  /** Equality field: 10% are the hot tenant 42, the rest Zipf over 0..999. */
  e: number;
  /** Sort field: unique, shuffled. */
  s: number;
  /** Range field: exponential with mean 25, capped at 999. */
  r: number;
}

export function esrDocs(count: number, seed = 42): EsrDoc[] {
  const rand = prng(seed);
  const tenant = zipfRank(rand, 1000, 1.0);
  const sortKey = shuffled(prng(seed + 1), count);
  const out: EsrDoc[] = [];
  for (let i = 0; i < count; i++) {
    const e = rand() < 0.1 ? 42 : tenant();
    const r = Math.min(999, Math.floor(-Math.log(1 - rand()) * 25));
    out.push({ _id: i, e, s: sortKey[i]!, r });
  }
  return out;
}

export interface OrderLine {
  line: number;
  product_id: number;
  quantity: number;
}

export interface OrderDoc {
  _id: number;
  /** 0..9 with weights 25, 18, 13, 10, 8, 7, 6, 5, 4, 4 percent. */
  country_id: number;
  /** One order a minute from 2023-01-01, plus random seconds: increases with _id. */
  created_at: Date;
  /** Ten lines; product ids grow with the order number, so small ids (like 5) are mostly in old orders. */
  order_details: OrderLine[];
}

export function orderDocs(count: number, seed = 1): OrderDoc[] {
  const rand = prng(seed);
  const country = weightedPick(rand, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [25, 18, 13, 10, 8, 7, 6, 5, 4, 4]);
  const start = Date.UTC(2023, 0, 1);
  const out: OrderDoc[] = [];
  for (let i = 0; i < count; i++) {
    const country_id = country();
    const created_at = new Date(start + i * 60_000 + Math.floor(rand() * 60) * 1000);
    const order_details: OrderLine[] = [];
    for (let line = 1; line <= 10; line++) {
      order_details.push({ line, product_id: Math.floor(Math.log2(1 + i * rand())), quantity: 1 + Math.floor(rand() * 10) });
    }
    out.push({ _id: i, country_id, created_at, order_details });
  }
  return out;
}

export interface CustomerDoc {
  _id: number;
  name: string;
  contact: { email: string };
  tenant: number;
}

export function customerDocs(count: number, seed = 7): CustomerDoc[] {
  const rand = prng(seed);
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  const out: CustomerDoc[] = [];
  for (let i = 0; i < count; i++) {
    let name = '';
    const len = 6 + Math.floor(rand() * 5);
    for (let k = 0; k < len; k++) name += letters[Math.floor(rand() * 26)];
    out.push({ _id: i, name, contact: { email: `${name}.${i}@example${i % 5}.com` }, tenant: Math.floor(rand() * 200) });
  }
  return out;
}

/** The five documents of the skip-scan article, verbatim, so its keys and seeks can be checked exactly. */
export const ARTICLE_DEMOESR = [
  { e: 42, s: 'a', r: 10 },
  { e: 42, s: 'b', r: 20 },
  { e: 42, s: 'b', r: 10 },
  { e: 42, s: 'd', r: 30 },
  { e: 99, r: 11 },
];
