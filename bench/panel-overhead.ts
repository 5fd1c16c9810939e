// What the product adds between "Explain Query" and the message the plan panel receives, over the raw
// driver round trip of the explain command, on the real test servers. A benchmark prints figures; it
// asserts nothing. Run: node scripts/with-servers.mjs node --import tsx bench/panel-overhead.ts [--runs N]
//
//   (a) raw         the explain command alone through the driver (`pg` / `mongodb`) on an open connection.
//   (a') raw+conn   the same with a connection opened and closed around it, as the product does per explain.
//   (b) product     what the Explain command runs in the extension host up to the panel message: one advice
//                   session opened (adapter connection + advisor's catalog connection), the adapter's explain
//                   (PostgreSQL: inside a rolled-back transaction with a statement timeout; MongoDB: with
//                   maxTimeMS and a comment for cancel) and loadPlan, the live advisor (indexes, bounded
//                   counts), analyze, the suggestion views, wirePlan and JSON serialisation as the webview
//                   transport does, session closed.
//   (c) kept        the same on a session opened once and kept, as the extension keeps one per connection
//                   between two Explains: the warm Explain.
//   PostgreSQL's steps, on an open connection through the door as the adapter sends them: the statement
//   read (inspectStatement), BEGIN, the side-effect check (pgVerdict: its catalog query), the EXPLAIN
//   ANALYZE, the plan's text and loadPlan, the ROLLBACK.
// Measured in Node, not inside the VS Code host: the host adds its own IPC to the webview, which this
// does not include.

import { MongoClient } from 'mongodb';
import pg from 'pg';
import { openMongoAdvice, openPostgresAdvice } from '../src/adapters/advise';
import { adviseMongoLive, advisePostgresLive } from '../src/adapters/adviceService';
import { pgBegin, pgExecute, pgSend, pgVerdict } from '../src/adapters/door';
import { inspectStatement } from '../src/adapters/pgStatement';
import type { ExplainResult } from '../src/adapters/types';
import { analyze, loadPlan } from '../src/core/index';
import { parseMongoQuery } from '../src/core/query/mongoShell';
import { suggestionViews } from '../src/extension/adviceView';
import { wirePlan, type ShowPlanMessage } from '../src/protocol/webview';
import { median, runsArg, serverUri } from './support';

const RUNS = runsArg(30);
const WARMUP = 3;
const ROWS = 20_000;
const DB = 'qpi_bench';

type Path = 'raw' | 'rawConn' | 'product' | 'kept';

/** Runs the measurements interleaved, so that all see the same server state and machine load. */
async function measure(steps: Record<Path, () => Promise<unknown>> & { steps?: () => Promise<unknown> }): Promise<Record<Path, number>> {
  const t: Record<Path, number[]> = { raw: [], rawConn: [], product: [], kept: [] };
  for (let i = 0; i < RUNS + WARMUP; i++) {
    for (const k of ['raw', 'rawConn', 'product', 'kept'] as const) {
      const t0 = performance.now();
      await steps[k]();
      if (i >= WARMUP) t[k].push(performance.now() - t0);
    }
    await steps.steps?.();
  }
  return { raw: median(t.raw), rawConn: median(t.rawConn), product: median(t.product), kept: median(t.kept) };
}

/** Where the product path's time goes, per run: session open, explain, advisor, core + message, close. */
const phases: Record<string, number[]> = {};
function phase(name: string, t0: number, into: Record<string, number[]> = phases): number {
  const now = performance.now();
  (into[name] ??= []).push(now - t0);
  return now;
}
/** The kept session's phases, and PostgreSQL's explain steps on an open connection. */
const keptPhases: Record<string, number[]> = {};
const steps: Record<string, number[]> = {};

function print(engine: string, query: string, m: Record<Path, number>, messageKb: number, nodes: number, suggestions: number): void {
  console.log(`${engine}: ${query}`);
  console.log(`  plan of ${nodes} nodes, ${suggestions} suggestions, panel message ${messageKb.toFixed(1)} KB`);
  console.log(`  (a)  raw explain on an open connection  ${m.raw.toFixed(2).padStart(8)} ms`);
  console.log(`  (a') raw explain with connect + close   ${m.rawConn.toFixed(2).padStart(8)} ms`);
  console.log(`  (b)  product path to the panel message  ${m.product.toFixed(2).padStart(8)} ms`);
  console.log(`  overhead b - a  = ${(m.product - m.raw).toFixed(2)} ms (${(m.product / m.raw).toFixed(2)}x)`);
  console.log(`  overhead b - a' = ${(m.product - m.rawConn).toFixed(2)} ms (${(m.product / m.rawConn).toFixed(2)}x)`);
  console.log(`  (c)  product path on a kept session     ${m.kept.toFixed(2).padStart(8)} ms`);
  console.log(`  overhead c - a  = ${(m.kept - m.raw).toFixed(2)} ms (${(m.kept / m.raw).toFixed(2)}x)`);
  // Warm-up runs are included in the phase lists; medians hardly move for that.
  const line = (what: string, list: Record<string, number[]>): void => {
    if (Object.keys(list).length > 0) console.log(`  ${what}, medians: ${Object.entries(list).map(([k, v]) => `${k} ${median(v).toFixed(2)} ms`).join(', ')}`);
    for (const k of Object.keys(list)) delete list[k];
  };
  line('(b) by phase', phases);
  line('(c) by phase', keptPhases);
  line('explain steps on an open connection', steps);
  console.log('');
}

function message(title: string, result: ExplainResult, suggestions: ReturnType<typeof suggestionViews>): { json: string; nodes: number } {
  if (!result.load.ok) throw new Error(`the plan was refused: ${result.load.refusal}`);
  const plan = result.load.plan;
  const findings = analyze(plan);
  // As the panel posts it: the raw text stays in the host until the Raw tab asks for it.
  const msg: ShowPlanMessage = { type: 'showPlan', title, plan: wirePlan(plan), findings, hasRawText: true, suggestions };
  return { json: JSON.stringify(msg), nodes: plan.nodes.length };
}

async function postgres(): Promise<void> {
  const uri = serverUri('QPI_TEST_PG_URI');
  const admin = new pg.Client({ connectionString: uri });
  await admin.connect();
  try {
    await admin.query(`DROP SCHEMA IF EXISTS ${DB} CASCADE`);
    await admin.query(`CREATE SCHEMA ${DB}`);
    await admin.query(`CREATE TABLE ${DB}.orders (id int PRIMARY KEY, customer_id int NOT NULL, status text NOT NULL, created_at timestamptz NOT NULL, total numeric NOT NULL)`);
    await admin.query(
      `INSERT INTO ${DB}.orders SELECT g, g % 500, (ARRAY['open','paid','shipped','cancelled'])[1 + g % 4], timestamptz '2024-01-01' + g * interval '1 minute', (g % 1000) / 10.0 FROM generate_series(1, ${ROWS}) g`,
    );
    await admin.query(`CREATE INDEX orders_customer ON ${DB}.orders (customer_id)`);
    await admin.query(`ANALYZE ${DB}.orders`);
    const sql = `SELECT * FROM ${DB}.orders WHERE customer_id = 42 AND status = 'paid' ORDER BY created_at DESC LIMIT 20`;
    const explainSql = `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`;
    let last = { json: '', nodes: 0, suggestions: 0 };
    const kept = await openPostgresAdvice({ uri, connectTimeoutMs: 10_000, timeoutMs: 60_000 });
    const m = await measure({
      raw: () => admin.query(explainSql),
      rawConn: async () => {
        const c = new pg.Client({ connectionString: uri });
        await c.connect();
        await c.query(explainSql);
        await c.end();
      },
      product: async () => {
        const signal = new AbortController().signal;
        let t = performance.now();
        const session = await openPostgresAdvice({ uri, connectTimeoutMs: 10_000, timeoutMs: 60_000 });
        t = phase('open session', t);
        try {
          const result = await session.conn.explain(sql, { analyze: true, buffers: true, timeoutMs: 60_000, signal });
          t = phase('adapter explain + loadPlan', t);
          const live = await advisePostgresLive(session, sql, { measure: false, timeoutMs: 60_000, signal });
          t = phase('live advisor', t);
          const views = suggestionViews({ engine: 'postgres', live });
          last = { ...message('orders', result, views), suggestions: views.length };
          t = phase('analyze + views + wirePlan + JSON', t);
        } finally {
          await session.close();
          phase('close', t);
        }
      },
      kept: async () => {
        const signal = new AbortController().signal;
        let t = performance.now();
        const result = await kept.conn.explain(sql, { analyze: true, buffers: true, timeoutMs: 60_000, signal });
        t = phase('adapter explain + loadPlan', t, keptPhases);
        const live = await advisePostgresLive(kept, sql, { measure: false, timeoutMs: 60_000, signal });
        t = phase('live advisor', t, keptPhases);
        const views = suggestionViews({ engine: 'postgres', live });
        message('orders', result, views);
        phase('analyze + views + wirePlan + JSON', t, keptPhases);
      },
      steps: async () => {
        let t = performance.now();
        const info = await inspectStatement(sql);
        t = phase('inspectStatement', t, steps);
        await pgBegin(admin, true, 60_000);
        t = phase('BEGIN', t, steps);
        const verdict = await pgVerdict(admin, info.sql);
        t = phase('side-effect check', t, steps);
        const r = await pgExecute(admin, verdict.clearance!, { text: `EXPLAIN (FORMAT JSON, ANALYZE, BUFFERS) ${info.sql}`, values: [], queryMode: 'extended' } as pg.QueryConfig);
        t = phase('EXPLAIN ANALYZE', t, steps);
        const value = (r.rows[0] as Record<string, unknown>)['QUERY PLAN'];
        const raw = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
        t = phase('plan text', t, steps);
        loadPlan(raw);
        t = phase('loadPlan', t, steps);
        await pgSend(admin, 'ROLLBACK');
        phase('ROLLBACK', t, steps);
      },
    });
    await kept.close();
    print('PostgreSQL', `EXPLAIN (ANALYZE, BUFFERS) ${sql}`, m, last.json.length / 1024, last.nodes, last.suggestions);
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS ${DB} CASCADE`).catch(() => {});
    await admin.end();
  }
}

async function mongodb(): Promise<void> {
  const base = serverUri('QPI_TEST_MONGO_URI');
  const u = new URL(base);
  u.pathname = `/${DB}`;
  const uri = u.toString();
  const client = new MongoClient(uri);
  await client.connect();
  const db = client.db(DB);
  try {
    await db.dropDatabase();
    const statuses = ['open', 'paid', 'shipped', 'cancelled'];
    const docs = Array.from({ length: ROWS }, (_, g) => ({ n: g, customer_id: g % 500, status: statuses[g % 4], created_at: new Date(Date.UTC(2024, 0, 1) + g * 60_000), total: (g % 1000) / 10 }));
    await db.collection('orders').insertMany(docs);
    await db.collection('orders').createIndex({ customer_id: 1 });
    const text = `db.orders.find({ customer_id: 42, status: 'paid' }).sort({ created_at: -1 }).limit(20)`;
    const parsed = parseMongoQuery(text);
    if (!parsed.ok) throw new Error(parsed.error);
    const command = parsed.command;
    const rawCmd = {
      explain: { find: 'orders', filter: { customer_id: 42, status: 'paid' }, sort: { created_at: -1 }, limit: 20 },
      verbosity: 'executionStats',
    };
    let last = { json: '', nodes: 0, suggestions: 0 };
    const kept = await openMongoAdvice({ uri, connectTimeoutMs: 10_000 });
    const m = await measure({
      raw: () => db.command(rawCmd),
      rawConn: async () => {
        const c = new MongoClient(uri);
        await c.connect();
        await c.db(DB).command(rawCmd);
        await c.close();
      },
      product: async () => {
        const signal = new AbortController().signal;
        let t = performance.now();
        const session = await openMongoAdvice({ uri, connectTimeoutMs: 10_000 });
        t = phase('open session', t);
        try {
          const result = await session.conn.explain(command, { verbosity: 'executionStats', timeoutMs: 60_000, signal, allowWrites: false });
          t = phase('adapter explain + loadPlan', t);
          const live = await adviseMongoLive(session, command, { timeoutMs: 60_000, signal });
          t = phase('live advisor', t);
          const views = suggestionViews({ engine: 'mongodb', live, command });
          last = { ...message('orders', result, views), suggestions: views.length };
          t = phase('analyze + views + wirePlan + JSON', t);
        } finally {
          await session.close();
          phase('close', t);
        }
      },
      kept: async () => {
        const signal = new AbortController().signal;
        let t = performance.now();
        const result = await kept.conn.explain(command, { verbosity: 'executionStats', timeoutMs: 60_000, signal, allowWrites: false });
        t = phase('adapter explain + loadPlan', t, keptPhases);
        const live = await adviseMongoLive(kept, command, { timeoutMs: 60_000, signal });
        t = phase('live advisor', t, keptPhases);
        const views = suggestionViews({ engine: 'mongodb', live, command });
        message('orders', result, views);
        phase('analyze + views + wirePlan + JSON', t, keptPhases);
      },
    });
    await kept.close();
    print('MongoDB', `${text} at executionStats`, m, last.json.length / 1024, last.nodes, last.suggestions);
  } finally {
    await db.dropDatabase().catch(() => {});
    await client.close();
  }
}

async function main(): Promise<void> {
  console.log(`Command-to-panel overhead over the raw driver round trip: median of ${RUNS} runs after ${WARMUP} warm-ups, the paths interleaved, ${ROWS.toLocaleString('en-US')} rows/documents, Node ${process.version}.`);
  console.log('Measured in Node with the extension host\'s code path (adapters, core, suggestion views, wirePlan, JSON); not inside VS Code, so the host\'s IPC to the webview is not included.');
  console.log('');
  await postgres();
  await mongodb();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
