// Number formatting for cards and panels. Cards use compact forms so a card stays narrow; the details
// panel shows exact figures.

const intFmt = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const fracFmt = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });

/** Exact count with thousands separators; fractional values (PG 18 rows per loop) keep two digits. */
export function exact(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  return Number.isInteger(n) ? intFmt.format(n) : fracFmt.format(n);
}

/** Compact count: exact below 100,000, then 123k, 1.23M, 4.5B. */
export function count(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  const a = Math.abs(n);
  if (a < 100_000) return exact(Math.round(n * 100) / 100);
  const units: [number, string][] = [[1e12, 'T'], [1e9, 'B'], [1e6, 'M'], [1e3, 'k']];
  for (const [size, suffix] of units) {
    if (a >= size) return `${sig3(n / size)}${suffix}`;
  }
  return exact(n);
}

function sig3(x: number): string {
  const a = Math.abs(x);
  if (a >= 100) return String(Math.round(x));
  if (a >= 10) return (Math.round(x * 10) / 10).toString();
  return (Math.round(x * 100) / 100).toString();
}

/** Milliseconds as a short duration: 0.042 ms, 12.3 ms, 1.24 s, 3 m 05 s. */
export function ms(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  if (n === 0) return '0 ms';
  if (n < 1) return `${(Math.round(n * 1000) / 1000).toString()} ms`;
  if (n < 100) return `${(Math.round(n * 10) / 10).toString()} ms`;
  if (n < 1000) return `${Math.round(n)} ms`;
  if (n < 60_000) return `${sig3(n / 1000)} s`;
  const m = Math.floor(n / 60_000);
  const s = Math.round((n - m * 60_000) / 1000);
  return `${m} m ${String(s).padStart(2, '0')} s`;
}

/** Bytes as kB/MB/GB with three significant digits. */
export function bytes(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  if (n < 1024) return `${exact(n)} B`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${sig3(v)} ${units[i]}`;
}

/** Kilobytes as printed by PostgreSQL, shown as bytes. */
export function kb(n: number): string {
  return bytes(n * 1024);
}

/** A ratio such as an examined/returned factor: 1.5×, 12×, 1,234×. */
export function factor(x: number): string {
  if (!Number.isFinite(x)) return '∞';
  if (x < 10) return `${(Math.round(x * 10) / 10).toString()}×`;
  return `${exact(Math.round(x))}×`;
}

/** A share of a whole as a percentage: 0.4%, 12%, 100%. */
export function percent(part: number, whole: number): string {
  if (!(whole > 0)) return '';
  const p = (100 * part) / whole;
  // Below a tenth of a percent the share says nothing a reader can use.
  if (p < 0.1) return '';
  if (p < 1) return `${(Math.round(p * 10) / 10).toString()}%`;
  return `${Math.round(p)}%`;
}
