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
  /** Any other failure the server reported while running the explain. */
  | 'server';

export class AdapterError extends Error {
  override readonly name = 'AdapterError';
  /** Server error code when there is one (PostgreSQL SQLSTATE, MongoDB numeric code). */
  readonly code?: string | number;
  /** MongoDB: the explain output as far as it ran, when a time limit or a kill stopped it. */
  readonly partialRawText?: string;

  constructor(readonly kind: AdapterErrorKind, message: string, extra: { code?: string | number; partialRawText?: string } = {}) {
    super(oneSentence(message));
    if (extra.code !== undefined) this.code = extra.code;
    if (extra.partialRawText !== undefined) this.partialRawText = extra.partialRawText;
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
 * secret given (the password itself, wherever a driver may have echoed it).
 */
export function scrub(text: string, secrets: readonly (string | undefined)[] = []): string {
  let out = text.replace(/(\b[a-z][a-z0-9+.-]*:\/\/)[^/\s@]*@/gi, '$1');
  out = out.replace(/\b(password|pwd)\s*=\s*('[^']*'|"[^"]*"|[^\s&;]+)/gi, '$1=***');
  for (const s of secrets) {
    if (s && s.length >= 3) out = out.split(s).join('***');
  }
  return out;
}

/** host:port list of a connection URI, for messages (never the user or password). */
export function describeHost(uri: string): string {
  const m = /^[a-z][a-z0-9+.-]*:\/\/(?:[^/?#@]*@)?([^/?#]*)/i.exec(uri.trim());
  return m && m[1] ? m[1] : 'the server';
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
