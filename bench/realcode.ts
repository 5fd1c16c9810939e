// How much of the query code in real repositories the finder sees and can analyse, per library, and how
// many of the indexes it then suggests cannot exist. Each repository is a git directory (a bare clone or
// a work tree; the files are read at HEAD). Nothing of them is kept.
//
// Two independent readings of each file:
// - the inventory, written here apart from the finder: every call site that, by the library's documented
//   API, runs a query (member calls by method name on receivers that match the library's patterns, in
//   files that import it), found by its own walk of the syntax tree;
// - the finder (src/core/query/find), as the language server runs it.
// A site is *found* when a found query covers its call; *analysable* when the found query reads as a
// command the advisor accepts (MongoDB: fromMongoCommand; SQL: PostgreSQL's parser through the shape
// reader). *Impossible* counts suggested indexes on a name the statement's own parse tree does not list
// as a table (a CTE, a FROM-subquery alias), on an output alias, on a name the finder wrote in place of
// one chosen at run time, or on MongoDB's `_id`, checked here from the tree and the found query, not by
// the advisor's own filter.
//
// Run: node --import tsx bench/realcode.ts <git dir>... [--list]   (prints a table per repository and in total)

import { posix } from 'node:path';
import { dependenciesOf, gitFiles, repoDependencies, repoLabel } from './git-files';
import { parse } from '@babel/parser';
import { loadSqlParser } from '../src/core/index';
import { analysable, impossibleCount } from './inventory/readable';
import { findQueries, querySourceKind, scriptDialect } from '../src/core/query/find/index';

type Library = 'mongodb-driver' | 'mongoose' | 'prisma' | 'knex' | 'sequelize' | 'typeorm' | 'postgres.js' | 'slonik' | 'node-postgres';
interface Site { library: Library; file: string; start: number; end: number; line: number; text: string }
/**
 * `nothing`: found, not analysable, and the advisor read it and found nothing to index (an INSERT ... VALUES,
 * no table). The sites less those are the ones with an index question.
 */
/** `other`: found, and written for another database (MySQL's or SQLite's backquoted names): not a PostgreSQL question. */
interface Tally { sites: number; found: number; analysable: number; nothing: number; other: number }

const args = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const listMisses = process.argv.includes('--list');

const MONGO_OPS = new Set(['find', 'findOne', 'aggregate', 'countDocuments', 'count', 'distinct', 'updateOne', 'updateMany', 'deleteOne', 'deleteMany',
  'findOneAndUpdate', 'findOneAndDelete', 'findOneAndReplace', 'replaceOne', 'bulkWrite', 'update', 'remove']);
const MONGOOSE_OPS = new Set(['find', 'findOne', 'findById', 'countDocuments', 'aggregate', 'updateOne', 'updateMany', 'deleteOne', 'deleteMany',
  'findOneAndUpdate', 'findByIdAndUpdate', 'findByIdAndDelete', 'findByIdAndRemove', 'findOneAndDelete', 'findOneAndRemove', 'distinct', 'exists', 'replaceOne']);
const PRISMA_OPS = new Set(['findMany', 'findFirst', 'findFirstOrThrow', 'findUnique', 'findUniqueOrThrow', 'count', 'aggregate', 'groupBy', 'updateMany', 'update', 'deleteMany', 'delete', 'upsert']);
const SEQUELIZE_OPS = new Set(['findAll', 'findOne', 'findByPk', 'findAndCountAll', 'count', 'destroy']);
const TYPEORM_OPS = new Set(['find', 'findOne', 'findBy', 'findOneBy', 'findAndCount', 'findOneOrFail', 'findOneByOrFail', 'count', 'countBy', 'delete', 'update']);
/** What a Knex instance is usually called, as a variable or a field of the class that uses it. */
const KNEX_INSTANCE = /^(this\.)?(knex|db|trx|tx|k|database)$/;
/** Builder calls whose arguments are parts of the query they build (a `raw` there is not a query of its own). */
const KNEX_PARTS = new Set(['select', 'with', 'where', 'andWhere', 'orWhere', 'whereIn', 'whereNotIn', 'whereExists', 'from', 'join', 'innerJoin', 'leftJoin',
  'rightJoin', 'orderBy', 'groupBy', 'having', 'update', 'insert', 'union', 'unionAll', 'column', 'columns', 'first', 'returning', 'merge', 'fromRaw', 'as',
  'pluck', 'count', 'max', 'min', 'sum', 'distinct', 'onConflict', 'whereNot', 'havingRaw', 'orderByRaw', 'groupByRaw', 'joinRaw']);
const KNEX_MORE = new Set(['limit', 'offset', 'table', 'modify', 'forUpdate', 'clone', 'timeout', 'as', 'andWhere', 'whereNull', 'whereNotNull', 'whereBetween', 'whereRaw', 'whereLike', 'whereILike']);
const KNEX_TERMINAL = new Set(['where', 'select', 'first', 'orderBy', 'whereIn', 'update', 'del', 'delete', 'count', 'join', 'leftJoin', 'limit']);

interface N { type: string; start: number; end: number; [k: string]: unknown }
const isN = (v: unknown): v is N => typeof v === 'object' && v !== null && typeof (v as N).type === 'string';

function walk(root: N, visit: (n: N) => void): void {
  const stack: N[] = [root];
  while (stack.length > 0) {
    const n = stack.pop()!;
    visit(n);
    for (const k of Object.keys(n)) {
      if (k === 'loc' || k === 'extra' || k.endsWith('Comments')) continue;
      const v = n[k];
      if (Array.isArray(v)) for (const x of v) { if (isN(x)) stack.push(x); }
      else if (isN(v)) stack.push(v);
    }
  }
}

function memberName(callee: N): string | undefined {
  if (callee.type !== 'MemberExpression' && callee.type !== 'OptionalMemberExpression') return undefined;
  const p = callee['property'] as N;
  return p.type === 'Identifier' && !callee['computed'] ? (p['name'] as string) : undefined;
}

/** The dotted text of a receiver (`this.orderModel`, `app.db.orders`), or its source when it is a call. */
function receiverText(src: string, callee: N): string {
  const o = callee['object'] as N;
  return src.slice(o.start, o.end);
}

/** Call sites per library, by the documented API only. */
function inventory(file: string, src: string, setups: ReadonlySet<string> = new Set(), deps?: ReadonlySet<string>): Site[] {
  const kind = querySourceKind('', file);
  if (kind !== 'script' && kind !== 'mongodb-playground') return [];
  let ast: N;
  try {
    ast = parse(src, { sourceType: 'unambiguous', errorRecovery: true, plugins: file.endsWith('x') ? ['typescript', 'jsx', 'decorators-legacy'] : /\.(c|m)?ts$/.test(file) ? ['typescript', 'decorators-legacy'] : ['jsx', 'decorators-legacy'] }) as unknown as N;
  } catch {
    return [];
  }
  const imports = new Set<string>();
  for (const m of src.matchAll(/(?:from\s+|require\(\s*)['"]([^'"]+)['"]/g)) {
    imports.add(m[1]!);
    // A module of the repository that sets a library up (`module.exports = knex(config)`) stands for it.
    const setup = m[1]!.startsWith('.') ? setups.has(resolveLocal(file, m[1]!)) : false;
    if (setup) imports.add('knex');
  }
  const has = (...names: string[]) => [...imports].some((i) => names.some((n) => i === n || i.startsWith(`${n}/`)));
  const modelImport = [...imports].some((i) => /models?\b|schemas?\b|entit/i.test(i));
  const collectionNames = mongoCollectionNames(src, ast);
  const out: Site[] = [];
  // A library the repository does not depend on is not the one a capitalised receiver (`Orders.findOne`) belongs to.
  const dependsOn = (...names: string[]) => deps === undefined || names.some((d) => deps.has(d));
  const add = (library: Library, n: N) => out.push({ library, file, start: n.start, end: n.end, line: src.slice(0, n.start).split('\n').length, text: src.slice(n.start, Math.min(n.end, n.start + 90)).replace(/\s+/g, ' ') });
  // slonik, also published under a scope (`@x/slonik`); slonik and postgres.js also reached through a module
  // of the package that made the instance (`export { sql } from 'slonik'`), where the package depends on
  // the library and the file imports no other library's `sql` tag.
  const otherTagLibrary = has('drizzle-orm', '@vercel/postgres', 'kysely', 'sql-template-strings', 'sql-template-tag', '@databases/pg');
  const slonikImported = has('slonik') || [...imports].some((i) => /^@[\w.-]+\/slonik$/.test(i));
  const slonik = slonikImported || (!otherTagLibrary && !has('postgres') && deps !== undefined && deps.has('slonik'));
  const otherSqlTag = slonik || otherTagLibrary;
  const postgresJs = has('postgres') || (!otherSqlTag && deps !== undefined && deps.has('postgres'));
  const pgTag = /^(this\.)?(sql|tx|t|trx|db)$/;
  // Where the arguments of Knex builder calls start: a `raw` there is part of that query.
  const argumentStarts = new Set<number>();
  walk(ast, (n) => {
    if (n.type !== 'CallExpression' && n.type !== 'OptionalCallExpression') return;
    const name = memberName(n['callee'] as N);
    if (name !== undefined && KNEX_PARTS.has(name)) for (const a of n['arguments'] as N[]) argumentStarts.add(a.start);
  });
  walk(ast, (n) => {
    if (n.type === 'TaggedTemplateExpression') {
      const tag = src.slice((n['tag'] as N).start, (n['tag'] as N).end);
      // A fragment (`sql\`, \``, `sql\`returning *\``) joined into a statement elsewhere is not a query of its own.
      const quasi = n['quasi'] as N;
      const statement = /^\s*\(?\s*(select|with|insert|update|delete|merge|values|table)\b/i.test(src.slice(quasi.start + 1, quasi.start + 200));
      if (postgresJs && pgTag.test(tag) && statement) add('postgres.js', n);
      else if (slonik && /^sql(\.(unsafe|type\(.*\)|typeAlias\(.*\)))?$/s.test(tag) && statement) add('slonik', n);
      else if (has('@prisma/client') && /\$(queryRaw|executeRaw)$/.test(tag)) add('prisma', n);
      return;
    }
    if (n.type !== 'CallExpression' && n.type !== 'OptionalCallExpression') return;
    const callee = n['callee'] as N;
    const m = memberName(callee);
    if (m === undefined) return;
    const recv = receiverText(src, callee);
    const recvNode = callee['object'] as N;
    if (m === 'unsafe' && postgresJs && pgTag.test(recv)) return add('postgres.js', n);
    const first = (n['arguments'] as N[])[0];
    // node-postgres also takes a query config: `client.query({ name, text: 'SELECT ...', values })`.
    const text = first?.type === 'ObjectExpression' ? (first['properties'] as N[]).find((p) => p.type === 'ObjectProperty' && /^(text|["']text["'])$/.test(src.slice((p['key'] as N).start, (p['key'] as N).end)))?.['value'] as N | undefined : undefined;
    if (m === 'query' && text && ['StringLiteral', 'TemplateLiteral'].includes(text.type) && /^[\s\S]?\s*\(?\s*(select|with|insert|update|delete)\b/i.test(src.slice(text.start, text.start + 200))) {
      if (has('pg') || /pool|client|db|pg/i.test(recv)) return add('node-postgres', n);
    }
    if (m === 'query' && first && ['StringLiteral', 'TemplateLiteral'].includes(first.type) && /^[\s\S]?\s*\(?\s*(select|with|insert|update|delete)\b/i.test(src.slice(first.start, first.start + 200))) {
      if (has('pg') || /pool|client|db|pg/i.test(recv)) return add('node-postgres', n);
      if (has('sequelize')) return add('sequelize', n);
      if (has('typeorm')) return add('typeorm', n);
    }
    // knex.raw('SELECT ...') is a statement; a raw passed into a builder call (`select(knex.raw('count(*) as n'))`)
    // or one that does not start a statement is a fragment of another query, not a query of its own.
    if (m === 'raw' && has('knex')) {
      if (argumentStarts.has(n.start) || !first || !/^[\s\S]?\s*\(?\s*(select|with|insert|update|delete)\b/i.test(src.slice(first.start, first.start + 200))) return;
      return add('knex', n);
    }
    // Prisma: <client>.<model>.<op>(. A model's accessor hangs off a client, never off `this` itself: a
    // class's own `this.http.delete(...)` or `this.userService.count(...)` in a file that imports Prisma's
    // types is not a Prisma call.
    if (PRISMA_OPS.has(m) && (has('@prisma/client') || /prisma/i.test(recv)) && /^[\w.]*\.(?!\$)[a-z]\w*$/.test(recv) && !/^this\.\w+$/.test(recv)) return add('prisma', n);
    // Knex: a chain whose root is <knex>('table') or <knex>.select/from/table(...), the instance a variable or a
    // field (`this.db(TABLE).where(...)`); not a property path that only starts with such a name
    // (`db.stores.users.update(...)`).
    if (has('knex') && (KNEX_TERMINAL.has(m) || KNEX_PARTS.has(m))) {
      let root: N = recvNode;
      let nearest: string | undefined;
      let inserts = false;
      for (;;) {
        const c = root.type === 'CallExpression' ? (root['callee'] as N) : undefined;
        if (c && KNEX_INSTANCE.test(src.slice(c.start, c.end))) break;
        if (root.type === 'MemberExpression' && KNEX_INSTANCE.test(src.slice(root.start, root.end))) break;
        const member = c?.type === 'MemberExpression' ? c : root.type === 'MemberExpression' ? root : undefined;
        if (!member) break;
        nearest = memberName(member);
        if (nearest === 'insert') inserts = true;
        root = member['object'] as N;
      }
      const outer = src.slice(n.end).match(/^\s*\.\s*(\w+)/)?.[1];
      const tableCall = root.type === 'CallExpression' && KNEX_INSTANCE.test(src.slice((root['callee'] as N).start, (root['callee'] as N).end));
      const fromInstance = KNEX_INSTANCE.test(src.slice(root.start, root.end)) && (nearest === undefined ? ['select', 'from', 'table'].includes(m) : ['select', 'from', 'table'].includes(nearest));
      // Only the outermost call of a chain is its site.
      // An insert (`.insert(rows).onConflict(...)`) has nothing to look up, as before.
      if ((tableCall || fromInstance) && !inserts && m !== 'insert' && !(outer && (KNEX_TERMINAL.has(outer) || KNEX_PARTS.has(outer) || KNEX_MORE.has(outer)))) return add('knex', n);
    }
    const sequelizeOnly = ['findAll', 'findByPk', 'findAndCountAll', 'destroy'].includes(m) && !has('mongoose', 'typeorm', '@prisma/client');
    if (dependsOn('sequelize', 'sequelize-typescript') && (has('sequelize', 'sequelize-typescript') || sequelizeOnly || (modelImport && SEQUELIZE_OPS.has(m) && !['findOne', 'count'].includes(m) && !has('mongoose')))) {
      if (SEQUELIZE_OPS.has(m) && /^[A-Z]\w*$|^(models|db|sequelize\.models)\.\w+$/.test(recv)) return add('sequelize', n);
      if (m === 'update' && /^[A-Z]\w*$/.test(recv) && has('sequelize')) return add('sequelize', n);
    }
    if ((has('typeorm', '@nestjs/typeorm') || [...imports].some((i) => /typeorm/.test(i))) && (TYPEORM_OPS.has(m) || m === 'createQueryBuilder')) {
      // A repository by its name in any case (`userRepository`, `const repository = getRepository(Author)`).
      if (/(repository|repo)$/i.test(recv) || /getRepository\(|\.manager$|^manager$/.test(recv) || (m !== 'createQueryBuilder' && /^[A-Z]\w*$/.test(recv) && /where|take|order/.test(src.slice(n.start, n.end)))) return add('typeorm', n);
    }
    if (MONGOOSE_OPS.has(m) && dependsOn('mongoose', '@nestjs/mongoose', '@typegoose/typegoose') && (has('mongoose', '@nestjs/mongoose') || (modelImport && !has('sequelize', 'typeorm', '@prisma/client', 'knex'))) && (/^[A-Z]\w*$/.test(recv) || /^this\.\w+Model$/.test(recv) || /\.model\(/.test(recv))) return add('mongoose', n);
    // An array's find (on what toArray() returned, or given a function) is not a query.
    if (/toArray\(\)\)?$/.test(recv) || /Function/.test(first?.type ?? '')) return;
    if (MONGO_OPS.has(m) && (has('mongodb') || /\.collection\(|^db\.\w+$|getCollection\(/.test(recv) || kind === 'mongodb-playground') && !/^[A-Z]/.test(recv)) {
      if (/collection|^db\b|\bdb\.\w+$|[cC]ollection\w*$|^this\.\w+$/.test(recv)) return add('mongodb-driver', n);
    }
    // A receiver the file binds to what `.collection(...)` returns: a variable, a field, a function returning it.
    const bound = /^(?:await\s+)?(?:this\.|[\w.]+\.)?(\w+)(?:\(\s*\))?$/.exec(recv)?.[1];
    if (MONGO_OPS.has(m) && bound !== undefined && collectionNames.has(bound) && !has('mongoose')) return add('mongodb-driver', n);
  });
  return out;
}

/**
 * Names a file binds to a driver collection or a legacy bulk: `const x = db.collection('x')`, `this.x = ...collection(...)`,
 * a function whose return is one, and names destructured from an object called `collections`.
 */
function mongoCollectionNames(src: string, ast: N): Set<string> {
  const out = new Set<string>();
  // Also a legacy bulk (`coll.initializeUnorderedBulkOp()`), whose `find(filter)` queues an update or delete.
  const makesCollection = (e: N | undefined | null) => !!e && /\.(collection|getCollection|initializeUnorderedBulkOp|initializeOrderedBulkOp)\(/.test(src.slice(e.start, e.end));
  const last = (e: N): string | undefined => e.type === 'Identifier' ? (e['name'] as string) : e.type === 'MemberExpression' ? memberName({ ...e, type: 'MemberExpression' }) : undefined;
  walk(ast, (n) => {
    if (n.type === 'VariableDeclarator') {
      const id = n['id'] as N;
      const init = n['init'] as N | null;
      if (id.type === 'Identifier' && init && (makesCollection(init) && !/^(async\s*)?(function|\()/.test(src.slice(init.start, init.start + 10)) || isFunctionReturningCollection(init))) out.add(id['name'] as string);
      if (id.type === 'ObjectPattern' && init && /collections$/i.test(src.slice(init.start, init.end))) {
        for (const p of id['properties'] as N[]) { const v = p['value'] as N | undefined; if (v?.type === 'Identifier') out.add(v['name'] as string); }
      }
    } else if (n.type === 'AssignmentExpression' && makesCollection(n['right'] as N)) {
      const name = last(n['left'] as N);
      if (name) out.add(name);
    } else if (n.type === 'FunctionDeclaration' && n['id'] && isFunctionReturningCollection(n)) {
      out.add((n['id'] as N)['name'] as string);
    }
  });
  function isFunctionReturningCollection(f: N): boolean {
    if (!['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression'].includes(f.type)) return false;
    const body = f['body'] as N;
    if (body.type !== 'BlockStatement') return makesCollection(body);
    let yes = false;
    walk(body, (x) => { if (x.type === 'ReturnStatement' && makesCollection(x['argument'] as N | null)) yes = true; });
    return yes;
  }
  return out;
}

/** A relative import's target as a repository path without its extension or `/index`. */
function resolveLocal(from: string, spec: string): string {
  return posix.normalize(posix.join(posix.dirname(from), spec)).replace(/\.(c|m)?(j|t)sx?$/, '').replace(/\/index$/, '');
}

/** The repository's modules that import knex and export what they made of it: its Knex set-up modules. */
function knexSetups(files: readonly { path: string; text: string }[]): Set<string> {
  const out = new Set<string>();
  for (const f of files) {
    if (/(?:from\s+|require\(\s*)['"]knex['"]/.test(f.text) && /module\.exports|export\s+(default|const|\{)/.test(f.text)) {
      out.add(f.path.replace(/\.(c|m)?(j|t)sx?$/, '').replace(/\/index$/, ''));
    }
  }
  return out;
}

async function main(): Promise<void> {
  await loadSqlParser();
  const total = new Map<Library, Tally>();
  let impossible = 0;
  for (const dir of args) {
    const per = new Map<Library, Tally>();
    const misses: string[] = [];
    const files = gitFiles(dir);
    const setups = knexSetups(files);
    const deps = repoDependencies(dir);
    for (const f of files) {
      const sites = inventory(f.path, f.text, setups, deps && dependenciesOf(deps, f.path));
      if (sites.length === 0) continue;
      const found = findQueries(f.text, querySourceKind('', f.path), scriptDialect('', f.path)).queries;
      for (const q of found) impossible += impossibleCount(q, listMisses ? (l) => console.log(l) : undefined);
      for (const s of sites) {
        const t = per.get(s.library) ?? { sites: 0, found: 0, analysable: 0, nothing: 0, other: 0 };
        per.set(s.library, t);
        t.sites++;
        const covers = (r: { start: number; end: number }) => r.start <= s.start + 1 && s.end - 1 <= r.end;
        // A bulkWrite of operations pushed elsewhere is found when they are, with this call as one that runs them.
        const q = found.find((x) => covers(x.range)) ?? found.find((x) => x.range.start >= s.start && x.range.end <= s.end)
          ?? found.find((x) => x.engine === 'mongodb' && (x.calledFrom ?? []).some(covers));
        if (!q) {
          misses.push(`  not found  ${s.library} ${f.path}:${s.line} ${s.text}`);
          continue;
        }
        t.found++;
        const read = analysable(q);
        if (read === true) t.analysable++;
        else if (read === 'nothing to index') t.nothing++;
        else if (read === 'another database') {
          t.other++;
          misses.push(`  other db   ${s.library} ${f.path}:${s.line} ${s.text}`);
        } else misses.push(`  not read   ${s.library} ${f.path}:${s.line} ${s.text}`);
      }
    }
    console.log(repoLabel(dir));
    for (const [lib, t] of per) {
      console.log(line(lib, t));
      const all = total.get(lib) ?? { sites: 0, found: 0, analysable: 0, nothing: 0, other: 0 };
      all.sites += t.sites;
      all.found += t.found;
      all.analysable += t.analysable;
      all.nothing += t.nothing;
      all.other += t.other;
      total.set(lib, all);
    }
    if (listMisses) for (const m of misses) console.log(m);
  }
  console.log('all repositories');
  for (const [lib, t] of total) console.log(line(lib, t));
  console.log(`suggested indexes that cannot exist: ${impossible}`);
}

/**
 * `analysable` counts of all sites; `of index questions` counts of the sites left when those read with
 * nothing to index and those written for another database are taken out, the share that compares with
 * the target (docs/realcode.md).
 */
function line(lib: Library, t: Tally): string {
  const questions = t.sites - t.nothing - t.other;
  const other = t.other > 0 ? `  another database ${String(t.other).padStart(4)}` : '';
  return `  ${lib.padEnd(15)} sites ${String(t.sites).padStart(4)}  found ${pct(t.found, t.sites)}  analysable ${pct(t.analysable, t.sites)}  nothing to index ${String(t.nothing).padStart(4)}${other}  index questions ${String(questions).padStart(4)}, analysable ${pct(t.analysable, questions)}`;
}

function pct(n: number, of: number): string {
  return `${String(n).padStart(4)} (${of === 0 ? '  -' : `${Math.round((100 * n) / of)}%`.padStart(4)})`;
}

void main();
