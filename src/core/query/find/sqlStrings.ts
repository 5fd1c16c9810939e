// SQL held in strings of a script (also written in pieces joined with `+`, or a `let` appended to with `+=`,
// read with every part present): the text passed to node-postgres (`client.query('...')`, an
// sql-template-strings statement with what is appended to it, read where it is run,
// `pool.query({ text, values })`, also TypeORM's and Sequelize's `.query(sql)`), and tagged templates of
// `sql`, postgres.js (`sql`/`tx` tags, fragments, `sql.unsafe`) and slonik. `${...}` parts become $n
// parameters and every character of the SQL maps back to the file, escapes included.

import { ByteMap } from '../../sql/bytes';
import { scanSqlSync, sqlParserLoaded } from '../../sql/parser';
import type { Extractor, CallReader } from './extractor';
import { classBuilt, type ClassBuilt } from './builderClass';
import { keyedSql, loadedSql, loaderSql, relativeTo } from './loadedSql';
import { normalisePlaceholders } from './placeholders';
import { replaceInSql, runsElsewhere } from './ranges';
import { parses, quoted, standInBare, standInName, standInWarning, withStandIns } from './standIns';
import { callersNote, functionOf, libraryOf, sqlParameterOf } from './origin';
import { declareNames, type Binding } from './scope';
import { cookedOf, isCall, isMember, keyName, propertyName, pushChildren, range, unwrap, type BNode } from './syntax';
import type { FoundSqlQuery, SourceRange, SqlOrigin, SqlParameter, SqlRun, SqlValue } from './types';

/** `EXPLAIN ${statement}` of a statement this file does not show (a helper's parameter): no query of its own. */
const EXPLAIN_OF_UNKNOWN = /^\s*explain\b(\s*\([^)]*\))?(\s+(analy[sz]e|verbose))*\s+\$\d+\s*;?\s*$/i;

const SQL_KEYWORD = /^\s*(?:--[^\n]*\n\s*|\/\*[\s\S]*?\*\/\s*)*\(*\s*(select|with|insert|update|delete|merge|values|table|explain|declare\s+\S+\s+(?:binary\s+)?(?:(?:in|a)?sensitive\s+)?(?:no\s+)?(?:scroll\s+)?cursor)\b/i;

/** `BEGIN;` opening a text of several statements sent as one (node-postgres's simple query runs them all). */
const TRANSACTION_HEAD = /^\s*(?:begin|start\s+transaction)(?:\s+(?:work|transaction))?\s*;/i;

/** `x.query('SELECT ...')` in a script, the node-postgres way. */
export const pgQueryCalls: CallReader = {
  read(n, ex) {
    if (ex.kind !== 'script' || n.type === 'TaggedTemplateExpression') return false;
    const callee = unwrap(n.callee!);
    if (!isMember(callee) || propertyName(callee) !== 'query') return false;
    return pgQuery(n, ex);
  },
};

/**
 * SQL handed to the application's own wrapper (`this.sql.getRows('SELECT ...', [id])`, `runQuery(sql)`),
 * a function this module or another of the workspace declares whose body passes that argument, unchanged,
 * to a method that runs SQL. Read when the argument is SQL the file shows, as node-postgres's query is.
 */
export const sqlWrapperCalls: CallReader = {
  read(n, ex) {
    if (ex.kind !== 'script' || !isCall(n) || (n.arguments?.length ?? 0) === 0) return false;
    // Cheap test first: some argument is a string or template that starts a statement.
    const args = n.arguments ?? [];
    const startsStatement = (r: BNode): boolean => {
      // A sum of strings (`'SELECT ... ' + 'WHERE ...'`) starts where its first part does.
      if (r.type === 'BinaryExpression' && r.operator === '+') return startsStatement(flattenSum(r)[0]!);
      const text = r.type === 'StringLiteral' ? (r.value as string) : r.type === 'TemplateLiteral' ? cookedStart(r) : undefined;
      return text !== undefined && SQL_KEYWORD.test(text);
    };
    let sqlAt = args.findIndex((a) => startsStatement(laidOut(ex, ex.resolve(a))));
    // Else the text a function of this file returns (`db.run(activeConfigs(), undefined, 'tag')`).
    if (sqlAt < 0) sqlAt = args.findIndex((a) => isCall(unwrap(a)) && throughOwnCall(ex, unwrap(a), (ret) => (startsStatement(ex.resolve(ret)) ? true : undefined)) === true);
    // Else a statement another module holds (`runQuery(orderQueries.byOwner, [id])`).
    if (sqlAt < 0) sqlAt = args.findIndex((a) => namesImported(ex, ex.resolve(a)) && heldElsewhere(ex, ex.resolve(a), range(n)) !== undefined);
    if (sqlAt < 0) return false;
    const target = functionOf(ex, n.callee!);
    if (!target || sqlParameterOf(target.fn) !== sqlAt) return false;
    const lit = ex.resolve(args[sqlAt]!);
    const found = sqlFromLiteral(ex, lit, lit.type === 'TemplateLiteral' ? 'template' : 'string', range(n));
    if (!found) return false;
    const values = args[sqlAt + 1] ? literalValues(ex, args[sqlAt + 1]!) : undefined;
    if (values) found.values = values;
    ex.consume(n);
    ex.push(found);
    return true;
  },
};

/**
 * Tags that only change a template's layout (common-tags' `oneLine`, `stripIndent(s)`, dedent, ts-dedent,
 * outdent): the SQL sent is the template's, its lines joined or unindented, and its `${...}` are values.
 */
const LAYOUT_TAGS: Record<string, string[]> = {
  'common-tags': ['oneLine', 'stripIndent', 'stripIndents'],
  dedent: ['default'],
  'ts-dedent': ['default', 'dedent'],
  outdent: ['default', 'outdent'],
};

/** The template of `oneLine\`...\``, when its tag only lays it out; else the node itself. */
function laidOut(ex: Extractor, n: BNode): BNode {
  if (n.type !== 'TaggedTemplateExpression') return n;
  const t = unwrap(n.tag!);
  const b = t.type === 'Identifier' ? ex.lookup(t.name!)?.binding : undefined;
  return b && 'from' in b && typeof b.from === 'string' && LAYOUT_TAGS[b.from]?.includes(b.imported ?? 'default') ? n.quasi! : n;
}

function cookedStart(t: BNode): string | undefined {
  const q = t.quasis?.[0];
  return q ? ((q.value as { cooked?: string; raw?: string } | undefined)?.cooked ?? (q.value as { raw?: string } | undefined)?.raw) : undefined;
}

/**
 * Tagged templates that make SQL: `sql`...``, postgres.js instances (`tx`...``, a tag imported from
 * postgres), slonik's `sql.type(...)`...`` and `sql.unsafe`...``; and postgres.js `sql.unsafe('...')`.
 */
export const sqlTags: CallReader = {
  read(n, ex) {
    if (n.type !== 'TaggedTemplateExpression') {
      const callee = isCall(n) ? unwrap(n.callee!) : undefined;
      // SQL`...`.append(SQL`...`): the statement with its parts, read where the chain ends.
      if (callee && isMember(callee) && propertyName(callee) === 'append' && appendChainOfTag(ex, n)) return statementTag(ex, n);
      if (!callee || !isMember(callee) || propertyName(callee) !== 'unsafe' || sqlTagName(ex, callee.object!) === undefined) return false;
      const lit = n.arguments?.[0] ? ex.resolve(n.arguments[0]) : undefined;
      const found = lit ? sqlFromLiteral(ex, lit, lit.type === 'TemplateLiteral' ? 'template' : 'string', range(n)) : undefined;
      if (!found) return false;
      const values = n.arguments?.[1] ? literalValues(ex, n.arguments[1]) : undefined;
      if (values) found.values = values;
      ex.push(found);
      return true;
    }
    // sql-syntax's fragments are read where `toQuery()` hands them to node-postgres.
    if (sqlTagName(ex, n.tag!) === undefined || isSyntaxTag(ex, n.tag!)) return false;
    if (isStatementTag(ex, n.tag!)) return statementTag(ex, n);
    const found = sqlFromLiteral(ex, n.quasi!, 'tagged-template', range(n));
    if (found) {
      const other = otherDatabaseOf(ex, n.tag!);
      if (other) found.otherDatabase = other;
      const note = callersNote(ex, n.tag!);
      if (note) found.warnings.push(note);
      ex.push(found);
    }
    // Fragments inside it are part of it, not queries of their own.
    ex.consumeInside(n);
    return true;
  },
};

/**
 * The package whose `sqls` tag makes a fragment (`SQLSyntax`) that `toQuery()` turns into the `[text,
 * values]` node-postgres is given spread (`pool.query(...sqls\`SELECT ...\`.toQuery())`): `${...}` parts are
 * values, or fragments spliced in.
 */
const SYNTAX_PACKAGE = 'sql-syntax';

/** What a name imports from sql-syntax (`sqls`, `default`, `SQLSyntax`, `escapeIdentifier`), if it does. */
function syntaxImport(ex: Extractor, e: BNode): string | undefined {
  const t = unwrap(e);
  const b = t.type === 'Identifier' ? ex.lookup(t.name!)?.binding : undefined;
  return b && 'from' in b && b.from === SYNTAX_PACKAGE ? (b.imported ?? 'default') : undefined;
}

function isSyntaxTag(ex: Extractor, tag: BNode): boolean {
  const t = unwrap(tag);
  return syntaxImport(ex, t) === 'sqls' || (isMember(t) && propertyName(t) === 'sqls' && isSyntaxClass(ex, t.object!));
}

/** `...statement.toQuery()` of an sql-syntax fragment written in place or held by a constant: the fragment. */
function syntaxStatement(ex: Extractor, spread: BNode): BNode | undefined {
  const call = unwrap(spread.argument!);
  if (!isCall(call) || (call.arguments?.length ?? 0) > 0) return undefined;
  const callee = unwrap(call.callee!);
  if (!isMember(callee) || propertyName(callee) !== 'toQuery') return undefined;
  return isSyntaxExpression(ex, callee.object!) ? unwrap(callee.object!) : undefined;
}

/** The SQL of an sql-syntax statement, with the tag it starts from (whose text the query's range covers). */
function syntaxBuilt(ex: Extractor, statement: BNode): { built: Built; lit: BNode } | undefined {
  let base = ex.resolve(statement);
  for (let i = 0; i < MAX_FRAGMENT_DEPTH && isCall(base); i++) base = ex.resolve(unwrap(base.callee!).object ?? base);
  if (base.type !== 'TaggedTemplateExpression') return undefined;
  const built: Built = { sql: '', runs: [], params: [] };
  const read = appendFragment(ex, statement, built, { next: 1 }, 1, false);
  if (read?.chose) built.chose = true;
  return read ? { built, lit: base.quasi! } : undefined;
}

/** The package whose `SQL` tag makes a statement object (`text`, `values`, `append`) that node-postgres runs. */
const STATEMENT_PACKAGE = 'sql-template-strings';

function isStatementTag(ex: Extractor, tag: BNode): boolean {
  const t = unwrap(tag);
  return t.type === 'Identifier' && ex.importSource(t.name!) === STATEMENT_PACKAGE;
}

/** What an expression's statement starts from: `SQL\`...\``, through `.append(...)` calls and a constant holding one. */
function statementBase(ex: Extractor, e: BNode, depth = 0): { base: BNode; appended: BNode[] } | undefined {
  const appended: BNode[] = [];
  let cur = unwrap(e);
  for (let i = 0; i < 64 && isCall(cur); i++) {
    const callee = unwrap(cur.callee!);
    if (!isMember(callee) || propertyName(callee) !== 'append' || cur.arguments?.length !== 1) return undefined;
    appended.unshift(cur.arguments[0]!);
    cur = unwrap(callee.object!);
  }
  if (cur.type === 'TaggedTemplateExpression') return isStatementTag(ex, cur.tag!) ? { base: cur, appended } : undefined;
  if (cur.type !== 'Identifier' || depth > 4) return undefined;
  const init = ex.constInit(cur.name!);
  const inner = init ? statementBase(ex, init, depth + 1) : undefined;
  return inner ? { base: inner.base, appended: [...inner.appended, ...appended] } : undefined;
}

/** `SQL\`...\`.append(...)`: a chain of appends on the tag itself (`statement.append(...)` on a name adds to that name's statement). */
function appendChainOfTag(ex: Extractor, call: BNode): boolean {
  let cur = unwrap(call);
  for (let i = 0; i < 64 && isCall(cur) && isMember(unwrap(cur.callee!)); i++) cur = unwrap(unwrap(cur.callee!).object!);
  return cur.type === 'TaggedTemplateExpression' && isStatementTag(ex, cur.tag!);
}

/** Whether an expression holds an sql-template-strings statement. */
function statementTagged(ex: Extractor, e: BNode): boolean {
  return statementBase(ex, e) !== undefined;
}

/** `statement.text` (or `statement`) of a name holding an sql-template-strings statement: the name, read as the statement. */
function statementText(ex: Extractor, arg: BNode): BNode | undefined {
  let a = unwrap(arg);
  if (isMember(a) && propertyName(a) === 'text') a = unwrap(a.object!);
  return (a.type === 'Identifier' || isCall(a) || a.type === 'TaggedTemplateExpression') && statementTagged(ex, a) ? a : undefined;
}

/**
 * The SQL of an sql-template-strings statement: its tag's text (`${...}` parts as $n parameters, as the
 * package writes `text`), then each part appended to it, in a chain or by `name.append(...)` in the
 * function that declares the name (read with every part present): an SQL tag's text, a string as written.
 */
function statementOf(ex: Extractor, e: BNode, name?: string): { built: Built; text: BNode } | undefined {
  const st = statementBase(ex, e);
  if (!st) return undefined;
  const root = unwrap(e);
  const holder = name ?? (root.type === 'Identifier' ? root.name : undefined);
  const later = holder !== undefined ? [...(ex.writesTo(holder)?.appended ?? [])].sort((a, b) => a.start - b.start) : [];
  const built: Built = { sql: '', runs: [], params: [] };
  const counter = { next: 1 };
  appendTemplate(ex, st.base.quasi!, built, counter, 0);
  const left: string[] = [];
  let previous: BNode = st.base;
  for (const part of [...st.appended, ...later]) {
    const p = unwrap(part);
    junction(built, previous, p);
    previous = p;
    if (p.type === 'TaggedTemplateExpression' && isStatementTag(ex, p.tag!)) appendTemplate(ex, p.quasi!, built, counter, 0);
    else if (p.type === 'StringLiteral') {
      const cooked = cookWithMap(ex.source, p.start + 1, p.end - 1);
      appendCooked(built, cooked);
    } else if (p.type === 'TemplateLiteral') appendTemplate(ex, p, built, counter, 0, true);
    else if (!appendFragment(ex, p, built, counter, 1, false)) left.push(ex.text(range(p)));
  }
  if (later.length > 0) built.chose = true;
  if (left.length > 0) built.left = left;
  return { built, text: st.base };
}

/**
 * An sql-template-strings tag met in the walk: read where its statement is run when the function hands it
 * to `query(...)` (`const statement = SQL\`...\`; client.query(statement.text, statement.values)`), else
 * here, with what is appended to it.
 */
function statementTag(ex: Extractor, n: BNode): boolean {
  const name = /(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^=;]{1,200})?=\s*$/.exec(ex.source.slice(Math.max(0, n.start - 300), n.start))?.[1];
  const held = name !== undefined && ex.constInit(name) !== undefined && unwrap(ex.constInit(name)!) === n ? ex.writesTo(name) : undefined;
  if (held && held.run.length > 0) {
    ex.consumeInside(n);
    return true;
  }
  // An append chain is read whole where it ends; a tag held by a name, with what the function appends to it.
  const st = statementOf(ex, n, held ? name : undefined);
  ex.consume(n);
  ex.consumeInside(n);
  const found = st ? builtFound(st.built, st.text, 'tagged-template', range(n)) : undefined;
  if (found) ex.push(found);
  return true;
}

/** Words in a module's name that say which database its `sql` tag or client writes for, when not PostgreSQL. */
const OTHER_DATABASES: [RegExp, string][] = [
  [/clickhouse/i, 'ClickHouse'],
  [/mysql|mariadb/i, 'MySQL'],
  [/sqlite/i, 'SQLite'],
  [/mssql|tedious|sql-?server/i, 'SQL Server'],
  [/duckdb/i, 'DuckDB'],
  [/snowflake/i, 'Snowflake'],
  [/bigquery/i, 'BigQuery'],
  [/surrealdb/i, 'SurrealDB'],
  [/oracledb/i, 'Oracle'],
];

const databaseNamedBy = (module: string) => OTHER_DATABASES.find(([re]) => re.test(module))?.[1];

/** The database a tag's module names (`sql` from './clickhouse-client' or '@databases/mysql'), if not PostgreSQL. */
function otherDatabaseOf(ex: Extractor, tag: BNode): FoundSqlQuery['otherDatabase'] {
  let root = unwrap(tag);
  while (isCall(root) || isMember(root)) root = unwrap(isCall(root) ? root.callee! : root.object!);
  if (root.type !== 'Identifier') return undefined;
  const module = ex.importSource(root.name!);
  const name = module === undefined ? undefined : databaseNamedBy(module);
  return name === undefined ? undefined : { name, module: module!, by: 'tag' };
}

/** Packages of PostgreSQL clients, or of libraries that may speak to it. */
const POSTGRES_CLIENTS = ['pg', 'postgres', 'slonik', 'pg-promise', '@neondatabase/serverless', '@vercel/postgres', 'knex', 'sequelize', 'sequelize-typescript', 'typeorm', '@mikro-orm/core', 'kysely', 'drizzle-orm', '@prisma/client'];

/** For a `query` call: the other database whose client package is the only one the file imports (`surrealdb`, `mysql2`). */
function otherDatabaseClient(ex: Extractor): FoundSqlQuery['otherDatabase'] {
  if (ex.imports(...POSTGRES_CLIENTS)) return undefined;
  for (const module of ex.modules()) {
    // A package, not a module of the repository: a client the file itself connects with.
    if (module.startsWith('.')) continue;
    const name = databaseNamedBy(module);
    if (name !== undefined) return { name, module, by: 'client' };
  }
  return undefined;
}

function pgQuery(call: BNode, ex: Extractor): boolean {
  const arg0 = call.arguments?.[0];
  if (!arg0) return true;
  let lit = statementText(ex, arg0) ?? ex.resolve(arg0);
  let valuesNode = call.arguments?.[1];
  // client.query(new Cursor('SELECT ...', [id])): pg-cursor's and pg-query-stream's text and values.
  if (lit.type === 'NewExpression' && STREAM_PACKAGES.includes(ex.importSource(unwrap(lit.callee!).type === 'Identifier' ? unwrap(lit.callee!).name! : '') ?? '')) {
    valuesNode = lit.arguments?.[1];
    lit = lit.arguments?.[0] ? statementText(ex, lit.arguments[0]) ?? ex.resolve(lit.arguments[0]) : lit;
  }
  if (lit.type === 'ObjectExpression') {
    // client.query({ text: '...', values: [...] })
    const prop = (k: string) => (lit.properties ?? []).find((p) => p.type === 'ObjectProperty' && !p.computed && keyName(p.key!) === k);
    const textProp = prop('text');
    if (!textProp) return true;
    valuesNode = (prop('values')?.value as BNode | undefined) ?? valuesNode;
    lit = statementText(ex, textProp.value as BNode) ?? ex.resolve(textProp.value as BNode);
  }
  const statement = arg0.type === 'SpreadElement' ? syntaxStatement(ex, arg0) : undefined;
  const syntax = statement ? syntaxBuilt(ex, statement) : undefined;
  // The statement and its fragments are this query's, not queries of their own.
  if (statement) ex.consumeInside(ex.resolve(statement));
  // `const sql = byPhone ? 'SELECT ... WHERE phone = $1' : 'SELECT ... WHERE email = $1'`: the call runs one
  // of the statements, chosen at run time, so each is a query of its own (at this call, mapped to its text).
  // Also `let sql; if (byPhone) sql = '...'; else sql = '...';` before the call.
  const choice = syntax ? undefined : lit.type === 'ConditionalExpression' ? { test: lit.test!, texts: statementChoices(ex, lit) } : lit.type === 'Identifier' ? assignedChoices(ex, lit.name!, call) : undefined;
  const chosen = choice?.texts;
  const readOne = (text: BNode) => sqlFromLiteral(ex, text, text.type === 'TemplateLiteral' ? 'template' : 'string', range(call));
  const founds = syntax ? [builtFound(syntax.built, syntax.lit, 'tagged-template', range(call))] : chosen ? chosen.map(readOne) : [readOne(lit)];
  let read = founds.filter((f): f is FoundSqlQuery => f !== undefined);
  // `const { sql, params } = buildUpdate({...}); pool.query(sql, params)`: the statements the function returns.
  if (read.length === 0 && !syntax && !chosen) read = returnedProperty(ex, lit);
  if (read.length === 0) return true;
  const values = valuesNode ? literalValues(ex, valuesNode) : undefined;
  const other = otherDatabaseClient(ex);
  const callee = unwrap(call.callee!);
  const note = isMember(callee) ? callersNote(ex, unwrap(callee.object!)) : undefined;
  ex.consume(call);
  for (let found of read) {
    // Sequelize's query() binds `?` and `:name` replacements: on an instance named for it, or whatever its
    // name when the options say so (`db.query(sql, { replacements: {...} })`; node-postgres takes an array).
    if (/sequelize/i.test(ex.lastName(unwrap(callee.object ?? callee)) ?? '') || sequelizeOptions(ex, call.arguments?.[1])) found = normalisePlaceholders(found);
    if (values) found.values = values;
    if (other) found.otherDatabase = other;
    if (note) found.warnings.push(note);
    if (chosen) found.warnings.push(`This call runs one of ${chosen.length} statements, chosen at run time by ${quotedCode(ex.text(range(unwrap(choice!.test))))}; each is read as a query of its own.`);
    ex.push(found);
  }
  return true;
}

/**
 * The statements a conditional chooses between (`cond ? 'SELECT ...' : 'SELECT ...'`, nested ones too), each as
 * the literal or sum that writes it, or the name of what another module holds (`cond ? a.byId : b.byId`);
 * undefined when a side is neither.
 */
function statementChoices(ex: Extractor, e: BNode, depth = 0): BNode[] | undefined {
  const n = unwrap(e);
  if (n.type !== 'ConditionalExpression') return depth > 0 && (isText(n) || ((n.type === 'Identifier' || isMember(n)) && heldElsewhere(ex, n, range(n)) !== undefined)) ? [n] : undefined;
  if (depth > 3) return undefined;
  const sides = [n.consequent!, n.alternate!].map((side) => statementChoices(ex, ex.resolve(side), depth + 1));
  return sides[0] && sides[1] ? [...sides[0], ...sides[1]] : undefined;
}

/**
 * `let sql; if (byPhone) sql = 'SELECT ... phone = $1'; else sql = queries.byEmail;` before the call: the
 * statements the branches of one if ... else chain assign, one in each branch and the chain ending in an else,
 * each read as statementChoices reads a side, and the first if's test. Undefined when the name is written
 * anywhere else, or a branch assigns none, several or under another statement.
 */
function assignedChoices(ex: Extractor, name: string, call: BNode): { test: BNode; texts: BNode[] | undefined } | undefined {
  const w = ex.writesTo(name);
  const home = ex.declaringNode(name);
  if (!w || !home || w.values.length < 2 || w.values.length > 8 || w.appended.length > 0 || w.pushed.length > 0) return undefined;
  const first = w.values[0]!;
  // The outermost if that holds the first write and ends before the call.
  let chain: BNode | undefined;
  const stack: BNode[] = [home];
  while (stack.length > 0 && !chain) {
    const n = stack.pop()!;
    if (n.start > first.start || n.end < first.end) continue;
    if (n.type === 'IfStatement' && n.end <= call.start) chain = n;
    else pushChildren(n, stack);
  }
  const assigned = (branch: BNode): BNode | undefined => {
    const body = branch.type === 'BlockStatement' ? ((branch.body as unknown as BNode[] | undefined) ?? []) : [branch];
    const writes = body.flatMap((st) => {
      const e = st.type === 'ExpressionStatement' ? unwrap(st.expression!) : undefined;
      return e?.type === 'AssignmentExpression' && e.operator === '=' && unwrap(e.left!).type === 'Identifier' && unwrap(e.left!).name === name ? [e.right!] : [];
    });
    return writes.length === 1 ? writes[0] : undefined;
  };
  const values: BNode[] = [];
  for (let at: BNode | undefined = chain; at; ) {
    const v = assigned(at.consequent!);
    if (!v) return undefined;
    values.push(v);
    const alt: BNode | undefined = at.alternate ?? undefined;
    if (!alt) return undefined;
    if (alt.type === 'IfStatement') at = alt;
    else {
      const last = assigned(alt);
      if (!last) return undefined;
      values.push(last);
      at = undefined;
    }
  }
  if (!chain || values.length !== w.values.length || !values.every((v) => w.values.includes(v))) return undefined;
  const texts = values.map((v) => statementChoices(ex, ex.resolve(v), 1));
  return { test: chain.test!, texts: texts.every((t): t is BNode[] => t !== undefined) ? texts.flat() : undefined };
}

const isText = (n: BNode) => n.type === 'StringLiteral' || n.type === 'TemplateLiteral' || (n.type === 'BinaryExpression' && n.operator === '+');

/** Code as a hover quotes it: on one line, cut when long, in backticks. */
function quotedCode(text: string): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return `\`${one.length > 40 ? `${one.slice(0, 37)}...` : one}\``;
}

/** node-postgres's companions whose object, given to `query()`, runs the text it was made with. */
const STREAM_PACKAGES = ['pg-cursor', 'pg-query-stream'];

/** Options only Sequelize's `query()` takes: `replacements`, `bind`, `type: QueryTypes.X`. */
function sequelizeOptions(ex: Extractor, node: BNode | undefined): boolean {
  const o = node ? ex.resolve(node) : undefined;
  if (o?.type !== 'ObjectExpression') return false;
  return (o.properties ?? []).some((p) => p.type === 'ObjectProperty' && !p.computed && ['replacements', 'bind'].includes(keyName(p.key!) ?? ''));
}

/** The values of `[1, 'a', true, null]` when every element is a literal (or a constant holding one). */
export function literalValues(ex: Extractor, node: BNode): SqlValue[] | undefined {
  const arr = ex.resolve(node);
  if (arr.type !== 'ArrayExpression') return undefined;
  const out: SqlValue[] = [];
  for (const el of arr.elements ?? []) {
    if (!el) return undefined;
    const v = ex.resolve(el);
    if (v.type === 'NumericLiteral' || v.type === 'BooleanLiteral') out.push(v.value as number | boolean);
    else if (v.type === 'NullLiteral') out.push(null);
    else if (v.type === 'UnaryExpression' && v.operator === '-' && v.argument?.type === 'NumericLiteral') out.push(-(v.argument.value as number));
    else {
      const str = ex.stringOf(v, 0);
      if (str === undefined) return undefined;
      out.push(str);
    }
  }
  return out;
}

/**
 * The SQL a string, a template (`plain`: its `${...}` parts are values, not fragments) or a sum of strings
 * (read by `sum`) writes; undefined for anything else or a sum that does not read.
 */
function textBuilt(ex: Extractor, lit: BNode, plain: boolean, sum: (parts: BNode[]) => Built | undefined): Built | undefined {
  if (lit.type === 'StringLiteral') return { ...cookWithMap(ex.source, lit.start + 1, lit.end - 1), params: [] };
  if (lit.type === 'TemplateLiteral') {
    const built: Built = { sql: '', runs: [], params: [] };
    // $n numbers continue after the highest one written in the text itself.
    const written = Math.max(0, ...(lit.quasis ?? []).map((q) => maxDollarParam(ex.source.slice(q.start, q.end))));
    appendTemplate(ex, lit, built, { next: written + 1 }, 0, plain);
    return built;
  }
  return lit.type === 'BinaryExpression' && lit.operator === '+' ? sum(flattenSum(lit)) : undefined;
}

export function sqlFromLiteral(ex: Extractor, lit: BNode, origin: SqlOrigin, callRange: SourceRange): FoundSqlQuery | undefined {
  let built: Built;
  const template = laidOut(ex, lit);
  if (template !== lit) {
    lit = template;
    origin = 'template';
  }
  if (lit.type === 'StringLiteral' || lit.type === 'TemplateLiteral' || (lit.type === 'BinaryExpression' && lit.operator === '+')) {
    const text = textBuilt(ex, lit, origin === 'template', (parts) => concatenation(ex, parts) ?? returnedHead(ex, parts));
    if (!text) return undefined;
    built = text;
  } else if (lit.type === 'TaggedTemplateExpression' || (lit.type === 'Identifier' && statementTagged(ex, lit)) || (isCall(lit) && statementTagged(ex, lit))) {
    // sql-template-strings: SQL`...`, with what is appended to it, held in place or by a name.
    const st = statementOf(ex, lit);
    if (!st) return undefined;
    // The tags and appends of a statement written in place are part of this query, not queries of their own.
    ex.consume(lit);
    ex.consumeInside(lit);
    built = st.built;
    lit = st.text;
    origin = 'tagged-template';
  } else if (isCall(lit) && formatHelper(ex, lit.callee!) === 'format') {
    // pg-format: format('SELECT * FROM %I WHERE id = %L', table, id).
    const read = formatted(ex, lit);
    if (!read) return undefined;
    built = read.built;
    lit = read.lit;
  } else if (isCall(lit) || lit.type === 'AwaitExpression') {
    // Read from a `.sql` file whose path the code shows, or a registry of them gives for a key (loadedSql.ts),
    // or what a function of this file returns.
    if (isCall(lit)) {
      const byClass = classBuiltText(ex, lit);
      if (byClass) return builtFound(byClass, lit, origin, callRange);
    }
    return loadedSql(ex, lit, callRange) ?? (isCall(lit) ? loaderSql(ex, lit, callRange) ?? keyedSql(ex, lit, callRange) ?? returnedSql(ex, lit, callRange) : undefined);
  } else if (isMember(lit)) {
    // A statement held by a constant object's property (`QUERIES.byOwner`, `sql.ordersByCustomer`), of this
    // module or of another the file imports.
    const held = ex.follow(lit);
    return held !== lit && !isMember(held) ? sqlFromLiteral(ex, held, held.type === 'TemplateLiteral' ? 'template' : 'string', callRange) : heldElsewhere(ex, lit, callRange);
  } else if (lit.type === 'Identifier' && namesImported(ex, lit)) {
    // A statement another module exports under this name (`const { byOwner } = require('./queries')`).
    return heldElsewhere(ex, lit, callRange);
  } else if (lit.type === 'Identifier') {
    // `let sql = 'SELECT ...'; if (x) sql += ' AND ...'`: the text with every part appended to it.
    // Of an if ... else if chain that appends in each branch, the first branch's part (they are choices).
    const writes = ex.writesTo(lit.name!);
    const appended = writes ? writes.appended.filter((a) => !writes.otherBranch.has(a)) : [];
    // `query = filtering(query, filters)`: the text handed to a function of this file that appends to it and returns it.
    const handed = writes && writes.values.length > 1 ? writes.values.slice(1).map(unwrap) : [];
    const start = writes && (writes.values.length === 1 ? appended.length > 0 : handed.length > 0 && handed.every((c) => handedOn(c, lit.name!) !== undefined)) && appended.length <= 32 ? unwrap(writes.values[0]!) : undefined;
    // `let sql = ownQuery(); sql += ' ORDER BY ...'`: what a function of this file returns, with what is appended.
    const parts = start && handed.length === 0 ? [...flattenSum(start), ...appended.sort((a, b) => a.start - b.start).flatMap((a) => flattenSum(unwrap(a)))] : [];
    const joined = !start ? undefined : handed.length > 0 ? throughAppenders(ex, start, appended, handed, lit.name!) : concatenation(ex, parts) ?? returnedHead(ex, parts);
    if (!joined) return undefined;
    joined.chose = true;
    if (writes!.otherBranch.size > 0) joined.otherBranches = [...writes!.otherBranch].sort((a, b) => a.start - b.start).map((a) => ex.text(range(a)));
    built = joined;
    lit = start!;
  } else return undefined;
  return builtFound(built, lit, origin, callRange);
}

/**
 * A statement another module of the workspace holds, named here by what the file imports from it: a name it
 * exports (`const { byOwner } = require('../queries/orders')`, `import { byOwner }`) or a property of an object
 * it exports (`orderQueries.byOwner` of `module.exports = orderQueries` or `export default {...}`, a namespace
 * import's). Read as that module writes it when it shows all of it (see textHeld), mapped to the name here
 * and never written back: the text is the other module's.
 */
function heldElsewhere(ex: Extractor, at: BNode, callRange: SourceRange): FoundSqlQuery | undefined {
  const held = ex.importedHeld(at);
  const sql = held ? textHeld(held.ex, held.node, 0) : undefined;
  if (sql === undefined || !SQL_KEYWORD.test(sql) || EXPLAIN_OF_UNKNOWN.test(sql)) return undefined;
  const r = range(at);
  const where = relativeTo(ex.context.file ?? '', held!.ex.context.file ?? '');
  return {
    engine: 'postgres', origin: 'string', range: callRange, sql, runs: runsElsewhere(sql.length, r), textRange: r, params: [],
    warnings: [`The SQL is read from ${where} (${quotedCode(ex.text(r))}); edit it there.`],
  };
}

/**
 * `const { sql, params } = buildUpdate({ table: 'orders', where: 'id = $1' }); pool.query(sql, params)`, or
 * `const q = buildUpdate(...); pool.query(q.sql, q.params)`: the statement each return of that function (of
 * this module or another the file imports) writes as the property, an object written at the return,
 * read with this call's arguments: a part the function is given (a parameter, or a property of an object
 * parameter it takes apart) as the string the call gives, a `$${...}` whose number the function computes
 * as a parameter (the same expression the same number, after those written), any other part as the
 * function's module's constants hold it, and a statement with a part chosen at run time not read. Mapped
 * to the name at the call and never written back: the text is the function's, shared by its callers.
 */
function returnedProperty(ex: Extractor, at: BNode): FoundSqlQuery[] {
  let made: BNode | undefined;
  let key: string | undefined;
  if (at.type === 'Identifier') {
    const b = ex.lookup(at.name!);
    const part = b && !b.mutated && 'part' in b.binding ? b.binding.part : undefined;
    if (part?.of && part.path.length === 1) [made, key] = [part.of, part.path[0]];
  } else if (isMember(at) && !at.computed && unwrap(at.object!).type === 'Identifier') {
    made = ex.constInit(unwrap(at.object!).name!);
    key = propertyName(at);
  }
  let call = made ? unwrap(made) : undefined;
  if (call?.type === 'AwaitExpression') call = unwrap(call.argument!);
  if (!call || !isCall(call) || key === undefined || unwrap(call.callee!).type !== 'Identifier') return [];
  const name = unwrap(call.callee!).name!;
  const own = ex.lookup(name);
  const other = own && ('fn' in own.binding || 'init' in own.binding) ? undefined : ex.imported(name);
  const home = other ? other.ex : ex;
  const b = other ? (other.ex.module.mutated.has(other.local) ? undefined : other.ex.module.names.get(other.local)) : own && !own.mutated ? own.binding : undefined;
  const fn = b ? ('fn' in b && b.fn ? b.fn : 'init' in b ? unwrap(b.init) : undefined) : undefined;
  if (!fn || !FUNCTION_TYPES.has(fn.type) || !fn.body) return [];
  const given = givenParts(fn);
  const { returns, locals } = returnsOfFunction(fn);
  // What the call gives a parameter, or a property of an object it gives: a string this file shows.
  const argument = (g: { index: number; key?: string }): string | undefined => {
    const arg = call!.arguments?.[g.index];
    if (!arg || arg.type === 'SpreadElement') return undefined;
    if (g.key === undefined) return ex.stringOf(arg, 0);
    const o = ex.resolve(arg);
    const p = o.type === 'ObjectExpression' ? (o.properties ?? []).find((x) => x.type === 'ObjectProperty' && !x.computed && x.key && keyName(x.key) === g.key) : undefined;
    return p ? ex.stringOf((p.shorthand ? p.key : p.value) as BNode, 0) : undefined;
  };
  const numbered = new Map<string, string>();
  const partOf = (x: BNode, param: boolean): string | undefined => {
    const n = unwrap(x);
    if (param) {
      const text = home.text(range(n));
      let marker = numbered.get(text);
      if (marker === undefined) numbered.set(text, (marker = `\u0000${numbered.size}\u0000`));
      return marker;
    }
    const g = n.type === 'Identifier' ? given.get(n.name!) : undefined;
    if (g) return argument(g);
    // A name the function declares is computed there: chosen at run time.
    return n.type === 'Identifier' && locals.has(n.name!) ? undefined : home.stringOf(n, 0);
  };
  const textOf = (v: BNode, depth: number): string | undefined => {
    const n = unwrap(v);
    if (depth > 3) return undefined;
    if (n.type === 'StringLiteral') return n.value as string;
    const joined = joinedText(n, (x, afterDollar) => partOf(x, afterDollar), (x) => textOf(x, depth + 1));
    return joined !== NOT_JOINED ? joined : partOf(n, false);
  };
  const out: FoundSqlQuery[] = [];
  const r = range(at);
  const where = other ? ` (in ${relativeTo(ex.context.file ?? '', home.context.file ?? '')})` : '';
  for (const ret of returns) {
    if (ret.type !== 'ObjectExpression') continue;
    const p = (ret.properties ?? []).find((x) => x.type === 'ObjectProperty' && !x.computed && x.key && keyName(x.key) === key);
    numbered.clear();
    const text = p ? textOf((p.shorthand ? p.key : p.value) as BNode, 0) : undefined;
    if (text === undefined) continue;
    const written = maxDollarParam(text.replace(/\u0000\d+\u0000/g, ''));
    const sql = text.replace(/\u0000(\d+)\u0000/g, (_, i: string) => String(written + 1 + Number(i)));
    if (!SQL_KEYWORD.test(sql) || EXPLAIN_OF_UNKNOWN.test(sql)) continue;
    out.push({
      engine: 'postgres', origin: 'string', range: range(at), sql, runs: runsElsewhere(sql.length, r), textRange: r, params: [],
      warnings: [`The SQL is what ${name}() returns as \`${key}\`${where}, read with this call's arguments; edit it there.`],
    });
  }
  if (out.length > 1) for (const f of out) f.warnings.push(`This call runs one of the ${out.length} statements ${name}() returns, chosen at run time; each is read as a query of its own.`);
  return out;
}

/** The values a function returns (at most 8, a nested function's returns not among them) and the names it declares. */
function returnsOfFunction(fn: BNode): { returns: BNode[]; locals: Set<string> } {
  const returns: BNode[] = [];
  const declared = new Map<string, Binding>();
  for (const p of fn.params ?? []) declareNames(p, declared);
  const body = fn.body as BNode;
  const locals = () => new Set(declared.keys());
  if (body.type !== 'BlockStatement') return { returns: [unwrap(body)], locals: locals() };
  const stack: BNode[] = [body];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.type === 'ReturnStatement' && n.argument) returns.push(unwrap(n.argument));
    if (n.type === 'VariableDeclarator') declareNames(n.id, declared);
    if (FUNCTION_TYPES.has(n.type) || n.type === 'ClassMethod' || n.type === 'ObjectMethod') continue;
    pushChildren(n, stack);
  }
  return { returns: returns.length <= 8 ? returns.sort((a, b) => a.start - b.start) : [], locals: locals() };
}

const FUNCTION_TYPES = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression']);

/** The names a function's parameters give it: a parameter (`opts`), and a property it takes apart, in the parameter list or as the first thing its body does (`const { table } = opts`). */
function givenParts(fn: BNode): Map<string, { index: number; key?: string }> {
  const out = new Map<string, { index: number; key?: string }>();
  const apart = (pattern: BNode, index: number) => {
    for (const p of pattern.properties ?? []) {
      if (p.type !== 'ObjectProperty' || p.computed || !p.key) continue;
      const v = unwrap(p.value as BNode);
      const target = v.type === 'AssignmentPattern' ? v.left! : v;
      if (target.type === 'Identifier') out.set(target.name!, { index, key: keyName(p.key) });
    }
  };
  (fn.params ?? []).forEach((p, index) => {
    const target = p.type === 'AssignmentPattern' ? p.left! : p;
    if (target.type === 'Identifier') out.set(target.name!, { index });
    else if (target.type === 'ObjectPattern') apart(target, index);
  });
  const block = fn.body as BNode;
  const body = block.type === 'BlockStatement' && Array.isArray(block.body) ? block.body : [];
  for (const st of body) {
    if (st.type !== 'VariableDeclaration' || st.kind !== 'const') continue;
    for (const d of st.declarations ?? []) {
      const init = d.init ? unwrap(d.init) : undefined;
      const g = init?.type === 'Identifier' ? out.get(init.name!) : undefined;
      if (d.id?.type === 'ObjectPattern' && g && g.key === undefined) apart(d.id, g.index);
    }
  }
  return out;
}

/** Whether a name, or the object of a property (`orderQueries.byOwner`), is imported or required: a cheap test before heldElsewhere. */
function namesImported(ex: Extractor, n: BNode): boolean {
  if (isMember(n)) {
    const root = unwrap(n.object!);
    return root.type === 'Identifier' && ex.importSource(root.name!) !== undefined;
  }
  return n.type === 'Identifier' && ex.importSource(n.name!) !== undefined && ex.constInit(n.name!) === undefined;
}

/**
 * The text a module writes for a value when every part of it is shown there: a string, a template whose
 * `${...}` parts are its constants, a sum of those, or what a module it imports holds (bounded); undefined
 * for a part chosen at run time (no $n is made for a value of another module).
 */
function textHeld(ex: Extractor, e: BNode, depth: number): string | undefined {
  if (depth > 4) return undefined;
  const known = ex.stringOf(e, 0);
  if (known !== undefined) return known;
  const n = ex.resolve(e);
  const joined = joinedText(n, (x) => textHeld(ex, x, depth + 1), (x) => textHeld(ex, x, depth + 1));
  if (joined !== NOT_JOINED) return joined;
  const other = n.type === 'Identifier' || isMember(n) ? ex.importedHeld(n) : undefined;
  return other ? textHeld(other.ex, other.node, depth + 1) : undefined;
}

/** The place of `name` among a call's arguments (`filtering(query, filters)`), when the call hands it on. */
function handedOn(call: BNode, name: string): number | undefined {
  if (!isCall(call) || unwrap(call.callee!).type !== 'Identifier') return undefined;
  const i = (call.arguments ?? []).findIndex((a) => unwrap(a).type === 'Identifier' && unwrap(a).name === name);
  return i < 0 ? undefined : i;
}

/**
 * `let query = 'SELECT ...'; query = filtering(query, filters); query += ' LIMIT 20'`: the text with what the
 * script appends to it and, at each call, what the function of this file it is handed to appends to its
 * parameter (`query += \` WHERE ...\``) before returning it, read with the call's arguments. Undefined
 * unless every such function is of this file and does only that: one of another module (whose characters
 * are not in this file), or one that returns other text, leaves the statement unread. Never written back: the function's text is shared by its callers.
 */
function throughAppenders(ex: Extractor, start: BNode, appended: BNode[], calls: BNode[], name: string): Built | undefined {
  const first = flattenSum(start);
  if (first[0]!.type !== 'StringLiteral' && first[0]!.type !== 'TemplateLiteral') return undefined;
  const built: Built = { sql: '', runs: [], params: [], chose: true };
  const literal = (n: BNode) => n.type === 'StringLiteral' || n.type === 'TemplateLiteral';
  const counter = { next: Math.max(0, ...[...first, ...appended].filter(literal).map((p) => maxDollarParam(ex.source.slice(p.start, p.end)))) + 1 };
  appendSum(ex, first, built, counter);
  let prev = first[first.length - 1]!;
  const steps = [...appended.map((node) => ({ node, call: false })), ...calls.map((node) => ({ node, call: true }))].sort((a, b) => a.node.start - b.node.start);
  for (const step of steps) {
    if (!step.call) {
      const parts = flattenSum(unwrap(step.node));
      junction(built, prev, parts[0]!);
      appendSum(ex, parts, built, counter);
      prev = parts[parts.length - 1]!;
      continue;
    }
    const call = step.node;
    const at = handedOn(call, name)!;
    const callee = unwrap(call.callee!).name!;
    const binding = ex.lookup(callee)?.binding;
    const fnNode = binding && 'fn' in binding ? binding.fn : binding && 'init' in binding ? unwrap(binding.init) : undefined;
    const param = fnNode?.params?.[at];
    const pname = param ? unwrap(param.type === 'AssignmentPattern' ? param.left! : param).name : undefined;
    const ok = ex.throughCall(call, (ret, inModule) => {
      const r = unwrap(ret);
      // The function returns the parameter it was handed the text in, having only appended to it. One of
      // another module is not read: its characters are not in this file.
      if (inModule !== ex || r.type !== 'Identifier' || pname === undefined || r.name !== pname) return undefined;
      const w = ex.writesTo(r.name);
      if (!w || w.values.length > 1 || w.appended.length === 0 || w.appended.length > 32) return undefined;
      const parts = w.appended.filter((a) => !w.otherBranch.has(a)).sort((a, b) => a.start - b.start).flatMap((a) => flattenSum(unwrap(a)));
      if (w.otherBranch.size > 0) (built.otherBranches ??= []).push(...[...w.otherBranch].sort((a, b) => a.start - b.start).map((a) => ex.text(range(a))));
      // A run of no SQL at the call: the text is the function's, so it is not written back.
      built.runs.push([built.sql.length, call.start, 0, call.end - call.start]);
      appendSum(ex, parts, built, counter);
      (built.fragments ??= []).push(ex.text(range(call)));
      return true;
    });
    if (!ok) return undefined;
    prev = call;
  }
  return built;
}

/**
 * What a function or method of this file returns (`helper(x)`, `this.helper(x)`, `Store.helper(x)` in the
 * class Store), read with its parameters bound to the call's arguments.
 */
function throughOwnCall<T>(ex: Extractor, call: BNode, read: (returned: BNode) => T | undefined): T | undefined {
  const callee = unwrap(call.callee!);
  const same = (ret: BNode, inModule: Extractor) => (inModule === ex ? read(ret) : undefined);
  if (callee.type === 'Identifier') return ex.throughCall(call, same);
  if (!isMember(callee)) return undefined;
  const obj = unwrap(callee.object!);
  const name = propertyName(callee);
  const own = obj.type === 'ThisExpression' || (obj.type === 'Identifier' && obj.name === ex.enclosingClass());
  const target = own && name !== undefined ? ex.methodOf(name) : undefined;
  return target && target.ex === ex ? ex.throughFunction(call, target, same) : undefined;
}

let returnedDepth = 0;

/**
 * The text a query is given as the return of a function of this file (`query(Store.upsert('rooms', keys),
 * values)`): the SQL that function writes, with its arguments. Never written back as a whole: the text is
 * the function's, which other calls share.
 */
function returnedSql(ex: Extractor, call: BNode, callRange: SourceRange): FoundSqlQuery | undefined {
  if (returnedDepth > 2) return undefined;
  returnedDepth++;
  try {
    const found = throughOwnCall(ex, call, (ret) => {
      const r = ex.resolve(ret);
      return r === call ? undefined : sqlFromLiteral(ex, r, r.type === 'TemplateLiteral' ? 'template' : 'string', callRange);
    });
    if (!found) return undefined;
    found.runs.unshift([0, call.start, 0, call.end - call.start]);
    found.warnings.push(`The SQL is what ${ex.text(range(unwrap(call.callee!)))}() returns, read with this call's arguments.`);
    return found;
  } finally {
    returnedDepth--;
  }
}

/**
 * `this.insertSql(nodes) + ' RETURNING id'`: the SQL a function or method of this file returns, read with the
 * call's arguments, and what is appended to it. Never written back: the text is the function's.
 */
function returnedHead(ex: Extractor, parts: BNode[]): Built | undefined {
  const call = parts[0]!;
  if (!isCall(call) || parts.length < 2 || returnedDepth > 2) return undefined;
  returnedDepth++;
  try {
    const head = throughOwnCall(ex, call, (ret) => {
      const r = ex.resolve(ret);
      return r === call ? undefined : textBuilt(ex, r, true, (sum) => concatenation(ex, sum));
    });
    if (!head || !SQL_KEYWORD.test(head.sql)) return undefined;
    const built: Built = { ...head, runs: [[0, call.start, 0, call.end - call.start], ...head.runs], params: [...head.params], fragments: [...(head.fragments ?? []), ex.text(range(call))] };
    const rest = parts.slice(1);
    const written = Math.max(maxDollarParam(built.sql), ...rest.filter((p) => p.type === 'StringLiteral' || p.type === 'TemplateLiteral').map((p) => maxDollarParam(ex.source.slice(p.start, p.end))));
    junction(built, call, rest[0]!);
    appendSum(ex, rest, built, { next: Math.max(written, ...built.params.map((p) => p.n)) + 1 });
    return built;
  } finally {
    returnedDepth--;
  }
}

/**
 * The statement an application's query-builder class builds (builderClass.ts), as SQL: the class's text
 * mapped to the calls that made it, the calling file's arguments read as any part of a statement. Never
 * written back: the text is the class's and the calls'.
 */
function classBuiltText(ex: Extractor, call: BNode): Built | undefined {
  const read = classBuilt(ex, call);
  if (!read) return undefined;
  // A run of no SQL over the call first: the text is the class's, never written back.
  const built: Built = { sql: '', runs: [[0, call.start, 0, call.end - call.start]], params: [], chose: true, fragments: [ex.text(range(call))] };
  appendAtoms(ex, read, built, { next: 1 });
  if (!SQL_KEYWORD.test(built.sql)) return undefined;
  return built;
}

function appendAtoms(ex: Extractor, read: ClassBuilt, built: Built, counter: { next: number }): void {
  const written = read.atoms.flatMap((a) => ('node' in a && (a.node.type === 'StringLiteral' || a.node.type === 'TemplateLiteral') ? [maxDollarParam(ex.source.slice(a.node.start, a.node.end))] : []));
  counter.next = Math.max(counter.next, ...written.map((n) => n + 1));
  for (const a of read.atoms) {
    if ('node' in a) {
      appendSum(ex, flattenSum(a.node), built, counter);
      continue;
    }
    const text = 'lit' in a ? a.lit : /(^|[^$])\$$/.test(built.sql) ? String(counter.next) : `$${counter.next}`;
    if ('value' in a) built.params.push({ n: counter.next++, text: ex.text(range(a.at)), range: range(a.at) });
    built.runs.push([built.sql.length, a.at.start, text.length, a.at.end - a.at.start]);
    built.sql += text;
  }
  if (read.left.length > 0) (built.handedTo ??= []).push(...read.left.map((c) => ex.text(range(c))));
}

/**
 * Where the first of several statements ends (at its `;`, by PostgreSQL's own scanner, which knows quotes,
 * comments and dollar quoting); undefined for a text of one statement or before the parser is loaded.
 */
function firstStatementEnd(sql: string): number | undefined {
  if (!sqlParserLoaded()) return undefined;
  let semi: number | undefined;
  try {
    semi = scanSqlSync(sql).find((t) => t.tokenName === 'ASCII_59')?.start;
  } catch {
    return undefined;
  }
  if (semi === undefined) return undefined;
  const end = new ByteMap(sql).char(semi);
  return sql.slice(end + 1).trim() === '' ? undefined : end;
}

/** The query of SQL built from a literal `lit` (whose characters the text range covers), when it starts a statement. */
function builtFound(built: Built, lit: BNode, origin: SqlOrigin, callRange: SourceRange): FoundSqlQuery | undefined {
  // `BEGIN; UPDATE ...; INSERT ...; COMMIT;`: the statements after the transaction's start, read from the first.
  const opened = TRANSACTION_HEAD.exec(built.sql)?.[0].length ?? 0;
  if (!SQL_KEYWORD.test(built.sql.slice(opened)) || EXPLAIN_OF_UNKNOWN.test(built.sql)) return undefined;
  const textRange = { start: lit.start + 1, end: lit.end - 1 };
  let found: FoundSqlQuery = { engine: 'postgres', origin, range: callRange, sql: built.sql, runs: built.runs, textRange, params: built.params, warnings: [] };
  if (opened > 0) {
    found = replaceInSql(found, [{ start: 0, end: opened, text: '' }]);
    // The first statement after BEGIN is the query: the one advised, and the one an Explain can run.
    const end = firstStatementEnd(found.sql);
    if (end !== undefined) {
      found = replaceInSql(found, [{ start: end, end: found.sql.length, text: '' }]);
      found.params = found.params.filter((p) => new RegExp(`\\$${p.n}(?!\\d)`).test(found.sql));
    }
    found.warnings.push('The text opens a transaction and sends its statements as one; the first after the BEGIN is the one read here, explained and advised.');
  }
  if (built.standIns?.length) {
    found.warnings.push(standInWarning(built.standIns));
    found.standInNames = [...new Set(built.standIns.map(standInBare))];
  }
  const fragmentNote = fragmentWarning(built);
  if (fragmentNote) found.warnings.push(fragmentNote);
  for (const c of built.choices ?? []) {
    const values = c.values.slice(0, 4).map((v) => `'${v}'`).join(', ') + (c.values.length > 4 ? ', ...' : '');
    found.warnings.push(`${quoted(c.text)} is one of the constants the file writes for it (${values}); the statement was read with '${c.values[0]!}'.`);
  }
  if (built.otherBranches?.length) {
    const others = built.otherBranches.slice(0, 3).map((t) => `'${t.replace(/^[`'"]|[`'"]$/g, '').replace(/\s+/g, ' ').trim()}'`).join(', ') + (built.otherBranches.length > 3 ? ', ...' : '');
    found.warnings.push(`An if ... else chain appends one of several parts; the statement was read with its first branch's (not ${others}).`);
  }
  if (built.handedTo?.length) {
    const calls = built.handedTo.map((t) => quotedCode(t)).join(', ');
    found.warnings.push(`The builder is handed to ${calls}, which may add to the statement where this file does not show it; the statement was read without that.`);
  }
  if (built.left?.length) found.warnings.push(`${built.left.map(quoted).join(', ')} ${built.left.length === 1 ? 'is' : 'are'} appended to the statement but not SQL this file shows, so ${built.left.length === 1 ? 'it is' : 'they are'} left out.`);
  return withStandIns(found);
}

/**
 * SQL written as strings joined with `+` (`"SELECT ... FROM rooms " + "WHERE id = $1"`), the first part a
 * literal: literals and templates as written, constants as their text, SQL the file builds in place, and
 * any other value as a $n parameter, as in a plain template's `${...}`.
 */
function concatenation(ex: Extractor, parts: BNode[]): Built | undefined {
  if (parts.length < 2 || parts.length > 64 || (parts[0]!.type !== 'StringLiteral' && parts[0]!.type !== 'TemplateLiteral')) return undefined;
  const built: Built = { sql: '', runs: [], params: [] };
  const literal = (n: BNode) => n.type === 'StringLiteral' || n.type === 'TemplateLiteral';
  const counter = { next: Math.max(0, ...parts.filter(literal).map((p) => maxDollarParam(ex.source.slice(p.start, p.end)))) + 1 };
  appendSum(ex, parts, built, counter);
  return built;
}

/** Appends the parts of a sum of strings (see concatenation) to what is built, numbering values from `counter`. */
function appendSum(ex: Extractor, parts: BNode[], built: Built, counter: { next: number }): void {
  for (let i = 0; i < parts.length; i++) {
    const p = laidOut(ex, parts[i]!);
    if (i > 0) junction(built, parts[i - 1]!, p);
    if (p.type === 'StringLiteral') {
      const part = cookWithMap(ex.source, p.start + 1, p.end - 1);
      appendCooked(built, part);
      continue;
    }
    if (p.type === 'TemplateLiteral') {
      appendTemplate(ex, p, built, counter, 0, true);
      continue;
    }
    const read = appendFragment(ex, p, built, counter, 1, true);
    if (read) {
      if (read.elsewhere) (built.fragments ??= []).push(ex.text(range(p)));
      if (read.chose) built.chose = true;
      continue;
    }
    let constant = ex.stringOf(p, 0);
    const choices = constant === undefined ? constantChoices(ex, p) : undefined;
    if (choices) {
      constant = choices[0]!;
      (built.choices ??= []).push({ text: ex.text(range(p)), values: choices });
    }
    // `'... = $' + n`: the `$` before the value and the value are one placeholder, the next $n.
    const text = constant ?? (/(^|[^$])\$$/.test(built.sql) ? String(counter.next) : `$${counter.next}`);
    if (constant === undefined) built.params.push({ n: counter.next++, text: ex.text(range(p)), range: range(p) });
    built.runs.push([built.sql.length, p.start, text.length, p.end - p.start]);
    built.sql += text;
  }
}

/** Where the text of a part of a statement written in pieces is: inside a literal's quotes, a tag's template, else the expression. */
function innerStart(n: BNode): number {
  if (n.type === 'TaggedTemplateExpression') return n.quasi!.start + 1;
  return n.type === 'StringLiteral' || n.type === 'TemplateLiteral' ? n.start + 1 : n.start;
}
function innerEnd(n: BNode): number {
  if (n.type === 'TaggedTemplateExpression') return n.quasi!.end - 1;
  return n.type === 'StringLiteral' || n.type === 'TemplateLiteral' ? n.end - 1 : n.end;
}

/**
 * Between two pieces of a statement (`' + '`, or the code between `let sql = '...'` and `sql += '...'`):
 * file characters that hold none of its SQL, a run of no SQL. The SQL is then never written back over one
 * piece as if it were the whole text.
 */
function junction(built: Built, before: BNode, after: BNode): void {
  const from = innerEnd(before);
  const to = innerStart(after);
  if (to > from) built.runs.push([built.sql.length, from, 0, to - from]);
}

/** The operands of `a + b + c`, left to right. */
/** What joinedText gives for a node that is neither a template nor a `+` sum. */
const NOT_JOINED = Symbol('not joined');

/**
 * The text a template or a `+` sum writes when every part is known: `part` reads each `${...}` (told whether
 * the text before it ends in a lone `$`, as `$${n}` writes a placeholder's number) and `summand` each term of
 * the sum; undefined when one is not known, NOT_JOINED for any other node.
 */
function joinedText(n: BNode, part: (x: BNode, afterDollar: boolean) => string | undefined, summand: (x: BNode) => string | undefined): string | undefined | typeof NOT_JOINED {
  if (n.type === 'TemplateLiteral') {
    let out = '';
    for (let i = 0; i < (n.quasis ?? []).length; i++) {
      out += cookedOf(n.quasis![i]!);
      const x = n.expressions?.[i];
      if (!x) continue;
      const got = part(x, /(^|[^$])\$$/.test(out));
      if (got === undefined) return undefined;
      out += got;
    }
    return out;
  }
  if (n.type === 'BinaryExpression' && n.operator === '+') {
    const parts = flattenSum(n).map(summand);
    return parts.every((p): p is string => p !== undefined) ? parts.join('') : undefined;
  }
  return NOT_JOINED;
}

function flattenSum(n: BNode, out: BNode[] = []): BNode[] {
  if (out.length > 64) return out;
  if (n.type === 'BinaryExpression' && n.operator === '+') {
    flattenSum(unwrap(n.left!), out);
    flattenSum(unwrap(n.right!), out);
  } else out.push(n);
  return out;
}

/** What the hover says of fragments read from elsewhere in the file and of choices made among them. */
function fragmentWarning(built: Built): string | undefined {
  const texts = [...new Set((built.fragments ?? []).map(quoted))];
  const all = built.chose ? ', every optional part present (the query an index must serve when every filter is given)' : '';
  if (texts.length > 0) return `${texts.join(', ')} ${texts.length === 1 ? 'was' : 'were'} read with the SQL this file builds for ${texts.length === 1 ? 'it' : 'them'}${all}.`;
  return built.chose ? `The statement was read with every optional part present (the query an index must serve when every filter is given).` : undefined;
}

/**
 * The SQL built so far; `standIns`: identifier helpers given a name chosen at run time (`sql(table)`), as
 * written; `fragments`: `${...}` parts read with SQL the file builds elsewhere; `chose`: one of those was a choice.
 */
/** Appends cooked text (its SQL and where its characters are in the file) to what is built. */
function appendCooked(built: Built, part: { sql: string; runs: SqlRun[] }): void {
  for (const [s, f, l, fl] of part.runs) built.runs.push([s + built.sql.length, f, l, fl]);
  built.sql += part.sql;
}

type Built = {
  sql: string; runs: SqlRun[]; params: SqlParameter[]; standIns?: string[]; fragments?: string[]; chose?: boolean; left?: string[];
  /** `${...}` parts that hold one of several constants, read with the first of `values`. */
  choices?: { text: string; values: string[] }[];
  /** Calls an application's query builder is handed to (builderClass.ts), whose additions are not read. */
  handedTo?: string[];
  /** What the later branches of an if ... else chain append, left out for the first branch's. */
  otherBranches?: string[];
};

/**
 * The constants an expression takes, the one read first: both sides of a conditional, or an entry of a
 * constant object of strings looked up at run time (`SORTS[key]`), after its fallback (`?? 'created_at'`).
 * Undefined unless every value it can take is a constant string the file shows.
 */
function constantChoices(ex: Extractor, e: BNode, depth = 0): string[] | undefined {
  if (depth > 4) return undefined;
  const n = unwrap(e);
  const one = (x: BNode) => {
    const c = ex.stringOf(x, 0);
    return c !== undefined ? [c] : constantChoices(ex, x, depth + 1);
  };
  let out: string[] | undefined;
  if (n.type === 'Identifier') {
    const init = ex.constInit(n.name!);
    return init ? constantChoices(ex, init, depth + 1) : undefined;
  }
  if (n.type === 'ConditionalExpression') {
    const [a, b] = [one(n.consequent!), one(n.alternate!)];
    out = a && b ? [...a, ...b] : undefined;
  } else if (n.type === 'LogicalExpression' && (n.operator === '??' || n.operator === '||')) {
    // A left side the code shows as a string (a constant, or the argument a helper's call binds) is what is
    // sent: the fallback is never taken (`${field || '*'}` in `inForce('plugin_id')`).
    const known = ex.stringOf(n.left!, 0);
    if (known !== undefined && (n.operator === '??' || known !== '')) return [known];
    const [a, b] = [one(n.left!), one(n.right!)];
    out = a && b ? [...b, ...a] : undefined;
  } else if (n.type === 'MemberExpression' && n.computed) {
    const o = ex.resolve(n.object!);
    if (o.type !== 'ObjectExpression' || (o.properties ?? []).length === 0) return undefined;
    const values = (o.properties ?? []).map((p) => (p.type === 'ObjectProperty' ? ex.stringOf(p.value as BNode, 0) : undefined));
    out = values.every((v) => v !== undefined) ? (values as string[]) : undefined;
  }
  return out && out.length > 0 ? [...new Set(out)] : undefined;
}

/** The name of a tag that makes SQL: `sql`, postgres.js instances (`tx`, `db`...), slonik's `sql.type(...)`, `sql.unsafe`. */
export function sqlTagName(ex: Extractor, tag: BNode): string | undefined {
  const t = unwrap(tag);
  if (t.type === 'Identifier') {
    if (SQL_TAGS.test(t.name!)) return t.name;
    if (['postgres', 'slonik', SYNTAX_PACKAGE].includes(ex.importSource(t.name!) ?? '')) return t.name;
    // db`...` where `db: PostgresDB` and another module says `type PostgresDB = postgres.Sql`.
    return libraryOf(ex, t) === 'postgres' ? t.name : undefined;
  }
  if (isMember(t)) {
    const p = propertyName(t);
    if (p === 'sql' || p === 'SQL' || isSyntaxTag(ex, t)) return p;
    if ((p === 'unsafe' || p === 'fragment') && sqlTagName(ex, t.object!) !== undefined) return p;
    // this.#db`...`: a field the class declares as a postgres.js instance.
    return p !== undefined && libraryOf(ex, t) === 'postgres' ? p : undefined;
  }
  // slonik: sql.type(schema)`...`, sql.typeAlias('id')`...`
  if (isCall(t)) {
    const c = unwrap(t.callee!);
    if (isMember(c) && ['type', 'typeAlias'].includes(propertyName(c) ?? '') && sqlTagName(ex, c.object!) !== undefined) return 'sql';
  }
  return undefined;
}

const SQL_TAGS = /^(sql|SQL|tx|trx|psql|pgsql)$/;

/**
 * Appends a template's text. A `${...}` that is SQL the file shows (a fragment in place or held in a
 * constant, one of a conditional's fragments, `sql.join` of fragments, a helper of the file returning
 * one) is read in place; `${sql('name')}` identifiers are written out; anything else is a $n parameter.
 * `plain`: a template literal whose parts are joined as strings (node-postgres), not a tag's.
 */
function appendTemplate(ex: Extractor, lit: BNode, built: Built, counter: { next: number }, depth: number, plain = false): void {
  const quasis = lit.quasis ?? [];
  const exprs = lit.expressions ?? [];
  for (let i = 0; i < quasis.length; i++) {
    const q = quasis[i]!;
    const part = cookWithMap(ex.source, q.start, q.end);
    appendCooked(built, part);
    const expr = exprs[i];
    if (!expr) continue;
    // The hole is `${ ... }`: from the end of this chunk to the start of the next.
    const hole = { start: q.end, end: quasis[i + 1]?.start ?? expr.end };
    const read = depth < MAX_FRAGMENT_DEPTH ? appendFragment(ex, expr, built, counter, depth + 1, plain) : undefined;
    if (read) {
      if (read.elsewhere) (built.fragments ??= []).push(ex.text(range(expr)));
      if (read.chose) built.chose = true;
      continue;
    }
    const put = (text: string) => {
      built.runs.push([built.sql.length, hole.start, text.length, hole.end - hole.start]);
      built.sql += text;
    };
    const param = () => {
      built.params.push({ n: counter.next, text: ex.text(expr), range: hole });
      return `$${counter.next++}`;
    };
    // In an untagged template (`knex.raw(\`... FROM ${TABLE}\`)`, `pool.query(\`...\`)`) a hole holding a
    // constant is that constant's text in the SQL sent, a table's name most often.
    const constant = plain ? ex.stringOf(expr, 0) : undefined;
    if (constant !== undefined) {
      put(constant);
      continue;
    }
    // One of the constants the file writes for it (`${asc ? 'ASC' : 'DESC'}`, `${SORTS[key] ?? 'created_at'}`):
    // the text sent when the first is taken, and the hover says which.
    const choices = plain ? constantChoices(ex, expr) : undefined;
    if (choices) {
      put(choices[0]!);
      (built.choices ??= []).push({ text: ex.text(range(expr)), values: choices });
      continue;
    }
    // `$${i}` in an untagged template: the `$` written before the hole and the number put in it at run
    // time are one placeholder, read as the next $n (the `$` stays the chunk's, the number is the hole's).
    if (plain && /(^|[^$])\$$/.test(built.sql)) {
      built.params.push({ n: counter.next, text: ex.text(expr), range: hole });
      put(String(counter.next++));
      continue;
    }
    // An identifier helper's call, in place or held by a constant (`const tbl = escapeIdentifier(table)`).
    let ident = identifierOf(ex, unwrap(expr)) ?? identifierOf(ex, ex.resolve(expr));
    // postgres.js's `sql(x)` of what is not a name here: the list after IN, and the assignments after SET or
    // the columns and row of an INSERT, which the stand-ins read by their place (its documented dynamic
    // lists, updates and inserts).
    if (ident?.standIn !== undefined && !plain) {
      if (/\bin\s*$/i.test(built.sql)) {
        put(`(${param()})`);
        continue;
      }
      if (/\bset\s*$/i.test(built.sql) || /\binsert\s+into\s+[\w."]+\s*$/i.test(built.sql)) ident = undefined;
    }
    if (ident?.standIn !== undefined) (built.standIns ??= []).push(ident.standIn);
    put(ident?.text ?? param());
  }
}

const MAX_FRAGMENT_DEPTH = 8;

/**
 * What reading a fragment gave: `empty` when it holds no SQL (`sql\`\``), `elsewhere` when its text was
 * taken from where the file builds it (not written in place), `chose` when one of several was taken
 * (a conditional's branch, a variable's non-empty value, elements pushed in some cases only).
 */
type FragmentRead = { empty: boolean; elsewhere: boolean; chose: boolean };

/** Words a piece of SQL spliced into a plain template starts with, when it is a clause and not a value. */
const CLAUSE_TEXT = /^\s*(set|where|and|or|order\s+by|group\s+by|limit|offset|(left|right|inner|full|cross)?\s*join|returning|values|from|having)\b/i;

/** A statement spliced into a plain template where a subquery stands (`id IN (${inForce('plugin_id')})`). */
const SUBQUERY_TEXT = /^\s*(select|with)\b/i;

/**
 * Appends the SQL an expression stands for when the file shows it; undefined (and nothing appended) when
 * it does not. Of a choice, the first fragment with SQL in it wins: a statement is read with every
 * optional condition present, the query an index must serve when every filter is given.
 */
function appendFragment(ex: Extractor, e: BNode, built: Built, counter: { next: number }, depth: number, plain: boolean): FragmentRead | undefined {
  if (depth > MAX_FRAGMENT_DEPTH) return undefined;
  const n = unwrap(e);
  const mark = { sql: built.sql.length, runs: built.runs.length, params: built.params.length, next: counter.next, standIns: built.standIns?.length ?? 0, fragments: built.fragments?.length ?? 0, chose: built.chose, choices: built.choices?.length ?? 0 };
  const undo = () => {
    built.sql = built.sql.slice(0, mark.sql);
    built.runs.length = mark.runs;
    built.params.length = mark.params;
    counter.next = mark.next;
    if (built.standIns) built.standIns.length = mark.standIns;
    if (built.fragments) built.fragments.length = mark.fragments;
    if (built.choices) built.choices.length = mark.choices;
    built.chose = mark.chose;
  };
  // The first of several that holds SQL, else the first empty one.
  const first = (options: BNode[], chose: boolean): FragmentRead | undefined => {
    let empty: BNode | undefined;
    for (const o of options) {
      const r = appendFragment(ex, o, built, counter, depth + 1, plain);
      if (r && !r.empty) return { ...r, chose: chose || r.chose };
      if (r) empty ??= o;
      undo();
    }
    return empty ? { empty: true, elsewhere: false, chose } : undefined;
  };
  if (n.type === 'TaggedTemplateExpression' && !plain && (sqlTagName(ex, n.tag!) !== undefined || fragmentTag(ex, n.tag!))) {
    appendTemplate(ex, n.quasi!, built, counter, depth, plain);
    return { empty: built.sql.slice(mark.sql).trim() === '', elsewhere: false, chose: false };
  }
  // A statement's head spliced in as a whole (`${selectPart} FROM orders ...`) starts it, as a subquery does after `(`.
  if (plain && (n.type === 'TemplateLiteral' || n.type === 'StringLiteral') && (CLAUSE_TEXT.test(ex.text(range(n)).slice(1)) || (SUBQUERY_TEXT.test(ex.text(range(n)).slice(1)) && (/\(\s*$/.test(built.sql) || built.sql.trim() === '')))) {
    if (n.type === 'TemplateLiteral') appendTemplate(ex, n, built, counter, depth, plain);
    else {
      const part = cookWithMap(ex.source, n.start + 1, n.end - 1);
      appendCooked(built, part);
    }
    return { empty: false, elsewhere: false, chose: false };
  }
  if (!plain && isCall(n)) {
    const r = appendSyntaxCall(ex, n, built, counter, depth);
    if (r) return r;
    undo();
  }
  if (n.type === 'ConditionalExpression') return first([n.consequent!, n.alternate!], true);
  // `cond && sql\`...\``: present when the condition holds; `a ?? sql\`...\``: the first that is SQL.
  if (n.type === 'LogicalExpression') return n.operator === '&&' ? first([n.right!], true) : first([n.left!, n.right!], true);
  let found: FragmentRead | undefined;
  if (n.type === 'Identifier') {
    const init = ex.constInit(n.name!);
    // `let where = sql\`\`; if (x) where = sql\`WHERE ...\``: what the function gives it.
    const values = init ? [init] : [...(ex.writesTo(n.name!)?.values ?? [])].sort((a, b) => a.start - b.start);
    // `join = \`${join} JOIN owners ...\``: a plain template that starts with the name appends to it, as `+=` does.
    const appends = plain ? values.filter((v) => selfAppend(ex, v, n.name!)) : [];
    const bases = values.filter((v) => !appends.includes(v));
    // `let join = ''` appended to later: what it starts with adds nothing.
    const blank = appends.length > 0 ? bases.filter((v) => ex.stringOf(v, 0) === '') : [];
    found = first(bases.filter((v) => !blank.includes(v)), bases.length > 1 || appends.length > 0);
    if (!found && blank.length > 0) found = { empty: true, elsewhere: false, chose: true };
    if (found && appends.length > 0) {
      // Appends in a loop or a callback (`fields.forEach((f) => { set = \`${set} ${f} = ...\` })`) build a list
      // from what the code is given at run time: one part not shown, after what the name starts with.
      const home = ex.declaringNode(n.name!);
      let listed = false;
      for (const a of appends) {
        const t = unwrap(a);
        // A `$${...}` appended numbers after the $n already written (`'WHERE owner = $1'`, then `AND status = $${n}`).
        counter.next = Math.max(counter.next, maxDollarParam(built.sql) + 1);
        if (!home || repeated(home, a)) {
          if (!listed) {
            built.params.push({ n: counter.next, text: n.name!, range: range(a) });
            const text = ` $${counter.next++}`;
            built.runs.push([built.sql.length, a.start, text.length, a.end - a.start]);
            built.sql += text;
          }
          listed = true;
          continue;
        }
        appendTemplate(ex, { ...t, quasis: t.quasis!.slice(1), expressions: t.expressions!.slice(1) } as BNode, built, counter, depth, plain);
      }
      found = { empty: built.sql.slice(mark.sql).trim() === '', elsewhere: found.elsewhere, chose: true };
    }
    // `const { selectPart, joinPart } = listParts(fields)`: the property a helper of this file returns.
    const part = values.length === 0 ? ex.partOf(n.name!) : undefined;
    const call = part?.of && part.path.length === 1 ? unwrap(part.of) : undefined;
    if (call && isCall(call) && unwrap(call.callee!).type === 'Identifier') {
      found = ex.throughCall(call, (ret, inModule) => {
        const obj = inModule === ex ? unwrap(ret) : undefined;
        const prop = obj?.type === 'ObjectExpression' ? (obj.properties ?? []).find((p) => p.type === 'ObjectProperty' && !p.computed && keyName(p.key!) === part!.path[0]) : undefined;
        if (!prop) return undefined;
        const r = appendFragment(ex, prop.value as BNode, built, counter, depth + 1, plain);
        if (r && !r.empty) return r;
        undo();
        return undefined;
      });
    }
  } else if (isMember(n)) {
    const held = ex.follow(n);
    if (held !== n) found = appendFragment(ex, held, built, counter, depth + 1, plain);
  } else if (isCall(n)) {
    const callee = unwrap(n.callee!);
    if (!plain && isMember(callee) && propertyName(callee) === 'join' && isSqlObject(ex, callee.object!)) return appendJoin(ex, n, built, counter, depth, undo);
    if (plain && isMember(callee) && propertyName(callee) === 'join') {
      const r = appendConditions(ex, n, built, counter, depth);
      if (r) return r;
      undo();
      return undefined;
    }
    // What an application's query-builder class builds (`'SELECT COUNT(*) FROM (' + q.buildString() + ') x'`).
    if (plain && isMember(callee) && /\(\s*$/.test(built.sql)) {
      const byClass = classBuilt(ex, n);
      if (byClass) {
        appendAtoms(ex, byClass, built, counter);
        return { empty: false, elsewhere: true, chose: true };
      }
    }
    // A helper of the file that returns a fragment, read with its parameters bound to the call's arguments.
    if (callee.type === 'Identifier') {
      found = ex.throughCall(n, (ret, inModule) => {
        // A fragment of another module is not spliced in: its characters are not in this file.
        if (inModule !== ex) return undefined;
        const r = appendFragment(ex, ret, built, counter, depth + 1, plain);
        if (r && !r.empty) return r;
        undo();
        return undefined;
      });
    }
  }
  return found ? { ...found, elsewhere: true } : undefined;
}

/** `${name} ...` written to `name` itself in a plain template: what it holds with more appended. */
function selfAppend(ex: Extractor, v: BNode, name: string): boolean {
  const t = unwrap(v);
  const head = t.type === 'TemplateLiteral' ? t.expressions?.[0] : undefined;
  return head !== undefined && unwrap(head).type === 'Identifier' && unwrap(head).name === name && ex.source.slice(t.quasis![0]!.start, t.quasis![0]!.end).trim() === '';
}

const LOOPS = new Set(['ForStatement', 'ForOfStatement', 'ForInStatement', 'WhileStatement', 'DoWhileStatement']);

/** Whether `node`, written in `home`, is inside a loop or a function of it: it may run any number of times. */
function repeated(home: BNode, node: BNode): boolean {
  const stack: BNode[] = [];
  pushChildren(home, stack);
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.start > node.start || n.end < node.end || n === node) continue;
    if (LOOPS.has(n.type) || FUNCTION_TYPES.has(n.type) || n.type === 'ObjectMethod' || n.type === 'ClassMethod') return true;
    pushChildren(n, stack);
  }
  return false;
}

/** The elements of an array the file builds: written out, or pushed into in the same function (`chose`). */
function listItems(ex: Extractor, list: BNode): { items: BNode[]; chose: boolean } | undefined {
  if (list.type === 'SpreadElement') return undefined;
  let items: BNode[] | undefined;
  let chose = false;
  const arr = ex.resolve(list);
  const l = unwrap(list);
  if (arr.type === 'ArrayExpression') items = arr.elements?.filter((x): x is BNode => x !== null) ?? [];
  else if (l.type === 'Identifier') {
    const writes = ex.writesTo(l.name!);
    const only = writes?.values.length === 1 ? unwrap(writes.values[0]!) : undefined;
    if (only?.type === 'ArrayExpression') {
      items = [...(only.elements?.filter((x): x is BNode => x !== null) ?? []), ...[...writes!.pushed].sort((a, b) => a.start - b.start)];
      chose = writes!.pushed.length > 0;
    }
  }
  if (!items || items.length === 0 || items.some((x) => x.type === 'SpreadElement')) return undefined;
  return { items, chose };
}

/** What sql-syntax's methods on a fragment (and `SQLSyntax`'s statics of the same name) add after it. */
const SYNTAX_CLAUSES: Record<string, string> = { where: 'WHERE', and: 'AND', or: 'OR', having: 'HAVING', orderBy: 'ORDER BY', groupBy: 'GROUP BY', limit: 'LIMIT', offset: 'OFFSET', append: '' };

/** `SQLSyntax`, the class sql-syntax exports (its default export, or named). */
function isSyntaxClass(ex: Extractor, e: BNode): boolean {
  const imported = syntaxImport(ex, e);
  return imported === 'default' || imported === 'SQLSyntax';
}

/**
 * sql-syntax's helpers, read as the SQL they make: a fragment's `.where(c)`, `.and(c)`, `.orderBy(...)`,
 * `.limit(n)`, `.append(f)`, `.roundBracket()`, and `SQLSyntax.where`, `joinWithAnd`, `joinWithOr`, `csv`,
 * `createUnsafely` of a constant. A part the file does not show is a value, as in the tag.
 */
function appendSyntaxCall(ex: Extractor, call: BNode, built: Built, counter: { next: number }, depth: number): FragmentRead | undefined {
  const callee = unwrap(call.callee!);
  if (!isMember(callee)) return undefined;
  const m = propertyName(callee) ?? '';
  const obj = unwrap(callee.object!);
  const args = call.arguments ?? [];
  const name = callee.property!;
  const put = (text: string, at: BNode) => {
    built.runs.push([built.sql.length, at.start, text.length, at.end - at.start]);
    built.sql += text;
  };
  const part = (a: BNode): boolean => {
    if (a.type === 'SpreadElement') return false;
    const read = appendFragment(ex, a, built, counter, depth + 1, false);
    if (read) {
      if (read.chose) built.chose = true;
      return true;
    }
    const r = range(unwrap(a));
    built.params.push({ n: counter.next, text: ex.text(r), range: r });
    put(`$${counter.next++}`, unwrap(a));
    return true;
  };
  const joined = (items: BNode[], glue: string, bracket: boolean): boolean => {
    for (let k = 0; k < items.length; k++) {
      if (k > 0) put(glue, name);
      const at = built.sql.length;
      const runsAt = built.runs.length;
      if (!part(items[k]!)) return false;
      // joinWithAnd and joinWithOr bracket a part that holds AND or OR of its own.
      if (bracket && / (and|or) /i.test(built.sql.slice(at))) {
        const inner = built.sql.slice(at);
        const runs = built.runs.splice(runsAt).map(([a, b, c, d]): SqlRun => [a + 1, b, c, d]);
        built.sql = built.sql.slice(0, at);
        put('(', name);
        built.runs.push(...runs);
        built.sql += inner;
        put(')', name);
      }
    }
    return true;
  };
  let chose = false;
  if (isSyntaxClass(ex, obj)) {
    if (m === 'createUnsafely') {
      const c = args[0] ? ex.stringOf(args[0], 0) : undefined;
      if (c === undefined) return undefined;
      put(c, unwrap(args[0]!));
    } else if (m === 'csv') {
      if (args.length === 0 || !joined(args, ', ', false)) return undefined;
    } else if (m === 'joinWithAnd' || m === 'joinWithOr') {
      const listed = args[0] ? listItems(ex, args[0]) : undefined;
      if (!listed || !joined(listed.items, m === 'joinWithAnd' ? ' AND ' : ' OR ', true)) return undefined;
      chose = listed.chose;
    } else if (m in SYNTAX_CLAUSES && m !== 'append' && args.length > 0) {
      put(` ${SYNTAX_CLAUSES[m]} `, name);
      if (!joined(args, ', ', false)) return undefined;
    } else return undefined;
    return { empty: false, elsewhere: false, chose };
  }
  if (!(m in SYNTAX_CLAUSES) && m !== 'roundBracket' && m !== 'asc' && m !== 'desc') return undefined;
  if (!isSyntaxExpression(ex, obj, depth)) return undefined;
  if (m === 'roundBracket') put('(', name);
  const base = appendFragment(ex, obj, built, counter, depth + 1, false);
  if (!base) return undefined;
  if (m === 'roundBracket') put(')', name);
  else if (m === 'asc' || m === 'desc') put(` ${m.toUpperCase()}`, name);
  else if (args.length > 0) {
    put(` ${SYNTAX_CLAUSES[m]}${m === 'append' ? '' : ' '}`, name);
    if (!joined(args, ', ', false)) return undefined;
  }
  return { empty: false, elsewhere: false, chose: base.chose };
}

/** Whether an expression is an sql-syntax fragment: the tag, a constant holding one, a helper's call on one or on `SQLSyntax`. */
function isSyntaxExpression(ex: Extractor, e: BNode, depth = 0): boolean {
  if (depth > MAX_FRAGMENT_DEPTH) return false;
  const n = ex.resolve(e);
  if (n.type === 'TaggedTemplateExpression') return isSyntaxTag(ex, n.tag!);
  if (!isCall(n)) return false;
  const callee = unwrap(n.callee!);
  return isMember(callee) && (isSyntaxClass(ex, callee.object!) || isSyntaxExpression(ex, callee.object!, depth + 1));
}

/** `sql.join(parts, sql\` AND \`)` of an array the file builds (written out, or pushed into in the same function). */
function appendJoin(ex: Extractor, call: BNode, built: Built, counter: { next: number }, depth: number, undo: () => void): FragmentRead | undefined {
  const [list, glue] = call.arguments ?? [];
  if (!list || !glue) return undefined;
  const listed = listItems(ex, list);
  if (!listed) return undefined;
  const { items, chose } = listed;
  for (let k = 0; k < items.length; k++) {
    if (k > 0 && !appendFragment(ex, glue, built, counter, depth + 1, false)) {
      undo();
      return undefined;
    }
    const item = items[k]!;
    if (appendFragment(ex, item, built, counter, depth + 1, false)) continue;
    // A value among the parts (`sql.join([1, 2], sql\`, \`)`) is a parameter.
    const r = range(unwrap(item));
    built.params.push({ n: counter.next, text: ex.text(r), range: r });
    const text = `$${counter.next++}`;
    built.runs.push([built.sql.length, r.start, text.length, r.end - r.start]);
    built.sql += text;
  }
  return { empty: false, elsewhere: true, chose };
}

/**
 * `conditions.join(' AND ')` (or ' OR ') in a plain template, of an array of SQL the function writes out or
 * pushes into (`conditions.push(\`status = $${values.length}\`)`): each piece as written, with every one
 * pushed present. Only when the pieces joined read as a condition: a piece the file does not show (a
 * clause handed in) leaves the whole list to the stand-ins.
 */
function appendConditions(ex: Extractor, call: BNode, built: Built, counter: { next: number }, depth: number): FragmentRead | undefined {
  const args = call.arguments ?? [];
  const glue = args.length === 1 ? unwrap(args[0]!) : undefined;
  if (!glue || (glue.type !== 'StringLiteral' && !(glue.type === 'TemplateLiteral' && (glue.expressions ?? []).length === 0))) return undefined;
  const separator = cookWithMap(ex.source, glue.start + 1, glue.end - 1);
  if (!/^\s*(and|or)\s*$/i.test(separator.sql)) return undefined;
  const list = unwrap(unwrap(call.callee!).object!);
  const listed = listItems(ex, list);
  if (!listed || listed.items.length > 64) return undefined;
  // A piece pushed by a local helper (`const add = (clause, v) => { where.push(\`${clause}$${...}\`) }`) is one per
  // call of it, read with that call's arguments.
  const items: { n: BNode; call?: BNode; fn?: BNode }[] = [];
  for (const item of listed.items.map(unwrap)) {
    const helper = list.type === 'Identifier' && listed.chose ? ex.helperAround(list.name!, item) : undefined;
    if (!helper) items.push({ n: item });
    else for (const c of helper.calls.slice(0, 64)) items.push({ n: item, call: c, fn: helper.fn });
  }
  if (items.length > 64) return undefined;
  const isText = (n: BNode) => n.type === 'StringLiteral' || n.type === 'TemplateLiteral';
  if (!items.every(({ n }) => isText(n) || (n.type === 'BinaryExpression' && n.operator === '+' && isText(flattenSum(n)[0]!)))) return undefined;
  // The $n the pieces write themselves (`'c.board_id = $1'`) keep their numbers; values put in them come after.
  counter.next = Math.max(counter.next, ...items.map(({ n }) => maxDollarParam(ex.source.slice(n.start, n.end)) + 1));
  const start = built.sql.length;
  const append = (item: BNode) => {
    if (item.type === 'StringLiteral') {
      const part = cookWithMap(ex.source, item.start + 1, item.end - 1);
      appendCooked(built, part);
    } else if (item.type === 'TemplateLiteral') appendTemplate(ex, item, built, counter, depth + 1, true);
    else appendSum(ex, flattenSum(item), built, counter);
    return true;
  };
  items.forEach(({ n, call: c, fn }, k) => {
    if (k > 0) {
      appendCooked(built, separator);
    }
    if (c && fn) ex.throughBody(c, fn, n, append);
    else append(n);
  });
  if (!parses(`SELECT 1 WHERE ${built.sql.slice(start)}`)) return undefined;
  return { empty: false, elsewhere: true, chose: listed.chose };
}

/** slonik's `sql.fragment` on an object named for SQL (`sqlObj.fragment`), also when it comes from the application's own module. */
function fragmentTag(ex: Extractor, tag: BNode): boolean {
  const t = unwrap(tag);
  return isMember(t) && propertyName(t) === 'fragment' && isSqlObject(ex, t.object!);
}

/** The object slonik's and postgres.js's helpers hang on: a tag `sql`, or a name that starts with it (`sqlObj`). */
function isSqlObject(ex: Extractor, o: BNode): boolean {
  return sqlTagName(ex, o) !== undefined || /^sql/i.test(ex.lastName(o) ?? '');
}

/**
 * `sql('orders')`, `sql.identifier(['public', 'orders'])` (postgres.js's and slonik's identifier helpers):
 * the quoted identifier; with a name chosen at run time (`sql(table)`), a stand-in named after the
 * argument (`standIn` holds the call as written).
 */
function identifierOf(ex: Extractor, e: BNode): { text: string; standIn?: string } | undefined {
  if (!isCall(e) || !e.arguments?.[0] || e.arguments.length > 1) return undefined;
  const c = unwrap(e.callee!);
  const isHelper = (c.type === 'Identifier' && sqlTagName(ex, c) !== undefined) || (isMember(c) && propertyName(c) === 'identifier' && sqlTagName(ex, c.object!) !== undefined) ||
    formatHelper(ex, c) === 'ident';
  if (!isHelper) return undefined;
  const arg = e.arguments[0];
  const a = ex.resolve(arg);
  // postgres.js also takes an object or a list of objects (`sql(rows)`) to insert: not a name.
  if (a.type === 'ObjectExpression' || (a.type === 'ArrayExpression' && (a.elements ?? []).some((x) => x && ex.resolve(x).type === 'ObjectExpression'))) return undefined;
  let names = a.type === 'ArrayExpression' ? (a.elements ?? []).map((x) => (x ? ex.stringOf(x, 0) : undefined)) : [ex.stringOf(a, 0)];
  // sql-syntax's escapeIdentifier('schema.table') quotes each part.
  if (c.type === 'Identifier' && ex.importSource(c.name!) === SYNTAX_PACKAGE) names = names.flatMap((x) => (x === undefined ? [x] : x.split('.')));
  if (names.length > 0 && names.every((x) => x !== undefined)) return { text: (names as string[]).map((x) => `"${x.replace(/"/g, '""')}"`).join('.') };
  return { text: standInName(ex.text(range(arg))), standIn: ex.text(range(e)) };
}

/** The package node-postgres's documentation points to for names and values written into SQL text. */
const FORMAT_PACKAGE = 'pg-format';

/**
 * Which of pg-format's functions a callee is: `format` (the package itself, or `format.format`), `ident`
 * (imported by name, or `format.ident`), `literal`; undefined when it is not pg-format's.
 */
function formatHelper(ex: Extractor, callee: BNode): 'format' | 'ident' | 'literal' | undefined {
  const c = unwrap(callee);
  const of = (e: BNode): string | undefined => {
    const t = unwrap(e);
    if (t.type !== 'Identifier' || ex.importSource(t.name!) !== FORMAT_PACKAGE) return undefined;
    const b = ex.lookup(t.name!)?.binding;
    return b && 'imported' in b && b.imported !== undefined ? b.imported : 'default';
  };
  const name = isMember(c) ? (['default', '*'].includes(of(c.object!) ?? '') ? propertyName(c) : undefined) : of(c);
  if (name === 'default' || name === '*' || name === 'format') return 'format';
  return name === 'ident' || name === 'literal' ? name : undefined;
}

/**
 * The SQL of pg-format's `format(text, ...args)`: `%I` a name (a stand-in when chosen at run time), `%L`
 * a constant as a literal or else a $n parameter, `%s` a constant's text or else a $n, `%%` a percent sign.
 * Read when the format text is a literal without escapes, so each character maps to the file.
 */
function formatted(ex: Extractor, call: BNode): { built: Built; lit: BNode } | undefined {
  const [first, ...args] = call.arguments ?? [];
  const lit = first ? ex.resolve(first) : undefined;
  if (!lit || args.some((a) => a.type === 'SpreadElement')) return undefined;
  const raw = lit.type === 'StringLiteral' || (lit.type === 'TemplateLiteral' && (lit.expressions?.length ?? 0) === 0) ? ex.source.slice(lit.start + 1, lit.end - 1) : undefined;
  if (raw === undefined || raw.includes('\\') || /%\d+\$/.test(raw)) return undefined;
  const built: Built = { sql: '', runs: [], params: [] };
  let next = 1;
  let argAt = 0;
  let from = 0;
  const put = (text: string, fileStart: number, fileLen: number) => {
    built.runs.push([built.sql.length, fileStart, text.length, fileLen]);
    built.sql += text;
  };
  const base = lit.start + 1;
  for (const m of raw.matchAll(/%([ILs%])/g)) {
    const at = m.index;
    if (at > from) put(raw.slice(from, at), base + from, at - from);
    from = at + 2;
    if (m[1] === '%') {
      put('%', base + at, 2);
      continue;
    }
    const arg = args[argAt++];
    if (!arg) return undefined;
    const constant = ex.stringOf(arg, 0);
    const r = ex.resolve(arg);
    const number = r.type === 'NumericLiteral' ? String(r.value) : undefined;
    if (m[1] === 'I') {
      if (constant !== undefined) put(constant.split('.').map((x) => (/^[a-z_][a-z0-9_]*$/.test(x) ? x : `"${x.replace(/"/g, '""')}"`)).join('.'), base + at, 2);
      else {
        (built.standIns ??= []).push(ex.text(range(arg)));
        put(standInName(ex.text(range(arg))), base + at, 2);
      }
    } else if (m[1] === 'L' && (constant !== undefined || number !== undefined)) put(number ?? `'${constant!.replace(/'/g, "''")}'`, base + at, 2);
    else if (m[1] === 's' && (constant !== undefined || number !== undefined)) put(constant ?? number!, base + at, 2);
    else {
      built.params.push({ n: next, text: ex.text(range(arg)), range: range(arg) });
      put(`$${next++}`, base + at, 2);
    }
  }
  if (raw.length > from) put(raw.slice(from), base + from, raw.length - from);
  return { built, lit };
}

function maxDollarParam(s: string): number {
  let max = 0;
  for (const m of s.matchAll(/\$(\d+)/g)) max = Math.max(max, Number(m[1]));
  return max;
}

/**
 * The value of a string literal's or template chunk's source text [from, to), with where each of its
 * characters sits in the file: an escape (\n, \x41, \u{1F600}) maps to the whole escape; a line
 * continuation produces nothing.
 */
function cookWithMap(src: string, from: number, to: number): { sql: string; runs: SqlRun[] } {
  const runs: SqlRun[] = [];
  let out = '';
  let runStart = -1;
  let runSql = 0;
  const close = (i: number) => {
    if (runStart >= 0) runs.push([runSql, runStart, i - runStart, i - runStart]);
    runStart = -1;
  };
  let i = from;
  while (i < to) {
    const c = src[i]!;
    if (c !== '\\') {
      if (runStart < 0) {
        runStart = i;
        runSql = out.length;
      }
      out += c;
      i++;
      continue;
    }
    close(i);
    const e = src[i + 1] ?? '';
    let value: string;
    let len = 2;
    if (e === 'u' && src[i + 2] === '{') {
      const end = src.indexOf('}', i + 3);
      value = String.fromCodePoint(Math.min(0x10ffff, parseInt(src.slice(i + 3, end), 16) || 0));
      len = end - i + 1;
    } else if (e === 'u') {
      value = String.fromCharCode(parseInt(src.slice(i + 2, i + 6), 16) || 0);
      len = 6;
    } else if (e === 'x') {
      value = String.fromCharCode(parseInt(src.slice(i + 2, i + 4), 16) || 0);
      len = 4;
    } else if (e === '\r' && src[i + 2] === '\n') {
      value = '';
      len = 3;
    } else if (e === '\n' || e === '\r' || e === '\u2028' || e === '\u2029') {
      value = '';
    } else {
      value = ({ n: '\n', t: '\t', r: '\r', b: '\b', f: '\f', v: '\v', '0': '\0' } as Record<string, string>)[e] ?? e;
    }
    if (value !== '') {
      runs.push([out.length, i, value.length, len]);
      out += value;
    }
    i += len;
  }
  close(i);
  return { sql: out, runs };
}
