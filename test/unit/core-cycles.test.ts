// The core's modules import each other without a circle (type imports included): a circle means two
// modules that can only be read, tested and moved together. And they keep the core's floor plan
// (ARCHITECTURE.md): no import runs up a floor, on the resolved import graph (eslint.config.mjs says the
// same by import paths, which cannot tell two floors of one folder apart).

import assert from 'node:assert/strict';
import { relative, resolve } from 'node:path';
import { circles, importGraph, sources } from './importGraph';

const CORE = resolve(__dirname, '../../src/core');

/**
 * The core's floors, lowest first. The notation is under both wings; the plan wing stands on it alone;
 * the code wing's floors stand on everything listed before them. The public surface (index.ts) is above all.
 */
const FLOORS: [string, RegExp][] = [
  ['notation', /^(text\.ts|format\.ts|mongo\/shellNotation\.ts|query\/find\/(syntax|visitorKeys)\.ts)$/],
  ['plan wing', /^(model|load|metrics|compare|view)\.ts$|^(findings|postgres)\/|^mongo\/parse\.ts$/],
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
