// The errors every adapter throws: one kind a front end can act on (ask for a password again, offer a
// longer timeout...) and one sentence a user can read. Never a stack trace, never a password or URI with
// credentials: messages are built from the server's first line and scrubbed before they leave here.

export type AdapterErrorKind =
  /** Login refused: wrong user or password, or not allowed to run the command. */
  | 'auth'
  /** Server not reachable: refused, unknown host, connection dropped, connect timeout. */
  | 'network'
  /** The server (or the local parser) rejects the query as written. */
  | 'syntax'
  /** statement_timeout / maxTimeMS expired. */
  | 'timeout'
  /** The caller cancelled; the work was stopped on the server. */
  | 'cancelled'
  /** The server or the statement cannot be explained this way (a second statement, $out without consent...). */
  | 'unsupported'
  /** The connection settings themselves are wrong (a malformed URI, no host). */
  | 'config'
  /**
   * Explaining would change something a rollback does not undo (a sequence, a volatile function, a
   * trigger), or planning may run a user-written function: nothing was run; the caller may ask the user.
   */
  | 'side-effects'
  /** Any other failure the server reported while running the explain. */
  | 'server';

export class AdapterError extends Error {
  override readonly name = 'AdapterError';
  /** Server error code when there is one (PostgreSQL SQLSTATE, MongoDB numeric code). */
  readonly code?: string | number;
  /** MongoDB: the explain output as far as it ran, when a time limit or a kill stopped it. */
  readonly partialRawText?: string;
  /** 'side-effects': what would change, one phrase each ("advance the sequence public.orders_id_seq"). */
  readonly sideEffects?: string[];

  constructor(readonly kind: AdapterErrorKind, message: string, extra: { code?: string | number; partialRawText?: string; sideEffects?: string[] } = {}) {
    super(oneSentence(message));
    if (extra.code !== undefined) this.code = extra.code;
    if (extra.partialRawText !== undefined) this.partialRawText = extra.partialRawText;
    if (extra.sideEffects !== undefined) this.sideEffects = extra.sideEffects;
  }
}

export function isAdapterError(err: unknown): err is AdapterError {
  return err instanceof AdapterError;
}

/** Shapes a message into one line ending with one full stop. */
export function oneSentence(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  if (line === '') return 'The database operation failed.';
  return /[.!?]$/.test(line) ? line : `${line}.`;
}

/** The first line of a server message, without its trailing full stop (for quoting inside a sentence). */
export function firstLine(text: unknown): string {
  const s = typeof text === 'string' ? text : text instanceof Error ? text.message : String(text ?? '');
  return (s.split('\n')[0] ?? '').trim().replace(/\.$/, '');
}

/**
 * Removes credentials from a text: the user-info part of any URI, `password=...` pairs, and each
 * secret given (the password itself, wherever a driver may have echoed it, and the longer pieces of it
 * between the characters a URI splits on, in case a driver echoed only the part after an unescaped '@').
 */
export function scrub(text: string, secrets: readonly (string | undefined)[] = []): string {
  let out = text.replace(/(\b[a-z][a-z0-9+.-]*:\/\/)[^\s]*@/gi, '$1');
  // A server's echo of a command it refused ("not authorized on shop to execute command { aggregate: ...")
  // holds the whole command, its values and session id: only the command's name is kept.
  out = out.replace(/\bto execute command \{\s*"?([A-Za-z_$][\w$]*)"?\s*:[\s\S]*$/, 'to run $1').replace(/\bcommand \{[\s\S]*$/, 'command');
  out = out.replace(/\b(password|pwd)\s*=\s*('[^']*'|"[^"]*"|[^\s&;]+)/gi, '$1=***');
  const pieces = new Set<string>();
  for (const s of secrets) {
    if (!s) continue;
    if (s.length >= 3) pieces.add(s);
    for (const piece of s.split(/[@/#?:]/)) if (piece.length >= 6) pieces.add(piece);
  }
  // Longest first, so a piece never leaves part of a longer secret behind.
  for (const s of [...pieces].sort((a, b) => b.length - a.length)) out = out.split(s).join('***');
  return out;
}

/** What follows the scheme of a URI, up to the end of its user info (the last '@'), when it has one. */
function userInfo(uri: string): { info: string; rest: string } | undefined {
  const s = typeof uri === 'string' ? uri.trim() : '';
  const m = /^[a-z][a-z0-9+.-]*:\/\//i.exec(s);
  if (!m) return undefined;
  const body = s.slice(m[0].length);
  // A password may hold an unescaped '@', '/', '#' or '?': the user info is taken to end at the LAST '@',
  // so that no piece of it is ever read as a host.
  const at = body.lastIndexOf('@');
  return at < 0 ? { info: '', rest: body } : { info: body.slice(0, at), rest: body.slice(at + 1) };
}

/**
 * The secrets a connection URI holds, for scrub(): the whole user info and the password as written and
 * percent-decoded. Works on malformed URIs too.
 */
export function uriSecrets(uri: string): string[] {
  const parts = userInfo(uri);
  if (!parts || parts.info === '') return [];
  const colon = parts.info.indexOf(':');
  const out = [parts.info];
  if (colon >= 0) {
    const password = parts.info.slice(colon + 1);
    out.push(password);
    try {
      out.push(decodeURIComponent(password));
    } catch {
      // A stray '%' leaves the raw password, already listed.
    }
  }
  return out;
}

/**
 * True when a URI has an '@' that the URI grammar does not read as the end of the user info: a password
 * with an unescaped '/', '#' or '?' before its '@'. Such a URI would connect somewhere else (or fail with
 * a message quoting part of the password), so it is refused as malformed.
 */
export function misplacedAt(uri: string): boolean {
  const s = typeof uri === 'string' ? uri.trim() : '';
  const m = /^[a-z][a-z0-9+.-]*:\/\//i.exec(s);
  if (!m) return false;
  const body = s.slice(m[0].length);
  const authorityEnd = body.search(/[/?#]/);
  if (authorityEnd < 0) return false;
  const after = body.slice(authorityEnd);
  // An '@' in a query value (application_name=me@host) is legitimate; one in the path, a fragment or a
  // parameter name is not.
  const query = after.indexOf('?');
  const beforeQuery = query < 0 ? after : after.slice(0, query);
  if (beforeQuery.includes('@')) return true;
  if (query < 0) return false;
  const [q, fragment] = [after.slice(query + 1).split('#')[0]!, after.slice(query + 1).split('#').slice(1).join('#')];
  if (fragment.includes('@')) return true;
  return q.split('&').some((pair) => (pair.split('=')[0] ?? '').includes('@'));
}

/** host:port list of a connection URI, for messages (never the user or password, even when malformed). */
export function describeHost(uri: string): string {
  const parts = userInfo(uri);
  if (!parts) return 'the server';
  const hosts = parts.rest.split(/[/?#]/)[0] ?? '';
  const valid = hosts !== '' && hosts.split(',').every((h) => /^(\[[0-9A-Fa-f:.%a-zA-Z]+\]|[A-Za-z0-9._~%-]+)(:\d{1,5})?$/.test(h));
  return valid ? hosts : 'the server';
}

/** Network-level failure codes of Node sockets and DNS. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'ECONNABORTED']);

export function isNetworkCode(code: unknown): boolean {
  return typeof code === 'string' && NETWORK_CODES.has(code);
}

/** Readable reason for a socket error code. */
export function networkReason(code: string): string {
  switch (code) {
    case 'ECONNREFUSED':
      return 'the connection was refused (is the server running on that port?)';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'the host name is unknown';
    case 'ETIMEDOUT':
      return 'the connection timed out';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'the host cannot be reached';
    default:
      return 'the connection was lost';
  }
}

/**
 * A port a URI names that no server can listen on ("port 99999 is out of range (1-65535)"), or
 * undefined. Read from the host list alone, so that a malformed password is not blamed for it.
 */
export function portProblem(uri: string): string | undefined {
  const parts = userInfo(uri);
  if (!parts) return undefined;
  return hostListPortProblem(parts.rest.split(/[/?#]/)[0] ?? '');
}

/** The first port of a host list ("a:1,b:2") that no server can listen on, in one phrase; undefined when all can. */
export function hostListPortProblem(hosts: string): string | undefined {
  for (const h of hosts.split(',')) {
    const m = /^(?:\[[^\]]*\]|[^:]*):(.*)$/.exec(h);
    if (!m || m[1] === '') continue;
    if (!/^\d+$/.test(m[1]!)) return `the port "${m[1]}" is not a number`;
    const port = Number(m[1]);
    if (port < 1 || port > 65535) return `port ${m[1]} is out of range (1-65535)`;
  }
  return undefined;
}

/** SQLSTATEs with which a PostgreSQL server ends a session, and why, in words a user reads. */
const PG_SESSION_ENDED: Record<string, string> = {
  '57P01': 'the server ended it (an administrator or another session terminated this backend, or the server is shutting down)',
  '57P02': 'the server ended it (another server process crashed, so every session was reset)',
  '57P04': 'the server ended it (the database was dropped)',
  '57P05': 'the server ended it (the session was idle longer than idle_session_timeout)',
  '25P03': 'the server ended it (the transaction was idle longer than idle_in_transaction_session_timeout)',
};

/**
 * Why a PostgreSQL connection is gone, when the error says it is: the server ended the session, the
 * socket closed under the driver, or the client was already unusable. Undefined for any other error.
 */
export function pgConnectionLost(err: unknown): string | undefined {
  const e = err as { code?: unknown; message?: unknown } | undefined;
  const code = typeof e?.code === 'string' ? e.code : undefined;
  if (code !== undefined && PG_SESSION_ENDED[code]) return PG_SESSION_ENDED[code];
  // Class 08 but 08P01 (protocol_violation), which the server also raises for a statement sent with the
  // wrong number of parameters, on a connection that goes on working.
  if (code !== undefined && code.startsWith('08') && code !== '08P01') return 'the server reported a connection failure';
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'the network connection was reset';
  const msg = typeof e?.message === 'string' ? e.message : '';
  if (/^Connection terminated unexpectedly/i.test(msg)) return 'the server closed it without a word (ended by an administrator, a crash or the network)';
  if (/not queryable|Client was closed|connection is closed|^Connection terminated$/i.test(msg)) return 'it had already been closed by an earlier failure';
  return undefined;
}

/** One sentence for a PostgreSQL connection lost `when` ("while the explain ran"), or undefined. */
export function pgLostError(err: unknown, when: string, host?: string): AdapterError | undefined {
  const why = pgConnectionLost(err);
  if (why === undefined) return undefined;
  const code = (err as { code?: unknown } | undefined)?.code;
  return new AdapterError('network', `The PostgreSQL connection${host && host !== 'the server' ? ` to ${host}` : ''} was lost ${when}: ${why}.`, typeof code === 'string' ? { code } : {});
}
