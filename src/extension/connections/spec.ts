// What a saved connection is, and the pure conversions between the forms a user types (a connection
// string, or host/port fields) and the URI an adapter connects with. No vscode here, so it is unit-tested
// in plain Node. The invariant: a stored ConnectionSpec never holds a password; the password lives in
// SecretStorage under the spec's id and is only joined in `connectionUri()` at connect time.

import { hostListPortProblem } from '../../adapters/errors';

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

/**
 * A connection string cut at the places that matter for its secrets. The user info ends at the LAST '@'
 * before the path or query, so a password holding an unencoded '@' is never read as part of the host.
 */
interface UriParts {
  scheme: string;
  engine: ConnectionEngine;
  /** Everything before the last '@' of the authority, as typed; undefined when there is no '@'. */
  userInfo?: string;
  hosts: string;
  /** The path after the hosts' '/', as typed. */
  path?: string;
  /** The query after '?', as typed. */
  query?: string;
}

function uriParts(text: string): UriParts | undefined {
  const m = /^(mongodb(?:\+srv)?|postgres(?:ql)?):\/\/([^/?#]*)(?:\/([^?#]*))?(?:\?([^#]*))?$/i.exec(text.trim());
  if (!m) return undefined;
  const scheme = m[1]!;
  const authority = m[2]!;
  const at = authority.lastIndexOf('@');
  const parts: UriParts = { scheme, engine: scheme.toLowerCase().startsWith('mongodb') ? 'mongodb' : 'postgres', hosts: at < 0 ? authority : authority.slice(at + 1) };
  if (at >= 0) parts.userInfo = authority.slice(0, at);
  if (m[3] !== undefined) parts.path = m[3];
  if (m[4] !== undefined) parts.query = m[4];
  return parts;
}

function decodedParam(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
}

/**
 * The query of a connection string without the secrets it may carry, each pair kept as typed otherwise:
 * PostgreSQL's `password` parameter (libpq reads it like the user info's), and MongoDB's
 * `authMechanismProperties` entry AWS_SESSION_TOKEN. Also returns the password parameter's value.
 */
function querySecrets(engine: ConnectionEngine, query: string): { query: string; password?: string } {
  let password: string | undefined;
  const kept: string[] = [];
  for (const pair of query.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const key = decodedParam(eq < 0 ? pair : pair.slice(0, eq));
    const value = eq < 0 ? '' : pair.slice(eq + 1);
    if (engine === 'postgres' && key.toLowerCase() === 'password') {
      password = decodedParam(value);
      continue;
    }
    if (engine === 'mongodb' && key.toLowerCase() === 'authmechanismproperties') {
      const props = decodedParam(value).split(',').filter((p) => !/^\s*AWS_SESSION_TOKEN\s*:/i.test(p));
      if (props.length > 0) kept.push(`${pair.slice(0, eq)}=${props.map((p) => encodeURIComponent(p).replace(/%3A/gi, ':')).join(',')}`);
      continue;
    }
    kept.push(pair);
  }
  return password !== undefined ? { query: kept.join('&'), password } : { query: kept.join('&') };
}

/**
 * A connection string split into what may be stored (`uri`, without any password or token) and the
 * password to keep in SecretStorage: the user info's (everything after its first ':', up to the last
 * '@', percent-decoded) or PostgreSQL's `password` parameter, which wins as it does for libpq. Pure, so
 * the rule is tested without the editor. Undefined when the text is not a connection string.
 */
export function splitUriSecret(text: string): { uri: string; password?: string } | undefined {
  const p = uriParts(text);
  if (!p) return undefined;
  let password: string | undefined;
  let user: string | undefined;
  if (p.userInfo !== undefined) {
    const colon = p.userInfo.indexOf(':');
    user = colon < 0 ? p.userInfo : p.userInfo.slice(0, colon);
    if (colon >= 0) password = decodedParam(p.userInfo.slice(colon + 1));
  }
  const q = p.query !== undefined ? querySecrets(p.engine, p.query) : undefined;
  if (q?.password !== undefined) password = q.password;
  const uri = `${p.scheme}://${user !== undefined ? `${user}@` : ''}${p.hosts}${p.path !== undefined ? `/${p.path}` : ''}${q && q.query !== '' ? `?${q.query}` : ''}`;
  return password !== undefined ? { uri, password } : { uri };
}

/** Reads a MongoDB or PostgreSQL connection string; returns one sentence when it is not one. */
export function parseConnectionString(text: string): { ok: true; value: ParsedUri } | { ok: false; error: string } {
  const s = text.trim();
  const parts = uriParts(s);
  if (!parts) {
    if (/^\s*(host|dbname|user)=/.test(s)) return { ok: false, error: 'Key=value connection strings are not supported: use a postgresql:// URI or the host and port form.' };
    if (/^(mongodb(?:\+srv)?|postgres(?:ql)?):\/\/[^#]*#/i.test(s)) return { ok: false, error: "The connection string holds a '#': in a user name or password it must be percent-encoded, as %23." };
    return { ok: false, error: 'This is not a connection string: it must start with mongodb://, mongodb+srv://, postgres:// or postgresql://.' };
  }
  const engine = parts.engine;
  if (!parts.hosts) return { ok: false, error: 'The connection string names no host.' };
  const port = hostListPortProblem(parts.hosts);
  if (port) return { ok: false, error: `The connection string cannot be used: ${port}.` };
  let user: string | undefined;
  let password: string | undefined;
  if (parts.userInfo !== undefined) {
    const colon = parts.userInfo.indexOf(':');
    // Without a ':' there is no password, so an '@' inside the user info is ambiguous: a user name with an
    // unencoded '@', or a ':' forgotten before a password. Nothing that may be a password is stored.
    if (colon < 0 && parts.userInfo.includes('@')) {
      return { ok: false, error: "The user name in the connection string holds an '@' that is not percent-encoded: write user:password@host, and an '@' inside a user name as %40." };
    }
    try {
      user = decodeURIComponent(colon < 0 ? parts.userInfo : parts.userInfo.slice(0, colon)) || undefined;
      if (colon >= 0) password = decodeURIComponent(parts.userInfo.slice(colon + 1));
    } catch {
      return { ok: false, error: 'The user name or password in the connection string is not correctly percent-encoded.' };
    }
  }
  let database: string | undefined;
  try {
    database = parts.path ? decodeURIComponent(parts.path) : undefined;
  } catch {
    return { ok: false, error: 'The database name in the connection string is not correctly percent-encoded.' };
  }
  const q = querySecrets(engine, parts.query ?? '');
  if (q.password !== undefined) password = q.password;
  const value: ParsedUri = { engine, hosts: parts.hosts, params: new URLSearchParams(q.query), srv: parts.scheme.toLowerCase() === 'mongodb+srv' };
  if (user !== undefined) value.user = user;
  if (password !== undefined) value.password = password;
  if (database) value.database = database;
  return { ok: true, value };
}

/**
 * The connection string with its password removed (what may be stored and shown): the user info's, a
 * PostgreSQL `password` parameter, a MongoDB AWS_SESSION_TOKEN.
 */
export function withoutPassword(text: string): string {
  return splitUriSecret(text)?.uri ?? text.trim().replace(/^([a-z+]+:\/\/[^:@/?#]*):[^/?#]*@/i, '$1@');
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
  // A user named only by a parameter (`?user=app`): the password joins it the same way.
  if (password && p.user === undefined && spec.engine === 'postgres') params.set('password', password);
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
  // Up to the last '@' of the authority: a password may hold an unencoded '@'.
  let out = text.replace(/([a-z+]+:\/\/[^:@/\s?#]*):[^/\s?#]*@/gi, '$1:****@');
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
