// Names written into SQL or shown in a plan: an identifier quoted where PostgreSQL would need it, as
// quote_ident does. The finder's statements, the advisor's CREATE INDEX and the plan's node names use it.

/**
 * Identifiers PostgreSQL reads as keywords where a name stands: its reserved keywords and those it reserves
 * for functions and types (`join`, `left`, `like`), as the grammar's keyword list classes them.
 */
const RESERVED = new Set(['all', 'analyse', 'analyze', 'and', 'any', 'array', 'as', 'asc', 'asymmetric', 'both', 'case', 'cast', 'check',
  'collate', 'column', 'constraint', 'create', 'current_catalog', 'current_date', 'current_role', 'current_time', 'current_timestamp',
  'current_user', 'default', 'deferrable', 'desc', 'distinct', 'do', 'else', 'end', 'except', 'false', 'fetch', 'for', 'foreign', 'from',
  'grant', 'group', 'having', 'in', 'initially', 'intersect', 'into', 'lateral', 'leading', 'limit', 'localtime', 'localtimestamp', 'not',
  'null', 'offset', 'on', 'only', 'or', 'order', 'placing', 'primary', 'references', 'returning', 'select', 'session_user', 'some',
  'symmetric', 'system_user', 'table', 'then', 'to', 'trailing', 'true', 'union', 'unique', 'user', 'using', 'variadic', 'when', 'where',
  'window', 'with',
  'authorization', 'binary', 'collation', 'concurrently', 'cross', 'current_schema', 'freeze', 'full', 'ilike', 'inner', 'is', 'isnull',
  'join', 'left', 'like', 'natural', 'notnull', 'outer', 'overlaps', 'right', 'similar', 'tablesample', 'verbose']);

export function quoteIdent(name: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(name) && !RESERVED.has(name) ? name : `"${name.replace(/"/g, '""')}"`;
}

/** A possibly qualified name (`u.email`, `public.orders`), each part quoted as needed. */
export function quoteQualified(name: string): string {
  return name.split('.').map(quoteIdent).join('.');
}
