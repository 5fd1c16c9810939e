// Deterministic data for the advice tests: the truth cases' collections (demoesr, customers, orders) at a
// size that keeps the whole run short, with the same distributions their descriptions give, so the same
// indexes win for the same reasons. A seed gives the same documents on every machine.

/** splitmix32: a small, well-mixed 32-bit generator; floats in [0, 1). */
export function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return ((z ^ (z >>> 16)) >>> 0) / 4294967296;
  };
}

/** Draws 0..n-1 with probability proportional to 1 / (k + 1)^s (rank 0 the most frequent). */
function zipf(rand: () => number, n: number, s: number): () => number {
  const cdf: number[] = [];
  let acc = 0;
  for (let k = 0; k < n; k++) cdf.push((acc += (k + 1) ** -s));
  return () => {
    const u = rand() * acc;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cdf[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

function weighted<T>(rand: () => number, pairs: readonly (readonly [T, number])[]): () => T {
  const total = pairs.reduce((a, [, w]) => a + w, 0);
  return () => {
    let u = rand() * total;
    for (const [v, w] of pairs) {
      if ((u -= w) < 0) return v;
    }
    return pairs[pairs.length - 1]![0];
  };
}

function permutation(rand: () => number, n: number): number[] {
  const a = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

export interface Demoesr {
  _id: number;
  /** 10% the hot tenant 42, else a Zipf(1.0) rank over 0..999. */
  e: number;
  /** A unique sort key, shuffled against insertion order. */
  s: number;
  /** floor(Exp(mean 25)) capped at 999: r > 10 for about 64%. */
  r: number;
}

export function demoesr(count: number, seed = 42): Demoesr[] {
  const rand = random(seed);
  const rank = zipf(rand, 1000, 1.0);
  const sKeys = permutation(random(seed ^ 0x5bd1e995), count);
  const out: Demoesr[] = [];
  for (let i = 0; i < count; i++) {
    const e = rand() < 0.1 ? 42 : rank();
    const r = Math.min(999, Math.floor(-25 * Math.log(1 - rand())));
    out.push({ _id: i, e, s: sKeys[i]!, r });
  }
  return out;
}

export interface Customer {
  _id: number;
  customer_id: number;
  /** Zipf(1.1) over 0..199: tenant 7 holds about 2.3%. */
  tenant: number;
  /** active 90%, pending 6%, suspended 3%, deleted 1%. */
  status: string;
  plan: string;
  /** 6 to 10 random lowercase letters: a two-letter prefix keeps about 1 in 676. */
  name: string;
  contact: { email: string };
  phone?: string | null;
  /** Grows with _id. */
  created: Date;
  score: number;
  ratings: number[];
}

export function customers(count: number, seed = 7): Customer[] {
  const rand = random(seed);
  const tenant = zipf(rand, 200, 1.1);
  const status = weighted(rand, [['active', 90], ['pending', 6], ['suspended', 3], ['deleted', 1]] as const);
  const plan = weighted(rand, [['free', 70], ['pro', 25], ['enterprise', 5]] as const);
  const start = Date.UTC(2022, 0, 1);
  const out: Customer[] = [];
  for (let i = 0; i < count; i++) {
    let name = '';
    const len = 6 + Math.floor(rand() * 5);
    for (let k = 0; k < len; k++) name += String.fromCharCode(97 + Math.floor(rand() * 26));
    const c: Customer = {
      _id: i,
      customer_id: 100_000 + i,
      tenant: tenant(),
      status: status(),
      plan: plan(),
      name,
      contact: { email: `${name}.${i}@example.org` },
      created: new Date(start + i * 3_600_000),
      score: Math.floor(rand() * 1000),
      ratings: Array.from({ length: 3 + Math.floor(rand() * 4) }, () => Math.floor(rand() * 101)),
    };
    const p = rand();
    if (p < 0.2) c.phone = `+1555${String(i).padStart(7, '0')}`;
    else if (p < 0.25) c.phone = null;
    out.push(c);
  }
  return out;
}

export interface Order {
  _id: number;
  /** 0..9 weighted 25, 18, 13, 10, 8, 7, 6, 5, 4, 4 percent. */
  country_id: number;
  /** One order a minute (plus random seconds): grows with _id. */
  created_at: Date;
  /** Ten lines; product_id = floor(log2(1 + i * rand)), so small ids sit mostly in old orders. */
  order_details: { line: number; product_id: number; quantity: number }[];
}

export function orders(count: number, seed = 1): Order[] {
  const rand = random(seed);
  const country = weighted(rand, [[0, 25], [1, 18], [2, 13], [3, 10], [4, 8], [5, 7], [6, 6], [7, 5], [8, 4], [9, 4]] as const);
  const start = Date.UTC(2023, 0, 1);
  const out: Order[] = [];
  for (let i = 0; i < count; i++) {
    const country_id = country();
    const created_at = new Date(start + i * 60_000 + Math.floor(rand() * 60) * 1000);
    const order_details = Array.from({ length: 10 }, (_, k) => ({ line: k + 1, product_id: Math.floor(Math.log2(1 + i * rand())), quantity: 1 + Math.floor(rand() * 10) }));
    out.push({ _id: i, country_id, created_at, order_details });
  }
  return out;
}
