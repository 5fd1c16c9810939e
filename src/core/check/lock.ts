// qpi.lock.json: what the gate compares against. Per query its identity, plan signature, counters and
// the finding rules it had; the servers' versions; and the waivers people wrote. Written with sorted
// keys and entries, two spaces, a final newline: the same queries on the same servers give the same
// bytes, so the lock is reviewed like code.

import type { PlanCounters, PlanSignature } from './signature';

export const LOCK_VERSION = 1;

export interface LockEntry {
  engine: 'mongodb' | 'postgres';
  file: string;
  scope?: string;
  shape: string;
  signature?: PlanSignature;
  counters?: PlanCounters;
  /** The rules the query had findings of, sorted. */
  findings: string[];
  /** Why the query could not be explained when the lock was written. */
  notExplainable?: string;
}

export interface Waiver {
  /** The query's key in `queries`. */
  query: string;
  /** A rule id, or `*` for every rule of the query. */
  rule: string;
  reason: string;
  owner: string;
  /** Last day the waiver holds, YYYY-MM-DD. */
  expires: string;
}

export interface LockEnvironment {
  /** The server's version as it reports it ("15.10", "6.0.5"). */
  server: string;
}

export interface Lock {
  version: number;
  environment: { mongodb?: LockEnvironment; postgres?: LockEnvironment };
  queries: Record<string, LockEntry>;
  waivers: Waiver[];
}

export function emptyLock(): Lock {
  return { version: LOCK_VERSION, environment: {}, queries: {}, waivers: [] };
}

/** The lock as its file holds it: keys sorted at every level, waivers sorted by query then rule. */
export function serializeLock(lock: Lock): string {
  const waivers = [...lock.waivers].sort((a, b) => cmp(a.query, b.query) || cmp(a.rule, b.rule) || cmp(a.expires, b.expires));
  return `${JSON.stringify(sortKeys({ ...lock, waivers }), null, 2)}\n`;
}

/** JSON with keys sorted at every level: equal values give equal text. */
export function canonicalJson(v: unknown): string {
  return JSON.stringify(sortKeys(v));
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(o).sort(cmp)) if (o[k] !== undefined) out[k] = sortKeys(o[k]);
    return out;
  }
  return v;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Reads a lock file's text; the sentence says what is wrong with it. */
export function parseLock(text: string): { ok: true; lock: Lock } | { ok: false; error: string } {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    return { ok: false, error: `The lock is not JSON: ${err instanceof Error ? err.message : String(err)}.` };
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return { ok: false, error: 'The lock is not a JSON object.' };
  const d = doc as Record<string, unknown>;
  if (d.version !== LOCK_VERSION) return { ok: false, error: `The lock has version ${JSON.stringify(d.version)}; this qpi reads version ${LOCK_VERSION}.` };
  const queries = d.queries ?? {};
  if (typeof queries !== 'object' || queries === null || Array.isArray(queries)) return { ok: false, error: 'The lock\'s "queries" is not an object.' };
  for (const [key, e] of Object.entries(queries as Record<string, unknown>)) {
    const entry = e as Partial<LockEntry> | null;
    if (!entry || typeof entry !== 'object' || (entry.engine !== 'mongodb' && entry.engine !== 'postgres') || typeof entry.file !== 'string' || !Array.isArray(entry.findings)) {
      return { ok: false, error: `The lock's query "${key}" lacks engine, file or findings.` };
    }
  }
  const waivers = d.waivers ?? [];
  if (!Array.isArray(waivers)) return { ok: false, error: 'The lock\'s "waivers" is not a list.' };
  for (const [i, w] of waivers.entries()) {
    const x = w as Partial<Waiver> | null;
    const missing = (['query', 'rule', 'reason', 'owner', 'expires'] as const).filter((k) => typeof x?.[k] !== 'string' || x[k]!.trim() === '');
    if (missing.length > 0) return { ok: false, error: `Waiver ${i + 1} in the lock needs ${missing.join(', ')}: a waiver says what, why, who and until when.` };
    if (!/^\d{4}-\d{2}-\d{2}$/.test(x!.expires!) || Number.isNaN(Date.parse(`${x!.expires!}T00:00:00Z`))) return { ok: false, error: `Waiver ${i + 1} in the lock expires on "${x!.expires!}", which is not a date written YYYY-MM-DD.` };
  }
  const environment = (d.environment ?? {}) as Lock['environment'];
  return { ok: true, lock: { version: LOCK_VERSION, environment, queries: queries as Record<string, LockEntry>, waivers: waivers as Waiver[] } };
}

/** The leading version number of what a server reports ("15.10 (Debian ...)" is 15.10). */
export function versionNumber(reported: string): string {
  return /^\s*v?(\d+(?:\.\d+)*)/.exec(reported)?.[1] ?? reported.trim();
}
