// The core's modules import each other without a circle (type imports included): a circle means two
// modules that can only be read, tested and moved together. And they keep the core's floor plan
// (ARCHITECTURE.md): no import runs up a floor, on the resolved import graph (eslint.config.mjs says the
// same by import paths, which cannot tell two floors of one folder apart).

import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const CORE = resolve(__dirname, '../../src/core');

function sources(dir: string, out: string[] = []): string[] {
  for (const n of readdirSync(dir)) {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) sources(p, out);
    else if (p.endsWith('.ts')) out.push(p);
  }
  return out;
}

/** Each module's relative imports and re-exports, resolved to files. */
function importGraph(files: string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const f of files) {
    const deps: string[] = [];
    for (const m of readFileSync(f, 'utf8').matchAll(/^(?:import|export)\s[^;]*?from\s+'(\.[^']+)'/gms)) {
      const base = resolve(dirname(f), m[1]!);
      const hit = [`${base}.ts`, join(base, 'index.ts')].find((c) => files.includes(c));
      if (hit) deps.push(hit);
    }
    graph.set(f, deps);
  }
  return graph;
}

/** The strongly connected components of more than one module (Tarjan's algorithm, iterative enough for this size). */
function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1) out.push(component);
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

/**
 * The core's floors, lowest first. The notation is under both wings; the plan wing stands on it alone;
 * the code wing's floors stand on everything listed before them. The public surface (index.ts) is above all.
 */
const FLOORS: [string, RegExp][] = [
  ['notation', /^(text\.ts|mongo\/shellNotation\.ts|query\/find\/(syntax|visitorKeys)\.ts)$/],
  ['plan wing', /^(model|load|metrics|compare|format|view)\.ts$|^(findings|postgres)\/|^mongo\/parse\.ts$/],
  ['sql', /^sql\//],
  ['query parsers', /^query\/(mongoShell|mongoServerCommand|createIndex)\.ts$/],
  ['finder', /^query\/find\//],
  ['schema', /^schema\//],
  ['advice', /^advice\//],
  ['lint, check, targets', /^(lint|check)\/|^query\/targets\.ts$/],
  ['public surface', /^index\.ts$/],
];

/** A module's floor (its index in FLOORS); undefined for a module no floor names. */
function floorOf(file: string): number | undefined {
  const at = FLOORS.findIndex(([, re]) => re.test(file));
  return at < 0 ? undefined : at;
}

/** Every import from a module to one on a higher floor, as `from -> to`. Paths are relative to the core. */
function upward(graph: Map<string, string[]>): string[] {
  const out: string[] = [];
  for (const [from, deps] of graph) {
    for (const to of deps) if (floorOf(to)! > floorOf(from)!) out.push(`${from} -> ${to}`);
  }
  return out;
}

describe('the core imports without circles', () => {
  it('has no circle among src/core modules, type imports included', () => {
    const found = circles(importGraph(sources(CORE))).map((c) => c.map((f) => relative(CORE, f)).sort().join(' -> '));
    assert.deepEqual(found, []);
  });

  it('puts every module on one floor of the floor plan', () => {
    const unplaced = sources(CORE).map((f) => relative(CORE, f)).filter((f) => floorOf(f) === undefined);
    assert.deepEqual(unplaced, []);
  });

  it('has no import that runs up a floor: the plan wing never imports the code wing', () => {
    const relGraph = new Map([...importGraph(sources(CORE))].map(([f, deps]) => [relative(CORE, f), deps.map((d) => relative(CORE, d))]));
    assert.deepEqual(upward(relGraph), []);
  });

  it('finds an upward import where there is one (the check itself can fail)', () => {
    const graph = new Map([['query/find/family.ts', ['advice/mongoText.ts', 'format.ts']], ['load.ts', ['query/find/index.ts']], ['advice/mongoText.ts', []]]);
    assert.deepEqual(upward(graph), ['query/find/family.ts -> advice/mongoText.ts', 'load.ts -> query/find/index.ts']);
  });

  it('finds a circle where there is one (the check itself can fail)', () => {
    const graph = new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['a']]]);
    assert.deepEqual(circles(graph).map((c) => c.sort()), [['a', 'b', 'c']]);
  });
});
