// Connections a team shares through settings (`queryPlanInspector.connections`, usually committed in
// `.vscode/settings.json`): reading the entries, refusing the ones that cannot be used (a password in the
// uri above all), the stable id a password is kept under, the default connection of a folder, and the
// gateway wrapper that asks for a password when the server wants one. No vscode here: the store feeds
// it what the configuration API returns, so all of it is unit-tested in plain Node.

import type { Gateway, RunningExplain, RunningMeasure } from '../gateway';
import {
  connectionUri, parseConnectionString, tlsFromUri, validateSpec, withoutPassword,
  type ConnectionEngine, type ConnectionSpec, type SettingsOrigin, type TlsOptions,
} from './spec';

export const SETTINGS_KEY = 'connections';

/** An entry of the setting that cannot be used, with the one sentence that says why. */
export interface SettingsProblem {
  /** Unique among problems, for the tree view. */
  id: string;
  name?: string;
  engine?: ConnectionEngine;
  origin: SettingsOrigin;
  error: string;
}

export interface SettingsRead {
  specs: ConnectionSpec[];
  problems: SettingsProblem[];
}

const ENGINE_NAME: Record<ConnectionEngine, string> = { mongodb: 'MongoDB', postgres: 'PostgreSQL' };

/** 64-bit FNV-1a as hex: a short id that stays the same from one session to the next. */
function hash(text: string): string {
  let h = 0xcbf29ce484222325n;
  const bytes = new TextEncoder().encode(text);
  for (const b of bytes) {
    h ^= BigInt(b);
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return h.toString(16).padStart(16, '0');
}

/**
 * The id of a settings connection, the key its password is kept under. It depends on where the entry is
 * defined, its name, its engine and its user: a password belongs to one user on one connection, so
 * renaming the connection or changing its user asks for the password again.
 */
export function settingsId(origin: SettingsOrigin, name: string, engine: ConnectionEngine, user: string | undefined): string {
  return `settings-${hash([origin.scope, origin.folder ?? '', engine, name, user ?? ''].join('\n'))}`;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function readTls(value: unknown, label: string, resolveFile: (path: string) => string): TlsOptions | string {
  if (!isRecord(value)) return `${label} has a "tls" that is not an object: write for example "tls": { "enabled": true }.`;
  const { enabled, allowInvalidCertificates, caFile } = value;
  if (enabled !== undefined && typeof enabled !== 'boolean') return `${label} has a "tls.enabled" that is not true or false.`;
  if (allowInvalidCertificates !== undefined && typeof allowInvalidCertificates !== 'boolean') return `${label} has a "tls.allowInvalidCertificates" that is not true or false.`;
  if (caFile !== undefined && (typeof caFile !== 'string' || caFile.trim() === '')) return `${label} has a "tls.caFile" that is not a file path.`;
  // A CA file or an exception for certificates means TLS, even when "enabled" was left out.
  const tls: TlsOptions = { enabled: enabled ?? (caFile !== undefined || allowInvalidCertificates === true) };
  if (allowInvalidCertificates) tls.allowInvalidCertificates = true;
  if (typeof caFile === 'string') tls.caFile = resolveFile(caFile.trim());
  return tls;
}

/**
 * Reads the value of the setting at one place (user, workspace or folder settings). `resolveFile` turns a
 * relative CA file path into an absolute one (relative to the folder the settings belong to), so a team
 * can commit its CA beside the settings.
 */
export function readSettingsConnections(value: unknown, origin: SettingsOrigin, resolveFile: (path: string) => string = (p) => p): SettingsRead {
  const read: SettingsRead = { specs: [], problems: [] };
  if (value === undefined || value === null) return read;
  const problemId = (i: number) => `problem-${hash(`${origin.scope}\n${origin.folder ?? ''}\n${i}`)}`;
  if (!Array.isArray(value)) {
    read.problems.push({ id: problemId(-1), origin, error: `queryPlanInspector.connections in ${origin.where} must be a list of connections, each with a name, an engine and a uri.` });
    return read;
  }
  const seen = new Set<string>();
  value.forEach((entry: unknown, i) => {
    const fail = (error: string, name?: string, engine?: ConnectionEngine) => {
      const p: SettingsProblem = { id: problemId(i), origin, error };
      if (name) p.name = name;
      if (engine) p.engine = engine;
      read.problems.push(p);
    };
    if (!isRecord(entry)) return fail(`Connection ${i + 1} in ${origin.where} is not an object with a name, an engine and a uri.`);
    const name = typeof entry.name === 'string' ? entry.name.trim() : '';
    const label = name ? `The connection "${name}" in ${origin.where}` : `Connection ${i + 1} in ${origin.where}`;
    if (!name) return fail(`${label} has no name.`);
    const engine = entry.engine === 'mongodb' || entry.engine === 'postgres' ? entry.engine : undefined;
    if (!engine) return fail(`${label} needs "engine": "mongodb" or "postgres".`, name);
    if (typeof entry.uri !== 'string' || entry.uri.trim() === '') return fail(`${label} needs a "uri", such as ${engine === 'mongodb' ? 'mongodb://host:27017/db' : 'postgresql://user@host:5432/db'}.`, name, engine);
    const uri = entry.uri.trim();
    const parsed = parseConnectionString(uri);
    if (!parsed.ok) return fail(`${label} has a uri that cannot be used: ${parsed.error.charAt(0).toLowerCase()}${parsed.error.slice(1)}`, name, engine);
    // Settings are shared and committed: a password there is refused, never used and never shown.
    if (parsed.value.password !== undefined) {
      return fail(`${label} has a password in its uri: remove it from the settings, the password is asked for when the server needs one and kept in the secret storage.`, name, engine);
    }
    let tls: TlsOptions = tlsFromUri(parsed.value);
    if (entry.tls !== undefined) {
      const t = readTls(entry.tls, label, resolveFile);
      if (typeof t === 'string') return fail(t, name, engine);
      tls = t;
    }
    const spec: ConnectionSpec = {
      id: settingsId(origin, name, engine, parsed.value.user),
      name, engine, form: 'uri', uri: withoutPassword(uri), tls, hasPassword: false, origin,
    };
    const invalid = validateSpec(spec);
    if (invalid) return fail(`${label} cannot be used: ${invalid.charAt(0).toLowerCase()}${invalid.slice(1)}`, name, engine);
    if (seen.has(spec.id)) return fail(`${label} is defined twice for ${ENGINE_NAME[engine]}: rename one of them.`, name, engine);
    seen.add(spec.id);
    read.specs.push(spec);
  });
  return read;
}

const SCOPE_ORDER: Record<SettingsOrigin['scope'], number> = { folder: 0, workspace: 1, user: 2 };

/**
 * The connection a folder uses for an engine when the user chose none: the first connection of that
 * engine in the most specific settings that define one (the folder's own, then the workspace's, then the
 * user's). `folder` is the folder's URI, or '' for a file outside every folder (workspace and user only).
 */
export function settingsDefault(specs: readonly ConnectionSpec[], folder: string, engine: ConnectionEngine): ConnectionSpec | undefined {
  let best: ConnectionSpec | undefined;
  for (const spec of specs) {
    const o = spec.origin;
    if (!o || spec.engine !== engine) continue;
    if (o.scope === 'folder' && o.folder !== folder) continue;
    if (!best || SCOPE_ORDER[o.scope] < SCOPE_ORDER[best.origin!.scope]) best = spec;
  }
  return best;
}

/** The user name a connection logs in with, if its uri or fields name one. */
export function userOf(spec: ConnectionSpec): string | undefined {
  if (spec.form === 'fields') return spec.user;
  const parsed = spec.uri ? parseConnectionString(spec.uri) : undefined;
  return parsed?.ok ? parsed.value.user : undefined;
}

/**
 * True when a failure means the server wants a (right) password for this connection's user: a refused
 * login, not a refused statement (a permission a password would not give).
 */
export function asksForPassword(err: unknown, spec: ConnectionSpec): boolean {
  const e = err as { kind?: unknown; code?: unknown } | null;
  if (!e || e.kind !== 'auth' || !userOf(spec)) return false;
  return e.code !== '42501' && e.code !== 13;
}

/** What the password-asking gateway needs from the extension. */
export interface PasswordSource {
  /** Every connection, saved or from settings. */
  connections(): ConnectionSpec[];
  /** The password kept for a connection. */
  password(id: string): PromiseLike<string | undefined>;
  /**
   * Asks the user (once per call) and keeps the answer in the secret storage; undefined when dismissed.
   * `reason` is the sentence that says why it is asked.
   */
  ask(spec: ConnectionSpec, reason: string): Promise<string | undefined>;
}

/**
 * The settings connection a request's uri was built from, when exactly one connection, from settings,
 * gives that uri without its password: the gateway sees uris, not ids, and a saved connection with the
 * same address is never taken for it.
 */
export function settingsConnectionOf(connections: readonly ConnectionSpec[], uri: string): ConnectionSpec | undefined {
  const bare = withoutPassword(uri);
  const matches = connections.filter((c) => connectionUri(c, undefined) === bare);
  return matches.length === 1 && matches[0]!.origin ? matches[0] : undefined;
}

/** True when a uri carries a password in its user-info part. */
function hasPassword(uri: string): boolean {
  const p = parseConnectionString(uri);
  return p.ok && p.value.password !== undefined;
}

/** Why the password is asked: the server wants one, or refused the one it was given. */
export function passwordReason(spec: ConnectionSpec, sent: boolean): string {
  return sent
    ? `${spec.name} refused the login of ${userOf(spec)} with that password: type it again.`
    : `${spec.name} asks for the password of ${userOf(spec)}.`;
}

/** How many times a refused password is asked for again before the refusal is shown. */
export const MAX_ASKS = 3;

/**
 * Wraps a gateway so that a settings connection asks for its password when the server refuses the login:
 * the password is kept in the secret storage under the connection's id and the explain runs again with
 * it, under the same progress and Cancel. A measurement that follows an explain which had to ask gets
 * the kept password too. Saved connections pass through unchanged (their password is asked when added).
 */
export function askingPasswords(inner: Gateway, source: PasswordSource): Gateway {

  /** The uri with the kept password of its settings connection, when it was built without one. */
  async function withKeptPassword(uri: string): Promise<string> {
    if (hasPassword(uri)) return uri;
    const spec = settingsConnectionOf(source.connections(), uri);
    const kept = spec ? await source.password(spec.id) : undefined;
    return spec && kept ? connectionUri(spec, kept) : uri;
  }

  return {
    test: (engine, uri, connectTimeoutMs) => inner.test(engine, uri, connectTimeoutMs),
    familyCollections: async (request) => inner.familyCollections({ ...request, uri: await withKeptPassword(request.uri) }),

    explain(request): RunningExplain {
      let current = inner.explain(request);
      let cancelled = false;
      const done = (async () => {
        for (let asked = 0; ; asked++) {
          try {
            return await current.done;
          } catch (err) {
            const spec = settingsConnectionOf(source.connections(), request.uri);
            if (cancelled || !spec || asked >= MAX_ASKS || !asksForPassword(err, spec)) throw err;
            const password = await source.ask(spec, passwordReason(spec, asked > 0 || hasPassword(request.uri)));
            if (password === undefined || cancelled) throw err;
            current = inner.explain({ ...request, uri: connectionUri(spec, password) });
          }
        }
      })();
      return {
        done,
        // The advice of the explain that gave the plan (the last one asked, once a password was given).
        advice: done.then(() => current.advice ?? { adviseMs: 0 }),
        cancel: async () => {
          cancelled = true;
          await current.cancel();
        },
      };
    },

    measure(request): RunningMeasure {
      let current: RunningMeasure | undefined;
      let cancelled = false;
      const done = withKeptPassword(request.uri).then((uri) => {
        current = inner.measure({ ...request, uri });
        if (cancelled) current.cancel();
        return current.done;
      });
      return {
        done,
        cancel: () => {
          cancelled = true;
          current?.cancel();
        },
      };
    },
  };
}
