// Table references of a statement, rewritten: a measurement runs the user's statement on temporary
// copies of its tables, and a name written with its schema (app.orders, "Sales"."Orders") does not
// resolve to a temporary table of the same name the way an unqualified one does, so its text is
// replaced by the copy's name. The parse tree gives each reference and where it starts; the scanner
// gives the tokens of the dotted name, so quoting and spacing as written are replaced whole.

import { ByteMap } from './bytes';
import { parseSqlSync, scanSqlSync, sqlParserLoaded } from './parser';
import { forEachNode } from './tree';

/** A table a statement names: its schema as written (undefined when unqualified) and its name. */
export interface SqlRelation {
  schema?: string;
  name: string;
}

/**
 * The statement with every reference to a table that `rename` gives a new text for replaced by that
 * text; undefined when it cannot be parsed or scanned. Other references stay as written.
 */
export function renameRelations(sql: string, rename: (rel: SqlRelation) => string | undefined): string | undefined {
  if (!sqlParserLoaded()) return undefined;
  let tree: unknown;
  let tokens: { start: number; end: number; tokenName: string }[];
  try {
    tree = parseSqlSync(sql);
    tokens = scanSqlSync(sql);
  } catch {
    return undefined;
  }
  const bytes = new ByteMap(sql);
  const edits: { start: number; end: number; text: string }[] = [];
  forEachNode(tree, (node) => {
    const rv = node['RangeVar'] as Record<string, unknown> | undefined;
    if (!rv || typeof rv['relname'] !== 'string' || typeof rv['location'] !== 'number') return;
    const rel: SqlRelation = { name: rv['relname'] };
    if (typeof rv['schemaname'] === 'string') rel.schema = rv['schemaname'];
    const text = rename(rel);
    if (text === undefined) return;
    // catalog.schema.name is five tokens, schema.name three, name one.
    const parts = (typeof rv['catalogname'] === 'string' ? 3 : rel.schema !== undefined ? 2 : 1) * 2 - 1;
    const first = tokens.findIndex((t) => t.start === rv['location']);
    const last = tokens[first + parts - 1];
    if (first < 0 || !last) return;
    edits.push({ start: bytes.char(tokens[first]!.start), end: bytes.char(last.end), text });
  });
  edits.sort((a, b) => a.start - b.start);
  let out = '';
  let at = 0;
  for (const e of edits) {
    if (e.start < at) continue;
    out += sql.slice(at, e.start) + e.text;
    at = e.end;
  }
  return out + sql.slice(at);
}
