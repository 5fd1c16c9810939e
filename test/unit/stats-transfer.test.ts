// The pure parts of carrying statistics: the planner's scaling of imported rows by the CI table's real
// size, its warning, the statistics file's reader, and the door's statistics write, which sends nothing
// without the command's consent and nothing but the restore functions' own arguments.

import { strict as assert } from 'node:assert';
import { pgRestoreStatistics, pgStatisticsConsent, type PgClient, type StatisticsConsent } from '../../src/adapters/door';
import { parseStatsFile, plannedRows, scaleWarning } from '../../src/adapters/statsTransfer';
import { run, type Io } from '../../src/cli/main';

function io(files: Record<string, string> = {}): Io & { err: string } {
  const o: Io & { err: string } = { err: '', stdout: () => {}, stderr: (s) => void (o.err += s), readStdin: () => '', readFile: (p) => files[p] ?? '' };
  return o;
}

/** A client that records what it is sent and answers as the restore functions do. */
function recorder(): { client: PgClient; sent: { text: string; values: unknown[] }[] } {
  const sent: { text: string; values: unknown[] }[] = [];
  const client = { query: async (text: string, values: unknown[]) => (sent.push({ text, values }), { rows: [{ ok: true }] }) } as unknown as PgClient;
  return { client, sent };
}

describe('statistics carried between databases', function () {
  it('scales the imported rows by the real pages, as the planner does', function () {
    assert.equal(plannedRows(200_000, 1274, 1274), 200_000);
    assert.equal(plannedRows(200_000, 1274, 7), 1099);
    assert.equal(plannedRows(200_000, 1274, 0), 0);
    assert.equal(plannedRows(0, 0, 3), 0);
  });

  it('says how far the rows are scaled, and that an empty table is planned empty', function () {
    assert.equal(scaleWarning({ relation: 'public.orders', pages: 1274, rows: 200_000, ciPages: 7, plannedRows: 1099 }),
      "public.orders has 7 pages in the CI database against 1,274 in production, so the planner scales the imported 200,000 rows to 1,099: import with --match-pages to keep production's row estimate, or load data of production's size.");
    assert.match(scaleWarning({ relation: 'public.orders', pages: 1274, rows: 200_000, ciPages: 0, plannedRows: 0 }), /^public\.orders is empty in the CI database, so the planner takes it to hold no rows/);
  });

  it('reads only files of qpi stats export', function () {
    assert.equal(parseStatsFile('{').ok, false);
    assert.deepEqual(parseStatsFile('{"relations": []}'), { ok: false, error: 'It is not a file of qpi stats export (no "qpiStats": 1).' });
    assert.equal(parseStatsFile(JSON.stringify({ qpiStats: 1, serverVersionNum: 180004, relations: [{ schema: 'public', name: 't', relpages: 1, reltuples: 2, columns: [{ attname: 'a' }] }] })).ok, false);
    const ok = parseStatsFile(JSON.stringify({ qpiStats: 1, server: '18.4', serverVersionNum: 180004, database: 'd', relations: [{ schema: 'public', name: 't', kind: 'table', relpages: 1, reltuples: 2, relallvisible: 1, columns: [{ attname: 'a', inherited: false }] }] }));
    assert.equal(ok.ok, true);
  });

  it('writes statistics only with the consent of qpi stats import', async function () {
    const { client, sent } = recorder();
    const forged = Object.freeze({ by: 'command' }) as StatisticsConsent;
    await assert.rejects(pgRestoreStatistics(client, forged, 'relation', { schemaname: 'public', relname: 't', relpages: 1 }), /Statistics are written only by qpi stats import/);
    assert.equal(sent.length, 0);
  });

  it('sends the restore function with its own arguments, every value bound', async function () {
    const { client, sent } = recorder();
    const consent = pgStatisticsConsent();
    assert.equal(await pgRestoreStatistics(client, consent, 'attribute', { schemaname: 'public', relname: "t'; DROP TABLE t; --", attname: 'a', inherited: false, null_frac: 0, most_common_vals: '{x}', histogram_bounds: null }), true);
    assert.deepEqual(sent, [{
      text: "SELECT pg_restore_attribute_stats('schemaname', $1::text, 'relname', $2::text, 'attname', $3::text, 'inherited', $4::boolean, 'null_frac', $5::real, 'most_common_vals', $6::text) AS ok",
      values: ['public', "t'; DROP TABLE t; --", 'a', false, 0, '{x}'],
    }]);
    await assert.rejects(pgRestoreStatistics(client, consent, 'relation', { schemaname: 'public', relname: 't', "relpages', 1); DROP TABLE t; --": 1 }), /is no argument of pg_restore_relation_stats, so it is not sent/);
    await assert.rejects(pgRestoreStatistics(client, consent, 'class' as 'relation', { relname: 't' }), /Only relation and column statistics are written/);
    assert.equal(sent.length, 1);
  });

  it('refuses a wrong command line, and a file that is not a statistics file, before connecting', async function () {
    let o = io();
    assert.equal(await run(['stats'], o), 64);
    assert.match(o.err, /^qpi stats needs export or import\./);
    o = io();
    assert.equal(await run(['stats', 'import', '--uri', 'mongodb://127.0.0.1:1/x', 'stats.json'], o), 64);
    assert.match(o.err, /MongoDB has no statistics to import/);
    o = io();
    assert.equal(await run(['stats', 'export', '--uri', 'postgres://127.0.0.1:1/x', '--match-pages'], o), 64);
    o = io({ 'plan.json': '{"Plan": {}}' });
    // Port 1 answers nobody: the file is refused before any connection is tried.
    assert.equal(await run(['stats', 'import', '--uri', 'postgres://127.0.0.1:1/x', 'plan.json'], o), 2);
    assert.equal(o.err, 'plan.json: It is not a file of qpi stats export (no "qpiStats": 1).\n');
  });
});
