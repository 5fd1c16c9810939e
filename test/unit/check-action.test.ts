// action.yml, the composite GitHub Action that runs qpi check: every input and step output it names is
// declared, every shell script parses, every option it passes is one qpi check reads, and the step that
// runs qpi check, run here by bash as the runner would, writes the outputs a workflow reads (a dead
// database: exit 4, said in the outputs rather than failing before the SARIF upload and the summary).

import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { load } from 'js-yaml';
import { CHECK_USAGE } from '../../src/cli/check/index';

interface Step { id?: string; name: string; shell?: string; run?: string; uses?: string; if?: string; env?: Record<string, string>; with?: Record<string, string> }
interface Action { name: string; description: string; inputs: Record<string, { description: string; default?: string }>; outputs: Record<string, { description: string; value: string }>; runs: { using: string; steps: Step[] } }

const ROOT = join(__dirname, '..', '..');
const action = load(readFileSync(join(ROOT, 'action.yml'), 'utf8')) as Action;

function expressions(text: string): string[] {
  return [...text.matchAll(/\$\{\{\s*(.*?)\s*\}\}/g)].map((m) => m[1]!);
}

describe('qpi check: the GitHub Action', function () {
  it('is a composite action whose expressions name only declared inputs and step outputs', function () {
    assert.equal(action.runs.using, 'composite');
    assert.ok(action.name && action.description);
    const ids = new Map(action.runs.steps.filter((s) => s.id).map((s) => [s.id!, s]));
    const text = readFileSync(join(ROOT, 'action.yml'), 'utf8');
    const inputsUsed = new Set<string>();
    for (const e of expressions(text)) {
      for (const m of e.matchAll(/inputs\.([\w-]+)/g)) {
        assert.ok(m[1]! in action.inputs, `inputs.${m[1]} is not declared`);
        inputsUsed.add(m[1]!);
      }
      for (const m of e.matchAll(/steps\.([\w-]+)\.outputs\.([\w-]+)/g)) {
        const step = ids.get(m[1]!);
        assert.ok(step, `no step ${m[1]}`);
        assert.match(step.run ?? '', new RegExp(`(?:echo "|\`)${m[2]}=`), `step ${m[1]} writes no output ${m[2]}`);
      }
    }
    assert.deepEqual(Object.keys(action.inputs).filter((i) => !inputsUsed.has(i)), [], 'every input is used');
    for (const s of action.runs.steps) assert.ok(s.run === undefined || s.shell === 'bash', `${s.name} names its shell`);
    const uses = action.runs.steps.filter((s) => s.uses).map((s) => s.uses);
    assert.ok(uses.includes('github/codeql-action/upload-sarif@v3'));
    const upload = action.runs.steps.find((s) => s.uses?.startsWith('github/codeql-action/upload-sarif'))!;
    assert.equal(upload.with!.category, '${{ inputs.category }}');
  });

  it('has shell scripts that parse, and passes only options qpi check reads', function () {
    for (const s of action.runs.steps.filter((x) => x.run)) {
      const r = spawnSync('bash', ['-n'], { input: s.run!.replace(/\$\{\{[^}]*\}\}/g, 'x'), encoding: 'utf8' });
      assert.equal(r.status, 0, `${s.name}: ${r.stderr}`);
    }
    const run = action.runs.steps.find((s) => s.id === 'check')!.run!;
    const flags = [...new Set([...run.matchAll(/(?<![\w-])(--[a-z][a-z-]+)/g)].map((m) => m[1]!))];
    assert.ok(flags.length >= 10, flags.join(' '));
    for (const f of flags) assert.ok(CHECK_USAGE.includes(`${f} `) || CHECK_USAGE.includes(`${f}]`), `${f} is not an option of qpi check`);
  });

  it('runs qpi check and writes the step\'s outputs even when the check cannot pass', function () {
    this.timeout(60_000);
    const dir = mkdtempSync(join(tmpdir(), 'qpi-action-'));
    try {
      const step = action.runs.steps.find((s) => s.id === 'check')!;
      const outputs = join(dir, 'github-output');
      writeFileSync(outputs, '');
      const r = spawnSync('bash', ['-c', step.run!], {
        cwd: dir,
        encoding: 'utf8',
        env: {
          ...process.env,
          NODE_OPTIONS: `--import ${pathToFileURL(join(ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href}`,
          QPI_CLI: join(ROOT, 'src', 'cli', 'main.ts'),
          GITHUB_OUTPUT: outputs,
          QPI_PATHS: `${join(ROOT, 'test', 'fixtures', 'check-app', 'src')}\n`,
          QPI_PG_URI: 'postgres://ci@127.0.0.1:1/app',
          QPI_MONGO_URI: '',
          QPI_LOCK: join(dir, 'qpi.lock.json'),
          QPI_CONFIG: '',
          QPI_SCHEMA: join(ROOT, 'test', 'fixtures', 'check-app', 'migrations'),
          QPI_CHANGED_SINCE: '',
          QPI_SHARD: '',
          QPI_GITLAB: '',
          QPI_OUT: join(dir, 'out'),
        },
      });
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stderr, /The PostgreSQL database cannot be used/);
      const written = Object.fromEntries(readFileSync(outputs, 'utf8').trim().split('\n').map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
      assert.deepEqual([written['exit-code'], written.passed, written.sarif], ['4', 'false', `${join(dir, 'out')}/qpi.sarif`]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
