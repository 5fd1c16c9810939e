// What a saved connection is, and the pure conversions between the forms a user types (a connection
// string, or host/port fields) and the URI an adapter connects with. No vscode here, so it is unit-tested
// in plain Node. The invariant: a stored ConnectionSpec never holds a password; the password lives in
// SecretStorage under the spec's id and is only joined in `connectionUri()` at connect time.

export type ConnectionEngine = 'mongodb' | 'postgres';

export interface TlsOptions {
  enabled: boolean;
  /** Accept certificates that do not verify (self-signed test servers). */
  allowInvalidCertificates?: boolean;
  /** A CA bundle file to trust, absolute path. */
  caFile?: string;
}

export interface ConnectionSpec {
  /** Stable id, the key of the password in SecretStorage. */
  id: string;
  name: string;
  engine: ConnectionEngine;
  /** 'uri' when the user typed a connection string, 'fields' when host/port were entered one by one. */
  form: 'uri' | 'fields';
  /** The connection string without its password (form 'uri'). */
  uri?: string;
  host?: string;
  port?: number;
  database?: string;
  user?: string;
  tls: TlsOptions;
  /** True when a password is kept in SecretStorage for this connection. */
  hasPassword: boolean;
  /**
   * Set when the connection is defined in settings (`queryPlanInspector.connections`) rather than saved
   * by the user: it is read-only in the extension, and only its password is kept by it.
   */
  origin?: SettingsOrigin;
}

/** Where a settings connection is defined. */
export interface SettingsOrigin {
  scope: 'user' | 'workspace' | 'folder';
  /** The folder's URI, for scope 'folder'. */
  folder?: string;
  /** The place in words, to put in a sentence: "the user settings", "the settings of the folder shop". */
  where: string;
}

/** A connection string split into the parts the forms show. */
export interface ParsedUri {
  engine: ConnectionEngine;
  user?: string;
  password?: string;
  /** host[:port][,host[:port]...] as written. */
  hosts: string;
  database?: string;
  params: URLSearchParams;
  srv: boolean;
}

/** Reads a MongoDB or PostgreSQL connection string; returns one sentence when it is not one. */
export function parseConnectionString(text: string): { ok: true; value: ParsedUri } | { ok: false; error: string } {
  const s = text.trim();
  const m = /^(mongodb(?:\+srv)?|postgres(?:ql)?):\/\/(?:([^@/?#]*)@)?([^/?#]*)(?:\/([^?#]*))?(?:\?([^#]*))?$/i.exec(s);
  if (!m) {
    if (/^\s*(host|dbname|user)=/.test(s)) return { ok: false, error: 'Key=value connection strings are not supported: use a postgresql:// URI or the host and port form.' };
    return { ok: false, error: 'This is not a connection string: it must start with mongodb://, mongodb+srv://, postgres:// or postgresql://.' };
  }
  const scheme = m[1]!.toLowerCase();
  const engine: ConnectionEngine = scheme.startsWith('mongodb') ? 'mongodb' : 'postgres';
  if (!m[3]) return { ok: false, error: 'The connection string names no host.' };
  let user: string | undefined;
  let password: string | undefined;
  if (m[2] !== undefined) {
    const colon = m[2].indexOf(':');
    try {
      user = decodeURIComponent(colon < 0 ? m[2] : m[2].slice(0, colon)) || undefined;
      if (colon >= 0) password = decodeURIComponent(m[2].slice(colon + 1));
    } catch {
      return { ok: false, error: 'The user name or password in the connection string is not correctly percent-encoded.' };
    }
  }
  let database: string | undefined;
  try {
    database = m[4] ? decodeURIComponent(m[4]) : undefined;
  } catch {
    return { ok: false, error: 'The database name in the connection string is not correctly percent-encoded.' };
  }
  const value: ParsedUri = { engine, hosts: m[3], params: new URLSearchParams(m[5] ?? ''), srv: scheme === 'mongodb+srv' };
  if (user !== undefined) value.user = user;
  if (password !== undefined) value.password = password;
  if (database) value.database = database;
  return { ok: true, value };
}

/** The connection string with its password removed (what may be stored and shown). */
export function withoutPassword(text: string): string {
  return text.trim().replace(/^([a-z+]+:\/\/[^:@/?#]*):[^@/?#]*@/i, '$1@');
}

/** TLS settings a connection string asks for. */
export function tlsFromUri(parsed: ParsedUri): TlsOptions {
  const p = parsed.params;
  if (parsed.engine === 'mongodb') {
    const on = p.get('tls') ?? p.get('ssl');
    const enabled = parsed.srv ? on !== 'false' : on === 'true';
    const tls: TlsOptions = { enabled };
    if (p.get('tlsAllowInvalidCertificates') === 'true' || p.get('tlsInsecure') === 'true') tls.allowInvalidCertificates = true;
    const ca = p.get('tlsCAFile');
    if (ca) tls.caFile = ca;
    return tls;
  }
  const mode = p.get('sslmode');
  const tls: TlsOptions = { enabled: mode !== null && mode !== 'disable' && mode !== 'allow' && mode !== 'prefer' };
  if (mode === 'require' || mode === 'no-verify') tls.allowInvalidCertificates = true;
  const ca = p.get('sslrootcert');
  if (ca) tls.caFile = ca;
  return tls;
}

const DEFAULT_PORT: Record<ConnectionEngine, number> = { mongodb: 27017, postgres: 5432 };

export function defaultPort(engine: ConnectionEngine): number {
  return DEFAULT_PORT[engine];
}

/**
 * The URI an adapter connects with: the stored string or the fields, the password joined in, and the TLS
 * options written the way each driver reads them.
 */
export function connectionUri(spec: ConnectionSpec, password: string | undefined): string {
  let base: string;
  if (spec.form === 'uri' && spec.uri) {
    base = spec.uri;
  } else {
    const scheme = spec.engine === 'mongodb' ? 'mongodb' : 'postgresql';
    const host = spec.host ?? 'localhost';
    const hostPart = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
    const port = spec.port ?? DEFAULT_PORT[spec.engine];
    const user = spec.user ? `${encodeURIComponent(spec.user)}@` : '';
    base = `${scheme}://${user}${hostPart}:${port}/${spec.database ? encodeURIComponent(spec.database) : ''}`;
  }
  const parsed = parseConnectionString(base);
  if (!parsed.ok) return base;
  const p = parsed.value;
  const params = new URLSearchParams(p.params);
  if (spec.form === 'fields' || !hasTlsParams(p)) applyTls(spec.engine, spec.tls, params);
  const scheme = /^[a-z+]+/i.exec(base)![0];
  const userInfo = p.user !== undefined ? `${encodeURIComponent(p.user)}${password ? `:${encodeURIComponent(password)}` : ''}@` : '';
  const query = params.toString();
  return `${scheme}://${userInfo}${p.hosts}/${p.database ? encodeURIComponent(p.database) : ''}${query ? `?${query}` : ''}`;
}

function hasTlsParams(p: ParsedUri): boolean {
  return ['tls', 'ssl', 'sslmode', 'tlsAllowInvalidCertificates', 'tlsCAFile', 'sslrootcert'].some((k) => p.params.has(k));
}

function applyTls(engine: ConnectionEngine, tls: TlsOptions, params: URLSearchParams): void {
  if (!tls.enabled) return;
  if (engine === 'mongodb') {
    params.set('tls', 'true');
    if (tls.allowInvalidCertificates) params.set('tlsAllowInvalidCertificates', 'true');
    if (tls.caFile) params.set('tlsCAFile', tls.caFile);
  } else {
    params.set('sslmode', tls.allowInvalidCertificates ? 'no-verify' : tls.caFile ? 'verify-full' : 'require');
    if (tls.caFile) params.set('sslrootcert', tls.caFile);
  }
}

/** A short description for lists: `user@host:port/db`, never with a password. */
export function describe(spec: ConnectionSpec): string {
  if (spec.form === 'uri' && spec.uri) {
    const parsed = parseConnectionString(spec.uri);
    if (parsed.ok) {
      const p = parsed.value;
      return `${p.user ? `${p.user}@` : ''}${p.hosts}${p.database ? `/${p.database}` : ''}${tlsFromUri(p).enabled || spec.tls.enabled ? ' (TLS)' : ''}`;
    }
  }
  return `${spec.user ? `${spec.user}@` : ''}${spec.host ?? 'localhost'}:${spec.port ?? DEFAULT_PORT[spec.engine]}${spec.database ? `/${spec.database}` : ''}${spec.tls.enabled ? ' (TLS)' : ''}`;
}

/** Removes every known secret and any URI password from a text before it is logged or shown. */
export function redact(text: string, secrets: Iterable<string> = []): string {
  let out = text.replace(/([a-z+]+:\/\/[^:@/\s?#]*):[^@/\s?#]*@/gi, '$1:****@');
  for (const s of secrets) {
    if (s && s.length >= 3) out = out.split(s).join('****');
  }
  return out.replace(/(password\s*[=:]\s*)("[^"]*"|'[^']*'|\S+)/gi, '$1****');
}

/** Checks a spec built from a form; one sentence when it cannot work. */
export function validateSpec(spec: Omit<ConnectionSpec, 'id' | 'hasPassword'>): string | undefined {
  if (!spec.name.trim()) return 'A connection needs a name.';
  if (spec.form === 'uri') {
    if (!spec.uri) return 'A connection string is required.';
    const parsed = parseConnectionString(spec.uri);
    if (!parsed.ok) return parsed.error;
    if (parsed.value.engine !== spec.engine) return `This is a ${parsed.value.engine === 'mongodb' ? 'MongoDB' : 'PostgreSQL'} connection string, not a ${spec.engine === 'mongodb' ? 'MongoDB' : 'PostgreSQL'} one.`;
    return undefined;
  }
  if (!spec.host?.trim()) return 'A host is required.';
  if (spec.port !== undefined && !(Number.isInteger(spec.port) && spec.port > 0 && spec.port < 65536)) return 'The port must be a number between 1 and 65535.';
  return undefined;
}
