// Seeded random query shapes over the sample data (datasets.ts). One seed gives one case: the query text
// as a user would write it (mongo shell or SQL), its category, and the fields it references, which the
// oracle turns into candidate indexes on its own. Seeds are split into a tuning set and a checking set
// (seed % 4 === 0 is checking): advice is tuned on the first and judged on the second.

import { BASE_TIME, CHANNELS, CHANNEL_WEIGHTS, COUNTRIES, MONGO_SIZES, ORDER_STEP_MS, PG_ORDER_STEP_MS, PG_SIZES, PLANS, PLAN_WEIGHTS, STATUSES, STATUS_WEIGHTS, TAGS, USER_STEP_MS } from './datasets';
import { distinct, int, letters, mulberry32, pick, pickSome, weighted, type Rand } from './prng';

/** Bumped whenever the shapes a seed gives change, so cached oracle results are not reused. */
export const GENERATOR_VERSION = 1;

export type Engine = 'mongodb' | 'postgres';
export type TruthSet = 'tuning' | 'checking';

export interface MongoShape {
  collection: string;
  /** Every path the query filters on (also inside $or and $elemMatch, and the original path a stage renames). */
  fields: string[];
  sort: [string, 1 | -1][];
}

export interface PgTableShape {
  table: string;
  /** Columns of this table the query filters or joins on. */
  columns: string[];
  sort: [string, 'asc' | 'desc'][];
  /** jsonb columns tested with @> (GIN candidates). */
  jsonb: string[];
}

export interface GeneratedCase {
  seed: number;
  engine: Engine;
  set: TruthSet;
  category: string;
  query: string;
  mongo?: MongoShape;
  pg?: PgTableShape[];
}

export function setOf(seed: number): TruthSet {
  return seed % 4 === 0 ? 'checking' : 'tuning';
}

export const MONGO_CATEGORIES = ['equality', 'range', 'in-small', 'in-large', 'in-cartesian', 'negation', 'regex', 'multikey', 'elemmatch', 'or', 'sort', 'skip', 'pipeline'] as const;
export const PG_CATEGORIES = ['equality', 'range', 'in-order-limit', 'offset', 'sort', 'negation', 'join', 'exists', 'lateral', 'jsonb'] as const;

export function generateCase(engine: Engine, seed: number): GeneratedCase {
  // The engine is mixed into the stream so that seed n gives unrelated shapes on the two engines.
  const rand = mulberry32(seed * 2654435761 + (engine === 'mongodb' ? 1 : 2));
  const made = engine === 'mongodb' ? mongoCase(rand) : pgCase(rand);
  return { seed, engine, set: setOf(seed), ...made };
}

// ---- MongoDB ------------------------------------------------------------------------------------------

type Doc = Record<string, unknown>;

interface CollSpec {
  name: string;
  /** Equality fields and a drawer giving a value that is sometimes frequent, sometimes rare. */
  eq: Record<string, (r: Rand) => unknown>;
  /** Range fields and a drawer giving [low, high] bounds of varied width. */
  range: Record<string, (r: Rand) => [unknown, unknown]>;
  sortable: string[];
  sparse: string;
  regex: string;
  inLarge: { field: string; value: (r: Rand) => unknown };
}

const status = (r: Rand): string => weighted(r, STATUSES, STATUS_WEIGHTS)();
const hotOrCold = (r: Rand, hot: number, n: number): number => (r() < 0.5 ? int(r, 0, hot) : int(r, hot + 1, n - 1));
const dateWindow = (r: Rand, base: number, step: number, n: number): [Date, Date] => {
  // From a few hundred to most of the documents.
  const width = Math.floor(n * pick(r, [0.002, 0.01, 0.05, 0.3, 0.8]));
  const start = int(r, 0, n - width - 1);
  return [new Date(base + start * step), new Date(base + (start + width) * step)];
};
const numWindow = (r: Rand, lo: number, hi: number): [number, number] => {
  const width = Math.floor((hi - lo) * pick(r, [0.001, 0.01, 0.1, 0.5, 0.9]));
  const start = int(r, lo, hi - width);
  return [start, start + width];
};

const COLLS: CollSpec[] = [
  {
    name: 'gorders',
    eq: {
      cust: (r) => hotOrCold(r, 3, 2000),
      status,
      region: (r) => int(r, 0, 19),
      priority: (r) => int(r, 0, 4),
    },
    range: {
      total: (r) => numWindow(r, 0, 99_999),
      created: (r) => dateWindow(r, BASE_TIME, ORDER_STEP_MS, MONGO_SIZES.gorders),
      priority: (r) => [int(r, 0, 2), 4],
    },
    sortable: ['created', 'total', 'priority', 'cust'],
    sparse: 'coupon',
    regex: 'ref',
    inLarge: { field: 'cust', value: (r) => int(r, 0, 1999) },
  },
  {
    name: 'gusers',
    eq: {
      tenant: (r) => hotOrCold(r, 2, 100),
      country: (r) => pick(r, COUNTRIES),
      plan: (r) => weighted(r, PLANS, PLAN_WEIGHTS)(),
      'address.city': (r) => `city${hotOrCold(r, 3, 300)}`,
    },
    range: {
      age: (r) => numWindow(r, 18, 90),
      score: (r) => numWindow(r, 0, 999),
      signup: (r) => dateWindow(r, BASE_TIME, USER_STEP_MS, MONGO_SIZES.gusers),
      'address.zip': (r) => numWindow(r, 10_000, 99_999),
    },
    sortable: ['signup', 'score', 'age', 'tenant'],
    sparse: 'verified',
    regex: 'name',
    inLarge: { field: 'address.zip', value: (r) => int(r, 10_000, 99_999) },
  },
];

interface MongoParts {
  coll: CollSpec;
  filter: Doc;
  fields: Set<string>;
  sort: [string, 1 | -1][];
  limit?: number;
  skip?: number;
  projection?: Doc;
}

function rangePredicate(r: Rand, [lo, hi]: [unknown, unknown]): Doc {
  const k = int(r, 0, 2);
  return k === 0 ? { $gt: lo } : k === 1 ? { $lt: hi } : { $gte: lo, $lte: hi };
}

function addEqualities(r: Rand, p: MongoParts, n: number): void {
  for (const f of pickSome(r, Object.keys(p.coll.eq).filter((x) => !p.fields.has(x)), n)) {
    p.filter[f] = p.coll.eq[f]!(r);
    p.fields.add(f);
  }
}

function addSort(r: Rand, p: MongoParts, chance: number, maxFields = 1): void {
  if (r() >= chance) return;
  const free = p.coll.sortable.filter((f) => !(f in p.filter));
  const fields = pickSome(r, free.length > 0 ? free : p.coll.sortable, int(r, 1, maxFields));
  p.sort = fields.map((f) => [f, r() < 0.5 ? 1 : -1]);
}

function addLimit(r: Rand, p: MongoParts, chance: number): void {
  if (r() < chance) p.limit = pick(r, [1, 10, 20, 100]);
}

function mongoCase(rand: Rand): { category: string; query: string; mongo: MongoShape } {
  const category = pick(rand, MONGO_CATEGORIES);
  const coll = pick(rand, COLLS);
  const p: MongoParts = { coll, filter: {}, fields: new Set(), sort: [] };
  const r = rand;
  const rangeField = (): string => pick(r, Object.keys(coll.range).filter((f) => !(f in p.filter)));
  let pipeline: Doc[] | undefined;
  switch (category) {
    case 'equality':
      addEqualities(r, p, int(r, 1, 3));
      addSort(r, p, 0.5);
      addLimit(r, p, 0.5);
      if (p.sort.length === 0 && r() < 0.3) p.projection = { _id: 0, ...Object.fromEntries([...p.fields].map((f) => [f, 1])) };
      break;
    case 'range': {
      addEqualities(r, p, int(r, 0, 2));
      const f = rangeField();
      p.filter[f] = rangePredicate(r, coll.range[f]!(r));
      p.fields.add(f);
      if (r() < 0.6) p.sort = [[r() < 0.3 ? f : pick(r, coll.sortable.filter((x) => !(x in p.filter))), r() < 0.5 ? 1 : -1]];
      addLimit(r, p, 0.5);
      break;
    }
    case 'in-small': {
      const f = pick(r, Object.keys(coll.eq));
      p.filter[f] = { $in: distinct(r, int(r, 2, 6), coll.eq[f]!) };
      p.fields.add(f);
      addEqualities(r, p, int(r, 0, 1));
      addSort(r, p, 0.8);
      addLimit(r, p, 0.6);
      break;
    }
    case 'in-large': {
      const { field, value } = coll.inLarge;
      p.filter[field] = { $in: distinct(r, int(r, 150, 320), value).sort((a, b) => Number(a) - Number(b)) };
      p.fields.add(field);
      addEqualities(r, p, int(r, 0, 1));
      addSort(r, p, 0.9);
      addLimit(r, p, 0.6);
      break;
    }
    case 'in-cartesian': {
      // Two $in lists whose product is sometimes under the explode-for-sort limit of 200, sometimes over.
      const [f1, f2] = pickSome(r, Object.keys(coll.eq), 2) as [string, string];
      for (const f of [f1, f2]) {
        p.filter[f] = { $in: distinct(r, int(r, 2, 18), coll.eq[f]!, 200) };
        p.fields.add(f);
      }
      addSort(r, p, 1);
      addLimit(r, p, 0.7);
      break;
    }
    case 'negation': {
      addEqualities(r, p, int(r, 1, 2));
      const k = int(r, 0, 4);
      const f = coll.sparse;
      if (k === 0) p.filter[f] = { $exists: r() < 0.5 };
      else if (k === 1) p.filter[f] = null;
      else if (k === 2) p.filter[f] = { $ne: null };
      else {
        const g = pick(r, Object.keys(coll.eq).filter((x) => !(x in p.filter)));
        const v = coll.eq[g]!(r);
        p.filter[g] = k === 3 ? { $ne: v } : { $nin: [v, coll.eq[g]!(r)] };
        p.fields.add(g);
      }
      if (!(f in p.filter) && r() < 0.3) p.filter[f] = { $exists: true };
      if (f in p.filter) p.fields.add(f);
      addSort(r, p, 0.6);
      addLimit(r, p, 0.5);
      break;
    }
    case 'regex': {
      addEqualities(r, p, int(r, 0, 2));
      const prefix = letters(r, int(r, 1, 3));
      p.filter[coll.regex] = r() < 0.7 ? new RegExp(`^${prefix}`) : new RegExp(prefix);
      p.fields.add(coll.regex);
      addSort(r, p, 0.6);
      addLimit(r, p, 0.5);
      break;
    }
    case 'multikey':
    case 'elemmatch': {
      addEqualities(r, p, int(r, 0, 2));
      if (coll.name === 'gorders') {
        const sku = r() < 0.5 ? int(r, 0, 4) : int(r, 5, 499);
        const qty = { $gte: int(r, 1, 9) };
        if (category === 'elemmatch') {
          const both = r() < 0.7;
          p.filter.items = both ? { $elemMatch: { sku, qty } } : { $elemMatch: { sku: { $in: [sku, sku + 1] } } };
          p.fields.add('items.sku');
          if (both) p.fields.add('items.qty');
        } else if (r() < 0.4) {
          p.filter.tags = r() < 0.5 ? pick(r, TAGS) : { $all: pickSome(r, TAGS.slice(0, 10), 2) };
          p.fields.add('tags');
        } else {
          p.filter['items.sku'] = sku;
          p.fields.add('items.sku');
          if (r() < 0.6) {
            p.filter['items.qty'] = qty;
            p.fields.add('items.qty');
          }
        }
      } else {
        const day = int(r, 0, 990);
        p.filter.logins = category === 'elemmatch' ? { $elemMatch: { $gte: day, $lt: day + int(r, 1, 10) } } : r() < 0.5 ? day : { $gte: day, $lt: day + int(r, 1, 10) };
        p.fields.add('logins');
      }
      addSort(r, p, 0.6);
      addLimit(r, p, 0.6);
      break;
    }
    case 'or': {
      const branches: Doc[] = [];
      const n = int(r, 2, 3);
      const same = r() < 0.5;
      const f0 = pick(r, Object.keys(coll.eq));
      for (let i = 0; i < n; i++) {
        const f = same ? f0 : pick(r, [...Object.keys(coll.eq), ...Object.keys(coll.range)]);
        const b: Doc = {};
        b[f] = f in coll.eq ? coll.eq[f]!(r) : rangePredicate(r, coll.range[f]!(r));
        if (r() < 0.3) {
          const g = pick(r, Object.keys(coll.eq).filter((x) => x !== f));
          b[g] = coll.eq[g]!(r);
          p.fields.add(g);
        }
        p.fields.add(f);
        branches.push(b);
      }
      if (r() < 0.4) addEqualities(r, p, 1);
      p.filter.$or = branches;
      addSort(r, p, 0.5);
      addLimit(r, p, 0.6);
      break;
    }
    case 'sort':
      addEqualities(r, p, int(r, 0, 1));
      addSort(r, p, 1, 2);
      p.limit = pick(r, [1, 10, 50]);
      break;
    case 'skip':
      addEqualities(r, p, int(r, 0, 2));
      addSort(r, p, 1);
      p.skip = pick(r, [100, 1000, 5000]);
      p.limit = pick(r, [10, 20]);
      break;
    case 'pipeline': {
      addEqualities(r, p, int(r, 1, 2));
      if (r() < 0.4) {
        const f = rangeField();
        p.filter[f] = rangePredicate(r, coll.range[f]!(r));
        p.fields.add(f);
      }
      addSort(r, p, 0.5);
      const kind = int(r, 0, 3);
      const tail: Doc[] = [];
      if (p.sort.length > 0) tail.push({ $sort: Object.fromEntries(p.sort) });
      if (r() < 0.6) tail.push({ $limit: pick(r, [10, 20, 100]) });
      if (kind === 0) {
        // A rename before $match hides the original path from the index.
        const renamed: Doc = {};
        const project: Doc = {};
        for (const [k, v] of Object.entries(p.filter)) {
          const alias = `f_${k.replace(/\./g, '_')}`;
          project[alias] = `$${k}`;
          renamed[alias] = v;
        }
        for (const [k] of p.sort) project[k] = 1;
        pipeline = [{ $project: project }, { $match: renamed }, ...tail];
      } else if (kind === 1) {
        pipeline = [{ $addFields: { seen: true } }, { $match: p.filter }, ...tail];
      } else if (kind === 2) {
        pipeline = [{ $match: p.filter }, ...tail, { $project: { _id: 1, ...Object.fromEntries([...p.fields].map((f) => [f, 1])) } }];
      } else {
        // $sort before $match: the server moves the $match first on its own.
        pipeline = [...(p.sort.length > 0 ? [{ $sort: Object.fromEntries(p.sort) }] : []), { $match: p.filter }, ...(tail.filter((s) => !('$sort' in s)))];
      }
      break;
    }
  }
  let query: string;
  if (pipeline) query = `db.${coll.name}.aggregate(${shell(pipeline)})`;
  else {
    query = `db.${coll.name}.find(${shell(p.filter)}${p.projection ? `, ${shell(p.projection)}` : ''})`;
    if (p.sort.length > 0) query += `.sort(${shell(Object.fromEntries(p.sort))})`;
    if (p.skip !== undefined) query += `.skip(${p.skip})`;
    if (p.limit !== undefined) query += `.limit(${p.limit})`;
  }
  return { category, query, mongo: { collection: coll.name, fields: [...p.fields], sort: p.sort } };
}

/** Mongo shell notation of a value: ISODate for dates, /re/ for regular expressions, keys quoted when needed. */
export function shell(v: unknown): string {
  if (v instanceof Date) return `ISODate("${v.toISOString()}")`;
  if (v instanceof RegExp) return `/${v.source}/${v.flags}`;
  if (Array.isArray(v)) return `[${v.map(shell).join(', ')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.entries(v as Doc).map(([k, x]) => `${/^[A-Za-z_$][\w$]*$/.test(k) ? k : JSON.stringify(k)}: ${shell(x)}`).join(', ')}}`;
  }
  return JSON.stringify(v);
}

// ---- PostgreSQL ---------------------------------------------------------------------------------------

const pgStatus = (r: Rand): string => weighted(r, STATUSES, STATUS_WEIGHTS)();
const custId = (r: Rand): number => (r() < 0.4 ? int(r, 1, 5) : int(r, 6, PG_SIZES.customers));
const sqlLit = (v: unknown): string => (typeof v === 'number' ? String(v) : `'${String(v).replace(/'/g, "''")}'`);
const ts = (ms: number): string => `'${new Date(ms).toISOString()}'`;

interface PgEq { col: string; value: (r: Rand) => unknown }
const ORDER_EQ: PgEq[] = [
  { col: 'customer_id', value: custId },
  { col: 'status', value: pgStatus },
  { col: 'region', value: (r) => int(r, 0, 19) },
  { col: 'priority', value: (r) => int(r, 0, 4) },
];
const ORDER_SORT = ['created_at', 'total', 'id', 'priority'];
const CUSTOMER_EQ: PgEq[] = [
  { col: 'tenant', value: (r) => hotOrCold(r, 2, 100) },
  { col: 'country', value: (r) => pick(r, COUNTRIES) },
  { col: 'plan', value: (r) => weighted(r, PLANS, PLAN_WEIGHTS)() },
];

function orderRange(r: Rand): { col: string; sql: (alias: string) => string } {
  if (r() < 0.5) {
    const [lo, hi] = numWindow(r, 0, 99_999);
    const k = int(r, 0, 2);
    return { col: 'total', sql: (a) => (k === 0 ? `${a}total > ${lo}` : k === 1 ? `${a}total < ${hi}` : `${a}total BETWEEN ${lo} AND ${hi}`) };
  }
  const [lo, hi] = dateWindow(r, BASE_TIME, PG_ORDER_STEP_MS, PG_SIZES.orders);
  const k = int(r, 0, 1);
  return { col: 'created_at', sql: (a) => (k === 0 ? `${a}created_at >= ${ts(lo.getTime())}` : `${a}created_at >= ${ts(lo.getTime())} AND ${a}created_at < ${ts(hi.getTime())}`) };
}

const dir = (r: Rand): 'asc' | 'desc' => (r() < 0.5 ? 'asc' : 'desc');
const orderBy = (a: string, sort: [string, 'asc' | 'desc'][]): string => (sort.length === 0 ? '' : ` ORDER BY ${sort.map(([c, d]) => `${a}${c}${d === 'desc' ? ' DESC' : ''}`).join(', ')}`);

function pgCase(rand: Rand): { category: string; query: string; pg: PgTableShape[] } {
  const r = rand;
  const category = pick(r, PG_CATEGORIES);
  const orders: PgTableShape = { table: 'orders', columns: [], sort: [], jsonb: [] };
  const where: string[] = [];
  const eqs = (n: number, a = ''): void => {
    for (const e of pickSome(r, ORDER_EQ.filter((x) => !orders.columns.includes(x.col)), n)) {
      where.push(`${a}${e.col} = ${sqlLit(e.value(r))}`);
      orders.columns.push(e.col);
    }
  };
  const sortOn = (n: number): void => {
    orders.sort = pickSome(r, ORDER_SORT.filter((c) => !orders.columns.includes(c)), n).map((c) => [c, dir(r)]);
  };
  const whereSql = (): string => (where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '');
  const limit = (chance: number): string => (r() < chance ? ` LIMIT ${pick(r, [1, 10, 20, 100])}` : '');
  switch (category) {
    case 'equality': {
      eqs(int(r, 1, 3));
      if (r() < 0.5) sortOn(1);
      const cols = r() < 0.3 ? orders.columns.join(', ') : '*';
      return { category, query: `SELECT ${cols} FROM orders${whereSql()}${orderBy('', orders.sort)}${limit(0.5)}`, pg: [orders] };
    }
    case 'range': {
      eqs(int(r, 0, 2));
      const rg = orderRange(r);
      where.push(rg.sql(''));
      orders.columns.push(rg.col);
      if (r() < 0.6) orders.sort = [[r() < 0.3 ? rg.col : pick(r, ORDER_SORT.filter((c) => !orders.columns.includes(c))), dir(r)]];
      return { category, query: `SELECT * FROM orders${whereSql()}${orderBy('', orders.sort)}${limit(0.6)}`, pg: [orders] };
    }
    case 'in-order-limit': {
      const e = pick(r, ORDER_EQ);
      const list = distinct(r, int(r, 2, 8), e.value);
      where.push(r() < 0.5 ? `${e.col} IN (${list.map(sqlLit).join(', ')})` : `${e.col} = ANY('{${list.join(',')}}')`);
      orders.columns.push(e.col);
      eqs(int(r, 0, 1));
      sortOn(1);
      return { category, query: `SELECT * FROM orders${whereSql()}${orderBy('', orders.sort)} LIMIT ${pick(r, [10, 20, 50])}`, pg: [orders] };
    }
    case 'offset': {
      eqs(int(r, 0, 2));
      sortOn(1);
      return { category, query: `SELECT * FROM orders${whereSql()}${orderBy('', orders.sort)} LIMIT ${pick(r, [10, 20])} OFFSET ${pick(r, [100, 1000, 5000])}`, pg: [orders] };
    }
    case 'sort': {
      eqs(int(r, 0, 1));
      sortOn(2);
      return { category, query: `SELECT * FROM orders${whereSql()}${orderBy('', orders.sort)} LIMIT ${pick(r, [1, 10, 50])}`, pg: [orders] };
    }
    case 'negation': {
      eqs(int(r, 1, 2));
      const v = pgStatus(r);
      if (!orders.columns.includes('status')) {
        where.push(r() < 0.5 ? `status <> ${sqlLit(v)}` : `status NOT IN (${sqlLit(v)}, ${sqlLit(pgStatus(r))})`);
        orders.columns.push('status');
      } else {
        where.push(`priority <> ${int(r, 0, 4)}`);
        if (!orders.columns.includes('priority')) orders.columns.push('priority');
      }
      if (r() < 0.6) sortOn(1);
      return { category, query: `SELECT * FROM orders${whereSql()}${orderBy('', orders.sort)}${limit(0.6)}`, pg: [orders] };
    }
    case 'join': {
      const customers: PgTableShape = { table: 'customers', columns: ['id'], sort: [], jsonb: [] };
      orders.columns.push('customer_id');
      for (const e of pickSome(r, CUSTOMER_EQ, int(r, 1, 2))) {
        where.push(`c.${e.col} = ${sqlLit(e.value(r))}`);
        customers.columns.push(e.col);
      }
      if (r() < 0.6) eqs(1, 'o.');
      if (r() < 0.3) {
        const rg = orderRange(r);
        where.push(rg.sql('o.'));
        orders.columns.push(rg.col);
      }
      if (r() < 0.6) orders.sort = [[pick(r, ['created_at', 'total']), dir(r)]];
      const q = `SELECT o.id, o.total, o.created_at, c.country FROM orders o JOIN customers c ON c.id = o.customer_id${whereSql()}${orderBy('o.', orders.sort)}${limit(0.7)}`;
      return { category, query: q, pg: [orders, customers] };
    }
    case 'exists': {
      if (r() < 0.5) {
        const customers: PgTableShape = { table: 'customers', columns: ['id'], sort: [], jsonb: [] };
        for (const e of pickSome(r, CUSTOMER_EQ, int(r, 1, 2))) {
          where.push(`c.${e.col} = ${sqlLit(e.value(r))}`);
          customers.columns.push(e.col);
        }
        const inner = [`o.customer_id = c.id`];
        orders.columns.push('customer_id');
        const e = pick(r, ORDER_EQ.filter((x) => x.col !== 'customer_id'));
        inner.push(`o.${e.col} = ${sqlLit(e.value(r))}`);
        orders.columns.push(e.col);
        const not = r() < 0.3 ? 'NOT ' : '';
        where.push(`${not}EXISTS (SELECT 1 FROM orders o WHERE ${inner.join(' AND ')})`);
        return { category, query: `SELECT c.* FROM customers c${whereSql()}${limit(0.4)}`, pg: [customers, orders] };
      }
      const items: PgTableShape = { table: 'order_items', columns: ['order_id', 'sku'], sort: [], jsonb: [] };
      eqs(int(r, 0, 1), 'o.');
      const sku = r() < 0.5 ? int(r, 0, 4) : int(r, 5, 499);
      where.push(`EXISTS (SELECT 1 FROM order_items i WHERE i.order_id = o.id AND i.sku = ${sku})`);
      if (r() < 0.6) orders.sort = [['created_at', dir(r)]];
      if (!orders.columns.includes('id')) orders.columns.push('id');
      return { category, query: `SELECT o.* FROM orders o${whereSql()}${orderBy('o.', orders.sort)}${limit(0.7)}`, pg: [orders, items] };
    }
    case 'lateral': {
      const customers: PgTableShape = { table: 'customers', columns: [], sort: [], jsonb: [] };
      const e = pick(r, CUSTOMER_EQ);
      customers.columns.push(e.col);
      orders.columns.push('customer_id');
      const inner = ['o.customer_id = c.id'];
      if (r() < 0.4) {
        const s = pgStatus(r);
        inner.push(`o.status = ${sqlLit(s)}`);
        orders.columns.push('status');
      }
      orders.sort = [[pick(r, ['created_at', 'total']), dir(r)]];
      const q = `SELECT c.id, o.id AS order_id, o.total FROM customers c CROSS JOIN LATERAL (SELECT id, total FROM orders o WHERE ${inner.join(' AND ')}${orderBy('o.', orders.sort)} LIMIT ${pick(r, [1, 3, 5])}) o WHERE c.${e.col} = ${sqlLit(e.value(r))}`;
      return { category, query: q, pg: [customers, orders] };
    }
    case 'jsonb': {
      const k = int(r, 0, 2);
      const doc = k === 0 ? { channel: weighted(r, CHANNELS, CHANNEL_WEIGHTS)() } : k === 1 ? { gift: true } : { tags: [pick(r, TAGS)] };
      where.push(`attrs @> '${JSON.stringify(doc)}'`);
      orders.jsonb.push('attrs');
      eqs(int(r, 0, 1));
      if (r() < 0.5) sortOn(1);
      return { category, query: `SELECT * FROM orders${whereSql()}${orderBy('', orders.sort)}${limit(0.6)}`, pg: [orders] };
    }
  }
  throw new Error(`unknown category ${category as string}`);
}
