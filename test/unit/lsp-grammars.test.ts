// The injection grammars of syntaxes/: contributed in package.json under the scope names they declare,
// injected into JavaScript and TypeScript outside strings and comments, every include resolvable, and
// the MongoDB operator lists matching the operators the advisor reads.

import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

interface Grammar {
  scopeName: string;
  injectionSelector: string;
  patterns: { include: string }[];
  repository: Record<string, { begin?: string; match?: string; patterns?: { include?: string }[] }>;
}

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { contributes: { grammars?: { scopeName: string; path: string; injectTo: string[] }[] } };

function grammar(scope: string): Grammar {
  const entry = pkg.contributes.grammars?.find((g) => g.scopeName === scope);
  assert.ok(entry, `package.json contributes no grammar ${scope}`);
  const file = join(ROOT, entry.path);
  assert.ok(existsSync(file), `${entry.path} is missing`);
  assert.deepEqual([...entry.injectTo].sort(), ['source.js', 'source.js.jsx', 'source.ts', 'source.tsx']);
  const g = JSON.parse(readFileSync(file, 'utf8')) as Grammar;
  assert.equal(g.scopeName, scope);
  return g;
}

function includesResolve(g: Grammar): void {
  const refs = [...g.patterns.map((p) => p.include), ...Object.values(g.repository).flatMap((r) => (r.patterns ?? []).map((p) => p.include ?? ''))];
  for (const ref of refs.filter((r) => r.startsWith('#'))) assert.ok(ref.slice(1) in g.repository, `${g.scopeName}: ${ref} is not in the repository`);
  for (const r of Object.values(g.repository)) assert.ok(r.begin ?? r.match, 'every rule matches something');
}

describe('language server: grammars', () => {
  it('highlights SQL in sql`` tags and in .query(...) strings, with ${} parts left to TypeScript', () => {
    const g = grammar('inline.sql.query-plan-inspector');
    for (const host of ['source.js', 'source.ts', 'source.tsx', 'source.js.jsx']) assert.match(g.injectionSelector, new RegExp(`L:${host.replace(/\./g, '\\.')} -comment -string`));
    includesResolve(g);
    const tagged = g.repository['tagged-template']!;
    assert.ok(tagged.patterns!.some((p) => p.include === 'source.sql'));
    assert.ok(tagged.patterns!.some((p) => p.include === '#substitution'));
    assert.ok(g.repository['query-template']!.begin!.includes('\\.query\\('));
  });

  it('highlights the MongoDB stages and operators the advisor reads', () => {
    const g = grammar('inline.mongodb-operators.query-plan-inspector');
    includesResolve(g);
    const stages = g.repository['stage']!.match!;
    const operators = g.repository['operator']!.match!;
    for (const s of ['match', 'project', 'addFields', 'set', 'sort', 'skip', 'limit', 'group', 'lookup', 'unwind']) assert.ok(stages.includes(`|${s}|`) || stages.includes(`(?:${s}|`) || stages.includes(`|${s})`), `stage $${s}`);
    for (const o of ['eq', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'ne', 'regex', 'elemMatch', 'exists', 'or', 'and', 'inc', 'push']) assert.ok(new RegExp(`[(|]${o}[|)]`).test(operators), `operator $${o}`);
  });
});
