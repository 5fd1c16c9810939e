// Keys and indexes declared by TypeORM entities, as TypeORM documents its decorators: the table of
// `@Entity('name')` or `@Entity({ name })` (else the name TypeORM's DefaultNamingStrategy gives the class,
// typeormTableName, as the finder's TypeORM reader writes it); `@PrimaryGeneratedColumn`, `@PrimaryColumn` and
// `@Column({ primary: true })` for the primary key; `@Column({ unique: true })`; `@Index()` on a column;
// `@Index([...])` and `@Unique([...])` on the class (field lists as arrays or `(e) => [e.a, e.b]`). A
// column is named by its `name` option, a relation's by its `@JoinColumn({ name })`, else as TypeORM names
// them (the property; a relation's `<property>Id`). TypeORM names its constraints with hashes; an index
// without a name of its own gets a readable one here (`PK_orders`, `UQ_orders_email`, `IDX_orders_status`).
// Each entity is also listed in the schema's `entities` by class name, with its table, the columns whose
// names differ from their properties, and whether it extends BaseEntity (its statics run queries), so the
// finder writes the real names and knows `User.find(...)` for TypeORM's.

import type { BNode } from '../query/find/syntax';
import { typeormTableName } from '../query/find/typeorm';
import type { ScriptDialect } from '../query/find/types';
import { forEachNode } from '../sql/tree';
import { addTableIndex, booleanValue, parseScript, property, stringValue } from './script';
import type { DeclaredPgIndex, RepositorySchema } from './types';

interface Decorator { name: string; args: BNode[] }

const COLUMN_DECORATORS = new Set(['Column', 'PrimaryColumn', 'PrimaryGeneratedColumn', 'CreateDateColumn', 'UpdateDateColumn', 'DeleteDateColumn', 'VersionColumn', 'ObjectIdColumn']);
const RELATIONS = new Set(['ManyToOne', 'OneToOne']);

/** Whether a script's text may declare a TypeORM entity, before it is parsed. */
export function mayDeclareEntity(text: string): boolean {
  return text.includes('@Entity');
}

export function readTypeormEntities(text: string, source: string, dialect: ScriptDialect, into: RepositorySchema): void {
  const program = parseScript(text, dialect, source, into, 'TypeORM entities');
  if (!program) return;
  // A class that extends BaseEntity, or a class of this file that does: its subclasses are active records too.
  const parents = new Map<string, string>();
  forEachNode(program, (o) => {
    const n = o as unknown as BNode;
    const parent = superName(n);
    if ((n.type === 'ClassDeclaration' || n.type === 'ClassExpression') && n.id?.name && parent !== undefined) parents.set(n.id.name, parent);
  });
  const activeRecord = (name: string | undefined): boolean => {
    for (let i = 0; name !== undefined && i < 8; i++, name = parents.get(name)) if (/BaseEntity$/.test(name)) return true;
    return false;
  };
  forEachNode(program, (o) => {
    const n = o as unknown as BNode;
    if (n.type !== 'ClassDeclaration' && n.type !== 'ClassExpression') return;
    const decorators = decoratorsOf(n);
    const entity = decorators.find((d) => d.name === 'Entity');
    if (!entity) return;
    readEntity(n, entity, decorators, activeRecord(superName(n)), source, into);
  });
}

function readEntity(cls: BNode, entity: Decorator, decorators: Decorator[], activeRecord: boolean, source: string, into: RepositorySchema): void {
  const first = entity.args[0];
  const table = stringValue(first) ?? (first?.type === 'ObjectExpression' ? stringValue(property(first, 'name')) : undefined) ?? (cls.id?.name ? typeormTableName(cls.id.name) : undefined);
  if (table === undefined) return;
  const columns = new Map<string, string>();
  const primary: string[] = [];
  const out: DeclaredPgIndex[] = [];
  const index = (kind: 'PK' | 'UQ' | 'IDX', cols: string[], name?: string): void => {
    if (cols.length === 0) return;
    const ix: DeclaredPgIndex = { name: name ?? `${kind}_${kind === 'PK' ? table : `${table}_${cols.join('_')}`}`, table, columns: cols.map((column) => ({ column })), source, method: 'btree' };
    if (kind !== 'IDX') ix.unique = true;
    if (kind === 'PK') ix.primary = true;
    out.push(ix);
  };
  const members = (cls as unknown as { body?: { body?: BNode[] } }).body?.body ?? [];
  // Columns first: class-level indexes name properties, whichever order they are written in.
  for (const m of members) {
    const prop = m.type === 'ClassProperty' && m.key?.type === 'Identifier' && !m.computed ? m.key.name : undefined;
    if (!prop) continue;
    const ds = decoratorsOf(m);
    const column = ds.find((d) => COLUMN_DECORATORS.has(d.name));
    const relation = ds.find((d) => RELATIONS.has(d.name));
    if (column) {
      const options = column.args.find((a) => a.type === 'ObjectExpression');
      columns.set(prop, (options ? stringValue(property(options, 'name')) : undefined) ?? prop);
      if (column.name.startsWith('Primary') || (options && booleanValue(property(options, 'primary')))) primary.push(columns.get(prop)!);
      else if (options && booleanValue(property(options, 'unique'))) index('UQ', [columns.get(prop)!]);
    } else if (relation) {
      const join = ds.find((d) => d.name === 'JoinColumn')?.args[0];
      columns.set(prop, (join?.type === 'ObjectExpression' ? stringValue(property(join, 'name')) : undefined) ?? `${prop}Id`);
    }
  }
  for (const m of members) {
    const prop = m.type === 'ClassProperty' && m.key?.type === 'Identifier' && !m.computed ? m.key.name : undefined;
    const col = prop !== undefined ? columns.get(prop) : undefined;
    if (col === undefined) continue;
    for (const d of decoratorsOf(m)) {
      if (d.name !== 'Index') continue;
      const options = d.args.find((a) => a.type === 'ObjectExpression');
      index(options && booleanValue(property(options, 'unique')) ? 'UQ' : 'IDX', [col], stringValue(d.args[0]));
    }
  }
  index('PK', primary);
  for (const d of decorators) {
    if (d.name !== 'Index' && d.name !== 'Unique') continue;
    const name = stringValue(d.args[0]);
    const fields = fieldList(d.args[name !== undefined ? 1 : 0]);
    if (!fields) continue;
    const options = d.args.find((a) => a.type === 'ObjectExpression');
    const unique = d.name === 'Unique' || (options !== undefined && booleanValue(property(options, 'unique')) === true);
    index(unique ? 'UQ' : 'IDX', fields.map((f) => columns.get(f) ?? f), name);
  }
  for (const ix of out) addTableIndex(into, ix);
  if (cls.id?.name) {
    const renamed = Object.fromEntries([...columns].filter(([p, c]) => p !== c));
    into.entities.set(cls.id.name, { library: 'typeorm', table, columns: renamed, ...(activeRecord ? { activeRecord: true } : {}), source });
  }
}

/** The class a class extends, when it is named (`extends BaseEntity`, `extends typeorm.BaseEntity`). */
export function superName(n: BNode): string | undefined {
  const sup = (n as unknown as { superClass?: BNode | null }).superClass;
  if (sup?.type === 'Identifier') return sup.name;
  if (sup?.type === 'MemberExpression' && !sup.computed) return sup.property?.name;
  return undefined;
}

/** The decorators on a class or member, by name, with their arguments (`@Index()` and `@Index` alike). */
function decoratorsOf(n: BNode): Decorator[] {
  const out: Decorator[] = [];
  for (const d of (n as unknown as { decorators?: { expression: BNode }[] }).decorators ?? []) {
    const e = d.expression;
    if (e.type === 'Identifier') out.push({ name: e.name!, args: [] });
    else if (e.type === 'CallExpression' && e.callee?.type === 'Identifier') out.push({ name: e.callee.name!, args: e.arguments ?? [] });
  }
  return out;
}

/** `['a', 'b']` or `(e) => [e.a, e.b]`: the properties an index lists. */
function fieldList(n: BNode | undefined): string[] | undefined {
  let list = n;
  if (list?.type === 'ArrowFunctionExpression' && list.body && !Array.isArray(list.body)) list = list.body;
  if (list?.type !== 'ArrayExpression') return undefined;
  const out: string[] = [];
  for (const el of list.elements ?? []) {
    const name = el?.type === 'MemberExpression' && !el.computed ? el.property?.name : stringValue(el ?? undefined);
    if (name === undefined) return undefined;
    out.push(name);
  }
  return out;
}
