import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from '../../src/cli/main';
import { builtCli } from './builtCli';
import { captureIo } from './cli-io';

const corpus = join(__dirname, '..', 'fixtures', 'corpus');

const capture = (stdin = '') => captureIo({ stdin });

describe('qpi analyze', () => {
  it('refuses a truncated plan from stdin with exit 2 and one sentence on stderr', async () => {
    const io = capture('{"queryPlanner": {"winningPlan": {"stage": "COLLSCAN"');
    const code = await run(['analyze', '-'], io);
    assert.equal(code, 2);
    assert.equal(io.out, '');
    assert.match(io.err, /^[^\n]*truncated[^\n]*\.\n$/);
  });

  it('says when a file does not exist', async () => {
    const io = capture();
    assert.equal(await run(['analyze', join(corpus, 'no-such-file.json')], io), 2);
    assert.match(io.err, /^There is no file .*no-such-file\.json\.\n$/);
  });

  it('rejects unknown options and commands as usage errors', async () => {
    assert.equal(await run(['analyze', 'x', '--bogus'], capture()), 64);
    assert.equal(await run(['frobnicate'], capture()), 64);
    assert.equal(await run(['analyze'], capture()), 64);
  });

  it('prints the usage for --help or -h after a command, with exit 0, and the full usage of check and stats', async () => {
    for (const args of [['--help'], ['help'], ['analyze', '--help'], ['explain', '-h'], ['advise', '--query', 'db.a.find()', '--help'], ['lint', 'a.sql', '--help']]) {
      const io = capture();
      assert.equal(await run(args, io), 0, args.join(' '));
      assert.match(io.out, /^Usage:\n {2}qpi analyze/, args.join(' '));
      assert.equal(io.err, '');
    }
    const check = capture();
    assert.equal(await run(['check', '--help'], check), 0);
    assert.match(check.out, /^Usage:\n {2}qpi check \[PATH\.\.\.\] --uri URI/);
    assert.match(check.out, /--changed-since REF/);
    const stats = capture();
    assert.equal(await run(['stats', '-h'], stats), 0);
    assert.match(stats.out, /^Usage:\n {2}qpi stats export/);
    // After `--` it is an argument, not a request for help; an unknown command stays unknown.
    assert.equal(await run(['analyze', '--', '--help'], capture()), 2);
    assert.equal(await run(['frobnicate', '--help'], capture()), 64);
  });

  it('prints the documented JSON document for a PostgreSQL plan', async () => {
    const io = capture();
    const code = await run(['analyze', join(corpus, 'pg-json-analyze-buffers-nested-loop-memoize-15.json'), '--json'], io);
    assert.equal(code, 0, io.err);
    const doc = JSON.parse(io.out) as Record<string, unknown>;
    assert.equal(doc.engine, 'postgres');
    assert.equal(doc.schemaVersion, 1);
    assert.ok((doc.nodeCount as number) >= 3);
    assert.ok(Array.isArray(doc.findings));
    assert.ok(Array.isArray(doc.warnings));
    const totals = doc.totals as Record<string, unknown>;
    assert.equal(typeof totals.executionTimeMs, 'number');
    assert.equal(typeof totals.rows, 'number');
  });

  it('runs as a built binary: exit 0 on a real MongoDB plan, 2 on garbage', () => {
    const cli = builtCli();
    const ok = spawnSync(process.execPath, [cli, 'analyze', join(corpus, 'mongo-find-sort-limit-ixscan-execstats-6.0.5-local.json'), '--json'], { encoding: 'utf8' });
    assert.equal(ok.status, 0, ok.stderr);
    const doc = JSON.parse(ok.stdout) as { engine: string; totals: Record<string, number> };
    assert.equal(doc.engine, 'mongodb');
    assert.equal(typeof doc.totals.nReturned, 'number');
    const bad = spawnSync(process.execPath, [cli, 'analyze', '-'], { input: 'hello world', encoding: 'utf8' });
    assert.equal(bad.status, 2);
    assert.equal(bad.stderr, 'This is not an explain output of MongoDB or PostgreSQL.\n');
  });
});

describe('qpi output to a terminal', () => {
  it('writes control characters from a plan as visible escapes, and JSON stays JSON', () => {
    const pg = JSON.parse(readFileSync(join(corpus, 'pg-json-analyze-buffers-nested-loop-memoize-15.json'), 'utf8')) as unknown;
    const evil = 'ix\u001b]0;owned\u0007\u001b[2J\u009b31m';
    const text = JSON.stringify(pg).replaceAll('"Relation Name":"', `"Relation Name":${JSON.stringify(evil).slice(0, -1)}`);
    assert.ok(text.includes('owned'));
    const cli = builtCli();
    for (const args of [['analyze', '-'], ['analyze', '-', '--json']]) {
      const r = spawnSync(process.execPath, [cli, ...args], { input: text, encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      assert.doesNotMatch(r.stdout, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
      if (args.includes('--json')) {
        const doc = JSON.parse(r.stdout) as { findings: { message: string }[] };
        assert.ok(Array.isArray(doc.findings));
      } else assert.match(r.stdout, /\\u001b\]0;owned\\u0007\\u001b\[2J\\u009b31m/);
    }
  });
});
