// Keys and indexes declared by Sequelize models, as Sequelize documents model definition:
// `sequelize.define('User', attributes, options)`, `User.init(attributes, options)` and `super.init(...)`
// in a model class's own static `init`. Each model is listed in the schema's `entities` under its model
// name and the name the code holds it by (`const User = sequelize.define('user', ...)`), with its table
// and the attributes whose columns differ, for the finder. The table is the
// one the finder's Sequelize reader gives the model (`tableName`, else the name pluralised, frozen or in
// snake_case as the options say); a column is its attribute's `field`, else its name (in snake_case when
// `underscored`). Read: `primaryKey: true` (else the `id` Sequelize adds), `unique: true` and
// `unique: 'name'` (attributes sharing a name make one key), and the `indexes` option (`fields` as names
// or `{ name | attribute, order }`, `unique`, `name`). Names follow PostgreSQL's for keys (`users_pkey`,
// `users_email_key`) and Sequelize's for indexes (`users_status_created_at`).

import { underscore } from 'inflection';
import { sequelizeTable } from '../query/find/sequelize';
import type { BNode } from '../query/find/syntax';
import type { ScriptDialect } from '../query/find/types';
import { forEachNode } from '../sql/tree';
import { addTableIndex, booleanValue, keyOf, parseScript, property, stringValue } from './script';
import type { DeclaredPgIndex, RepositorySchema } from './types';

/** Whether a script's text may define a Sequelize model, before it is parsed. */
export function mayDefineSequelizeModel(text: string): boolean {
  return text.includes('sequelize') && (text.includes('.define(') || text.includes('.init('));
}

export function readSequelizeModels(text: string, source: string, dialect: ScriptDialect, into: RepositorySchema): void {
  const program = parseScript(text, dialect, source, into, 'Sequelize models');
  if (!program) return;
  // `const User = sequelize.define(...)`: the code calls the model by the name that holds it.
  const heldBy = new Map<BNode, string>();
  forEachNode(program, (o) => {
    const n = o as unknown as BNode;
    if (n.type === 'VariableDeclarator' && n.id?.type === 'Identifier' && n.init) heldBy.set(n.init.type === 'AwaitExpression' && n.init.argument ? n.init.argument : n.init, n.id.name!);
  });
  forEachNode(program, (o) => {
    const n = o as unknown as BNode;
    // class User extends Model { static init(sequelize) { return super.init(attributes, { sequelize }) } }
    if ((n.type === 'ClassDeclaration' || n.type === 'ClassExpression') && n.id?.name) {
      const name = n.id.name;
      forEachNode(n.body as BNode, (x) => {
        const c = x as unknown as BNode;
        const args = c.arguments ?? [];
        if (c.type === 'CallExpression' && c.callee?.type === 'MemberExpression' && c.callee.object?.type === 'Super' && c.callee.property?.name === 'init' && args[0]?.type === 'ObjectExpression' && args[1]?.type === 'ObjectExpression') {
          readModel(stringValue(property(args[1], 'modelName')) ?? name, args[0], args[1], source, into, name);
        }
      });
      return;
    }
    if (n.type !== 'CallExpression' || n.callee?.type !== 'MemberExpression' || n.callee.computed) return;
    const method = n.callee.property?.name;
    const args = n.arguments ?? [];
    if (method === 'define' && args.length >= 2) {
      const model = stringValue(args[0]);
      if (model !== undefined && args[1]!.type === 'ObjectExpression') readModel(model, args[1]!, args[2], source, into, heldBy.get(n));
    } else if (method === 'init' && n.callee.object?.type === 'Identifier' && args[0]?.type === 'ObjectExpression' && args[1]?.type === 'ObjectExpression' && property(args[1], 'sequelize') !== undefined) {
      readModel(stringValue(property(args[1], 'modelName')) ?? n.callee.object.name!, args[0], args[1], source, into, n.callee.object.name);
    }
  });
}

function readModel(model: string, attributes: BNode, options: BNode | undefined, source: string, into: RepositorySchema, holder?: string): void {
  const opts = options?.type === 'ObjectExpression' ? options : undefined;
  const flag = (k: string) => (opts ? booleanValue(property(opts, k)) === true : false);
  const underscored = flag('underscored');
  const table = sequelizeTable(model, opts ? stringValue(property(opts, 'tableName')) : undefined, flag('freezeTableName'), underscored);
  const columns = new Map<string, string>();
  const primary: string[] = [];
  const uniques = new Map<string, string[]>();
  for (const p of attributes.properties ?? []) {
    const name = keyOf(p);
    if (name === undefined) continue;
    const def = p.value as BNode;
    const column = (def.type === 'ObjectExpression' ? stringValue(property(def, 'field')) : undefined) ?? (underscored ? underscore(name) : name);
    columns.set(name, column);
    if (def.type !== 'ObjectExpression') continue;
    if (booleanValue(property(def, 'primaryKey'))) primary.push(column);
    const unique = property(def, 'unique');
    // `unique: 'name'` joins the attributes that share the name into one key; `unique: { name }` too.
    const key = booleanValue(unique) ? `${table}_${column}_key` : stringValue(unique) ?? (unique?.type === 'ObjectExpression' ? stringValue(property(unique, 'name')) : undefined);
    if (key !== undefined) uniques.set(key, [...(uniques.get(key) ?? []), column]);
  }
  const make = (name: string, cols: { column: string; desc?: boolean }[], unique: boolean, isPrimary = false): DeclaredPgIndex => {
    const ix: DeclaredPgIndex = { name, table, columns: cols, source, method: 'btree' };
    if (unique) ix.unique = true;
    if (isPrimary) ix.primary = true;
    return ix;
  };
  // A model that declares no primary key gets the `id` Sequelize adds.
  addTableIndex(into, make(`${table}_pkey`, (primary.length > 0 ? primary : ['id']).map((column) => ({ column })), true, true));
  for (const [name, cols] of uniques) addTableIndex(into, make(name, cols.map((column) => ({ column })), true));
  const list = opts ? property(opts, 'indexes') : undefined;
  for (const el of list?.type === 'ArrayExpression' ? list.elements ?? [] : []) {
    if (el?.type !== 'ObjectExpression') continue;
    const fields = property(el, 'fields');
    const cols: { column: string; desc?: boolean }[] = [];
    for (const f of fields?.type === 'ArrayExpression' ? fields.elements ?? [] : []) {
      const attr = f?.type === 'ObjectExpression' ? stringValue(property(f, 'name')) ?? stringValue(property(f, 'attribute')) : stringValue(f ?? undefined);
      if (attr === undefined) continue;
      const desc = f?.type === 'ObjectExpression' && /^desc/i.test(stringValue(property(f, 'order')) ?? '');
      cols.push({ column: columns.get(attr) ?? attr, ...(desc ? { desc: true } : {}) });
    }
    if (cols.length === 0) continue;
    const name = stringValue(property(el, 'name')) ?? `${table}_${cols.map((c) => c.column).join('_')}`;
    addTableIndex(into, make(name, cols, booleanValue(property(el, 'unique')) === true));
  }
  const renamed = Object.fromEntries([...columns].filter(([a, c]) => a !== c));
  const entity = { library: 'sequelize' as const, table, columns: renamed, source };
  into.entities.set(model, entity);
  if (holder !== undefined && holder !== model) into.entities.set(holder, entity);
}
