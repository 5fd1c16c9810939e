// What migrations and schema files do to tables, collections and indexes, statement by statement with
// their lines: `--changed-since` checks the queries on what a changed migration touches, and a query
// that lost its index is given the line that dropped it (a related location in SARIF, where a pull
// request shows it although the query's own lines did not change). SQL from PostgreSQL's own parse tree;
// scripts (MongoDB migrations) from Babel's tree: createIndex, dropIndex, drop and rename calls.

import { parse as babelParse } from '@babel/parser';
import { scriptParseOptions } from '../query/find/scriptIndex';
import { pushChildren, type BNode } from '../query/find/syntax';
import type { ScriptDialect } from '../query/find/types';
import { ByteMap } from '../sql/bytes';
import { parseSqlSync, sqlParserLoaded } from '../sql/parser';
import { forEachNode } from '../sql/tree';
import type { RelatedPlace } from './policy';

export type DdlAction = 'create-table' | 'alter-table' | 'drop-table' | 'create-index' | 'drop-index' | 'drop-constraint' | 'rename' | 'other';

/** One statement or call of a migration or schema file. */
export interface DdlStatement {
  file: string;
  line: number;
  column: number;
  action: DdlAction;
  /** Tables or collections it names. */
  targets: string[];
  /** Indexes (or constraints, which PostgreSQL backs with indexes) it creates, drops or renames. */
  indexes: string[];
  /** The statement's first line, for a message. */
  text: string;
}

type Node = Record<string, unknown>;

function relname(v: unknown): string | undefined {
  const rv = (v as { RangeVar?: { relname?: unknown } } | undefined)?.RangeVar ?? (v as { relname?: unknown } | undefined);
  return typeof rv?.relname === 'string' ? rv.relname : undefined;
}

/** The last name of each dotted name a DropStmt lists (`app.orders_idx` is orders_idx). */
function dropNames(objects: unknown): string[] {
  const out: string[] = [];
  for (const o of (objects as Node[] | undefined) ?? []) {
    const items = ((o['List'] as { items?: Node[] } | undefined)?.items ?? [o]).map((i) => (i['String'] as { sval?: string } | undefined)?.sval).filter((s): s is string => s !== undefined);
    if (items.length > 0) out.push(items[items.length - 1]!);
  }
  return out;
}

/** The DDL statements of a SQL text; a text that does not parse (or no parser loaded) gives none. */
export function readSqlDdl(text: string, file: string): DdlStatement[] {
  if (!sqlParserLoaded()) return [];
  let stmts: { stmt?: Node; stmt_location?: number }[];
  try {
    stmts = (parseSqlSync(text).stmts ?? []) as { stmt?: Node; stmt_location?: number }[];
  } catch {
    return [];
  }
  const bytes = new ByteMap(text);
  const out: DdlStatement[] = [];
  for (const st of stmts) {
    const stmt = st.stmt ?? {};
    const kind = Object.keys(stmt)[0];
    const body = (kind ? stmt[kind] : undefined) as Node | undefined;
    if (!kind || !body) continue;
    let start = bytes.char(st.stmt_location ?? 0);
    while (start < text.length && /\s/.test(text[start]!)) start++;
    // A statement's location includes the comments before it: the statement is where its code starts.
    for (;;) {
      if (text.startsWith('--', start)) start = text.indexOf('\n', start) === -1 ? text.length : text.indexOf('\n', start) + 1;
      else if (text.startsWith('/*', start)) start = text.indexOf('*/', start) === -1 ? text.length : text.indexOf('*/', start) + 2;
      else break;
      while (start < text.length && /\s/.test(text[start]!)) start++;
    }
    const where = lineColumn(text, start);
    const first = text.slice(start, text.indexOf('\n', start) === -1 ? text.length : text.indexOf('\n', start)).trim();
    const base = { file, line: where.line, column: where.column, text: first };
    if (kind === 'CreateStmt') {
      const t = relname(body['relation']);
      const constraints: string[] = [];
      forEachNode(body['tableElts'], (n) => {
        const c = n['Constraint'] as { conname?: string } | undefined;
        if (c?.conname) constraints.push(c.conname);
      });
      out.push({ ...base, action: 'create-table', targets: t ? [t] : [], indexes: constraints });
    } else if (kind === 'IndexStmt') {
      const t = relname(body['relation']);
      out.push({ ...base, action: 'create-index', targets: t ? [t] : [], indexes: typeof body['idxname'] === 'string' ? [body['idxname']] : [] });
    } else if (kind === 'AlterTableStmt') {
      const t = relname(body['relation']);
      const dropped: string[] = [];
      let drops = false;
      for (const c of (body['cmds'] as { AlterTableCmd?: Node }[] | undefined) ?? []) {
        const cmd = c.AlterTableCmd;
        if (cmd?.['subtype'] === 'AT_DropConstraint' && typeof cmd['name'] === 'string') {
          dropped.push(cmd['name']);
          drops = true;
        }
      }
      out.push({ ...base, action: drops ? 'drop-constraint' : 'alter-table', targets: t ? [t] : [], indexes: dropped });
    } else if (kind === 'DropStmt') {
      const type = body['removeType'];
      const names = dropNames(body['objects']);
      if (type === 'OBJECT_INDEX') out.push({ ...base, action: 'drop-index', targets: [], indexes: names });
      else if (type === 'OBJECT_TABLE') out.push({ ...base, action: 'drop-table', targets: names, indexes: [] });
    } else if (kind === 'RenameStmt') {
      const t = relname(body['relation']);
      const type = body['renameType'];
      const indexes = type === 'OBJECT_INDEX' && t ? [t] : [];
      out.push({ ...base, action: 'rename', targets: type === 'OBJECT_INDEX' ? [] : t ? [t] : [], indexes });
    } else if (kind === 'ClusterStmt' || kind === 'VacuumStmt' || kind === 'CreateStatsStmt' || kind === 'AlterTableSpaceOptionsStmt') {
      const targets: string[] = [];
      forEachNode(body, (n) => {
        const r = n['RangeVar'] as { relname?: string } | undefined;
        if (r?.relname) targets.push(r.relname);
      });
      out.push({ ...base, action: 'other', targets, indexes: [] });
    }
  }
  return out;
}

const MONGO_DDL: Record<string, DdlAction> = {
  createIndex: 'create-index', ensureIndex: 'create-index', createIndexes: 'create-index',
  dropIndex: 'drop-index', dropIndexes: 'drop-index', drop: 'drop-table', rename: 'rename', createCollection: 'create-table',
};

/**
 * The index and collection calls of a script (a MongoDB migration): `db.collection('x').dropIndex('name')`,
 * `db.x.createIndex(...)`, `db.getCollection('x').drop()`, `db.createCollection('x')`. A script that does
 * not parse gives none.
 */
export function readScriptDdl(text: string, file: string, dialect: ScriptDialect): DdlStatement[] {
  let program: BNode;
  try {
    program = (babelParse(text, scriptParseOptions(dialect)) as unknown as { program: BNode }).program;
  } catch {
    return [];
  }
  const out: DdlStatement[] = [];
  const stack: BNode[] = [program];
  while (stack.length > 0) {
    const n = stack.pop()!;
    const children: BNode[] = [];
    pushChildren(n, children);
    stack.push(...children);
    if (n.type !== 'CallExpression' || n.callee?.type !== 'MemberExpression' || n.callee.computed) continue;
    const method = n.callee.property?.name ?? '';
    const action = MONGO_DDL[method];
    if (!action) continue;
    const args = n.arguments ?? [];
    const collection = method === 'createCollection' ? literal(args[0]) : collectionOf(n.callee.object);
    if (collection === undefined) continue;
    const indexes: string[] = [];
    if (method === 'dropIndex') {
      const name = literal(args[0]);
      if (name !== undefined) indexes.push(name);
    } else if (method === 'dropIndexes') {
      for (const el of args[0]?.type === 'ArrayExpression' ? args[0].elements ?? [] : [args[0]]) {
        const name = literal(el ?? undefined);
        if (name !== undefined) indexes.push(name);
      }
    } else if (action === 'create-index') {
      for (const a of args) {
        if (a?.type !== 'ObjectExpression') continue;
        for (const p of a.properties ?? []) {
          if (p.type === 'ObjectProperty' && (p.key?.name === 'name' || p.key?.value === 'name')) {
            const name = literal(p.value as BNode | undefined);
            if (name !== undefined) indexes.push(name);
          }
        }
      }
    }
    const where = lineColumn(text, n.start);
    const lineEnd = text.indexOf('\n', n.start);
    out.push({ file, line: where.line, column: where.column, action, targets: [collection], indexes, text: text.slice(n.start, lineEnd === -1 ? n.end : Math.min(n.end, lineEnd)).trim() });
  }
  return out.sort((a, b) => a.line - b.line || a.column - b.column);
}

function literal(n: BNode | undefined): string | undefined {
  if (n?.type === 'StringLiteral') return String(n.value);
  if (n?.type === 'TemplateLiteral' && (n.expressions ?? []).length === 0) return (n.quasis?.[0] as { value?: { cooked?: string } } | undefined)?.value?.cooked;
  return undefined;
}

/** `db.collection('x')`, `db.getCollection('x')`, the shell's `db.x`. */
function collectionOf(o: BNode | undefined): string | undefined {
  if (!o) return undefined;
  if (o.type === 'AwaitExpression') return collectionOf(o.argument);
  if (o.type === 'CallExpression' && o.callee?.type === 'MemberExpression' && ['collection', 'getCollection'].includes(o.callee.property?.name ?? '')) return literal(o.arguments?.[0]);
  if (o.type === 'MemberExpression' && !o.computed && o.object?.type === 'Identifier' && o.object.name === 'db') return o.property?.name;
  return undefined;
}

/** Which table each index belongs to, from every statement that creates one (later statements win). */
export function indexTables(statements: readonly DdlStatement[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const s of statements) if ((s.action === 'create-index' || s.action === 'create-table') && s.targets[0] !== undefined) for (const ix of s.indexes) out.set(ix, s.targets[0]);
  return out;
}

/** The tables and collections a set of statements touches: named, or owning an index they create or drop. */
export function touchedTargets(statements: readonly DdlStatement[], owners: ReadonlyMap<string, string>): Set<string> {
  const out = new Set<string>();
  for (const s of statements) {
    for (const t of s.targets) out.add(t);
    for (const ix of s.indexes) {
      const owner = owners.get(ix);
      if (owner !== undefined) out.add(owner);
    }
  }
  return out;
}

/**
 * The statement that took the index away from the table: the last one that drops the index, drops the
 * constraint of that name, renames the index, or drops the table. `statements` in the order they run
 * (files by name, then by line).
 */
export function causeOfLostIndex(statements: readonly DdlStatement[], target: string, index: string): RelatedPlace | undefined {
  for (let i = statements.length - 1; i >= 0; i--) {
    const s = statements[i]!;
    const drops = ((s.action === 'drop-index' || s.action === 'drop-constraint' || s.action === 'rename') && s.indexes.includes(index))
      || (s.action === 'drop-table' && s.targets.includes(target));
    if (!drops) continue;
    const what = s.action === 'drop-table' ? `drops ${target}, and with it ${index}` : s.action === 'rename' ? `renames ${index}` : `drops ${index}`;
    return { file: s.file, line: s.line, column: s.column, message: `${s.file}:${s.line} ${what}: ${s.text}` };
  }
  return undefined;
}

/** The tables a SQL statement names (unqualified), from the parse tree; none when it does not parse. */
export function sqlTables(sql: string): string[] {
  if (!sqlParserLoaded()) return [];
  const out = new Set<string>();
  try {
    forEachNode(parseSqlSync(sql), (n) => {
      const r = n['RangeVar'] as { relname?: string } | undefined;
      if (typeof r?.relname === 'string') out.add(r.relname);
    });
  } catch {
    return [];
  }
  return [...out].sort();
}

function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let last = -1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    last = i;
  }
  return { line, column: offset - last };
}
