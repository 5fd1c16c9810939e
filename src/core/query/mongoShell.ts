// Reads a mongo shell query such as `db.orders.find({country_id: 1}).sort({created_at: -1}).limit(10)`
// into a typed MongoCommand WITHOUT evaluating it. The text is parsed as one expression (Babel, through the
// shell-notation module); the call chain is walked as
// syntax (db, collection, operation, cursor methods) and every argument goes through the literal reader
// of the shell-notation module, which reads literals and known BSON constructors only. Nothing in the
// text is ever run, so a hostile query can only be refused.

import { evaluateShellExpression, parseOneExpression, shellNumber, type ParseError } from '../mongo/shellNotation';
import type { BNode } from './find/syntax';
import { lineColumn, type SourceRange } from '../text';

export type MongoOperation =
  | 'find'
  | 'findOne'
  | 'aggregate'
  | 'count'
  | 'countDocuments'
  | 'distinct'
  | 'updateOne'
  | 'updateMany'
  | 'replaceOne'
  | 'deleteOne'
  | 'deleteMany'
  | 'findOneAndUpdate'
  | 'findOneAndReplace'
  | 'findOneAndDelete';

export type ExplainVerbosity = 'queryPlanner' | 'executionStats' | 'allPlansExecution';

export type { SourceRange } from '../text';

export type MongoCommandPart =
  | 'whole'
  | 'database'
  | 'collection'
  | 'operation'
  | 'filter'
  | 'sort'
  | 'projection'
  | 'limit'
  | 'skip'
  | 'hint'
  | 'pipeline'
  | 'update'
  | 'field'
  | 'collation'
  | 'options'
  | 'explain';

/** Values are Extended JSON v2 as the shell-notation reader gives them ({$oid}, {$date}, {$regex}...). */
export type Doc = Record<string, unknown>;

export interface MongoCommand {
  /** Set only by `db.getSiblingDB('x')` / `db.getDB('x')`; otherwise the connection's database. */
  database?: string;
  collection: string;
  operation: MongoOperation;
  filter?: Doc;
  sort?: Doc;
  projection?: Doc;
  limit?: number;
  skip?: number;
  hint?: string | Doc;
  /** aggregate: the stages in order. */
  pipeline?: Doc[];
  /** update/findOneAndUpdate: an update document or an update pipeline; replace: the replacement. */
  update?: Doc | Doc[];
  /** distinct: the field name. */
  field?: string;
  collation?: Doc;
  /** Options the reader keeps but does not interpret (upsert, arrayFilters, allowDiskUse, ...). */
  options?: Doc;
  /** Set when the text itself asks for an explain (`.explain(...)` or `db.c.explain(...)`). */
  explain?: ExplainVerbosity;
  /** True when placeholders were allowed and some argument is not a literal ({$placeholder: text}). */
  hasPlaceholders: boolean;
  ranges: Partial<Record<MongoCommandPart, SourceRange>>;
}

export type MongoQueryResult = { ok: true; command: MongoCommand; warnings: string[] } | { ok: false; error: string };

export interface MongoQueryOptions {
  /** Keep non-literal arguments (variables in code) as {$placeholder: text} instead of refusing them. */
  placeholders?: boolean;
}

/** Longest query text read; a query is a few lines, a megabyte is not one. */
export const MAX_QUERY_TEXT = 1024 * 1024;

/** Longest call chain read (db.c.find().sort().limit()... ); deeper chains are refused. */
const MAX_CHAIN = 64;

const OPERATIONS: ReadonlySet<string> = new Set<MongoOperation>([
  'find', 'findOne', 'aggregate', 'count', 'countDocuments', 'distinct', 'updateOne', 'updateMany', 'replaceOne',
  'deleteOne', 'deleteMany', 'findOneAndUpdate', 'findOneAndReplace', 'findOneAndDelete',
]);

/** Cursor methods that change nothing the server is asked, so the reader accepts and ignores them. */
const NEUTRAL_CURSOR_METHODS = new Set(['toArray', 'pretty', 'batchSize', 'noCursorTimeout', 'readPref', 'readConcern', 'tailable', 'showRecordId', 'returnKey']);

/** Reads one shell query. Never throws on bad input: the error is one sentence naming the position. */
export function parseMongoQuery(text: string, options: MongoQueryOptions = {}): MongoQueryResult {
  if (typeof text !== 'string') return { ok: false, error: 'The query is not text.' };
  if (text.length > MAX_QUERY_TEXT) return { ok: false, error: `The query is ${Math.round(text.length / 1024)} KB long, more than the ${MAX_QUERY_TEXT / 1024} KB this reader accepts.` };
  if (text.trim() === '') return { ok: false, error: 'The query is empty: write one such as db.orders.find({country_id: 1}).' };
  const parsed = parseOneExpression(text, { allowAwait: true });
  if ('syntaxError' in parsed) return { ok: false, error: syntaxError(text, parsed.syntaxError) };
  if ('trailingAt' in parsed) return { ok: false, error: `${at(text, parsed.trailingAt)}, the query has more text after its end: give one query at a time.` };
  return mongoCommandFromNode(parsed.node, text, options);
}

/**
 * Reads a query from an expression already parsed out of a larger text (the language server parses a
 * whole file once). Ranges are offsets into `source`.
 */
export function mongoCommandFromNode(node: BNode, source: string, options: MongoQueryOptions = {}): MongoQueryResult {
  try {
    return { ok: true, ...new Reader(source, options).read(node) };
  } catch (err) {
    if (err instanceof QueryRefusal) return { ok: false, error: err.message };
    if (err instanceof RangeError) return { ok: false, error: 'The query is nested too deeply to read.' };
    throw err;
  }
}

class QueryRefusal extends Error {}

type Segment =
  | { kind: 'root'; name: string; node: BNode }
  | { kind: 'name'; name: string; node: BNode }
  | { kind: 'index'; name: string; node: BNode }
  | { kind: 'call'; args: BNode[]; node: BNode };

class Reader {
  private readonly warnings: string[] = [];
  private hasPlaceholders = false;

  constructor(private readonly source: string, private readonly options: MongoQueryOptions) {}

  read(node: BNode): { command: MongoCommand; warnings: string[] } {
    const segs = this.segments(node);
    let i = 0;
    const root = segs[i++]!;
    if (root.kind !== 'root' || root.name !== 'db') {
      throw this.refuse(root.node, 'does not start with db (as in db.orders.find(...))');
    }
    const ranges: MongoCommand['ranges'] = { whole: range(node) };
    let database: string | undefined;

    // db.getSiblingDB('other') / db.getDB('other') switch the database.
    if (this.isCallOf(segs, i, ['getSiblingDB', 'getDB'])) {
      const call = segs[i + 1] as Extract<Segment, { kind: 'call' }>;
      database = this.stringArg(call, 0, `${(segs[i] as { name: string }).name} needs the database name as a string`);
      ranges.database = range(call.args[0]!);
      i += 2;
    }

    // The collection: db.getCollection('x'), db['x'], or db.a.b.c where the last name is the operation.
    let collection: string;
    let collectionRange: SourceRange;
    const seg = segs[i];
    if (seg === undefined) throw this.refuse(root.node, 'names no collection and no operation');
    if (this.isCallOf(segs, i, ['getCollection'])) {
      const call = segs[i + 1] as Extract<Segment, { kind: 'call' }>;
      collection = this.stringArg(call, 0, 'getCollection needs the collection name as a string');
      collectionRange = range(call.args[0]!);
      i += 2;
    } else if (seg.kind === 'index') {
      collection = seg.name;
      collectionRange = range(seg.node);
      i += 1;
    } else {
      const names: Extract<Segment, { kind: 'name' }>[] = [];
      while (segs[i]?.kind === 'name' && segs[i + 1]?.kind !== 'call') names.push(segs[i++] as Extract<Segment, { kind: 'name' }>);
      if (names.length === 0) {
        const s = segs[i]!;
        throw this.refuse(s.node, s.kind === 'name' ? `calls ${s.name} on db itself instead of on a collection` : 'names no collection');
      }
      collection = names.map((n) => n.name).join('.');
      collectionRange = { start: names[0]!.node.start, end: names[names.length - 1]!.node.end };
    }
    if (collection === '') throw this.refuse(node, 'names an empty collection');
    ranges.collection = collectionRange;

    // db.c.explain('executionStats').find(...) asks for the explain before the operation.
    let explain: ExplainVerbosity | undefined;
    if (this.isCallOf(segs, i, ['explain'])) {
      const call = segs[i + 1] as Extract<Segment, { kind: 'call' }>;
      explain = this.verbosity(call);
      ranges.explain = { start: segs[i]!.node.start, end: call.node.end };
      i += 2;
    }

    const opSeg = segs[i];
    if (opSeg === undefined) throw this.refuse(node, `names the collection ${collection} but no operation such as find(...)`);
    if (opSeg.kind !== 'name' || segs[i + 1]?.kind !== 'call') throw this.refuse(opSeg.node, 'has no operation call such as find(...) after the collection');
    if (!OPERATIONS.has(opSeg.name)) {
      throw this.refuse(opSeg.node, `calls ${opSeg.name}, which is not an operation this reader explains (find, aggregate, count, countDocuments, distinct, update, delete, findOneAnd...)`);
    }
    const cmd: MongoCommand = { collection, operation: opSeg.name as MongoOperation, hasPlaceholders: false, ranges };
    if (database !== undefined) cmd.database = database;
    if (explain !== undefined) cmd.explain = explain;
    ranges.operation = range(opSeg.node);
    this.operationArgs(cmd, segs[i + 1] as Extract<Segment, { kind: 'call' }>);
    i += 2;

    // Cursor methods chained after the operation.
    while (i < segs.length) {
      const m = segs[i]!;
      const call = segs[i + 1];
      if (m.kind !== 'name' || call?.kind !== 'call') throw this.refuse(m.node, 'chains something that is not a method call after the operation');
      this.cursorMethod(cmd, m.name, call, m.node);
      i += 2;
    }
    cmd.hasPlaceholders = this.hasPlaceholders;
    return { command: cmd, warnings: this.warnings };
  }

  /** Flattens `db.c.find(a).sort(b)` into root, names, indexes and calls, left to right, without recursion. */
  private segments(node: BNode): Segment[] {
    const out: Segment[] = [];
    let cur: BNode = node;
    for (;;) {
      if (out.length > MAX_CHAIN * 2) throw this.refuse(node, `chains more than ${MAX_CHAIN} calls`);
      if (cur.type === 'CallExpression' || cur.type === 'OptionalCallExpression') {
        if (cur.optional) throw this.refuse(cur, 'uses an optional call (?.)');
        const args = cur.arguments ?? [];
        for (const a of args) if (a.type === 'SpreadElement') throw this.refuse(a, 'passes arguments with a spread (...)');
        out.push({ kind: 'call', args, node: cur });
        cur = cur.callee!;
      } else if (cur.type === 'MemberExpression' || cur.type === 'OptionalMemberExpression') {
        if (cur.optional) throw this.refuse(cur, 'uses optional chaining (?.)');
        const p = cur.property!;
        if (!cur.computed && p.type === 'Identifier') {
          out.push({ kind: 'name', name: p.name!, node: p });
        } else if (cur.computed && p.type === 'StringLiteral') {
          out.push({ kind: 'index', name: p.value as string, node: p });
        } else {
          throw this.refuse(p, 'reads a property whose name is not written out as text');
        }
        cur = cur.object!;
      } else if (cur.type === 'Identifier') {
        out.push({ kind: 'root', name: cur.name!, node: cur });
        break;
      } else if (cur.type === 'AwaitExpression') {
        // `await db.c.find(...)` in a script means the same query.
        if (out.length > 0) throw this.refuse(cur, 'has an await inside the call chain');
        cur = cur.argument!;
      } else {
        throw this.refuse(cur, 'is not a call chain starting with db (as in db.orders.find(...))');
      }
    }
    return out.reverse();
  }

  private isCallOf(segs: Segment[], i: number, names: string[]): boolean {
    const s = segs[i];
    return s !== undefined && s.kind === 'name' && names.includes(s.name) && segs[i + 1]?.kind === 'call';
  }

  private operationArgs(cmd: MongoCommand, call: Extract<Segment, { kind: 'call' }>): void {
    const a = call.args;
    const op = cmd.operation;
    const maxArgs: Record<MongoOperation, number> = {
      find: 3, findOne: 3, aggregate: 2, count: 2, countDocuments: 2, distinct: 3, updateOne: 3, updateMany: 3,
      replaceOne: 3, deleteOne: 2, deleteMany: 2, findOneAndUpdate: 3, findOneAndReplace: 3, findOneAndDelete: 2,
    };
    if (op === 'aggregate') {
      this.aggregateArgs(cmd, call);
      return;
    }
    if (a.length > maxArgs[op]) throw this.refuse(a[maxArgs[op]]!, `passes ${a.length} arguments to ${op}, which takes at most ${maxArgs[op]}`);
    switch (op) {
      case 'find':
      case 'findOne':
        this.setFilter(cmd, a[0]);
        if (a[1] !== undefined) this.setProjection(cmd, a[1]);
        if (a[2] !== undefined) this.applyOptions(cmd, a[2], ['sort', 'projection', 'limit', 'skip', 'hint', 'collation']);
        if (op === 'findOne') cmd.limit = 1;
        return;
      case 'count':
      case 'countDocuments':
      case 'deleteOne':
      case 'deleteMany':
        this.setFilter(cmd, a[0]);
        if (a[1] !== undefined) this.applyOptions(cmd, a[1], op.startsWith('count') ? ['limit', 'skip', 'hint', 'collation'] : ['hint', 'collation']);
        return;
      case 'findOneAndDelete':
        this.setFilter(cmd, a[0]);
        if (a[1] !== undefined) this.applyOptions(cmd, a[1], ['sort', 'projection', 'hint', 'collation']);
        return;
      case 'distinct': {
        if (a[0] === undefined) throw this.refuse(call.node, 'calls distinct without the field name');
        const f = this.value(a[0]);
        if (typeof f !== 'string') throw this.refuse(a[0], 'gives distinct a field name that is not a string');
        cmd.field = f;
        cmd.ranges.field = range(a[0]);
        this.setFilter(cmd, a[1]);
        if (a[2] !== undefined) this.applyOptions(cmd, a[2], ['collation', 'hint']);
        return;
      }
      case 'updateOne':
      case 'updateMany':
      case 'replaceOne':
      case 'findOneAndUpdate':
      case 'findOneAndReplace': {
        this.setFilter(cmd, a[0]);
        if (a[1] === undefined) throw this.refuse(call.node, `calls ${op} without the ${op.includes('eplace') ? 'replacement' : 'update'} document`);
        const u = this.value(a[1]);
        const replace = op === 'replaceOne' || op === 'findOneAndReplace';
        if (isDoc(u)) {
          const ops = Object.keys(u).filter((k) => k.startsWith('$'));
          if (replace && ops.length > 0) throw this.refuse(a[1], `gives ${op} update operators (${ops[0]}) where a replacement document is expected`);
          if (!replace && ops.length !== Object.keys(u).length) throw this.refuse(a[1], `gives ${op} a document without update operators such as $set (use replaceOne to replace a document)`);
          cmd.update = u;
        } else if (!replace && Array.isArray(u) && u.every(isDoc)) {
          cmd.update = u as Doc[];
        } else {
          throw this.refuse(a[1], `gives ${op} ${replace ? 'a replacement that is not a document' : 'an update that is neither a document nor a pipeline'}`);
        }
        cmd.ranges.update = range(a[1]);
        if (a[2] !== undefined) {
          const keys = op.startsWith('findOneAnd') ? ['sort', 'projection', 'hint', 'collation'] : ['hint', 'collation'];
          this.applyOptions(cmd, a[2], keys);
        }
        return;
      }
    }
  }

  private aggregateArgs(cmd: MongoCommand, call: Extract<Segment, { kind: 'call' }>): void {
    const a = call.args;
    if (a.length === 0) {
      cmd.pipeline = [];
      cmd.ranges.pipeline = { start: call.node.end - 1, end: call.node.end - 1 };
      return;
    }
    const first = a[0]!;
    let stages: unknown[];
    if (first.type === 'ArrayExpression') {
      if (a.length > 2) throw this.refuse(a[2]!, 'passes more than a pipeline and options to aggregate');
      stages = this.value(first) as unknown[];
      cmd.ranges.pipeline = range(first);
      if (a[1] !== undefined) this.applyOptions(cmd, a[1], ['hint', 'collation']);
    } else {
      // The legacy shell also accepted the stages as separate arguments: aggregate({$match}, {$group}).
      stages = a.map((x) => this.value(x));
      cmd.ranges.pipeline = { start: first.start, end: a[a.length - 1]!.end };
      this.warnings.push('The stages were given as separate arguments; aggregate([...]) with one array is the current form.');
    }
    if (!Array.isArray(stages)) throw this.refuse(first, 'gives aggregate a pipeline that is not an array');
    stages.forEach((s, k) => {
      const where = first.type === 'ArrayExpression' ? (first.elements?.[k] ?? first) : (a[k] ?? first);
      if (!isDoc(s)) throw this.refuse(where, `has pipeline stage ${k + 1} that is not a document`);
      const keys = Object.keys(s);
      if (keys.length !== 1 || !keys[0]!.startsWith('$')) throw this.refuse(where, `has pipeline stage ${k + 1} that is not one $stage name with its value`);
    });
    cmd.pipeline = stages as Doc[];
  }

  private cursorMethod(cmd: MongoCommand, name: string, call: Extract<Segment, { kind: 'call' }>, nameNode: BNode): void {
    const a = call.args;
    const cursorOps = cmd.operation === 'find' || cmd.operation === 'aggregate';
    const one = (what: string): BNode => {
      if (a.length !== 1) throw this.refuse(call.node, `calls ${name} with ${a.length} arguments where ${what} is expected`);
      return a[0]!;
    };
    if (name === 'explain') {
      if (cmd.explain !== undefined) throw this.refuse(nameNode, 'asks for explain twice');
      cmd.explain = this.verbosity(call);
      cmd.ranges.explain = { start: nameNode.start, end: call.node.end };
      return;
    }
    if (NEUTRAL_CURSOR_METHODS.has(name)) {
      if (!cursorOps) throw this.refuse(nameNode, `calls ${name} on the result of ${cmd.operation}, which is not a cursor`);
      return;
    }
    if (cmd.operation !== 'find') {
      throw this.refuse(nameNode, `chains ${name}(...) after ${cmd.operation}, which this reader only accepts after find`);
    }
    switch (name) {
      case 'sort':
        this.setSort(cmd, one('a sort document'));
        return;
      case 'project':
      case 'projection':
        this.setProjection(cmd, one('a projection document'));
        return;
      case 'limit':
        cmd.limit = this.count(one('a number'), 'limit', true);
        cmd.ranges.limit = range(a[0]!);
        return;
      case 'skip':
        cmd.skip = this.count(one('a number'), 'skip', false);
        cmd.ranges.skip = range(a[0]!);
        return;
      case 'hint':
        this.setHint(cmd, one('an index name or key pattern'));
        return;
      case 'collation': {
        const c = this.value(one('a collation document'));
        if (!isDoc(c)) throw this.refuse(a[0]!, 'gives collation a value that is not a document');
        cmd.collation = c;
        cmd.ranges.collation = range(a[0]!);
        return;
      }
      case 'maxTimeMS':
      case 'comment':
      case 'allowDiskUse':
      case 'min':
      case 'max': {
        const v = a.length === 0 ? true : this.value(one('one value'));
        cmd.options = { ...(cmd.options ?? {}), [name]: v };
        return;
      }
      case 'count':
      case 'size':
        // The legacy cursor.count() counts the filter's matches; size() applies skip and limit too.
        if (a.length > 1) throw this.refuse(call.node, `calls ${name} with more than one argument`);
        if (name === 'count' && a.length === 0) {
          delete cmd.limit;
          delete cmd.skip;
        }
        cmd.operation = 'count';
        this.warnings.push(`cursor.${name}() is deprecated; it is read as the count command.`);
        return;
      default:
        throw this.refuse(nameNode, `chains ${name}(...), which is not a cursor method this reader knows`);
    }
  }

  private verbosity(call: Extract<Segment, { kind: 'call' }>): ExplainVerbosity {
    if (call.args.length === 0) return 'queryPlanner';
    if (call.args.length > 1) throw this.refuse(call.node, 'calls explain with more than one argument');
    const v = this.value(call.args[0]!);
    if (v === true) return 'allPlansExecution';
    if (v === false) return 'queryPlanner';
    if (v === 'queryPlanner' || v === 'executionStats' || v === 'allPlansExecution') return v;
    throw this.refuse(call.args[0]!, 'gives explain a verbosity other than "queryPlanner", "executionStats" or "allPlansExecution"');
  }

  private setFilter(cmd: MongoCommand, node: BNode | undefined): void {
    if (node === undefined) return;
    const v = this.value(node);
    if (v === undefined || v === null || (isDoc(v) && '$undefined' in v && Object.keys(v).length === 1)) return;
    if (!isDoc(v)) throw this.refuse(node, `gives ${cmd.operation} a filter that is not a document`);
    cmd.filter = v;
    cmd.ranges.filter = range(node);
  }

  private setProjection(cmd: MongoCommand, node: BNode): void {
    const v = this.value(node);
    if (v === null || (isDoc(v) && '$undefined' in v && Object.keys(v).length === 1)) return;
    if (!isDoc(v)) throw this.refuse(node, 'gives a projection that is not a document');
    cmd.projection = v;
    cmd.ranges.projection = range(node);
  }

  private setSort(cmd: MongoCommand, node: BNode): void {
    const v = this.value(node);
    if (!isDoc(v)) throw this.refuse(node, 'gives sort a value that is not a document such as {created_at: -1}');
    for (const [k, d] of Object.entries(v)) {
      const n = shellNumber(d);
      const ok = n === 1 || n === -1 || (isDoc(d) && '$meta' in d);
      if (!ok) throw this.refuse(node, `sorts on ${k} with ${JSON.stringify(d)} where 1, -1 or {$meta: ...} is expected`);
    }
    cmd.sort = v;
    cmd.ranges.sort = range(node);
  }

  private setHint(cmd: MongoCommand, node: BNode): void {
    const v = this.value(node);
    if (typeof v === 'string' || isDoc(v)) {
      cmd.hint = v;
      cmd.ranges.hint = range(node);
      return;
    }
    throw this.refuse(node, 'gives hint a value that is neither an index name nor a key pattern');
  }

  private count(node: BNode, what: 'limit' | 'skip', allowNegative: boolean): number {
    const n = shellNumber(this.value(node));
    if (n === undefined || !Number.isInteger(n) || !Number.isSafeInteger(n)) throw this.refuse(node, `gives ${what} a value that is not a whole number`);
    if (n < 0) {
      if (!allowNegative) throw this.refuse(node, `gives ${what} a negative number`);
      // A negative limit in the shell means one batch of at most |n| documents.
      this.warnings.push(`limit(${n}) is read as limit(${-n}) (a negative limit asks for a single batch).`);
      return -n;
    }
    return n;
  }

  /** Folds an options document into the command: the keys it understands, the rest kept as options. */
  private applyOptions(cmd: MongoCommand, node: BNode, understood: string[]): void {
    const v = this.value(node);
    if (!isDoc(v)) throw this.refuse(node, `gives ${cmd.operation} options that are not a document`);
    const rest: Doc = {};
    for (const [k, x] of Object.entries(v)) {
      if (!understood.includes(k)) {
        if (k === 'maxTimeMS' || k === 'comment') continue; // the adapter sets its own
        Object.defineProperty(rest, k, { value: x, enumerable: true, writable: true, configurable: true });
        continue;
      }
      switch (k) {
        case 'sort':
          if (!isDoc(x)) throw this.refuse(node, 'gives a sort option that is not a document');
          cmd.sort = x;
          break;
        case 'projection':
          if (!isDoc(x)) throw this.refuse(node, 'gives a projection option that is not a document');
          cmd.projection = x;
          break;
        case 'limit':
        case 'skip': {
          const n = shellNumber(x);
          if (n === undefined || !Number.isInteger(n) || n < 0) throw this.refuse(node, `gives a ${k} option that is not a whole number of at least 0`);
          cmd[k] = n;
          break;
        }
        case 'hint':
          if (typeof x !== 'string' && !isDoc(x)) throw this.refuse(node, 'gives a hint option that is neither an index name nor a key pattern');
          cmd.hint = x;
          break;
        case 'collation':
          if (!isDoc(x)) throw this.refuse(node, 'gives a collation option that is not a document');
          cmd.collation = x;
          break;
      }
    }
    if (Object.keys(rest).length > 0) cmd.options = { ...(cmd.options ?? {}), ...rest };
    cmd.ranges.options = range(node);
  }

  private stringArg(call: Extract<Segment, { kind: 'call' }>, k: number, what: string): string {
    const node = call.args[k];
    if (node === undefined || call.args.length !== k + 1) throw this.refuse(call.node, what);
    const v = this.value(node);
    if (typeof v !== 'string') throw this.refuse(node, what);
    return v;
  }

  private value(node: BNode): unknown {
    const r = evaluateShellExpression(node, { source: this.source, placeholders: this.options.placeholders === true });
    if (!r.ok) throw new QueryRefusal(r.error.replace(/^The shell notation/, 'The query'));
    if (this.options.placeholders && containsPlaceholder(r.value)) this.hasPlaceholders = true;
    return r.value;
  }

  private refuse(node: BNode, what: string): QueryRefusal {
    return new QueryRefusal(`${at(this.source, node.start)}, the query ${what}.`);
  }
}

function isDoc(v: unknown): v is Doc {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function containsPlaceholder(v: unknown): boolean {
  const stack: unknown[] = [v];
  while (stack.length > 0) {
    const x = stack.pop();
    if (Array.isArray(x)) stack.push(...x);
    else if (isDoc(x)) {
      if ('$placeholder' in x) return true;
      stack.push(...Object.values(x));
    }
  }
  return false;
}

function range(node: BNode): SourceRange {
  return { start: node.start, end: node.end };
}

/** "At line L, column C": messages name the position first, then what is wrong there. */
function at(text: string, pos: number): string {
  const { line, column } = lineColumn(text, pos);
  return `At line ${line}, column ${column}`;
}

function syntaxError(text: string, parsed: ParseError): string {
  const err = parsed.error;
  if (err instanceof RangeError || (err instanceof SyntaxError && /stack space/i.test(err.message))) return 'The query is nested too deeply to read.';
  if (err instanceof SyntaxError) {
    const msg = err.message.replace(/\s*\(\d+:\d+\)\s*$/, '').replace(/\.$/, '');
    const pos = parsed.pos ?? 0;
    if (pos >= text.trimEnd().length) return `${at(text, pos)}, the query ends early: a bracket or quote is not closed.`;
    return `${at(text, pos)}, the query is not valid JavaScript: ${msg.charAt(0).toLowerCase()}${msg.slice(1)}.`;
  }
  throw err;
}
