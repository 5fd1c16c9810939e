// Indexes and keys declared in a Prisma schema (schema.prisma), read from the schema language as Prisma
// documents it: in each `model` block, `@id` and `@unique` on a field, `@@id([...])`, `@@unique([...])`,
// `@@index([...])` with `sort: Desc`, `map:` and `type:`, and `@@map`/`@map` for the table's and the
// columns' names in the database. Written here rather than taken from a parser package: the ones that
// exist bring a parser generator or a configuration loader with them, for the few constructs read here.
//
// Each model's table and columns are kept (`prismaModels`), so the finder writes the SQL of
// `prisma.order.findMany(...)` with the database's names. Its indexes are given twice when names are
// mapped: under the database's table and column names, and under the model and field names (how the
// finder writes a Prisma call when it is not given the schema).

import { addTableIndex } from './script';
import type { DeclaredPgIndex, RepositorySchema } from './types';

interface Field { name: string; column: string; attributes: string }
interface Key { kind: 'id' | 'unique' | 'index'; fields: { name: string; desc?: boolean }[]; map?: string; method?: string }

export function readPrismaSchema(text: string, source: string, into: RepositorySchema): void {
  const clean = stripComments(text);
  for (const m of clean.matchAll(/(^|\n)\s*model\s+([A-Za-z_][\w]*)\s*\{/g)) {
    const open = (m.index ?? 0) + m[0].length;
    const close = matchingBrace(clean, open - 1);
    if (close < 0) {
      into.warnings.push(`${source}: the model ${m[2]} has no closing brace and was not read.`);
      continue;
    }
    readModel(m[2]!, clean.slice(open, close), source, into);
  }
  // A `view` block (Prisma's views) is a relation the client reads that takes no index of its own.
  for (const m of clean.matchAll(/(^|\n)\s*view\s+([A-Za-z_][\w]*)\s*\{/g)) {
    const open = (m.index ?? 0) + m[0].length;
    const close = matchingBrace(clean, open - 1);
    const body = close < 0 ? '' : clean.slice(open, close);
    const mapped = /@@map\s*\(([^)]*)\)/.exec(body);
    const name = (mapped && firstString(mapped[1]!)) ?? m[2]!;
    into.views?.set(name, 'view');
    into.prismaModels.set(m[2]!, { table: name, columns: {} });
  }
}

function readModel(model: string, body: string, source: string, into: RepositorySchema): void {
  const fields: Field[] = [];
  const keys: Key[] = [];
  let table = model;
  for (const line of logicalLines(body)) {
    if (line.startsWith('@@')) {
      const attr = /^@@(\w+)\s*(\(([\s\S]*)\))?$/.exec(line);
      if (!attr) continue;
      const [, name, , args = ''] = attr;
      if (name === 'map') table = firstString(args) ?? table;
      else if (name === 'id' || name === 'unique' || name === 'index') {
        const list = fieldList(args);
        if (list.length === 0) continue;
        const key: Key = { kind: name, fields: list };
        const map = namedString(args, 'map');
        if (map !== undefined) key.map = map;
        const type = /\btype\s*:\s*(\w+)/.exec(args)?.[1];
        if (type) key.method = type.toLowerCase();
        keys.push(key);
      }
      continue;
    }
    const f = /^([A-Za-z_]\w*)\s+([A-Za-z_][\w.]*(\([^)]*\))?(\[\])?\??)\s*(.*)$/.exec(line);
    if (!f) continue;
    const attributes = f[5] ?? '';
    const mapped = /@map\s*\(([^)]*)\)/.exec(attributes);
    const field: Field = { name: f[1]!, column: (mapped && firstString(mapped[1]!)) ?? f[1]!, attributes };
    fields.push(field);
    // `@id` and `@unique` on a field, with their own `map:` for the constraint's name.
    for (const a of attributes.matchAll(/@(id|unique)\b\s*(\(([^)]*)\))?/g)) {
      const key: Key = { kind: a[1] as 'id' | 'unique', fields: [{ name: field.name }] };
      const map = a[3] !== undefined ? namedString(a[3], 'map') : undefined;
      if (map !== undefined) key.map = map;
      keys.push(key);
    }
  }
  const column = (name: string) => fields.find((f) => f.name === name)?.column ?? name;
  const columns: Record<string, string> = {};
  for (const f of fields) if (f.column !== f.name) columns[f.name] = f.column;
  into.prismaModels.set(model, { table, columns });
  // A Prisma schema lists every model its client reads: its tables are all of that database's.
  into.tableSources?.add(source);
  if (!into.tables.has(table)) into.tables.set(table, []);
  const mapped = table !== model || keys.some((k) => k.fields.some((f) => column(f.name) !== f.name));
  for (const key of keys) {
    const dbCols = key.fields.map((f) => column(f.name));
    const name = key.map ?? (key.kind === 'id' ? `${table}_pkey` : `${table}_${dbCols.join('_')}_${key.kind === 'unique' ? 'key' : 'idx'}`);
    const make = (t: string, cols: string[]): DeclaredPgIndex => {
      const ix: DeclaredPgIndex = { name, table: t, columns: cols.map((c, i) => ({ column: c, ...(key.fields[i]!.desc ? { desc: true } : {}) })), source, method: key.method ?? 'btree' };
      if (key.kind !== 'index') ix.unique = true;
      if (key.kind === 'id') ix.primary = true;
      return ix;
    };
    addTableIndex(into, make(table, dbCols));
    if (mapped) addTableIndex(into, make(model, key.fields.map((f) => f.name)));
  }
}

/** `//` and `///` comments removed (not inside strings), the text's length kept. */
function stripComments(text: string): string {
  let out = '';
  let quote = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quote) {
      if (ch === '\\') {
        out += ch + (text[i + 1] ?? '');
        i++;
        continue;
      }
      if (ch === '"') quote = false;
      out += ch;
      continue;
    }
    if (ch === '"') quote = true;
    if (ch === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') {
        out += ' ';
        i++;
      }
      if (i < text.length) out += '\n';
      continue;
    }
    out += ch;
  }
  return out;
}

function matchingBrace(text: string, open: number): number {
  let depth = 0;
  let quote = false;
  for (let i = open; i < text.length; i++) {
    const ch = text[i]!;
    if (quote) {
      if (ch === '\\') i++;
      else if (ch === '"') quote = false;
      continue;
    }
    if (ch === '"') quote = true;
    else if (ch === '{') depth++;
    else if (ch === '}' && --depth === 0) return i;
  }
  return -1;
}

/** The body's lines, a line continued while a bracket or parenthesis is open. */
function logicalLines(body: string): string[] {
  const out: string[] = [];
  let cur = '';
  let depth = 0;
  for (const raw of body.split('\n')) {
    cur = cur === '' ? raw.trim() : `${cur} ${raw.trim()}`;
    for (const ch of raw.replace(/"(?:[^"\\]|\\.)*"/g, '""')) {
      if (ch === '(' || ch === '[') depth++;
      else if (ch === ')' || ch === ']') depth--;
    }
    if (depth <= 0) {
      if (cur !== '') out.push(cur);
      cur = '';
      depth = 0;
    }
  }
  if (cur !== '') out.push(cur);
  return out;
}

/** The fields of `[a, b(sort: Desc)]` or `fields: [a, b]`. */
function fieldList(args: string): { name: string; desc?: boolean }[] {
  const open = args.indexOf('[');
  if (open < 0) return [];
  let depth = 0;
  let close = -1;
  for (let i = open; i < args.length; i++) {
    if (args[i] === '[' || args[i] === '(') depth++;
    else if ((args[i] === ']' || args[i] === ')') && --depth === 0) {
      close = i;
      break;
    }
  }
  if (close < 0) return [];
  const inner = args.slice(open + 1, close);
  const out: { name: string; desc?: boolean }[] = [];
  for (const m of inner.matchAll(/([A-Za-z_]\w*)\s*(\(([^)]*)\))?/g)) {
    // Skip what sits inside an item's parentheses: only names at depth 0 of the list are fields.
    const before = inner.slice(0, m.index ?? 0);
    if ((before.match(/\(/g) ?? []).length !== (before.match(/\)/g) ?? []).length) continue;
    out.push({ name: m[1]!, ...(m[3] !== undefined && /\bsort\s*:\s*Desc\b/.test(m[3]) ? { desc: true } : {}) });
  }
  return out;
}

function firstString(args: string): string | undefined {
  const m = /"((?:[^"\\]|\\.)*)"/.exec(args);
  return m ? m[1]!.replace(/\\(.)/g, '$1') : undefined;
}

function namedString(args: string, name: string): string | undefined {
  const m = new RegExp(`\\b${name}\\s*:\\s*"((?:[^"\\\\]|\\\\.)*)"`).exec(args);
  return m ? m[1]!.replace(/\\(.)/g, '$1') : undefined;
}
