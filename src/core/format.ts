// Every number a person reads, in one place: plan cards, the side panel, findings, comparison verdicts,
// the command line and the language server's hovers all print through these functions, so one figure
// never reads two ways ("6,956.95" on a card, "6,957" in its finding).

function groupDigits(digits: string): string {
  // A loop rather than a regular expression: findings format thousands of numbers on big plans.
  if (digits.length <= 3 || !/^\d+$/.test(digits)) return digits.length <= 3 ? digits : digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  let out = digits.slice(0, digits.length % 3 || 3);
  for (let i = out.length; i < digits.length; i += 3) out += `,${digits.slice(i, i + 3)}`;
  return out;
}

function trimZeros(s: string): string {
  return s.includes('.') ? s.replace(/\.?0+$/, '') : s;
}

/**
 * A count: integers with thousands separators ("10,020"); fractions (PostgreSQL 18 prints rows per loop
 * with two decimals) rounded to what a reader can use: whole from 100, one decimal from 10, two below.
 */
export function formatCount(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  const neg = n < 0;
  const a = Math.abs(n);
  let s: string;
  if (Number.isInteger(a)) s = groupDigits(String(a));
  else if (a >= 99.5) s = groupDigits(String(Math.round(a)));
  else if (a >= 10) s = trimZeros(a.toFixed(1));
  else s = trimZeros(a.toFixed(2));
  return neg && s !== '0' ? `-${s}` : s;
}

function sig3(x: number): string {
  const a = Math.abs(x);
  if (a >= 100) return String(Math.round(x));
  if (a >= 10) return trimZeros(x.toFixed(1));
  return trimZeros(x.toFixed(2));
}

/** A count where space is short (plan cards): as formatCount below 100,000, then 123k, 1.23M, 4.5B. */
export function formatCompact(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  const a = Math.abs(n);
  if (a < 100_000) return formatCount(n);
  const units: [number, string][] = [[1e12, 'T'], [1e9, 'B'], [1e6, 'M'], [1e3, 'k']];
  for (const [size, suffix] of units) {
    if (a >= size) return `${sig3(n / size)}${suffix}`;
  }
  return formatCount(n);
}

/** Milliseconds as a duration: 0.042 ms, 1.25 ms, 12.3 ms, 412 ms, 1.24 s, 3 m 05 s. */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  if (ms === 0) return '0 ms';
  if (ms >= 60_000) {
    const m = Math.floor(ms / 60_000);
    const s = Math.round((ms - m * 60_000) / 1000);
    return s === 60 ? `${m + 1} m 00 s` : `${m} m ${String(s).padStart(2, '0')} s`;
  }
  if (ms >= 1000) return `${trimZeros((ms / 1000).toFixed(2))} s`;
  if (ms >= 100) return `${formatCount(Math.round(ms))} ms`;
  if (ms >= 10) return `${trimZeros(ms.toFixed(1))} ms`;
  if (ms >= 1) return `${trimZeros(ms.toFixed(2))} ms`;
  return `${trimZeros(ms.toFixed(3))} ms`;
}

/** Bytes as B, kB, MB, GB, TB (powers of 1024, as PostgreSQL prints them), three significant digits. */
export function formatBytes(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  if (n < 1024) return `${formatCount(n)} B`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${sig3(v)} ${units[i]}`;
}

/**
 * A limit as it was set, in milliseconds: whole seconds as "3 s", anything else as "1500 ms"; a limit
 * left to the server's configuration as "configured".
 */
export function formatLimit(ms: number | undefined): string {
  if (ms === undefined) return 'configured';
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/** A time waited or taken, to a tenth of a second: "3.7 s", "12 s". */
export function formatSeconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

/** Kilobytes as PostgreSQL prints them (sort space, peak memory, disk usage). */
export function formatKb(kb: number): string {
  return formatBytes(kb * 1024);
}

/** A ratio such as examined over returned: "1.6x", "95x", "1,001x"; "no end" when nothing was returned. */
export function formatRatio(r: number): string {
  if (!Number.isFinite(r)) return 'no end';
  if (r >= 9.95) return `${groupDigits(String(Math.round(r)))}x`;
  return `${trimZeros(r.toFixed(1))}x`;
}

/** Read over kept, as the findings and the cards both state it: nothing kept counts as one. */
export function wasteRatio(read: number, kept: number): number {
  return read / Math.max(kept, 1);
}

/** A share of a whole: "0.4%", "12%"; empty below a tenth of a percent, which says nothing a reader can use. */
export function formatPercent(part: number, whole: number): string {
  if (!(whole > 0) || (100 * part) / whole < 0.1) return '';
  return formatShare(part / whole);
}

/**
 * A fraction as a percentage where the sentence needs one: "0%", "under 0.1%", "0.4%", "12%", "30%" (a
 * setting such as 0.3 reads the same way as a measured share).
 */
export function formatShare(fraction: number): string {
  if (!Number.isFinite(fraction)) return String(fraction);
  const p = 100 * fraction;
  if (p === 0) return '0%';
  if (p > 0 && p < 0.1) return 'under 0.1%';
  if (Math.abs(p) < 1) return `${trimZeros(p.toFixed(1))}%`;
  return `${groupDigits(String(Math.round(p)))}%`;
}

/** "1 document" / "2,000 documents". */
export function plural(n: number, one: string, many?: string): string {
  return `${formatCount(n)} ${n === 1 ? one : (many ?? `${one}s`)}`;
}

/**
 * Rows a node returned over several loops, in words: "about 7 rows on each of 695 loops", or, when a
 * loop returns less than one row on average, "about 7 rows in all over 695 loops". PostgreSQL prints
 * rows per loop, so "0.01 x 695 loops" is what the server said but not what a reader needs.
 */
export function rowsPerLoopText(perLoop: number, loops: number, noun = 'row'): string {
  const exactly = Number.isInteger(perLoop);
  if (loops <= 1) return plural(exactly ? perLoop : Math.round(perLoop * 100) / 100, noun);
  const loopText = `${formatCount(loops)} loops`;
  if (perLoop === 0) return `no ${noun}s on ${loopText}`;
  if (perLoop >= 1 || exactly) {
    const shown = perLoop >= 10 || exactly ? Math.round(perLoop) : Math.round(perLoop * 10) / 10;
    const about = shown === perLoop ? '' : 'about ';
    return `${about}${plural(shown, noun)} on each of ${loopText}`;
  }
  const total = Math.round(perLoop * loops);
  return `${total === perLoop * loops ? '' : 'about '}${plural(total, noun)} in all over ${loopText}`;
}
