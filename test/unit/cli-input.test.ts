// What `qpi` reads and how it ends, on the built binary: inputs without an end stop at the size cap,
// wide encodings are decoded or named, a reader that closes the pipe early ends the output quietly,
// and flags keep their sentences.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inert } from '../../src/cli/io';
import { decodeText } from '../../src/cli/decode';
import { generatePostgresJsonPlan } from '../../bench/generate';
import { builtCli } from './builtCli';

const corpus = join(__dirname, '..', 'fixtures', 'corpus');
const pgPlan = readFileSync(join(corpus, 'pg-json-analyze-buffers-nested-loop-memoize-15.json'), 'utf8');

function utf16(text: string, little: boolean, bom: boolean): Buffer {
  const le = Buffer.from((bom ? '\ufeff' : '') + text, 'utf16le');
  return little ? le : le.swap16();
}

function utf32(text: string, little: boolean): Buffer {
  const points = [0xfeff, ...[...text].map((c) => c.codePointAt(0)!)];
  const out = Buffer.alloc(points.length * 4);
  points.forEach((p, i) => (little ? out.writeUInt32LE(p, i * 4) : out.writeUInt32BE(p, i * 4)));
  return out;
}

describe('qpi input bounds', () => {
  it('stops reading a device at the size cap with one sentence', () => {
    const r = spawnSync(process.execPath, [builtCli(), 'analyze', '/dev/zero'], { encoding: 'utf8' });
    assert.equal(r.status, 2);
    assert.equal(r.stderr, '/dev/zero is larger than the 64 MB a plan may have; nothing was analysed.\n');
    assert.equal(r.stdout, '');
  });

  it('stops reading standard input from a device at the size cap', () => {
    const zero = openSync('/dev/zero', 'r');
    try {
      const r = spawnSync(process.execPath, [builtCli(), 'analyze', '-'], { stdio: [zero, 'pipe', 'pipe'], encoding: 'utf8' });
      assert.equal(r.status, 2);
      assert.equal(r.stderr, 'Standard input is larger than the 64 MB a plan may have; nothing was analysed.\n');
    } finally {
      closeSync(zero);
    }
  });

  it('stops reading an endless pipe at the size cap', async () => {
    const child = spawn(process.execPath, [builtCli(), 'analyze', '-'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.stdin.on('error', () => undefined);
    const chunk = Buffer.alloc(1 << 20, 0x20);
    let open = true;
    child.once('exit', () => (open = false));
    const feed = (): void => {
      if (open && child.stdin.writable) child.stdin.write(chunk, feed);
    };
    feed();
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    assert.equal(code, 2);
    assert.equal(err, 'Standard input is larger than the 64 MB a plan may have; nothing was analysed.\n');
  });

  it('ends quietly with exit 0 when the reader closes the pipe early', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'qpi-'));
    try {
      const file = join(dir, 'big.json');
      writeFileSync(file, generatePostgresJsonPlan(3000));
      const child = spawn(process.execPath, [builtCli(), 'analyze', file], { stdio: ['ignore', 'pipe', 'pipe'] });
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.stdout.once('data', () => child.stdout.destroy());
      const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
      assert.equal(err, '');
      assert.equal(code, 0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('qpi text encodings', () => {
  const cases: [string, Buffer][] = [
    ['UTF-16 LE with a byte order mark', utf16(pgPlan, true, true)],
    ['UTF-16 BE with a byte order mark', utf16(pgPlan, false, true)],
    ['UTF-32 LE with a byte order mark', utf32(pgPlan, true)],
    ['UTF-32 BE with a byte order mark', utf32(pgPlan, false)],
    ['UTF-8 with a byte order mark', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(pgPlan)])],
  ];
  for (const [name, bytes] of cases) {
    it(`reads a plan saved as ${name}`, () => {
      const decoded = decodeText(bytes);
      assert.ok(decoded.ok);
      assert.equal(decoded.text.replace(/^\ufeff/, ''), pgPlan);
      const r = spawnSync(process.execPath, [builtCli(), 'analyze', '-', '--json'], { input: bytes, encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      assert.equal((JSON.parse(r.stdout) as { engine: string }).engine, 'postgres');
    });
  }

  it('names a wide encoding that has no byte order mark instead of guessing', () => {
    const r = spawnSync(process.execPath, [builtCli(), 'analyze', '-'], { input: utf16(pgPlan, true, false), encoding: 'utf8' });
    assert.equal(r.status, 2);
    assert.equal(r.stderr, 'Standard input: the text looks like UTF-16 LE without a byte order mark; save it as UTF-8 (or UTF-16 LE with a byte order mark) and try again.\n');
    const be = decodeText(utf32(pgPlan, false).subarray(4));
    assert.ok(!be.ok && be.refusal.includes('UTF-32 BE'));
  });

  it('refuses binary data in one sentence', () => {
    const bytes = Buffer.from([0x7b, 0x00, 0x13, 0x37, 0x00, 0x00, 0x01, 0x7d, 0x00, 0x42, 0x42, 0x00, 0x00, 0x00, 0x01]);
    const r = spawnSync(process.execPath, [builtCli(), 'analyze', '-'], { input: bytes, encoding: 'utf8' });
    assert.equal(r.status, 2);
    assert.equal(r.stderr, 'Standard input: this is binary data (it holds NUL bytes), not an explain output.\n');
  });
});

describe('qpi terminal escaping', () => {
  it('escapes bidi overrides, isolates and zero-width marks like control characters', () => {
    const hostile = 'a\u202eb\u2066c\u2067d\u2068e\u2069f\u202ag\u202bh\u202ci\u202dj\u200bk\u200el\u200fm\u061cn\ufeffo';
    const out = inert(hostile);
    assert.equal(out, 'a\\u202eb\\u2066c\\u2067d\\u2068e\\u2069f\\u202ag\\u202bh\\u202ci\\u202dj\\u200bk\\u200el\\u200fm\\u061cn\\ufeffo');
    assert.equal(inert('plain text, tabs\tand\nnewlines stay; accents é and ∑ too'), 'plain text, tabs\tand\nnewlines stay; accents é and ∑ too');
  });

  it('never lets a bidi override from a plan reach the terminal raw', () => {
    const text = pgPlan.replaceAll('"Relation Name": "', '"Relation Name": "\u202etxt.exe\u2066');
    assert.notEqual(text, pgPlan);
    const r = spawnSync(process.execPath, [builtCli(), 'analyze', '-'], { input: text, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /[\u202a-\u202e\u2066-\u2069]/);
    assert.match(r.stdout, /\\u202etxt\.exe\\u2066/);
  });
});

describe('qpi flags', () => {
  const run = (...args: string[]) => spawnSync(process.execPath, [builtCli(), ...args], { encoding: 'utf8' });

  it('keeps the usage sentences and exit 64', () => {
    const missing = run('explain', '--uri');
    assert.equal(missing.status, 64);
    assert.match(missing.stderr, /^--uri needs a value\.\nUsage:/);
    const unknown = run('analyze', 'x.json', '--bogus');
    assert.equal(unknown.status, 64);
    assert.match(unknown.stderr, /^Unknown option --bogus\.\nUsage:/);
    const valued = run('analyze', 'x.json', '--json=yes');
    assert.equal(valued.status, 64);
    assert.match(valued.stderr, /^--json takes no value\.\nUsage:/);
  });

  it('takes a query that starts with a dash as the value of --query', () => {
    const r = run('advise', '--engine', 'postgres', '--query', '-- orders by customer\nSELECT * FROM orders WHERE customer_id = 42', '--json');
    assert.equal(r.status, 0, r.stderr);
    assert.equal((JSON.parse(r.stdout) as { engine: string }).engine, 'postgres');
  });

  it('reads --name=value and a single-dash word as before', () => {
    const eq = run('advise', '--engine=postgres', '--query=SELECT * FROM orders WHERE customer_id = 42', '--json');
    assert.equal(eq.status, 0, eq.stderr);
    const dash = run('analyze', '-x');
    assert.equal(dash.status, 2);
    assert.equal(dash.stderr, 'There is no file -x.\n');
  });
});
