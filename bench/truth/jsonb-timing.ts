// How long the measured PostgreSQL advice takes on a table with a jsonb column, where the candidates
// include GIN indexes (issue 23's target: a median of at most 5 s on 200,000 rows on this machine), and
// where that time goes: the part before the first candidate is measured (statistics, the copy of the
// table, its VACUUM and today's run), each candidate (its index built on the copy and the query run), and
// what comes after the last. A benchmark prints figures; it asserts nothing.
// Run: node scripts/with-servers.mjs node --import tsx bench/truth/jsonb-timing.ts [--runs N] [--size N]

import pg from 'pg';
import { openPostgresAdvice } from '../../src/adapters/advise';
import { advisePostgresLive } from '../../src/adapters/adviceService';
import { median, runsArg, serverUri } from '../support';
import { inBatches } from './datasets';
import { pickSome, int, mulberry32, weighted, zipf } from './prng';

const RUNS = runsArg(5);
const sizeAt = process.argv.indexOf('--size');
const SIZE = sizeAt > 0 ? Number(process.argv[sizeAt + 1]) : 200_000;

const QUERIES = [
  `SELECT id, created_at FROM jdocs WHERE attrs @> '{"plan": "gold"}'`,
  `SELECT * FROM jdocs WHERE tenant_id = 2 AND attrs @> '{"tags": ["t3"]}' ORDER BY created_at DESC LIMIT 20`,
];

/** jdocs(id, tenant_id, status, created_at, attrs jsonb): tenant Zipf(1.1) over 100, attrs {plan, tags, beta?}. */
function* rows(): Generator<[number, number, string, string, string]> {
  const rand = mulberry32(707);
  const tenant = zipf(rand, 100, 1.1);
  const status = weighted(rand, ['active', 'trial', 'closed'], [70, 20, 10]);
  const plan = weighted(rand, ['free', 'silver', 'gold', 'platinum'], [70, 20, 8, 2]);
  const tags = Array.from({ length: 40 }, (_, i) => `t${i}`);
  for (let i = 1; i <= SIZE; i++) {
    const attrs: Record<string, unknown> = { plan: plan(), tags: pickSome(rand, tags, int(rand, 0, 4)) };
    if (rand() < 0.05) attrs.beta = true;
    yield [i, tenant() + 1, status(), new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString(), JSON.stringify(attrs)];
  }
}

const ms = (x: number): string => `${x.toFixed(0)} ms`;

async function main(): Promise<void> {
  const uri = serverUri('QPI_TEST_PG_URI');
  const client = new pg.Client({ connectionString: uri });
  await client.connect();
  await client.query(`DROP TABLE IF EXISTS jdocs;
    CREATE TABLE jdocs (id int PRIMARY KEY, tenant_id int NOT NULL, status text NOT NULL, created_at timestamptz NOT NULL, attrs jsonb NOT NULL)`);
  await inBatches(rows(), 10_000, (b) => client.query('INSERT INTO jdocs SELECT * FROM unnest($1::int[], $2::int[], $3::text[], $4::timestamptz[], $5::jsonb[])', [0, 1, 2, 3, 4].map((k) => b.map((r) => r[k]))));
  await client.query('VACUUM (ANALYZE) jdocs');
  const version = (await client.query<{ server_version: string }>('SHOW server_version')).rows[0]!.server_version;
  const session = await openPostgresAdvice({ uri, timeoutMs: 120_000 });
  // Every statement the measurement sends on its scratch connection, timed and named by what it does.
  const spent = new Map<string, number[]>();
  const scratch = await session.scratch!();
  const send = scratch.client.query.bind(scratch.client) as (...args: unknown[]) => Promise<unknown>;
  (scratch.client as unknown as { query: (...args: unknown[]) => Promise<unknown> }).query = async (...args: unknown[]) => {
    const t = performance.now();
    try {
      return await send(...args);
    } finally {
      const text = typeof args[0] === 'string' ? args[0] : String((args[0] as { text?: string } | undefined)?.text ?? '');
      const kind = /^\s*EXPLAIN \(ANALYZE/i.test(text) ? 'EXPLAIN ANALYZE' : /CREATE TEMP TABLE/i.test(text) ? 'copy the table' : /^\s*(VACUUM|ANALYZE)/i.test(text) ? 'VACUUM / ANALYZE the copy' : /CREATE (UNIQUE )?INDEX .* USING gin/i.test(text) ? 'build a GIN index' : /CREATE (UNIQUE )?INDEX/i.test(text) ? 'build a B-tree index' : /^\s*(ROLLBACK|SAVEPOINT|RELEASE|BEGIN|COMMIT|SET|RESET|DROP)/i.test(text) ? 'transaction, settings, drops' : 'catalog and other reads';
      spent.set(kind, [...(spent.get(kind) ?? []), performance.now() - t]);
    }
  };
  try {
    for (const sql of QUERIES) {
      const total: number[] = [];
      const before: number[] = [];
      const after: number[] = [];
      const steps: number[][] = [];
      let last = '';
      const rules: number[] = [];
      spent.clear();
      for (let i = 0; i < RUNS; i++) {
        const r0 = performance.now();
        await advisePostgresLive(session, sql, { measure: false, timeoutMs: 120_000 });
        rules.push(performance.now() - r0);
        const t0 = performance.now();
        const marks: number[] = [];
        const onProgress = (): void => void marks.push(performance.now());
        const live = await advisePostgresLive(session, sql, { timeoutMs: 120_000, onProgress });
        const end = performance.now();
        total.push(end - t0);
        // The first mark is "0 of N" (the copy made and today's plan measured); each later one a candidate.
        if (marks.length > 0) {
          before.push(marks[0]! - t0);
          after.push(end - marks.at(-1)!);
          steps.push(marks.slice(1).map((m, k) => m - marks[k]!));
        }
        const t = live.measurement?.status === 'measured' ? live.measurement.tournament : undefined;
        const first = live.advice.suggestions[0];
        last = t ? `${t.tried} candidates, ${t.label}; first ${first?.createText ?? first?.action ?? 'none'}` : `not measured: ${live.measurement?.status === 'not-measured' ? live.measurement.reason : ''}`;
      }
      const perStep = steps[0]?.map((_, k) => median(steps.map((s) => s[k] ?? 0))) ?? [];
      const slowest = [...perStep.entries()].sort((a, b) => b[1] - a[1]).slice(0, 4).map(([k, v]) => `#${k + 1} ${ms(v)}`).join(', ');
      const where = [...spent].map(([k, v]) => [k, v.reduce((a, b) => a + b, 0) / RUNS, v.length / RUNS] as const).sort((a, b) => b[1] - a[1]).map(([k, t, n]) => `${k} ${ms(t)} (${n.toFixed(0)} statements)`).join('; ');
      console.log(`PostgreSQL ${version}, ${SIZE.toLocaleString('en-US')} rows: ${sql}
  measured advice ${ms(median(total))} median of ${RUNS} (runs ${total.map(ms).join(', ')}); the rules alone ${ms(median(rules))}
  on the scratch connection, per run (mean): ${where}
  before the first candidate ${ms(median(before))}; ${perStep.length} candidates ${ms(perStep.reduce((a, b) => a + b, 0))} (slowest ${slowest}); after the last ${ms(median(after))}
  ${last}`);
    }
  } finally {
    await session.close();
    await client.query('DROP TABLE IF EXISTS jdocs');
    await client.end();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.stack ?? err.message : String(err));
  process.exitCode = 1;
});
